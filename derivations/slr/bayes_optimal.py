r"""Bayes-optimal (BO) error of spiked-SLR at finite :math:`\alpha=N/D`: the replica-symmetric system, once.

Spec ``docs/slr.md`` §11 (equations), §14 R6 (numbers), §15 C19 (claims), §17.4 (open
points); model §3.  Source: Duranthon, Marion, Boyer, Loureiro, Zdeborová, arXiv:2509.21936 ([D]),
derived independently for the spec's definitions; the RS/Nishimori machinery is the standard one
of Zdeborová & Krzakala, *Statistical physics of inference*, Adv. Phys. 2016, and Barbier, Krzakala,
Macris, Miolane, Zdeborová, *Optimal errors and phase transitions in high-dimensional generalized
linear models*, PNAS 2019.

The model in Gaussian-input language
------------------------------------
Priors :math:`k^*,v^*\sim\mathcal N(0,I_D)`; the tokens of a sequence are i.i.d.
:math:`\mathcal N(0,I_D)` reweighted by the *unnormalised* channel

.. math::  P_{\rm out}(y\mid\chi,z)=\frac1L\sum_{\varepsilon=1}^L g_\nu(\varepsilon,\chi)\,
           \mathcal N(y;z_\varepsilon,\Delta^2),\qquad
           g_\nu(\varepsilon,\chi)=e^{\sqrt\nu\chi_\varepsilon-\nu/2}\quad\text{(spiked)}.

Everything below is derived here by SymPy from :math:`P_{\rm out}` and the Gaussian prior:

1. :func:`output_partition` — :math:`Z_{\rm out}(y,\omega^\chi,\omega^z;V_k,V_v)=
   \mathbb E_{h\sim\mathcal N(\omega^\chi,V_kI)}\mathbb E_{z\sim\mathcal N(\omega^z,V_vI)}P_{\rm out}`
   by Gaussian integration:
   :math:`\frac1L\sum_\varepsilon e^{\sqrt\nu\omega^\chi_\varepsilon+\nu V_k/2-\nu/2}
   \mathcal N(y;\omega^z_\varepsilon,V_v+\Delta^2)`; with Nishimori :math:`V_b=1-q_b` this is §11's
   closed form (:math:`S=1-q_v+\Delta^2`).
2. :func:`prior_free_entropy` — :math:`\psi_P(\hat q)=\mathbb E\log Z_P(\sqrt{\hat q}\xi+\hat q w^*,\hat q)`
   for the standard Gaussian prior, and the RS free entropy

   .. math::  \Phi(q_k,\hat q_k,q_v,\hat q_v)=\sum_{b\in\{k,v\}}\Big[-\frac{q_b\hat q_b}{2}+\psi_P(\hat q_b)\Big]
              +\alpha\sum_LP(L)\,\Psi^{(L)}_{\rm out}(q_k,q_v),\qquad
              \Psi_{\rm out}=\mathbb E\big[\log Z_{\rm out}\big]

   where the expectation is over the teacher measure
   :math:`\int dy\,Z_{\rm out}(y,\omega;1-q)\,\mathcal N(\omega;0,q)`, a mixture over the location
   :math:`\varepsilon^*` whose component is (:func:`teacher_measure_shift`, checked symbolically)
   :math:`\omega^\chi\sim\mathcal N(\sqrt\nu q_ke_{\varepsilon^*},q_kI)`,
   :math:`\omega^z\sim\mathcal N(0,q_vI)`, :math:`y=\omega^z_{\varepsilon^*}+\sqrt Sn`.  By
   exchangeability :math:`\varepsilon^*=1`; the integration variables are the standard normals
   :math:`(g_1..g_L,h_1..h_L,n)` of :func:`sample_map`.
3. :func:`stationarity` — :math:`\partial\Phi/\partial\hat q_b=0` gives the prior update
   :math:`q_b=\hat q_b/(1+\hat q_b)` (solved by SymPy); :math:`\partial\Phi/\partial q_b=0` gives
   :math:`\hat q_b=2\alpha\,\partial_{q_b}\Psi_{\rm out}`, in two forms derived from the same
   :math:`\log Z_{\rm out}`:

   - ``direct``: the total derivative of :math:`\log Z_{\rm out}` along the reparametrised sample
     (differentiation under the expectation);
   - ``ibp``: :math:`\hat q_k=\alpha\mathbb E\sum_\ell(\partial_{\omega^\chi_\ell}\log Z_{\rm out})^2`,
     :math:`\hat q_v=\alpha\mathbb E\sum_\ell(\partial_{\omega^z_\ell}\log Z_{\rm out})^2` (Gaussian
     integration by parts plus the heat equation of :math:`Z_{\rm out}` in :math:`(\omega,V)`; it
     needs no normalisation of :math:`P_{\rm out}` in :math:`y`).

   They agree in expectation (not pointwise); ``tests/derivations/test_slr_bayes_optimal.py``
   checks the identity within the integration error.  Written out, ``ibp`` is §11's
   :math:`\hat q_k=\alpha\nu\mathbb E\sum_\ell\pi_\ell^2`,
   :math:`\hat q_v=\alpha\mathbb E\sum_\ell\pi_\ell^2(y-\omega^z_\ell)^2/S^2`.
4. :func:`test_error` — :math:`E_{BO}=1-q_v[1-E_B^{\rm pop}(\nu q_k)]`, obtained from the manifold
   risk :math:`1-2m_vA+q_vB` (§6.2) with :math:`m_v=q_v` (Nishimori) and :math:`A=B=1-E_B` at SNR
   :math:`\nu q_k` (the BO predictor is softmax with key :math:`\sqrt\nu\hat k`; its logits are those
   of the spiked problem at SNR :math:`\nu q_k`).  :math:`E_B^{\rm pop}` itself is
   :func:`attnlimits.numeric.slr.bayes_risk.bayes_risk`.

The generated kernels (:func:`kernels`, :func:`module_source`) are evaluated by
:mod:`attnlimits.numeric.slr.bo_state_evolution` (which never imports this module) and by the GAMP of
:mod:`attnlimits.verify.slr.amp` (the channel functions :math:`g_{\rm out}` at general variances).

Numerical stability
-------------------
:math:`\log Z_{\rm out}=M+\log\sum_\varepsilon e^{A_\varepsilon-M}` holds for every :math:`M`;
the kernels take :math:`M` as an input (held constant when differentiating), and the numeric side
passes :math:`M=\max_\varepsilon A_\varepsilon` computed by the generated ``log_terms`` kernel.

Max-SLR
-------
Section ``max_*`` below (docs/slr.md §3.3, §11).  The max-SLR law is :math:`\mathcal N(X)\,\mathrm{softmax}(\nu\chi^*)_{\varepsilon^*}`:
:math:`P_{\rm out}=\sum_\varepsilon\mathrm{softmax}(\nu\chi)_\varepsilon\mathcal N(y;z_\varepsilon,\Delta^2)` is normalised
(:func:`max_channel_normalisation`), so no prior term on :math:`k`.
:math:`Z_{\rm out}=\sum_\varepsilon p_\varepsilon(\omega^\chi;V_k)\mathcal N(y;\omega^z_\varepsilon,V_v+\Delta^2)` with the key
smoothing :math:`p_\varepsilon=\mathbb E_{h\sim\mathcal N(\omega^\chi,V_kI)}\mathrm{softmax}(\nu h)_\varepsilon` on a frozen inner rule
(:func:`max_inner_integrand`: :math:`\prod_{\ell\ne\varepsilon}\Phi((\omega_\varepsilon-\omega_\ell)/\sqrt{V_k}+u)` at
:math:`\nu=\infty`, closed form :func:`max_argmax_probability_L2` at :math:`L=2`; the softmax on the Helmert basis at finite
:math:`\nu`); the teacher measure is written with the weight :math:`W=Lp_1` (:func:`max_sample_map`); updates
:func:`max_stationarity` (``ibp`` and ``direct``); test error :func:`max_test_error`.  :data:`MAX_SLR_STATUS`
says what is checked.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from .symbols import Delta, alpha, nu, q_k, q_v  # noqa: F401  (shared, one definition)

from attnlimits.symbolic.codegen import Kernel, ModuleBuilder, expression_hash
from attnlimits.symbolic.gaussian import wick_expectation

from . import population as _pop

__all__ = [
    "q_k", "q_v", "qhat_k", "qhat_v", "alpha", "nu", "Delta", "V_k", "V_v", "y", "M", "EB",
    "omega_chi", "omega_z", "sample_variables", "channel", "output_partition", "log_terms",
    "teacher_measure_shift", "sample_map", "prior_free_entropy", "rs_free_entropy", "prior_update",
    "max_channel", "max_channel_normalisation", "helmert_basis", "inner_variables", "max_argmax_probability_L2",
    "max_inner_integrand", "max_inner_outputs", "max_location_symbols", "max_scaled_symbols", "max_output_partition",
    "max_value_logdens", "max_log_terms", "max_channel_functions", "max_sample_map", "max_weight", "max_stationarity",
    "max_test_error", "max_kernels", "max_module_source",
    "stationarity", "channel_functions", "test_error", "kernels", "module_source", "MAX_SLR_STATUS",
    "REFERENCES",
]

qhat_k, qhat_v = sp.symbols("qhat_k qhat_v", nonnegative=True)
qhat = sp.Symbol("qhat", nonnegative=True)
q = sp.Symbol("q", positive=True)
V_k, V_v = sp.symbols("V_k V_v", positive=True)
y = sp.Symbol("y", real=True)
M = sp.Symbol("M", real=True)  #: log-sum-exp shift (any value; numeric passes max_ε A_ε)
EB = sp.Symbol("E_B", nonnegative=True)  #: population Bayes risk at SNR ν q_k (attnlimits.numeric.slr.bayes_risk)
n = sp.Symbol("n", real=True)

REFERENCES = (
    "O. Duranthon, P. Marion, C. Boyer, B. Loureiro, L. Zdeborová. Statistical Advantage of Softmax "
    "Attention: Insights from Single-Location Regression. arXiv:2509.21936.",
    "L. Zdeborová, F. Krzakala. Statistical physics of inference: thresholds and algorithms. Advances in "
    "Physics, 2016.",
    "J. Barbier, F. Krzakala, N. Macris, L. Miolane, L. Zdeborová. Optimal errors and phase transitions in "
    "high-dimensional generalized linear models. PNAS, 2019.",
    "S. Rangan. Generalized approximate message passing for estimation with random linear mixing. ISIT, 2011.",
    "H. Nishimori. Statistical Physics of Spin Glasses and Information Processing. Oxford University Press, 2001.",
)

MAX_SLR_STATUS = (
    "max-SLR BO is derived and solved for finite nu and nu = inf at any L (max_* functions: normalised channel, "
    "no key prior precision; Z_out with the key smoothing p_eps = E softmax(nu h)_eps on a frozen inner rule -- "
    "1-D Phi products at nu = inf, closed form at L = 2, (L-1)-D Gauss-Hermite at finite nu -- whose error is "
    "included; weighted teacher measure W = L p_1; ibp and direct updates; E_BO = 1 - q_v (1 - E_B^max(q_k))). "
    "Checked at L = 2 (nu = inf and 2): direct = ibp within the integration error, E_B^max against the nu = inf "
    "closed form 1/2 - arcsin(q)/pi, SE against GAMP on data at D = 1000, alpha in {2, 4, 10}, the alpha -> inf "
    "limit; L = 3 (nu = inf and 2) against GAMP at alpha = 4 only. Not checked: L >= 3 elsewhere, variable "
    "length, large finite nu (the inner rule sharpens with nu sqrt(V_k); its error is reported), finite-D "
    "posterior sampling, a hard-phase scan (docs/slr.md §11, §17.4)."
)


def _sym_vec(name, L, **kw):
    return sp.symbols(f"{name}_1:{int(L) + 1}", **kw)


def omega_chi(L):
    """Cavity key fields ω^χ_1..ω^χ_L."""
    return _sym_vec("omx", L, real=True)


def omega_z(L):
    """Cavity value fields ω^z_1..ω^z_L."""
    return _sym_vec("omz", L, real=True)


def sample_variables(L):
    """Standard normal integration variables ``(g_1..g_L, h_1..h_L, n)`` of the teacher measure."""
    return (*_sym_vec("g", L, real=True), *_sym_vec("h", L, real=True), n)


def _gauss_density(x, mean, var):
    return sp.exp(-(x - mean) ** 2 / (2 * var)) / sp.sqrt(2 * sp.pi * var)


def channel(L):
    r""":math:`P_{\rm out}(y\mid\chi,z)` of spiked-SLR as a list of its :math:`L` terms
    (``(g_nu, noise density)`` per location, functions of one key field ``h`` and one value ``zz``)."""
    h, zz = sp.symbols("h zz", real=True)
    g_nu = sp.exp(sp.sqrt(nu) * h - nu / 2)  # §3.2
    noise = _gauss_density(y, zz, Delta ** 2)  # §3.1
    return h, zz, g_nu, noise


@lru_cache(maxsize=None)
def _gaussian_integral_rule():
    r""":math:`\int_{\mathbb R}e^{-ax^2+bx}dx` for :math:`a>0`, derived once by SymPy (symbolic ``a, b``)."""
    x = sp.Symbol("x", real=True)
    a, b = sp.Symbol("a", positive=True), sp.Symbol("b", real=True)
    return a, b, sp.simplify(sp.integrate(sp.exp(-a * x ** 2 + b * x), (x, -sp.oo, sp.oo), conds="none"))


def _integrate_gaussian(expr, x):
    """∫ expr dx over R for expr = (x-free factor) · exp(quadratic in x), by the derived rule."""
    a, b, rule = _gaussian_integral_rule()
    expr = sp.powsimp(sp.expand(expr), combine="exp")
    factors = sp.Mul.make_args(expr)
    expo = sp.expand(sp.Add(*[f.exp for f in factors if isinstance(f, sp.exp)]))
    rest = sp.Mul(*[f for f in factors if not isinstance(f, sp.exp)])
    if rest.has(x):
        raise ValueError("prefactor depends on the integration variable")
    poly = sp.Poly(expo, x)
    if poly.degree() != 2:
        raise ValueError("exponent is not quadratic in the integration variable")
    c2, c1, c0 = (poly.coeff_monomial(x ** k) for k in (2, 1, 0))
    return rest * sp.exp(c0) * rule.subs({a: -c2, b: c1})


@lru_cache(maxsize=None)
def _smoothed_pieces():
    """Gaussian smoothing of the two factors of one channel term, by Gaussian integration (§11)."""
    h, zz, g_nu, noise = channel(1)
    w = sp.Symbol("w", real=True)
    key = _integrate_gaussian(_gauss_density(h, w, V_k) * g_nu, h)
    val = _integrate_gaussian(_gauss_density(zz, w, V_v) * noise, zz)
    return w, _tidy(key), _tidy(val)


def _tidy(expr):
    """exp(rational exponent) · prefactor with the exponent factored (no cancellation near q → 1)."""
    expr = sp.powsimp(sp.simplify(expr), combine="exp")
    factors = sp.Mul.make_args(expr)
    expo = sp.Add(*[f.exp for f in factors if isinstance(f, sp.exp)])
    rest = sp.Mul(*[f for f in factors if not isinstance(f, sp.exp)])
    return sp.simplify(rest) * sp.exp(sp.factor(sp.together(expo)))


def output_partition(L, nishimori: bool = True):
    r""":math:`Z_{\rm out}=\frac1L\sum_\varepsilon \mathbb E_h[g_\nu(\varepsilon,h)]\,\mathbb E_z\mathcal N(y;z_\varepsilon,\Delta^2)`
    (coordinates other than :math:`\varepsilon` integrate to one), derived by Gaussian integration.

    With ``nishimori=True`` the variances are :math:`V_b=1-q_b`.
    """
    w, key, val = _smoothed_pieces()
    ox, oz = omega_chi(L), omega_z(L)
    terms = [key.subs(w, ox[e]) * val.subs(w, oz[e]) / L for e in range(L)]
    Z = sp.Add(*terms)
    if nishimori:
        Z = Z.subs({V_k: 1 - q_k, V_v: 1 - q_v})
    return Z


def log_terms(L, nishimori: bool = True):
    r"""The logs :math:`A_\varepsilon` of the terms of :math:`Z_{\rm out}=\sum_\varepsilon e^{A_\varepsilon}`."""
    Z = output_partition(L, nishimori)
    return [sp.expand_log(sp.log(t), force=True) for t in sp.Add.make_args(Z)] if L > 1 else \
        [sp.expand_log(sp.log(Z), force=True)]


def _ordered_log_terms(L, nishimori=True):
    """log terms ordered by location (term ε contains ω^χ_ε)."""
    A = log_terms(L, nishimori)
    ox = omega_chi(L)
    return [next(a for a in A if a.has(ox[e])) for e in range(L)]


def _log_Z_shifted(L, nishimori=True):
    A = _ordered_log_terms(L, nishimori)
    return M + sp.log(sp.Add(*[sp.exp(a - M) for a in A]))


def teacher_measure_shift(L):
    r"""Check that :math:`\mathcal N(\omega;0,q_kI)\,e^{\sqrt\nu\omega_1-\nu q_k/2}=\mathcal N(\omega;\sqrt\nu q_ke_1,q_kI)`
    (the key part of :math:`Z_{\rm out}` at :math:`V_k=1-q_k` tilts the prior of the cavity field into
    a shifted Gaussian).  Returns the simplified ratio (1 when the identity holds)."""
    x = sp.Symbol("x", real=True)
    w, key, _ = _smoothed_pieces()
    tilt = key.subs({w: x, V_k: 1 - q_k})
    ratio = _gauss_density(x, 0, q_k) * tilt / _gauss_density(x, sp.sqrt(nu) * q_k, q_k)
    return sp.exp(sp.simplify(sp.expand(sp.expand_log(sp.log(ratio), force=True))))


def _S():
    return 1 - q_v + Delta ** 2


def sample_map(L):
    r"""The teacher measure at location :math:`\varepsilon^*=1` as a map of standard normals:
    :math:`\omega^\chi_\ell=\sqrt{q_k}g_\ell+\sqrt\nu q_k\delta_{\ell1}`,
    :math:`\omega^z_\ell=\sqrt{q_v}h_\ell`, :math:`y=\omega^z_1+\sqrt{S}\,n`, :math:`S=1-q_v+\Delta^2`.

    The variance of :math:`y` given :math:`\omega^z` is the :math:`V_v+\Delta^2` of
    :func:`output_partition` at :math:`V_v=1-q_v`."""
    var = sample_variables(L)
    g, h = var[:L], var[L:2 * L]
    ox, oz = omega_chi(L), omega_z(L)
    sub = {ox[l]: sp.sqrt(q_k) * g[l] + (sp.sqrt(nu) * q_k if l == 0 else 0) for l in range(L)}
    sub.update({oz[l]: sp.sqrt(q_v) * h[l] for l in range(L)})
    sub[y] = sp.sqrt(q_v) * h[0] + sp.sqrt(_S()) * n
    return sub


@lru_cache(maxsize=None)
def prior_free_entropy():
    r""":math:`\psi_P(\hat q)=\mathbb E_{w^*,\xi}\log Z_P(\sqrt{\hat q}\xi+\hat qw^*,\hat q)`,
    :math:`Z_P(B,A)=\int\mathcal N(w;0,1)e^{Bw-Aw^2/2}dw`, derived (standard Gaussian prior)."""
    w, B, A = sp.Symbol("w", real=True), sp.Symbol("B", real=True), sp.Symbol("A", positive=True)
    ZP = sp.simplify(_integrate_gaussian(_gauss_density(w, 0, 1) * sp.exp(B * w - A * w ** 2 / 2), w))
    logZ = sp.expand(sp.expand_log(sp.log(ZP), force=True))
    xi, ws = sp.symbols("xi wstar", real=True)
    lz = sp.expand(logZ.subs({B: sp.sqrt(qhat) * xi + qhat * ws, A: qhat}))
    return sp.simplify(wick_expectation(lz, (xi, ws)))


def rs_free_entropy(psi_out_k=None):
    r"""Prior part of the RS free entropy,
    :math:`\sum_b[-q_b\hat q_b/2+\psi_P(\hat q_b)]`; the channel part :math:`\alpha\Psi_{\rm out}` is the
    expectation of ``kernels()``'s ``log_Z`` output (added numerically)."""
    psi = prior_free_entropy()
    return sum(-qb * qh / 2 + psi.subs(qhat, qh) for qb, qh in ((q_k, qhat_k), (q_v, qhat_v)))


@lru_cache(maxsize=None)
def prior_update():
    r"""Solve :math:`\partial\Phi/\partial\hat q=0` for :math:`q`: :math:`q=\hat q/(1+\hat q)` (derived)."""
    phi = -q * qhat / 2 + prior_free_entropy()
    (sol,) = sp.solve(sp.diff(phi, qhat), q)
    return sp.simplify(sol)


def channel_functions(L, nishimori: bool = False):
    r""":math:`g^\chi_\ell=\partial_{\omega^\chi_\ell}\log Z_{\rm out}`, :math:`g^z_\ell=\partial_{\omega^z_\ell}\log Z_{\rm out}`
    and their diagonal derivatives :math:`\partial g^\chi_\ell/\partial\omega^\chi_\ell`,
    :math:`\partial g^z_\ell/\partial\omega^z_\ell`, at general variances :math:`(V_k,V_v)` (GAMP) or
    Nishimori ones.  Returns four lists of length ``L`` in the symbols ``y, omx_*, omz_*, V_*, nu,
    Delta, M``."""
    lz = _log_Z_shifted(L, nishimori)
    ox, oz = omega_chi(L), omega_z(L)
    gx = [sp.diff(lz, o) for o in ox]
    gz = [sp.diff(lz, o) for o in oz]
    dgx = [sp.diff(gx[l], ox[l]) for l in range(L)]
    dgz = [sp.diff(gz[l], oz[l]) for l in range(L)]
    return gx, gz, dgx, dgz


def stationarity(L, form: str = "ibp"):
    r"""Integrands of :math:`\hat q_k/\alpha` and :math:`\hat q_v/\alpha` over the sample variables.

    ``form="direct"``: :math:`2\,d\log Z_{\rm out}(\text{sample}(q);q)/dq_b`, the derivative of the
    channel free entropy under the expectation (sample map of :func:`sample_map` included).
    ``form="ibp"``: :math:`\sum_\ell(\partial_{\omega_\ell}\log Z_{\rm out})^2` at the sample.
    Returns ``(integrand_k, integrand_v)`` in the sample variables, ``q_k, q_v, nu, Delta, M``.
    """
    sub = sample_map(L)
    lz = _log_Z_shifted(L, True)
    if form == "direct":
        lz_s = lz.subs(sub)
        return 2 * sp.diff(lz_s, q_k), 2 * sp.diff(lz_s, q_v)
    if form == "ibp":
        gx, gz, _, _ = channel_functions(L, nishimori=True)
        return (sp.Add(*[g ** 2 for g in gx]).subs(sub), sp.Add(*[g ** 2 for g in gz]).subs(sub))
    raise ValueError(f"unknown form {form!r}; choose 'direct' or 'ibp'")


@lru_cache(maxsize=None)
def test_error():
    r""":math:`E_{BO}=1-q_v(1-E_B)` from the manifold risk :math:`1-2m_vA+q_vB` with :math:`m_v=q_v`
    and :math:`A=B=1-E_B`, :math:`E_B` the population Bayes risk at SNR :math:`\nu q_k` (returned
    second)."""
    e = _pop.risk_on_manifold().subs({_pop.m_v: q_v, _pop.q_v: q_v, _pop.A_sym: 1 - EB, _pop.B_sym: 1 - EB})
    return sp.expand(e), nu * q_k


def kernels(L):
    """Generated kernels for length ``L`` (names prefixed ``bo_L{L}_``):

    - ``log_terms(samples..., q_k, q_v, nu, Delta)`` → :math:`A_1..A_L` at the sample (for M);
    - ``integrands(samples..., q_k, q_v, nu, Delta, M)`` → (log Z, ibp_k, ibp_v, direct_k, direct_v);
    - ``ibp(samples..., q_k, q_v, nu, Delta, M)`` → (ibp_k, ibp_v) only (cheaper: the solver's map);
    - ``gout_terms(y, omx..., omz..., V_k, V_v, nu, Delta)`` → :math:`A_1..A_L` at general variances;
    - ``gout(y, omx..., omz..., V_k, V_v, nu, Delta, M)`` → (g^χ, g^z, ∂g^χ, ∂g^z) flattened.
    """
    L = int(L)
    var = sample_variables(L)
    sub = sample_map(L)
    A = [a.subs(sub) for a in _ordered_log_terms(L, True)]
    lz = _log_Z_shifted(L, True).subs(sub)
    ik, iv = stationarity(L, "ibp")
    dk, dv = stationarity(L, "direct")
    base = [*var, q_k, q_v, nu, Delta]
    ox, oz = omega_chi(L), omega_z(L)
    gargs = [y, *ox, *oz, V_k, V_v, nu, Delta]
    gx, gz, dgx, dgz = channel_functions(L, nishimori=False)
    src = "docs/slr.md §11 (attnlimits.derivations.slr.bayes_optimal)"
    return [
        Kernel(f"bo_L{L}_log_terms", base, A, doc=f"log terms A_eps of Z_out at the teacher sample, L={L}; {src}"),
        Kernel(f"bo_L{L}_integrands", [*base, M], [lz, ik, iv, dk, dv],
               doc=f"log Z_out, ibp and direct integrands of qhat/alpha at the teacher sample, L={L}; {src}"),
        Kernel(f"bo_L{L}_ibp", [*base, M], [ik, iv],
               doc=f"ibp integrands of qhat/alpha at the teacher sample (the solver's map), L={L}; {src}"),
        Kernel(f"bo_L{L}_gout_terms", gargs, _ordered_log_terms(L, False),
               doc=f"log terms of Z_out at general variances V_k, V_v, L={L}; {src}"),
        Kernel(f"bo_L{L}_gout", [*gargs, M], [*gx, *gz, *dgx, *dgz],
               doc=f"g_out (key, value) and diagonal derivatives at general variances, L={L}; {src}"),
    ]


def common_kernels():
    """Kernels shared by every length: prior update, prior free entropy, test error."""
    eb_expr, snr = test_error()
    return [
        Kernel("bo_prior_update", [qhat], [prior_update()], doc="q = qhat/(1+qhat) from dPhi/dqhat = 0 (§11)"),
        Kernel("bo_prior_phi", [q_k, qhat_k, q_v, qhat_v], [rs_free_entropy()],
               doc="prior part of the RS free entropy: sum_b -q_b qhat_b/2 + psi_P(qhat_b)"),
        Kernel("bo_test_error", [q_k, q_v, nu, EB], [eb_expr, snr],
               doc="E_BO = 1 - q_v (1 - E_B(nu q_k)) and the SNR nu q_k at which E_B is evaluated (§11)"),
    ]


@lru_cache(maxsize=None)
def module_source(lengths: tuple) -> str:
    """NumPy module text with :func:`common_kernels` and :func:`kernels` for each ``L`` in ``lengths``.

    Loaded by :func:`attnlimits.numeric.slr.bo_state_evolution.load_bo_module` (via :func:`attnlimits.symbolic.codegen.load_module`)."""
    ks = common_kernels()
    for L in sorted({int(v) for v in lengths}):
        if L < 1:
            raise ValueError(f"sequence length must be >= 1, got {L}")
        ks += kernels(L)
    mb = ModuleBuilder("Bayes-optimal state evolution of spiked-SLR (generated)", "numpy",
                       expression_hash(*[o for k in ks for o in k.outputs]),
                       description="RS free entropy, stationarity and g_out kernels; docs/slr.md §11.")
    for k in ks:
        mb.add_kernel(k)
    return mb.source()


# =====================================================================================================
# Max-SLR (docs/slr.md §3.3, §11 "Max-SLR")
# =====================================================================================================
#
# In Gaussian-input language the max-SLR law of one sequence is N(X) softmax(nu chi)_eps (uniform prior
# on eps times g_nu = L softmax): the marginal of X is exactly Gaussian for every key, so the channel
#     P_out(y | chi, z) = sum_eps softmax(nu chi)_eps N(y; z_eps, Delta^2)
# is normalised in y and adds no prior term on k (unlike spiked-SLR, whose normalisation
# exp(-nu|k|^2/2D) is a Gaussian factor on k).  The key smoothing
#     p_eps(omega, V) = E_{h ~ N(omega, V I)} softmax(nu h)_eps         (nu = inf: P(argmax h = eps))
# is not a closed form for L >= 3 or finite nu; it is evaluated on a frozen *inner* rule
# p_eps = sum_j w_j pi_eps(omega, V, u_j) whose integrand pi_eps is derived here (max_inner_integrand),
# and every derivative of p is the same rule applied to the derived derivative of pi_eps.

def max_location_symbols(L):
    r"""Symbols for :math:`p_\varepsilon`, :math:`\partial_{\omega^\chi_\ell}p_\varepsilon`,
    :math:`\partial^2_{\omega^\chi_\ell}p_\varepsilon` and :math:`\partial_{V_k}p_\varepsilon`
    (``P_e``, ``dP_e_l``, ``ddP_e_l``, ``dVP_e``), the inputs through which the outer kernels see
    the inner rule."""
    L = int(L)
    P = [sp.Symbol(f"P_{e + 1}", nonnegative=True) for e in range(L)]
    dP = [[sp.Symbol(f"dP_{e + 1}_{l + 1}", real=True) for l in range(L)] for e in range(L)]
    ddP = [[sp.Symbol(f"ddP_{e + 1}_{l + 1}", real=True) for l in range(L)] for e in range(L)]
    dVP = [sp.Symbol(f"dVP_{e + 1}", real=True) for e in range(L)]
    return P, dP, ddP, dVP


def max_channel(L):
    r""":math:`P_{\rm out}(y\mid\chi,z)=\sum_\varepsilon\mathrm{softmax}(\nu\chi)_\varepsilon\,\mathcal N(y;z_\varepsilon,\Delta^2)`
    of max-SLR (§3.3 in Gaussian-input language): returns ``(chi, zz, terms)``."""
    L = int(L)
    chi = _sym_vec("chi", L, real=True)
    zz = _sym_vec("zz", L, real=True)
    den = sp.Add(*[sp.exp(nu * c) for c in chi])
    terms = [sp.exp(nu * chi[e]) / den * _gauss_density(y, zz[e], Delta ** 2) for e in range(L)]
    return chi, zz, terms


def max_channel_normalisation(L):
    r""":math:`\int P_{\rm out}\,dy` (derived; equals 1: the channel is normalised and the max-SLR law
    adds no prior precision on :math:`k`)."""
    chi, zz, terms = max_channel(L)
    tot = sp.Add(*[sp.Mul(*[f for f in sp.Mul.make_args(t) if not f.has(y)])
                   * sp.integrate(sp.Mul(*[f for f in sp.Mul.make_args(t) if f.has(y)]), (y, -sp.oo, sp.oo), conds="none")
                   for t in terms])
    return sp.simplify(tot)


def helmert_basis(L):
    r"""Orthonormal basis :math:`U\in\mathbb R^{L\times(L-1)}` of :math:`\mathbf 1^\perp` (Helmert), exact.

    Softmax is shift invariant, so for :math:`\xi\sim\mathcal N(0,I_L)`
    :math:`\mathrm{softmax}(\nu(\omega+\sqrt V\xi))=\mathrm{softmax}(\nu(\omega+\sqrt V\,UU^\top\xi))` and
    :math:`U^\top\xi\sim\mathcal N(0,I_{L-1})`: the finite-ν key smoothing is an :math:`(L-1)`-dimensional
    Gaussian expectation."""
    L = int(L)
    cols = []
    for j in range(1, L):
        c = [sp.Integer(1)] * j + [sp.Integer(-j)] + [sp.Integer(0)] * (L - j - 1)
        nrm = sp.sqrt(sp.Integer(j * (j + 1)))
        cols.append([x / nrm for x in c])
    return sp.Matrix(L, L - 1, lambda i, j: cols[j][i]) if L > 1 else sp.zeros(1, 0)


def inner_variables(L, finite: bool):
    """Inner-rule variables: ``u_1..u_{L-1}`` (finite ν) or one ``u`` (ν = ∞); none for L = 1."""
    L = int(L)
    if L == 1:
        return ()
    if finite:
        return _sym_vec("u", L - 1, real=True)
    if L == 2:
        return ()  # closed form (max_argmax_probability_L2)
    return (sp.Symbol("u", real=True),)


@lru_cache(maxsize=None)
def max_argmax_probability_L2():
    r"""Derived closed form of :math:`P(\arg\max h=1)` for :math:`h\sim\mathcal N(\omega,V I_2)`:
    the density of :math:`x=h_1-h_2` is the Gaussian convolution
    :math:`\int\mathcal N(t;\omega_1,V)\mathcal N(t-x;\omega_2,V)dt` (derived rule), integrated over
    :math:`x>0`; :math:`=\Phi((\omega_1-\omega_2)/\sqrt{2V})`, returned with ``ndtr``."""
    from attnlimits.symbolic.functions import ndtr

    t, x = sp.symbols("t x", real=True)
    w1, w2 = sp.symbols("w1 w2", real=True)
    dens = _tidy(_integrate_gaussian(_gauss_density(t, w1, V_k) * _gauss_density(t - x, w2, V_k), t))
    prob = sp.simplify(sp.integrate(dens, (x, 0, sp.oo), conds="none"))
    # identify prob = (1 + erf(a))/2 = ndtr(sqrt(2) a): read off the erf argument
    erfs = list(prob.atoms(sp.erf))
    if len(erfs) != 1:
        raise RuntimeError(f"unexpected form of P(h1 > h2): {prob}")
    a = erfs[0].args[0]
    closed = ndtr(sp.sqrt(2) * a)
    if sp.simplify(sp.expand(prob - closed.rewrite(sp.erf))) != 0:
        raise RuntimeError(f"P(h1 > h2) = {prob} is not (1 + erf(a))/2")
    return w1, w2, sp.simplify(closed)


def max_inner_integrand(L, finite: bool):
    r"""Integrands :math:`\pi_\varepsilon(\omega,V_k,u)` with :math:`p_\varepsilon=\mathbb E_u\pi_\varepsilon`.

    - finite ν: :math:`\pi_\varepsilon=\mathrm{softmax}(\nu(\omega+\sqrt{V_k}Uu))_\varepsilon`,
      :math:`u\sim\mathcal N(0,I_{L-1})`, :math:`U` = :func:`helmert_basis`;
    - ν = ∞: :math:`P(\arg\max h=\varepsilon)=\int\mathcal N(t;\omega_\varepsilon,V_k)\prod_{\ell\ne\varepsilon}
      \Phi((t-\omega_\ell)/\sqrt{V_k})dt` (the other coordinates below :math:`t`), with
      :math:`t=\omega_\varepsilon+\sqrt{V_k}u`: :math:`\pi_\varepsilon=\prod_{\ell\ne\varepsilon}
      \Phi((\omega_\varepsilon-\omega_\ell)/\sqrt{V_k}+u)`, :math:`u\sim\mathcal N(0,1)`; at :math:`L=2`
      the closed form :func:`max_argmax_probability_L2` (no inner variable).
    """
    from attnlimits.symbolic.functions import ndtr

    L = int(L)
    ox = omega_chi(L)
    if L == 1:
        return [sp.Integer(1)]
    uu = inner_variables(L, finite)
    if finite:
        U = helmert_basis(L)
        h = [ox[l] + sp.sqrt(V_k) * sum(U[l, j] * uu[j] for j in range(L - 1)) for l in range(L)]
        # softmax_eps = 1 / sum_l exp(nu (h_l - h_eps)), written with the other locations only
        return [1 / (1 + sp.Add(*[sp.exp(nu * (h[l] - h[e])) for l in range(L) if l != e])) for e in range(L)]
    if L == 2:
        w1, w2, closed = max_argmax_probability_L2()
        return [closed.subs({w1: ox[0], w2: ox[1]}, simultaneous=True),
                closed.subs({w1: ox[1], w2: ox[0]}, simultaneous=True)]
    (u,) = uu
    return [sp.Mul(*[ndtr((ox[e] - ox[l]) / sp.sqrt(V_k) + u) for l in range(L) if l != e]) for e in range(L)]


def max_inner_outputs(L, finite: bool):
    r""":math:`\pi_\varepsilon`, :math:`\partial_{\omega_\ell}\pi_\varepsilon` (all :math:`\varepsilon,\ell`),
    :math:`\partial^2_{\omega_\ell}\pi_\varepsilon` and :math:`\partial_{V_k}\pi_\varepsilon`, flattened in the
    order of :func:`max_location_symbols` (P, dP row-major, ddP row-major, dVP)."""
    L = int(L)
    ox = omega_chi(L)
    pi = max_inner_integrand(L, finite)
    d1 = [[sp.diff(pi[e], ox[l]) for l in range(L)] for e in range(L)]
    d2 = [[sp.diff(d1[e][l], ox[l]) for l in range(L)] for e in range(L)]
    dv = [sp.diff(pi[e], V_k) for e in range(L)]
    return [*pi, *[x for r in d1 for x in r], *[x for r in d2 for x in r], *dv]


def max_scaled_symbols(L):
    r"""Scaled location symbols seen by the channel part: with :math:`E_\varepsilon=e^{B_\varepsilon-M}`,
    :math:`B_\varepsilon=\log\mathcal N(y;\omega^z_\varepsilon,V_v+\Delta^2)` (:func:`max_value_logdens`)
    and any shift :math:`M`, ``t_e`` :math:`=p_\varepsilon E_\varepsilon`, ``u_e_l``
    :math:`=\partial_\ell p_\varepsilon E_\varepsilon`, ``uu_e_l`` :math:`=\partial^2_\ell p_\varepsilon E_\varepsilon`,
    ``s_e`` :math:`=\partial_Vp_\varepsilon E_\varepsilon`.  With :math:`M=\log Z_{\rm out}` (numeric:
    log-sum-exp of :func:`max_log_terms`) ``t`` is the posterior of the location, in :math:`[0,1]`, and
    no exponential is formed inside the kernels (their products would overflow where
    :math:`p_\varepsilon` underflows)."""
    L = int(L)
    t = [sp.Symbol(f"t_{e + 1}", nonnegative=True) for e in range(L)]
    u = [[sp.Symbol(f"u_{e + 1}_{l + 1}", real=True) for l in range(L)] for e in range(L)]
    uu = [[sp.Symbol(f"uu_{e + 1}_{l + 1}", real=True) for l in range(L)] for e in range(L)]
    sv = [sp.Symbol(f"s_{e + 1}", real=True) for e in range(L)]
    return t, u, uu, sv


def _max_functions(L, name="p"):
    """p_eps as undefined functions of (omx, V_k) (``name`` distinguishes the weight's copy), and the
    replacement of them and their derivatives by the plain symbols of :func:`max_location_symbols`."""
    L = int(L)
    ox = omega_chi(L)
    fs = [sp.Function(f"{name}{e + 1}")(*ox, V_k) for e in range(L)]
    P, dP, ddP, dVP = max_location_symbols(L)
    rep = {}
    for e in range(L):
        for l in range(L):
            rep[sp.Derivative(fs[e], (ox[l], 2))] = ddP[e][l]
            rep[sp.Derivative(fs[e], ox[l])] = dP[e][l]
        rep[sp.Derivative(fs[e], V_k)] = dVP[e]
        rep[fs[e]] = P[e]
    return fs, rep


def _max_scaled_rep(L):
    """Replacement of the channel part's p functions by scaled symbols times exp(-(B_eps - M))."""
    L = int(L)
    ox = omega_chi(L)
    fs, _ = _max_functions(L)
    t, u, uu, sv = max_scaled_symbols(L)
    B = max_value_logdens(L)
    rep = {}
    for e in range(L):
        inv = sp.exp(-(B[e] - M))
        for l in range(L):
            rep[sp.Derivative(fs[e], (ox[l], 2))] = uu[e][l] * inv
            rep[sp.Derivative(fs[e], ox[l])] = u[e][l] * inv
        rep[sp.Derivative(fs[e], V_k)] = sv[e] * inv
        rep[fs[e]] = t[e] * inv
    return rep


def _replace(expr, rep):
    # derivatives first (they contain the function objects); then cancel exp(B - M) exp(-(B - M))
    ders = {k: v for k, v in rep.items() if isinstance(k, sp.Derivative)}
    out = expr.xreplace(ders).xreplace({k: v for k, v in rep.items() if not isinstance(k, sp.Derivative)})
    return sp.powsimp(out, combine="exp")


def _check_no_exp(exprs):
    for e in exprs:
        if any(a.has(M) for a in e.atoms(sp.exp)):
            raise RuntimeError("a scaled max-SLR kernel still contains exp(.. M ..): the scaling did not cancel")
    return exprs


def max_output_partition(L):
    r""":math:`Z_{\rm out}=\sum_\varepsilon p_\varepsilon(\omega^\chi;V_k)\,\mathcal N(y;\omega^z_\varepsilon,V_v+\Delta^2)`
    with :math:`p_\varepsilon` an undefined function (the value part by the derived Gaussian rule of
    :func:`output_partition`).  Returns ``(Z, functions)``."""
    w, _, val = _smoothed_pieces()
    fs, _ = _max_functions(L)
    oz = omega_z(L)
    return sp.Add(*[fs[e] * val.subs(w, oz[e]) for e in range(int(L))]), fs


def max_value_logdens(L):
    r""":math:`B_\varepsilon=\log\mathcal N(y;\omega^z_\varepsilon,V_v+\Delta^2)` per location (derived value part)."""
    w, _, val = _smoothed_pieces()
    oz = omega_z(L)
    return [sp.expand(sp.expand_log(sp.log(val.subs(w, oz[e])), force=True)) for e in range(int(L))]


def max_log_terms(L):
    r"""Logs of the terms of :math:`Z_{\rm out}`: :math:`\log P_\varepsilon+B_\varepsilon` (in the symbols
    ``P_e``; numeric floors P before the log and takes their log-sum-exp as the shift :math:`M`)."""
    P, _, _, _ = max_location_symbols(L)
    return [sp.log(P[e]) + b for e, b in enumerate(max_value_logdens(L))]


def _max_log_Z(L):
    """log Z_out = M + log sum_eps p_eps exp(B_eps - M) with p_eps functions (M constant)."""
    fs, _ = _max_functions(L)
    B = max_value_logdens(L)
    return M + sp.log(sp.Add(*[fs[e] * sp.exp(B[e] - M) for e in range(int(L))])), fs


def max_channel_functions(L):
    r""":math:`g^\chi_\ell,g^z_\ell` and :math:`\partial_{\omega^\chi_\ell}g^\chi_\ell,\partial_{\omega^z_\ell}g^z_\ell`
    of max-SLR at general variances, derived by differentiating :math:`\log Z_{\rm out}`, in the symbols
    ``y, omz, V_v, Delta`` and the scaled ones of :func:`max_scaled_symbols` (``t``, ``u``, ``uu``):
    e.g. :math:`g^\chi_\ell=\sum_\varepsilon u_{\varepsilon\ell}/\sum_\varepsilon t_\varepsilon`."""
    L = int(L)
    lz, fs = _max_log_Z(L)
    rep = _max_scaled_rep(L)
    ox, oz = omega_chi(L), omega_z(L)
    gx = [sp.diff(lz, o) for o in ox]
    gz = [sp.diff(lz, o) for o in oz]
    dgx = [sp.diff(gx[l], ox[l]) for l in range(L)]
    dgz = [sp.diff(gz[l], oz[l]) for l in range(L)]
    return [_check_no_exp([sp.simplify(_replace(e, rep)) for e in grp]) for grp in (gx, gz, dgx, dgz)]


def max_sample_map(L):
    r"""Teacher measure of max-SLR at Nishimori (:math:`V_b=1-q_b`), written with a weight.

    :math:`\omega^\chi\sim\mathcal N(0,q_kI)` and, given it, the true key field is
    :math:`\chi^*\sim\mathcal N(\omega^\chi,(1-q_k)I)`, so :math:`P(\varepsilon^*=\varepsilon\mid\omega^\chi)
    =p_\varepsilon(\omega^\chi;1-q_k)` (the Gaussian smoothing of :math:`Z_{\rm out}` is this conditional
    law).  By exchangeability, :math:`\mathbb E[F]=\mathbb E_{g,h,n}[W\,F|_{\varepsilon^*=1}]` with
    :math:`W=L\,p_1(\sqrt{q_k}g;1-q_k)`, :math:`\omega^\chi=\sqrt{q_k}g`, :math:`\omega^z=\sqrt{q_v}h`,
    :math:`y=\omega^z_1+\sqrt S n`.  The map is that of :func:`sample_map` at :math:`\nu=0` (no shift),
    plus the Nishimori variances."""
    sub = sample_map(L)
    sub = {k: v.subs(nu, 0) for k, v in sub.items()}
    sub.update({V_k: 1 - q_k, V_v: 1 - q_v})
    return sub


def max_weight(L):
    """The teacher weight W = L p_1, as a separate function object (its own, unscaled symbols ``P_1``...)."""
    fw, _ = _max_functions(L, "pw")
    return int(L) * fw[0]


def _weight_rep(L):
    _, rep = _max_functions(L, "pw")
    return rep


def max_stationarity(L, form: str = "ibp"):
    r"""Integrands of :math:`\hat q_k/\alpha`, :math:`\hat q_v/\alpha` for max-SLR over ``(g, h, n)``, weight included.

    ``"ibp"``: :math:`W\sum_\ell(g^\chi_\ell)^2` and :math:`W\sum_\ell(g^z_\ell)^2`
    (:math:`\hat q=\alpha\mathbb E[g_{\rm out}^2]`, normalised channel);
    ``"direct"``: :math:`2\,d[W\log Z_{\rm out}]/dq_b` along :func:`max_sample_map` (total derivative,
    weight included).  Also returns the free-entropy integrand :math:`W\log Z_{\rm out}` third.
    In the sample variables, ``q_k, q_v, Delta, M``, the weight's symbols ``P_1, dP_1_l, dVP_1`` and the
    scaled channel symbols ``t, u, s`` (all at :math:`\omega^\chi=\sqrt{q_k}g`, :math:`V_k=1-q_k`).
    """
    L = int(L)
    lz, fs = _max_log_Z(L)
    rep = {**_max_scaled_rep(L), **_weight_rep(L)}
    W = max_weight(L)
    sub = max_sample_map(L)
    ox, oz = omega_chi(L), omega_z(L)
    F = W * lz

    def fin(e):
        return _check_no_exp([sp.simplify(_replace(e, rep))])[0].subs(sub)

    if form == "ibp":
        gx, gz, _, _ = max_channel_functions(L)
        Wr = _replace(W, rep)
        ik = (Wr * sp.Add(*[g ** 2 for g in gx])).subs(sub)
        iv = (Wr * sp.Add(*[g ** 2 for g in gz])).subs(sub)
        return ik, iv, fin(F)
    if form == "direct":
        out = []
        for qb in (q_k, q_v):
            tot = 0
            for x in (*ox, *oz, y, V_k, V_v):
                dxdq = sp.diff(sub[x], qb)
                if dxdq != 0:
                    tot += sp.diff(F, x) * dxdq
            out.append(2 * fin(tot))
        return out[0], out[1], fin(F)
    raise ValueError(f"unknown form {form!r}; choose 'direct' or 'ibp'")


@lru_cache(maxsize=None)
def max_test_error():
    r"""BO test error of max-SLR: :math:`E_{BO}=1-2q_vA+q_vB` (manifold risk §6.2 at :math:`m_v=q_v`).

    The posterior of the fields of a fresh sequence is :math:`\chi\sim\mathcal N(\hat\chi,V_kI)`,
    :math:`z\sim\mathcal N(\hat z,V_vI)`, independent, so the BO predictor is
    :math:`\hat y=\sum_\varepsilon p_\varepsilon(\hat\chi;V_k)\hat z_\varepsilon` (smoothed location weights;
    not a softmax).  With :math:`\hat\chi=q_k\chi^*+\sqrt{q_k-q_k^2}\,\eta`, :math:`\chi^*\mid\hat\chi\sim
    \mathcal N(\hat\chi,1-q_k)` and :math:`p(\hat\chi;1-q_k)` is the exact posterior of
    :math:`\varepsilon^*` given :math:`\hat\chi`: :math:`A=\mathbb E[p_{\varepsilon^*}]=B=\mathbb E\|p\|^2`
    (Nishimori), so :math:`E_{BO}=1-q_v(1-E^{\max}_B(q_k))`, :math:`E^{\max}_B(q_k)=1-\mathbb E\|p\|^2` the
    Bayes risk of the location from :math:`\hat\chi` — what replaces :math:`E_B^{\rm pop}(\nu q_k)`;
    :math:`E^{\max}_B(1)=E_B^{\rm pop}(\nu)`.  The integrands of A and B over ``g`` are
    :func:`_max_test_integrands` (:math:`Wp_1=Lp_1^2` and :math:`\sum_\varepsilon p_\varepsilon^2`; equal in
    expectation)."""
    e = _pop.risk_on_manifold().subs({_pop.m_v: q_v, _pop.q_v: q_v})
    return sp.expand(e)


def _max_test_integrands(L):
    P, _, _, _ = max_location_symbols(L)
    return int(L) * P[0] ** 2, sp.Add(*[p ** 2 for p in P])


def _flat(rows):
    return [x for r in rows for x in r]


def max_kernels(L):
    r"""Generated max-SLR kernels for length ``L`` (names prefixed ``bomax_L{L}_``):

    - ``inner_fin(omx..., V_k, nu, u_1..u_{L-1})``, ``inner_inf(omx..., V_k[, u])`` → the inner
      integrands (P, dP, ddP, dVP flattened; :func:`max_inner_outputs`), summed by numeric with
      the inner rule's weights;
    - ``fields(samples..., q_k, q_v, Delta)`` → (omx_1..omx_L, V_k) at the teacher sample;
    - ``value_logdens(samples..., q_k, q_v, Delta)`` → :math:`B_\varepsilon` at the teacher sample
      (numeric forms :math:`M` = log-sum-exp of :math:`\log P_\varepsilon+B_\varepsilon` and the scaled
      symbols of :func:`max_scaled_symbols`);
    - ``integrands(samples..., q_k, q_v, Delta, M, P..., dP_1_*, dVP_1, t..., u..., s...)`` →
      (W log Z, ibp_k, ibp_v, direct_k, direct_v, A, B);
    - ``ibp(samples..., q_k, q_v, Delta, P_1, t..., u...)`` → (ibp_k, ibp_v);
    - ``gout_value_logdens(y, omz..., V_v, Delta)`` and
      ``gout(y, omz..., V_v, Delta, t..., u..., uu...)`` → GAMP's channel functions.
    """
    L = int(L)
    var = sample_variables(L)
    sub = max_sample_map(L)
    ox, oz = omega_chi(L), omega_z(L)
    P, dP, ddP, dVP = max_location_symbols(L)
    t, u, uu, sv = max_scaled_symbols(L)
    base = [*var, q_k, q_v, Delta]
    src = "docs/slr.md §11 max-SLR (attnlimits.derivations.slr.bayes_optimal)"
    ik, iv, lzw = max_stationarity(L, "ibp")
    dk, dv, _ = max_stationarity(L, "direct")
    At, Bt = _max_test_integrands(L)
    scaled = [*t, *_flat(u), *sv]
    gx, gz, dgx, dgz = max_channel_functions(L)
    Bv = max_value_logdens(L)
    return [
        Kernel(f"bomax_L{L}_inner_fin", [*ox, V_k, nu, *inner_variables(L, True)], max_inner_outputs(L, True),
               doc=f"inner integrands of p_eps = E softmax(nu h)_eps and derivatives, finite nu, L={L}; {src}"),
        Kernel(f"bomax_L{L}_inner_inf", [*ox, V_k, *inner_variables(L, False)], max_inner_outputs(L, False),
               doc=f"inner integrands of p_eps = P(argmax h = eps) and derivatives, nu = inf, L={L}; {src}"),
        Kernel(f"bomax_L{L}_fields", base, [*[sub[o] for o in ox], sub[V_k]],
               doc=f"cavity key fields and V_k at the teacher sample, L={L}; {src}"),
        Kernel(f"bomax_L{L}_value_logdens", base, [b.subs(sub) for b in Bv],
               doc=f"B_eps = log N(y; omz_eps, V_v + Delta^2) at the teacher sample, L={L}; {src}"),
        Kernel(f"bomax_L{L}_integrands", [*base, M, *P, *dP[0], dVP[0], *scaled], [lzw, ik, iv, dk, dv, At, Bt],
               doc=f"W log Z_out, ibp and direct integrands of qhat/alpha, test-error A and B, L={L}; {src}"),
        Kernel(f"bomax_L{L}_ibp", [*base, P[0], *t, *_flat(u)], [ik, iv],
               doc=f"ibp integrands of qhat/alpha (the solver's map), L={L}; {src}"),
        Kernel(f"bomax_L{L}_gout_value_logdens", [y, *oz, V_v, Delta], Bv,
               doc=f"B_eps = log N(y; omz_eps, V_v + Delta^2) at general variances, L={L}; {src}"),
        Kernel(f"bomax_L{L}_gout", [y, *oz, V_v, Delta, *t, *_flat(u), *_flat(uu)], [*gx, *gz, *dgx, *dgz],
               doc=f"g_out (key, value) and diagonal derivatives at general variances, L={L}; {src}"),
    ]


@lru_cache(maxsize=None)
def max_module_source(lengths: tuple) -> str:
    """NumPy module text of the max-SLR BO kernels (:func:`max_kernels` per L, the prior kernels and
    ``bomax_test_error(q_v, A, B)``)."""
    ks = [k for k in common_kernels() if k.name in ("bo_prior_update", "bo_prior_phi")]
    ks.append(Kernel("bomax_test_error", [q_v, _pop.A_sym, _pop.B_sym], [max_test_error()],
                     doc="E_BO = 1 - 2 q_v A + q_v B (manifold risk at m_v = q_v; A = B by Nishimori), §11 max-SLR"))
    for L in sorted({int(v) for v in lengths}):
        if L < 1:
            raise ValueError(f"sequence length must be >= 1, got {L}")
        ks += max_kernels(L)
    mb = ModuleBuilder("Bayes-optimal state evolution of max-SLR (generated)", "numpy",
                       expression_hash(*[o for k in ks for o in k.outputs]),
                       description="inner key-smoothing integrands, RS stationarity and g_out kernels; "
                                   "docs/slr.md §11 (max-SLR).")
    for k in ks:
        mb.add_kernel(k)
    return mb.source()
