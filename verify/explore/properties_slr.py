"""Evaluation functions of the single-location-regression properties (declared in
:mod:`attnlimits.derivations.slr.result`).  Each takes ``(point, *, size, seed)`` and returns
``[(label, Comparison), ...]`` (:mod:`attnlimits.symbolic.properties`)."""
from __future__ import annotations

import math

from attnlimits.verify.comparison import Comparison

__all__ = ["bayes_bound", "bo_monotone", "bo_below_rs"]

#: the precision to which the population optimiser locates an optimum (its ``--tol`` 1e-6 on the
#: integrals, the optimum's value then to about 1e-5): a deterministic numerical precision
OPTIMUM_PRECISION = 1e-5


def _population_rows(point, seed):
    from attnlimits.derivations.slr.result import POPULATION_COMMAND
    from attnlimits.symbolic.result import resolve

    params = POPULATION_COMMAND.parse({"model": point["model"], "nu": point["nu"], "L": [point["L"]],
                                       "activation": [point["activation"]], "seed": seed})
    return list(resolve(POPULATION_COMMAND.run)(params, progress=None))


def bayes_bound(point, *, size, seed):
    """The optimal population risk of an activation is at least the Bayes risk; softmax attains it."""
    (row,) = _population_rows(point, seed)
    se = math.hypot(float(row.get("risk_error") or 0.0), float(row.get("bayes_error") or 0.0))
    out = [("optimal risk >= Bayes risk", Comparison(float(row["risk"]), float(row["bayes_risk"]), se=se or None,
                                                     tolerance=OPTIMUM_PRECISION, kind="lower"))]
    if point["activation"] == "softmax":
        out.append(("softmax attains the Bayes risk", Comparison(float(row["risk"]), float(row["bayes_risk"]),
                                                                 se=se or None, tolerance=OPTIMUM_PRECISION)))
    return out


def _bo(model, nu, L, alphas, delta, size, seed):
    from attnlimits.verify.slr.bayes_optimal import bo_state_evolution

    return bo_state_evolution(model, nu, L, list(alphas), delta, points=int(size.get("points", 2 ** 11)),
                              replicates=int(size.get("replicates", 8)), seed=seed)


def bo_monotone(point, *, size, seed):
    """E_BO is non-increasing in α: E_BO(r·α) ≤ E_BO(α)."""
    a1, a2 = point["alpha"], point["alpha"] * point["ratio"]
    p1, p2 = _bo("spiked", point["nu"], point["L"], (a1, a2), 0.1, size, seed)
    reps = int(size.get("replicates", 8))
    return [(f"E_BO(α={a2:.3g}) <= E_BO(α={a1:.3g})",
             Comparison(p2.E_BO, p1.E_BO, se=math.hypot(p1.E_BO_se, p2.E_BO_se), dof=reps - 1, kind="upper"))]


def bo_below_rs(point, *, size, seed):
    """The Bayes-optimal error is a lower bound of the replica prediction of ridge ERM (equilibrium branch)."""
    from attnlimits.verify.slr.replica import rs_all_branches

    nu, L, a, lam = 2.0, 2, point["alpha"], point["lam"]
    (bo,) = _bo("spiked", nu, L, (a,), 0.1, size, seed)
    found = rs_all_branches(point["activation"], "spiked", nu, L, [a], lam, 0.1,
                            points=int(size.get("rs_points", 512)), replicates=4, seed=seed)
    eq = [fp for _, fp, ph in found[a] if ph == "equilibrium"]
    if not eq:
        raise RuntimeError(f"no equilibrium RS fixed point at alpha={a:g}, lam={lam:g}")
    rs = eq[0]
    return [("E_BO <= E_RS (equilibrium)",
             Comparison(bo.E_BO, rs.E_test, se=math.hypot(bo.E_BO_se, rs.E_test_error), dof=3, kind="upper"))]


def gamp_vs_state_evolution(point, *, size, seed):
    """GAMP on generated spiked-SLR data reaches the BO state evolution: its test error within 3 SE plus
    the finite-D allowance c/√D of claim C19-AMP (c = 0.1, measured), over ``seeds`` independent runs."""
    import numpy as np
    from attnlimits.verify.claims.slr_bayes_optimal import AMP_TEST_ERROR_C
    from attnlimits.verify.slr.amp import gamp_on_generated

    D = int(size.get("D", 300))
    n_seeds = int(size.get("seeds", 2))
    (se,) = _bo("spiked", point["nu"], point["L"], (point["alpha"],), 0.1, size, seed)
    runs = [gamp_on_generated(point["nu"], point["L"], point["alpha"], 0.1, D, seed * 101 + s,
                              n_test=int(size.get("n_test", 4000)), iterations=int(size.get("iterations", 400)),
                              device="cpu") for s in range(n_seeds)]
    te = np.array([r["test_error"] for r in runs])
    te_se = max(math.sqrt(sum(r["test_error_se"] ** 2 for r in runs)) / len(runs),
                float(te.std(ddof=1) / math.sqrt(len(runs))) if len(runs) > 1 else 0.0)
    out = [("GAMP test error vs E_BO", Comparison(float(te.mean()), se.E_BO, se=te_se,
                                                  dof=len(runs) - 1 if len(runs) > 1 else None,
                                                  allowance=AMP_TEST_ERROR_C / math.sqrt(D)))]
    if not all(r["converged"] for r in runs):
        out.append(("GAMP converged", Comparison(1.0, 0.0)))
    return out
