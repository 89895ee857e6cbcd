r"""Ridge ERM of single-location regression at finite :math:`D`, batched over seeds (``docs/slr.md`` §12).

Several independent problems (teacher, training set, initialisation; one per *seed*) are trained
at once: the parameters are stacked, ``theta`` of shape ``(S, P)`` with ``P = 2D`` (+1 for a
learned scalar), the data of shape ``(S, N_L, L, D)``, and one forward/backward pass evaluates the
``S`` objectives and their gradients together (the objectives do not interact, so the gradient of
their sum is the stack of their gradients).

Objective (docs/slr.md §2, ``half_sum``), per seed:

.. math::

    \mathcal L(k,v,c)=\tfrac12\sum_{\mu=1}^N\big(y_\mu-\sigma(X_\mu k/\sqrt D;c)^\top X_\mu v/\sqrt D\big)^2
    +\tfrac\lambda2\big(\|k\|^2+\|v\|^2\big),

learned scalars (``erf_learned``'s :math:`c`, ``softplus_norm_bias``'s :math:`b`) trained jointly and
unpenalised (§12).  Any per-sample loss :math:`\rho` of the residual replaces :math:`\tfrac12r^2` (``loss``:
``huber:δ``, ``pseudo_huber:δ``, ``logcosh`` or a formula in ``r``, printed for torch from its SymPy expression) and
the ridge may differ on the two blocks (``lam`` on k, ``lam_v`` on v): see :func:`train_erm`.

Optimisers
----------
``lbfgs``
    Full-batch L-BFGS with the strong-Wolfe line search of Nocedal & Wright (Alg. 3.5/3.6, the
    cubic-interpolation version of ``torch.optim.LBFGS``), float64. Summing the seeds' objectives
    and running one L-BFGS would couple them (one line search, mixed curvature pairs). Here each
    seed runs its *own* L-BFGS — curvature pairs, two-loop recursion, line search, step
    acceptance and stopping rule — written as a Python coroutine that yields the point it wants
    evaluated; the driver collects the points of all seeds still running and evaluates them in
    one batched pass. A seed's iterates are therefore exactly those of a single-seed run (up to
    floating-point reassociation in the batched matrix products). Stops on ``‖∇L‖₂ ≤ tol_grad``
    (default 1e-8, status ``converged``), on a stalled objective (for 10 iterations in a row no
    decrease beyond 8 ulp of :math:`\mathcal L` and no new low of the gradient norm, or a line
    search without decrease: ``stalled``) or after ``max_iter`` iterations (``max_iter``). Near the
    minimiser the decrease of :math:`\mathcal L` (a sum over :math:`N` samples) drops below its
    round-off while :math:`\|\nabla\mathcal L\|` is still ~1e-7; the line search therefore allows a
    round-off slack of 64 ulp in its sufficient-decrease tests (approximate Wolfe conditions of
    Hager & Zhang) and lets the curvature condition decide, which is what reaches 1e-8.
``gd``
    Full-batch gradient descent :math:`\theta\leftarrow\theta-\eta\nabla\mathcal L` with
    :math:`\eta=\texttt{lr}\cdot D/N` (``lr`` is dimensionless: the Hessian of :math:`\mathcal L` scales like
    :math:`N/D`); records :math:`\eta`, the iterations and the final gradient norm; status
    ``converged`` (gradient tolerance), ``max_iter`` or ``diverged``.
``adam``, ``sgd``
    Minibatch (``batch`` sequences per step and seed, per-seed index streams) on
    :math:`\tfrac NB\sum_{\mu\in\text{batch}}\tfrac12(y_\mu-f_\mu)^2+\tfrac\lambda2\|\theta\|^2`, divided by
    :math:`N`; Adam is element-wise, so stacking the seeds is exact. ``sgd`` uses :math:`\eta=\texttt{lr}\cdot D/N`.

Initialisation (§12): ``informed`` puts :math:`k=m_k^{\rm pop}k^*`, :math:`v=m_v^{\rm pop}v^*` (and the learned
scalar at its population optimum) from :func:`attnlimits.numeric.slr.population.optimal_population_risk`; softmax uses
the exact :math:`m_k=c_\nu`, :math:`m_v=1` (§7). When the optimum is a limit (softmax at max-SLR
:math:`\nu=\infty`, :math:`b\to-\infty`) the start is capped (:math:`m_k\le3`, the RS start of §10.6; :math:`|b|\le30`)
and the row says so. ``random``: :math:`k,v\sim\mathcal N(0,\texttt{init\_scale}^2I_D)`, a separate, labelled
experiment.

Reports (§12), per seed and as mean ± sd over seeds: ``E_test`` on ``n_test`` fresh sequences of the
same teacher (mean ± SE over 20 batches, :func:`attnlimits.verify.slr.direct_risk`); ``E_test_overlaps``,
the same error computed from the seven learned overlaps by the population formula of §6.1
(:func:`attnlimits.numeric.slr.population.population_risk_general`; exact given the weights when the teacher is
orthonormal, claim C5); the seven overlaps; the distance to the manifold
:math:`\sqrt{m_{kv^*}^2+m_{vk^*}^2+q_{kv}^2}`; the objective, the training MSE; optimiser status,
iterations, evaluations and final gradient norm.

Randomness: seed index ``s`` under master ``seed`` has base ``draw_seed(seed, s)`` and streams
``draw_generator(base, j)`` — ``j = 0`` teacher, ``1`` random init, ``2`` test sequences, ``3``
minibatch order, ``100 + L`` training sequences of length ``L``. All draws are on CPU generators
and then moved to the device, so a run gives the same data on every device, and training seed
``s`` alone (``seed_indices=[s]``) reproduces seed ``s`` of a batched run. The same ``(seed, s)``
gives the same teacher and data for every activation and λ (paired comparisons).

Variable length (§3.4): the training set is stratified, :math:`N_L=` the largest-remainder rounding of
:math:`P(L)N` sequences of each length (the same split for every seed).

Memory: the training data take ``S·N·L·D`` floats; a run that does not fit is split into seed
batches, and one that cannot fit one seed is refused with the number of bytes needed.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import sys
import textwrap
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping
from attnlimits.symbolic.options import resolve_options

import numpy as np
import torch

from attnlimits.symbolic.result import Command, InputError, Param
from attnlimits.derivations.slr.result import TRAIN_COMMAND  # noqa: F401  (declared with the result)
from attnlimits.verify._flags import caption, measured_points, seed_flag, summary_flag, theory_line
from attnlimits.verify._torchutil import draw_generator, draw_seed
from attnlimits.verify._torchutil import resolve_device

from .estimators import ACTIVATIONS, direct_risk, torch_attention_weights
from .samplers import c_nu, distance_to_manifold, make_teacher, overlaps, sample_sequences


def _extra_scalars():
    """Activation name → name of its extra scalar, and the names whose scalar is learned (the registry's)."""
    from attnlimits.derivations.slr import ACTIVATIONS as REG

    extra = {a.name: a.extra_name for a in REG.values() if a.extra is not None}
    return extra, tuple(a.name for a in REG.values() if a.extra_learned)


_EXTRA, _LEARNED = _extra_scalars()

__all__ = [
    "MULTISTART_INITS",
    "train_multistart",
    "OPTIMIZERS",
    "OVERLAP_KEYS",
    "TRAIN_COMMAND",
    "TrainResult",
    "batched_lbfgs",
    "length_split",
    "bo_learning_curve",
    "memory_needed",
    "plot_learning_curve",
    "run_train",
    "summarize",
    "train_erm",
]

OPTIMIZERS = ("lbfgs", "gd", "adam", "sgd")
OVERLAP_KEYS = ("m_k", "q_k", "m_v", "q_v", "m_kvstar", "m_vkstar", "q_kv")
#: Default λ grid of the RS tuning (docs/slr.md §12: log grid 1e-3 … 10, at least 9 points).
LAMBDA_GRID = tuple(float(x) for x in np.geomspace(1e-3, 10.0, 9))
_DTYPES = {"float64": torch.float64, "float32": torch.float32}
_STALL_ULP = 8.0
_STALL_ITERS = 10
#: Round-off allowance of the line search, in ulp of the objective (see :func:`_strong_wolfe`).
_ROUNDOFF_ULP = 64.0


# =============================================================================================
# small helpers
# =============================================================================================


def _law(L) -> list[tuple[int, float]]:
    """Length law: int → [(L, 1)]; list → uniform over it; dict → itself (sorted)."""
    if isinstance(L, Mapping):
        items = [(int(k), float(p)) for k, p in L.items() if float(p) > 0]
    elif isinstance(L, (list, tuple)) and L and all(isinstance(x, tuple) for x in L):
        items = [(int(a), float(p)) for a, p in L]
    elif isinstance(L, (list, tuple)):
        vals = [int(x) for x in L]
        if len(set(vals)) != len(vals):
            raise InputError(f"--L has a repeated length: {list(L)}")
        items = [(x, 1.0 / len(vals)) for x in vals]
    else:
        items = [(int(L), 1.0)]
    if not items or any(Lv < 1 for Lv, _ in items):
        raise InputError(f"--L must be positive integers, got {L!r}")
    if abs(sum(p for _, p in items) - 1.0) > 1e-9:
        raise InputError(f"length probabilities must sum to 1, got {L!r}")
    return sorted(items)


def length_split(N: int, law) -> list[tuple[int, int]]:
    """Stratified split ``[(L, N_L)]`` of ``N`` sequences by the law (largest remainder)."""
    law = _law(law)
    raw = [N * p for _, p in law]
    base = [int(math.floor(r)) for r in raw]
    rest = N - sum(base)
    order = sorted(range(len(law)), key=lambda i: -(raw[i] - base[i]))
    for i in order[:rest]:
        base[i] += 1
    return [(Lv, n) for (Lv, _), n in zip(law, base) if n > 0]


def _law_arg(law):
    """The length argument of :mod:`attnlimits.verify.slr` (int, or dict for variable length)."""
    return law[0][0] if len(law) == 1 else {Lv: p for Lv, p in law}


def _setting(model, nu, law):
    from attnlimits.verify.slr.theory import make_setting

    return make_setting(model, nu, {Lv: p for Lv, p in law})


def memory_needed(S: int, N: int, L_mean: float, D: int, dtype: str = "float64") -> int:
    """Bytes of the training data of ``S`` seeds: ``S·N·L·D`` floats, plus one seed's float64
    draw buffer and 10% for the projections and gradients."""
    item = 8 if dtype == "float64" else 4
    x = S * N * L_mean * D
    return int(1.1 * x * item + N * L_mean * D * 8)


def _available_bytes(dev: torch.device) -> int:
    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        return int(free)
    from ._guards import available_bytes

    return available_bytes()


def _gb(x: float) -> str:
    return f"{x / 2**30:.3g} GiB"


def _mean_sd_se(vals) -> tuple[float | None, float | None, float | None]:
    v = np.asarray([x for x in vals if x is not None and math.isfinite(x)], dtype=float)
    if v.size == 0:
        return None, None, None
    if v.size == 1:
        return float(v[0]), None, None
    sd = float(v.std(ddof=1))
    return float(v.mean()), sd, sd / math.sqrt(v.size)


# =============================================================================================
# informed initialisation
# =============================================================================================


@functools.lru_cache(maxsize=64)
def _population_start(name: str, model: str, nu: float, law: tuple, extra) -> dict:
    """(m_k, m_v, extra, note) of the population optimum used for the informed start."""
    if name == "softmax":
        if math.isinf(nu):
            return {"m_k": 3.0, "m_v": 1.0, "extra": None,
                    "note": "population optimum is the limit m_k→∞; start capped at m_k=3"}
        return {"m_k": c_nu(model, nu), "m_v": 1.0, "extra": None, "note": "exact (§7)"}
    from attnlimits.verify.slr.theory import optimal_population_risk

    setting = _setting(model, nu, list(law))
    fixed = extra if (name in _EXTRA and name not in _LEARNED) else None
    opt = optimal_population_risk(name, setting, extra=fixed)
    a = opt.argmin
    m_k = float(a["m_k"])
    m_v = float(a["m_v"])
    ex = None
    note = "population optimum"
    if name in _LEARNED:
        ex = float(a.get("c", a.get("b", 0.0)))
    if opt.limit:
        if m_k > 3.0 * max(c_nu(model, nu) if not math.isinf(nu) else 1.0, 1.0):
            m_k = 3.0 * max(c_nu(model, nu) if not math.isinf(nu) else 1.0, 1.0)
        if ex is not None and abs(ex) > 30:
            ex = math.copysign(30.0, ex)
        note = f"population optimum is a limit ({opt.limit_reason}); start capped"
    if name == "linear_pure" and abs(m_k) < 1e-12:
        m_k, m_v = 1.0, m_v
    return {"m_k": m_k, "m_v": m_v, "extra": ex, "note": note}


# =============================================================================================
# the batched problem
# =============================================================================================


class _Project(torch.autograd.Function):
    r"""``P = X W`` for data ``X`` (S, M, D) without gradient and weights ``W`` (S, D, 2).

    The backward pass forms :math:`\partial W=(G^\top X)^\top` with ``X`` read row-major:
    ``bmm(Xᵀ, G)``, autograd's choice, was 3–4× slower on CPU (both are memory-bound)."""

    @staticmethod
    def forward(ctx, X, W):
        ctx.save_for_backward(X)
        return torch.bmm(X, W)

    @staticmethod
    def backward(ctx, G):
        (X,) = ctx.saved_tensors
        return None, torch.bmm(G.transpose(1, 2).contiguous(), X).transpose(1, 2)


@dataclass
class _Problem:
    """Stacked data and objective of ``S`` independent seeds."""

    name: str
    D: int
    lam: float
    groups: list  # [(X (S,n,L,D), y (S,n))]
    learn_extra: bool
    fixed_extra: float | None
    dtype: torch.dtype
    device: torch.device
    N: int
    evals: int = 0
    #: the per-sample loss of the residual (:func:`attnlimits.derivations.slr.losses.parse_loss`, canonical name)
    loss: str = "square"
    #: the ridge on v when it differs from the one on k (``lam``)
    lam_v: float | None = None

    @property
    def P(self) -> int:
        return 2 * self.D + (1 if self.learn_extra else 0)

    def split(self, theta):
        D = self.D
        k, v = theta[:, :D], theta[:, D:2 * D]
        extra = theta[:, 2 * D] if self.learn_extra else None
        return k, v, extra

    def _ridge(self, k, v):
        if self.lam_v is None:
            return 0.5 * self.lam * ((k * k).sum(1) + (v * v).sum(1))
        return 0.5 * (self.lam * (k * k).sum(1) + self.lam_v * (v * v).sum(1))

    def _data_term(self, theta, X, y, *, squared=False):
        """Σ_μ ρ(y_μ − f_μ) per seed (``squared``: ½Σ(y − f)² whatever the loss)."""
        S, n, L, D = X.shape
        k, v, extra = self.split(theta)
        W = torch.stack([k, v], dim=-1)  # (S, D, 2)
        proj = _Project.apply(X.reshape(S, n * L, D), W).reshape(S, n, L, 2) / math.sqrt(D)
        chi, z = proj[..., 0], proj[..., 1]
        e = extra[:, None, None] if extra is not None else self.fixed_extra
        sig = torch_attention_weights(self.name, chi, e)
        f = (sig * z).sum(dim=-1)
        if squared or self.loss == "square":
            return 0.5 * ((y - f) ** 2).sum(dim=1)
        return _loss_module(self.loss).rho_value(y - f)[0].sum(dim=1)

    def value_and_grad(self, theta: torch.Tensor, *, with_grad: bool = True):
        """Per-seed objectives (S,) and gradients (S, P)."""
        th = theta.detach().to(self.dtype).requires_grad_(with_grad)
        with torch.set_grad_enabled(with_grad):
            k, v, _ = self.split(th)
            loss = self._ridge(k, v)
            for X, y in self.groups:
                loss = loss + self._data_term(th, X, y)
            self.evals += 1
            if not with_grad:
                return loss.detach(), None
            (g,) = torch.autograd.grad(loss.sum(), th)
        return loss.detach(), g.detach()

    def minibatch_grad(self, theta: torch.Tensor, idx: list):
        """Gradient of the minibatch estimate of L/N (idx: per group (S, B_L) indices)."""
        th = theta.detach().requires_grad_(True)
        k, v, _ = self.split(th)
        loss = self._ridge(k, v)
        S = th.shape[0]
        rows = torch.arange(S, device=th.device)[:, None]
        for (X, y), ix in zip(self.groups, idx):
            if ix is None:
                continue
            n = X.shape[1]
            loss = loss + (n / ix.shape[1]) * self._data_term(th, X[rows, ix], y[rows, ix])
        self.evals += 1
        (g,) = torch.autograd.grad(loss.sum() / self.N, th)
        return loss.detach(), g.detach()

    def train_mse(self, theta):
        """Per-seed mean squared training residual Σ(y−f)²/N."""
        with torch.no_grad():
            tot = torch.zeros(theta.shape[0], dtype=self.dtype, device=self.device)
            for X, y in self.groups:
                tot = tot + 2.0 * self._data_term(theta.to(self.dtype), X, y, squared=True)
        return tot / self.N


@functools.lru_cache(maxsize=16)
def _loss_module(name: str):
    """The torch module of the loss ``name`` (ρ, ρ′, ρ″ printed from its SymPy expression; autograd differentiates
    ρ in training)."""
    from attnlimits.derivations.slr.losses import loss_kernels

    return loss_kernels(name).module("torch")


def resolve_loss(text) -> str:
    """The canonical name of the loss ``text`` (preset or formula in r); :class:`InputError` if it is not one."""
    from attnlimits.derivations.slr.losses import parse_loss

    return parse_loss(None if text is None else str(text)).name


# =============================================================================================
# L-BFGS, one coroutine per seed
# =============================================================================================


def _cubic(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic interpolating (x1, f1, g1), (x2, f2, g2), clipped to ``bounds``
    (Nocedal & Wright eq. 3.59; as in torch.optim.lbfgs)."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    if x1 == x2:
        # a degenerate interval: torch's tensor arithmetic gives NaN here and falls through to the
        # midpoint; Python floats raise ZeroDivisionError (found at linear_uncentred, alpha = 11.6,
        # D = 800: a traceback ended `train_erm`)
        return (lo + hi) / 2.0
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2sq = d1 * d1 - g1 * g2
    if d2sq >= 0:
        d2 = math.sqrt(d2sq)
        if x1 <= x2:
            pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        if not math.isfinite(pos):
            return (lo + hi) / 2.0
        return min(max(pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-12, max_ls=25, eps_f=0.0):
    r"""Strong-Wolfe line search as a generator: yields trial points ``x + t d``, receives
    ``(f, g)``; returns ``(f_new, g_new, t, evals, wolfe)`` (port of ``torch.optim.lbfgs._strong_wolfe``,
    Nocedal & Wright Alg. 3.5–3.6).

    ``eps_f`` is a round-off allowance in the sufficient-decrease test,
    :math:`f(x+td)\le f(x)+c_1t\,g^\top d+\epsilon_f` (the approximate Wolfe conditions of Hager &
    Zhang, 2005): near the minimiser the decrease of a half-sum objective over ``N`` samples falls
    below its float64 round-off (about :math:`10^{-14}|f|`) while the gradient is still ~1e-7, and the
    curvature condition on :math:`g^\top d` still decides the step."""
    d_norm = float(d.abs().max())
    f_new, g_new = yield x + t * d
    evals = 1
    gtd_new = float(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if (not math.isfinite(f_new)) or f_new > f + c1 * t * gtd + eps_f or (ls_iter > 1 and f_new >= f_prev + eps_f):
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bf, bg, bgtd = [t], [f_new], [g_new], [gtd_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new, gtd_new
        f_new, g_new = yield x + t * d
        evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bf, bg, bgtd = [0.0, t], [f, f_new], [g, g_new], [gtd, gtd_new]
    if not math.isfinite(bf[-1]):
        bf[-1] = math.inf
    insuf = False
    low, high = (0, 1) if bf[0] <= bf[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        fb1 = bf[1] if math.isfinite(bf[1]) else 1e300
        t = _cubic(bracket[0], bf[0], bgtd[0], bracket[1], fb1, bgtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf = False
            else:
                insuf = True
        else:
            insuf = False
        f_new, g_new = yield x + t * d
        evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
        if (not math.isfinite(f_new)) or f_new > f + c1 * t * gtd + eps_f or f_new > bf[low] + eps_f:
            bracket[high], bf[high], bg[high], bgtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bf[0] <= bf[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bf[high], bg[high], bgtd[high] = bracket[low], bf[low], bg[low], bgtd[low]
            bracket[low], bf[low], bg[low], bgtd[low] = t, f_new, g_new, gtd_new
    return bf[low], bg[low], bracket[low], evals, done


def _lbfgs_seed(x0, state: dict, *, history=10, max_iter=5000, tol_grad=1e-8, c1=1e-4, c2=0.9):
    """One seed's L-BFGS as a coroutine: yields points, receives ``(f, g)``, returns its state.

    ``state`` is updated after every accepted step (``x``, ``f``, ``grad_norm``, ``iterations``,
    ``status``) so an interrupted run still reports the last accepted iterate."""
    x = x0.clone()
    f, g = yield x
    evals = 1
    s_hist, y_hist, rho = [], [], []
    gnorm = float(torch.linalg.vector_norm(g))
    state.update(x=x, f=f, grad_norm=gnorm, iterations=0, evals=evals, status="running")
    if not math.isfinite(f) or not math.isfinite(gnorm):
        state["status"] = "diverged"
        return state
    if gnorm <= tol_grad:
        state["status"] = "converged"
        return state
    stall = 0
    best_g = gnorm
    eps = torch.finfo(x.dtype).eps
    for it in range(1, max_iter + 1):
        # two-loop recursion
        q = -g.clone()
        alphas = []
        for s_i, y_i, r_i in zip(reversed(s_hist), reversed(y_hist), reversed(rho)):
            a = r_i * float(s_i @ q)
            q.add_(y_i, alpha=-a)
            alphas.append(a)
        if s_hist:
            gamma = float(s_hist[-1] @ y_hist[-1]) / float(y_hist[-1] @ y_hist[-1])
            d = q * gamma
            for (s_i, y_i, r_i), a in zip(zip(s_hist, y_hist, rho), reversed(alphas)):
                b = r_i * float(y_i @ d)
                d.add_(s_i, alpha=a - b)
            t = 1.0
        else:
            d = q
            t = min(1.0, 1.0 / float(g.abs().sum()))
        gtd = float(g @ d)
        if not gtd < 0:  # not a descent direction: restart from steepest descent
            s_hist, y_hist, rho = [], [], []
            d = -g.clone()
            t = min(1.0, 1.0 / float(g.abs().sum()))
            gtd = float(g @ d)
        eps_f = _ROUNDOFF_ULP * float(eps) * max(abs(f), 1.0)
        f_new, g_new, t, n_ls, wolfe = yield from _strong_wolfe(x, t, d, f, g, gtd, c1=c1, c2=c2, eps_f=eps_f)
        evals += n_ls
        gnorm_new = float(torch.linalg.vector_norm(g_new)) if math.isfinite(f_new) else math.inf
        if not (f_new < f or (f_new <= f + eps_f and (wolfe or gnorm_new < gnorm))):
            state.update(status="stalled", iterations=it - 1, evals=evals, reason="line search without decrease")
            return state
        step = t * d
        y_vec = g_new - g
        ys = float(y_vec @ step)
        if ys > 1e-10 * float(step @ step):
            if len(s_hist) == history:
                s_hist.pop(0), y_hist.pop(0), rho.pop(0)
            s_hist.append(step)
            y_hist.append(y_vec)
            rho.append(1.0 / ys)
        decrease = f - f_new
        x = x + step
        f, g = f_new, g_new
        gnorm = gnorm_new
        state.update(x=x, f=f, grad_norm=gnorm, iterations=it, evals=evals)
        if gnorm <= tol_grad:
            state["status"] = "converged"
            return state
        flat = decrease <= _STALL_ULP * float(eps) * max(abs(f), 1.0) and gnorm >= 0.9 * best_g
        best_g = min(best_g, gnorm)
        stall = stall + 1 if flat else 0
        if stall >= _STALL_ITERS:
            state.update(status="stalled", reason=f"objective unchanged for {_STALL_ITERS} iterations")
            return state
    state["status"] = "max_iter"
    return state


def batched_lbfgs(value_and_grad: Callable, theta0: torch.Tensor, *, history: int = 10,
                  max_iter: int = 5000, tol_grad: float = 1e-8, progress=None) -> list[dict]:
    r"""Independent L-BFGS runs (strong-Wolfe line search) on the rows of ``theta0``, evaluated together.

    Parameters
    ----------
    value_and_grad : callable
        ``theta (S, P) -> (f (S,), g (S, P))``; row ``s`` of the output must depend on row ``s``
        of the input only.
    theta0 : Tensor (S, P)
    history, max_iter, tol_grad :
        Curvature pairs kept, iteration cap, gradient-norm tolerance (L2).

    Returns
    -------
    list of dict, one per row: ``x``, ``f``, ``grad_norm``, ``iterations``, ``evals``,
    ``status`` (``converged``, ``stalled``, ``max_iter``, ``diverged``, ``interrupted``).

    Notes
    -----
    Each row runs :func:`_lbfgs_seed`, a coroutine that yields the point it needs evaluated; a
    round evaluates all rows still running at once (finished rows are evaluated at their final
    point and ignored). On ``KeyboardInterrupt`` the rows still running are returned with status
    ``interrupted`` at their last accepted iterate.
    """
    S = theta0.shape[0]
    states = [dict() for _ in range(S)]
    coros = [_lbfgs_seed(theta0[s], states[s], history=history, max_iter=max_iter, tol_grad=tol_grad)
             for s in range(S)]
    pending = {s: next(coros[s]) for s in range(S)}
    current = theta0.clone()
    rounds = 0
    try:
        while pending:
            pts = current.clone()
            for s, p in pending.items():
                pts[s] = p
            f, g = value_and_grad(pts)
            f_list = f.tolist()
            nxt = {}
            for s in pending:
                try:
                    nxt[s] = coros[s].send((f_list[s], g[s]))
                except StopIteration:
                    current[s] = states[s]["x"]
            for s in nxt:
                current[s] = states[s]["x"]
            pending = nxt
            rounds += 1
            if progress is not None and rounds % 50 == 0:
                its = [st.get("iterations", 0) for st in states]
                progress(f"lbfgs: {S - len(pending)}/{S} seeds done, iterations {min(its)}–{max(its)}, "
                         f"max ‖g‖ {max(st.get('grad_norm', math.inf) for st in states):.2e}")
    except KeyboardInterrupt:
        for s in pending:
            states[s]["status"] = "interrupted"
    return states


# =============================================================================================
# GD and minibatch optimisers
# =============================================================================================


def _run_gd(prob: _Problem, theta: torch.Tensor, *, lr, max_iter, tol_grad, progress=None):
    eta = lr * prob.D / prob.N
    S = theta.shape[0]
    status = ["max_iter"] * S
    iters = [max_iter] * S
    active = torch.ones(S, dtype=torch.bool, device=theta.device)
    f, g = prob.value_and_grad(theta)
    f0 = f.clone()
    it = 0
    try:
        for it in range(1, max_iter + 1):
            gn = torch.linalg.vector_norm(g, dim=1)
            done = (gn <= tol_grad) & active
            for s in torch.nonzero(done).flatten().tolist():
                status[s], iters[s] = "converged", it - 1
            bad = (~torch.isfinite(f) | (f > 10 * f0.abs() + 10)) & active
            for s in torch.nonzero(bad).flatten().tolist():
                status[s], iters[s] = "diverged", it - 1
            active = active & ~done & ~bad
            if not bool(active.any()):
                break
            theta = torch.where(active[:, None], theta - eta * g, theta)
            f, g = prob.value_and_grad(theta)
            if progress is not None and it % 500 == 0:
                progress(f"gd: iteration {it}/{max_iter}, max ‖g‖ {float(gn.max()):.2e}")
    except KeyboardInterrupt:
        for s in torch.nonzero(active).flatten().tolist():
            status[s], iters[s] = "interrupted", it
    gn = torch.linalg.vector_norm(g, dim=1).tolist()
    return [{"x": theta[s], "f": float(f[s]), "grad_norm": gn[s], "iterations": iters[s],
             "evals": prob.evals, "status": status[s], "step_size": eta} for s in range(S)]


def _run_minibatch(prob: _Problem, theta: torch.Tensor, *, optimizer, lr, max_iter, batch, gens,
                   progress=None):
    S = theta.shape[0]
    th = theta.clone().requires_grad_(True)
    if optimizer == "adam":
        opt = torch.optim.Adam([th], lr=lr)
        eta = lr
    else:
        eta = lr * prob.D / prob.N
        opt = torch.optim.SGD([th], lr=eta * prob.N)  # gradient below is of L/N
    sizes = [X.shape[1] for X, _ in prob.groups]
    b_per = [max(1, round(batch * n / prob.N)) for n in sizes]
    status = "max_iter"
    it = 0
    try:
        for it in range(1, max_iter + 1):
            idx = []
            for n, b in zip(sizes, b_per):
                rows = [torch.randint(0, n, (min(b, n),), generator=gens[s]) for s in range(S)]
                idx.append(torch.stack(rows).to(prob.device))
            _, g = prob.minibatch_grad(th, idx)
            opt.zero_grad(set_to_none=True)
            th.grad = g
            opt.step()
            if progress is not None and it % 1000 == 0:
                progress(f"{optimizer}: step {it}/{max_iter}")
    except KeyboardInterrupt:
        status = "interrupted"
    theta = th.detach()
    f, g = prob.value_and_grad(theta)
    gn = torch.linalg.vector_norm(g, dim=1).tolist()
    return [{"x": theta[s], "f": float(f[s]), "grad_norm": gn[s], "iterations": it, "evals": prob.evals,
             "status": status, "step_size": eta} for s in range(S)]


# =============================================================================================
# the trainer
# =============================================================================================


@dataclass
class TrainResult:
    """Rows of one trained configuration: ``seeds`` (one dict per seed) and ``summary``
    (mean, sd and SE over seeds), plus the settings that made them."""

    seeds: list
    summary: dict
    settings: dict = field(default_factory=dict)
    #: Final parameters, one row per seed (float64, CPU): ``k = theta[:, :D]``, ``v = theta[:, D:2D]``
    #: and the learned scalar in the last column when there is one; a warm start (``init_theta``) of
    #: another run, e.g. the next λ of a continuation.
    theta: Any = None

    def rows(self) -> list[dict]:
        return list(self.seeds) + [self.summary]


def _check_inputs(activation, model, nu, alpha, lam, D, seeds, optimizer, init, dtype):
    if activation not in ACTIVATIONS:
        hint = " (name the variant in full, docs/slr.md §2)" if activation in ("linear", "erf", "softplus") else ""
        raise InputError(f"unknown activation {activation!r}{hint}; variants: {', '.join(ACTIVATIONS)}")
    if model not in ("spiked", "max"):
        raise InputError(f"--model must be 'spiked' or 'max', got {model!r}")
    if not (isinstance(nu, (int, float)) and nu >= 0) or (math.isinf(nu) and model != "max"):
        raise InputError(f"--nu must be >= 0 (inf for max-SLR only), got {nu!r}")
    if not (math.isfinite(alpha) and alpha > 0):
        raise InputError(f"--alpha must be > 0, got {alpha!r}")
    if not (math.isfinite(lam) and lam >= 0):
        raise InputError(f"--lam must be >= 0, got {lam!r}")
    if int(D) != D or D < 2:
        raise InputError(f"--D must be an integer >= 2, got {D!r}")
    if int(seeds) != seeds or seeds < 1:
        raise InputError(f"--seeds must be a positive integer, got {seeds!r}")
    if optimizer not in OPTIMIZERS:
        raise InputError(f"--optimizer must be one of {', '.join(OPTIMIZERS)}, got {optimizer!r}")
    if init not in ("informed", "random"):
        raise InputError(f"--init must be 'informed' or 'random', got {init!r}")
    if dtype not in _DTYPES:
        raise InputError(f"--dtype must be float64 or float32, got {dtype!r}")


@dataclass(frozen=True)
class ERMOptions:
    """How :func:`train_erm` trains and measures (every field is described there): the seeds, the optimiser and
    its stopping rule, the precision, device and memory, the test measurement and the JSON-lines log."""

    seeds: int = 3
    seed: int = 0
    seed_indices: Iterable[int] | None = None
    optimizer: str = "lbfgs"
    init: str = "informed"
    init_scale: float = 1.0
    dtype: str = "float64"
    device: Any = "auto"
    max_iter: int | None = None
    tol_grad: float = 1e-8
    lr: float | None = None
    batch: int = 256
    history: int = 10
    n_test: int = 20_000
    test: bool = True
    overlap_points: int = 2 ** 14
    max_memory_bytes: int | None = None
    log_path: str | None = None
    batched: bool = True


def train_erm(activation: str, *, model: str, nu: float, L, alpha: float, lam: float, D: int, delta: float = 0.1,
              extra=None, init_theta: torch.Tensor | None = None, options: ERMOptions | None = None, progress=None,
              loss: str = "square", lam_v: float | None = None, **overrides) -> TrainResult:
    r"""Train ridge ERM for ``seeds`` independent problems at once (docs/slr.md §12).

    Parameters
    ----------
    activation : str
        §4 variant (named in full).
    model, nu, L :
        Data model (§3); ``L`` an int, a list (uniform variable length) or a dict law.
    alpha, lam, D :
        :math:`N=\lfloor\alpha D\rfloor`, ridge λ (``half_sum``; on k only when ``lam_v`` is given), dimension.
    loss : str
        Per-sample loss of the residual :math:`r=y-f`: ``square`` (default, ½r²), ``huber:δ``,
        ``pseudo_huber:δ``, ``logcosh`` or a formula in ``r``
        (:func:`attnlimits.derivations.slr.losses.parse_loss`); the objective is
        :math:`\sum_\mu\rho(r_\mu)+\tfrac{\lambda_k}2\|k\|^2+\tfrac{\lambda_v}2\|v\|^2`, ρ printed for torch from the
        same SymPy expression as the replica equations.  ``train_mse`` stays the mean squared residual.
    lam_v : float, optional
        Ridge on v (default: ``lam``, one ridge on both).
    seeds, seed, seed_indices :
        Number of problems; master seed; or explicit seed indices (default ``range(seeds)``).
    delta : float
        Label noise Δ (default 0.1, §12).
    optimizer : {"lbfgs", "gd", "adam", "sgd"}
    init : {"informed", "random"}
    init_scale : float
        Random start :math:`k,v\sim\mathcal N(0,\texttt{init\_scale}^2I)`.
    extra : float, optional
        Value of a fixed scalar (``erf_fixed``'s c, ``softplus_norm``'s b; default 0) or the
        start of a learned one (default: its population optimum under ``informed``, 0 otherwise).
    dtype : {"float64", "float32"}
        Training precision. float32 is for speed only; the benchmark measures its gap.
    max_iter : int, optional
        Default 5000 (L-BFGS), 3000 (GD), 20000 (Adam/SGD).
    tol_grad : float
        Stop when :math:`\|\nabla\mathcal L\|_2\le` tol_grad (L-BFGS, GD).
    lr : float, optional
        GD/SGD: dimensionless, step :math:`\eta=\texttt{lr}\,D/N` (default 0.5); Adam: its step (default 0.01).
    batch : int
        Minibatch size (Adam/SGD).
    n_test : int
        Fresh test sequences per seed (default 2·10⁴, §12).
    test : bool
        Compute the test errors (``False``: training only, for benchmarks).
    overlap_points : int
        QMC points per replicate of the §6.1 population formula (8 replicates).
    max_memory_bytes : int, optional
        Memory the data may use; default 80% of what the device has free.
    init_theta : Tensor (S, P), optional
        Explicit start (overrides ``init``; used for λ continuation and C17).
    log_path : str, optional
        Append each finished seed's row as a JSON line (survives Ctrl-C).
    batched : bool
        ``False`` trains the seeds one after the other (the baseline of the benchmark).
    options : ERMOptions, optional
        Every parameter above except the problem (activation, model, nu, L, alpha, lam, D, delta, extra,
        init_theta) is a field of :class:`ERMOptions`; keyword arguments override its fields.

    Returns
    -------
    TrainResult

    Raises
    ------
    InputError
        Bad input, or the data of one seed do not fit into memory (the message says how much).
    """
    o = resolve_options(ERMOptions, options, overrides)
    seeds, seed, seed_indices, optimizer, init, dtype = o.seeds, o.seed, o.seed_indices, o.optimizer, o.init, o.dtype
    max_iter, lr = o.max_iter, o.lr
    nu = float(nu)
    alpha, lam = float(alpha), float(lam)
    _check_inputs(activation, model, nu, alpha, lam, D, seeds, optimizer, init, dtype)
    loss = resolve_loss(loss)
    if lam_v is not None:
        lam_v = float(lam_v)
        if not (math.isfinite(lam_v) and lam_v >= 0):
            raise InputError(f"--lam-v must be >= 0, got {lam_v!r}")
    law = _law(L)
    D = int(D)
    N = int(math.floor(alpha * D))
    if N < 1:
        raise InputError(f"alpha·D = {alpha * D:g} gives no training sequence")
    split = length_split(N, law)
    idx = list(range(int(seeds))) if seed_indices is None else [int(s) for s in seed_indices]
    S = len(idx)
    dev = resolve_device(o.device)
    tdtype = _DTYPES[dtype]
    L_mean = sum(Lv * n for Lv, n in split) / N
    avail = int(0.8 * _available_bytes(dev)) if o.max_memory_bytes is None else int(o.max_memory_bytes)
    one = memory_needed(1, N, L_mean, D, dtype)
    if one > avail:
        raise InputError(f"N·L·D = {N}·{L_mean:g}·{D} needs {_gb(one)} per seed on {dev.type} "
                         f"({dtype}), only {_gb(avail)} available: reduce --D or --alpha, or use --dtype float32")
    per_seed = memory_needed(1, N, L_mean, D, dtype) - int(N * L_mean * D * 8)
    per_batch = max(1, min(S, (avail - int(N * L_mean * D * 8)) // max(1, per_seed)))
    if not o.batched:
        per_batch = 1
    if per_batch < S and progress is not None and o.batched:
        progress(f"memory: {S} seeds need {_gb(memory_needed(S, N, L_mean, D, dtype))}; training in batches of {per_batch}")
    has_extra = activation in _EXTRA
    learn_extra = activation in _LEARNED
    fixed_extra = (0.0 if extra is None else float(extra)) if (has_extra and not learn_extra) else None
    if max_iter is None:
        max_iter = {"lbfgs": 5000, "gd": 3000}.get(optimizer, 20000)
    if lr is None:
        lr = 0.01 if optimizer == "adam" else 0.5
    if init_theta is not None and tuple(torch.as_tensor(init_theta).shape) != (S, 2 * D + (1 if learn_extra else 0)):
        raise InputError(f"init_theta must have shape ({S}, {2 * D + (1 if learn_extra else 0)}), "
                         f"got {tuple(torch.as_tensor(init_theta).shape)}")
    start = None
    if init == "informed" and init_theta is None:
        start = _population_start(activation, model, nu, tuple(law), fixed_extra)
    settings = {"activation": activation, "model": model, "nu": nu,
                "L": ",".join(str(x) for x, _ in law),  # text, as in every command: "2", or "1,2,3" (uniform)
                "alpha": alpha, "lam": lam, "delta": delta, "D": D, "N": N,
                "optimizer": optimizer, "init": "explicit" if init_theta is not None else init,
                "dtype": dtype, "device": str(dev), "seed": int(seed), "max_iter": int(max_iter),
                "tol_grad": o.tol_grad}
    if loss != "square":
        settings["loss"] = loss
    if lam_v is not None:
        settings["lam_k"], settings["lam_v"] = lam, lam_v
    if optimizer in ("gd", "sgd", "adam"):
        settings["lr"] = lr
    if optimizer in ("sgd", "adam"):
        settings["batch"] = int(o.batch)
    job = _Job(activation, model, nu, law, split, D, N, lam, delta, int(seed), start, extra, learn_extra, fixed_extra,
               tdtype, dev, dataclasses.replace(o, max_iter=int(max_iter), lr=lr), settings, loss, lam_v)
    seed_rows: list[dict] = []
    thetas: list = []
    interrupted = False
    for b0 in range(0, S, per_batch):
        chunk = idx[b0:b0 + per_batch]
        rows, interrupted, th_chunk = _train_chunk(
            job, chunk, None if init_theta is None else torch.as_tensor(init_theta)[b0:b0 + per_batch], progress)
        for r in rows:
            if o.log_path:
                with open(o.log_path, "a") as fh:
                    fh.write(json.dumps(r) + "\n")
        seed_rows.extend(rows)
        thetas.append(th_chunk)
        if interrupted:
            break
    res = TrainResult(seed_rows, summarize(seed_rows, settings), settings,
                      theta=torch.cat(thetas) if thetas else None)
    if interrupted:
        res.summary["interrupted"] = True
    return res


@dataclass(frozen=True)
class _Job:
    """One ERM configuration, resolved once by :func:`train_erm` (the length law and its split of N, the informed
    start, the scalar ``extra``, dtype and device, the options with max_iter and lr filled in) for its chunks."""

    activation: str
    model: str
    nu: float
    law: Any
    split: Any
    D: int
    N: int
    lam: float
    delta: float
    seed: int
    start: Any
    extra: Any
    learn_extra: bool
    fixed_extra: Any
    tdtype: Any
    dev: Any
    options: ERMOptions
    settings: dict
    loss: str = "square"
    lam_v: float | None = None


def _train_chunk(job: _Job, chunk, init_theta, progress):
    """Train the seeds ``chunk`` of ``job`` at once: ``(seed rows, interrupted, θ)``."""
    interrupted, theta, trained = _train_only(job, chunk, init_theta, progress)
    return _seed_rows(job, chunk, theta, trained, interrupted, progress), interrupted, theta.to(torch.float64).cpu()


def _train_only(job: _Job, chunk, init_theta, progress):
    """Data, start and optimiser for the seeds ``chunk``: ``(interrupted, θ, (states, train MSE, teachers, seed
    bases, init note, training seconds))``."""
    activation, model, nu, split, D, N, lam, delta = (job.activation, job.model, job.nu, job.split, job.D, job.N,
                                                      job.lam, job.delta)
    seed, start, extra, learn_extra, fixed_extra, tdtype, dev = (job.seed, job.start, job.extra, job.learn_extra,
                                                                 job.fixed_extra, job.tdtype, job.dev)
    o = job.options
    optimizer, init, init_scale, max_iter, tol_grad, lr, batch, history = (o.optimizer, o.init, o.init_scale,
                                                                           o.max_iter, o.tol_grad, o.lr, o.batch,
                                                                           o.history)
    S = len(chunk)
    bases = [draw_seed(seed, s) for s in chunk]
    teachers = [make_teacher(D, draw_generator(b, 0), device="cpu") for b in bases]
    groups = []
    for Lv, n in split:
        X = torch.empty((S, n, Lv, D), dtype=tdtype, device=dev)
        y = torch.empty((S, n), dtype=tdtype, device=dev)
        for i, b in enumerate(bases):
            smp = sample_sequences(model, nu, Lv, n, D, generator=draw_generator(b, 100 + Lv),
                                   teacher=teachers[i], delta=delta, device="cpu")
            X[i] = smp["X"].to(device=dev, dtype=tdtype)
            y[i] = smp["y"].to(device=dev, dtype=tdtype)
            del smp
        groups.append((X, y))
    prob = _Problem(activation, D, lam, groups, learn_extra, fixed_extra, tdtype, dev, N, loss=job.loss,
                    lam_v=job.lam_v)
    P = prob.P
    theta0 = torch.zeros((S, P), dtype=tdtype, device=dev)
    init_note = ""
    if init_theta is not None:
        rows_t = torch.as_tensor(init_theta, dtype=tdtype)
        if rows_t.shape != (S, P):
            raise InputError(f"init_theta must have shape ({S}, {P}), got {tuple(rows_t.shape)}")
        theta0 = rows_t.to(dev).clone()
        init_note = "explicit start"
    elif init == "informed":
        for i, (ks, vs) in enumerate(teachers):
            theta0[i, :D] = start["m_k"] * ks.to(dev, tdtype)
            theta0[i, D:2 * D] = start["m_v"] * vs.to(dev, tdtype)
        if learn_extra:
            theta0[:, 2 * D] = start["extra"] if extra is None else float(extra)
        init_note = f"informed: m_k={start['m_k']:.4g}, m_v={start['m_v']:.4g}" + (
            f", extra={start['extra']:.4g}" if learn_extra and start["extra"] is not None else "") + f" ({start['note']})"
    else:
        for i, b in enumerate(bases):
            gi = draw_generator(b, 1)
            theta0[i, :2 * D] = (init_scale * torch.randn(2 * D, generator=gi, dtype=torch.float64)).to(dev, tdtype)
        if learn_extra:
            theta0[:, 2 * D] = 0.0 if extra is None else float(extra)
        init_note = f"random: N(0, {init_scale:g}²)"
    t0 = time.perf_counter()
    if optimizer == "lbfgs":
        states = batched_lbfgs(prob.value_and_grad, theta0, history=history, max_iter=max_iter,
                               tol_grad=tol_grad, progress=progress)
    elif optimizer == "gd":
        states = _run_gd(prob, theta0, lr=lr, max_iter=max_iter, tol_grad=tol_grad, progress=progress)
    else:
        gens = [draw_generator(b, 3) for b in bases]
        states = _run_minibatch(prob, theta0, optimizer=optimizer, lr=lr, max_iter=max_iter,
                                batch=batch, gens=gens, progress=progress)
    train_s = time.perf_counter() - t0
    interrupted = any(st.get("status") == "interrupted" for st in states)
    theta = torch.stack([st["x"] for st in states]).to(tdtype)
    mse = prob.train_mse(theta).tolist()
    del groups, prob
    return interrupted, theta, (states, mse, teachers, bases, init_note, train_s)


def _seed_rows(job: _Job, chunk, theta, trained, interrupted, progress) -> list:
    """One row per seed of ``chunk``: overlaps, distance, objective, status, and (unless ``test`` is off or the
    run was interrupted) the test error by direct simulation and by the §6.1 formula at the learned overlaps."""
    states, mse, teachers, bases, init_note, train_s = trained
    activation, model, nu, law, D, lam = job.activation, job.model, job.nu, job.law, job.D, job.lam
    learn_extra, fixed_extra, settings = job.learn_extra, job.fixed_extra, job.settings
    S = len(chunk)
    test, n_test, overlap_points = job.options.test, job.options.n_test, job.options.overlap_points
    rows = []
    setting = _setting(model, nu, law)
    for i, s in enumerate(chunk):
        st = states[i]
        th = theta[i].to(torch.float64).cpu()
        k, v = th[:D], th[D:2 * D]
        ex = float(th[2 * D]) if learn_extra else fixed_extra
        ks, vs = teachers[i]
        ov = overlaps(k, v, ks, vs)
        row = {**settings, "row": "seed", "seed_index": int(s), **{o: ov[o] for o in OVERLAP_KEYS},
               "distance": distance_to_manifold(ov), "extra": ex, "objective": float(st["f"]),
               "train_mse": float(mse[i]), "status": st.get("status"), "flag": seed_flag(st.get("status")),
               "iterations": int(st.get("iterations", 0)),
               "evals": int(st.get("evals", 0)), "grad_norm": float(st.get("grad_norm", math.nan)),
               "step_size": st.get("step_size"), "init_note": init_note, "train_s": train_s / 1.0,
               "batched_seeds": S}
        if test and not interrupted:
            r = direct_risk(activation, k, v, model=model, nu=nu, L=_law_arg(law), n=n_test, D=D,
                            generator=draw_generator(bases[i], 2), teacher=(ks, vs), extra=ex, device="cpu")
            row["E_test"], row["E_test_se"] = float(r.mean), float(r.se)
            try:
                from attnlimits.verify.slr.theory import population_risk_general

                e6, se6 = population_risk_general(activation, setting, ov, extra=ex, points=overlap_points,
                                                  replicates=8, seed=int(bases[i] % 2**31))
                row["E_test_overlaps"], row["E_test_overlaps_se"] = e6, se6
            except (ValueError, ArithmeticError) as exc:  # indefinite / overflow: said, not hidden
                row["E_test_overlaps"], row["E_test_overlaps_se"] = None, None
                row["E_test_overlaps_error"] = str(exc).splitlines()[0]
        else:
            row["E_test"] = row["E_test_se"] = row["E_test_overlaps"] = row["E_test_overlaps_se"] = None
        rows.append(row)
        if progress is not None:
            e = row["E_test"]
            progress(f"{activation} α={settings['alpha']:g} λ={lam:g} seed {s}: {row['status']} after "
                     f"{row['iterations']} it, E_test={'—' if e is None else f'{e:.4f}'}, dist={row['distance']:.3f}")
    return rows


def summarize(rows: list[dict], settings: dict | None = None) -> dict:
    """Mean, sd and SE (= sd/√S) over the seed rows of one configuration."""
    settings = settings or {}
    out = {**settings, "row": "summary", "seeds": len(rows)}
    keys = ("E_test", "E_test_overlaps", *OVERLAP_KEYS, "distance", "objective", "train_mse", "grad_norm",
            "iterations", "extra")
    for key in keys:
        m, sd, se = _mean_sd_se([r.get(key) for r in rows])
        out[key], out[key + "_sd"], out[key + "_se"] = m, sd, se
    st = sorted({str(r.get("status")) for r in rows})
    out["status"] = ",".join(st)
    # a mean over seeds some of which did not converge is flagged with their statuses (docs/output.md)
    out["flag"] = summary_flag(r.get("flag", seed_flag(r.get("status"))) for r in rows)
    out["seeds_flagged"] = sum(bool(r.get("flag", seed_flag(r.get("status")))) for r in rows)
    return out


# =============================================================================================
# λ tuned by the replica theory
# =============================================================================================


def _replica():
    """The replica wrappers (:mod:`attnlimits.verify.slr.replica`), or InputError when they are missing."""
    try:
        from attnlimits.verify.slr import replica
    except ImportError:
        raise InputError("the RS theory (attnlimits.verify.slr.replica) is not available in this installation") from None
    return replica


def rs_tuned_lambda(activation, model, nu, L, alpha, delta, grid=LAMBDA_GRID, loss="square") -> dict:
    """λ minimising the RS test error (docs/slr.md §12: log grid 10⁻³…10, 9 points, then a 1-D refinement) of the RS
    theory for the per-sample ``loss``, with the grid and the RS point at the chosen λ (a row of
    :class:`attnlimits.numeric.slr.rs.RSFixedPoint`)."""
    rep = _replica()
    best, pts = rep.rs_problem(activation, model, nu, L, loss=loss).tune_lambda(float(alpha), float(delta),
                                                                              grid=list(grid))
    return {"lam": float(best.lam), "grid": [float(p.lam) for p in pts], "E_test_grid": [float(p.E_test) for p in pts],
            "rs": best.as_row()}


# =============================================================================================
# the command
# =============================================================================================


def _parse_lams(items) -> list:
    out = []
    for it in items:
        s = str(it).strip()
        if s == "rs-tuned":
            out.append("rs-tuned")
            continue
        try:
            v = float(s)
        except ValueError:
            raise InputError(f"--lam must be numbers >= 0 or 'rs-tuned', got {s!r}") from None
        if not (math.isfinite(v) and v >= 0):
            raise InputError(f"--lam must be >= 0, got {s}")
        out.append(v)
    return out


#: Starts of :func:`train_multistart` (issue 26 item 4).
MULTISTART_INITS = ("informed", "uninformed", "random", "lambda_continuation")


def train_multistart(activation: str, *, model: str, nu: float, L, alpha: float, lam: float, D: int,
                     delta: float = 0.1, inits=MULTISTART_INITS, lam_ladder=(10.0, 1.0), rel_objective: float = 1e-7,
                     progress=None, **kw) -> list[dict]:
    r"""ERM from several starts on the same data, and the distinct minima per seed (docs/slr.md §10.7).

    Starts: ``informed`` (population optimum), ``uninformed`` (k, v ~ N(0, 0.05²): no overlap with the
    teacher), ``random`` (N(0, 1)), ``lambda_continuation`` (informed at the first λ of ``lam_ladder``,
    each minimiser the start of the next λ, then λ).  Every start sees the same teachers and data (same
    ``seed``).  Two end points of a seed are one minimum when their objectives agree within
    ``rel_objective`` (relative) — L-BFGS stops at a gradient norm far below what separates distinct
    minima (measured: ≥ 1e-5 relative in objective where they differ).

    Returns one row per (seed, start) with ``objective``, ``objective_per_N``, ``E_test_overlaps``, the
    overlaps, ``minimum`` (index of the distinct minimum within the seed, 0 = lowest objective) and
    ``equilibrium`` (True for the lowest-objective minimum: the one paired with the RS equilibrium branch),
    and ``n_minima``.
    """
    unknown = [i for i in inits if i not in MULTISTART_INITS]
    if unknown:
        raise InputError(f"unknown start(s) {unknown}; choose from {', '.join(MULTISTART_INITS)}")
    N = int(math.floor(alpha * D))
    seeds = kw.get("seeds", ERMOptions.seeds)  # the ERM options (seeds, seed, optimiser…) pass through ``kw``
    common = dict(model=model, nu=nu, L=L, alpha=alpha, D=D, delta=delta, progress=progress, **kw)
    results = {}
    for init in inits:
        if init == "informed":
            res = train_erm(activation, lam=lam, init="informed", **common)
        elif init == "uninformed":
            res = train_erm(activation, lam=lam, init="random", init_scale=0.05, **common)
        elif init == "random":
            res = train_erm(activation, lam=lam, init="random", init_scale=1.0, **common)
        else:
            theta = None
            for lam_c in tuple(lam_ladder) + (lam,):
                res = train_erm(activation, lam=lam_c, init="informed", init_theta=theta,
                                test=lam_c == lam, **common)
                theta = res.theta
        results[init] = res
    rows = []
    for s in range(int(seeds)):
        per = []
        for init, res in results.items():
            r = dict(res.seeds[s])
            r["start"] = init
            r["objective_per_N"] = r["objective"] / N
            per.append(r)
        per.sort(key=lambda r: r["objective"])
        reps = []
        for r in per:
            for i, o in enumerate(reps):
                if abs(r["objective"] - o) <= rel_objective * max(1.0, abs(o)):
                    r["minimum"] = i
                    break
            else:
                reps.append(r["objective"])
                r["minimum"] = len(reps) - 1
        for r in per:
            r["n_minima"] = len(reps)
            r["equilibrium"] = r["minimum"] == 0
        rows += per
    return rows


def run_train(params: dict, *, progress=None) -> list[dict]:
    """Run function of :data:`TRAIN_COMMAND`: one row per seed and one summary row per
    (activation, α, λ); Ctrl-C returns the rows finished so far (and the interrupted batch's
    last iterates, status ``interrupted``)."""
    acts = params["activation"]
    alphas = params["alpha"]
    lams = _parse_lams(params["lam"])
    L = params["L"]
    L = L[0] if len(L) == 1 else list(L)
    rows: list[dict] = []
    loss = resolve_loss(params.get("loss") or "square")
    lam_k_opt, lam_v_opt = params.get("lam_k"), params.get("lam_v")
    blocks = lam_k_opt is not None or lam_v_opt is not None
    if (blocks or loss != "square") and params.get("init") == "multistart":
        raise InputError("--init multistart trains the square loss with one ridge; drop --loss/--lam-k/--lam-v "
                         "or use --init informed/random")
    if blocks and "rs-tuned" in lams:
        raise InputError("--lam rs-tuned tunes one ridge on both blocks; give numbers with --lam-k/--lam-v")
    from attnlimits.verify._io import check_output_file

    if params.get("plot") and params.get("init") == "multistart":
        raise InputError("--plot draws mean learning curves; --init multistart gives the minima per seed: "
                         "use one of them")
    if params.get("plot"):  # output paths are checked before any training, not after it
        check_output_file(params["plot"], option="--plot", suffixes=(".png", ".pdf", ".svg"))
    if params.get("log"):  # appended to, as the help says: never truncated
        log = check_output_file(params["log"], option="--log", suffixes=())
        try:
            with open(log, "a"):
                pass
        except OSError as exc:
            raise InputError(f"--log {params['log']}: cannot append ({exc.strerror or exc})") from None
    try:
        for act in acts:
            for alpha in alphas:
                for lam in lams:
                    extra_cols = {}
                    if lam == "rs-tuned":  # by the RS theory of the same loss
                        tuned = rs_tuned_lambda(act, params["model"], params["nu"], L, alpha, params["delta"],
                                                loss=loss)
                        lam_val = tuned["lam"]
                        extra_cols = {"lam_rule": "rs-tuned", "rs_E_test": tuned["rs"]["E_test"],
                                      "lam_grid": ",".join(f"{x:g}" for x in tuned["grid"])}
                    else:
                        lam_val = lam
                    if params["init"] == "multistart":  # every start on the same data (§10.7)
                        per = train_multistart(act, model=params["model"], nu=params["nu"], L=L, alpha=alpha,
                                               lam=lam_val, D=params["D"], seeds=params["seeds"], seed=params["seed"],
                                               delta=params["delta"], dtype=params["dtype"],
                                               device=params["device"], n_test=params["n_test"], progress=progress)
                        for r in per:
                            r.update(extra_cols, activation=act, row="seed", lam=lam_val)
                        rows.extend(per)
                        continue
                    res = train_erm(act, model=params["model"], nu=params["nu"], L=L, alpha=alpha,
                                    lam=lam_val if lam_k_opt is None else lam_k_opt, loss=loss,
                                    lam_v=(lam_val if lam_v_opt is None else lam_v_opt) if blocks else None,
                                    D=params["D"], seeds=params["seeds"], seed=params["seed"],
                                    delta=params["delta"], optimizer=params["optimizer"], init=params["init"],
                                    dtype=params["dtype"], device=params["device"],
                                    max_iter=params.get("max_iter") or None, lr=params.get("lr") or None,
                                    n_test=params["n_test"], progress=progress, log_path=params.get("log"))
                    for r in res.rows():
                        r.update(extra_cols)
                    rows.extend(res.rows())
                    if res.summary.get("interrupted"):
                        raise KeyboardInterrupt
    except KeyboardInterrupt:
        if progress is not None:
            progress(f"interrupted: returning {len(rows)} finished rows")
        for r in rows:
            r.setdefault("interrupted", True)
    if params.get("plot") and rows:
        rs_on = params.get("theory", "rs") == "rs" and loss == "square" and not blocks
        if params.get("theory", "rs") == "rs" and not rs_on and progress is not None:
            progress("figure: the RS lines are drawn for the square loss with one ridge only; none drawn")
        path = plot_learning_curve(rows, params["plot"], theory=rs_on, bayes_optimal=rs_on)
        if progress is not None:
            progress(f"figure: {path}")
    return rows




# =============================================================================================
# learning curves
# =============================================================================================

_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive")


def bo_learning_curve(model: str, nu: float, L, alphas, delta: float = 0.1, *, n_grid: int = 9,
                      points: int = 2 ** 11, replicates: int = 4):
    r"""The finite-α Bayes-optimal error :math:`E_{BO}(\alpha)` (docs/slr.md §11) on a log grid through ``alphas``.

    Calls :func:`attnlimits.verify.slr.bayes_optimal.bo_state_evolution` (free-entropy-selected fixed point)
    at the α of ``alphas`` and ``n_grid`` log-spaced α between their extremes, Sobol
    ``replicates × points`` (integration error about 10⁻⁴ on :math:`E_{BO}`, spiked :math:`L=2`, ν=2).

    Returns ``(alphas, E_BO, E_BO_se)`` (sorted), or raises :class:`attnlimits.symbolic.result.InputError`
    when the BO theory does not cover the setting and
    :class:`attnlimits.numeric.ConvergenceError` when a state evolution fails.
    """
    from attnlimits.verify.slr.bayes_optimal import bo_state_evolution

    a = sorted({float(x) for x in alphas})
    if len(a) > 1:
        a = sorted(set(a) | {float(x) for x in np.geomspace(a[0], a[-1], n_grid)})
    pts = bo_state_evolution(model, nu, L, a, delta, points=points, replicates=replicates)
    return [p.alpha for p in pts], [p.E_BO for p in pts], [p.E_BO_se for p in pts]


def rs_equilibrium_curve(found: Mapping) -> tuple:
    """The RS curve a learning-curve figure draws, from the branch search
    (:meth:`attnlimits.verify.slr.replica.RSProblem.all_branches`: ``{α: [(origin, RSFixedPoint, phase), …]}``):
    the equilibrium branch at each α, with the ``flag`` ``slr replica`` gives its row
    (:func:`attnlimits.numeric.slr.rs_command.theory_flag`: ``rsb``, ``unstable``, ``rough``, …; ``""`` for a
    prediction).  Returns ``(alphas, E_test, E_test_error, flags, fixed points)``, sorted by α; an α without an
    equilibrium branch is left out."""
    from attnlimits.numeric.slr.rs_command import theory_flag

    out = ([], [], [], [], [])
    for a in sorted(found):
        eq = [fp for _, fp, ph in found[a] if ph == "equilibrium"]
        if not eq:
            continue
        fp = eq[0]
        only_unstable = all(f.stability_damped >= 1 for _, f, _ in found[a])
        flag = theory_flag({**fp.as_row(), "only_unstable_fixed_points": only_unstable})
        for lst, v in zip(out, (float(fp.alpha), float(fp.E_test), float(fp.E_test_error), flag, fp)):
            lst.append(v)
    return out


def _attach_rs(summ: list[dict], act: str, curve: tuple) -> None:
    """Summary rows of ``act`` at an α of the RS ``curve`` gain ``rs_E_test``, ``rs_E_test_error``, ``rs_flag``
    and (when the curve holds fixed points) ``rs_m_k`` … ``rs_q_v``."""
    alphas, E, SE = curve[:3]
    flags = curve[3] if len(curve) > 3 else [""] * len(alphas)
    fps = curve[4] if len(curve) > 4 else [None] * len(alphas)
    for r in (r for r in summ if r["activation"] == act):
        for a, e, se, fl, fp in zip(alphas, E, SE, flags, fps):
            if a == r["alpha"]:
                r["rs_E_test"], r["rs_E_test_error"], r["rs_flag"] = float(e), float(se), fl
                if fp is not None:
                    r.update({f"rs_{k}": float(fp.values[k]) for k in ("m_k", "q_k", "m_v", "q_v")})


def plot_learning_curve(rows: list[dict], path: str, *, theory=True, rs_curves: dict | None = None,
                        title: str | None = None, bayes_optimal: bool = True, bo_curve: tuple | None = None) -> str:
    r"""E_test against α per activation (docs/slr.md §12, issue "learning curves").

    ERM: summary rows (mean ± sd over seeds, points with error bars; a mean over seeds some of which stalled or
    did not converge — its ``flag`` — with an ``x`` marker and a legend entry); RS: ``rs_curves``
    ``{activation: (alphas, E, SE[, flags])}`` drawn as lines with a ±3 SE band (when ``theory`` and not given:
    the equilibrium branch of :meth:`attnlimits.verify.slr.replica.RSProblem.all_branches` on a dense α grid
    — about 6 per decade, through the ERM α — for activations trained at one λ, with its flags from
    :func:`rs_equilibrium_curve`).  The line and its label run through the unflagged points only; a point
    flagged ``rsb``, ``unstable``, ``rough``… is a hollow marker with a legend entry saying it is not a
    prediction (:mod:`attnlimits.verify._flags`), and a line on stderr says so.  The population optimum of
    each activation dashed in its colour; the Bayes risk (population) in black, dotted; the
    finite-α Bayes-optimal error :math:`E_{BO}(\alpha)` (docs/slr.md §11, :func:`bo_learning_curve`) in black,
    dash-dotted, when ``bayes_optimal`` (``bo_curve = (alphas, E, SE)`` given, or computed; spiked and
    max-SLR) — a setting the BO theory does not cover gets a note in the legend instead.  Summary rows
    that get an RS point gain ``rs_E_test``, ``rs_E_test_error``, ``rs_flag`` and ``rs_m_k`` … ``rs_q_v``; those
    at an α of the BO curve gain ``bo_E_test``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401

    summ = [r for r in rows if r.get("row") == "summary" and r.get("E_test") is not None]
    if not summ:
        raise InputError("no finished configuration to plot")
    first = summ[0]
    model, nu, Lname = first["model"], first["nu"], first["L"]
    acts = list(dict.fromkeys(r["activation"] for r in summ))
    fig, ax = plt.subplots(figsize=(7.0, 4.6), dpi=120)
    law = _law(Lname) if not isinstance(Lname, str) else _law([int(x) for x in Lname.strip("U{}").split(",")])
    all_alpha = sorted({r["alpha"] for r in summ})
    notes = []  # curves that could not be drawn: in the legend and one line each on stderr
    # the theory is cheap next to training: drawn on a dense α grid (about 6 per decade), through the ERM α too
    dense = sorted(set(all_alpha) | set(np.geomspace(all_alpha[0], all_alpha[-1], max(
        2, min(16, int(round(6 * math.log10(all_alpha[-1] / all_alpha[0]))) + 1))).round(6).tolist())) \
        if len(all_alpha) > 1 else list(all_alpha)
    if rs_curves is None and theory:
        rs_curves = {}
        try:
            rep = _replica()
            for act in acts:
                lam_set = {r["lam"] for r in summ if r["activation"] == act}
                if len(lam_set) != 1:
                    notes.append(f"{act}: RS theory not drawn (trained at several λ: {sorted(lam_set)})")
                if len(lam_set) == 1:
                    # the equilibrium branch at each α (docs/slr.md §10.7), not whichever fixed point a
                    # continuation reaches: near the interpolation peak the two differ by a factor 10
                    found = rep.rs_problem(act, model, nu, _law_arg(law)).all_branches(dense, lam_set.pop(),
                                                                                        first.get("delta", 0.1))
                    rs_curves[act] = rs_equilibrium_curve(found)
        except (InputError, ImportError, ArithmeticError, RuntimeError) as exc:  # said on the figure
            notes.append(f"RS theory not drawn: {str(exc).splitlines()[0][:90]}")
    all_flags = []
    for j, act in enumerate(acts):
        col = _COLOURS[j % len(_COLOURS)]
        pts = sorted(((r["alpha"], r["E_test"], r.get("E_test_sd") or 0.0, r["lam"], r.get("flag") or "")
                      for r in summ if r["activation"] == act), key=lambda p: p[0])
        a = [p[0] for p in pts]
        lam_txt = ",".join(sorted({f"{p[3]:g}" for p in pts}))
        measured_points(ax, a, [p[1] for p in pts], [p[2] for p in pts], [p[4] for p in pts], color=col,
                        label=f"{act}: ERM (λ={lam_txt}, mean ± sd, {first.get('seeds', '')} seeds)")
        all_flags += [p[4] for p in pts]
        if rs_curves and act in rs_curves:
            curve = rs_curves[act]
            _attach_rs(summ, act, curve)
            rflags = list(curve[3]) if len(curve) > 3 else None
            theory_line(ax, curve[0], curve[1], rflags, err=curve[2], band=3, color=col,
                        label=f"{act}: RS theory, equilibrium branch (band ±3 SE)")
            bad = [(x, f) for x, f in zip(curve[0], rflags or []) if f]
            if bad:
                all_flags += [f for _, f in bad]
                print(f"warning: slr train --plot: {act}: the RS equilibrium branch is flagged at α = "
                      + ", ".join(f"{x:g} ({f})" for x, f in bad) + ": drawn as hollow markers, not as the "
                      "prediction", file=sys.stderr)
        try:
            start = None
            from attnlimits.verify.slr.theory import optimal_population_risk

            if act == "softmax":
                start = None
            else:
                start = optimal_population_risk(act, _setting(model, nu, law)).risk
            if start is not None:
                ax.axhline(start, color=col, ls="--", lw=1.2, label=f"{act}: population optimum {start:.3f}")
        except (ValueError, ArithmeticError):
            pass
    if bayes_optimal:
        from attnlimits.numeric import ConvergenceError

        try:
            if bo_curve is None:
                bo_curve = bo_learning_curve(model, nu, _law_arg(law), dense, first.get("delta", 0.1))
            ba, be = (np.asarray(x, dtype=float) for x in bo_curve[:2])
            ax.plot(ba, be, "-.", color="black", lw=1.5, label=r"Bayes-optimal $E_{BO}(\alpha)$ (finite α, §11)")
            for r in summ:
                hit = np.isclose(ba, r["alpha"], rtol=1e-12)
                if hit.any():
                    r["bo_E_test"] = float(be[np.argmax(hit)])
        except (InputError, NotImplementedError, ConvergenceError, ArithmeticError) as exc:
            why = str(exc).splitlines()[0]
            why = why.split(": ", 1)[1] if why.startswith("--model") and ": " in why else why
            notes.append(f"Bayes-optimal E_BO(α) not drawn: {why[:70]}")
    try:
        from attnlimits.verify.slr import theory as bayes

        if len(law) == 1:
            eb = float(bayes.bayes_risk(model, nu, law[0][0]).value)
        else:
            eb = float(bayes.bayes_risk_varlen(model, nu, {Lv: p for Lv, p in law}).value)
        ax.axhline(eb, color="black", ls=":", lw=1.5, label=f"Bayes risk (population) {eb:.3f} = softmax optimum")
    except (ValueError, ArithmeticError, AttributeError):
        pass
    ax.set_xscale("log")
    ax.set_xticks(all_alpha)
    ax.set_xticklabels([f"{x:g}" for x in all_alpha])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel(r"sample ratio $\alpha = N/D$")
    ax.set_ylabel(r"test error $E_{\rm test}$ (excess)")
    nu_txt = "∞" if math.isinf(nu) else f"{nu:g}"
    ax.set_title(title or f"{model}-SLR, L={Lname}, ν={nu_txt}, D={first['D']}, Δ={first.get('delta', 0.1):g}, "
                          f"{first['optimizer']}", fontsize=10)
    ax.grid(alpha=0.3)
    for note in notes:
        ax.plot([], [], " ", label=note)
        print(f"warning: slr train --plot: {note}", file=sys.stderr)
    if caption(all_flags):  # what the hollow and x markers mean, under the legend
        ax.plot([], [], " ", label="\n".join(textwrap.wrap(caption(all_flags), 60)))
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)  # outside the data
    fig.set_size_inches(10.5, 4.6)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    from attnlimits.verify._io import save_figure

    save_figure(fig, path)  # atomic: a failing write leaves the previous file
    plt.close(fig)
    return path
