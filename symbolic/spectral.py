"""Spectral averages over limiting eigenvalue laws.

A :class:`SpectralAverage` is a SymPy node ``<phi(t)>`` = ∫ phi(t) dmu(t) over a limiting spectral
law.  It behaves like a scalar in SymPy: it can be differentiated with respect to any symbol that
the law does not depend on (differentiation passes under the integral), and the code generator
(:mod:`attnlimits.symbolic.codegen`) turns it into quadrature over the law's nodes.

The law implemented here is the one of docs/attention_rmt.md §5 and §9: ``T = Z_perpᵀ Z_perp / n``
(n × n) with ``p/n = c``.  In the limit ``T = c S`` where ``S = Zᵀ Z / p`` follows the
Marchenko–Pastur law with ratio ``y = 1/c``, plus an atom of mass ``1 − c`` at 0 when ``c < 1``.

References
----------
V. A. Marchenko, L. A. Pastur, *Distribution of eigenvalues for some sets of random matrices*,
1967.  docs/attention_rmt.md §5 (law of T) and §9 (MP quadrature).
"""
from __future__ import annotations

import sympy as sp

__all__ = [
    "MarchenkoPasturLaw",
    "SpectralAverage",
    "spectral_averages",
    "replace_averages_by_moments",
]


class MarchenkoPasturLaw(sp.Basic):
    r"""Limiting law of ``T = Z_perpᵀ Z_perp / n`` with aspect ratio ``c = p/n``.

    With ``y = 1/c`` and ``x_± = (1 ± √y)²`` the continuous part of ``S = T/c`` has density

    .. math:: \frac{\sqrt{(x_+-x)(x-x_-)}}{2\pi y x}, \qquad x\in[x_-,x_+],

    of mass ``min(1, c)``; when ``c < 1`` an atom of mass ``1 − c`` sits at ``t = 0``.
    The quadrature variable is θ ∈ [0, π] with ``x(θ) = x_- + (x_+ - x_-)(1 - cos θ)/2``, for which

    .. math:: d\mu = \frac{(x_+-x_-)^2 \sin^2\theta}{8\pi y\, x(\theta)}\, d\theta

    is smooth even at ``c = 1`` (docs/attention_rmt.md §9).  Moments: ``<t> = c``,
    ``<t²> = c + c²``, ``<t³> = c(1 + 3c + c²)`` (Narayana polynomials, :meth:`moment`).
    """

    def __new__(cls, c):
        return super().__new__(cls, sp.sympify(c))

    @property
    def c(self) -> sp.Expr:
        return self.args[0]

    # -- the law, as SymPy expressions -------------------------------------------------------
    @property
    def ratio(self) -> sp.Expr:
        """MP ratio ``y = 1/c`` of ``S = T/c``."""
        return 1 / self.c

    def edges(self) -> tuple[sp.Expr, sp.Expr]:
        """Support ``(x_-, x_+) = ((1 - √y)², (1 + √y)²)`` of the continuous part of ``S``."""
        y = self.ratio
        return (1 - sp.sqrt(y)) ** 2, (1 + sp.sqrt(y)) ** 2

    def density_x(self, x: sp.Symbol) -> sp.Expr:
        """Density of the continuous part of ``S`` on its support."""
        xm, xp = self.edges()
        return sp.sqrt((xp - x) * (x - xm)) / (2 * sp.pi * self.ratio * x)

    def continuous_mass(self) -> sp.Expr:
        """Mass of the continuous part, ``min(1, c)``."""
        return sp.Min(1, self.c)

    def atom_mass(self) -> sp.Expr:
        """Mass of the atom at ``t = 0``, ``max(0, 1 − c)``."""
        return sp.Max(0, 1 - self.c)

    def theta_to_t(self, theta: sp.Symbol) -> sp.Expr:
        """Node map ``t(θ) = c·x(θ)`` of the θ-quadrature."""
        xm, xp = self.edges()
        # (1 − cos θ)/2 written as sin²(θ/2): the same function, without the cancellation near θ = 0
        # that costs 2·log2(1/θ) bits where the quadrature grades its nodes toward the lower edge
        return self.c * (xm + (xp - xm) * sp.sin(theta / 2) ** 2)

    def theta_weight(self, theta: sp.Symbol) -> sp.Expr:
        """Density of the continuous part in θ (before renormalisation to ``min(1, c)``)."""
        xm, xp = self.edges()
        x = xm + (xp - xm) * sp.sin(theta / 2) ** 2
        return (xp - xm) ** 2 * sp.sin(theta) ** 2 / (8 * sp.pi * self.ratio * x)

    def moment(self, k: int) -> sp.Expr:
        r"""``<t^k>`` for integer ``k ≥ 0``, the Narayana polynomial ``Σ_r N(k,r) c^r``.

        ``N(k, r) = C(k, r) C(k, r-1) / k``; the atom at 0 contributes to ``k = 0`` only.
        """
        if k < 0:
            raise ValueError("moment order must be a non-negative integer")
        if k == 0:
            return sp.Integer(1)
        c = self.c
        return sp.expand(
            sum(sp.binomial(k, r) * sp.binomial(k, r - 1) / k * c**r for r in range(1, k + 1))
        )

    def _sympystr(self, printer):  # pragma: no cover - cosmetic
        return f"MP(c={printer._print(self.c)})"


class SpectralAverage(sp.Expr):
    r"""``<phi(t)>``: the average of ``phi`` over a spectral law (a scalar SymPy node).

    Parameters
    ----------
    integrand : sympy.Expr
        ``phi`` as an expression in ``var`` and any other symbols.
    var : sympy.Symbol
        The integration variable (the eigenvalue ``t``).
    law : MarchenkoPasturLaw
        The law; its parameters (``c``) must not be differentiated through.

    Notes
    -----
    Differentiation passes under the average: ``d<phi>/dx = <dphi/dx>`` for any ``x`` that is not a
    parameter of the law.  An integrand free of ``var`` averages to itself (the law has mass 1).
    """

    is_commutative = True
    is_real = True

    def __new__(cls, integrand, var, law):
        integrand = sp.sympify(integrand)
        if not isinstance(law, MarchenkoPasturLaw):
            raise TypeError("law must be a MarchenkoPasturLaw")
        if not integrand.has(var):
            return integrand
        return super().__new__(cls, integrand, var, law)

    @property
    def integrand(self) -> sp.Expr:
        return self.args[0]

    @property
    def var(self) -> sp.Symbol:
        return self.args[1]

    @property
    def law(self) -> MarchenkoPasturLaw:
        return self.args[2]

    @property
    def free_symbols(self):
        return (self.integrand.free_symbols - {self.var}) | self.law.free_symbols

    def _eval_derivative(self, s):
        if s in self.law.free_symbols:
            raise NotImplementedError(
                f"differentiating a spectral average with respect to the law parameter {s} is not "
                "supported; differentiate with respect to unknowns or other parameters"
            )
        return SpectralAverage(sp.diff(self.integrand, s), self.var, self.law)

    def _eval_subs(self, old, new):
        if old == self.var:
            return self
        return None

    def _sympystr(self, printer):  # pragma: no cover - cosmetic
        return f"<{printer._print(self.integrand)}>"


def spectral_averages(expr: sp.Basic) -> list[SpectralAverage]:
    """All :class:`SpectralAverage` nodes in ``expr``, in a deterministic order."""
    found = {a for a in sp.preorder_traversal(expr) if isinstance(a, SpectralAverage)}
    return sorted(found, key=sp.default_sort_key)


def replace_averages_by_moments(expr: sp.Expr) -> sp.Expr:
    """Replace averages of polynomials in ``t`` by the law's moments.

    Each average must have an integrand that is a polynomial in its variable (after expansion);
    this is how large-γ series coefficients such as ``M_1`` are derived from the MP moments.
    """

    def _moment(avg: SpectralAverage) -> sp.Expr:
        poly = sp.Poly(sp.expand(avg.integrand), avg.var)
        return sum(coef * avg.law.moment(int(k)) for (k,), coef in poly.terms())

    return expr.replace(lambda e: isinstance(e, SpectralAverage), _moment)
