r"""Exact expectations of polynomials over a low-dimensional Gaussian (Isserlis/Wick), in exact
rational arithmetic: :func:`wick_expectation`, its error :class:`NotPolynomialError`, and the
validation of a Gaussian's variables, mean and covariance shared with the unevaluated node
:class:`attnlimits.symbolic.gaussian.GaussianExpectation` (:func:`normalise_gaussian`,
:func:`sympify_exact`).  :mod:`attnlimits.symbolic.gaussian` re-exports the public names.

.. [1] L. Isserlis, "On a formula for the product-moment coefficient of any order of a normal
   frequency distribution in any number of variables", Biometrika 12 (1918) 134–139.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import sympy
from sympy import Rational, S

__all__ = ["NotPolynomialError", "normalise_gaussian", "short_text", "sympify_exact", "wick_expectation"]


class NotPolynomialError(ValueError):
    """The integrand is not a polynomial in the Gaussian variables (one-line message)."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


def short_text(expr: Any, limit: int = 80) -> str:
    """``expr`` as one line of at most ``limit`` characters (for error messages)."""
    s = " ".join(str(expr).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


# --------------------------------------------------------------------------------------------
# exact expectations (Isserlis / Wick)
# --------------------------------------------------------------------------------------------

def _exact(value: Any) -> sympy.Expr:
    """A SymPy number or expression with Python/SymPy floats replaced by their shortest decimal."""
    if isinstance(value, (float, np.floating)):
        return Rational(repr(float(value)))
    if isinstance(value, (int, np.integer)):
        return sympy.Integer(int(value))
    e = sympify_exact(value)
    if e.atoms(sympy.Float):
        e = sympy.nsimplify(e, rational=True)
    return e


def sympify_exact(value: Any) -> sympy.Basic:
    """``sympify`` without string parsing (strict: no ``eval`` of user text)."""
    if isinstance(value, str):
        raise TypeError(
            f"strings are not accepted ({value[:40]!r}); build SymPy expressions (or parse text "
            "with attnlimits.symbolic.parse_activation)"
        )
    return sympy.sympify(value, strict=True)


def normalise_gaussian(variables, mean, cov) -> tuple[tuple, list, list]:
    """Validate variables, mean and covariance; return (variables, mean list, cov rows)."""
    if isinstance(variables, sympy.Symbol):
        variables = (variables,)
    variables = tuple(variables)
    if not variables:
        raise ValueError("a Gaussian expectation needs at least one variable")
    for v in variables:
        if not isinstance(v, sympy.Symbol):
            raise ValueError(f"Gaussian variables must be SymPy Symbols; got {v!r} ({type(v).__name__})")
    if len(set(variables)) != len(variables):
        raise ValueError(f"Gaussian variables must be distinct; got {variables}")
    d = len(variables)
    if mean is None:
        mu = [S.Zero] * d
    else:
        mu = [_exact(m) for m in (mean.tolist() if isinstance(mean, np.ndarray) else list(mean))]
        mu = [m[0] if isinstance(m, list) and len(m) == 1 else m for m in mu]
        if len(mu) != d:
            raise ValueError(f"mean has {len(mu)} entries for {d} variables")
    if cov is None:
        rows = [[S.One if i == j else S.Zero for j in range(d)] for i in range(d)]
    else:
        if isinstance(cov, sympy.MatrixBase):
            raw = cov.tolist()
        elif isinstance(cov, np.ndarray):
            raw = np.atleast_2d(cov).tolist()
        else:
            raw = [list(r) if isinstance(r, (list, tuple, np.ndarray, sympy.Tuple)) else [r] for r in cov]
        if len(raw) != d or any(len(r) != d for r in raw):
            raise ValueError(f"cov must be {d}x{d} for {d} variables; got {len(raw)} rows of lengths "
                             f"{sorted({len(r) for r in raw})}")
        rows = [[_exact(c) for c in r] for r in raw]
        for i in range(d):
            for j in range(i + 1, d):
                if rows[i][j] != rows[j][i] and sympy.expand(rows[i][j] - rows[j][i]) != 0:
                    raise ValueError(f"cov is not symmetric: cov[{i}][{j}] = {rows[i][j]} but "
                                     f"cov[{j}][{i}] = {rows[j][i]}")
        if all(c.is_number for r in rows for c in r):
            try:
                c = np.array([[float(x) for x in r] for r in rows])
            except TypeError:
                raise ValueError("cov has non-real entries") from None
            lam = np.linalg.eigvalsh(c)
            if lam[0] < -1e-12 * max(1.0, float(np.max(np.abs(lam)))):
                raise ValueError(f"cov is not positive semi-definite (smallest eigenvalue {lam[0]:.3g})")
    return variables, mu, rows


def _polynomial_terms(expr: sympy.Expr, variables: tuple) -> dict[tuple, list]:
    """Split ``expr`` into {monomial key: [coefficient, ...]}; key = ((index, power), ...)."""
    index = {v: i for i, v in enumerate(variables)}
    varset = set(variables)
    out: dict[tuple, list] = {}

    def add_term(term, allow_expand: bool) -> None:
        coeff: list = []
        powers: dict[int, int] = {}
        for factor in sympy.Mul.make_args(term):
            if factor in index:
                powers[index[factor]] = powers.get(index[factor], 0) + 1
                continue
            if (factor.is_Pow and factor.base in index and factor.exp.is_Integer
                    and factor.exp >= 0):
                powers[index[factor.base]] = powers.get(index[factor.base], 0) + int(factor.exp)
                continue
            if not (factor.free_symbols & varset):
                coeff.append(factor)
                continue
            if allow_expand:
                for sub in sympy.Add.make_args(sympy.expand(term)):
                    add_term(sub, allow_expand=False)
                return
            raise NotPolynomialError(
                f"E[{short_text(expr)}] over Gaussian {short_text(variables)}: the factor {short_text(factor)} is "
                "not a polynomial in these variables; use GaussianExpectation(...).numeric() or "
                "gaussian_expectation() instead"
            )
        key = tuple(sorted(powers.items()))
        out.setdefault(key, []).append(sympy.Mul(*coeff))

    for term in sympy.Add.make_args(expr):
        add_term(term, allow_expand=True)
    return out


def _distribute(factor: sympy.Expr, expr: sympy.Expr) -> list:
    """The terms of ``factor * expr`` with the product distributed over the top-level sum."""
    if factor == 1:
        return list(sympy.Add.make_args(expr))
    return [factor * term for term in sympy.Add.make_args(expr) if term != 0]


class _Moments:
    """Memoised raw moments E[prod x_i^k_i] of N(mu, Sigma) by Stein's identity.

    E[x_i m(x)] = mu_i E[m] + sum_j Sigma_ij E[d m / d x_j]: one recursion step per degree.
    With mu = 0 this is Isserlis' theorem (sum over pairings) evaluated without enumerating
    pairings.
    """

    def __init__(self, mu: list, rows: list):
        self.mu = mu
        self.rows = rows
        self.memo: dict[tuple, sympy.Expr] = {(): S.One}

    def __call__(self, key: tuple) -> sympy.Expr:
        got = self.memo.get(key)
        if got is not None:
            return got
        (i, ki), rest = key[0], key[1:]
        reduced = ((i, ki - 1),) + rest if ki > 1 else rest
        terms: list = []
        if self.mu[i] != 0:
            terms.extend(_distribute(self.mu[i], self(reduced)))
        for pos, (j, kj) in enumerate(reduced):
            s_ij = self.rows[i][j]
            if s_ij == 0:
                continue
            lower = reduced[:pos] + (((j, kj - 1),) if kj > 1 else ()) + reduced[pos + 1:]
            terms.extend(_distribute(kj * s_ij, self(lower)))
        value = sympy.Add(*terms)
        self.memo[key] = value
        return value


def wick_expectation(expr, variables, mean=None, cov=None) -> sympy.Expr:
    r"""Exact :math:`\mathbb E[p(x)]` of a polynomial under a multivariate Gaussian.

    .. math::

        x\sim\mathcal N(\mu,\Sigma),\qquad
        \mathbb E[x_i\,m(x)]=\mu_i\,\mathbb E[m(x)]+\sum_j\Sigma_{ij}\,\mathbb E[\partial_j m(x)]

    (Stein's identity, applied monomial by monomial with memoisation). For :math:`\mu=0` it is
    Isserlis' theorem [1]_, :math:`\mathbb E[x_1\cdots x_{2n}]=\sum_{\text{pairings}}\prod
    \Sigma_{ij}`, without enumerating the pairings.

    Parameters
    ----------
    expr : sympy.Expr
        A polynomial in ``variables``; every other symbol is a coefficient and may appear in any
        form (``exp(a) * x**2`` is fine, ``exp(a * x)`` is not).
    variables : sequence of sympy.Symbol
        The jointly Gaussian variables, in the order of ``mean`` and ``cov``.
    mean : sequence, optional
        Mean vector (default zeros). Entries may be symbolic.
    cov : sympy.Matrix or nested sequence, optional
        Covariance (default identity); must be symmetric, and positive semi-definite when
        numeric. Entries may be symbolic. Python floats are read as their shortest decimal
        (``0.1`` -> ``1/10``) so the arithmetic stays exact.

    Returns
    -------
    sympy.Expr
        The expectation, exact (Rational arithmetic), with products distributed over sums.

    Raises
    ------
    NotPolynomialError
        ``expr`` is not a polynomial in ``variables`` (a subclass of ``ValueError``).
    ValueError
        Inconsistent shapes, repeated variables, an asymmetric or indefinite covariance.

    Notes
    -----
    Cost: one recursion step per (sub)monomial and variable present; a quadratic form in 100
    variables with identity covariance takes well under a second. High-degree monomials in many
    strongly correlated variables cost :math:`\prod_i(k_i+1)` memoised moments.

    Examples
    --------
    >>> x, y, rho = sympy.symbols("x y rho")
    >>> wick_expectation(x**2 * y**2, [x, y], cov=[[1, rho], [rho, 1]])
    2*rho**2 + 1
    """
    variables, mu, rows = normalise_gaussian(variables, mean, cov)
    expr = sympify_exact(expr)
    if not isinstance(expr, sympy.Expr):
        raise NotPolynomialError(f"E[{short_text(expr)}]: not a scalar expression")
    terms = _polynomial_terms(expr, variables)
    moments = _Moments(mu, rows)
    out: list = []
    for key, coeffs in terms.items():
        m = moments(key)
        if m != 0:
            for c in coeffs:
                out.extend(_distribute(c, m))
    return sympy.Add(*out)
