"""RS fixed points over a curve: continuation in α, every branch at a point, the equilibrium branch, λ tuning
(docs/slr.md §10.7, §12).
"""
from __future__ import annotations

import math

import numpy as np

from ...portable_solver import ConvergenceError
from .fixed_point import RSFixedPoint, rs_fixed_point
from .rule import SYSTEM, UNKNOWNS, RSKernels, informed_start, small_overlap_start

__all__ = [
    "LAMBDA_LADDER",
    "rs_branch_search",
    "rs_branches",
    "rs_learning_curve",
    "rs_select_equilibrium",
    "rs_tune_lambda",
]


def rs_learning_curve(kern: RSKernels, rules, alphas, lam, delta, *, x0=None, model="spiked", nu=2.0,
                      progress=None, **kw) -> list:
    """Fixed points along ``alphas`` (sorted as given) by continuation: each starts from the previous
    one (``rs_fixed_point(warm=previous)``: its point, Jacobian and prox selection).

    Order matters for cost, not for the answer where the fixed point is unique: the first, cold
    point costs most, and at small α (rough map) most of all, so solving from the largest α down is
    cheaper (10 α in [1, 20], softmax spiked L = 2, 4×8192: about 12 s CPU from α = 20 down; rerun with
    ``benchmarks/bench_slr_replica.py``).  Where several fixed points exist, continuation follows the
    branch it starts on."""
    out = []
    prev = None
    for a in alphas:
        fp = rs_fixed_point(kern, rules, a, lam, delta, x0=x0 if prev is None else None, warm=prev, model=model,
                            nu=nu, progress=progress, **kw)
        out.append(fp)
        prev = fp
    return out


def rs_branches(kern: RSKernels, rules, alpha, lam, delta, *, model="spiked", nu=2.0, x0=None, progress=None,
                **kw) -> list:
    """Every distinct fixed point reached from the informed and the small-overlap starts (§10.6).

    Returns a list of ``(branch_name, RSFixedPoint)``; ``"informed"`` first.  A start that does not
    converge is skipped (the informed one must converge).  Two fixed points are the same when
    their order parameters agree within 1e-4 (relative).
    """
    starts = [("informed", informed_start(model, nu) if x0 is None else np.asarray(x0, float)),
              ("small_overlap", small_overlap_start(model, nu))]
    found = []
    for name, s in starts:
        try:
            fp = rs_fixed_point(kern, rules, alpha, lam, delta, x0=s, model=model, nu=nu, progress=progress, **kw)
        except ConvergenceError:
            if name == "informed":
                raise
            continue
        v = np.array([fp.values[k] for k in UNKNOWNS])
        dup = any(np.max(np.abs(v - np.array([f.values[k] for k in UNKNOWNS])) / np.maximum(1, np.abs(v))) < 1e-4
                  for _, f in found)
        if not dup:
            found.append((name, fp))
    return found


def _same_point(fa: RSFixedPoint, fb: RSFixedPoint, k_se: float = 3.0, rel: float = 1e-4) -> bool:
    """Two fixed points on the same rule are one when every order parameter agrees within
    ``k_se`` combined standard errors or ``rel`` (relative): closer than the integration error they
    cannot be told apart."""
    for k in UNKNOWNS:
        a, b = fa.values[k], fb.values[k]
        ea, eb = fa.errors.get(k, 0.0), fb.errors.get(k, 0.0)
        if abs(a - b) > max(rel * max(1.0, abs(a), abs(b)), k_se * math.hypot(ea, eb)):
            return False
    return True


def _degenerate(fp: RSFixedPoint) -> bool:
    """A point the search rejects: a response parameter at the projection's floor (V → 0, where the
    map's Jacobian blows up; measured: ``linear_uncentred`` spiked L = 2, λ = 0.1, continued down
    from λ = 10, ends at V_k = V_v = 1e-10 with a residual above tol and spectral radius ~1e4), an
    unconverged point whose V_k or V_v is not above its own integration error (the same limit reached
    on a coarser rule; measured: ``linear_uncentred`` max-SLR ν = 2, L = 3, α = 3.43, λ = 0.107 stopped at
    V_k = 2.8e-5 ± 7.2e-5 with spectral radius 4.6e4; its replicon ≈ 0 makes it the RS-stable branch of lowest
    objective, E_test 0.51 against ERM's 2.10), or non-finite values.  Not a fixed point of the RS equations
    (they need V > 0)."""
    x = np.array([fp.values[k] for k in UNKNOWNS])
    if (not np.isfinite(x).all()) or min(x[2], x[5]) <= 1e-8 or not math.isfinite(fp.training_objective):
        return True
    if "residual_above_tol" in fp.flags:
        return any(fp.values[k] <= fp.errors.get(k, 0.0) for k in ("V_k", "V_v"))
    return False


def _add_distinct(found: list, origin: str, fp: RSFixedPoint) -> bool:
    """Append ``(origin, fp)`` unless it repeats a point of ``found`` (then keep the lower residual)."""
    for i, (o, f) in enumerate(found):
        if _same_point(f, fp):
            if fp.residual < f.residual:
                found[i] = (o, fp)
            return False
    found.append((origin, fp))
    return True


#: Ridge strengths of the large-λ continuation, as multiples of the target λ (from large to small).
LAMBDA_LADDER = (100.0, 10.0, 3.0)


def rs_branch_search(kern: RSKernels, rules, alphas, lam, delta, *, model="spiked", nu=2.0, x0=None,
                     lam_ladder=LAMBDA_LADDER, side_ratio: float = 1.5, progress=None, **kw) -> dict:
    r"""Every distinct RS fixed point found at each α of ``alphas`` (docs/slr.md §10.7).

    Starts, at every α: the informed start (or ``x0``), the small-overlap start, continuation in λ
    from large λ (the informed start at ``lam_ladder`` × λ, then warm steps down to λ), and
    continuation in α from both sides: along ``alphas`` (sorted) from every fixed point of the
    neighbouring α below, then from every one of the neighbour above (the neighbouring points of the
    curve); a lone α gets its two sides at α/``side_ratio`` and α·``side_ratio``.  A start that does
    not converge is skipped.  Distinct up to the integration error (:func:`_same_point`).

    Returns ``{alpha: [(origin, RSFixedPoint), ...]}`` in the order found; select with
    :func:`rs_select_equilibrium`.  Cost: about (4 + len(lam_ladder) + 2 × branches) fixed points per α.
    """
    alphas = sorted(float(a) for a in alphas)
    found = {a: [] for a in alphas}

    def solve(a, lam_, **kw2):
        try:
            fp = rs_fixed_point(kern, rules, a, lam_, delta, model=model, nu=nu, progress=progress, **kw, **kw2)
        except (ConvergenceError, ValueError, np.linalg.LinAlgError, FloatingPointError):
            return None
        return None if _degenerate(fp) else fp

    x_inf = informed_start(model, nu) if x0 is None else np.asarray(x0, float)
    for a in alphas:
        for origin, s in (("informed", x_inf), ("small_overlap", small_overlap_start(model, nu))):
            fp = solve(a, lam, x0=s)
            if fp is not None:
                _add_distinct(found[a], origin, fp)
        prev = None
        for mult in lam_ladder:
            prev = solve(a, lam * mult, x0=x_inf) if prev is None else solve(a, lam * mult, warm=prev)
        fp = solve(a, lam, x0=x_inf) if prev is None else solve(a, lam, warm=prev)
        if fp is not None:
            _add_distinct(found[a], "large_lambda", fp)
    sides = {}
    if len(alphas) == 1:
        a = alphas[0]
        for tag, a_side in (("alpha_below", a / side_ratio), ("alpha_above", a * side_ratio)):
            fs = solve(a_side, lam, x0=x_inf)
            sides[tag] = [] if fs is None else [fs]
    # continuation along the curve, up then down, from every branch of the neighbour
    for direction, order in (("alpha_up", alphas), ("alpha_down", alphas[::-1])):
        for i, a in enumerate(order):
            if i == 0:
                neigh = sides.get("alpha_below" if direction == "alpha_up" else "alpha_above", [])
            else:
                neigh = [f for _, f in found[order[i - 1]]]
            for fn in neigh:
                fp = solve(a, lam, warm=fn)
                if fp is not None:
                    _add_distinct(found[a], direction, fp)
    return found


def rs_select_equilibrium(branches: list) -> list:
    """Label the fixed points of one point (``[(origin, fp), ...]``): returns rows of
    ``(origin, fp, phase)`` sorted by training objective, ``phase`` one of ``"equilibrium"`` and
    ``"metastable"`` (docs/slr.md §10.7).

    The equilibrium branch is the one with the lowest RS training objective (zero-temperature free
    energy) among the RS-stable ones (replicon < 1); if none is RS-stable, the lowest of all (its row
    then carries ``rsb``).  An RS energy computed at an AT-unstable point is not the ground-state energy
    of anything (RS underestimates it there, as in the Sherrington–Kirkpatrick model), so a low value
    there does not make it the equilibrium."""
    if not branches:
        return []
    order = sorted(branches, key=lambda of: of[1].training_objective)
    stable = [of for of in order if of[1].replicon < 1]
    eq = (stable or order)[0]
    return [(o, f, "equilibrium" if (o, f) is eq or f is eq[1] else "metastable") for o, f in order]


def _unstable(fp) -> bool:
    """Not an RS prediction to tune on (docs/slr.md §10.7–10.8): not an attracting fixed point of the
    damped iteration (the largest real part of the eigenvalues of ∂G/∂x is ≥ 1), or replica symmetry
    broken there (replicon ≥ 1).  The undamped spectral radius (``stability``) can exceed 1 at a fixed
    point the damped map reaches (an eigenvalue below −1), which is a prediction like any other; it is
    used only when the damped value is missing.  Measured: with the damped criterion alone, softmax at
    α = 15.2 tuned to λ = 10⁻³ (the grid's edge) with E_test 0.238, a dip below the neighbouring α —
    a replica-symmetry-broken point."""
    d = getattr(fp, "stability_damped", float("nan"))
    rep = getattr(fp, "replicon", float("nan"))
    if math.isfinite(rep) and rep >= 1:
        return True
    return bool(d >= 1) if math.isfinite(d) else bool(fp.stability >= 1)


def rs_tune_lambda(kern: RSKernels, rules, alpha, delta, *, grid=None, model="spiked", nu=2.0, x0=None,
                   refine: bool = True, xatol: float = 0.02, progress=None, **kw):
    r"""Minimise E_test over λ at fixed α (§12), among the stable fixed points (:func:`_unstable`: the
    damped map's criterion): a log grid (default 9 points on 10⁻³…10, solved by continuation from large
    to small λ; a warm start with no alignment, m = 0, or an unstable result is solved again from the
    informed start), then a bounded 1-D
    refinement in :math:`\log_{10}\lambda` between the neighbours of the best grid point
    (``scipy.optimize.minimize_scalar``, bounded Brent, ``xatol`` in decades).

    Returns ``(best RSFixedPoint, [grid RSFixedPoint...])``.  Grid points that do not converge
    are skipped and listed in the best point's flags.
    """
    grid = np.logspace(-3, 1, 9) if grid is None else np.asarray(sorted(grid), float)
    if grid.size < 3:
        raise ValueError("the λ grid needs at least 3 points")
    pts, failed = _solve_grid(kern, rules, alpha, delta, grid, model, nu, x0, progress, kw)
    lams = sorted(pts)
    errs = [pts[l_].training_objective_error if math.isfinite(pts[l_].training_objective_error) else 0.0
            for l_ in lams]
    nonequilibrium = _flag_nonequilibrium(pts, lams, errs)
    Ecand = [pts[l_].E_test if not (_unstable(pts[l_]) or nonequilibrium[i]) else math.inf
             for i, l_ in enumerate(lams)]
    if not np.isfinite(Ecand).any():
        Ecand = [pts[l_].E_test for l_ in lams]
    ib = int(np.argmin(Ecand))
    best = pts[lams[ib]]
    grid_out = [pts[l_] for l_ in lams]
    if refine and 0 < ib < len(lams) - 1:
        def solve_at(lam_, **kw2):
            return rs_fixed_point(kern, rules, alpha, lam_, delta, model=model, nu=nu, **kw, **kw2)

        best = _refine(solve_at, best, pts, lams, errs, ib, xatol)
    elif ib in (0, len(lams) - 1):
        best.flags = best.flags + ("lambda_at_grid_edge",)
    if failed:
        best.flags = best.flags + ("grid_failed:" + ";".join(f"{v:g}" for v in failed),)
    if progress is not None:
        progress(f"tuned alpha={alpha:g}: lam*={best.lam:.4g}, E_test={best.E_test:.5f}")
    return best, grid_out


def _solve_grid(kern, rules, alpha, delta, grid, model, nu, x0, progress, kw):
    """Fixed points on the λ grid by continuation from large λ: ``({λ: RSFixedPoint}, [failed λ])``.

    One guard: at large λ the fixed point can be the trivial one (m = 0), and the subspace m_k = m_v = 0 is
    invariant under the map, so a warm start from it never returns to the informed branch (linear_pure, L = 3,
    α = 2: E = 1.038 at an unstable m = 0 point instead of 0.947).  Such a start, or a result that is
    unstable, is solved again from the informed start, and the stable informed point is kept."""
    pts, failed = {}, []
    x, prev = x0, None
    x_informed = informed_start(model, nu) if x0 is None else np.asarray(x0, float)
    for lam in grid[::-1]:
        start, warm = x, prev
        if start is not None and min(abs(start[0]), abs(start[3])) < 1e-3:
            start, warm = x_informed, None
        try:
            fp = rs_fixed_point(kern, rules, alpha, float(lam), delta, x0=start, warm=warm, model=model, nu=nu,
                                progress=progress, **kw)
        except ConvergenceError:
            fp = None
        if (fp is None or _unstable(fp)) and start is not x_informed:
            try:
                fp2 = rs_fixed_point(kern, rules, alpha, float(lam), delta, x0=x_informed, model=model, nu=nu,
                                     progress=progress, **kw)
                if fp is None or not _unstable(fp2):
                    fp = fp2
            except ConvergenceError:
                pass
        if fp is None:
            failed.append(float(lam))
            continue
        pts[float(lam)] = fp
        x = np.array([fp.values[k] for k in UNKNOWNS])
        prev = fp
    if not pts:
        raise ConvergenceError(SYSTEM, {"alpha": alpha, "delta": delta}, float("nan"),
                               "no λ of the grid converged", "a different grid or more points")
    return pts, failed


def _flag_nonequilibrium(pts, lams, errs) -> list:
    """λ* is taken among the stable equilibrium fixed points (an unstable one, e.g. on a rough map at small λ,
    is not a prediction of the trained model).  The equilibrium training objective e(λ) = min_θ [loss +
    λ‖θ‖²/2]/N is non-decreasing in λ (de/dλ = ‖θ̂‖²/2N ≥ 0), so a fixed point whose objective exceeds that of
    a larger λ on the grid (beyond 3 SE) is a non-equilibrium branch (measured: softmax, α = 15.2, λ = 10⁻³:
    objective 0.113 against 0.060 at λ = 3.2·10⁻³, E_test 0.238, a dip of the tuned curve); it is flagged."""
    objs = [pts[l_].training_objective for l_ in lams]
    nonequilibrium = [any(objs[i] > objs[j] + 3 * max(errs[i], errs[j]) for j in range(i + 1, len(lams)))
                      for i in range(len(lams))]
    for i, l_ in enumerate(lams):
        if nonequilibrium[i] and "nonequilibrium" not in pts[l_].flags:
            pts[l_].flags = tuple(pts[l_].flags) + ("nonequilibrium",)
    return nonequilibrium


def _refine(solve_at, best, pts, lams, errs, ib, xatol):
    """Brent's bounded method (golden section with parabolic steps) in log₁₀λ between the neighbours of the best
    grid point, failed solves as +inf; every solved point is a candidate, not only the minimiser, if its
    objective stays below the next larger λ's (the objective is non-decreasing in λ).  ``solve_at(λ, **kw)``:
    the fixed point at λ, everything else fixed."""
    from scipy.optimize import minimize_scalar

    lo, hi = math.log10(lams[ib - 1]), math.log10(lams[ib + 1])
    cache = {}
    xb = np.array([best.values[k] for k in UNKNOWNS])

    def f(u):
        if u in cache:
            return cache[u].E_test
        try:
            fp = solve_at(10 ** u, x0=xb, warm=best)
        except ConvergenceError:
            return math.inf
        cache[u] = fp
        return fp.E_test

    minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": xatol})
    obj_hi = pts[lams[ib + 1]].training_objective
    for fp in cache.values():
        below = not fp.training_objective > obj_hi + 3 * max(fp.training_objective_error, errs[ib + 1], 0.0)
        if fp.E_test < best.E_test and below and (not _unstable(fp) or _unstable(best)):
            best = fp
    return best
