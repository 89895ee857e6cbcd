r"""The predecessor [M]: single-location regression solved by an erf attention layer, in SymPy.

Source: [M] P. Marion, R. Berthier, G. Biau, C. Boyer, *Attention Layers Provably Solve
Single-Location Regression*, ICLR 2025, arXiv:2410.01537 (Theorem 1 on the manifold,
Corollary 2, Proposition 3).  See ``docs/slr.md`` §13 (claims C20–C22, numbers R7).

Model (§13.1)
-------------
Tokens :math:`X_\ell\in\mathbb R^d`, :math:`J_0\sim\mathrm{Unif}\{1..L\}`,
:math:`X_{J_0}\sim\mathcal N(\sqrt{d/2}\,k^*,\gamma^2I_d)`, other tokens :math:`\mathcal N(0,I_d)`;
unit orthogonal :math:`k^*,v^*`; :math:`Y=X_{J_0}^\top v^*+\xi`, :math:`\xi\sim\mathcal N(0,\epsilon^2)`.
Predictor :math:`T_\lambda(X)=\sum_\ell\mathrm{erf}(\lambda X_\ell^\top k)\,X_\ell^\top v` with unit
:math:`k,v`; overlaps :math:`\kappa=k^\top k^*`, :math:`\nu_M=v^\top v^*` (``nu`` in [M]),
:math:`\theta=v^\top k^*`, :math:`\eta=k^\top v^*`, :math:`\rho=k^\top v`; manifold
:math:`\theta=\eta=\rho=0`.

Contents
--------
- :class:`zeta_erf2` — :math:`\zeta(t,s)=\mathbb E_g[\mathrm{erf}(t+sg)^2]` as a SymPy function;
  :func:`zeta_at_zero` its closed form at ``t = 0``;
- :func:`erf_gaussian_mean` with :func:`erf_gaussian_mean_residual` (derived);
- :func:`manifold_excess_risk` — Theorem 1 on the manifold, derived from the model
  (:func:`manifold_risk_terms`);
- :func:`prop3_risk` — Proposition 3, derived as :math:`\mathbb E Y^2-c^\top\Sigma^{-1}c`;
- :func:`cor2_leading_term` — the small-λ term of Corollary 2;
- :data:`NOTATION_MAP` — [M] → [D] (docs/slr.md §13.3).
"""
from __future__ import annotations

import functools

import sympy as sp

from .symbols import L  # noqa: F401  (shared, one definition)

from attnlimits.symbolic.functions import zeta_erf2  # ζ(t, s) = E_g[erf(t + s g)^2], defined (and printed) there

__all__ = [
    "d", "L", "gamma", "lam", "kappa", "nu_M", "eps", "theta", "eta", "rho", "g",
    "zeta_erf2", "zeta_at_zero", "erf_gaussian_mean", "erf_gaussian_mean_residual",
    "manifold_risk_terms", "manifold_excess_risk", "prop3_second_moments", "prop3_risk",
    "prop3_beta", "cor2_leading_term", "NOTATION_MAP", "REFERENCES", "ACTIVATION",
]

#: What a computation with this result rests on.
REFERENCES = (
    "P. Marion, R. Berthier, G. Biau, C. Boyer. Attention Layers Provably Solve Single-Location "
    "Regression. ICLR 2025, arXiv:2410.01537.",
    "O. Duranthon, P. Marion, C. Boyer, B. Loureiro, L. Zdeborová. Statistical Advantage of Softmax "
    "Attention: Insights from Single-Location Regression. arXiv:2509.21936.",
)

d = sp.Symbol("d", positive=True)  #: token dimension
gamma = sp.Symbol("gamma", positive=True)  #: standard deviation of the relevant token
lam = sp.Symbol("lam", positive=True)  #: erf slope λ
kappa = sp.Symbol("kappa", real=True)  #: k·k*
nu_M = sp.Symbol("nu_M", real=True)  #: v·v* (ν in [M]; renamed, [D]'s ν is the spike strength)
eps = sp.Symbol("eps", nonnegative=True)  #: noise standard deviation ε
theta = sp.Symbol("theta", real=True)  #: v·k*
eta = sp.Symbol("eta", real=True)  #: k·v*
rho = sp.Symbol("rho", real=True)  #: k·v
g = sp.Symbol("g", real=True)  #: standard normal variable

#: [M]'s attention weight σ(t) = erf(t), unnormalised, applied to the key field λ X_ℓ·k (the slope λ
#: is part of the field); as an activation of :mod:`attnlimits.derivations.slr` (printed for the Monte Carlo).
ACTIVATION = "elementwise:erf(t)"

#: [M] → [D] (docs/slr.md §13.3): key = [M] quantity, value = its [D] counterpart (with a note).
NOTATION_MAP = {
    "d": "D",
    "k*, v* (unit)": "k*, v* of norm sqrt(D); projections divided by sqrt(D) (same chi*, z*)",
    "sqrt(d/2) (spike in the projection)": "sqrt(nu)  ([M] is the regime nu = d/2 -> infinity)",
    "gamma^2 (variance of the relevant token)": "1 (pure mean shift)",
    "lambda (erf slope)": "sqrt(q_k) = ||k||/sqrt(D) (inverse temperature)",
    "kappa": "m_k",
    "nu (here nu_M)": "m_v",
    "theta": "m_vkstar",
    "eta": "m_kvstar",
    "rho": "q_kv",
    "manifold theta = eta = rho = 0": "manifold M (m_kvstar = m_vkstar = q_kv = 0)",
    "J_0": "epsilon* (hidden location)",
    "epsilon (noise sd)": "Delta",
    "erf, unnormalised, fixed L": "four activation families; fixed or random L; general g_nu",
}


def zeta_at_zero(lam_=lam) -> sp.Expr:
    r""":math:`\zeta(0,\lambda)=\frac2\pi\arcsin\frac{2\lambda^2}{1+2\lambda^2}` (the arcsine kernel
    :math:`\mathbb E[\mathrm{erf}(ag)\mathrm{erf}(bg)]=\frac2\pi\arcsin\frac{2ab}{\sqrt{(1+2a^2)(1+2b^2)}}`
    at ``a = b = λ``)."""
    return 2 / sp.pi * sp.asin(2 * lam_**2 / (1 + 2 * lam_**2))


def erf_gaussian_mean(A, B) -> sp.Expr:
    r""":math:`\mathbb E_g[\mathrm{erf}(A+Bg)]=\mathrm{erf}(A/\sqrt{1+2B^2})`."""
    return sp.erf(A / sp.sqrt(1 + 2 * B**2))


@functools.lru_cache(maxsize=None)
def erf_gaussian_mean_residual() -> sp.Expr:
    r"""Derivative check of :func:`erf_gaussian_mean` (0).

    :math:`\partial_A\mathbb E[\mathrm{erf}(A+Bg)]=\mathbb E[\tfrac{2}{\sqrt\pi}e^{-(A+Bg)^2}]` is a
    Gaussian integral done by SymPy; it equals :math:`\partial_A\mathrm{erf}(A/\sqrt{1+2B^2})`, and
    both sides vanish at ``A = 0`` (odd in ``A``).
    """
    A = sp.Symbol("A", real=True)
    B = sp.Symbol("B", positive=True)
    lhs = sp.integrate(2 / sp.sqrt(sp.pi) * sp.exp(-(A + B * g) ** 2) * sp.exp(-g**2 / 2) / sp.sqrt(2 * sp.pi),
                       (g, -sp.oo, sp.oo), conds="none")
    return sp.simplify(lhs - sp.diff(erf_gaussian_mean(A, B), A))


@functools.lru_cache(maxsize=None)
def manifold_risk_terms() -> dict:
    r"""Second moments of the value fields on the manifold, computed from the model definition.

    With :math:`v=\nu_Mv^*+\sqrt{1-\nu_M^2}\,v_\perp` and :math:`k\perp v^*,v_\perp` (manifold), the
    relevant token :math:`X=\sqrt{d/2}\,k^*+\gamma Z` gives :math:`Y-\xi=\gamma W`,
    :math:`X^\top v=\gamma(\nu_MW+\sqrt{1-\nu_M^2}W')` with :math:`W=Z^\top v^*`,
    :math:`W'=Z^\top v_\perp` i.i.d. :math:`\mathcal N(0,1)`, independent of the key field
    :math:`\lambda X^\top k=\lambda\kappa\sqrt{d/2}+\lambda\gamma g`.  Other tokens: key and value
    fields i.i.d. :math:`\mathcal N(0,1)` (``ρ = 0``).  Returns ``{"E_yy", "E_yz", "E_zz",
    "E_zz_other"}`` (SymPy ``stats`` expectations).
    """
    from sympy.stats import E, Normal

    W, Wp, Zo = Normal("W", 0, 1), Normal("Wp", 0, 1), Normal("Zo", 0, 1)
    y0 = gamma * W
    zJ = gamma * (nu_M * W + sp.sqrt(1 - nu_M**2) * Wp)
    return {
        "E_yy": sp.simplify(E(y0**2)),
        "E_yz": sp.simplify(E(y0 * zJ)),
        "E_zz": sp.simplify(sp.expand(E(sp.expand(zJ**2)))),
        "E_zz_other": sp.simplify(E(Zo**2)),
    }


@functools.lru_cache(maxsize=None)
def manifold_excess_risk(closed_zeta0: bool = True) -> sp.Expr:
    r"""[M] Theorem 1 on the manifold: the excess risk :math:`\mathbb E[(Y-T_\lambda)^2]-\epsilon^2`.

    .. math::
        \mathcal E=\gamma^2-2\gamma^2\nu_M\,\mathrm{erf}\Big(\lambda\kappa\sqrt{\tfrac{d}{2(1+2\lambda^2\gamma^2)}}\Big)
        +\gamma^2\zeta\big(\lambda\kappa\sqrt{d/2},\lambda\gamma\big)+(L-1)\,\zeta(0,\lambda).

    Derived: :math:`\mathbb E[(Y-\xi)^2]-2\,\mathbb E[(Y-\xi)\,z_{J_0}]\,\mathbb E[\mathrm{erf}(\lambda\chi_{J_0})]
    +\sum_\ell\mathbb E[z_\ell^2]\,\mathbb E[\mathrm{erf}(\lambda\chi_\ell)^2]`; the cross-token terms
    vanish (independent, centred values), moments from :func:`manifold_risk_terms`, the erf mean
    from :func:`erf_gaussian_mean`.  With ``closed_zeta0`` the last ζ is replaced by
    :func:`zeta_at_zero`.
    """
    mom = manifold_risk_terms()
    key_shift = lam * kappa * sp.sqrt(d / 2)
    key_sd = lam * gamma
    risk = (mom["E_yy"] - 2 * mom["E_yz"] * erf_gaussian_mean(key_shift, key_sd)
            + mom["E_zz"] * zeta_erf2(key_shift, key_sd)
            + (L - 1) * mom["E_zz_other"] * zeta_erf2(sp.S.Zero, lam))
    if closed_zeta0:
        risk = risk.subs(zeta_erf2(sp.S.Zero, lam), zeta_at_zero(lam))
    return risk


@functools.lru_cache(maxsize=None)
def prop3_second_moments() -> tuple:
    r"""``(Sigma, c, E_YY)`` for the regression of ``Y`` on :math:`S=\sum_\ell X_\ell`, in the
    coordinates :math:`(k^*,v^*)`.

    Written from the model: token means :math:`\mu_{J_0}=\sqrt{d/2}\,k^*`, others 0; covariances
    :math:`\gamma^2I` and :math:`I`.  Independence and :math:`\mathbb E X_\ell=0` for
    :math:`\ell\ne J_0` kill the cross terms, so :math:`\Sigma=\mathbb E SS^\top=
    \sum_\ell(\mathrm{Cov}_\ell+\mu_\ell\mu_\ell^\top)`, :math:`c=\mathbb E[SY]=
    (\gamma^2I+\mu\mu^\top)v^*`, :math:`\mathbb EY^2=v^{*\top}(\gamma^2I+\mu\mu^\top)v^*+\epsilon^2`.
    In the remaining :math:`d-2` directions :math:`\Sigma=(\gamma^2+L-1)I` and ``c`` is 0, so they
    do not enter :math:`c^\top\Sigma^{-1}c`.  (The law of ``J_0`` does not matter: ``S`` is
    exchangeable.)
    """
    mu = sp.Matrix([sp.sqrt(d / 2), 0])
    vstar = sp.Matrix([0, 1])
    cov_rel = gamma**2 * sp.eye(2)
    cov_other = sp.eye(2)
    Sigma = cov_rel + mu * mu.T + (L - 1) * cov_other
    second_rel = cov_rel + mu * mu.T
    cvec = second_rel * vstar
    E_YY = (vstar.T * second_rel * vstar)[0, 0] + eps**2
    return sp.simplify(Sigma), sp.simplify(cvec), sp.simplify(E_YY)


@functools.lru_cache(maxsize=None)
def prop3_risk() -> sp.Expr:
    r"""[M] Proposition 3: risk of the best linear predictor :math:`\beta^\top\sum_\ell X_\ell`,
    :math:`\mathbb EY^2-c^\top\Sigma^{-1}c=\epsilon^2+\gamma^2-\gamma^4/(\gamma^2+L-1)` (derived
    from :func:`prop3_second_moments`)."""
    Sigma, cvec, E_YY = prop3_second_moments()
    return sp.simplify(E_YY - (cvec.T * Sigma.inv() * cvec)[0, 0])


@functools.lru_cache(maxsize=None)
def prop3_beta() -> sp.Matrix:
    r"""Optimal :math:`\beta=\Sigma^{-1}c=\gamma^2v^*/(\gamma^2+L-1)` in the :math:`(k^*,v^*)` coordinates."""
    Sigma, cvec, _ = prop3_second_moments()
    return sp.simplify(Sigma.inv() * cvec)


@functools.lru_cache(maxsize=None)
def cor2_leading_term() -> sp.Expr:
    r"""Corollary 2: the last term :math:`(L-1)\zeta(0,\lambda)\approx\frac4\pi(L-1)\lambda^2` as
    :math:`\lambda\to0` (leading term of the series of :func:`zeta_at_zero`)."""
    ser = sp.series(zeta_at_zero(lam), lam, 0, 4).removeO()
    return sp.simplify((L - 1) * ser)
