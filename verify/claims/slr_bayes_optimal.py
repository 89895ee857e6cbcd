r"""Claim C19: the Bayes-optimal error of spiked-SLR at finite α (``docs/slr.md`` §11, §14 R6, §15 C19).

Source: Duranthon, Marion, Boyer, Loureiro, Zdeborová, arXiv:2509.21936 ([D]), as derived in the spec.

- ``C19-R6`` — the state evolution (:func:`verify.slr.bayes_optimal.bo_state_evolution`) against
  the spec's R6 table (±0.005).
- ``C19-AMP`` — GAMP (:mod:`verify.slr.amp`) on generated data at ``D = 1000`` against the state
  evolution at R6 points: test error within 3 SE + an O(1/D) allowance ``5/D``; the GAMP variances
  and precisions :math:`1-V_b`, :math:`\hat A_b` against :math:`q_b`, :math:`\hat q_b`; the overlaps
  :math:`m_b=\hat b\cdot b^*/D` against :math:`q_b` with an allowance :math:`1/\sqrt D` (their
  seed-to-seed spread is :math:`O(D^{-1/2})`; a single run has no error bar of its own).
- ``C19-order`` — :math:`E_B^{\rm pop}\le E_{BO}(\alpha)`, decreasing in α, and
  :math:`E_{BO}-E_B^{\rm pop}\propto\alpha^{-1}` (fitted log–log slope in [−1.2, −0.8]).

- ``C19-softmax`` — :math:`E_{BO}(\alpha)` lies below the RS test error of softmax ridge ERM
  (:func:`verify.slr.replica.rs_fixed_point`, informed branch) at the same α for every λ of the
  grid, by more than 3 combined SE (spec C19: 0.247 < 0.378 at α = 4, λ = 0.1).
"""
from __future__ import annotations

import math

import numpy as np

from .base import Check, Claim, PlotSeries, PlotSpec, register

__all__ = ["R6", "bo_curve_cached"]

PAPER = "arXiv:2509.21936"
SPEC = "docs/slr.md"
SEED_OFFSET = 41_000

#: Spec §14 R6 (spiked, Δ = 0.1): (L, ν) → {α: E_BO}, and the population value.
R6 = {
    (2, 2.0): {1: 0.483, 4: 0.247, 10: 0.234, 20: 0.230},
    (3, 1.0): {1: 0.818, 4: 0.518, 10: 0.497, 20: 0.489},
    (3, 2.0): {1: 0.695, 4: 0.381, 10: 0.364, 20: 0.359},
}
R6_POP = {(2, 2.0): 0.2248, (3, 1.0): 0.481, (3, 2.0): 0.352}
DELTA = 0.1


def _refs():
    from derivations.slr.bayes_optimal import REFERENCES

    return REFERENCES


def bo_curve_cached(ctx, L, nu, alphas, points, starts=("uninformed", "informed")):
    """Cached :func:`verify.slr.bayes_optimal.bo_state_evolution` (spiked, Δ = 0.1)."""
    from verify.slr.bayes_optimal import bo_state_evolution

    key = ("slr-bo", L, nu, tuple(alphas), points, tuple(starts))
    return ctx.cached(key, lambda: bo_state_evolution("spiked", nu, L, list(alphas), DELTA, points=points,
                                                      starts=starts))


def _run_R6(ctx, size):
    checks, plots = [], []
    for (L, nu) in size["settings"]:
        table = R6[(L, nu)]
        al = sorted(table)
        pts = bo_curve_cached(ctx, L, nu, al, size["points"])
        for a, p in zip(al, pts):
            checks.append(Check(f"spec R6: E_BO(L={L}, ν={nu:g}, α={a:g})", table[a], p.E_BO, p.E_BO_se, 0.005,
                                note=f"{len(p.branches)} distinct fixed point(s); q_k={p.q_k:.4f}, q_v={p.q_v:.4f}"))
        plots.append(PlotSpec(f"C19: E_BO(α), spiked L={L}, ν={nu:g}", "α", "test error",
                              [PlotSeries("state evolution", al, [p.E_BO for p in pts]),
                               PlotSeries("spec R6", al, [table[a] for a in al], kind="points")]))
    return checks, plots, {"points": size["points"], "delta": DELTA}


def _run_AMP(ctx, size):
    from verify.slr.amp import gamp_on_generated

    checks = []
    D = size["D"]
    allowance = 5.0 / D
    params = {"D": D, "seeds": size["seeds"], "allowance_test_error": allowance,
              "allowance_overlaps": 1 / math.sqrt(D)}
    for (L, nu, a) in size["points_amp"]:
        se = bo_curve_cached(ctx, L, nu, [a], size["points"], starts=("uninformed",))[0]
        runs = [gamp_on_generated(nu, L, a, DELTA, D, ctx.seed + SEED_OFFSET + s, n_test=size["n_test"],
                                  device=ctx.device) for s in size["seeds"]]
        tag = f"L={L} ν={nu:g} α={a:g} D={D}"
        te = np.array([r["test_error"] for r in runs])
        te_se = math.sqrt(sum(r["test_error_se"] ** 2 for r in runs)) / len(runs)
        if len(runs) > 1:
            te_se = max(te_se, float(te.std(ddof=1) / math.sqrt(len(runs))))
        checks.append(Check(f"GAMP test error vs E_BO ({tag})", se.E_BO, float(te.mean()), te_se, 0.0,
                            allowance=allowance, note="allowance 5/D (finite-D test predictor)"))
        for b, qs, hs in (("k", se.q_k, se.qhat_k), ("v", se.q_v, se.qhat_v)):
            checks.append(Check(f"GAMP 1 − V_{b} vs q_{b} ({tag})", qs, float(np.mean([1 - r[f"V_{b}"] for r in runs])),
                                None, 0.01, note="Nishimori: V = 1 − q"))
            checks.append(Check(f"GAMP Â_{b} vs q̂_{b} ({tag})", hs, float(np.mean([r[f"Ahat_{b}"] for r in runs])),
                                None, 0.03, kind="rel", note="relative 3%"))
            checks.append(Check(f"GAMP m_{b} vs q_{b} ({tag})", qs, float(np.mean([r[f"m_{b}"] for r in runs])),
                                None, 0.0, allowance=1 / math.sqrt(D),
                                note="allowance 1/√D: the overlap of one run fluctuates at O(D^-1/2)"))
        checks.append(Check(f"GAMP converged ({tag})", 1.0, float(all(r["converged"] for r in runs)), None, 0.0))
    return checks, [], params


def _run_order(ctx, size):
    from verify.slr import bayes_risk

    checks, plots = [], []
    L, nu = 2, 2.0
    al = size["alphas"]
    pts = bo_curve_cached(ctx, L, nu, al, size["points"], starts=("uninformed",))
    eb = bayes_risk("spiked", nu, L).value
    E = np.array([p.E_BO for p in pts])
    checks.append(Check(f"E_B^pop ≤ min E_BO (L={L}, ν={nu:g})", 0.0, float(np.min(E - eb)), None, 0.0,
                        kind="lower"))
    checks.append(Check("E_BO strictly decreasing in α", 1.0, float(np.all(np.diff(E) < 0)), None, 0.0))
    big = [i for i, a in enumerate(al) if a >= 20]
    slope = float(np.polyfit(np.log(np.array(al)[big]), np.log(E[big] - eb), 1)[0])
    checks.append(Check("E_BO − E_B^pop ∝ α^slope, slope", (-1.2, -0.8), slope, None, 0.0, kind="interval",
                        note="fitted on α ≥ 20; expected −1 (1 − q_b ≈ 1/q̂_b ∝ 1/α)"))
    checks.append(Check(f"spec: population E_B (L={L}, ν={nu:g})", R6_POP[(L, nu)], eb, None, 5e-5))
    plots.append(PlotSpec("C19: E_BO − E_B^pop vs α", "α", "E_BO − E_B^pop",
                          [PlotSeries("state evolution", list(al), list(E - eb))], yscale="log"))
    return checks, plots, {"alphas": list(al), "slope": slope}


register(Claim(
    "C19-R6", "BO state evolution reproduces R6",
    "E_BO(α) of spiked-SLR at Δ = 0.1 equals the spec's R6 table within 0.005.",
    f"{PAPER} (BO finite α); {SPEC} §11, §14 R6, §15 C19", _run_R6,
    quick={"settings": [(2, 2.0)], "points": 2 ** 12},
    full={"settings": [(2, 2.0), (3, 1.0), (3, 2.0)], "points": 2 ** 14},
    tags=("slr", "bayes-optimal", "finite-alpha"), references=_refs()))

register(Claim(
    "C19-AMP", "GAMP on data reaches the BO state evolution",
    "GAMP on spiked-SLR data at D = 1000 reaches the test error, variances and overlaps of the BO state "
    "evolution (Nishimori: m = q = 1 − V, Â = q̂).",
    f"{PAPER}; {SPEC} §11 (cross-check), §15 C19", _run_AMP,
    quick={"D": 1000, "seeds": [0], "points_amp": [(2, 2.0, 4.0)], "points": 2 ** 12, "n_test": 20000},
    full={"D": 2000, "seeds": [0, 1, 2], "points_amp": [(2, 2.0, 4.0), (2, 2.0, 10.0), (3, 1.0, 4.0), (3, 2.0, 4.0)],
          "points": 2 ** 14, "n_test": 50000},
    tags=("slr", "bayes-optimal", "finite-alpha", "mc"), references=_refs()))

register(Claim(
    "C19-order", "E_B^pop ≤ E_BO(α), decreasing, → E_B^pop like 1/α",
    "The BO error at finite α lies above the population Bayes risk, decreases in α and tends to it "
    "with rate α^-1.",
    f"{PAPER}; {SPEC} §11, §15 C19", _run_order,
    quick={"alphas": [1, 2, 4, 10, 20, 40, 80, 160], "points": 2 ** 12},
    full={"alphas": [0.5, 1, 2, 4, 10, 20, 40, 80, 160, 320, 640], "points": 2 ** 14},
    tags=("slr", "bayes-optimal", "finite-alpha"), references=_refs()))


def _run_softmax(ctx, size):
    from verify.slr.replica import rs_fixed_point

    checks = []
    L, nu = 2, 2.0
    rows = []
    for a in size["alphas"]:
        bo = bo_curve_cached(ctx, L, nu, [a], size["points"], starts=("uninformed",))[0]
        for lam in size["lams"]:
            fp = rs_fixed_point("softmax", "spiked", nu, L, a, lam, DELTA, points=size["rs_points"])
            se = math.hypot(bo.E_BO_se, float(fp.E_test_error))
            # E_BO < E_RS by more than 3 SE: value = E_RS − E_BO must exceed 3 SE ("lower" check at 3 SE)
            checks.append(Check(f"E_RS(softmax, λ={lam:g}) − E_BO > 3 SE (L={L}, ν={nu:g}, α={a:g})", 3 * se,
                                float(fp.E_test) - bo.E_BO, None, 0.0, kind="lower",
                                note=f"E_RS = {float(fp.E_test):.4f} ± {float(fp.E_test_error):.1e}, "
                                     f"E_BO = {bo.E_BO:.4f} ± {bo.E_BO_se:.1e}"))
            rows.append({"alpha": a, "lam": lam, "E_RS": float(fp.E_test), "E_BO": bo.E_BO})
    return checks, [], {"rows": rows}


register(Claim(
    "C19-softmax", "E_BO below the RS softmax test error",
    "At finite α the Bayes-optimal error of spiked-SLR is below the RS test error of softmax ridge ERM for "
    "every λ (softmax is no longer Bayes-optimal at finite α).",
    f"{PAPER}; {SPEC} §10, §11, §15 C19", _run_softmax,
    quick={"alphas": [4.0], "lams": [0.1], "points": 2 ** 12, "rs_points": 1024},
    full={"alphas": [1.0, 4.0, 10.0, 20.0], "lams": [1e-3, 1e-2, 0.1, 1.0, 10.0], "points": 2 ** 14,
          "rs_points": 4096},
    tags=("slr", "bayes-optimal", "finite-alpha", "replica"), references=_refs()))
