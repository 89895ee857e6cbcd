"""Fixed points of frozen (deterministic) maps, shared by the result-specific solvers: the damped → Anderson →
chord-Newton ladder (:func:`ladder`, its :class:`LadderOptions` and :class:`Ladder` result) and the forward-difference
Jacobian (:func:`fd_jacobian`).  A :class:`Domain` says how iterates are kept inside the map's domain and how a
residual is measured; the RS solver (:mod:`attnlimits.numeric.slr.rs`) and the Bayes-optimal state evolution
(:mod:`attnlimits.numeric.slr.bo_state_evolution`) use them.  Portable: numpy and the standard library only (the
exported solvers embed this text).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

__all__ = ["Domain", "Ladder", "LadderOptions", "fd_jacobian", "ladder", "relative_residual"]


def relative_residual(g, x):
    """Relative ∞-distance of g from x (max |g − x| / max(1, |x|))."""
    return float(np.max(np.abs(g - x) / np.maximum(1.0, np.abs(x))))


class Domain(NamedTuple):
    """``project(x)``: the nearest admissible iterate; ``residual(g, x)``: the distance the ladder minimises."""

    project: Callable = np.asarray
    residual: Callable = relative_residual


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


def fd_jacobian(G, x, gx, h=1e-6, step=None):
    """Forward differences of ``G`` at ``x`` (``gx = G(x)``), step ``h·max(1, |x_j|)`` or ``step(x_j)``."""
    n = x.size
    J = np.empty((n, n))
    for j in range(n):
        xp = x.copy()
        hj = h * max(1.0, abs(x[j])) if step is None else step(x[j])
        xp[j] += hj
        J[:, j] = (G(xp) - gx) / hj
    return J


def ladder(G, x0, tol, *, J0=None, g0=None, options: LadderOptions = LadderOptions(),
           domain: Domain = Domain()) -> Ladder:
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
    be inside the ``domain``).
    """
    o = options
    project, residual = domain
    Gc = _Counted(G, project)
    x = project(x0)
    gx = Gc(x) if g0 is None else np.asarray(g0, float)
    res = residual(gx, x)
    methods, it = [], 0
    if res > max(o.damped_exit, tol):
        methods.append("damped")
        x, gx, res, n = _damped(Gc, x, gx, res, tol, o, domain)
        it += n
    if res > max(o.newton_at, tol):
        methods.append("anderson")
        x, gx, res, n = _anderson(Gc, x, gx, res, tol, o, domain)
        it += n
    J = xJ = None
    if res > tol and o.max_newton > 0:
        methods.append("newton")
        x, gx, res, n, J, xJ = _chord_newton(Gc, x, gx, res, tol, J0, o, domain)
        it += n
    return Ladder(x, gx, res, it, Gc.evaluations, "+".join(methods) or "start", J, xJ)


class _Counted:
    """G on the projected point, counting its evaluations."""

    def __init__(self, G, project):
        self.G, self.project, self.evaluations = G, project, 0

    def __call__(self, v):
        self.evaluations += 1
        return self.G(self.project(v))


def _damped(Gc, x, gx, res, tol, o: LadderOptions, domain: Domain):
    """Damped iteration x ← (1 − damping)G(x) + damping·x until the residual is below ``damped_exit``."""
    project, residual = domain
    it = 0
    for _ in range(o.max_damped):
        x = project((1 - o.damping) * gx + o.damping * x)
        gx = Gc(x)
        it += 1
        res = residual(gx, x)
        if res < max(o.damped_exit, tol):
            break
    return x, gx, res, it


def _anderson(Gc, x, gx, res, tol, o: LadderOptions, domain: Domain):
    """Anderson acceleration (type II, on f = G(x) − x, memory ``memory``) until the residual is below
    ``newton_at`` or it stalls (8 steps without a 10 % gain); returns the best point."""
    project, residual = domain
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


def _chord_newton(Gc, x, gx, res, tol, J0, o: LadderOptions, domain: Domain):
    """Newton with a finite-difference Jacobian of the frozen map, kept for the following (chord) steps while
    they contract by a factor 10 (a borrowed ``J0`` while they contract at all well), a halving line search,
    and secant updates; returns ``(x, G(x), residual, iterations, J, x_J)`` at the best point."""
    project, residual = domain
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
