"""Fixed points of a frozen map: the damped → Anderson → chord-Newton ladder, finite-difference Jacobians, and the
piece walk (Newton on the smooth pieces of a piecewise-smooth map, every candidate checked on the map itself).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from .rule import project, residual

__all__ = ["Ladder", "LadderOptions", "ladder", "Walk", "WalkOptions", "WalkHooks", "piece_walk", "fd_jacobian"]


def fd_jacobian(G, x, gx, h=1e-6):
    n = x.size
    J = np.empty((n, n))
    for j in range(n):
        xp = x.copy()
        hj = h * max(1.0, abs(x[j]))
        xp[j] += hj
        J[:, j] = (G(xp) - gx) / hj
    return J


@dataclass(frozen=True)
class LadderOptions:
    """Options of :func:`ladder`: damped steps (``max_damped``, ``damping``) until the residual is below
    ``damped_exit``; Anderson (``max_anderson`` steps, ``memory``) until below ``newton_at``; then at most
    ``max_newton`` chord-Newton steps, with secant (``broyden``) updates of the chord Jacobian."""

    max_damped: int = 40
    damping: float = 0.5
    damped_exit: float = 1e-1
    max_anderson: int = 60
    memory: int = 5
    newton_at: float = 1e-4
    max_newton: int = 8
    broyden: bool = True


class Ladder(NamedTuple):
    """The end of a :func:`ladder`: the best point, G there, its residual, iterations and evaluations, the method
    string, and the last chord Jacobian with the point where it was taken (``None`` if Newton did not run)."""

    x: Any
    gx: Any
    residual: float
    iterations: int
    evaluations: int
    method: str
    J: Any
    x_J: Any


@dataclass(frozen=True)
class WalkOptions:
    """Options of :func:`piece_walk`: ``rounds`` (+ up to ``extra_rounds`` while each halves the residual),
    the surrogate's Newton tolerance ``newton_tol`` (default the walk's ``tol``), the first anchored round's
    ``anchor0_tol`` and prox ``anchor0_steps``, and the residual ``jacobian_at`` below which the caller's
    ``jacobian`` hook is called."""

    rounds: int = 4
    extra_rounds: int = 4
    newton_tol: float | None = None
    anchor0_tol: float = 3e-3
    anchor0_steps: int = 2
    jacobian_at: float = 3e-2


class WalkHooks(NamedTuple):
    """What the caller lends a :func:`piece_walk` beyond the map: the noise tolerance ``tol_of(x)``, the
    surrogate Jacobian ``jacobian(x, G(x), offsets) -> (J, extra, evaluations)`` with the dict ``jac_out`` that
    receives it, and the partial map ``partial(x, offsets)`` with its tolerance ``tol_partial(x)``."""

    tol_of: Callable | None = None
    jacobian: Callable | None = None
    jac_out: dict | None = None
    partial: Callable | None = None
    tol_partial: Callable | None = None


class Walk(NamedTuple):
    """The end of a :func:`piece_walk`: the best point checked on G, G there, its residual, the evaluations of G
    and of the surrogates, and the surrogate's last Jacobian with the point where it was taken."""

    x: Any
    gx: Any
    residual: float
    true_evaluations: int
    surrogate_evaluations: int
    J: Any
    x_J: Any


#: the walk's Newton on a surrogate: no damped or Anderson stage, chord steps only
_SURROGATE_NEWTON = LadderOptions(damped_exit=np.inf, newton_at=np.inf, max_newton=8)


def piece_walk(G_info, G_anchor, x, tol, *, J0=None, anchor0=None, hooks: WalkHooks = WalkHooks(),
               options: WalkOptions = WalkOptions()) -> Walk:
    """Fixed point of a piecewise-smooth frozen map by Newton on its smooth pieces.

    The frozen map G is smooth except where a sample's selected prox minimum switches (§10.6: the
    map is rough at about the integration error there, and Anderson or Newton on G can stall).  A
    round evaluates G at x (``G_info(x) -> (G(x), offsets)``), freezes the selection there
    (``G_anchor(v, offsets)``: the smooth surrogate G_P, equal to G on the piece P containing x)
    and solves x = G_P(x) by Newton with a finite-difference Jacobian (chord steps); the next
    round checks that point on G.  It ends when G itself has residual ≤ ``tol`` (or ≤
    ``tol_of(x)``, evaluated right after G at x, when that is larger): the point then lies in a
    piece that contains its own fixed point, i.e. it is a fixed point of G.  The surrogate's prox
    runs from one start per sample (no screening), so its evaluations cost a fraction of G's.

    ``J0`` (e.g. the Jacobian of the same map on a smaller rule, or at a neighbouring α) starts the
    chord steps of the first round; each later round starts from the previous round's Jacobian.
    ``anchor0`` (offsets, e.g. the selection at a neighbouring fixed point on the same rule) is the
    first round's selection: that round then starts with Newton on its surrogate and skips G at x.
    That surrogate is solved only to ``anchor0_tol``, its prox ``anchor0_steps`` plain Newton steps
    from the anchored minima (``rs_map(newton_steps=…)``; 2: 1e-5 – 1e-4 from the converged surrogate a
    relative 1e-2 from the anchor, 1e-4 – 1e-3 at 3e-2, at under half the cost; the curve at 4×8192
    13.2 → 10.9 s, the same fixed points; 0: the full prox): it is smooth near its anchor only, and the
    selection at the new point differs from the neighbour's in a few samples, whose switches move
    the fixed point by about the integration error anyway; the next round re-anchors on G there.
    With ``tol_of``, a round anchored on G at x solves its surrogate to 0.1·``tol_of(x)`` (if that
    is above ``newton_tol``): the check on G then accepts it unless a sample switched.

    After ``rounds`` rounds, up to ``extra_rounds`` more run while each round still divides G's
    residual by at least 2: the walk converges linearly where a few samples switch their selection
    in every round (measured: factor 0.15–0.25 per round at α = 1.4 on 4×8192), and stopping it
    there sends the caller to a path that costs ten times more.

    ``jacobian(x, G(x), offsets) -> (J, extra)`` (finite differences of the surrogate anchored at x,
    with whatever else the caller needs from the same evaluations): called once, in the first round
    anchored on G at a point whose residual is ≤ ``jacobian_at``; that round's Newton then runs
    with the exact Jacobian of its piece (two steps from a residual of 1e-3, against five or six
    with a neighbour's Jacobian, whose sampling noise at 4×8192 is 10–20 %), and ``jac_out`` (a
    dict) receives ``J``, ``extra``, ``x_J`` and ``evaluations`` so that the caller can reuse them at
    the returned point instead of differencing again.  The evaluations are counted as surrogate ones.

    ``G_partial(x, offsets) -> (G̃(x), offsets)`` (the partial map: the multistart only on the samples
    with several minima at the last map, the selection ``offsets`` elsewhere): once a round shows that
    samples switch (G's residual at a surrogate's fixed point ≥ 100× the surrogate's own), later
    rounds re-anchor on it instead of G — within a rough walk 70–100 % of the switches between rounds
    are among those samples (measured at α = 1, 1.4 on 4×8192: 13 of 19, 6 of 6, 1 of 1; 48 of 57,
    28 of 29, 1, 3, 1).  Every decision is taken on G: a round whose partial residual passes
    ``tol`` or ``tol_partial(x)`` (the noise tolerance at the last point of G), or would end the walk,
    evaluates G at x, and only G's values are returned.  Partial maps count as surrogate evaluations.

    Returns a :class:`Walk`; its ``J`` is the surrogate's last Jacobian, which equals G's within the piece.
    """
    rounds, extra_rounds, newton_tol = options.rounds, options.extra_rounds, options.newton_tol
    anchor0_tol, anchor0_steps, jacobian_at = options.anchor0_tol, options.anchor0_steps, options.jacobian_at
    tol_of, jacobian, jac_out, G_partial, tol_partial = hooks
    best = None
    ev_true = ev_sur = 0
    J = xJ = None
    newton_tol = tol if newton_tol is None else newton_tol
    rounds = rounds + (anchor0 is not None)
    prev_res = np.inf
    rough = False  # a round has shown samples switching their selection: re-anchor on G_partial
    rs_prev = None  # the residual of the last round's surrogate solve (rounds anchored on G)
    for k in range(rounds + extra_rounds):
        x = project(x)
        if k == 0 and anchor0 is not None:
            offsets, res = anchor0, np.inf
        else:
            full = True
            if rough and G_partial is not None:
                gx, offs_p = G_partial(x, offsets)
                ev_sur += 1
                res = residual(gx, x)
                tp = tol_partial(x) if tol_partial is not None else 0.0
                full = (res <= tol or res <= tp or k == rounds + extra_rounds - 1
                        or k >= rounds and not res <= 0.5 * prev_res)
                if not full:
                    offsets = offs_p
            if full:
                gx, offsets = G_info(x)
                ev_true += 1
                res = residual(gx, x)
                if best is None or res < best[0]:
                    best = (res, x, gx, J, xJ)
                if res <= tol or tol_of is not None and res <= tol_of(x):
                    break
                if k >= rounds and not res <= 0.5 * prev_res:
                    break
            if rs_prev is not None and res >= 100 * max(rs_prev, 1e-300):
                rough = True
            prev_res = res
        if k == rounds + extra_rounds - 1:
            break  # no round left to check a new point on G

        first_anchor0 = k == 0 and anchor0 is not None

        def Gp(v, offsets=offsets, steps=anchor0_steps if first_anchor0 else 0):
            return G_anchor(v, offsets, steps) if steps else G_anchor(v, offsets)

        if k == 0 and anchor0 is not None:
            ntol = max(newton_tol, anchor0_tol)
        else:
            if tol_of is None:
                ntol = newton_tol
            else:  # after a partial map, the noise tolerance of the last point of G (tol_of(x) would need G at x)
                ntol = max(newton_tol, 0.1 * (tol_of(x) if full or tol_partial is None else tol_partial(x)))
            if jacobian is not None and jac_out is not None and res <= jacobian_at and (
                    jac_out.get("x_J") is None or residual(x, jac_out["x_J"]) > jac_out.get("reuse", 2e-2)):
                Jx, extra, nev = jacobian(x, gx, offsets)
                J, xJ = Jx, x.copy()
                jac_out.update(J=Jx, extra=extra, x_J=x.copy(), evaluations=nev)
                ev_sur += nev
        # a round anchored on G at x: the surrogate equals G there (same selection, its prox starts
        # at the minima G found), so G(x) is its value at the start
        xs, _, rs, _, evs, _, Jn, xJn = ladder(Gp, x, ntol, J0=J if J is not None else J0,
                                               g0=None if (k == 0 and anchor0 is not None) else gx,
                                               options=_SURROGATE_NEWTON)
        if Jn is not None:
            J, xJ = Jn, xJn
        ev_sur += evs
        if not (rs < res) or not np.isfinite(xs).all():
            break  # Newton on the surrogate made no progress: leave it to the caller
        rs_prev = None if first_anchor0 else rs
        x = xs
    if best is None:  # the anchored first round failed: G at the start
        x = project(x)
        gx, _ = G_info(x)
        ev_true += 1
        best = (residual(gx, x), x, gx, J, xJ)
    res, x, gx, J, xJ = best
    return Walk(x, gx, res, ev_true, ev_sur, J, xJ)


def ladder(G, x0, tol, *, J0=None, g0=None, options: LadderOptions = LadderOptions()) -> Ladder:
    """Damped → Anderson → Newton ladder on a deterministic map G.

    Damped iteration until the relative residual is below ``damped_exit``; Anderson (type II,
    memory ``memory``) until it is below ``newton_at`` (or stalls); then Newton with one
    finite-difference Jacobian of the frozen map, reused for the following (chord) steps and
    recomputed only when a chord step contracts the residual by less than a factor 10.  Near the
    solution a chord step gains about ``newton_at``·‖J′‖ per step, so two or three steps reach
    ``tol``.  ``J0``: a Jacobian to start the chord steps with (e.g. from a smaller rule), replaced
    by a finite-difference one as soon as a step with it fails to reduce the residual.  ``broyden``:
    every accepted step updates the chord Jacobian by the secant (Broyden) rank-one formula (the names are
    fields of :class:`LadderOptions`).  Returns a :class:`Ladder`.  ``g0``: G(x0) if already known (x0 must then
    be inside the domain, :func:`project`).
    """
    o = options
    Gc = _Counted(G)
    x = project(x0)
    gx = Gc(x) if g0 is None else np.asarray(g0, float)
    res = residual(gx, x)
    methods, it = [], 0
    if res > max(o.damped_exit, tol):
        methods.append("damped")
        x, gx, res, n = _damped(Gc, x, gx, res, tol, o)
        it += n
    if res > max(o.newton_at, tol):
        methods.append("anderson")
        x, gx, res, n = _anderson(Gc, x, gx, res, tol, o)
        it += n
    J = xJ = None
    if res > tol and o.max_newton > 0:
        methods.append("newton")
        x, gx, res, n, J, xJ = _chord_newton(Gc, x, gx, res, tol, J0, o)
        it += n
    return Ladder(x, gx, res, it, Gc.evaluations, "+".join(methods) or "start", J, xJ)


class _Counted:
    """G on the projected point, counting its evaluations."""

    def __init__(self, G):
        self.G, self.evaluations = G, 0

    def __call__(self, v):
        self.evaluations += 1
        return self.G(project(v))


def _damped(Gc, x, gx, res, tol, o: LadderOptions):
    """Damped iteration x ← (1 − damping)G(x) + damping·x until the residual is below ``damped_exit``."""
    it = 0
    for _ in range(o.max_damped):
        x = project((1 - o.damping) * gx + o.damping * x)
        gx = Gc(x)
        it += 1
        res = residual(gx, x)
        if res < max(o.damped_exit, tol):
            break
    return x, gx, res, it


def _anderson(Gc, x, gx, res, tol, o: LadderOptions):
    """Anderson acceleration (type II, on f = G(x) − x, memory ``memory``) until the residual is below
    ``newton_at`` or it stalls (8 steps without a 10 % gain); returns the best point."""
    X, F = [x.copy()], [gx - x]
    best = (res, x.copy(), gx.copy())
    stall = it = 0
    for _ in range(o.max_anderson):
        f = F[-1]
        if len(X) > 1:
            dX = np.stack([X[i + 1] - X[i] for i in range(len(X) - 1)], axis=1)
            dF = np.stack([F[i + 1] - F[i] for i in range(len(F) - 1)], axis=1)
            gam, *_ = np.linalg.lstsq(dF, f, rcond=None)
            xn = x + f - (dX + dF) @ gam
        else:
            xn = x + f
        xn = project(xn)
        if not np.isfinite(xn).all():
            break
        x = xn
        gx = Gc(x)
        it += 1
        res = residual(gx, x)
        X.append(x.copy())
        F.append(gx - x)
        X, F = X[-(o.memory + 1):], F[-(o.memory + 1):]
        if res < best[0] * 0.9:
            best, stall = (res, x.copy(), gx.copy()), 0
        else:
            stall += 1
        if res <= max(o.newton_at, tol) or stall >= 8:
            break
    res, x, gx = best
    return x, gx, res, it


def _chord_newton(Gc, x, gx, res, tol, J0, o: LadderOptions):
    """Newton with a finite-difference Jacobian of the frozen map, kept for the following (chord) steps while
    they contract by a factor 10 (a borrowed ``J0`` while they contract at all well), a halving line search,
    and secant updates; returns ``(x, G(x), residual, iterations, J, x_J)`` at the best point."""
    best = (res, x, gx)
    fresh = False
    rn_ratio = 1.0
    refresh_at = 0.1
    J = xJ = None
    it = 0
    if J0 is not None:
        # a borrowed Jacobian is kept while it contracts at all well: near the fixed point its
        # steps gain ‖(I−J0)⁻¹(J−J0)‖ each (≈ 0.06 for a 4×1024 pilot of a 4×16384 rule), but the
        # first step from the pilot point is still in the nonlinear range
        J, xJ, rn_ratio, refresh_at = np.asarray(J0, float), x.copy(), 0.0, 0.7
    for _ in range(o.max_newton):
        if J is None or not fresh and rn_ratio > refresh_at:
            J, xJ, fresh = fd_jacobian(Gc, x, gx), x.copy(), True
        try:
            step = np.linalg.solve(np.eye(x.size) - J, gx - x)
        except np.linalg.LinAlgError:
            break
        it += 1
        t = 1.0
        for _ in range(6):
            xn = project(x + t * step)
            gn = Gc(xn)
            rn = residual(gn, xn)
            if rn < res:
                break
            t *= 0.5
        if rn >= res:
            if fresh:
                break
            J = None  # the reused Jacobian is stale: recompute it at x
            continue
        rn_ratio = rn / res
        if o.broyden:
            # secant (Broyden) update of the chord Jacobian from the accepted step: free, and it
            # turns the linear convergence of a borrowed or aged Jacobian into a superlinear one
            s_ = xn - x
            ss = float(s_ @ s_)
            if ss > 0:
                J = J + np.outer(gn - gx - J @ s_, s_) / ss
        x, gx, res = xn, gn, rn
        best = (res, x, gx)
        fresh = False
        if res <= tol:
            break
    res, x, gx = best
    return x, gx, res, it, J, xJ
