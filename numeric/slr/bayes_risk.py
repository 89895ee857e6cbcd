r"""Bayes risk of single-location regression and the [M] formulas, evaluated numerically.

Every integrand is a kernel generated (NumPy/SciPy or mpmath, by :mod:`attnlimits.symbolic.codegen`) from the
SymPy expressions of :mod:`attnlimits.derivations.slr.bayes` and :mod:`attnlimits.derivations.slr.predecessor`; the
kernels arrive as an argument, ``kernels=`` — the SLR bundle
:func:`attnlimits.derivations.slr.kernels.slr_kernels` — and no formula is retyped here (this module never
imports a derivation).  Name-only wrappers with the same call forms are in :mod:`attnlimits.verify.slr`.
Spec ``docs/slr.md`` §7 (quadratures), §8 (:math:`M_L`, Stein mean), §13 ([M]), claims
C2, C3, C8, C10, C11, C20–C23.

Public API
----------
- :func:`bayes_risk` → :class:`BayesRisk` — :math:`E_B` for ``"spiked"`` / ``"max"``, any ``L``,
  float64 or mpmath at ``dps`` digits, with an error estimate.
- :func:`bayes_risk_varlen` — :math:`\sum_LP(L)E_B(L)` (claim C23).
- :func:`max_stein_mean` — :math:`\mu_L(\nu)=\nu E_B^{\max}(L,\nu)` (claim C8).
- :func:`expected_max_gaussian` — :math:`M_L` (its closed form for small ``L`` is
  ``attnlimits.derivations.slr.bayes.expected_max_exact``).
- :func:`zeta_erf2_value`, :func:`predecessor_manifold_risk`, :func:`predecessor_prop3` — [M].

Methods (:attr:`BayesRisk.method`)
----------------------------------
``"exact"``
    ``L = 1`` (0), ``ν = 0`` (:math:`1-1/L`), max-SLR ``ν = ∞`` (0).
``"quad-1d"`` / ``"mpmath-quad-1d"``
    ``L = 2``: the one-dimensional forms (``attnlimits.derivations.slr.bayes.one_d_form``) by
    ``scipy.integrate.quad`` or ``mpmath.quad``, split at the step and at ±8 widths around it.
``"laplace-lattice"`` / ``"mpmath-laplace-lattice"``
    ``L ≥ 3`` (or ``representation="laplace"``): the u-representation of §7,
    :math:`E_B=\int_{\mathbb R}F(\Phi_k(u))\,du` with :math:`\Phi_k(u)=\mathbb E[K_k(a-u)]`, by the
    trapezoidal rule on a uniform lattice (exponentially convergent: every integrand is analytic
    in a strip of half-width π/2 and decays at both ends).  The sharp step of the inner integrals
    at :math:`a=u` is handled by working in the shifted variable :math:`s=a-u` (the step sits at
    :math:`s=0` for every ``u``) and by subtracting from :math:`K_0(s)=\exp(-e^s)` the smooth step
    :math:`\Phi_{\mathcal N}(-s)`, whose Gaussian average is closed-form; the remainder decays on
    both sides.  Inner nodes :math:`a_j=j\delta` and outer nodes :math:`u_i=ir\delta` share one
    lattice, so every inner sum is a discrete correlation of precomputed Gaussian and kernel
    samples (``numpy.convolve`` in float64, ``mpmath.fdot`` otherwise).  For small logit scales
    (:math:`c<\pi/\sqrt{2A}`) the inner rule is the trapezoid in ``g`` instead.  Steps follow from
    the target digits (:func:`_make_plan`); the error estimate is the difference to an independent,
    coarser design (float64: 1e-20 vs 1e-15; mpmath: 4 digits apart), plus round-off, the
    designed truncation bound and, for mpmath, the rounding to ``dps`` digits.

Nested adaptive quadrature (outer ``quad`` in ``u``, inner ``quad`` split at the step) is kept as
a cross-check, :func:`_bayes_risk_nested_quad`: 0.1–1 s per value in float64, and impractical in
mpmath (over 15 minutes at 15 digits for spiked ``L = 3``, ``ν = 1``), which is why the lattice is
used.
"""
from __future__ import annotations

import math
import numbers
import operator
import warnings
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath
import numpy as np
from scipy import integrate

__all__ = [
    "MODELS",
    "AccuracyWarning",
    "BayesRisk",
    "bayes_risk",
    "bayes_risk_varlen",
    "expected_max_gaussian",
    "max_stein_mean",
    "predecessor_manifold_risk",
    "predecessor_prop3",
    "zeta_erf2_value",
]

MODELS = ("spiked", "max")
_LN10 = math.log(10.0)
_F64_DIGITS = 20  # lattice design in float64 (absolute digits)
_F64_CHECK_DIGITS = 15  # independent coarser design: the difference is the error estimate


class AccuracyWarning(RuntimeWarning):
    """An error estimate exceeds the requested tolerance."""


@dataclass(frozen=True)
class BayesRisk:
    """A Bayes risk with its error estimate.

    Attributes
    ----------
    value : float or mpmath.mpf
        :math:`E_B` (an ``mpf`` of ``dps`` digits when ``dps`` is set).
    error : float
        Estimated absolute error.
    method : str
        ``"exact"``, ``"quad-1d"``, ``"mpmath-quad-1d"``, ``"laplace-lattice"``,
        ``"mpmath-laplace-lattice"`` or ``"mixture"`` (variable length).
    model : str
    nu : float
    L : int or dict
        Sequence length, or the length law ``{L: P(L)}`` for :func:`bayes_risk_varlen`.
    dps : int or None
    """

    value: object
    error: float
    method: str
    model: str
    nu: float
    L: object
    dps: int | None = None
    details: dict = field(default_factory=dict, compare=False, repr=False)

    def __float__(self) -> float:
        return float(self.value)


# ------------------------------------------------------------------------------------------------
# input checks


def _check_inputs(model, nu, Lv, dps, tol):
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; allowed: 'spiked' or 'max'")
    try:
        Lv = operator.index(Lv)
    except TypeError:
        raise ValueError(f"L must be an integer >= 1, got {Lv!r}") from None
    if isinstance(Lv, bool) or Lv < 1:
        raise ValueError(f"L must be an integer >= 1, got {Lv!r}")
    if not isinstance(nu, (numbers.Real, mpmath.mpf)) or isinstance(nu, bool):
        raise ValueError(f"nu must be a real number >= 0 (math.inf allowed for model='max'), got {nu!r}")
    nuf = float(nu)
    if math.isnan(nuf) or nuf < 0:
        raise ValueError(f"nu must be >= 0 (math.inf allowed for model='max'), got {nu!r}")
    if math.isinf(nuf) and model == "spiked":
        raise ValueError("nu = inf is allowed for model='max' only; spiked needs a finite nu >= 0")
    if dps is not None:
        try:
            dps = operator.index(dps)
        except TypeError:
            raise ValueError(f"dps must be None (float64) or an integer >= 1, got {dps!r}") from None
        if dps < 1:
            raise ValueError(f"dps must be None (float64) or an integer >= 1, got {dps!r}")
    if not (isinstance(tol, numbers.Real) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    return Lv, nuf, dps


# ------------------------------------------------------------------------------------------------
# the generated kernels (passed in)


def _slr(kernels):
    """The SLR bundle passed as ``kernels=`` (a clear error when it is missing)."""
    if kernels is None or not hasattr(kernels, "parts") or "bayes_spiked" not in kernels.parts:
        raise TypeError("attnlimits.numeric.slr.bayes_risk evaluates generated kernels: pass kernels=attnlimits.derivations.slr.kernels.slr_kernels() "
                        "(or use attnlimits.verify.slr.theory.SLRTheory, which injects them)")
    return kernels


def _bayes_module(kernels, model: str, backend: str):
    return _slr(kernels)[f"bayes_{model}"].module(backend)


def _one(fn):
    """A one-output kernel as a plain function."""
    return lambda *a: fn(*a)[0]


def _inner_spec(kernels, model, form):
    return _slr(kernels)[f"bayes_{model}"].meta["inner"][form]


def _laws(kernels, model):
    return _slr(kernels)[f"bayes_{model}"].meta["laws"]


def _law_values(mod, model_laws, nu):
    return {law: tuple(getattr(mod, f"law_{law}")(nu)) for law in model_laws}


def _kernel_fn(mod, kind):
    """Kernel of the u-representation in ``s``: ``"D0"`` (remainder of K_0), or k = 0, 1, 2."""
    return _one(getattr(mod, "kernel_D0" if kind == "D0" else f"kernel_K{kind}"))


# ------------------------------------------------------------------------------------------------
# L = 2: one-dimensional forms


def _pieces(step, width, inf, clip):
    """Break points: the step and ±8 widths around it, and the Gaussian bulk (0, ±8), clipped to
    ``[-clip, clip]`` (beyond which the density is negligible), with infinite end pieces."""
    pts = {step - 8 * width, step, step + 8 * width, -8, 0, 8}
    pts = sorted({min(max(p, -clip), clip) for p in pts})
    return [-inf] + pts + [inf]


def _one_d_f64(kernels, model, nu, tol):
    mod = _bayes_module(kernels, model, "numpy")
    f = _one(mod.one_d)
    step, width = mod.one_d_step(nu)
    pts = _pieces(float(step), float(width), np.inf, 40.0)

    def run(epsabs):
        val = err = 0.0
        with np.errstate(over="ignore", under="ignore"), warnings.catch_warnings():
            # QUADPACK's round-off notices are reflected in its error estimate, reported below
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            for lo, hi in zip(pts[:-1], pts[1:]):
                v, e = integrate.quad(f, lo, hi, args=(nu,), epsabs=epsabs, epsrel=1e-14, limit=200)
                val += v
                err += e
        return val, err

    val, err = run(tol / 8)
    if 0 < val < 1e3 * tol:  # small value: ask for relative accuracy too
        val, err = run(1e-14 * val / 8)
    return val, err


def _one_d_mp(kernels, model, nu, dps):
    """mpmath.quad of the L = 2 form; the integrand is divided by the float64 value so that the
    quadrature's absolute target is a relative one (E_B can be as small as 1e-100)."""
    mod = _bayes_module(kernels, model, "mpmath")
    f = _one(mod.one_d)
    scale = _one_d_f64(kernels, model, float(nu), 1e-12)[0]
    scale = scale if scale > 1e-300 else 1.0
    with mpmath.workdps(dps + 10):
        num, inv = mpmath.mpf(nu), 1 / mpmath.mpf(scale)
        step, width = mod.one_d_step(num)
        clip = 2 * math.sqrt(2 * (dps + 10) * _LN10) + 2 * abs(float(step))
        val, err = mpmath.quad(lambda z: f(z, num) * inv, _pieces(step, width, mpmath.inf, clip), error=True)
        val, err = val * scale, err * scale
    with mpmath.workdps(dps):
        val = +val
    return val, float(err) + _rounding(val, dps)


def _rounding(val, dps) -> float:
    """Representation error of a ``dps``-digit result."""
    return abs(float(val)) * 10.0 ** (1 - dps) / 2


# ------------------------------------------------------------------------------------------------
# any L: the u-representation on a lattice


@dataclass
class _Plan:
    regime: str  # "lattice" (shared a/u lattice) or "g-trapezoid" (small logit scale)
    digits: float  # design accuracy (absolute, decimal digits)
    delta: float  # inner step (in a = m + c g for "lattice", in g for "g-trapezoid")
    h: float  # outer step in u
    r: int  # h = r * delta ("lattice")
    i_lo: int
    i_hi: int
    A: float  # tail exponent: truncated tails are below exp(-A)
    T: float  # Gaussian truncation in standard deviations

    @property
    def trunc(self) -> float:
        """Bound on the truncation error of the outer range times the number of factors."""
        return (self.i_hi - self.i_lo + 1) * self.h * math.exp(-self.A)


def _make_plan(Lv, digits, laws, extra=0.0):
    r"""Steps and ranges for an absolute accuracy of about ``10**-digits``.

    Inner trapezoid error :math:`\approx e^{-\pi^2/\delta}` (the kernels are analytic in the
    strip :math:`|\mathrm{Im}\,s|<\pi/2`) → :math:`\delta=\pi^2/A`, :math:`A=\text{digits}\cdot\ln10+3`.
    Outer error, for a product of ``L`` factors each smoothed by a Gaussian of sd ``c``:
    :math:`\exp(-2\pi^2c^2/(Lh^2)-\pi^2/h)` → ``h`` from the quadratic in ``1/h``.  Small
    ``c < π/√(2A)``: the inner rule is the trapezoid in ``g`` with :math:`\delta_g=\pi\sqrt2/\sqrt A`.
    Ranges: Gaussians to :math:`T=\sqrt{2A_t}` sd, exponential tails to :math:`A_t`,
    :math:`A_t=\text{digits}\cdot\ln10+5+\text{extra}`; ``extra`` (nats) widens the ranges when
    :math:`E_B` is tiny and its mass sits far in the tails (:func:`_tail_extension`).  The
    discretisation error is relative to the local size of the integrands (they are positive
    products), so the steps need no such extension.
    """
    A = digits * _LN10 + 3.0
    At = digits * _LN10 + 5.0 + extra
    T = math.sqrt(2 * At)
    sd = max(v[1] for v in laws.values())
    means = [v[0] for v in laws.values()]
    delta_k = math.pi**2 / A
    qa, qb = 2 * math.pi**2 * sd * sd / Lv, math.pi**2
    h = 1.0 / ((-qb + math.sqrt(qb * qb + 4 * qa * A)) / (2 * qa)) if qa > 0 else delta_k
    logA = math.log(At) + 2.0
    u_lo = min(means) - T * sd - logA
    u_hi = max(means) + (T * sd if sd >= T else sd * sd / 2 + At) + logA
    if sd >= math.pi / math.sqrt(2 * A):
        r = max(1, int(h / delta_k))
        hh = r * delta_k
        return _Plan("lattice", digits, delta_k, hh, r, math.floor(u_lo / hh), math.ceil(u_hi / hh), At, T)
    delta_g = math.pi * math.sqrt(2.0) / math.sqrt(A)
    return _Plan("g-trapezoid", digits, delta_g, delta_k, 1, math.floor(u_lo / delta_k),
                 math.ceil(u_hi / delta_k), At, T)


def _tail_extension(kernels, model, nu, Lv) -> float:
    r"""Extra tail exponent (nats): :math:`-\log` of the size of :math:`E_B`, estimated by
    ``attnlimits.derivations.slr.bayes.spiked_asymptotic`` (spiked) or :math:`\log\nu` (max, where
    :math:`E_B\approx M_L/\nu`)."""
    if model == "spiked":
        mod = _bayes_module(kernels, "spiked", "numpy")
        return max(0.0, float(mod.neg_log_asymptotic(nu, Lv)[0])) if nu > 1 else 0.0
    return math.log(max(1.0, nu))


def _kernel_range(kind, plan):
    """Support ``[s_lo, s_hi]`` of a kernel outside which it is below ``exp(-A)``."""
    At, T = plan.A, plan.T
    hi = math.log(At) + 2.0
    if kind == "D0":
        return -At, T
    if kind == 2:
        return -At / 2, hi
    return -At, hi


def _kinds_needed(inner):
    """(law, kernel kind) pairs; k = 0 uses the remainder D0 plus the closed-form step part."""
    return [(law, "D0" if k == 0 else k) for law, k in inner]


def _gauss_range(mean, sd, plan):
    return math.floor((mean - plan.T * sd) / plan.delta), math.ceil((mean + plan.T * sd) / plan.delta)


def _laplace_f64_once(kernels, model, nu, Lv, form, digits):
    """One lattice evaluation in float64: (value, ∫|F|, number of outer nodes, plan)."""
    mod = _bayes_module(kernels, model, "numpy")
    inner = _inner_spec(kernels, model, form)
    outer = getattr(mod, f"outer_{form}")
    laws = {law: tuple(float(v) for v in vals) for law, vals in _law_values(mod, _laws(kernels, model), nu).items()}
    plan = _make_plan(Lv, digits, laws, _tail_extension(kernels, model, nu, Lv))
    i_all = np.arange(plan.i_lo, plan.i_hi + 1)
    vals = []
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if plan.regime == "lattice":
            n_idx = i_all * plan.r
            u_all = n_idx * plan.delta
            dens, step_fn = _one(mod.normal_density), _one(mod.step_part)
            for law, kind in _kinds_needed(inner):
                mean, sd = laws[law]
                j0, j1 = _gauss_range(mean, sd, plan)
                G = dens(np.arange(j0, j1 + 1) * plan.delta, mean, sd)
                s_lo, s_hi = _kernel_range(kind, plan)
                k0, k1 = math.floor(s_lo / plan.delta), math.ceil(s_hi / plan.delta)
                Kv = _kernel_fn(mod, kind)(np.arange(k0, k1 + 1) * plan.delta)
                # Φ(u_n) = δ Σ_j G_j K_{j-n}: a discrete correlation
                full = np.convolve(G, Kv[::-1])
                p = n_idx + k1 - j0
                v = np.zeros(len(n_idx))
                ok = (p >= 0) & (p < len(full))
                v[ok] = full[p[ok]]
                v *= plan.delta
                if kind == "D0":
                    v = v + step_fn(u_all, mean, sd)
                vals.append(v)
        else:
            u_all = i_all * plan.h
            jmax = math.ceil(plan.T / plan.delta)
            gj = np.arange(-jmax, jmax + 1) * plan.delta
            w = plan.delta * _one(mod.std_density)(gj)
            for law, k in inner:
                mean, sd = laws[law]
                S = mean + sd * gj[None, :] - u_all[:, None]
                vals.append((_kernel_fn(mod, k)(S) * w[None, :]).sum(axis=1))
        F_raw, const = outer(*vals, Lv)
        F = F_raw * np.ones(len(u_all))
    total = float(const) + plan.h * float(np.sum(F))
    return total, plan.h * float(np.sum(np.abs(F))), len(F), plan


def _laplace_f64(kernels, model, nu, Lv, form="direct"):
    r"""Float64 u-representation: value at the fine design, error = difference to a coarser one.

    The fine design targets 1e-20, the check design 1e-15 (independent lattices); the difference
    estimates the error of the coarser rule, hence bounds the finer one.  Round-off
    (:math:`10\,\epsilon\int|F|\sqrt N`) and the truncation bound are added.
    """
    v1, S1, n1, plan = _laplace_f64_once(kernels, model, nu, Lv, form, _F64_DIGITS)
    v2, _, _, _ = _laplace_f64_once(kernels, model, nu, Lv, form, _F64_CHECK_DIGITS)
    err = abs(v1 - v2) + 10 * np.finfo(float).eps * S1 * math.sqrt(n1) + Lv * plan.trunc
    return v1, float(err), plan


def _laplace_mp_once(kernels, model, nu, Lv, form, digits):
    """One lattice evaluation in mpmath at the current working precision."""
    mod = _bayes_module(kernels, model, "mpmath")
    inner = _inner_spec(kernels, model, form)
    outer = getattr(mod, f"outer_{form}")

    def outer_fn(*vals):
        return outer(*vals, Lv)[0]

    num = mpmath.mpf(nu)
    laws_mp = _law_values(mod, _laws(kernels, model), num)
    laws = {law: (float(mv), float(sv)) for law, (mv, sv) in laws_mp.items()}
    plan = _make_plan(Lv, digits, laws, _tail_extension(kernels, model, float(nu), Lv))
    i_all = range(plan.i_lo, plan.i_hi + 1)
    F = []
    if plan.regime == "lattice":
        delta = mpmath.mpf(plan.delta)
        dens, step_fn = _one(mod.normal_density), _one(mod.step_part)
        n_all = [i * plan.r for i in i_all]
        K = {}
        for kind in {kd for _, kd in _kinds_needed(inner)}:
            s_lo, s_hi = _kernel_range(kind, plan)
            k0, k1 = math.floor(s_lo / plan.delta), math.ceil(s_hi / plan.delta)
            kfn = _kernel_fn(mod, kind)
            K[kind] = (k0, [kfn(k * delta) for k in range(k0, k1 + 1)])
        G = {law: {} for law in laws}  # Gaussian samples, computed when first needed
        for nn in n_all:
            u_n = nn * delta
            vals = []
            for law, kind in _kinds_needed(inner):
                j0, j1 = _gauss_range(*laws[law], plan)
                k0, Kl = K[kind]
                ja, jb = max(j0, k0 + nn), min(j1, k0 + len(Kl) - 1 + nn)
                if jb < ja:
                    v = mpmath.mpf(0)
                else:
                    Gd, (mean, sd) = G[law], laws_mp[law]
                    for j in range(ja, jb + 1):
                        if j not in Gd:
                            Gd[j] = dens(j * delta, mean, sd)
                    v = delta * mpmath.fdot([Gd[j] for j in range(ja, jb + 1)], Kl[ja - nn - k0:jb - nn - k0 + 1])
                if kind == "D0":
                    v += step_fn(u_n, *laws_mp[law])
                vals.append(v)
            F.append(outer_fn(*vals))
        h = plan.r * delta
    else:
        dg, h = mpmath.mpf(plan.delta), mpmath.mpf(plan.h)
        jmax = math.ceil(plan.T / plan.delta)
        phi = _one(mod.std_density)
        w = [dg * phi(j * dg) for j in range(-jmax, jmax + 1)]
        kern = {k: _kernel_fn(mod, k) for _, k in inner}
        for i in i_all:
            u_i = i * h
            vals = []
            for law, k in inner:
                mean, sd = laws_mp[law]
                vals.append(mpmath.fdot(w, [kern[k](mean + sd * j * dg - u_i) for j in range(-jmax, jmax + 1)]))
            F.append(outer_fn(*vals))
    const = mpmath.mpf(outer(*([mpmath.mpf(1)] * len(inner)), Lv)[1])
    return const + h * mpmath.fsum(F), float(h * mpmath.fsum(abs(f) for f in F)), len(F), plan


def _laplace_mp(kernels, model, nu, Lv, dps, form="direct"):
    r"""mpmath u-representation at ``dps`` significant digits.

    Check design ``dps + 1 + log10(L·span)`` digits (``span`` the length of the outer range), fine
    design 4 digits more, working precision 8 digits above the fine design; the reported error is
    the difference of the two (+ round-off, truncation and the rounding to ``dps`` digits).
    """
    mod = _bayes_module(kernels, model, "numpy")
    laws = {law: tuple(float(v) for v in vals) for law, vals in _law_values(mod, _laws(kernels, model), float(nu)).items()}
    pre = _make_plan(Lv, dps, laws, _tail_extension(kernels, model, float(nu), Lv))
    span = (pre.i_hi - pre.i_lo + 1) * pre.h
    check = dps + 1 + math.log10(max(1.0, Lv * span))
    fine = check + 4
    wp = int(math.ceil(fine)) + 8
    with mpmath.workdps(wp):
        v1, S1, n1, plan = _laplace_mp_once(kernels, model, nu, Lv, form, fine)
        v2, _, _, _ = _laplace_mp_once(kernels, model, nu, Lv, form, check)
        err = abs(v1 - v2) + 10 * mpmath.mpf(10) ** (-wp) * S1 * math.sqrt(n1) + Lv * plan.trunc
    with mpmath.workdps(dps):
        v1 = +v1
    return v1, float(err) + _rounding(v1, dps), plan


# ------------------------------------------------------------------------------------------------
# cross-check: nested adaptive quadrature (float64, slow)


def _bayes_risk_nested_quad(kernels, model, nu, Lv, form="direct"):
    """Float64 E_B by nested ``scipy.integrate.quad``: outer in ``u`` (split around the bulk),
    inner in ``g`` split at the step ``(u - m)/c`` and ±8/c around it.  Cross-check only: 0.1–1 s."""
    mod = _bayes_module(kernels, model, "numpy")
    inner_spec = _inner_spec(kernels, model, form)
    outer = getattr(mod, f"outer_{form}")
    laws = {law: tuple(float(v) for v in vals) for law, vals in _law_values(mod, _laws(kernels, model), nu).items()}
    sd = max(v[1] for v in laws.values())

    def inner(law, k, uu):
        f, step = _one(getattr(mod, f"inner_{law}_{k}")), _one(getattr(mod, f"inner_step_{law}"))
        g0 = float(step(uu, nu))
        w = 1.0 / laws[law][1]
        pts = [-np.inf, g0 - 8 * w, g0, g0 + 8 * w, np.inf]
        return sum(integrate.quad(f, lo, hi, args=(uu, nu), epsabs=1e-15, epsrel=1e-13, limit=200)[0]
                   for lo, hi in zip(pts[:-1], pts[1:]))

    def F(uu):
        with np.errstate(over="ignore", under="ignore"):
            return float(outer(*[inner(law, k, uu) for law, k in inner_spec], Lv)[0])

    centre = float(np.mean([v[0] for v in laws.values()]))
    pts = [-np.inf] + [centre + j * max(sd, 1.0) for j in range(-8, 9)] + [np.inf]
    val = err = 0.0
    for lo, hi in zip(pts[:-1], pts[1:]):
        v, e = integrate.quad(F, lo, hi, epsabs=1e-15, epsrel=1e-12, limit=200)
        val += v
        err += e
    return float(outer(*([1.0] * len(inner_spec)), Lv)[1]) + val, err


# ------------------------------------------------------------------------------------------------
# public API


def bayes_risk(model: str, nu, L: int, *, dps: int | None = None, tol: float = 1e-12,
               representation: str = "auto", kernels=None) -> BayesRisk:
    r"""Bayes risk :math:`E_B=1-\mathbb E\|p\|^2`, :math:`p=\mathrm{softmax}(c_\nu\chi^*)` (docs/slr.md §7).

    Parameters
    ----------
    model : {"spiked", "max"}
    nu : float
        Spike strength, ``ν ≥ 0``; ``math.inf`` for ``"max"`` only (gives 0 exactly).  With ``dps``
        an ``mpmath.mpf`` is accepted at full precision.
    L : int
        Sequence length ``≥ 1`` (``L = 1`` gives 0).
    dps : int or None
        ``None``: float64.  Otherwise mpmath at ``dps`` significant digits (``mpmath.workdps``;
        the global ``mp.dps`` is never changed); the value is an ``mpf``.
    tol : float
        Absolute tolerance of the float64 path (a warning is issued if the estimate exceeds it).
    representation : {"auto", "1d", "laplace"}
        ``"auto"``: the one-dimensional form at ``L = 2``, the u-representation for ``L ≥ 3``.
    kernels : KernelBundle
        The SLR kernels, :func:`attnlimits.derivations.slr.kernels.slr_kernels` (required;
        :meth:`attnlimits.verify.slr.theory.SLRTheory.bayes_risk` passes them).

    Returns
    -------
    BayesRisk

    Notes
    -----
    Accuracy: float64 about 1e-15 absolute and 1e-14 relative, also for tiny values (spiked
    ``ν = 1000``, :math:`E_B\approx7\cdot10^{-111}`); mpmath: relative ``10**-dps`` (20 and 40
    digits agree to 1e-22).  Cost (2-core CPU, after the first call, which generates the
    integrands in about 0.3 s): float64 ``L = 2`` about 0.6 ms, ``L ≥ 3`` 0.2–2 ms (up to 30 ms at
    ``ν ≥ 100``); mpmath ``L = 2`` 0.1–0.3 s; mpmath ``L ≥ 3`` about 0.2 s at 20 digits and 0.6–1.2 s
    at 40 digits (the cost grows like the square of the digits; 1–4 s for ``ν ≥ 100``).

    Examples
    --------
    >>> from attnlimits.derivations.slr.kernels import slr_kernels
    >>> round(bayes_risk("spiked", 1.0, 2, kernels=slr_kernels()).value, 5)
    0.32494
    >>> round(bayes_risk("max", 2.0, 3, kernels=slr_kernels()).value, 5)
    0.35418
    """
    Lv, nuf, dps = _check_inputs(model, nu, L, dps, tol)
    _slr(kernels)
    if representation not in ("auto", "1d", "laplace"):
        raise ValueError(f"unknown representation {representation!r}; allowed: 'auto', '1d', 'laplace'")
    if representation == "1d" and Lv != 2:
        raise ValueError("representation='1d' exists for L = 2 only; use 'auto' or 'laplace'")
    exact = None
    if Lv == 1 or (model == "max" and math.isinf(nuf)):
        exact = 0
    elif nuf == 0:
        exact = Fraction(Lv - 1, Lv)  # ν = 0: the posterior is uniform
    if exact is not None:
        exact = Fraction(exact)
        if dps is None:
            value = float(exact)
        else:
            with mpmath.workdps(dps):
                value = mpmath.mpf(exact.numerator) / exact.denominator
        return BayesRisk(value, 0.0, "exact", model, nuf, Lv, dps)
    use_1d = representation == "1d" or (representation == "auto" and Lv == 2)
    details = {}
    if dps is None:
        if use_1d:
            value, err = _one_d_f64(kernels, model, nuf, tol)
            method = "quad-1d"
        else:
            value, err, plan = _laplace_f64(kernels, model, nuf, Lv)
            method = "laplace-lattice"
            details = {"plan": plan}
        if err > tol:
            warnings.warn(f"bayes_risk({model!r}, {nu}, {Lv}): error estimate {err:.2e} exceeds tol={tol:.1e}; "
                          "try dps=30 for an mpmath evaluation", AccuracyWarning, stacklevel=2)
    else:
        nu_in = nu if isinstance(nu, mpmath.mpf) else nuf
        if use_1d:
            value, err = _one_d_mp(kernels, model, nu_in, dps)
            method = "mpmath-quad-1d"
        else:
            value, err, plan = _laplace_mp(kernels, model, nu_in, Lv, dps)
            method = "mpmath-laplace-lattice"
            details = {"plan": plan}
        if err > 10.0 ** (-dps) * max(abs(float(value)), 1e-300) * 10:
            warnings.warn(f"bayes_risk({model!r}, {nu}, {Lv}, dps={dps}): error estimate {err:.2e} is above "
                          f"10^-{dps} relative; try a larger dps", AccuracyWarning, stacklevel=2)
    return BayesRisk(value, float(err), method, model, nuf, Lv, dps, details)


def bayes_risk_varlen(model: str, nu, length_law: dict, *, dps: int | None = None,
                      tol: float = 1e-12, kernels=None) -> BayesRisk:
    r"""Bayes risk under a length law: :math:`\sum_LP(L)\,E_B(L)` (docs/slr.md §3.4, claim C23).

    The Bayes predictor ``softmax(c_ν χ)`` does not depend on ``L``, so one parameter pair attains
    every per-length Bayes risk at once and the mixture is exact.  ``length_law`` maps lengths
    ``≥ 1`` to probabilities summing to 1 (within 1e-9).  Accuracy and cost: those of
    :func:`bayes_risk`, once per length.

    Examples
    --------
    >>> from attnlimits.derivations.slr.kernels import slr_kernels
    >>> round(bayes_risk_varlen("spiked", 5.0, {1: 1/3, 2: 1/3, 3: 1/3}, kernels=slr_kernels()).value, 5)
    0.07655
    """
    if not isinstance(length_law, dict) or not length_law:
        raise ValueError("length_law must be a non-empty dict {L: P(L)} with integer L >= 1")
    probs = {}
    for Lk, pk in length_law.items():
        Lk, _, _ = _check_inputs(model, nu, Lk, dps, tol)
        if not isinstance(pk, numbers.Real) or not (0 <= float(pk) <= 1):
            raise ValueError(f"P(L={Lk}) must be a probability in [0, 1], got {pk!r}")
        probs[Lk] = pk
    if abs(sum(float(p) for p in probs.values()) - 1) > 1e-9:
        raise ValueError(f"length_law probabilities must sum to 1, got {sum(float(p) for p in probs.values())!r}")
    parts = {Lk: bayes_risk(model, nu, Lk, dps=dps, tol=tol, kernels=kernels) for Lk in probs}
    if dps is None:
        value = sum(float(probs[Lk]) * parts[Lk].value for Lk in probs)
    else:
        with mpmath.workdps(dps):
            value = mpmath.fsum(mpmath.mpf(probs[Lk]) * parts[Lk].value for Lk in probs)
    err = sum(float(probs[Lk]) * parts[Lk].error for Lk in probs)
    return BayesRisk(value, err, "mixture", model, float(nu), dict(probs), dps, {"parts": parts})


def max_stein_mean(nu, L: int, *, dps: int | None = None, kernels=None):
    r""":math:`\mu_L(\nu)=\mathbb E[\chi^*_{\varepsilon^*}]=\nu\,E_B^{\max}(L,\nu)` (Stein, docs/slr.md §8).

    The formula is the generated ``stein_mean`` kernel (``attnlimits.derivations.slr.bayes.stein_mean``).
    ``ν = ∞`` gives :math:`M_L` (:func:`expected_max_gaussian`).  Accuracy: that of
    :func:`bayes_risk` times ν; cost: one :func:`bayes_risk` call.

    Examples
    --------
    >>> from attnlimits.derivations.slr.kernels import slr_kernels
    >>> round(max_stein_mean(2.0, 2, kernels=slr_kernels()), 5)
    0.48002
    """
    Lv, nuf, dps = _check_inputs("max", nu, L, dps, 1.0)
    if math.isinf(nuf):
        return expected_max_gaussian(Lv, dps=dps, kernels=kernels)
    risk = bayes_risk("max", nu, Lv, dps=dps, kernels=kernels)
    if dps is None:
        return float(_slr(kernels)["population"].module("numpy").stein_mean(nuf, risk.value)[0])
    with mpmath.workdps(dps):
        return _slr(kernels)["population"].module("mpmath").stein_mean(mpmath.mpf(nu), risk.value)[0]


def _quad_sum(f, pts) -> float:
    """Sum of ``scipy.integrate.quad`` over consecutive pieces, to about 1e-15 absolute (QUADPACK's
    round-off notices at this tolerance are silenced: the pieces are smooth and bounded)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        return float(sum(integrate.quad(f, lo, hi, epsabs=1e-15, epsrel=1e-14, limit=200)[0]
                         for lo, hi in zip(pts[:-1], pts[1:])))


def expected_max_gaussian(L: int, *, dps: int | None = None, kernels=None):
    r""":math:`M_L=\mathbb E\max_{\ell\le L}g_\ell=L\int x\,\varphi(x)\Phi(x)^{L-1}dx` (docs/slr.md §8).

    Float64: ``scipy.integrate.quad`` split at 0 and at :math:`\sqrt{2\log L}`; about 1e-14
    absolute, under 1 ms.  ``dps``: ``mpmath.quad`` with the same splits, ``dps`` digits, 10–100 ms.

    Examples
    --------
    >>> from attnlimits.derivations.slr.kernels import slr_kernels
    >>> round(expected_max_gaussian(3, kernels=slr_kernels()), 6)
    0.846284
    """
    try:
        Lv = operator.index(L)
    except TypeError:
        raise ValueError(f"L must be an integer >= 1, got {L!r}") from None
    if Lv < 1:
        raise ValueError(f"L must be an integer >= 1, got {L!r}")
    if Lv == 1:
        return 0.0 if dps is None else mpmath.mpf(0)
    split = math.sqrt(2 * math.log(Lv))
    if dps is None:
        fm = _bayes_module(kernels, "max", "numpy").expected_max
        pts = [-np.inf, 0.0, split, split + 8.0, np.inf]
        return _quad_sum(lambda x: fm(x, Lv)[0], pts)
    fm = _bayes_module(kernels, "max", "mpmath").expected_max
    f = lambda x: fm(x, Lv)[0]  # noqa: E731
    with mpmath.workdps(dps + 10):
        val = mpmath.quad(f, [-mpmath.inf, 0, split, split + 8, mpmath.inf])
    with mpmath.workdps(dps):
        return +val


# ------------------------------------------------------------------------------------------------
# [M] (docs/slr.md §13)


def zeta_erf2_value(t, s, *, dps: int | None = None, kernels=None):
    r""":math:`\zeta(t,s)=\mathbb E_g[\mathrm{erf}(t+sg)^2]` by one-dimensional quadrature.

    The generated ``zeta`` kernel of ``kernels["predecessor"]`` (quadrature of the printed
    integrand of :class:`attnlimits.symbolic.functions.zeta_erf2`, split at the zero :math:`g=-t/s` of the
    erf).  Float64: about 1e-15 absolute, under 1 ms; ``dps``: ``mpmath.quad`` at ``dps`` digits.
    """
    if dps is None:
        return float(_slr(kernels)["predecessor"].module("numpy").zeta(float(t), float(s))[0])
    mod = _slr(kernels)["predecessor"].module("mpmath")
    with mpmath.workdps(dps):
        return +mod.zeta(mpmath.mpf(t), mpmath.mpf(s))[0]


def predecessor_manifold_risk(d, L, gamma2, lam, kappa, nu_M, *, dps: int | None = None, kernels=None):
    r"""[M] excess risk on the manifold (Theorem 1, docs/slr.md §13.2; claims C21, C22).

    Evaluates the generated ``manifold_risk`` kernel
    (``attnlimits.derivations.slr.predecessor.manifold_excess_risk``) at :math:`\gamma=\sqrt{\gamma^2}`, with
    ζ by its generated quadrature.  Accuracy about 1e-15 absolute (float64) or ``dps`` digits;
    cost under 1 ms (float64).

    Examples
    --------
    >>> from attnlimits.derivations.slr.kernels import slr_kernels
    >>> round(predecessor_manifold_risk(400, 10, 0.5, 0.1, 0.6, 0.8, kernels=slr_kernels()), 5)
    0.29364
    """
    if float(gamma2) <= 0 or float(d) <= 0 or int(L) != L or L < 1 or float(lam) <= 0:
        raise ValueError("need d > 0, integer L >= 1, gamma2 > 0, lam > 0 (kappa, nu_M in [-1, 1])")
    if abs(float(kappa)) > 1 or abs(float(nu_M)) > 1:
        raise ValueError(f"kappa and nu_M are overlaps of unit vectors: need |kappa|, |nu_M| <= 1, got {kappa}, {nu_M}")
    if dps is None:
        mod = _slr(kernels)["predecessor"].module("numpy")
        return float(mod.manifold_risk(float(d), int(L), math.sqrt(gamma2), float(lam), float(kappa), float(nu_M))[0])
    mod = _slr(kernels)["predecessor"].module("mpmath")
    with mpmath.workdps(dps + 5):
        val = mod.manifold_risk(mpmath.mpf(d), int(L), mpmath.sqrt(mpmath.mpf(gamma2)), mpmath.mpf(lam),
                                mpmath.mpf(kappa), mpmath.mpf(nu_M))[0]
    with mpmath.workdps(dps):
        return +val


def predecessor_prop3(gamma2, eps, L, *, kernels=None) -> float:
    r"""[M] Proposition 3: :math:`\epsilon^2+\gamma^2-\gamma^4/(\gamma^2+L-1)` (claim C20).

    Evaluated from the generated ``prop3`` kernel (``attnlimits.derivations.slr.predecessor.prop3_risk``);
    exact up to float64 rounding.

    Examples
    --------
    >>> from attnlimits.derivations.slr.kernels import slr_kernels
    >>> round(predecessor_prop3(0.5, 0.1, 10, kernels=slr_kernels()), 5)
    0.48368
    """
    if float(gamma2) <= 0 or float(eps) < 0 or int(L) != L or L < 1:
        raise ValueError("need gamma2 > 0, eps >= 0 and integer L >= 1")
    mod = _slr(kernels)["predecessor"].module("numpy")
    return float(mod.prop3(math.sqrt(gamma2), float(eps), int(L))[0])
