r"""Bayes side of single-location regression (SLR), written once in SymPy.

Source: [D] Duranthon, Marion, Boyer, Loureiro, Zdeborová, *Statistical Advantage of Softmax
Attention: Insights from Single-Location Regression*, arXiv:2509.21936 (Prop. 4.2 of v1; numbering
varies by version).  See ``docs/slr.md`` §3.5 (ratio condition, posterior), §7 (Bayes
risk, Nishimori identity, one-dimensional and Laplace-type representations), §8 (Stein identity)
and §9 (asymptotics).  Every formula here is an independent derivation for the model definitions
of the spec (tag [DC]); the numeric side (:mod:`attnlimits.numeric.slr.bayes_risk`) evaluates the kernels generated from these
expressions (:func:`attnlimits.derivations.slr.kernels.bayes_kernels`) and never retypes them.

Notation
--------
``χ ∈ R^L`` key projections of the tokens, ``ε*`` the hidden location (uniform prior), ``ν`` the
spike strength (:data:`nu`).  Models (:data:`MODELS`):

- ``"spiked"``: :math:`g_\nu(\varepsilon,\chi)=\exp(\sqrt\nu\,\chi_\varepsilon-\nu/2)`;
- ``"max"``:    :math:`g_\nu(\varepsilon,\chi)=L\,e^{\nu\chi_\varepsilon}/\sum_{\ell}e^{\nu\chi_\ell}`.

Both satisfy the ratio condition :math:`g_\nu(\varepsilon)/g_\nu(\varepsilon')=
\exp(c_\nu(\chi_\varepsilon-\chi_{\varepsilon'}))` with :math:`c_\nu=\sqrt\nu` (spiked), :math:`\nu`
(max) — :func:`ratio_condition`, :func:`c_nu` — hence the posterior of the location is
:math:`p=\mathrm{softmax}(c_\nu\chi)` (:func:`posterior`) and the Bayes risk is

.. math::  E_B = 1-\mathbb E[p_{\varepsilon^*}] = 1-\mathbb E\|p\|^2 \quad\text{(Nishimori)}.

Representations used by :mod:`attnlimits.numeric.slr.bayes_risk`
--------------------------------------------
- ``L = 2`` (:func:`one_d_form`): spiked :math:`E_B=\mathbb E_n[\mathrm{sigmoid}(-\nu-\sqrt{2\nu}n)]`;
  max :math:`E_B=2\,\mathbb E_n[\mathrm{sigmoid}(\sqrt2\nu n)\,\mathrm{sigmoid}(-\sqrt2\nu n)]`.
- any ``L`` (§7): with :math:`1/S^K=\frac1{(K-1)!}\int_0^\infty t^{K-1}e^{-tS}dt` and :math:`u=-\log t`,
  every moment :math:`\mathbb E[\prod_\ell e^{k_\ell a_\ell}/S^{K}]`, :math:`S=\sum_\ell e^{a_\ell}`,
  :math:`K=\sum_\ell k_\ell`, becomes
  :math:`\frac1{(K-1)!}\int_{\mathbb R}\prod_\ell\Phi_{k_\ell}(u)\,du` with
  :math:`\Phi_k(u)=\mathbb E_g[K_k(a-u)]`, :math:`K_k(s)=\exp(ks-e^s)` (:func:`laplace_kernel`).
  In the spec's notation :math:`\phi_0(e^{-u})=\Phi_0(u)`, :math:`e^{-u}\phi_1(e^{-u})=\Phi_1(u)`,
  :math:`e^{-2u}\psi(e^{-u})=\Phi_2(u)`.  The logits :math:`a=c_\nu\chi^*` are Gaussian per token
  (:func:`token_laws`); the step of :math:`K_0` sits at :math:`a=u` (:func:`inner_step`).
- :func:`outer_integrand` gives the integrand in ``u`` of :math:`E_B` in two forms: ``"direct"``
  (no cancellation; spiked :math:`(L-1)\mathbb E[p_2]`, max :math:`L(L-1)\mathbb E[p_1p_2]`) and
  ``"complement"`` (the spec's :math:`1-\mathbb E[p_1]` and :math:`1-L\,\mathbb E[p_1^2]`).

Asymptotics (§9): :func:`spiked_asymptotic` derives
:math:`E_B\simeq(L-1)\frac{\sqrt\pi}2\nu^{-1/2}e^{-\nu/4}` from the completed square
(:func:`completed_square_residual`) and :math:`\int_{\mathbb R}\frac{dt}{2\cosh(t/2)}=\pi`
(:func:`sech_integral`); :func:`neg_log_rate_expansion` gives :math:`-\log E_B/\nu`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from .symbols import L, nu  # noqa: F401  (shared, one definition)

from attnlimits.symbolic.functions import gaussian_density, ndtr

__all__ = [
    "check_model",
    "nu", "L", "n", "g", "u", "s", "a", "t", "x", "m", "c", "d", "E_B", "MODELS", "REFERENCES",
    "chi_vector", "g_nu", "ratio_condition", "c_nu", "softmax", "posterior", "posterior_residual",
    "normalisation_residual", "nishimori_residual", "risk_decomposition_residual",
    "stein_lemma_residual", "stein_identity_residual",
    "gaussian_density", "normal_density", "std_normal_cdf", "ndtr", "sigmoid", "stein_mean",
    "expected_max_exact",
    "OneDForm", "one_d_form", "spiked_L2_function", "max_L2_function",
    "laplace_identity_residual", "laplace_kernel", "kernel_step_part", "kernel_remainder",
    "step_part", "step_part_identity_residual", "token_laws", "inner_integrand", "inner_step",
    "spec_inner_integrands",
    "phi_symbol", "moment_integrand", "OuterForm", "outer_integrand",
    "completed_square_residual", "sech_integral", "spiked_asymptotic", "neg_log_rate_expansion",
    "exact_ratio_integrand", "expected_max_integrand", "expected_max_by_parts",
    "expected_max_by_parts_residual",
]

#: What a computation with this result rests on (printed by ``attnlimits.verify.claims.citation``).
REFERENCES = (
    "O. Duranthon, P. Marion, C. Boyer, B. Loureiro, L. Zdeborová. Statistical Advantage of Softmax "
    "Attention: Insights from Single-Location Regression. arXiv:2509.21936.",
    "H. Nishimori. Statistical Physics of Spin Glasses and Information Processing. Oxford University "
    "Press, 2001.",
    "C. Stein. Estimation of the mean of a multivariate normal distribution. Annals of Statistics, 1981.",
    "P. Marion, R. Berthier, G. Biau, C. Boyer. Attention Layers Provably Solve Single-Location "
    "Regression. ICLR 2025, arXiv:2410.01537.",
)

MODELS = ("spiked", "max")

# ------------------------------------------------------------------------------------------------
# symbols
n = sp.Symbol("n", real=True)  #: standard normal variable of the L = 2 forms
g = sp.Symbol("g", real=True)  #: standard normal variable of the inner expectations
u = sp.Symbol("u", real=True)  #: u = −log t (Laplace variable)
s = sp.Symbol("s", real=True)  #: s = a − u (kernel argument)
a = sp.Symbol("a", real=True)  #: a logit c_ν χ*_ℓ
t = sp.Symbol("t_lap", positive=True)  #: Laplace variable t (named apart from the activation argument t)
x = sp.Symbol("x", real=True)  #: generic real variable
m = sp.Symbol("m", real=True)  #: mean of a logit
c = sp.Symbol("c_sd", positive=True)  #: standard deviation of a logit (named apart from the erf offset c)
d = sp.Symbol("d_gap", real=True)  #: score gap √ν(χ*_1 − χ*_ℓ) ~ N(ν, 2ν) (§9)
E_B = sp.Symbol("E_B", nonnegative=True)  #: a Bayes risk (placeholder in :func:`stein_mean`)


def check_model(model: str) -> None:
    """Refuse a data model other than those of :data:`MODELS` (ValueError naming them)."""
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")


def _check_length(Lv) -> int:
    if isinstance(Lv, bool) or not isinstance(Lv, int) or Lv < 1:
        raise ValueError(f"L must be a positive int, got {Lv!r}")
    return Lv


def chi_vector(Lv: int) -> sp.Matrix:
    """The key projections ``(chi_1, …, chi_L)`` as a column of real symbols."""
    _check_length(Lv)
    return sp.Matrix(sp.symbols(f"chi_1:{Lv + 1}", real=True))


def g_nu(model: str, eps: int, chi) -> sp.Expr:
    r"""The reweighting :math:`g_\nu(\varepsilon,\chi)` of docs/slr.md §3.2–§3.3 (``eps`` 0-based).

    spiked: :math:`\exp(\sqrt\nu\chi_\varepsilon-\nu/2)`;
    max: :math:`L e^{\nu\chi_\varepsilon}/\sum_\ell e^{\nu\chi_\ell}`.
    """
    check_model(model)
    chi = list(chi)
    if model == "spiked":
        return sp.exp(sp.sqrt(nu) * chi[eps] - nu / 2)
    return len(chi) * sp.exp(nu * chi[eps]) / sp.Add(*[sp.exp(nu * ch) for ch in chi])


@functools.lru_cache(maxsize=None)
def ratio_condition(model: str, Lv: int = 2, eps: int = 0, other: int = 1) -> sp.Expr:
    r"""Simplified :math:`\log(g_\nu(\varepsilon,\chi)/g_\nu(\varepsilon',\chi))` (docs/slr.md §3.5).

    Equals :math:`c_\nu(\chi_\varepsilon-\chi_{\varepsilon'})` for both models and every ``L``.
    """
    chi = chi_vector(Lv)
    r = sp.log(g_nu(model, eps, chi) / g_nu(model, other, chi))
    return sp.factor(sp.simplify(sp.expand_log(r, force=True)))


@functools.lru_cache(maxsize=None)
def c_nu(model: str) -> sp.Expr:
    r""":math:`c_\nu`, derived: the ratio condition at ``L = 2`` divided by :math:`\chi_1-\chi_2`.

    Returns ``sqrt(nu)`` (spiked) or ``nu`` (max); raises if the ratio depended on ``χ`` otherwise.
    """
    chi = chi_vector(2)
    cv = sp.simplify(ratio_condition(model, 2) / (chi[0] - chi[1]))
    if cv.free_symbols - {nu}:
        raise ArithmeticError(f"ratio condition for {model!r} is not of the form c_nu*(chi_1 - chi_2): {cv}")
    return cv


def softmax(vec, beta=1) -> sp.Matrix:
    """``softmax(beta * vec)`` as a column Matrix."""
    e = [sp.exp(beta * v) for v in vec]
    tot = sp.Add(*e)
    return sp.Matrix([ei / tot for ei in e])


@functools.lru_cache(maxsize=None)
def posterior(model: str, Lv: int) -> sp.Matrix:
    r"""Posterior of the location, :math:`p=\mathrm{softmax}(c_\nu\chi)` (docs/slr.md §3.5).

    Derived by Bayes' rule with the uniform prior: :math:`P(\varepsilon\mid X)=g_\nu(\varepsilon,\chi)/
    \sum_{\varepsilon'}g_\nu(\varepsilon',\chi)` (the Gaussian factor is common);
    :func:`posterior_residual` checks that this equals the softmax returned here.
    """
    check_model(model)
    return softmax(chi_vector(Lv), c_nu(model))


@functools.lru_cache(maxsize=None)
def posterior_residual(model: str, Lv: int) -> sp.Matrix:
    """Bayes-rule posterior minus :func:`posterior`, simplified (zero Matrix)."""
    chi = chi_vector(Lv)
    w = [g_nu(model, e, chi) for e in range(Lv)]
    tot = sp.Add(*w)
    bayes = sp.Matrix([wi / tot for wi in w])
    return sp.simplify(bayes - posterior(model, Lv))


@functools.lru_cache(maxsize=None)
def normalisation_residual(model: str, Lv: int = 3) -> sp.Expr:
    r""":math:`\mathbb E_{\mathcal N}[g_\nu(\varepsilon,\chi)]-1` (docs/slr.md §3.1), simplified to 0.

    spiked: the Gaussian integral over :math:`\chi_\varepsilon`, done by SymPy; max:
    :math:`\sum_\varepsilon g_\nu(\varepsilon,\chi)-L` (then :math:`\mathbb E g_\nu(\varepsilon)=1` by
    exchangeability of the i.i.d. coordinates).
    """
    chi = chi_vector(Lv)
    if model == "spiked":
        val = sp.integrate(g_nu(model, 0, chi) * gaussian_density(chi[0]), (chi[0], -sp.oo, sp.oo))
        return sp.simplify(val - 1)
    check_model(model)
    return sp.simplify(sp.Add(*[g_nu(model, e, chi) for e in range(Lv)]) - Lv)


@functools.lru_cache(maxsize=None)
def nishimori_residual(model: str, Lv: int) -> sp.Expr:
    r"""Nishimori identity at fixed ``X`` (docs/slr.md §7): :math:`\mathbb E[p_{\varepsilon^*}\mid X]-\|p\|^2`.

    Given ``X`` the true location is distributed as the posterior ``p``, so
    :math:`\mathbb E[p_{\varepsilon^*}\mid X]=\sum_\varepsilon P(\varepsilon\mid X)\,p_\varepsilon`.
    Returns the simplified difference (0); averaging over ``X`` gives
    :math:`\mathbb E p_{\varepsilon^*}=\mathbb E\|p\|^2`.
    """
    p = posterior(model, Lv)
    chi = chi_vector(Lv)
    w = [g_nu(model, e, chi) for e in range(Lv)]
    post = [wi / sp.Add(*w) for wi in w]
    return sp.simplify(sp.Add(*[post[e] * p[e] for e in range(Lv)]) - sum(pi**2 for pi in p))


@functools.lru_cache(maxsize=None)
def risk_decomposition_residual(model: str, Lv: int) -> sp.Expr:
    r"""The algebra behind the ``"direct"`` forms, simplified to 0.

    spiked (:math:`\varepsilon^*=1`): :math:`1-p_1-\sum_{\ell\ge2}p_\ell`, so
    :math:`E_B=(L-1)\mathbb E[p_2]` by exchangeability of the noise tokens;
    max: :math:`1-\|p\|^2-\sum_{\ell\ne\ell'}p_\ell p_{\ell'}`, so :math:`E_B=L(L-1)\mathbb E[p_1p_2]`.
    """
    p = posterior(model, Lv)
    if model == "spiked":
        return sp.simplify(1 - p[0] - sp.Add(*p[1:]))
    off = sp.Add(*[p[i] * p[j] for i in range(Lv) for j in range(Lv) if i != j])
    return sp.simplify(1 - sum(pi**2 for pi in p) - off)


# ------------------------------------------------------------------------------------------------
# Gaussian helpers


def normal_density(var, mean, sd) -> sp.Expr:
    """Density of ``N(mean, sd**2)`` at ``var``."""
    return sp.exp(-(var - mean) ** 2 / (2 * sd**2)) / (sd * sp.sqrt(2 * sp.pi))


def std_normal_cdf(var) -> sp.Expr:
    """Standard normal CDF, :class:`attnlimits.symbolic.functions.ndtr` (accurate in both tails once printed)."""
    return ndtr(var)


def sigmoid(z) -> sp.Expr:
    """Logistic function ``1/(1 + exp(-z))``."""
    return 1 / (1 + sp.exp(-z))


# ------------------------------------------------------------------------------------------------
# Stein (§8)


def stein_lemma_residual() -> sp.Expr:
    r""":math:`\varphi'(x)+x\varphi(x)` simplified (0): Gaussian integration by parts,
    :math:`\mathbb E[x\,h(x)]=\mathbb E[h'(x)]` (Stein 1981)."""
    return sp.simplify(sp.diff(gaussian_density(x), x) + x * gaussian_density(x))


@functools.lru_cache(maxsize=None)
def stein_identity_residual(Lv: int) -> sp.Expr:
    r""":math:`\sum_\ell\partial p_\ell/\partial\chi_\ell-\nu(1-\sum_\ell p_\ell^2)` for
    :math:`p=\mathrm{softmax}(\nu\chi)`, simplified (0).

    With Stein's lemma on the i.i.d. :math:`\chi^*` of max-SLR:
    :math:`\mu_L(\nu)=\mathbb E\chi^*_{\varepsilon^*}=\mathbb E\sum_\ell p_\ell\chi_\ell=
    \mathbb E\sum_\ell\partial_\ell p_\ell=\nu\,\mathbb E(1-\|p\|^2)=\nu E_B^{\max}` (docs/slr.md §8, claim C8).
    """
    chi = chi_vector(Lv)
    p = softmax(chi, nu)
    div = sp.Add(*[sp.diff(p[i], chi[i]) for i in range(Lv)])
    return sp.simplify(div - nu * (1 - sum(pi**2 for pi in p)))


def stein_mean() -> sp.Expr:
    r""":math:`\mu_L(\nu)=\mathbb E\chi^*_{\varepsilon^*}=\nu E_B^{\max}` on max-SLR (docs/slr.md §8, claim C8).

    The consequence of :func:`stein_identity_residual` (Stein's lemma on the i.i.d. marginal):
    :math:`\mathbb E\sum_\ell p_\ell\chi_\ell=\mathbb E\sum_\ell\partial_\ell p_\ell=
    \nu\,\mathbb E(1-\|p\|^2)`; in the symbols ``nu`` and ``E_B``.  The one definition of μ_L(ν).
    """
    return nu * E_B


# ------------------------------------------------------------------------------------------------
# L = 2: one-dimensional forms (§7)


@dataclass(frozen=True)
class OneDForm:
    """A one-dimensional representation ``E_B = ∫ integrand dn`` (``n ~ N(0,1)`` folded in).

    ``function`` is the expectation's argument, ``integrand = function * φ(n)``; ``step`` is the
    location of the sharp feature (split point), ``width`` its scale in ``n``.
    """

    model: str
    function: sp.Expr
    integrand: sp.Expr
    step: sp.Expr
    width: sp.Expr


@functools.lru_cache(maxsize=None)
def spiked_L2_function() -> sp.Expr:
    r"""Spiked, ``L = 2``: :math:`1-p_1` with :math:`\chi^*_1=\sqrt\nu+g_1`, :math:`\chi^*_2=g_2`,
    :math:`g_1-g_2=\sqrt2\,n`; derived = :math:`\mathrm{sigmoid}(-\nu-\sqrt{2\nu}\,n)`."""
    chi = chi_vector(2)
    p = posterior("spiked", 2)
    expr = (1 - p[0]).subs(chi[0], chi[1] + sp.sqrt(nu) + sp.sqrt(2) * n)
    return sp.simplify(sp.powsimp(sp.simplify(expr), force=True))


@functools.lru_cache(maxsize=None)
def max_L2_function() -> sp.Expr:
    r"""Max-SLR, ``L = 2``: :math:`1-\|p\|^2` with :math:`\chi_1-\chi_2=\sqrt2\,n` (i.i.d. marginal);
    derived = :math:`2\,\mathrm{sigmoid}(\sqrt2\nu n)\,\mathrm{sigmoid}(-\sqrt2\nu n)`."""
    chi = chi_vector(2)
    p = posterior("max", 2)
    expr = (1 - p[0] ** 2 - p[1] ** 2).subs(chi[0], chi[1] + sp.sqrt(2) * n)
    return sp.simplify(sp.factor(sp.simplify(expr)))


@functools.lru_cache(maxsize=None)
def one_d_form(model: str) -> OneDForm:
    """The ``L = 2`` form of ``model`` with its split point and feature width (docs/slr.md §7)."""
    check_model(model)
    if model == "spiked":
        f = spiked_L2_function()
        arg = nu + sp.sqrt(2 * nu) * n  # f = sigmoid(-arg); the step is where arg = 0
        step = sp.solve(sp.Eq(arg, 0), n)[0]
        width = 1 / sp.sqrt(2 * nu)
    else:
        f = max_L2_function()
        arg = sp.sqrt(2) * nu * n  # f = 2 sigmoid(arg) sigmoid(-arg): a bump at arg = 0
        step = sp.solve(sp.Eq(arg, 0), n)[0]
        width = 1 / (sp.sqrt(2) * nu)
    return OneDForm(model, f, f * gaussian_density(n), sp.simplify(step), width)


# ------------------------------------------------------------------------------------------------
# any L: Laplace-type representation (§7)


@functools.lru_cache(maxsize=None)
def laplace_identity_residual(K: int) -> sp.Expr:
    r""":math:`\frac1{(K-1)!}\int_0^\infty t^{K-1}e^{-tS}dt-S^{-K}` for ``S > 0`` (0)."""
    S = sp.Symbol("S", positive=True)
    val = sp.integrate(t ** (K - 1) * sp.exp(-t * S), (t, 0, sp.oo)) / sp.factorial(K - 1)
    return sp.simplify(val - S ** (-K))


@functools.lru_cache(maxsize=None)
def laplace_kernel(k: int) -> sp.Expr:
    r"""Per-token kernel :math:`K_k(s)`, derived from the Laplace form in ``u = -log t``.

    A token contributes :math:`t^{k}e^{ka}e^{-te^{a}}` (``t^k`` is its share of
    :math:`t^{K-1}dt=e^{-Ku}du`); with :math:`t=e^{-u}` and :math:`a=s+u` this is
    :math:`\exp(ks-e^{s})`.
    """
    expr = sp.exp(k * a) * sp.exp(-t * sp.exp(a))
    expr = (expr.subs(t, sp.exp(-u)) * sp.exp(-k * u)).subs(a, s + u)
    return sp.simplify(sp.powsimp(sp.expand(expr), combine="exp", force=True))


def kernel_step_part() -> sp.Expr:
    r"""Smooth step :math:`\Phi_{\mathcal N}(-s)` subtracted from :math:`K_0(s)=\exp(-e^s)`.

    Its Gaussian average is closed-form (:func:`step_part`), and the remainder
    :func:`kernel_remainder` decays like :math:`e^{s}` on the left and like a Gaussian on the right.
    """
    return std_normal_cdf(-s)


def kernel_remainder() -> sp.Expr:
    r""":math:`D_0(s)=K_0(s)-\Phi_{\mathcal N}(-s)=\exp(-e^s)-\Phi_{\mathcal N}(-s)` (analytic, decaying)."""
    return laplace_kernel(0) - kernel_step_part()


def step_part() -> sp.Expr:
    r""":math:`\mathbb E_{a\sim\mathcal N(m,c^2)}[\Phi_{\mathcal N}(u-a)]=\Phi_{\mathcal N}((u-m)/\sqrt{1+c^2})`."""
    return std_normal_cdf((u - m) / sp.sqrt(1 + c**2))


@functools.lru_cache(maxsize=None)
def step_part_identity_residual() -> sp.Expr:
    r"""Derivative check of :func:`step_part` (0): :math:`\partial_u` of both sides are
    :math:`\mathbb E_a\varphi(u-a)` (SymPy integral) and the ``N(m, 1+c²)`` density; both sides
    vanish as :math:`u\to-\infty`, so they are equal."""
    lhs = sp.integrate(normal_density(a, m, c) * gaussian_density(u - a), (a, -sp.oo, sp.oo), conds="none")
    return sp.simplify(lhs - sp.diff(step_part(), u))


@functools.lru_cache(maxsize=None)
def token_laws(model: str) -> dict:
    r"""Gaussian law ``(mean, sd)`` of the logits :math:`a_\ell=c_\nu\chi^*_\ell` per token type.

    spiked: ``"signal"`` :math:`\chi^*=\sqrt\nu+g` and ``"noise"`` :math:`\chi^*=g`;
    max: ``"noise"`` (the marginal of ``X`` is i.i.d. Gaussian, docs/slr.md §3.3).
    """
    cv = c_nu(model)
    if model == "spiked":
        return {"signal": (sp.simplify(cv * sp.sqrt(nu)), cv), "noise": (sp.S.Zero, cv)}
    return {"noise": (sp.S.Zero, cv)}


def inner_integrand(model: str, law: str, k: int) -> sp.Expr:
    r"""Integrand in ``g`` of :math:`\Phi_k(u)=\mathbb E_g[K_k(m+cg-u)]` for one token type."""
    mean, sd = token_laws(model)[law]
    return gaussian_density(g) * laplace_kernel(k).subs(s, mean + sd * g - u)


def inner_step(model: str, law: str) -> sp.Expr:
    """Location in ``g`` of the step of the inner integrand (``a = u``): ``(u - m)/c``."""
    mean, sd = token_laws(model)[law]
    return sp.simplify((u - mean) / sd)


def spec_inner_integrands(model: str) -> dict:
    r"""The spec's inner integrands in ``g`` with their step (split point), for :math:`t=e^{-u}`.

    spiked: ``"phi0"`` :math:`\exp(-te^{\sqrt\nu g})` (noise token), ``"phi1"``
    :math:`e^{-u}e^{a}\exp(-te^{a})`, :math:`a=\nu+\sqrt\nu g` (signal token); max: ``"phi0"``
    and ``"psi"`` :math:`e^{-2u}e^{2a}\exp(-te^{a})`, :math:`a=\nu g` — each times the density
    :math:`\varphi(g)`.  Values are ``(integrand, step)``; the step is where :math:`a=u`.
    """
    if model == "spiked":
        spec = {"phi0": ("noise", 0), "phi1": ("signal", 1)}
    else:
        check_model(model)
        spec = {"phi0": ("noise", 0), "psi": ("noise", 2)}
    return {name: (inner_integrand(model, law, k), inner_step(model, law)) for name, (law, k) in spec.items()}


def phi_symbol(law: str, k: int) -> sp.Symbol:
    r"""Placeholder for :math:`\Phi_k(u)` of token type ``law`` in outer integrands."""
    return sp.Symbol(f"Phi{k}_{law}", positive=True)


def moment_integrand(tokens: dict) -> sp.Expr:
    r"""Integrand in ``u`` of :math:`\mathbb E[\prod_\ell e^{k_\ell a_\ell}/S^{K}]`.

    ``tokens`` maps ``(law, k)`` to a multiplicity (int or SymPy expression); ``K`` is
    :math:`\sum k\cdot\text{multiplicity}` and must be a positive integer.
    """
    K = sp.sympify(sum(k * mult for (_, k), mult in tokens.items()))
    if not (K.is_Integer and K > 0):
        raise ValueError(f"the total exponent K must be a positive integer, got {K}")
    out = sp.S.One / sp.factorial(K - 1)
    for (law, k), mult in tokens.items():
        out *= phi_symbol(law, k) ** mult
    return out


@dataclass(frozen=True)
class OuterForm:
    r"""``E_B = constant + ∫_R integrand du``; ``integrand`` is in the :func:`phi_symbol` placeholders."""

    model: str
    form: str
    integrand: sp.Expr
    constant: sp.Expr
    inner: tuple  # ((law, k), ...) placeholders used


@functools.lru_cache(maxsize=None)
def outer_integrand(model: str, Lv, form: str = "direct") -> OuterForm:
    r"""Integrand in ``u`` of the Bayes risk (docs/slr.md §7), for ``L ≥ 2`` (int or the symbol :data:`L`).

    ``form="direct"`` (used by the numerics: no cancellation):

    - spiked :math:`E_B=(L-1)\mathbb E[e^{b_2}/S]=(L-1)\int\Phi_1^{n}\Phi_0^{s}(\Phi_0^{n})^{L-2}du`;
    - max :math:`E_B=L(L-1)\mathbb E[e^{a_1+a_2}/S^2]=L(L-1)\int(\Phi_1)^2\Phi_0^{L-2}du`.

    ``form="complement"`` (the spec's formulas): spiked :math:`1-\int\Phi_1^{s}(\Phi_0^n)^{L-1}du`;
    max :math:`1-L\int\Phi_2\,\Phi_0^{L-1}du`.
    """
    check_model(model)
    if form not in ("direct", "complement"):
        raise ValueError(f"unknown form {form!r}; choose 'direct' or 'complement'")
    Ls = sp.sympify(Lv)
    if model == "spiked":
        if form == "direct":
            tok = {("signal", 0): 1, ("noise", 1): 1, ("noise", 0): Ls - 2}
            integrand, const = (Ls - 1) * moment_integrand(tok), sp.S.Zero
        else:
            tok = {("signal", 1): 1, ("noise", 0): Ls - 1}
            integrand, const = -moment_integrand(tok), sp.S.One
    else:
        if form == "direct":
            tok = {("noise", 1): 2, ("noise", 0): Ls - 2}
            integrand, const = Ls * (Ls - 1) * moment_integrand(tok), sp.S.Zero
        else:
            tok = {("noise", 2): 1, ("noise", 0): Ls - 1}
            integrand, const = -Ls * moment_integrand(tok), sp.S.One
    return OuterForm(model, form, integrand, const, tuple(tok))


# ------------------------------------------------------------------------------------------------
# asymptotics (§9)


@functools.lru_cache(maxsize=None)
def completed_square_residual() -> sp.Expr:
    r"""Completing the square (0): :math:`\mathcal N(d;\nu,2\nu)\,e^{-d/2}=
    \frac{e^{-\nu/4}}{\sqrt{4\pi\nu}}e^{-d^2/(4\nu)}`, so with
    :math:`\mathrm{sigmoid}(-d)=e^{-d/2}/(2\cosh(d/2))`,
    :math:`\mathbb E[\mathrm{sigmoid}(-d)]=
    \frac{e^{-\nu/4}}{\sqrt{4\pi\nu}}\int\frac{e^{-d^2/(4\nu)}}{2\cosh(d/2)}dd`."""
    lhs = normal_density(d, nu, sp.sqrt(2 * nu)) * sp.exp(-d / 2)
    rhs = sp.exp(-nu / 4) / sp.sqrt(4 * sp.pi * nu) * sp.exp(-d**2 / (4 * nu))
    sig = sp.simplify(sigmoid(-d) - sp.exp(-d / 2) / (2 * sp.cosh(d / 2)))
    return sp.simplify(sp.powsimp(sp.expand(lhs / rhs), force=True) - 1) + sp.simplify(sig.rewrite(sp.exp))


@functools.lru_cache(maxsize=None)
def sech_integral() -> sp.Expr:
    r""":math:`\int_{\mathbb R}\frac{dt}{2\cosh(t/2)}`, evaluated by SymPy (= π)."""
    tt = sp.Symbol("tt", real=True)
    return sp.integrate(1 / (2 * sp.cosh(tt / 2)), (tt, -sp.oo, sp.oo))


@functools.lru_cache(maxsize=None)
def spiked_asymptotic(Lv=L) -> sp.Expr:
    r"""Leading large-ν spiked Bayes risk :math:`(L-1)\frac{\sqrt\pi}{2}\nu^{-1/2}e^{-\nu/4}` (derived).

    Each of the :math:`L-1` competitors contributes :math:`\mathbb E[\mathrm{sigmoid}(-d)]`,
    :math:`d\sim\mathcal N(\nu,2\nu)`; by :func:`completed_square_residual` this is
    :math:`\frac{e^{-\nu/4}}{\sqrt{4\pi\nu}}\int\frac{e^{-d^2/(4\nu)}}{2\cosh(d/2)}dd`, and the integral
    tends to :func:`sech_integral` (dominated convergence).  Relative error :math:`O(1/\nu)`
    (:math:`-\pi^2/(4\nu)` at first order).
    """
    lead = sp.exp(-nu / 4) / sp.sqrt(4 * sp.pi * nu) * sech_integral()
    return sp.simplify((sp.sympify(Lv) - 1) * lead)


@functools.lru_cache(maxsize=None)
def neg_log_rate_expansion(Lv=L) -> sp.Expr:
    r""":math:`-\log E_B/\nu` from :func:`spiked_asymptotic`:
    :math:`\tfrac14+\big(\tfrac12\log\nu-\log\tfrac{(L-1)\sqrt\pi}2\big)/\nu+O(\nu^{-2})`."""
    expr = -sp.expand_log(sp.log(spiked_asymptotic(Lv)), force=True) / nu
    return sp.expand(expr)


def exact_ratio_integrand() -> sp.Expr:
    r"""Spiked ``L = 2`` exactly: :math:`E_B/\text{asymptotic}=\frac1\pi\int
    \frac{e^{-d^2/(4\nu)}}{2\cosh(d/2)}dd`; returns the integrand in ``d``."""
    return sp.exp(-d**2 / (4 * nu)) / (2 * sp.cosh(d / 2)) / sech_integral()


# ------------------------------------------------------------------------------------------------
# expected maximum of L i.i.d. N(0,1) (§8, M_L)


def expected_max_integrand(Lv) -> sp.Expr:
    r""":math:`M_L=\int L\,x\,\varphi(x)\Phi(x)^{L-1}dx` — the integrand in :data:`x`."""
    return Lv * x * gaussian_density(x) * std_normal_cdf(x) ** (Lv - 1)


def expected_max_by_parts(Lv) -> sp.Expr:
    r"""After integrating by parts (:math:`x\varphi=-\varphi'`):
    :math:`M_L=L(L-1)\int\varphi(x)^2\Phi(x)^{L-2}dx` — the integrand."""
    return Lv * (Lv - 1) * gaussian_density(x) ** 2 * std_normal_cdf(x) ** (Lv - 2)


@functools.lru_cache(maxsize=None)
def expected_max_exact(Lv: int):
    r"""Closed form of :math:`M_L` by SymPy ``integrate`` of :func:`expected_max_by_parts`, or ``None``.

    ``L = 1`` → 0, ``L = 2`` → :math:`1/\sqrt\pi`, ``L = 3`` → :math:`3/(2\sqrt\pi)`.  For
    ``L ≥ 4`` returns ``None`` without trying: SymPy 1.14 returns the wrong value
    :math:`3/\sqrt\pi` for ``L = 4`` (true :math:`M_4=1.029375`), after about 8 s.  The numeric
    cross-check is :func:`attnlimits.verify.slr.expected_max_gaussian_exact`.
    """
    Lv = _check_length(Lv)
    if Lv == 1:
        return sp.S.Zero
    if Lv > 3:
        return None
    res = sp.integrate(sp.expand(expected_max_by_parts(Lv).rewrite(sp.erf)), (x, -sp.oo, sp.oo))
    if res.has(sp.Integral) or not res.is_number:
        return None
    return sp.nsimplify(sp.simplify(res)) if res.has(sp.Float) else sp.simplify(res)


@functools.lru_cache(maxsize=None)
def expected_max_by_parts_residual(Lv: int) -> sp.Expr:
    r"""Integrand of :func:`expected_max_integrand` minus that of :func:`expected_max_by_parts`
    minus :math:`\frac{d}{dx}[-L\varphi\Phi^{L-1}]` (0): the boundary term vanishes at ±∞."""
    boundary = sp.diff(-Lv * gaussian_density(x) * std_normal_cdf(x) ** (Lv - 1), x)
    return sp.simplify(expected_max_integrand(Lv) - expected_max_by_parts(Lv) - boundary)
