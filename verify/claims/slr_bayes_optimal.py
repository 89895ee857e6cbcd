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

- ``C19-max-AMP``, ``C19-max-order`` — the same checks for max-SLR (ν = ∞ and finite ν, L = 2):
  GAMP on data vs the state evolution, the order/limit/rate, the ν = ∞ closed form
  :math:`E_{BO}=1-q_v(\tfrac12+\arcsin(q_k)/\pi)` and the derived-vs-integrated-by-parts identity.

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


# ---------------------------------------------------------------------------------------------------
# Max-SLR (docs/slr.md §11, max-SLR paragraph): C19-max-* (separate entries; spiked claims untouched)
# ---------------------------------------------------------------------------------------------------

def bomax_curve_cached(ctx, L, nu, alphas, points, starts=("uninformed", "informed"), test_points=2 ** 15):
    """Cached :func:`verify.slr.bayes_optimal.bo_state_evolution` for max-SLR (Δ = 0.1)."""
    from verify.slr.bayes_optimal import bo_state_evolution

    key = ("slr-bo-max", L, nu, tuple(alphas), points, tuple(starts), test_points)
    return ctx.cached(key, lambda: bo_state_evolution("max", nu, L, list(alphas), DELTA, points=points,
                                                      starts=starts, test_points=test_points))


def _nu_tag(nu):
    return "∞" if math.isinf(nu) else f"{nu:g}"


def _run_max_AMP(ctx, size):
    from verify.slr.amp import gamp_on_generated_max

    checks = []
    D = size["D"]
    allowance = 5.0 / D
    rows = []
    for (L, nu, a) in size["points_amp"]:
        se = bomax_curve_cached(ctx, L, nu, [a], size["points"], starts=("uninformed",))[0]
        runs = [gamp_on_generated_max(nu, L, a, DELTA, D, ctx.seed + SEED_OFFSET + s, n_test=size["n_test"],
                                      iterations=size["iterations"], device=ctx.device) for s in size["seeds"]]
        tag = f"max L={L} ν={_nu_tag(nu)} α={a:g} D={D}"
        te = np.array([r["test_error"] for r in runs])
        te_se = math.sqrt(sum(r["test_error_se"] ** 2 for r in runs)) / len(runs)
        if len(runs) > 1:
            te_se = max(te_se, float(te.std(ddof=1) / math.sqrt(len(runs))))
        checks.append(Check(f"GAMP test error vs E_BO ({tag})", se.E_BO, float(te.mean()), math.hypot(te_se, se.E_BO_se),
                            0.0, k=3.0, allowance=allowance, note="3 SE + allowance 5/D (finite-D test predictor)"))
        for b, qs, hs in (("k", se.q_k, se.qhat_k), ("v", se.q_v, se.qhat_v)):
            checks.append(Check(f"GAMP 1 − V_{b} vs q_{b} ({tag})", qs, float(np.mean([1 - r[f"V_{b}"] for r in runs])),
                                None, 0.0, allowance=2 / math.sqrt(D),
                                note="allowance 2/√D (one run's order parameters fluctuate at O(D^-1/2))"))
            checks.append(Check(f"GAMP m_{b} vs q_{b} ({tag})", qs, float(np.mean([r[f"m_{b}"] for r in runs])),
                                None, 0.0, allowance=2 / math.sqrt(D), note="allowance 2/√D"))
        rows.append({"L": L, "nu": nu, "alpha": a, "D": D, "SE_E_BO": se.E_BO, "SE_E_BO_se": se.E_BO_se,
                     "GAMP_E": float(te.mean()), "GAMP_E_se": te_se, "SE_q_k": se.q_k,
                     "GAMP_1mV_k": float(np.mean([1 - r["V_k"] for r in runs]))})
    return checks, [], {"D": D, "seeds": size["seeds"], "allowance_test_error": allowance, "rows": rows}


def _run_max_order(ctx, size):
    from verify.slr import bayes_risk

    checks, plots = [], []
    L = 2
    al = size["alphas"]
    out = {}
    for nu in size["nus"]:
        pts = bomax_curve_cached(ctx, L, nu, al, size["points"], starts=("uninformed",))
        eb = 0.0 if math.isinf(nu) else bayes_risk("max", nu, L).value
        E = np.array([p.E_BO for p in pts])
        Ese = np.array([p.E_BO_se for p in pts])
        tag = f"max L={L} ν={_nu_tag(nu)}"
        checks.append(Check(f"E_B^pop ≤ min E_BO ({tag})", eb, float(np.min(E - 3 * Ese)), None, 0.0, kind="lower",
                            note="E_BO − 3 SE above the population Bayes risk"))
        checks.append(Check(f"E_BO strictly decreasing in α ({tag})", 1.0, float(np.all(np.diff(E) < 0)), None, 0.0))
        big = [i for i, a in enumerate(al) if a >= 20]
        slope = float(np.polyfit(np.log(np.array(al)[big]), np.log(E[big] - eb), 1)[0])
        checks.append(Check(f"E_BO − E_B^pop ∝ α^slope, slope ({tag})", (-1.2, -0.8), slope, None, 0.0,
                            kind="interval", note="fitted on α ≥ 20; expected −1"))
        checks.append(Check(f"fixed point unique ({tag})", 1.0, float(all(len(p.branches) == 1 for p in pts)), None,
                            0.0))
        if math.isinf(nu):
            for p in pts:
                closed = 1 - p.q_v * (0.5 + math.asin(p.q_k) / math.pi)
                checks.append(Check(f"E_BO vs 1 − q_v(1/2 + arcsin(q_k)/π) ({tag}, α={p.alpha:g})", closed, p.E_BO,
                                    p.E_BO_se, 0.0, k=4.0, note="orthant-probability closed form at ν = ∞, L = 2"))
        for p in pts:
            checks.append(Check(f"direct − ibp update, k ({tag}, α={p.alpha:g})", 0.0, p.identity_gap[0],
                                p.identity_gap_se[0], 0.0, k=4.0, note="identity in expectation; 4 SE"))
            checks.append(Check(f"direct − ibp update, v ({tag}, α={p.alpha:g})", 0.0, p.identity_gap[1],
                                p.identity_gap_se[1], 0.0, k=4.0, note="identity in expectation; 4 SE"))
        plots.append(PlotSpec(f"C19-max: E_BO − E_B^pop vs α ({tag})", "α", "E_BO − E_B^pop",
                              [PlotSeries("state evolution", list(al), list(E - eb))], yscale="log"))
        out[_nu_tag(nu)] = {"E_B_pop": eb, "slope": slope, "E_BO": list(map(float, E))}
    return checks, plots, {"alphas": list(al), **out}


register(Claim(
    "C19-max-AMP", "Max-SLR: GAMP on data reaches the BO state evolution",
    "GAMP on max-SLR data (L = 2, ν = ∞ and ν = 2) at D = 1000 reaches the test error and the Nishimori "
    "variances and overlaps (m = q = 1 − V) of the max-SLR BO state evolution.",
    f"{PAPER}; {SPEC} §11 (max-SLR), §15 C19", _run_max_AMP,
    quick={"D": 1000, "seeds": [0], "points_amp": [(2, math.inf, 4.0)], "points": 2 ** 12, "n_test": 20000,
           "iterations": 150},
    full={"D": 1000, "seeds": [0, 1, 2],
          "points_amp": [(2, math.inf, 2.0), (2, math.inf, 4.0), (2, math.inf, 10.0), (2, 2.0, 2.0), (2, 2.0, 4.0),
                         (2, 2.0, 10.0)], "points": 2 ** 13, "n_test": 20000, "iterations": 200},
    tags=("slr", "bayes-optimal", "finite-alpha", "mc", "max"), references=_refs()))

register(Claim(
    "C19-max-order", "Max-SLR: E_B^pop ≤ E_BO(α), decreasing, → E_B^pop like 1/α; derived = ibp updates",
    "The max-SLR BO error lies above the population Bayes risk, decreases in α and tends to it with rate α^-1 "
    "(ν = ∞: 1 − q_k ∝ α^-2); it equals the ν = ∞ closed form 1 − q_v(1/2 + arcsin(q_k)/π); the derived and "
    "the integrated-by-parts updates agree within the integration error.",
    f"{PAPER}; {SPEC} §11 (max-SLR), §15 C19", _run_max_order,
    quick={"nus": [math.inf], "alphas": [2, 4, 10, 20, 40, 80, 160], "points": 2 ** 12},
    full={"nus": [math.inf, 2.0], "alphas": [2, 4, 10, 20, 40, 80, 160, 320], "points": 2 ** 13},
    tags=("slr", "bayes-optimal", "finite-alpha", "max"), references=_refs()))
