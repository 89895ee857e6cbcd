r"""Population risks and optima of single-location regression (docs/slr.md §6), generated.

The attention weights arrive as generated kernels (a :class:`attnlimits.symbolic.bundle.KernelBundle` from
``attnlimits.derivations.slr.kernels.activation_kernels``: the token map, the weight and their derivatives,
printed from ``attnlimits.derivations.slr.vector_form``); the §6 formulas (optimal value vector, manifold
risk, residual covariance, :math:`c_\nu`, :math:`\mu_L(\nu)=\nu E_B`, the §8 closed forms) arrive
in the SLR bundle ``kernels`` of the :class:`Setting` (``attnlimits.derivations.slr.kernels.slr_kernels``).
This module never imports a derivation; name-only wrappers are in :mod:`attnlimits.verify.slr`.  It evaluates

.. math::  A(m_k, s_k) = \mathbb E[\sigma(\chi)_{\varepsilon^*}],\qquad
           B(m_k, s_k) = \mathbb E\|\sigma(\chi)\|^2,\qquad \chi = m_k\chi^* + s_k\eta,

with their exact gradients, on a **fixed** integration rule, so the objective
:math:`A^2/B` is a smooth deterministic function of the parameters:

- spiked-SLR (:math:`\varepsilon^*=1` by exchangeability): :math:`\chi_\ell=m_k\sqrt\nu\delta_{\ell1}
  +\sqrt{q_k}\,g_\ell` — an :math:`L`-dimensional standard Gaussian, integrated by tensor
  Gauss–Hermite for :math:`L\le3` (the error estimate compares two rule sizes);
- max-SLR, :math:`\nu\le3` (:data:`MAX_NU_GAUSS_HERMITE`), :math:`s_k=0`, :math:`L\le3`: Gauss–Hermite
  over :math:`\chi^*` with the location weights :math:`\mathrm{softmax}(\nu\chi^*)` in the integrand;
- otherwise (max-SLR at larger :math:`\nu`, whose location weights step over a width :math:`1/\nu`, and at
  :math:`\nu=\infty`, whose argmax has a kink; orthogonal noise on max-SLR; :math:`L>3`): scrambled Sobol
  points, common to every parameter value, in independent replicates whose spread is the error estimate.
  A length law whose lengths need both kinds takes Sobol for every length (one error estimate).

:func:`optimal_population_risk` maximises :math:`A^2/B` with L-BFGS-B on
:math:`(\log m_k, s_k^2, \text{extra})` from the spec's multistart (§6.3) and reports the risk
:math:`1-A^2/B`, its integration error, the argmin and a ``limit`` flag when the argmin runs to a
bound (softmax at max-SLR :math:`\nu=\infty`; :math:`b\to-\infty` for ``softplus_norm_bias``).
When the optimum is a limit the reported ``risk`` is the limit value — derived where the
derivation knows it (``limit_known`` of the activation kernels), otherwise extrapolated from the
approach to the bound with its error — and ``risk_at_bound`` keeps the value at the bound.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any
from attnlimits.numeric.slr.problem import LengthLaw, check_model_nu
from attnlimits.symbolic.options import resolve_options
from attnlimits.symbolic.result import InputError

import numpy as np

__all__ = [
    "PopulationError",
    "PopulationOptimum",
    "Setting",
    "SettingError",
    "compile_activation",
    "make_setting",
    "numeric_activation",
    "optimal_population_risk",
    "population_AB",
    "population_risk",
    "population_risk_general",
]


class SettingError(InputError):
    """Invalid SLR setting (model, ν, length law); the message is one line and says what is allowed."""


class PopulationError(ArithmeticError):
    """The population risk cannot be evaluated (non-finite weights); the message says what to try."""


def _require_finite(what: str, *values, hint: str = "") -> None:
    """Raise :class:`PopulationError` when a computed quantity is not finite (never return NaN)."""
    if not all(np.all(np.isfinite(v)) for v in values):
        raise PopulationError(f"{what} is not finite ({', '.join(str(np.asarray(v).ravel()[:3]) for v in values)})"
                              + (f"; {hint}" if hint else ""))


# =============================================================================================
# settings
# =============================================================================================

@dataclass(frozen=True)
class Setting:
    """An SLR setting: ``model`` ("spiked" or "max"), ``nu`` (math.inf allowed for max-SLR) and the
    length law ``lengths`` (tuple of (L, P(L)), probabilities summing to 1)."""

    model: str
    nu: float
    lengths: tuple
    kernels: object = field(default=None, compare=False, repr=False)  #: the SLR KernelBundle

    def _kernels(self):
        if self.kernels is None:
            raise SettingError("this Setting carries no kernels: build it with make_setting(..., "
                               "kernels=attnlimits.derivations.slr.kernels.slr_kernels()), or use attnlimits.verify.slr.theory.SLRTheory")
        return self.kernels

    def population_module(self):
        """The generated population kernels (NumPy)."""
        return self._kernels()["population"].module("numpy")

    @property
    def c_nu(self) -> float:
        """Posterior inverse temperature c_ν (§3.5), from the generated ``c_nu_<model>`` kernel."""
        return float(getattr(self.population_module(), f"c_nu_{self.model}")(self.nu)[0])

    @property
    def variable(self) -> bool:
        return len(self.lengths) > 1

    def describe(self) -> str:
        ls = (str(self.lengths[0][0]) if not self.variable
              else "U{" + ",".join(str(L) for L, _ in self.lengths) + "}")
        nu = "inf" if math.isinf(self.nu) else f"{self.nu:g}"
        return f"{self.model}, L={ls}, nu={nu}"

    def as_dict(self) -> dict:
        return {"model": self.model, "nu": self.nu, "lengths": {int(L): p for L, p in self.lengths}}


def make_setting(model: str, nu, L, *, kernels=None) -> Setting:
    """Validate and build a :class:`Setting`.

    ``L`` is an int, a list of ints (uniform over the list: variable length, §3.4) or a dict
    {L: P(L)}.  ν must be ≥ 0; ν = ∞ only for max-SLR (docs/slr.md §2).  The checks are the SLR problem's
    (:func:`attnlimits.numeric.slr.problem.check_model_nu`, :meth:`~attnlimits.numeric.slr.problem.LengthLaw.parse`),
    raised as :class:`SettingError`.  ``kernels`` is the SLR bundle
    (``attnlimits.derivations.slr.kernels.slr_kernels()``), needed by every evaluation.
    """
    try:
        nu = check_model_nu(model, nu, prefix="")
        law = LengthLaw.parse(L, option="L")
    except InputError as exc:
        raise SettingError(str(exc)) from None
    return Setting(model, nu, law.items, kernels)


# =============================================================================================
# generated activation kernels
# =============================================================================================

@dataclass
class NumericActivation:
    """Generated NumPy evaluation of one activation: the token map ``u``, its reduction ``r`` over
    the tokens, the weight ``σ(t, u, r)`` and their first derivatives (chain rule through ``u`` and
    ``r``)."""

    name: str
    kind: str
    reduction: str | None
    extra_name: str | None
    extra_learned: bool
    extra_default: float
    extra_bounds: tuple
    has_extra: bool
    module: object = None
    meta: dict = field(default_factory=dict)

    def weights(self, chi, extra=0.0, dchi=(), want_extra=False):
        r"""σ(χ) along the last axis and its directional derivatives.

        ``dchi``: sequence of arrays ∂χ/∂θ_j (same shape as χ); returns ``(sigma, [∂σ/∂θ_j],
        ∂σ/∂extra or None)``.  The reduction :math:`r` (mean or log-sum-exp of :math:`u`) is a
        generic operation; its derivative is :math:`\sum_\ell w_\ell\,\delta u_\ell` with
        :math:`w=1/L` (mean) or :math:`w=e^{u-r}` (log-sum-exp).
        """
        mod = self.module
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            if self.reduction is None:
                u, r, rw, du, due = 0.0, 0.0, None, None, None
            else:
                u, du, due = (np.broadcast_to(v, chi.shape) for v in mod.token(chi, extra))
                if self.reduction == "mean":
                    r = u.mean(axis=-1, keepdims=True)
                    rw = np.full(chi.shape, 1.0 / chi.shape[-1])
                else:  # logsumexp
                    mx = u.max(axis=-1, keepdims=True)
                    r = mx + np.log(np.exp(u - mx).sum(axis=-1, keepdims=True))
                    rw = np.exp(u - r)
            sig, st, su, sr, se = (np.broadcast_to(v, chi.shape) for v in mod.weight(chi, u, r, extra))
            if rw is not None:
                st = st + su * du  # total derivative in the token's own field (through u)
            ds = []
            for d in dchi:
                dd = st * d
                if rw is not None:
                    dd = dd + sr * (rw * du * d).sum(axis=-1, keepdims=True)
                ds.append(dd)
            de = None
            if want_extra:
                de = se
                if rw is not None:
                    de = de + su * due + sr * (rw * due).sum(axis=-1, keepdims=True)
        return sig, ds, de


def compile_activation(bundle) -> NumericActivation:
    """The :class:`NumericActivation` of an activation's kernel bundle (generated and cached)."""
    cached = _COMPILED.get(id(bundle))
    if cached is not None and cached[0] is bundle:
        return cached[1]
    m = bundle.meta
    na = NumericActivation(m["name"], m["kind"], m["reduction"], m["extra_name"], m["extra_learned"],
                           m["extra_default"], tuple(m["extra_bounds"]), m["has_extra"], bundle.module("numpy"),
                           dict(m))
    _COMPILED[id(bundle)] = (bundle, na)
    return na


_COMPILED: dict = {}


def numeric_activation(act, kernels=None) -> NumericActivation:
    """Generated NumPy kernel of an activation.

    ``act``: an activation kernel bundle, or a name / ``elementwise:``/``normalised:`` text resolved by
    the derivation's resolver carried by ``kernels`` (the SLR bundle, ``meta["activation"]``).
    """
    if isinstance(act, NumericActivation):
        return act
    if hasattr(act, "module") and hasattr(act, "meta"):
        return compile_activation(act)
    if kernels is None:
        raise TypeError(f"activation {act!r}: pass its kernel bundle (attnlimits.derivations.slr.kernels.activation_kernels) "
                        "or a Setting built with kernels (attnlimits.verify.slr.theory.SLRTheory does both)")
    return compile_activation(kernels.meta["activation"](act))


# =============================================================================================
# integration rules
# =============================================================================================

@dataclass
class _Rule:
    """Weighted nodes for one length L.

    ``mode="collapse"`` (spiked): χ = m·shift + √(m² + s²)·g with ``g`` the nodes, location 1.
    ``mode="fields"``: χ = m·x + s·eta, location weights ``P`` (N, L).
    ``groups``: replicate index of every node (QMC) or None (deterministic rule).
    """

    L: int
    w: np.ndarray
    mode: str
    g: np.ndarray | None = None
    shift: np.ndarray | None = None
    x: np.ndarray | None = None
    eta: np.ndarray | None = None
    P: np.ndarray | None = None
    groups: int = 0
    method: str = ""
    module: object = None  #: the generated population kernels (optimal value, ...)


def _softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _location_weights(x, nu):
    if math.isinf(nu):
        P = np.zeros_like(x)
        P[np.arange(x.shape[0]), x.argmax(axis=1)] = 1.0
        return P
    return _softmax(nu * x)


#: max-SLR takes Gauss–Hermite only up to this ν: the location weights softmax(νχ*) step over a width
#: 1/ν, which a tensor rule of 40–64 nodes resolves to 8e-6 relative at ν = 3 (L = 2, 3; against the Bayes
#: risk at the Bayes point) but only to 3e-4 at ν = 4, 6e-2 at ν = 8 and a factor 3 at ν = 32.  Beyond, QMC.
MAX_NU_GAUSS_HERMITE = 3.0


def _gauss_hermite_ok(setting: Setting, L: int, noise: bool) -> bool:
    """Whether length ``L`` of ``setting`` is integrated by tensor Gauss–Hermite (else scrambled Sobol)."""
    if setting.model == "spiked":
        return L <= 3
    return L <= 3 and not noise and setting.nu <= MAX_NU_GAUSS_HERMITE


def _rule(setting: Setting, L: int, *, noise: bool, n_gh: int, qmc_points: int, replicates: int, seed: int,
          qmc: bool = False) -> _Rule:
    """The integration rule of length ``L``: Gauss–Hermite where :func:`_gauss_hermite_ok` and not ``qmc``,
    else scrambled Sobol replicates."""
    from attnlimits.symbolic.gaussian import gauss_hermite_rule, sobol_normal

    gh = not qmc and _gauss_hermite_ok(setting, L, noise)
    if setting.model == "spiked":
        if gh:
            g, w = gauss_hermite_rule(L, n_gh)
            method = f"gauss-hermite {n_gh}^{L}"
            groups = 0
        else:
            pts = sobol_normal(qmc_points, L, seed=seed + 31 * L, replicates=replicates)
            g = pts.reshape(-1, L)
            w = np.full(g.shape[0], 1.0 / qmc_points)
            method = f"qmc {replicates}x{qmc_points}"
            groups = replicates
        shift = np.zeros(L)
        shift[0] = math.sqrt(setting.nu)
        return _Rule(L, np.asarray(w, float), "collapse", g=np.asarray(g), shift=shift, groups=groups,
                     method=method)
    # max-SLR
    if gh:
        x, w = gauss_hermite_rule(L, n_gh)
        x = np.asarray(x)
        return _Rule(L, np.asarray(w, float), "fields", x=x, eta=None, P=_location_weights(x, setting.nu),
                     method=f"gauss-hermite {n_gh}^{L}")
    dim = 2 * L if noise else L
    pts = sobol_normal(qmc_points, dim, seed=seed + 31 * L + 7 * dim, replicates=replicates).reshape(-1, dim)
    x = pts[:, :L]
    eta = pts[:, L:] if noise else None
    return _Rule(L, np.full(x.shape[0], 1.0 / qmc_points), "fields", x=x, eta=eta,
                 P=_location_weights(x, setting.nu), groups=replicates, method=f"qmc {replicates}x{qmc_points}")


def _AB_rule(na: NumericActivation, rule: _Rule, m, s2, extra, grad: bool):
    """A, B (per replicate group when the rule has groups) and gradients in (log m, s², extra)."""
    if rule.mode == "collapse":
        r = math.sqrt(m * m + s2)
        chi = m * rule.shift + r * rule.g
        dirs = [m * (rule.shift + (m / r) * rule.g), (0.5 / r) * rule.g] if grad else []
        P = None
    else:
        s = math.sqrt(s2)
        chi = m * rule.x + (s * rule.eta if rule.eta is not None else 0.0)
        if grad:
            d_s2 = (0.5 / s) * rule.eta if (rule.eta is not None and s > 0) else np.zeros_like(chi)
            dirs = [m * rule.x, d_s2]
        else:
            dirs = []
        P = rule.P
    with np.errstate(over="ignore", invalid="ignore"):  # non-finite results are caught by the caller
        return _AB_rule_inner(na, rule, chi, dirs, P, extra, grad)


def _AB_rule_inner(na, rule, chi, dirs, P, extra, grad):
    sig, ds, de = na.weights(chi, extra, dirs, want_extra=grad and na.has_extra)

    def red(a_vec, b_vec):
        if rule.groups:
            k = rule.groups
            return (rule.w * a_vec).reshape(k, -1).sum(1), (rule.w * b_vec).reshape(k, -1).sum(1)
        # elementwise product + sum, not BLAS ``@``: on read-only cached rules and a busy machine
        # the threaded dot was 1000× slower (measured 8 ms vs 10 µs at 13 824 nodes)
        return np.array([(rule.w * a_vec).sum()]), np.array([(rule.w * b_vec).sum()])

    a_loc = sig[:, 0] if P is None else (P * sig).sum(1)
    A, B = red(a_loc, (sig * sig).sum(1))
    if not grad:
        return A, B, None, None
    dA, dB = [], []
    for d in list(ds) + ([de] if de is not None else []):
        da = d[:, 0] if P is None else (P * d).sum(1)
        a_, b_ = red(da, 2 * (sig * d).sum(1))
        dA.append(a_)
        dB.append(b_)
    return A, B, np.array(dA), np.array(dB)


# =============================================================================================
# public evaluation
# =============================================================================================

def _rules(setting, noise, n_gh, qmc_points, replicates, seed):
    """One rule per length of the law, all of one kind: Gauss–Hermite when every length allows it, else QMC
    for every length — a mixture keeps one error estimate (the replicate spread), which a Gauss–Hermite
    part would escape."""
    mod = setting.population_module()
    qmc = not all(_gauss_hermite_ok(setting, L, noise) for L, _ in setting.lengths)
    out = []
    for L, p in setting.lengths:
        rule = _rule(setting, L, noise=noise, n_gh=n_gh, qmc_points=qmc_points, replicates=replicates, seed=seed,
                     qmc=qmc)
        rule.module = mod
        out.append((p, rule))
    return out


def _combine(parts):
    """Mix per-length (p, A, B, dA, dB) into totals; groups broadcast (deterministic ones have 1)."""
    A = sum(p * a for p, a, _, _, _ in parts)
    B = sum(p * b for p, _, b, _, _ in parts)
    if parts[0][3] is None:
        return A, B, None, None
    dA = sum(p * da for p, _, _, da, _ in parts)
    dB = sum(p * db for p, _, _, _, db in parts)
    return A, B, dA, dB


def population_AB(act, setting: Setting, m_k: float, q_k: float | None = None, *, extra=None,
                  n_gh: int = 40, qmc_points: int = 2 ** 14, replicates: int = 8, seed: int = 0):
    r""":math:`A=\mathbb E\sigma(\chi)_{\varepsilon^*}` and :math:`B=\mathbb E\|\sigma(\chi)\|^2`
    (§6.2) with their integration errors.

    ``q_k`` defaults to :math:`m_k^2`; the length law is mixed as in §6.2.  Returns
    ``(A, B, A_err, B_err)`` (errors: rule difference n vs 3n/2 for Gauss–Hermite, standard error
    across replicates for QMC).
    """
    na = numeric_activation(act, setting.kernels)
    q = m_k * m_k if q_k is None else float(q_k)
    s2 = q - m_k * m_k
    if s2 < -1e-12:
        raise SettingError(f"q_k = {q} < m_k² = {m_k * m_k}: the key overlaps are not realisable")
    s2 = max(s2, 0.0)
    ext = na.extra_default if extra is None else float(extra)
    noise = s2 > 0
    out = []
    for n in (n_gh, n_gh + n_gh // 2):
        parts = []
        rules = _rules(setting, noise, n, qmc_points, replicates, seed)
        for p, rule in rules:
            A, B, _, _ = _AB_rule(na, rule, m_k, s2, ext, False)
            parts.append((p, A, B, None, None))
        out.append(_combine(parts)[:2])
        _require_finite(f"{na.name}: A, B at m_k = {m_k:.4g}, q_k = {q:.4g}", *out[-1],
                        hint="the attention weights overflow; try smaller m_k or an activation growing at most "
                             "exponentially")
        if any(r.groups for _, r in rules):  # QMC: the replicate spread is the error estimate
            A1, B1 = out[0]
            return float(A1.mean()), float(B1.mean()), float(A1.std(ddof=1) / math.sqrt(A1.size)), \
                float(B1.std(ddof=1) / math.sqrt(B1.size))
    (A1, B1), (A2, B2) = out
    return float(A2[0]), float(B2[0]), float(abs(A2[0] - A1[0])), float(abs(B2[0] - B1[0]))


def population_risk(act, setting: Setting, m_k: float, q_k: float | None = None, m_v: float | None = None,
                    q_v: float | None = None, *, extra=None, **rule_kw):
    r"""Population risk on the manifold, :math:`E=1-2m_vA+q_vB` (§6.2, ``excess`` metric).

    With ``m_v`` and ``q_v`` omitted the value vector is optimal (:math:`m_v=A/B`,
    :math:`q_v=m_v^2`, :math:`E=1-A^2/B`; the generated ``optimal_value`` kernel of
    ``attnlimits.derivations.slr.optimal_value_risk``).  Returns ``(risk, error)``.
    """
    A, B, dA, dB = population_AB(act, setting, m_k, q_k, extra=extra, **rule_kw)
    mod = setting.population_module()
    if m_v is None:
        mv, risk = mod.optimal_value(A, B)
        err = abs(2 * mv) * dA + mv ** 2 * dB
        return float(risk), float(err)
    q_v = m_v * m_v if q_v is None else q_v
    return float(mod.manifold_risk(m_v, q_v, A, B)[0]), float(abs(2 * m_v) * dA + abs(q_v) * dB)


def population_risk_general(act, setting: Setting, overlaps: dict, *, extra=None, points: int = 2 ** 15,
                            replicates: int = 8, seed: int = 0, metric: str = "excess", delta: float = 0.0):
    r"""Population risk for any realisable overlaps (§6.1), by randomised QMC.

    Student fields :math:`\chi_\ell=m_k\chi^*_\ell+m_{kv^*}z^*_\ell+a_\ell`,
    :math:`z_\ell=m_{vk^*}\chi^*_\ell+m_vz^*_\ell+b_\ell` with :math:`(a,b)` Gaussian of the residual
    covariance (the generated ``residual_covariance`` kernel of
    ``attnlimits.derivations.slr.residual_covariance``); :math:`E=\mathbb E(z^*_{\varepsilon^*}-\sigma(\chi)^\top z)^2` (+Δ² under ``noisy``).
    Returns ``(risk, standard error over replicates)``.  Raises :class:`SettingError` when the
    residual covariance is indefinite.
    """
    from attnlimits.symbolic.gaussian import sobol_normal

    na = numeric_activation(act, setting.kernels)
    names = ("m_k", "q_k", "m_v", "q_v", "m_kvstar", "m_vkstar", "q_kv")
    o = {k: float(overlaps.get(k, 0.0)) for k in names}
    va, vb, cab = (float(v) for v in setting.population_module().residual_covariance(*(o[k] for k in names)))
    if va < -1e-12 or vb < -1e-12 or va * vb - cab * cab < -1e-12:
        raise SettingError(f"overlaps {o} are not realisable (residual covariance [[{va:.4g}, {cab:.4g}], "
                           f"[{cab:.4g}, {vb:.4g}]] is not positive semi-definite)")
    C = np.linalg.cholesky(np.array([[max(va, 0), cab], [cab, max(vb, 0)]]) + 1e-300 * np.eye(2)) \
        if va * vb - cab * cab > 1e-14 else None
    ext = na.extra_default if extra is None else float(extra)
    total = np.zeros(replicates)
    for L, p in setting.lengths:
        pts = sobol_normal(points, 4 * L, seed=seed + 97 * L, replicates=replicates)
        g, zs, u1, u2 = (pts[..., i * L:(i + 1) * L] for i in range(4))
        if setting.model == "spiked":
            chi_s = g.copy()
            chi_s[..., 0] += math.sqrt(setting.nu)
            P = np.zeros_like(chi_s)
            P[..., 0] = 1.0
        else:
            chi_s = g
            P = _location_weights(g.reshape(-1, L), setting.nu).reshape(g.shape)
        if C is not None:
            a = C[0, 0] * u1
            b = C[1, 0] * u1 + C[1, 1] * u2
        else:  # degenerate residual: b proportional to a (or zero)
            sa = math.sqrt(max(va, 0))
            a = sa * u1
            b = (cab / va) * a if va > 1e-14 else math.sqrt(max(vb, 0)) * u2
        chi = o["m_k"] * chi_s + o["m_kvstar"] * zs + a
        z = o["m_vkstar"] * chi_s + o["m_v"] * zs + b
        sig, _, _ = na.weights(chi.reshape(-1, L), ext)
        pred = (sig * z.reshape(-1, L)).sum(1).reshape(replicates, points)
        err2 = ((zs - pred[..., None]) ** 2 * P).sum(-1)
        total += p * err2.mean(axis=1)
    _require_finite(f"{na.name}: the general population risk at {o}", total,
                    hint="the attention weights overflow at these overlaps")
    if metric == "noisy":
        total = total + delta ** 2
    return float(total.mean()), float(total.std(ddof=1) / math.sqrt(replicates))


# =============================================================================================
# optimisation
# =============================================================================================

@dataclass
class PopulationOptimum:
    r"""Result of :func:`optimal_population_risk`.

    ``risk`` = :math:`E^*_\sigma`, ``risk_error`` its integration error estimate (plus the
    optimisation tolerance), ``argmin`` the optimal order parameters (``m_k``, ``q_k``, ``s_k``,
    ``m_v``, ``q_v`` and the extra scalar ``c`` or ``b``), ``limit`` True when the argmin lies on a
    bound of the search box (the optimum is a limit: ``m_k → ∞`` or ``b → −∞``...); then ``risk`` is
    the limit value (``limit_method`` says whether derived or extrapolated, and ``risk_error``
    includes the extrapolation error) and ``risk_at_bound`` the value at the bound; ``A``, ``B``
    at the argmin, ``method`` the integration rule, ``per_length`` the per-length tuned risks and
    their P(L)-average for variable length.
    """

    activation: str
    setting: Setting
    risk: float
    risk_error: float
    argmin: dict
    A: float
    B: float
    limit: bool
    limit_reason: str = ""
    method: str = ""
    evaluations: int = 0
    per_length: dict = field(default_factory=dict)
    risk_at_bound: float | None = None
    limit_method: str = ""

    def as_dict(self) -> dict:
        return {"activation": self.activation, "setting": self.setting.as_dict(), "risk": self.risk,
                "risk_error": self.risk_error, "argmin": self.argmin, "A": self.A, "B": self.B,
                "limit": self.limit, "limit_reason": self.limit_reason, "method": self.method,
                "evaluations": self.evaluations, "per_length": self.per_length,
                "risk_at_bound": self.risk_at_bound, "limit_method": self.limit_method}


M_BOUNDS = (1e-3, 200.0)  #: search box of m_k (×1, absolute)


def _objective(na, rules, theta, layout, grad=True):
    m = math.exp(theta[0])
    s2 = theta[layout["s2"]] if layout.get("s2") is not None else 0.0
    ext = theta[layout["extra"]] if layout.get("extra") is not None else na.extra_default
    parts = []
    for p, rule in rules:
        A, B, dA, dB = _AB_rule(na, rule, m, s2, ext, grad)
        parts.append((p, A, B, dA, dB))
    A, B, dA, dB = _combine(parts)
    A, B = float(A.mean()), float(B.mean())
    if not (math.isfinite(A) and math.isfinite(B)):
        raise PopulationError(
            f"{na.name}: the attention weights overflow (A = {A}, B = {B}) at m_k = {m:.4g}"
            + (f", extra = {ext:.4g}" if na.has_extra else "")
            + "; try an activation that grows at most exponentially, or smaller --L")
    if not B > 1e-300:  # all weights underflowed (e.g. erf offset at its bound): trivial predictor
        return 1.0, (np.zeros(len(theta)) if grad else None), A, B
    mod = rules_module(rules)
    risk = float(mod.optimal_value(A, B)[1])  # E* = 1 − A²/B (generated)
    if not grad:
        return risk, None, A, B
    dA, dB = dA.mean(axis=1), dB.mean(axis=1)
    # dA rows: [log m, s2, (extra)]
    eA, eB = mod.optimal_value_grad(A, B)
    g_full = eA * dA + eB * dB
    g = np.zeros(len(theta))
    g[0] = g_full[0]
    if layout.get("s2") is not None:
        g[layout["s2"]] = g_full[1]
    if layout.get("extra") is not None:
        g[layout["extra"]] = g_full[2]
    return risk, g, A, B


def rules_module(rules):
    """The population kernels module travelling with a list of rules."""
    return rules[0][1].module


@dataclass(frozen=True)
class PopulationOptions:
    """Options of :func:`optimal_population_risk` (every field is described there)."""

    orthogonal_noise: bool = False
    per_length: bool = False
    tol: float = 1e-6
    n_gh: int | None = None
    qmc_points: int = 2 ** 14
    replicates: int = 8
    seed: int = 0
    closed_form: bool = True


def optimal_population_risk(act, setting: Setting, *, extra=None, starts=None,
                            options: PopulationOptions | None = None, **overrides) -> PopulationOptimum:
    r"""Population optimum :math:`E^*_\sigma=1-\sup A^2/B` of an activation (§6.2–§6.3).

    Parameters
    ----------
    act : str or Activation
        docs/slr.md §4 name (``softmax``, ``linear_uncentred``, ...) or a user expression.
    setting : Setting
        From :func:`make_setting`.
    orthogonal_noise : bool
        Also optimise :math:`s_k^2=q_k-m_k^2\ge0` (claim C14); otherwise :math:`q_k=m_k^2`.
    per_length : bool
        For a variable length law, also optimise each length separately (``per_length`` field).
    tol : float
        Target integration error for Gauss–Hermite rules (nodes are increased until the n vs 3n/2
        difference is below it, up to 64 per dimension).
    extra : float, optional
        Value of a fixed extra scalar (``erf_fixed``'s c, ``softplus_norm``'s b); default 0.
    starts : list, optional
        Starting points of the L-BFGS-B search (log m_k, then s² and the learned extra where optimised); default
        :func:`_default_starts`.
    closed_form : bool
        Linear variants use the derived closed forms of §8
        (:func:`attnlimits.derivations.slr.linear_closed_form`) with μ_L(ν) = ν E_B (max-SLR) or
        M_L (ν = ∞) from :mod:`attnlimits.numeric.slr.bayes_risk`; ``False`` optimises them numerically like the others
        (the cross-check of claim C6).

    The options (``orthogonal_noise`` … ``closed_form``, all but ``extra`` and ``starts``) are the fields of
    :class:`PopulationOptions` (``options``; keywords override them).

    Notes
    -----
    Cost: deterministic rules (spiked L ≤ 3; max-SLR ν ≤ 3, L ≤ 3) take 0.05–1 s per activation
    at 1e-6; QMC settings (max-SLR ν > 3, L > 3) about 1–3 s, error ~1e-4.  Gradients are exact
    (derivatives of the generated kernels), so L-BFGS-B converges in tens of evaluations.
    """
    o = resolve_options(PopulationOptions, options, overrides)
    na = numeric_activation(act, setting.kernels)
    if na.kind == "affine" and o.closed_form and not o.orthogonal_noise:
        return _linear_optimum(na, setting, per_length=o.per_length)
    space = _SearchSpace.of(na, setting, o.orthogonal_noise, extra)
    na = space.na
    search = _minimise(space, setting, space.default_starts() if starts is None else starts, o)
    th = search.best.x
    f, _, A, B = _objective(na, search.rules, th, space.layout, grad=False)
    err, method = (search.int_err, search.rules[-1][1].method) if search.deterministic else \
        _replicate_error(na, setting, search.rules, th, space.layout)
    layout = space.layout
    m_val = math.exp(th[0])
    s2 = th[layout["s2"]] if layout["s2"] is not None else 0.0
    mv = float(setting.population_module().optimal_value(A, B)[0])  # m_v* = A/B (generated)
    argmin = {"m_k": m_val, "q_k": m_val ** 2 + s2, "s_k": math.sqrt(max(s2, 0.0)), "m_v": mv, "q_v": mv * mv}
    fine_rules = _rules(setting, o.orthogonal_noise, search.n + search.n // 2, o.qmc_points, o.replicates,
                        o.seed) if search.deterministic else None
    reasons, directions = _limit_directions(space, search.rules, fine_rules, th, f, err, argmin)
    risk = f
    _require_finite(f"{na.name}: the optimal risk on {setting.describe()}", risk, err)
    err_total = float(err + max(o.tol * 0.01, 1e-12))
    out = PopulationOptimum(na.name, setting, float(risk), err_total, argmin, A, B,
                            bool(reasons), "; ".join(reasons), method, search.evals)
    if directions:
        # the optimum is a limit: report the limit value, keep the value at the bound
        lim, lim_err, how = _limit_value(na, setting, th, layout, directions, search.rules, fine_rules, err_total,
                                         dict(orthogonal_noise=o.orthogonal_noise, tol=o.tol, n_gh=o.n_gh,
                                              qmc_points=o.qmc_points, replicates=o.replicates, seed=o.seed))
        out.risk_at_bound, out.risk, out.risk_error, out.limit_method = float(risk), float(lim), float(lim_err), how
    if o.per_length and setting.variable:
        vals = {}
        for L, p in setting.lengths:
            sub = Setting(setting.model, setting.nu, ((L, 1.0),), setting.kernels)
            r = optimal_population_risk(act, sub, extra=extra, options=dataclasses.replace(
                PopulationOptions(), orthogonal_noise=o.orthogonal_noise, tol=o.tol, n_gh=o.n_gh,
                qmc_points=o.qmc_points, replicates=o.replicates, seed=o.seed))
            vals[L] = r.risk
        out.per_length = {"risks": vals, "average": float(sum(p * vals[L] for L, p in setting.lengths))}
    return out


@dataclass
class _SearchSpace:
    """The parameters of the search: log m_k, then s² = q_k − m_k² (``orthogonal_noise``) and the learned extra
    scalar at the indices of ``layout``, within ``bounds``; ``na`` with a fixed extra scalar set."""

    na: Any
    setting: Any
    layout: dict
    bounds: list
    learned: bool
    fixed_extra: Any
    c_nu: float
    orthogonal_noise: bool

    @classmethod
    def of(cls, na, setting, orthogonal_noise, extra):
        c_nu = setting.c_nu if not math.isinf(setting.c_nu) else 3.0
        c_nu = max(c_nu, 0.1)
        learned = na.has_extra and na.extra_learned and extra is None
        layout = {"s2": None, "extra": None}
        bounds = [(math.log(M_BOUNDS[0]), math.log(M_BOUNDS[1]))]
        if orthogonal_noise:
            layout["s2"] = len(bounds)
            bounds.append((0.0, 100.0))
        if learned:
            layout["extra"] = len(bounds)
            bounds.append(tuple(na.extra_bounds))
        fixed_extra = na.extra_default if extra is None else float(extra)
        if na.has_extra and not learned:
            na = NumericActivation(**{**na.__dict__, "extra_default": fixed_extra})
        return cls(na, setting, layout, bounds, learned, fixed_extra, c_nu, orthogonal_noise)

    def default_starts(self) -> list:
        """m_k at 0.3, 1, 3, 10 × c_ν; for a learned extra also a few starts in its regimes; for
        ``orthogonal_noise`` one with s² = c_ν²/2."""
        na, layout, bounds, c_nu = self.na, self.layout, self.bounds, self.c_nu
        starts = []
        for f in (0.3, 1.0, 3.0, 10.0):
            th = [math.log(min(max(f * c_nu, 2 * M_BOUNDS[0]), M_BOUNDS[1] / 2))]
            if self.orthogonal_noise:
                th.append(0.0)
            if self.learned:
                th.append(0.0)
            starts.append(th)
        if self.learned:
            for th0 in list(starts[:3]):
                th = list(th0)
                th[layout["extra"]] = -10.0 if na.kind == "normalised" else -1.0
                starts.append(th)
            if na.kind == "normalised":  # deep in the exponential regime (softplus → softmax, §4)
                th = list(starts[-1])
                th[0] = bounds[0][1] - 1.0
                th[layout["extra"]] = 0.5 * na.extra_bounds[0]
                starts.append(th)
        if self.orthogonal_noise:
            th = list(starts[1])
            th[layout["s2"]] = 0.5 * c_nu ** 2
            starts.append(th)
        return starts


@dataclass
class _Search:
    best: Any
    rules: Any
    deterministic: bool
    int_err: float
    n: int
    evals: int


def _minimise(space: _SearchSpace, setting, starts, o: PopulationOptions) -> _Search:
    """L-BFGS-B from every start (exact gradients of the generated kernels).  On a deterministic rule every
    candidate is judged on a finer rule (n → 3n/2: a coarse rule can alias a sharp integrand, large m_k, into a
    spurious optimum; rank by the fine value, error = coarse − fine) and the rule refined from the best until
    the error is below ``tol`` (at most 64 nodes per dimension); on QMC rules the lowest candidate."""
    from scipy.optimize import minimize

    na, layout, bounds = space.na, space.layout, space.bounds
    n0 = 32 if setting.model == "max" and not math.isinf(setting.nu) and setting.nu > 0 else 24
    n = o.n_gh or n0
    evals = 0
    best = None
    int_err = None
    while True:
        rules = _rules(setting, o.orthogonal_noise, n, o.qmc_points, o.replicates, o.seed)
        deterministic = all(r.groups == 0 for _, r in rules)

        def fun(th):
            nonlocal evals
            evals += 1
            f, g, _, _ = _objective(na, rules, th, layout)
            return f, g

        cands = []
        for th in (starts if best is None else [best.x]):
            res = minimize(fun, np.array(th, float), jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 500})
            cands.append(res)
        if not deterministic:
            best = min(cands, key=lambda r: r.fun)
            break
        fine = _rules(setting, o.orthogonal_noise, n + n // 2, o.qmc_points, o.replicates, o.seed)
        judged = []
        for r in cands:
            f_fine = _objective(na, fine, r.x, layout, grad=False)[0]
            judged.append((f_fine + abs(f_fine - r.fun), abs(f_fine - r.fun), r))
        _, int_err, best = min(judged, key=lambda j: j[0])
        if o.n_gh is not None or int_err <= o.tol or n >= 64:
            break
        n = min(64, n + n // 2)
    return _Search(best, rules, deterministic, int_err, n, evals)


def _replicate_error(na, setting, rules, th, layout):
    """The replicate spread of the risk at the argmin on QMC rules: ``(standard error, method)``."""
    parts = []
    for p, rule in rules:
        a_, b_, _, _ = _AB_rule(na, rule, math.exp(th[0]), th[layout["s2"]] if layout["s2"] is not None else 0.0,
                                th[layout["extra"]] if layout["extra"] is not None else na.extra_default, False)
        parts.append((p, a_, b_, None, None))
    Ar, Br, _, _ = _combine(parts)
    er = setting.population_module().optimal_value(Ar, Br)[1]
    err = float(er.std(ddof=1) / math.sqrt(er.size)) if er.size > 1 else 0.0
    return err, "; ".join(sorted({r.method for _, r in rules}))


def _limit_directions(space: _SearchSpace, rules, fine_rules, th, f, err, argmin):
    """Whether the optimum is a *limit*: the search ran to a bound, or the objective is flat all the way to a bound
    (within the integration error; e.g. softplus_norm_bias stops at b ≈ −16 because softplus(x + b) ∝ e^x to
    1e-7 there, and b → −∞ gives the same risk: softmax).  Returns ``(reasons, directions)``; sets the extra
    scalar's value in ``argmin``."""
    na, layout, bounds = space.na, space.layout, space.bounds
    flat = max(2.0 * err, 1e-9)

    def value_at(i, v):
        """Objective with parameter i set to v, and whether the rule resolves it there."""
        th2 = np.array(th, float)
        th2[i] = v
        f1 = _objective(na, rules, th2, layout, grad=False)[0]
        if fine_rules is None:
            return f1, True
        f2 = _objective(na, fine_rules, th2, layout, grad=False)[0]
        return f2, abs(f2 - f1) <= flat  # a sharp integrand the rule cannot resolve proves nothing

    def plateau(i, v):
        val, resolved = value_at(i, v)
        if not (resolved and val <= f + flat):
            return False
        # flat at *both* ends: the risk does not depend on this parameter (e.g. L = 1), not a limit
        other = bounds[i][0] if v == bounds[i][1] else bounds[i][1]
        val2, resolved2 = value_at(i, other)
        return not (resolved2 and val2 <= f + flat)

    reasons, directions = [], []
    if th[0] >= bounds[0][1] - 1e-6 or plateau(0, bounds[0][1]):
        reasons.append(f"m_k → ∞ (the risk at m_k = {M_BOUNDS[1]:g} is as low as at the argmin)")
        directions.append(("m_k", 0, bounds[0][1]))
    if na.has_extra:
        xname = na.extra_name
        xval = th[layout["extra"]] if layout["extra"] is not None else space.fixed_extra
        argmin[xname] = float(xval)
        if layout["extra"] is not None:
            i = layout["extra"]
            lo, hi = bounds[i]
            if xval <= lo + 1e-6 or plateau(i, lo):
                reasons.append(f"{xname} → −∞ (the risk at {xname} = {lo:g} equals the optimum; argmin {xval:.3g})")
                directions.append(("extra_lo", i, lo))
            elif xval >= hi - 1e-6 or plateau(i, hi):
                reasons.append(f"{xname} → +∞ (the risk at {xname} = {hi:g} equals the optimum)")
                directions.append(("extra_hi", i, hi))
    return reasons, directions


def _limit_value(na, setting, th, layout, directions, rules, fine_rules, err, opts):
    r"""Value of a limit optimum and its error: ``(value, error, how)``.

    Derived where the activation's kernels know the limit (``meta["limits"]``, from the
    derivation): a limit pair :math:`(A_\infty, B_\infty)` (softmax at max-SLR :math:`\nu=\infty`:
    hardmax = the location, :math:`A=B=1`) evaluated by the generated ``optimal_value`` kernel, or
    the optimum of the activation reached in the limit (``softplus_norm_bias`` as :math:`b\to-\infty`
    is softmax).  Otherwise extrapolated from the approach to the bound: Aitken's :math:`\Delta^2`
    on the risk at three points towards the bound (geometric in :math:`m_k`, arithmetic in an extra
    scalar), with the error the change from the previous triple plus the integration error.
    """
    keys = {d[0] for d in directions}
    for rule in na.meta.get("limits", ()):
        if rule["direction"] not in keys:
            continue
        if rule.get("model") not in (None, setting.model):
            continue
        if rule.get("nu") == "inf" and not math.isinf(setting.nu):
            continue
        if "A" in rule:
            value = float(setting.population_module().optimal_value(rule["A"], rule["B"])[1])
            return value + 0.0, 0.0, f"derived: {rule['why']}"
        if "same_as" in rule:
            other = optimal_population_risk(rule["same_as"], setting, **opts)
            return other.risk, other.risk_error, f"derived: {rule['why']} (its optimum: {other.limit_method or other.method})"
    key, i, bound = directions[0]

    def at(v):
        th2 = np.array(th, float)
        th2[i] = v
        return _objective(na, fine_rules or rules, th2, layout, grad=False)[0]

    step = -math.log(2.0) if key == "m_k" else (-1.0 if key == "extra_hi" else 1.0) * 0.05 * abs(bound)
    xs = [at(bound + k * step) for k in (3, 2, 1, 0)]  # towards the bound

    def aitken(x0, x1, x2):
        d1, d2 = x1 - x0, x2 - x1
        den = d2 - d1
        if den == 0 or d1 * d2 <= 0 or abs(d2) >= abs(d1):  # not a monotone, converging approach
            return x2
        return x2 - d2 * d2 / den

    lim, prev = aitken(*xs[1:]), aitken(*xs[:3])
    lim = min(max(lim, 0.0), xs[-1])
    where = "m_k" if key == "m_k" else na.extra_name
    return lim, abs(lim - prev) + err, (
        f"extrapolated (Aitken on the risk at {where} = " + ", ".join(
            f"{(math.exp(bound + k * step) if key == 'm_k' else bound + k * step):.4g}" for k in (2, 1, 0)) + ")")


def _max_mu(setting: Setting, L: int):
    """μ_L(ν) = E χ*_{ε*} on max-SLR (§8) and its error: M_L at ν = ∞, ν E_B otherwise (generated
    ``stein_mean`` kernel)."""
    from . import bayes_risk as bayes

    if L == 1:
        return 0.0, 0.0
    K = setting.kernels
    if math.isinf(setting.nu):
        return float(bayes.expected_max_gaussian(L, kernels=K)), 1e-13
    br = bayes.bayes_risk("max", setting.nu, L, kernels=K)
    stein = setting.population_module().stein_mean
    return float(stein(setting.nu, br.value)[0]), float(stein(setting.nu, br.error)[0])


def _linear_coefficients(mod, name, setting, L, nu_val, mu_val):
    if L == 1:
        return np.array(getattr(mod, f"linear_{name}_{setting.model}_L1")(nu_val), float)
    return np.array(getattr(mod, f"linear_{name}_{setting.model}")(L, nu_val, mu_val), float)


def _linear_from_coefficients(mod, c, degenerate):
    """(risk, m_k*, A, B, m_v*) from the coefficients of A(m) = a0 + a1 m, B(m) = b0 + b1 m + b2 m²."""
    a0, a1, b0, b1, b2 = (float(x) for x in c)
    num, den = (float(x) for x in mod.stationary_point(a0, a1, b0, b1 / 2, b2))
    scale = (abs(a0) + abs(a1)) * (abs(b0) + abs(b1) + abs(b2))
    # a zero denominator: the ratio does not depend on m (linear_pure; L = 1 of linear_centred): m_k = 1
    m_val = 1.0 if (degenerate or abs(den) <= 1e-12 * scale) else num / den
    A = a0 + a1 * m_val
    B = b0 + b1 * m_val + b2 * m_val * m_val
    mv, risk = mod.optimal_value(A, B)
    return float(risk), m_val, A, B, float(mv)


def _linear_optimum(na, setting: Setting, per_length: bool = False) -> PopulationOptimum:
    r"""Linear variants from the derived §8 closed forms: :math:`E=1-\sup_m(\sum P(L)A_L)^2/\sum P(L)B_L`.

    The generated kernels give the coefficients of :math:`A_L(m)`, :math:`B_L(m)` (for max-SLR in
    :math:`\mu=\mu_L(\nu)`), the stationary point of the ratio (Cauchy–Schwarz) and
    :math:`E^*=1-A^2/B`."""
    mod = setting.population_module()
    name = na.name
    degenerate = setting.kernels["population"].meta["linear_degenerate"][name]
    nu_val = 0.0 if math.isinf(setting.nu) else float(setting.nu)
    mu_vals, mu_err = {}, 0.0
    coeffs = 0.0
    per = {}
    for L, p in setting.lengths:
        mu_val = 0.0
        if setting.model == "max":
            mu_val, e = _max_mu(setting, L)
            mu_err = max(mu_err, e)
        c = _linear_coefficients(mod, name, setting, L, nu_val, mu_val)
        coeffs = coeffs + p * c
        per[L] = c
    risk, m_val, A, B, mv = _linear_from_coefficients(mod, coeffs, degenerate)
    argmin = {"m_k": m_val, "q_k": m_val ** 2, "s_k": 0.0, "m_v": mv, "q_v": mv * mv}
    # risk depends on μ through μ²-type terms: propagate the quadrature error of μ (|dE/dμ| ≤ 2)
    err = 2.0 * mu_err + 1e-15
    out = PopulationOptimum(name, setting, risk, err, argmin, A, B, False,
                            "scale-degenerate: only m_k m_v is identified" if degenerate else "",
                            "closed form (docs/slr.md §8)" + (", mu from quadrature" if setting.model == "max" else ""), 0)
    if per_length and setting.variable:
        vals = {L: _linear_from_coefficients(mod, per[L], degenerate)[0] for L, _ in setting.lengths}
        out.per_length = {"risks": vals, "average": float(sum(p * vals[L] for L, p in setting.lengths))}
    return out
