r"""GAMP for spiked-SLR on data matrices, in PyTorch (``docs/slr.md`` §11, claim C19).

Generalised approximate message passing (Rangan 2011) for the two-vector model of §3 in
Gaussian-input language: Gaussian priors :math:`k,v\sim\mathcal N(0,I_D)`, fields
:math:`\chi_{\mu\ell}=x_{\mu\ell}\cdot k/\sqrt D`, :math:`z_{\mu\ell}=x_{\mu\ell}\cdot v/\sqrt D`, and the
unnormalised channel :math:`P_{\rm out}(y\mid\chi,z)=\frac1L\sum_\varepsilon
e^{\sqrt\nu\chi_\varepsilon-\nu/2}\mathcal N(y;z_\varepsilon,\Delta^2)`.  The channel functions
:math:`g^\chi=\partial_{\omega^\chi}\log Z_{\rm out}`, :math:`g^z=\partial_{\omega^z}\log Z_{\rm out}` and
their diagonal derivatives are the generated kernels of :mod:`attnlimits.derivations.slr.bayes_optimal`
(``bo_L{L}_gout``) — not retyped here.  One iteration (uniform variances, damping ``d``):

.. math::
   \omega^\chi&=Xk/\sqrt D-V_kg^\chi_{\rm old},\qquad \omega^z=Xv/\sqrt D-V_vg^z_{\rm old},\\
   a_b&=-\tfrac1D\sum_{\mu\ell}\partial_{\omega^b} g^b_{\mu\ell},\qquad
   B_b=\tfrac1{\sqrt D}\sum_{\mu\ell}x_{\mu\ell}g^b_{\mu\ell}+a_b\hat b,\qquad
   \hat A_k=a_k+\frac{N\nu}D,\quad\hat A_v=a_v,\\
   \hat b&\leftarrow(1-d)\hat b+d\,\frac{B_b}{1+\hat A_b},\qquad V_b\leftarrow(1-d)V_b+d\,\frac1{1+\hat A_b}.

The term :math:`N\nu/D` in :math:`\hat A_k` (a prior precision, not in :math:`B_k`): the spiked law of a sequence is
:math:`\mathcal N(X)\,\frac1L\sum_\varepsilon e^{\sqrt\nu\chi_\varepsilon-\nu\|k\|^2/(2D)}`, normalised for
every key; the factor :math:`e^{-\nu\|k\|^2/(2D)}` is Gaussian in :math:`k` and joins the prior (the state
evolution hides it in the self-overlap :math:`Q_k=1`).  The channel term alone makes
:math:`-\partial g^\chi\ge0` fail (:math:`\log Z_{\rm out}` is convex in :math:`\omega^\chi`); with it,
:math:`\mathbb E\hat A_k=\alpha\nu\,\mathbb E\sum_\ell\pi_\ell^2=\hat q_k`, the Nishimori identity.

The cross derivatives :math:`\partial g^\chi/\partial\omega^z` vanish in expectation (the reflection
symmetry of §5 makes :math:`g^\chi` even and :math:`g^z` odd in :math:`(z,y)`) and are dropped.

Empirical state evolution and Nishimori diagnostics, recorded per iteration: :math:`m_b=\hat b\cdot b^*/D`,
:math:`q_b=\|\hat b\|^2/D`, :math:`1-V_b`, :math:`\hat A_b`; at the Bayes-optimal fixed point
:math:`m_b=q_b=1-V_b` and :math:`\hat A_b=\hat q_b` of the state evolution.

The test predictor is the posterior-mean predictor
:math:`\hat y=\sum_\varepsilon\mathrm{softmax}(\sqrt\nu X\hat k/\sqrt D)_\varepsilon\,(X\hat v/\sqrt D)_\varepsilon`
(§11); :func:`gamp_on_generated` measures its test error on fresh sequences.

Users can run :func:`gamp` on their own data: ``X`` of shape (N, L, D) (tokens with i.i.d.
standard Gaussian coordinates apart from the spike), ``y`` of shape (N,).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, NamedTuple
from attnlimits.symbolic.options import resolve_options

import numpy as np
import torch

from attnlimits.verify.torch_device import resolve_device

__all__ = ["gamp", "gamp_on_generated", "bo_predict", "gamp_max", "gamp_on_generated_max", "bo_predict_max"]


def _kernels(L):
    from .bo_kernels import bo_module

    mod = bo_module([L])
    return getattr(mod, f"bo_L{L}_gout_terms"), getattr(mod, f"bo_L{L}_gout")


def _channel(L, y, omx, omz, Vk, Vv, nu, delta):
    terms, gout = _kernels(L)
    yn = y.detach().cpu().numpy()
    ox = [omx[:, l].detach().cpu().numpy() for l in range(L)]
    oz = [omz[:, l].detach().cpu().numpy() for l in range(L)]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        A = terms(yn, *ox, *oz, Vk, Vv, nu, delta)
        Mx = np.max(np.stack([np.broadcast_to(a, yn.shape) for a in A]), axis=0)
        out = gout(yn, *ox, *oz, Vk, Vv, nu, delta, Mx)
    return _split_channel(out, yn, omx, L, "GAMP")


def _split_channel(out, yn, omx, L, what):
    """Generated channel outputs (4L arrays over N samples) → four (N, L) tensors on ``omx``'s device;
    non-finite values raise (the message names ``what`` and the remedy)."""
    arr = np.stack([np.broadcast_to(o, yn.shape) for o in out], axis=1)  # (N, 4L)
    if not np.all(np.isfinite(arr)):
        raise FloatingPointError(f"{what}: non-finite channel functions; try stronger damping (smaller --damping)")
    t = torch.as_tensor(arr, dtype=omx.dtype, device=omx.device)
    return t[:, :L], t[:, L:2 * L], t[:, 2 * L:3 * L], t[:, 3 * L:]


def _data(X, y, delta, device):
    """The device and the data as float64 tensors on it, checked: X (N, L, D), y (N,), Δ > 0."""
    dev = resolve_device(device)
    X = torch.as_tensor(X, dtype=torch.float64, device=dev)
    y = torch.as_tensor(y, dtype=torch.float64, device=dev)
    if X.ndim != 3 or y.shape != (X.shape[0],):
        raise ValueError(f"X must have shape (N, L, D) and y shape (N,); got {tuple(X.shape)} and {tuple(y.shape)}")
    if not delta > 0:
        raise ValueError(f"delta must be > 0, got {delta}")
    return dev, X, y


@dataclass(frozen=True)
class GampOptions:
    """The iteration of :func:`gamp` / :func:`gamp_max`: at most ``iterations`` steps, weight ``damping`` of the
    new iterate, stop when the undamped map moves the overlaps less than ``tol``."""

    iterations: int = 60
    damping: float = 0.5
    tol: float = 1e-7


class _GampData(NamedTuple):
    """The data as GAMP uses them: X flattened to (N·L, D), its sizes and device."""

    Xf: Any
    N: int
    L: int
    D: int
    dev: Any


def _gamp_options(options, overrides, default: GampOptions) -> GampOptions:
    return resolve_options(GampOptions, default if options is None else options, overrides)


def gamp(X, y, nu: float, delta: float, *, k_star=None, v_star=None, init: str = "zero",
         generator: torch.Generator | None = None, device="auto", options: GampOptions | None = None, progress=None,
         **overrides) -> dict:
    r"""Run GAMP on data ``X`` (N, L, D) and labels ``y`` (N,) of spiked-SLR.

    Parameters
    ----------
    nu, delta : float
        Spike strength ν and label noise Δ (> 0) of the model.
    iterations, damping, tol :
        At most ``iterations`` steps; weight ``damping`` of the new iterate; stop when the overlap
        change ``max |Δq|`` is below ``tol`` (fields of :class:`GampOptions` ``options``; keywords override).
    k_star, v_star : tensor, optional
        The truth (for the diagnostics ``m_k``, ``m_v``).
    init : {"zero", "random"}
        Start from :math:`\hat k=\hat v=0` (uninformed) or from small random vectors (``generator``).

    Returns
    -------
    dict
        ``k_hat``, ``v_hat`` (D,), ``V_k``, ``V_v``, ``Ahat_k``, ``Ahat_v``, overlaps ``q_k, q_v``
        (and ``m_k, m_v`` with the truth), ``iterations``, ``converged``, ``history`` (one dict per
        iteration: the empirical state evolution).
    """
    dev, X, y = _data(X, y, delta, device)
    N, L, D = X.shape
    Xf = X.reshape(N * L, D)
    k = torch.zeros(D, dtype=torch.float64, device=dev)
    v = torch.zeros(D, dtype=torch.float64, device=dev)
    if init == "random":
        gen = generator if generator is not None else torch.Generator(device=dev).manual_seed(0)
        k = 1e-3 * torch.randn(D, generator=gen, dtype=torch.float64, device=dev)
        v = 1e-3 * torch.randn(D, generator=gen, dtype=torch.float64, device=dev)
    lam_k = N * float(nu) / D  # prior precision from the normalisation of the spiked law (module docstring)
    channel = lambda omx, omz, Vx, Vz: _channel(L, y, omx, omz, Vx, Vz, float(nu), float(delta))  # noqa: E731
    return _gamp_iterations(_GampData(Xf, N, L, D, dev), channel, lam_k, k, v,
                            options=_gamp_options(options, overrides, GampOptions()), truth=(k_star, v_star),
                            progress=progress, label="GAMP")


def _gamp_iterations(data: _GampData, channel, lam_k, k, v, *, options: GampOptions, truth, progress, label):
    """The GAMP iteration shared by :func:`gamp` and :func:`gamp_max`: Onsager-corrected fields, the
    output channel ``channel(ω^χ, ω^z, V_k, V_v) → (g_χ, g_z, ∂g_χ, ∂g_z)``, damping, Gaussian input
    updates with the extra key precision ``lam_k``; stops when q_k, q_v move less than ``tol``."""
    Xf, N, L, D, dev = data
    iterations, damping, tol = options.iterations, options.damping, options.tol
    k_star, v_star = truth
    root = math.sqrt(D)
    Vk, Vv = 1.0, 1.0
    gx_old = torch.zeros(N, L, dtype=torch.float64, device=dev)
    gz_old = torch.zeros_like(gx_old)
    row_norm = float((Xf * Xf).sum() / (N * L * D))  # ‖x‖²/D, ≈ 1
    hist = []
    converged = False
    q_prev = None
    Ak = Av = 0.0
    for t in range(int(iterations)):
        omx = (Xf @ k).reshape(N, L) / root - Vk * row_norm * gx_old
        omz = (Xf @ v).reshape(N, L) / root - Vv * row_norm * gz_old
        gx, gz, dgx, dgz = channel(omx, omz, Vk * row_norm, Vv * row_norm)
        if t > 0:
            gx = damping * gx + (1 - damping) * gx_old
            gz = damping * gz + (1 - damping) * gz_old
        # key precision: the channel part plus lam_k (spiked: N ν / D from the normalisation of the
        # spiked law, exp(√ν χ_ε − ν‖k‖²/(2D)) per sequence, a Gaussian factor in k; max-SLR: 0)
        Ak_ch = float(-dgx.sum() / D) * row_norm
        Av = float(-dgz.sum() / D) * row_norm
        Bk = (gx.reshape(-1) @ Xf) / root + Ak_ch * k
        Bv = (gz.reshape(-1) @ Xf) / root + Av * v
        Ak = Ak_ch + lam_k
        if not (Ak > -1 and Av > -1):
            raise FloatingPointError(f"GAMP: negative precision (A_k = {Ak:.3g}, A_v = {Av:.3g}) at iteration {t}; "
                                     "try stronger damping")
        k_new, v_new = Bk / (1 + Ak), Bv / (1 + Av)
        k = damping * k_new + (1 - damping) * k if t > 0 else k_new
        v = damping * v_new + (1 - damping) * v if t > 0 else v_new
        Vk = damping / (1 + Ak) + (1 - damping) * Vk if t > 0 else 1 / (1 + Ak)
        Vv = damping / (1 + Av) + (1 - damping) * Vv if t > 0 else 1 / (1 + Av)
        gx_old, gz_old = gx, gz
        rec = {"iteration": t + 1, "q_k": float(k @ k / D), "q_v": float(v @ v / D), "one_minus_V_k": 1 - Vk,
               "one_minus_V_v": 1 - Vv, "Ahat_k": Ak, "Ahat_v": Av}
        if k_star is not None:
            rec["m_k"] = float(k @ torch.as_tensor(k_star, dtype=torch.float64, device=dev) / D)
        if v_star is not None:
            rec["m_v"] = float(v @ torch.as_tensor(v_star, dtype=torch.float64, device=dev) / D)
        for key in ("q_k", "q_v"):
            if not math.isfinite(rec[key]):
                raise FloatingPointError(f"GAMP diverged at iteration {t + 1}; try stronger damping")
        hist.append(rec)
        if progress:
            progress(f"{label} iteration {t + 1}: q_k = {rec['q_k']:.5f}, q_v = {rec['q_v']:.5f}")
        qs = (rec["q_k"], rec["q_v"])
        if q_prev is not None:
            # the residual of the *undamped* map: a damped step moves q by about `damping` times it, so a
            # tiny damping cannot fake convergence by taking tiny steps
            residual = max(abs(a - b) for a, b in zip(qs, q_prev)) / damping
            rec["residual"] = residual
            if residual < tol:
                converged = True
                break
        q_prev = qs
    out = {"k_hat": k, "v_hat": v, "V_k": Vk, "V_v": Vv, "Ahat_k": Ak, "Ahat_v": Av, "iterations": len(hist),
           "converged": converged, "residual": hist[-1].get("residual", math.nan), "history": hist,
           **{kk: hist[-1][kk] for kk in ("q_k", "q_v")}}
    for kk in ("m_k", "m_v"):
        if kk in hist[-1]:
            out[kk] = hist[-1][kk]
    return out


def bo_predict(X, k_hat, v_hat, nu: float):
    r"""Posterior-mean predictor :math:`\sum_\varepsilon\mathrm{softmax}(\sqrt\nu\hat\chi)_\varepsilon\hat z_\varepsilon` (§11)."""
    D = X.shape[-1]
    root = math.sqrt(D)
    chi = X @ k_hat / root
    z = X @ v_hat / root
    p = torch.softmax(math.sqrt(nu) * chi, dim=-1)
    return (p * z).sum(-1)


def gamp_on_generated(nu: float, L: int, alpha: float, delta: float, D: int, seed: int, *, damping: float = 0.5,
                      iterations: int = 60, n_test: int = 20000, device="auto", tol: float = 1e-7) -> dict:
    """GAMP on spiked-SLR data generated by :func:`attnlimits.verify.slr.sample_sequences` (teacher of docs/slr.md §2).

    Returns the GAMP result (without the vectors) plus ``test_error`` ± ``test_error_se`` (excess metric,
    ``n_test`` fresh sequences) and the Nishimori gaps ``m_k − q_k``, ``m_v − q_v``.
    """
    from .samplers import sample_sequences

    dev = resolve_device(device)
    gen = torch.Generator(device=dev).manual_seed(int(seed))
    N = int(round(alpha * D))
    data = sample_sequences("spiked", nu, int(L), N, int(D), generator=gen, delta=delta, device=dev)
    res = gamp(data["X"], data["y"], nu, delta, iterations=iterations, damping=damping, tol=tol,
               k_star=data["k_star"], v_star=data["v_star"], device=dev)
    test = sample_sequences("spiked", nu, int(L), int(n_test), int(D), generator=gen,
                            teacher=(data["k_star"], data["v_star"]), delta=delta, device=dev)
    pred = bo_predict(test["X"], res["k_hat"], res["v_hat"], nu)
    target = test["z_star"][torch.arange(int(n_test), device=dev), test["eps"]]
    err = (target - pred) ** 2
    out = {k: v for k, v in res.items() if k not in ("k_hat", "v_hat")}
    out.update({"test_error": float(err.mean()), "test_error_se": float(err.std() / math.sqrt(int(n_test))),
                "nishimori_gap_k": res["m_k"] - res["q_k"], "nishimori_gap_v": res["m_v"] - res["q_v"],
                "N": N, "device": str(dev)})
    return out


# =====================================================================================================
# Max-SLR (docs/slr.md §11, max-SLR paragraph)
# =====================================================================================================


def _max_channel(L, nu, y, omx, omz, Vk, Vv, delta, inner):
    r"""g^χ, g^z and diagonal derivatives of max-SLR from the generated kernels (``bomax_L{L}_*``) and the
    inner rule (:func:`attnlimits.numeric.slr.bo_state_evolution.max_locations`), at GAMP's variances."""
    from attnlimits.numeric.slr.bo_state_evolution import location_scaling, max_locations

    from .bo_kernels import bo_module

    mod = bo_module([L], "max")
    yn = y.detach().cpu().numpy()
    ox = [omx[:, l].detach().cpu().numpy() for l in range(L)]
    oz = [omz[:, l].detach().cpu().numpy() for l in range(L)]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        P, dP, ddP, _ = max_locations(mod, inner, L, nu, ox, Vk)
        Bv = [np.broadcast_to(b, yn.shape) for b in getattr(mod, f"bomax_L{L}_gout_value_logdens")(yn, *oz, Vv, delta)]
        _, E = location_scaling(P, Bv)
        t = [P[e] * E[e] for e in range(L)]
        u = [dP[e * L + l] * E[e] for e in range(L) for l in range(L)]
        uu = [ddP[e * L + l] * E[e] for e in range(L) for l in range(L)]
        out = getattr(mod, f"bomax_L{L}_gout")(yn, *oz, Vv, delta, *t, *u, *uu)
    return _split_channel(out, yn, omx, L, "GAMP (max-SLR)")


def gamp_max(X, y, nu: float, delta: float, *, k_star=None, v_star=None, inner_points: int = 24, device="auto",
             options: GampOptions | None = None, progress=None, **overrides) -> dict:
    r"""GAMP for max-SLR on data ``X`` (N, L, D), labels ``y`` (N,); ``nu`` finite or ``math.inf``.

    Same iteration as :func:`gamp` with the max-SLR channel
    :math:`Z_{\rm out}=\sum_\varepsilon p_\varepsilon(\omega^\chi;V_k)\mathcal N(y;\omega^z_\varepsilon,V_v+\Delta^2)`,
    :math:`p_\varepsilon=\mathbb E_{h\sim\mathcal N(\omega^\chi,V_kI)}\mathrm{softmax}(\nu h)_\varepsilon`
    (generated kernels ``bomax_L{L}_gout*`` on the inner Gauss–Hermite rule of ``inner_points`` nodes
    per dimension).  No extra key precision: the max-SLR law of :math:`X` is exactly
    :math:`\mathcal N(0,I)` for every key (``P_out`` is normalised, §3.3), so the prior of :math:`k` is
    the bare :math:`\mathcal N(0,I_D)`.  Returns the same keys as :func:`gamp`.  ``options``: as in :func:`gamp`,
    with 80 iterations by default.
    """
    from attnlimits.numeric.slr.bo_state_evolution import make_inner_rule

    dev, X, y = _data(X, y, delta, device)
    N, L, D = X.shape
    inner = make_inner_rule([L], nu, int(inner_points), _finer=False)
    Xf = X.reshape(N * L, D)
    k = torch.zeros(D, dtype=torch.float64, device=dev)
    v = torch.zeros(D, dtype=torch.float64, device=dev)
    channel = lambda omx, omz, Vx, Vz: _max_channel(L, float(nu), y, omx, omz, Vx, Vz, float(delta), inner)  # noqa: E731
    return _gamp_iterations(_GampData(Xf, N, L, D, dev), channel, 0.0, k, v,
                            options=_gamp_options(options, overrides, GampOptions(iterations=80)),
                            truth=(k_star, v_star), progress=progress, label="GAMP (max)")


def bo_predict_max(X, k_hat, v_hat, V_k: float, nu: float, *, inner_points: int = 24):
    r"""Posterior-mean predictor of max-SLR: :math:`\sum_\varepsilon p_\varepsilon(\hat\chi;V_k)\hat z_\varepsilon`,
    :math:`p_\varepsilon=\mathbb E_{h\sim\mathcal N(\hat\chi,V_kI)}\mathrm{softmax}(\nu h)_\varepsilon` (§11; the
    generated inner integrands, not a softmax of the posterior-mean key)."""
    from attnlimits.numeric.slr.bo_state_evolution import make_inner_rule, max_locations

    from .bo_kernels import bo_module

    L, D = X.shape[-2], X.shape[-1]
    root = math.sqrt(D)
    chi = (X @ k_hat / root).detach().cpu().numpy()
    z = X @ v_hat / root
    inner = make_inner_rule([L], nu, int(inner_points), _finer=False)
    P, _, _, _ = max_locations(bo_module([L], "max"), inner, L, float(nu), [chi[:, l] for l in range(L)], float(V_k))
    p = torch.as_tensor(np.stack(P, axis=1), dtype=z.dtype, device=z.device)
    return (p * z).sum(-1)


def gamp_on_generated_max(nu: float, L: int, alpha: float, delta: float, D: int, seed: int, *, damping: float = 0.5,
                          iterations: int = 80, n_test: int = 20000, device="auto", tol: float = 1e-7,
                          inner_points: int = 24) -> dict:
    """GAMP on max-SLR data (:func:`attnlimits.verify.slr.sample_sequences`, ``nu`` finite or ``math.inf``), as
    :func:`gamp_on_generated`: test error of :func:`bo_predict_max` on ``n_test`` fresh sequences."""
    from .samplers import sample_sequences

    dev = resolve_device(device)
    gen = torch.Generator(device=dev).manual_seed(int(seed))
    N = int(round(alpha * D))
    data = sample_sequences("max", nu, int(L), N, int(D), generator=gen, delta=delta, device=dev)
    res = gamp_max(data["X"], data["y"], nu, delta, iterations=iterations, damping=damping, tol=tol,
                   k_star=data["k_star"], v_star=data["v_star"], inner_points=inner_points, device=dev)
    test = sample_sequences("max", nu, int(L), int(n_test), int(D), generator=gen,
                            teacher=(data["k_star"], data["v_star"]), delta=delta, device=dev)
    pred = bo_predict_max(test["X"], res["k_hat"], res["v_hat"], res["V_k"], nu, inner_points=inner_points)
    target = test["z_star"][torch.arange(int(n_test), device=dev), test["eps"]]
    err = (target - pred) ** 2
    out = {k: v for k, v in res.items() if k not in ("k_hat", "v_hat")}
    out.update({"test_error": float(err.mean()), "test_error_se": float(err.std() / math.sqrt(int(n_test))),
                "nishimori_gap_k": res["m_k"] - res["q_k"], "nishimori_gap_v": res["m_v"] - res["q_v"],
                "N": N, "device": str(dev)})
    return out
