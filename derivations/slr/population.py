r"""Single-location regression (SLR) at population level: written once, in SymPy.

Source: O. Duranthon, P. Marion, C. Boyer, B. Loureiro, L. Zdeborová, *Statistical Advantage of
Softmax Attention: Insights from Single-Location Regression*, arXiv:2509.21936 ([D]); the
predecessor P. Marion, R. Berthier, G. Biau, C. Boyer, arXiv:2410.01537 ([M]).  Every formula is
the independent derivation of ``docs/slr.md`` (section numbers below refer to it).

Model (§3)
----------
A sequence :math:`X=(x_1..x_L)`, :math:`x_\ell\in\mathbb R^D`, a hidden location
:math:`\varepsilon^*`, teacher projections :math:`\chi^*=Xk^*/\sqrt D`, :math:`z^*=Xv^*/\sqrt D`,
target :math:`y=z^*_{\varepsilon^*}+\Delta\xi`.  The law of :math:`X` given
:math:`\varepsilon^*` is Gaussian reweighted by :math:`g_\nu(\varepsilon^*,\chi^*)`:

- ``spiked``: :math:`g_\nu=\exp(\sqrt\nu\chi_\varepsilon-\nu/2)` (the located token is shifted by
  :math:`\sqrt\nu k^*/\sqrt D`);
- ``max``: :math:`g_\nu=L e^{\nu\chi_\varepsilon}/\sum_{\ell'}e^{\nu\chi_{\ell'}}`
  (:math:`\varepsilon^*=\arg\max\chi^*` at :math:`\nu=\infty`).

Both satisfy the ratio condition with :math:`c_\nu=\sqrt\nu` (spiked), :math:`\nu` (max), hence
:math:`P(\varepsilon^*\mid X)=\mathrm{softmax}(c_\nu\chi^*)` (:func:`ratio_condition`).

Predictor (§4)
--------------
:math:`f(X)=\sigma(\chi)^\top z`, :math:`\chi=Xk/\sqrt D`, :math:`z=Xv/\sqrt D`, with the
attention weights :math:`\sigma` one of :data:`ACTIVATIONS` (always by full name) or a user
expression (:func:`custom_activation`).

Risk (§5–§6)
------------
On the manifold :math:`\mathcal M` (no cross overlaps) with :math:`\chi=m_k\chi^*+s_k\eta`,
:math:`s_k=\sqrt{q_k-m_k^2}`:

.. math::  E = 1 - 2 m_v A + q_v B,\qquad A=\mathbb E[\sigma(\chi)_{\varepsilon^*}],\quad
           B=\mathbb E\|\sigma(\chi)\|^2,

and optimising over :math:`v` (:func:`optimal_value_risk`, derived) gives
:math:`E^*=1-\sup A^2/B` at :math:`m_v=A/B`, :math:`q_v=m_v^2`.

What is derived here by the engine rather than typed
----------------------------------------------------
- the optimal value vector and :math:`E^*=1-A^2/B` (:func:`optimal_value_risk`);
- the linear-attention closed forms of §8 for every variant, on both models, for symbolic
  :math:`L` and :math:`\nu` (:func:`linear_closed_form`), from Gaussian moments by Wick's theorem
  (:func:`attnlimits.symbolic.gaussian.wick_expectation`) after an exchangeability reduction, and the
  variable-length versions (:func:`linear_closed_form_varlen`);
- their large-:math:`\nu` constants and the max-SLR :math:`L\to\infty` limit
  (:func:`linear_asymptotics`), by SymPy ``limit``;
- softmax shift invariance and the Jacobians of every activation (:func:`sigma_vector`).

The Bayes side (posterior, Nishimori identity, quadrature representations, asymptotics) is in
:mod:`attnlimits.derivations.slr.bayes`, and [M] in :mod:`attnlimits.derivations.slr.predecessor`; both are
re-exported here.  Numbers are computed by :mod:`attnlimits.numeric.slr.population` and :mod:`attnlimits.numeric.slr.bayes_risk` from the kernels
generated in :mod:`attnlimits.derivations.slr.kernels`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import sympy as sp

from .symbols import L, m_k, m_v, nu, q_k, q_v  # noqa: F401  (shared, one definition)

from attnlimits.symbolic.functions import LogSoftplus
from attnlimits.symbolic.hermite import ActivationError, parse_activation
from attnlimits.symbolic.activations import check_gaussian_moments
from attnlimits.symbolic.hermite import t as _t

__all__ = [
    "MODELS", "ACTIVATIONS", "AMBIGUOUS_NAMES", "Activation", "activation", "custom_activation",
    "sigma_vector", "vector_form", "REDUCTIONS", "r", "u", "extra", "chi_symbols", "t", "nu", "L", "m", "m_k",
    "q_k", "s_k", "m_v", "q_v", "mu", "A_sym", "B_sym", "m_kvstar", "m_vkstar", "q_kv",
    "risk_on_manifold", "optimal_value_risk", "residual_covariance", "generic_stationary_point", "linear_closed_form", "linear_closed_form_varlen",
    "linear_asymptotics", "teacher_first_moments", "teacher_second_moments", "REFERENCES",
    "QUOTED", "quoted_statements", "order_parameter_names", "manifold_names",
]

#: Activation argument (one token's key field χ_ℓ); the same symbol as :data:`attnlimits.symbolic.hermite.t`.
t = _t
m = sp.Symbol("m", real=True)  #: key overlap m_k in the closed forms
s_k = sp.Symbol("s_k", nonnegative=True)
mu = sp.Symbol("mu", real=True)  #: μ_L(ν) = E[χ*_{ε*}] on max-SLR
A_sym, B_sym = sp.symbols("A B", real=True)
m_kvstar, m_vkstar, q_kv = sp.symbols("m_kvstar m_vkstar q_kv", real=True)  #: cross overlaps (§5)
r = sp.Symbol("r", real=True)  #: the token reduction of an activation (mean, log-sum-exp)
u = sp.Symbol("u", real=True)  #: the reduced token quantity u(χ_ℓ) of an activation
extra = sp.Symbol("extra", real=True)  #: the extra scalar (c or b) as a kernel input

MODELS = ("spiked", "max")

order_parameter_names = ("m_k", "q_k", "m_v", "q_v", "m_kvstar", "m_vkstar", "q_kv")
manifold_names = ("m_kvstar", "m_vkstar", "q_kv")  #: zero on the manifold M (§5)

from .result import REFERENCES  # noqa: E402,F401  (what a computation with this result rests on)


# =============================================================================================
# activations (§4)
# =============================================================================================

@dataclass(frozen=True)
class Activation:
    r"""An attention-weight map :math:`\sigma:\mathbb R^L\to\mathbb R^L`, one of three kinds.

    - ``normalised``: :math:`\sigma_\ell=e^{\lambda(\chi_\ell)}/\sum_{\ell'}e^{\lambda(\chi_{\ell'})}`
      with :math:`\lambda=` ``expr`` the log of a positive weight (softmax: :math:`\lambda=t`;
      normalised softplus: :math:`\lambda=\log\mathrm{sp}(t+b)`).  Evaluated in the log domain.
    - ``elementwise``: :math:`\sigma_\ell=h(\chi_\ell)` with :math:`h=` ``expr``.
    - ``affine``: :math:`\sigma_\ell=\alpha+\beta\chi_\ell+\gamma\bar\chi` with
      ``coefficients = (α, β, γ)`` (the linear variants; ``expr`` is :math:`\alpha+\beta t`).

    ``extra`` is the symbol of the extra scalar (erf offset ``c``, softplus bias ``b``) or None;
    ``extra_learned`` says whether the population optimum optimises it, ``extra_default`` is its
    value otherwise.  ``bounds`` are the box the optimiser searches (an argmin on a bound is
    reported with the flag ``limit``).  ``limits`` are the known values of such limit optima:
    dicts with the ``direction`` (``"m_k"`` → ∞, ``"extra_lo"`` → −∞), the setting they
    hold on (``model``, ``nu="inf"``), and either the limit pair ``A``, ``B`` of §6.2 or the
    activation reached in the limit (``same_as``), with the reason ``why``.
    """

    name: str
    kind: str
    expr: sp.Expr
    description: str
    coefficients: tuple = ()
    extra: sp.Symbol | None = None
    extra_default: sp.Expr = sp.S.Zero
    extra_learned: bool = False
    extra_bounds: tuple = (-30.0, 30.0)
    normalised: bool = False
    source: str = "docs/slr.md §4"
    limits: tuple = field(default=(), hash=False, compare=False)

    @property
    def extra_name(self) -> str | None:
        return None if self.extra is None else self.extra.name

    def log_weight(self):
        """λ(t) for normalised kinds, None otherwise."""
        return self.expr if self.kind == "normalised" else None

    @property
    def reduction(self) -> str | None:
        """The reduction over tokens of :func:`vector_form` (``mean``, ``logsumexp`` or None)."""
        return REDUCTIONS[self.kind]


#: The reduction over tokens each kind needs: :math:`r=\bar\chi` (affine) or
#: :math:`r=\log\sum_\ell e^{\lambda(\chi_\ell)}` (normalised).
REDUCTIONS = {"elementwise": None, "affine": "mean", "normalised": "logsumexp"}


def vector_form(act):
    r"""The attention weights of one kind as a token map and a reduction — their one definition.

    Returns ``(u, sigma)``: the token quantity :math:`u(t)` that is reduced over the tokens into
    :math:`r` (:data:`REDUCTIONS`; None for elementwise kinds), and the weight
    :math:`\sigma_\ell=\sigma(\chi_\ell, u_\ell, r)` in the symbols :data:`t`, :data:`u` and :data:`r`:

    - elementwise: :math:`\sigma=h(t)`;
    - affine: :math:`u=t`, :math:`r=\bar u`, :math:`\sigma=\alpha+\beta u+\gamma r`;
    - normalised: :math:`u=\lambda(t)`, :math:`r=\log\sum_\ell e^{u_\ell}`,
      :math:`\sigma=e^{u-r}` (the log domain: no overflow).

    :func:`sigma_vector` (SymPy), the generated NumPy kernels (with derivatives by the chain rule
    through :math:`u` and :math:`r`) and the printed PyTorch weights of the Monte Carlo all come
    from here.
    """
    act = activation(act)
    if act.kind == "elementwise":
        return None, act.expr
    if act.kind == "affine":
        a, b, g = (sp.S(v) for v in act.coefficients)
        return t, a + b * u + g * r
    return act.expr, sp.exp(u - r)


_c = sp.Symbol("c", real=True)  # erf offset
_b = sp.Symbol("b", real=True)  # softplus bias

ACTIVATIONS: dict[str, Activation] = {a.name: a for a in (
    Activation("softmax", "normalised", t, "e^{χ_ℓ}/Σ e^{χ_ℓ'}: exponential, normalised, shift-invariant",
               normalised=True,
               limits=({"direction": "m_k", "model": "max", "nu": "inf", "A": 1, "B": 1,
                        "why": "as m_k → ∞ softmax(m_k χ*) → one-hot argmax χ*, which is ε* at ν = ∞: A = B = 1"},)),
    Activation("linear_uncentred", "affine", 1 + t, "1 + χ_ℓ", coefficients=(1, 1, 0)),
    Activation("linear_centred", "affine", 1 + t, "1 + χ_ℓ − χ̄ (L × the first-order expansion of softmax)",
               coefficients=(1, 1, -1)),
    Activation("linear_pure", "affine", t, "χ_ℓ (scale-degenerate: only m_k m_v is identified)",
               coefficients=(0, 1, 0)),
    Activation("erf_fixed", "elementwise", 1 + sp.erf(_c + t), "1 + erf(c + χ_ℓ), c fixed (default 0)",
               extra=_c),
    Activation("erf_learned", "elementwise", 1 + sp.erf(_c + t), "1 + erf(c + χ_ℓ), c learned",
               extra=_c, extra_learned=True),
    Activation("softplus_norm", "normalised", LogSoftplus(t + _b),
               "sp(χ_ℓ + b)/Σ sp(χ_ℓ' + b), b fixed (default 0: no bias)", extra=_b, normalised=True),
    Activation("softplus_norm_bias", "normalised", LogSoftplus(t + _b),
               "sp(χ_ℓ + b)/Σ sp(χ_ℓ' + b), b learned (contains softmax as b → −∞)", extra=_b,
               extra_learned=True, extra_bounds=(-1000.0, 20.0), normalised=True,
               limits=({"direction": "extra_lo", "same_as": "softmax",
                        "why": "sp(x + b) = e^b e^x (1 + O(e^(x+b))) as b → −∞: normalised softplus → softmax (§4)"},)),
)}

#: Bare names that the spec forbids (§2): each maps to its variants.
AMBIGUOUS_NAMES = {
    "linear": ("linear_uncentred", "linear_centred", "linear_pure"),
    "erf": ("erf_fixed", "erf_learned"),
    "softplus": ("softplus_norm", "softplus_norm_bias"),
}


def activation(name) -> Activation:
    """The activation called ``name`` (docs/slr.md §4 full name), or ``name`` itself if already one.

    Also accepts ``"elementwise:<expr in t>"`` and ``"normalised:<positive expr in t>"`` for a user
    expression (:func:`custom_activation`).  A bare ``linear``, ``erf`` or ``softplus`` is refused
    with a message listing its variants.
    """
    if isinstance(name, Activation):
        return name
    key = str(name).strip()
    if key in ACTIVATIONS:
        return ACTIVATIONS[key]
    if key.lower() in AMBIGUOUS_NAMES:
        raise ActivationError(
            f"{key!r} is ambiguous: name the variant, one of {', '.join(AMBIGUOUS_NAMES[key.lower()])}")
    for kind in ("elementwise", "normalised"):
        if key.startswith(kind + ":"):
            return custom_activation(key[len(kind) + 1:], kind=kind)
    raise ActivationError(
        f"unknown activation {key!r}; choose one of {', '.join(ACTIVATIONS)}, or "
        "'elementwise:<expr in t>' / 'normalised:<positive expr in t>'")


def custom_activation(text: str, kind: str = "elementwise", name: str | None = None) -> Activation:
    r"""A user-given activation, parsed safely (no code is executed; see
    :func:`attnlimits.symbolic.hermite.parse_activation`).

    ``kind="elementwise"``: :math:`\sigma_\ell=h(\chi_\ell)` with ``text`` the formula of
    :math:`h` in ``t``.  ``kind="normalised"``: :math:`\sigma_\ell=h(\chi_\ell)/\sum h(\chi_{\ell'})`
    with :math:`h>0` given by ``text`` (stored as :math:`\log h`).

    >>> custom_activation("exp(2*t)", kind="normalised").expr
    2*t
    """
    if kind not in ("elementwise", "normalised"):
        raise ActivationError(f"kind must be 'elementwise' or 'normalised', not {kind!r}")
    h = parse_activation(text)
    if kind == "normalised":
        if h.is_nonpositive:
            raise ActivationError(f"a normalised activation needs a positive weight h(t); got {h}")
        if not h.is_positive:
            _check_positive_on_grid(h)
        expr = sp.expand_log(sp.log(h), force=True)
    else:
        check_gaussian_moments(h)  # 1/t, exp(t**2): E h(χ)^2 = ∞, no risk to compute
        expr = h
    # the name is the canonical printed formula, never the text as typed (a comment or quotes in it
    # would otherwise travel into generated source and exported files)
    return Activation(name or f"{kind}:{sp.sstr(h)}", kind, expr, f"user expression ({kind}) h(t) = {h}",
                      normalised=(kind == "normalised"), source="user")


def _check_positive_on_grid(h) -> None:
    """Refuse a weight ``h(t)`` that SymPy cannot show positive and that is not positive (and
    finite) on t ∈ [−8, 8] (161 points; the scores are Gaussian, so this is where the weights
    are evaluated): ``normalised:t`` would otherwise give a sum of weights through zero and an
    answer that is garbage (E_test = 308 ± 27113)."""
    import math

    fn = sp.lambdify(t, h, modules="mpmath")
    for k in range(-80, 81):
        x = k / 10
        try:
            v = complex(fn(x))
        except (ValueError, ZeroDivisionError, OverflowError, TypeError):
            raise ActivationError(f"a normalised activation needs a positive weight h(t); h = {h} is undefined "
                                  f"at t = {x:g}") from None
        if abs(v.imag) > 0 or not math.isfinite(v.real) or not v.real > 0:
            raise ActivationError(f"a normalised activation needs a positive weight h(t); h = {h} is "
                                  f"{v.real:.3g} at t = {x:g}")


def chi_symbols(L_value: int):
    """Symbols χ_1 … χ_L."""
    return sp.symbols(f"chi_1:{int(L_value) + 1}", real=True)


def sigma_vector(act, L_value: int, chi=None, extra=None) -> sp.Matrix:
    r"""The attention weights :math:`\sigma(\chi)` as a SymPy column for a concrete length.

    ``extra`` substitutes the extra scalar (default: keep its symbol).  Used for symbolic checks
    (shift invariance, nesting limits) and for Jacobians/Hessians:
    ``sigma_vector(a, 3).jacobian(chi_symbols(3))``.
    """
    act = activation(act)
    chi = chi_symbols(L_value) if chi is None else tuple(chi)
    sub = {} if (act.extra is None or extra is None) else {act.extra: sp.sympify(extra)}
    uexpr, sig = vector_form(act)
    uvals = [sp.S.Zero if uexpr is None else uexpr.subs(t, x) for x in chi]
    if act.reduction == "mean":
        rval = sp.Add(*uvals) / len(chi)
    elif act.reduction == "logsumexp":
        rval = sp.log(sp.Add(*[sp.exp(v) for v in uvals]))
    else:
        rval = sp.S.Zero
    out = [sig.subs({u: uv, r: rval}).subs(t, x) for x, uv in zip(chi, uvals)]
    return sp.Matrix([sp.sympify(o).subs(sub) for o in out])


# =============================================================================================
# risk on the manifold and the value optimisation (§6.2)
# =============================================================================================

def risk_on_manifold():
    r""":math:`E = 1 - 2 m_v A + q_v B` (§6.2; ``excess`` metric), in the symbols ``m_v, q_v, A, B``."""
    return 1 - 2 * m_v * A_sym + q_v * B_sym


@lru_cache(maxsize=None)
def optimal_value_risk():
    r"""Optimise the manifold risk over the value vector (§6.2), by SymPy.

    For fixed key overlaps, :math:`v` enters through :math:`(m_v, q_v)` with :math:`q_v\ge m_v^2`;
    :math:`B\ge0` makes the smallest :math:`q_v=m_v^2` optimal, then :math:`\partial_{m_v}E=0`.

    Returns ``(m_v_star, risk_star)`` in the symbols ``A, B``: :math:`A/B` and :math:`1-A^2/B`.
    """
    e = risk_on_manifold().subs(q_v, m_v ** 2)
    (mv_star,) = sp.solve(sp.diff(e, m_v), m_v)
    return sp.simplify(mv_star), sp.simplify(e.subs(m_v, mv_star))


@lru_cache(maxsize=None)
def residual_covariance():
    r"""Covariance of the student residuals given the teacher fields (§6.1), derived.

    Per token, the teacher fields :math:`(\chi^*,z^*)` have identity covariance (the marginal
    law at :math:`\nu=0`; the spike only shifts means) and the student fields :math:`(\chi,z)`
    have the Gram matrix of the overlaps of §5.  Writing :math:`\chi=m_k\chi^*+m_{kv^*}z^*+a`,
    :math:`z=m_{vk^*}\chi^*+m_vz^*+b`, the residual :math:`(a,b)` is independent of the teacher
    fields, with covariance the Schur complement
    :math:`\Sigma_{ss}-\Sigma_{st}\Sigma_{tt}^{-1}\Sigma_{ts}`.

    Returns ``(Var a, Var b, Cov(a, b))``:
    :math:`(q_k-m_k^2-m_{kv^*}^2,\ q_v-m_{vk^*}^2-m_v^2,\ q_{kv}-m_km_{vk^*}-m_{kv^*}m_v)`.
    """
    S_tt = sp.eye(2)
    S_st = sp.Matrix([[m_k, m_kvstar], [m_vkstar, m_v]])  # rows (χ, z), columns (χ*, z*)
    S_ss = sp.Matrix([[q_k, q_kv], [q_kv, q_v]])
    R = sp.expand(S_ss - S_st * S_tt.inv() * S_st.T)
    return R[0, 0], R[1, 1], R[0, 1]


# =============================================================================================
# linear attention: closed forms from Gaussian moments (§8)
# =============================================================================================

def teacher_first_moments(model: str):
    r"""First moments of the teacher key field used by affine activations (§8).

    Returns ``(E χ*_{ε*}, E χ*_ℓ for ℓ ≠ ε*)``.  Spiked (ε* = 1 by exchangeability,
    :math:`\chi^*=g+\sqrt\nu e_1`): :math:`(\sqrt\nu, 0)`.  Max-SLR: :math:`(\mu, -\mu/(L-1))`
    with :math:`\mu=\mu_L(\nu)`, because the marginal of :math:`\chi^*` is centred, so
    :math:`\mathbb E\sum_\ell\chi^*_\ell=0`.
    """
    if model == "spiked":
        return sp.sqrt(nu), sp.S.Zero
    if model == "max":
        return mu, -mu / (L - 1)
    raise ValueError(f"unknown model {model!r}; choose 'spiked' or 'max'")


def teacher_second_moments(model: str):
    r"""The marginal law of :math:`\chi^*` as three exchangeable Gaussian blocks (§8).

    :math:`\|\sigma\|^2` involves no label, so :math:`B` needs only the marginal law of
    :math:`\chi^*`.  By exchangeability, :math:`\mathbb E\sum_\ell F(\chi_\ell,\bar\chi) =
    \mathbb E F(\chi_1,\bar\chi)+(L-1)\mathbb E F(\chi_2,\bar\chi)`, and
    :math:`\bar\chi=(\chi_1+\chi_2+R)/L` with :math:`R` the sum of the other :math:`L-2`
    coordinates, itself Gaussian.  So three Gaussian variables :math:`(x_1,x_2,R)` carry every
    quadratic moment, for symbolic :math:`L`.

    Returns ``(means, variances)`` of :math:`(x_1, x_2, R)` (independent): spiked
    :math:`(\sqrt\nu,0,0)`, :math:`(1,1,L-2)`; max-SLR (i.i.d. marginal) :math:`(0,0,0)`,
    :math:`(1,1,L-2)`.
    """
    if model == "spiked":
        return (sp.sqrt(nu), 0, 0), (1, 1, L - 2)
    if model == "max":
        return (0, 0, 0), (1, 1, L - 2)
    raise ValueError(f"unknown model {model!r}; choose 'spiked' or 'max'")


def _affine_AB(act: Activation, model: str, s=sp.S.Zero):
    """A(m), B(m) of an affine activation with χ = m χ* + s η, symbolic L (L ≥ 2)."""
    from attnlimits.symbolic.gaussian import wick_expectation

    a, b, g = (sp.S(v) for v in act.coefficients)
    x1, x2, R, e1, e2, eR = sp.symbols("x1 x2 R eta1 eta2 eta_R", real=True)
    # fields of the distinguished token, a generic other token, and the sum of the remaining L-2
    c1, c2, cR = m * x1 + s * e1, m * x2 + s * e2, m * R + s * eR
    bar = (c1 + c2 + cR) / L
    sig1, sig2 = a + b * c1 + g * bar, a + b * c2 + g * bar
    # A: affine in the fields, so only first moments enter (valid for the tilted max-SLR law too)
    f1, f_other = teacher_first_moments(model)
    A = sp.expand(sig1.subs({x1: f1, x2: f_other, R: (L - 2) * f_other, e1: 0, e2: 0, eR: 0}))
    means, variances = teacher_second_moments(model)
    variables = (x1, x2, R, e1, e2, eR)
    mean = list(means) + [0, 0, 0]
    cov = sp.diag(*variances, 1, 1, L - 2)
    B = wick_expectation(sig1 ** 2, variables, mean, cov) + (L - 1) * wick_expectation(sig2 ** 2, variables, mean, cov)
    return sp.simplify(A), sp.factor(sp.expand(B))


@lru_cache(maxsize=None)
def generic_stationary_point():
    r"""Stationary point of :math:`(a_0+a_1m)^2/(b_0+2b_1m+b_2m^2)` in :math:`m`, derived once.

    The derivative's numerator is :math:`2(a_0+a_1m)\,[(a_1b_0-a_0b_1)+m(a_1b_1-a_0b_2)]`: its
    quadratic terms cancel, so apart from the zero of :math:`A` there is one root (Cauchy–Schwarz).
    """
    a0, a1, b0, b1, b2, x = sp.symbols("a0 a1 b0 b1 b2 x")
    ratio = (a0 + a1 * x) ** 2 / (b0 + 2 * b1 * x + b2 * x ** 2)
    num = sp.factor(sp.numer(sp.together(sp.diff(ratio, x))))
    roots = [r for r in sp.solve(num, x) if sp.simplify(r + a0 / a1) != 0]
    (root,) = roots
    return (a0, a1, b0, b1, b2), root


def _sup_ratio(A, B, var):
    """sup over ``var`` of A²/B for A affine and B quadratic (> 0) in ``var`` (Cauchy–Schwarz).

    Returns ``(value, argmin)``; argmin is None when the ratio does not depend on ``var``
    (``linear_pure``).  Works with exact or floating coefficients.
    """
    pa = sp.Poly(sp.expand(A), var)
    pb = sp.Poly(sp.expand(B), var)
    if pa.degree() > 1 or pb.degree() > 2:
        raise ValueError("A must be affine and B quadratic in the key overlap")
    a = [pa.coeff_monomial(var ** k) for k in range(2)]
    b = [pb.coeff_monomial(var ** k) for k in range(3)]
    ratio = sp.cancel(A ** 2 / B)
    if sp.simplify(sp.diff(ratio, var)) == 0:
        return sp.simplify(ratio), None
    syms, root = generic_stationary_point()
    r = root.subs(dict(zip(syms, (a[0], a[1], b[0], b[1] / 2, b[2]))))
    return sp.simplify(ratio.subs(var, r)), sp.factor(sp.cancel(sp.simplify(r)))


@lru_cache(maxsize=None)
def linear_closed_form(variant: str, model: str):
    r"""Population optimum of a linear variant (§8), derived from Gaussian moments.

    .. math::  E = 1 - \sup_{m} A(m)^2/B(m)

    with :math:`A,B` from :func:`teacher_first_moments` / :func:`teacher_second_moments` by Wick's
    theorem, and the sup by Cauchy–Schwarz (the stationary point of a ratio of an affine square and
    a quadratic).  Orthogonal key noise only adds :math:`L s^2\beta^2`-type terms to :math:`B`, so
    :math:`q_k=m_k^2` (also derived: ``dB_ds2`` is returned and is :math:`\ge0`).

    Returns a dict with ``risk`` (in ``L``, ``nu``; ``mu`` = μ_L(ν) for max-SLR), ``argmin_m_k``
    (None for the scale-degenerate ``linear_pure``), ``A`` and ``B`` as functions of ``m``, and
    ``dB_ds2``.

    >>> linear_closed_form("linear_uncentred", "spiked")["risk"]
    L*(L - 1)/(L**2 + L*nu - nu)
    """
    act = activation(variant)
    if act.kind != "affine":
        raise ValueError(f"{variant!r} is not a linear variant; closed forms exist for "
                         "linear_uncentred, linear_centred, linear_pure")
    A, B = _affine_AB(act, model)
    s2 = sp.Symbol("s2", nonnegative=True)
    _, Bs = _affine_AB(act, model, s=sp.sqrt(s2))
    sup, arg = _sup_ratio(A, B, m)
    risk = sp.factor(sp.simplify(1 - sup))
    return {"risk": risk, "argmin_m_k": arg, "A": A, "B": B,
            "dB_ds2": sp.simplify(sp.diff(Bs, s2)), "variant": variant, "model": model}


def linear_closed_form_varlen(variant: str, model: str, lengths: dict, nu_value=None, mu_values=None):
    r"""Variable length (§3.4, §8): :math:`E=1-\sup_m(\sum_L P(L)A_L(m))^2/\sum_L P(L)B_L(m)`.

    ``lengths`` maps L → P(L) (exact rationals are kept).  For max-SLR pass ``mu_values`` {L: μ_L}
    (numbers or SymPy constants); ``nu_value`` substitutes ν.  Length 1 is handled exactly
    (:math:`\bar\chi=\chi_1`).  Returns the same dict as :func:`linear_closed_form`, plus
    ``per_length`` (the per-length tuned risks, averaged: a lower bound).
    """
    act = activation(variant)
    base = linear_closed_form(variant, model)
    Atot, Btot, per = sp.S.Zero, sp.S.Zero, sp.S.Zero
    for Lv, p in lengths.items():
        Lv, p = int(Lv), sp.nsimplify(p)
        sub = {L: Lv}
        if nu_value is not None:
            sub[nu] = sp.nsimplify(nu_value)
        if mu_values is not None:
            sub[mu] = sp.sympify(mu_values[Lv])
        if Lv == 1:
            A1, B1 = length_one_AB(act, model, sub)
            AL, BL, EL = A1, B1, 1 - sp.simplify(_sup_ratio(A1, B1, m)[0])
        else:
            AL, BL = base["A"].subs(sub), base["B"].subs(sub)
            EL = base["risk"].subs(sub)
        Atot += p * AL
        Btot += p * BL
        per += p * EL
    sup, arg = _sup_ratio(sp.expand(Atot), sp.expand(Btot), m)
    return {"risk": sp.simplify(1 - sup), "argmin_m_k": arg, "per_length": sp.simplify(per),
            "A": Atot, "B": Btot}


def length_one_AB(act, model, sub):
    """L = 1: σ_1 = α + (β + γ) m χ*_1 with χ*_1 = √ν + g (spiked) or g (max, ε* = 1, μ_1 = 0)."""
    from attnlimits.symbolic.gaussian import wick_expectation

    a, b, g = (sp.S(v) for v in act.coefficients)
    x = sp.Symbol("x", real=True)
    mean = sp.sqrt(nu) if model == "spiked" else 0
    sig = a + (b + g) * m * x
    A = sig.subs(x, mean)
    B = wick_expectation(sig ** 2, (x,), [mean], sp.Matrix([[1]]))
    return sp.expand(A.subs(sub)), sp.expand(B.subs(sub))


@lru_cache(maxsize=None)
def linear_asymptotics():
    r"""Asymptotic constants of the linear closed forms (§9), by SymPy ``limit``.

    Returns ``{"spiked_nu_E": {variant: lim ν·E}, "max_large_L": {variant: lim_{L→∞} E}}``; the
    max-SLR limit uses :math:`\mu^2=M_L^2\simeq2\log L`.
    """
    out = {"spiked_nu_E": {}, "max_large_L": {}}
    for v in ("linear_uncentred", "linear_centred", "linear_pure"):
        out["spiked_nu_E"][v] = sp.simplify(sp.limit(nu * linear_closed_form(v, "spiked")["risk"], nu, sp.oo))
        e = linear_closed_form(v, "max")["risk"].subs(mu, sp.sqrt(2 * sp.log(L)))
        out["max_large_L"][v] = sp.limit(e, L, sp.oo)
    return out


# =============================================================================================
# quoted versus derived (§16)
# =============================================================================================

@dataclass(frozen=True)
class Quoted:
    """A statement as quoted from a paper, with the derivation's counterpart (§16)."""

    name: str
    statement: str
    quoted: sp.Expr | None
    derived: dict = field(default_factory=dict)
    source: str = ""
    note: str = ""


def _quoted():
    q1 = Quoted(
        "Q1", "linear decay constant (spiked, ν → ∞)",
        L / (L - 1) / nu,
        {v: linear_closed_form(v, "spiked")["risk"] for v in ("linear_uncentred", "linear_centred", "linear_pure")},
        "[D] eq. (12) (v1); docs/slr.md §16 Q1",
        "The quoted constant matches uncentred and pure only at L = 2; a reading of v2 quotes (L−1)/ν "
        "(linear_centred). The 1/ν law holds for every variant.")
    q2 = Quoted(
        "Q2", "softmax (= Bayes) decay on spiked-SLR",
        (L - 1) * sp.exp(-nu),
        {"softmax": spiked_asymptotic()},  # derived in _slr_bayes (completed square, §9)
        "[D] (quoted form); docs/slr.md §9, §16 Q2",
        "Multiplicity (L−1) agrees; the exponent differs by a factor 4 and the prefactor by √π/2 ν^{-1/2}.")
    q3 = Quoted(
        "Q3", "finite-sample figure readings (α = 20): softmax / linear / BO",
        None,
        {"spiked nu=1 L=3": (sp.Rational(35, 100), sp.Rational(55, 100), sp.Rational(30, 100)),
         "spiked nu=2 L=3": (sp.Rational(15, 100), sp.Rational(40, 100), sp.Rational(10, 100)),
         "max nu=inf L=3": (sp.Rational(20, 100), sp.Rational(55, 100), sp.Rational(15, 100))},
        "figure readings circulated for [D]; docs/slr.md §16 Q3",
        "No predictor can go below the population Bayes error at finite α: spiked softmax/BO readings "
        "are impossible; linear readings cannot identify the variant.")
    return {q.name: q for q in (q1, q2, q3)}


@lru_cache(maxsize=1)
def quoted_statements() -> dict:
    """Quoted statements Q1–Q3 (§16), each with the derived counterpart (built on first use)."""
    return _quoted()


def __getattr__(name):
    # ``QUOTED`` is built lazily: its derived sides need the closed forms (about a second)
    if name == "QUOTED":
        return quoted_statements()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# =============================================================================================
# the Bayes side (§3.5, §7, §9) and the predecessor [M] (§13), re-exported
# =============================================================================================

from .bayes import (  # noqa: E402
    c_nu, expected_max_exact, g_nu, stein_mean, nishimori_residual, one_d_form, outer_integrand, posterior, posterior_residual, ratio_condition,
    spiked_asymptotic, stein_identity_residual,
)
from .predecessor import (  # noqa: E402
    NOTATION_MAP, manifold_excess_risk as predecessor_manifold_risk, prop3_risk as predecessor_prop3_risk,
    zeta_at_zero, zeta_erf2,
)

__all__ += [
    "length_one_AB",
    "c_nu", "expected_max_exact", "g_nu", "stein_mean", "nishimori_residual", "one_d_form", "outer_integrand", "posterior", "posterior_residual",
    "ratio_condition", "spiked_asymptotic", "stein_identity_residual", "NOTATION_MAP", "predecessor_manifold_risk",
    "predecessor_prop3_risk", "zeta_at_zero", "zeta_erf2",
]
