"""The piece walk: Newton on the smooth pieces of the piecewise-smooth frozen RS map, every candidate checked on the
map itself (the ladder it runs on each piece is the shared one of :mod:`attnlimits.numeric.frozen`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from ...frozen import Domain, LadderOptions, ladder
from .rule import project, residual

#: the RS unknowns' domain (q ≥ m², V > 0) and relative residual, for the shared ladder
RS_DOMAIN = Domain(project, residual)

__all__ = ["RS_DOMAIN", "Walk", "WalkHooks", "WalkOptions", "piece_walk"]


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
                                               options=_SURROGATE_NEWTON, domain=RS_DOMAIN)
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


