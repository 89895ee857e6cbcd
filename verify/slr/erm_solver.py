r"""The stacked ERM objective of ``S`` independent seeds and its optimisers (docs/slr.md §12), for
:func:`attnlimits.verify.slr.train.train_erm`.

:class:`StackedObjective` holds the data of every seed, ``theta`` of shape ``(S, P)`` with ``P = 2D`` (+1 for a
learned scalar), and evaluates the ``S`` objectives and their gradients in one forward/backward pass.

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
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

import torch

from .estimators import torch_attention_weights

__all__ = ["StackedObjective", "batched_lbfgs", "loss_module", "resolve_loss", "run_gd", "run_minibatch"]

_STALL_ULP = 8.0
_STALL_ITERS = 10
#: Round-off allowance of the line search, in ulp of the objective (see :func:`_strong_wolfe`).
_ROUNDOFF_ULP = 64.0


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
class StackedObjective:
    """Stacked data and objective of ``S`` independent seeds: per-seed values and gradients in one batched pass
    (the objectives do not interact, so the gradient of their sum is the stack of their gradients)."""

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
        return loss_module(self.loss).rho_value(y - f)[0].sum(dim=1)

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
def loss_module(name: str):
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


def run_gd(prob: StackedObjective, theta: torch.Tensor, *, lr, max_iter, tol_grad, progress=None):
    """Full-batch gradient descent of every seed of ``prob`` from ``theta``, step ``lr·D/N``: one state dict per seed
    (``x``, ``f``, ``grad_norm``, ``iterations``, ``evals``, ``status``, ``step_size``)."""
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


def run_minibatch(prob: StackedObjective, theta: torch.Tensor, *, optimizer, lr, max_iter, batch, gens,
                  progress=None):
    """Adam or SGD on minibatches of ``batch`` sequences per seed (index streams from ``gens``, one per seed): one
    state dict per seed as :func:`run_gd` returns."""
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
