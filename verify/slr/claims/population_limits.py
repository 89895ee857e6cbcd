r"""Claims of single-location regression at population level, C9–C14, C20–C24, TRAIN-pop and Q1–Q3
(``docs/slr.md`` §15, §16): variable length, strict gaps, decay rates in ν, the activation ranking, nesting,
orthogonal noise, the predecessor [M] (arXiv:2410.01537), Bayes parameters independent of L, softmax → 0 on
max-SLR, online training at population level, and the quoted-versus-derived entries Q1–Q3 (§16), whose verdict is
**discrepancy** by construction: both numbers are reported.  The comparison rules are those of :mod:`.population`.
"""
from __future__ import annotations

import math

import numpy as np

from attnlimits.verify.claims.base import Check, Claim, PlotSeries, PlotSpec, register

from .population_shared import (INF, source, claim_seed, value_and_error, population_theory, qmc_options,
                                 population_optimum, bayes_value, linear_closed_form_values, stein_mean_value,
                                 mc_check, fmt_nu, mc_options, half_unit, LINEAR_VARIANTS, MC_SIZES, references)


# =============================================================================================
# C9–C14: variable length, strict gaps, rates, ranking, nesting, orthogonal noise
# =============================================================================================

_C9_SPEC = {
    ("max", INF): {"linear_uncentred": 0.133, "linear_centred": 0.116, "erf_learned": 0.139, "softplus_norm": 0.001,
                   "softmax": 0.0},
    ("spiked", 5.0): {"linear_uncentred": 0.043, "linear_centred": 0.112},
}


def _run_C9(ctx, size):
    checks = []
    for (model, nu), gaps in _C9_SPEC.items():
        for act, spec_gap in gaps.items():
            r = population_optimum(ctx, act, model, nu, [1, 2, 3], per_length=True)
            gap = r.risk - r.per_length["average"]
            checks.append(Check(f"shared − per-length, {act}, {model} ν={fmt_nu(nu)} L~U{{1,2,3}} ≈ {spec_gap}",
                                spec_gap, gap, None, 0.01,
                                note=f"shared {r.risk:.4f}, per-length {r.per_length['average']:.4f}"))
    # softmax: the Bayes parameters do not depend on L, so no gap (exactly)
    r = population_optimum(ctx, "softmax", "spiked", 5.0, [1, 2, 3], per_length=True)
    checks.append(Check("softmax spiked ν=5: shared = per-length", 0.0, r.risk - r.per_length["average"], None, 1e-5))
    return checks, [], {}


#: The variable-length panel's setting (``attnlimits figure slr-varlen``): max-SLR ν = ∞, L ~ U{1,2,3}, its
#: activations in the order of their shared optimum (the spec's R1/R2: 0, 0.054, 0.279, 0.384, 0.389).
_C9MC_ORDER = ("softmax", "softplus_norm", "linear_centred", "erf_learned", "linear_uncentred")
#: Cost of sharing one (k, v) over the lengths, per activation: the lower bound for the variants it hurts
#: (R1/R2 gaps 0.116–0.139) and the upper bound for those it spares (0.001, 0).
_C9MC_GAP = {"linear_uncentred": ("lower", 0.1), "linear_centred": ("lower", 0.1), "erf_learned": ("lower", 0.1),
             "softplus_norm": ("upper", 0.01), "softmax": ("upper", 0.01)}


def _run_C9_mc(ctx, size):
    """C9 with simulation: the risk at each activation's shared optimum, re-estimated on fresh projection draws,
    equals the theory there; the ordering of the activations and the cost of sharing hold for the simulated
    risks (sign at 3 SE)."""
    import numpy as np

    from attnlimits.verify.slr.estimators import projection_risk

    checks, params, mc = [], {"n": size["n"], "risks": {}}, {}
    law = {1: 1 / 3, 2: 1 / 3, 3: 1 / 3}
    for i, act in enumerate(_C9MC_ORDER):
        r = population_optimum(ctx, act, "max", INF, [1, 2, 3], per_length=True)
        a = r.argmin
        extra = next((float(a[k]) for k in ("c", "b") if a.get(k) is not None), None)
        est = projection_risk(act, a["m_k"], a["q_k"], a["m_v"], a["q_v"], model="max", nu=INF, L=law, n=size["n"],
                              generator=ctx.seed_for("C9-mc", i), extra=extra, batches=size["batches"],
                              device=ctx.device)
        theory = float(r.risk_at_bound) if r.limit and r.risk_at_bound is not None else float(r.risk)
        where = "at the bound m_k = 200 (the optimum is a limit)" if r.limit else "at the argmin"
        chk = Check.mc(f"{act}: MC risk at the shared optimum ({where}) = theory {theory:.4f}", theory, est,
                       note=f"{size['n']:,} fresh projection draws per length, {size['batches']} batches; theory "
                            f"integration error {r.risk_error:.1e} (tolerance 3×)")
        chk.tolerance, chk.tolerance_reason = 3.0 * float(r.risk_error), "numerical"
        checks.append(chk)
        mc[act] = (float(est.mean), float(est.se), np.asarray(est.samples, float))
        per = float(r.per_length["average"])
        kind, bound = _C9MC_GAP[act]
        gap = mc[act][0] - per
        if kind == "lower":
            checks.append(Check.holds(f"{act}: sharing costs more than {bound} (MC at the shared optimum − per-length "
                                      f"average {per:.4f}, 3 SE below the gap)", gap - 3 * mc[act][1] > bound,
                                      note=f"gap {gap:.4f} ± {mc[act][1]:.4f}"))
        else:
            checks.append(Check.holds(f"{act}: sharing costs less than {bound} (MC at the shared optimum − per-length "
                                      f"average {per:.4f}, 3 SE above the gap)", gap + 3 * mc[act][1] < bound,
                                      note=f"gap {gap:.4f} ± {mc[act][1]:.4f}"))
        params["risks"][act] = {"theory": theory, "mc": mc[act][0], "mc_se": mc[act][1], "per_length": per,
                                "limit": bool(r.limit)}
    for lo, hi in zip(_C9MC_ORDER[:-1], _C9MC_ORDER[1:]):
        d = mc[hi][0] - mc[lo][0]
        se = math.hypot(mc[hi][1], mc[lo][1])  # independent draws per activation
        checks.append(Check.holds(f"MC ordering: {lo} < {hi} at the shared optimum (difference 3 SE above 0)",
                                  d - 3 * se > 0, note=f"difference {d:.4f} ± {se:.4f}"))
    return checks, [], params


_NUS10 = (0.5, 1.0, 2.0, 5.0, 10.0)


def _run_C10(ctx, size):
    checks = []
    smallest = {"spiked": (1.0, None), "max": (1.0, None)}
    for model in ("spiked", "max"):
        for L in (2, 3, 5):
            for nu in _NUS10:
                eb, err = bayes_value(ctx, model, nu, L)
                mu = None if model == "spiked" else stein_mean_value(nu, eb)
                for v in LINEAR_VARIANTS:
                    r, _ = linear_closed_form_values(v, model, L, nu, mu)
                    gap = r - eb
                    if gap < smallest[model][0]:
                        smallest[model] = (gap, (L, nu, v))
                    if err > 1e-5:
                        checks.append(Check(f"quadrature error {model} L={L} ν={nu:g} < 1e-5", (0.0, 1e-5), err,
                                            None, 0.0, kind="interval"))
                checks.append(Check.holds(f"E_B < every linear variant, {model} L={L} ν={nu:g}",
                                    all(linear_closed_form_values(v, model, L, nu, mu)[0] - eb > 10 * max(err, 1e-12) for v in LINEAR_VARIANTS)))
    gap, where = smallest["max"]
    checks.append(Check.spec(f"smallest max-SLR gap 3.0e-4 (at {where})", 3.0e-4, gap, 5e-5))
    checks.append(Check.holds("smallest max-SLR gap at L=2, ν=0.5, linear_centred", where == (2, 0.5, "linear_centred")))
    gap, where = smallest["spiked"]
    checks.append(Check.spec(f"smallest spiked gap 2.0e-3 (at {where})", 2.0e-3, gap, 5e-4))
    return checks, [], {}


def _fit_slope(x, y):
    return float(np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)[0])


def _run_C11(ctx, size):
    checks = []
    nus = (8.0, 16.0, 24.0, 32.0)
    eb2 = [bayes_value(ctx, "spiked", nu, 2)[0] for nu in nus]
    eb3 = [bayes_value(ctx, "spiked", nu, 3)[0] for nu in nus]
    rates = [-math.log(e) / nu for e, nu in zip(eb2, nus)]
    for nu, r, spec_r in zip(nus, rates, (0.422, 0.352, 0.325, 0.310)):
        checks.append(Check.spec(f"−log E_B/ν at ν={nu:g} (L=2) = {spec_r}", spec_r, r, 1e-3))
    checks.append(Check.holds("−log E_B/ν decreasing toward 1/4", all(a > b > 0.25 for a, b in zip(rates, rates[1:]))))
    from attnlimits.derivations import slr as S

    asym_expr = S.spiked_asymptotic()  # (L−1)(√π/2)ν^(−1/2)e^(−ν/4), derived (§9)
    asym = lambda nu, L: float(asym_expr.subs({S.nu: nu, S.L: L}))  # noqa: E731
    for nu, e, spec_r in zip((8.0, 16.0, 32.0), (eb2[0], eb2[1], eb2[3]), (0.809, 0.884, 0.934)):
        checks.append(Check.spec(f"exact/asymptotic at ν={nu:g} (L=2) = {spec_r}", spec_r, e / asym(nu, 2), 1e-3 * spec_r))
    checks.append(Check.spec("E_B(L=3)/E_B(L=2) at ν=32 = 1.98", 1.98, eb3[-1] / eb2[-1], 5e-3))
    # fitted exponential rate: −log E_B = a ν + b log ν + c on ν = 8..32 → a ≈ 1/4 (derived), b ≈ 1/2
    X = np.column_stack([nus, np.log(nus), np.ones(4)])
    a, b, _ = np.linalg.lstsq(X, -np.log(eb2), rcond=None)[0]
    checks.append(Check("fitted exponential rate a in −log E_B ≈ aν + b log ν + c (L=2)", 0.25, float(a), None, 0.01))
    # fitted polynomial rate of linear attention: slope of log E vs log ν → −1 (ν = 1e2 … 1e4)
    big = np.geomspace(1e2, 1e4, 9)
    for v in LINEAR_VARIANTS:
        for L in (2, 3):
            ys = [math.log(linear_closed_form_values(v, "spiked", L, float(nu))[0]) for nu in big]
            checks.append(Check(f"theory: log–log slope of {v} (L={L}) vs ν on [1e2, 1e4]", -1.0,
                                _fit_slope(np.log(big), ys), None, 0.02, tolerance_reason="numerical"))
            lim = float(nu_limit(v, L))
            checks.append(Check.spec(f"ν E({v}, L={L}) → {lim:g} (§9)", lim, big[-1] * linear_closed_form_values(v, "spiked", L, big[-1])[0],
                                2e-3 * lim))
    rate_checks_, rate_series = _c11_mc_rates(ctx, size)
    checks += rate_checks_
    # the population figure: error against ν, spiked L = 2
    grid = [0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 10.0]
    acts = ("softmax", "linear_uncentred", "linear_centred", "erf_learned", "softplus_norm")
    series = []
    for act in acts:
        ys = [population_optimum(ctx, act, "spiked", nu, 2).risk for nu in grid]
        series.append(PlotSeries(act + (" (= Bayes)" if act == "softmax" else ""), grid, ys))
    series.append(PlotSeries("Bayes risk (quadrature)", grid, [bayes_value(ctx, "spiked", nu, 2)[0] for nu in grid]))
    from attnlimits.verify.slr import projection_risk

    for j, act in enumerate(("softmax", "linear_uncentred")):
        xs, ys, es = [], [], []
        for i, nu in enumerate((1.0, 5.0, 10.0)):
            r = population_optimum(ctx, act, "spiked", nu, 2)
            a = r.argmin
            est = projection_risk(act, a["m_k"], a["q_k"], a["m_v"], a["q_v"], model="spiked", nu=nu, L=2,
                                  n=size["n"], generator=claim_seed(ctx, "C11", 10 * j + i), **mc_options(ctx))
            checks.append(mc_check(f"MC {act} at its optimum, spiked L=2 ν={nu:g}", r.risk, est, 3e-3))
            xs.append(nu)
            ys.append(float(est.mean))
            es.append(float(est.se))
        series.append(PlotSeries(f"MC {act}", xs, ys, es, kind="points"))
    plot = PlotSpec("Population error vs ν (spiked-SLR, L = 2)", "ν", "optimal population risk", series,
                    xscale="log", yscale="log")
    rate_plot = PlotSpec("C11: decay rates on Monte Carlo (spiked-SLR)", "ν", "population risk at the optimum",
                         rate_series, xscale="log", yscale="log")
    return checks, [plot, rate_plot], {"n": size["n"], "rate_n": size.get("rate_n"),
                                       "rate_n_softmax": size.get("rate_n_softmax")}


#: ν grids of C11's Monte Carlo rate fits. Linear attention: E = C/ν (1 + c/ν + …) fitted with a 1/ν
#: correction term on ν = 40 … 640 (the corrected fit of the closed forms gives −0.999 … −1.000, the
#: plain one −0.97). Softmax (Bayes point k = √ν k*, v = v*): E = C ν^(−1/2) e^(−ν/4)(1 + c/ν + …), so
#: log(E √ν) is fitted linearly in ν with a 1/ν correction on ν = 6 … 22 (on quadrature values it gives
#: −0.2477 at L = 2 and −0.2457 at L = 3: 0.7 and 1.8 quick SEs (0.0033) off, so --full, whose SE is √5 smaller
#: and which adds L = 3, also fits a 1/ν² term: −0.2495 and −0.2499, at 4.5× the SE).
_C11_LIN_NUS = (40.0, 80.0, 160.0, 320.0, 640.0)
_C11_SOFT_NUS = (6.0, 10.0, 14.0, 18.0, 22.0)


def _c11_mc_rates(ctx, size):
    """Decay rates fitted on Monte Carlo population risks: linear attention ∝ 1/ν (band
    excludes 0 and the next power −2), softmax ∝ e^(−ν/4) (band excludes 0 — no exponential decay —
    and −1, the quoted e^(−ν) of Q2)."""
    from attnlimits.verify.comparison import fit_rate
    from attnlimits.verify.slr import projection_risk

    from attnlimits.verify.claims.rates import rate_checks

    checks, series = [], []
    n_lin = int(size.get("rate_n", size["n"]))
    n_soft = int(size.get("rate_n_softmax", 5 * size["n"]))
    for j, (v, L) in enumerate(size.get("rate_linear", (("linear_uncentred", 2), ("linear_centred", 2)))):
        ys, es, dofs = [], [], []
        for i, nu in enumerate(_C11_LIN_NUS):
            a = population_optimum(ctx, v, "spiked", nu, L).argmin
            est = projection_risk(v, a["m_k"], a["q_k"], a["m_v"], a["q_v"], model="spiked", nu=nu, L=L, n=n_lin,
                                  generator=claim_seed(ctx, "C11", 1000 + 100 * j + i), **mc_options(ctx))
            ys.append(float(est.mean)), es.append(float(est.se)), dofs.append(est.n_draws - 1)
        f = fit_rate(_C11_LIN_NUS, ys, es, dofs=dofs, corrections=(-1.0,))
        checks += rate_checks(f"MC {v} (L={L}): log E vs log ν on [{_C11_LIN_NUS[0]:g}, {_C11_LIN_NUS[-1]:g}] "
                              f"(+1/ν term)", f.slope, f.se, -1.0, (0.0, -2.0), dof=f.dof,
                              note=f"χ² {f.chi2:.2f} on {f.chi2_dof} dof; n = {n_lin} per point")
        series.append(PlotSeries(f"MC {v} L={L}", list(_C11_LIN_NUS), ys, es, kind="points", group=v))
        series.append(PlotSeries(f"fit slope {f.slope:.3f}", list(_C11_LIN_NUS),
                                 [float(x) for x in f.predict(_C11_LIN_NUS)], kind="line", group=v))
    for j, L in enumerate(size.get("rate_softmax_L", (2,))):
        ys, es, dofs = [], [], []
        for i, nu in enumerate(_C11_SOFT_NUS):
            est = projection_risk("softmax", math.sqrt(nu), nu, 1.0, 1.0, model="spiked", nu=nu, L=L, n=n_soft,
                                  generator=claim_seed(ctx, "C11", 2000 + 100 * j + i), **mc_options(ctx))
            ys.append(float(est.mean)), es.append(float(est.se)), dofs.append(est.n_draws - 1)
        root = np.sqrt(_C11_SOFT_NUS)
        corr = tuple(size.get("rate_softmax_corrections", (-1.0,)))
        f = fit_rate(_C11_SOFT_NUS, np.asarray(ys) * root, np.asarray(es) * root, dofs=dofs, log_x=False,
                     corrections=corr)
        terms = " + ".join("1/ν" if p == -1 else f"ν^{p:g}" for p in corr)
        checks += rate_checks(f"MC softmax = Bayes (L={L}): log(E√ν) vs ν on [{_C11_SOFT_NUS[0]:g}, "
                              f"{_C11_SOFT_NUS[-1]:g}] (+{terms})", f.slope, f.se, -0.25, (0.0, -1.0), dof=f.dof,
                              note=f"χ² {f.chi2:.2f} on {f.chi2_dof} dof; n = {n_soft} per point; at k = √ν k*, v = v*")
        series.append(PlotSeries(f"MC softmax L={L}", list(_C11_SOFT_NUS), ys, es, kind="points", group="softmax"))
        series.append(PlotSeries(f"fit e^({f.slope:.3f} ν)", list(_C11_SOFT_NUS),
                                 [float(x) for x in f.predict(_C11_SOFT_NUS) / root], kind="line", group="softmax"))
    return checks, series


def nu_limit(variant, L):
    """lim ν E of a linear variant on spiked-SLR (§9, by SymPy)."""
    from attnlimits.derivations import slr as S

    return S.linear_asymptotics()["spiked_nu_E"][variant].subs(S.L, L)


_C12_SPEC = {"softplus_norm": {2: 0.049, 3: 0.111, 5: 0.233}, "erf_learned": {2: 0.334, 3: 0.400, 5: 0.4445}}


def _run_C12(ctx, size):
    from attnlimits.verify.slr import projection_risk

    checks = []
    Ls = (2, 3, 5)
    vals = {}
    for act in ("softmax", "softplus_norm", "erf_learned", "linear_uncentred"):
        vals[act] = {L: population_optimum(ctx, act, "max", INF, L) for L in Ls}
    for act, spec in _C12_SPEC.items():
        for L, s in spec.items():
            checks.append(Check(f"{act} max ν=∞ L={L} ≈ {s}", s, vals[act][L].risk, None, 0.01,
                                note=f"± {vals[act][L].risk_error:.1e} (QMC)"))
    for L in Ls:
        r = [vals[a][L].risk for a in ("softmax", "softplus_norm", "erf_learned", "linear_uncentred")]
        checks.append(Check.holds(f"L={L}: softmax < softplus_norm < erf_learned ≤ linear_uncentred",
                            r[0] < r[1] < r[2] <= r[3] + 1e-4, note=", ".join(f"{x:.4f}" for x in r)))
    sp_gaps = [vals["softplus_norm"][L].risk for L in Ls]
    checks.append(Check.holds("softplus_norm gap to softmax grows with L", sp_gaps[0] < sp_gaps[1] < sp_gaps[2]))
    checks.append(Check.holds("softmax optimum is the limit m_k → ∞ (flag)", all(vals["softmax"][L].limit for L in Ls)))
    pts = []
    for i, L in enumerate(Ls):
        a = vals["softplus_norm"][L].argmin
        est = projection_risk("softplus_norm", a["m_k"], a["q_k"], a["m_v"], a["q_v"], model="max", nu=INF, L=L,
                              n=size["n"], generator=claim_seed(ctx, "C12", i), extra=0.0, **mc_options(ctx))
        checks.append(mc_check(f"MC softplus_norm at its optimum, max ν=∞ L={L}", vals["softplus_norm"][L].risk, est,
                          3e-3))
        pts.append((L, float(est.mean), float(est.se)))
    series = [PlotSeries(a + (" (limit m_k → ∞)" if a == "softmax" else ""), list(Ls), [vals[a][L].risk for L in Ls])
              for a in vals]
    series.append(PlotSeries("Bayes risk (= 0 at ν = ∞)", list(Ls), [0.0] * len(Ls)))
    series.append(PlotSeries("MC softplus_norm", [p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts],
                             kind="points"))
    plot = PlotSpec("Population error vs L (max-SLR, ν = ∞; Bayes = 0)", "sequence length L", "optimal population risk",
                    series, xscale="linear")
    return checks, [plot], {"n": size["n"]}


_C13_SETTINGS = {
    "quick": [("spiked", 1.0, 2), ("spiked", 5.0, 2), ("max", 2.0, 2)],
    "full": [("spiked", 1.0, 2), ("spiked", 5.0, 2), ("spiked", 1.0, 3), ("spiked", 2.0, 3), ("max", 2.0, 2),
             ("max", 2.0, 3), ("max", INF, 2), ("max", INF, 3)],
}
_R2_ERF_FIXED = {("spiked", 1.0, 2): 0.4002, ("spiked", 5.0, 2): 0.2786, ("spiked", 1.0, 3): 0.5547,
                 ("spiked", 2.0, 3): 0.4984, ("max", 2.0, 2): 0.3827, ("max", 2.0, 3): 0.4993, ("max", INF, 2): 0.3325,
                 ("max", INF, 3): 0.4246}


def _run_C13(ctx, size):
    checks = []
    for model, nu, L in _C13_SETTINGS[ctx.mode]:
        tag = f"{model} L={L} ν={fmt_nu(nu)}"
        eb = 0.0 if (model == "max" and math.isinf(nu)) else bayes_value(ctx, model, nu, L)[0]
        opt = {a: population_optimum(ctx, a, model, nu, L) for a in
               ("softmax", "softplus_norm_bias", "linear_uncentred", "linear_pure", "erf_learned", "erf_fixed",
                "linear_centred", "softplus_norm")}
        tol = 3e-3
        sb = opt["softplus_norm_bias"]
        checks.append(Check(f"{tag}: softplus_norm_bias = softmax = E_B", eb, sb.risk, None, tol,
                            note=f"b = {sb.argmin.get('b', float('nan')):.3g}; limit flag {sb.limit}"))
        checks.append(Check.holds(f"{tag}: softplus_norm_bias flagged as a limit (b → −∞)", sb.limit))
        checks.append(Check.holds(f"{tag}: linear_uncentred ≤ linear_pure",
                            opt["linear_uncentred"].risk <= opt["linear_pure"].risk + 1e-9))
        checks.append(Check.holds(f"{tag}: erf_learned ≤ erf_fixed (c = 0)",
                            opt["erf_learned"].risk <= opt["erf_fixed"].risk + 2 * opt["erf_fixed"].risk_error + 1e-9))
        checks.append(Check.holds(f"{tag}: every activation ≥ E_B",
                            all(o.risk >= eb - 3 * o.risk_error - 1e-9 for o in opt.values())))
        checks.append(Check.holds(f"{tag}: (observed) erf_learned ≤ linear_uncentred",
                            opt["erf_learned"].risk <= opt["linear_uncentred"].risk + 1e-9))
        checks.append(Check.spec(f"{tag}: erf_fixed (c=0) = {_R2_ERF_FIXED[(model, nu, L)]}", _R2_ERF_FIXED[(model, nu, L)],
                            opt["erf_fixed"].risk, tol))
    return checks, [], {}


def _run_C14(ctx, size):
    checks = []
    acts = ("softmax", "erf_learned", "softplus_norm", "linear_uncentred")
    for model, nu, L in _C13_SETTINGS[ctx.mode]:
        if model == "max" and (math.isinf(nu) or ctx.mode == "quick"):
            continue  # max-SLR with orthogonal noise needs 2L-dimensional QMC: in --full only
        for act in acts:
            r = population_optimum(ctx, act, model, nu, L, orthogonal_noise=True, closed_form=False)
            checks.append(Check(f"{act}, {model} L={L} ν={fmt_nu(nu)}: s_k at the optimum", (0.0, 0.02),
                                r.argmin["s_k"], None, 0.0, kind="interval", note=f"risk {r.risk:.5f}"))
    return checks, [], {}


# =============================================================================================
# C20–C22: the predecessor [M]; C23, C24
# =============================================================================================

def _run_C20(ctx, size):
    from attnlimits.verify.slr import theory as bayes
    from attnlimits.verify.slr import predecessor_ls_risk

    theory = value_and_error(bayes.predecessor_prop3(0.5, 0.1, 10))[0]
    est = predecessor_ls_risk(size["d"], 10, 0.5, 0.1, size["n"], claim_seed(ctx, "C20"), **mc_options(ctx))
    return [Check.spec("[M] Prop. 3 at γ² = .5, ε = .1, L = 10 = 0.48368", 0.48368, theory, 5e-6),
            mc_check(f"least squares on Σ X_ℓ, d = {size['d']}, n = {size['n']}", theory, est, 0.005)], [], dict(size)


def _run_C21(ctx, size):
    from attnlimits.verify.slr import theory as bayes
    from attnlimits.verify.slr import predecessor_manifold_risk_mc

    theory = value_and_error(bayes.predecessor_manifold_risk(400, 10, 0.5, 0.1, 0.6, 0.8))[0]
    est = predecessor_manifold_risk_mc(400, 10, 0.5, 0.1, 0.6, 0.8, size["n"], claim_seed(ctx, "C21"),
                                       method=size["method"], **mc_options(ctx))
    return [Check.spec("[M] manifold risk (d=400, L=10, γ²=.5, λ=.1, κ=.6, ν_M=.8) = 0.29364", 0.29364, theory, 5e-6),
            mc_check(f"MC ({size['method']}, {size['n']} sequences)", theory, est, 0.003)], [], dict(size)


def _run_C22(ctx, size):
    from attnlimits.verify.slr import theory as bayes

    ds = (1e2, 1e4, 1e6, 1e8)
    vals = [value_and_error(bayes.predecessor_manifold_risk(d, 10, 0.5, d ** -0.25, 1.0, 1.0))[0] for d in ds]
    # tolerance: half a unit in the last digit the spec states
    checks = [Check.spec(f"[M] risk at (k*, v*), λ = d^(-1/4), d = {d:.0e}: {s}", s, v, half_unit(s))
              for d, v, s in zip(ds, vals, (0.9594, 0.11235, 0.011436, 0.0011457))]
    slope = _fit_slope(np.log(ds[1:]), np.log(vals[1:]))
    checks.append(Check("theory: fitted slope of log E vs log d (d = 1e4 … 1e8)", -0.5, slope, None, 0.05,
                        tolerance_reason="quoted"))
    checks.append(Check.holds("risk decreases to 0 (Bayes ε² excluded)", all(a > b for a, b in zip(vals, vals[1:]))))
    # the rate on Monte Carlo: the excess risk simulated at each d (projected sequences:
    # exact law, cost independent of d), fitted as log E = a + b log d + c d^(-1/2) — the local slope
    # of the formula is −0.4962 on [1e4, 1e6] and −0.4997 on [1e6, 1e8], a relative O(d^(-1/2))
    # correction (the corrected fit of the formula gives −0.49999; without it −0.498, 7 SE off)
    from attnlimits.verify.comparison import fit_rate
    from attnlimits.verify.slr import predecessor_manifold_risk_mc

    from attnlimits.verify.claims.rates import rate_checks

    mc_ds = tuple(size.get("rate_ds", (1e4, 1e5, 1e6, 1e7, 1e8)))
    ys, es, dofs = [], [], []
    for i, d in enumerate(mc_ds):
        est = predecessor_manifold_risk_mc(d, 10, 0.5, d ** -0.25, 1.0, 1.0, size.get("rate_n", 400_000),
                                           claim_seed(ctx, "C22", i), method="projected", **mc_options(ctx))
        ys.append(float(est.mean)), es.append(float(est.se)), dofs.append(est.n_draws - 1)
    f = fit_rate(mc_ds, ys, es, dofs=dofs, corrections=(-0.5,))
    checks += rate_checks(f"MC excess risk at (k*, v*), λ = d^(-1/4): log E vs log d on [{mc_ds[0]:.0e}, "
                          f"{mc_ds[-1]:.0e}] (+d^(-1/2) term)", f.slope, f.se, -0.5, (0.0, -1.0), dof=f.dof,
                          note=f"χ² {f.chi2:.2f} on {f.chi2_dof} dof; {size.get('rate_n', 400_000)} sequences "
                               "per d (projected)")
    plot = PlotSpec("C22: [M] Cor. 2, risk at (k*, v*) with λ = d^(-1/4)", "d", "excess risk",
                    [PlotSeries("manifold formula", list(ds), vals),
                     PlotSeries("MC (projected)", list(mc_ds), ys, es, kind="points"),
                     PlotSeries(f"fit d^{f.slope:.4f}", list(mc_ds), [float(x) for x in f.predict(mc_ds)],
                                kind="dashed")], xscale="log", yscale="log")
    return checks, [plot], {"rate_ds": list(mc_ds), "rate_n": size.get("rate_n", 400_000), "mc": ys, "mc_se": es,
                            "slope": f.slope, "slope_se": f.se, "slope_dof": f.dof}


def _run_C23(ctx, size):
    from attnlimits.verify.slr import projection_risk

    r = population_optimum(ctx, "softmax", "spiked", 5.0, [1, 2, 3])
    eb = bayes_value(ctx, "spiked", 5.0, [1, 2, 3])[0]
    est = projection_risk("softmax", math.sqrt(5), 5.0, 1.0, 1.0, model="spiked", nu=5.0, L={1: 1 / 3, 2: 1 / 3, 3: 1 / 3},
                          n=size["n"], generator=claim_seed(ctx, "C23"), **mc_options(ctx))
    return [
        Check.spec("average Bayes risk over U{1,2,3}, spiked ν=5 = 0.07655", 0.07655, eb, 5e-6),
        Check("shared softmax optimum = average Bayes risk", eb, r.risk, None, 2e-3),
        Check("shared argmin m_k = √5 (independent of L)", math.sqrt(5), r.argmin["m_k"], None, 0.01),
        mc_check("MC at k = √5 k*, v = v*, L ~ U{1,2,3}", eb, est, 2e-3),
    ], [], {"n": size["n"]}


def _run_C24(ctx, size):
    from attnlimits.verify.slr import projection_risk

    checks, series = [], []
    grid = [0.5, 1, 2, 4, 8, 16, 32, 64]
    for i, L in enumerate((2, 3, 5)):
        st = population_theory("max", INF, L, "softmax")
        vals = [st.population_risk(m, **qmc_options(ctx))[0] for m in grid]
        checks.append(Check.holds(f"L={L}: E decreasing in m_k on {grid}", all(a > b for a, b in zip(vals, vals[1:])),
                            note=", ".join(f"{v:.4f}" for v in vals)))
        checks.append(Check(f"L={L}: E(m_k = 64) small (→ 0)", (0.0, 0.01), vals[-1], None, 0.0, kind="interval"))
        checks.append(Check.holds(f"L={L}: optimiser flags the limit m_k → ∞",
                            population_optimum(ctx, "softmax", "max", INF, L).limit))
        from attnlimits.verify.slr.theory import population_module

        A, B, _, _ = st.population_AB(8.0, **qmc_options(ctx))
        mv = float(population_module().optimal_value(A, B)[0])
        est = projection_risk("softmax", 8.0, 64.0, mv, mv ** 2, model="max", nu=INF, L=L, n=size["n"],
                              generator=claim_seed(ctx, "C24", i), **mc_options(ctx))
        checks.append(mc_check(f"MC at m_k = 8, L={L}", vals[grid.index(8)], est, 3e-3))
        series.append(PlotSeries(f"L = {L}", grid, vals))
    plot = PlotSpec("C24: softmax on max-SLR ν = ∞: risk → 0 as m_k → ∞", "m_k", "risk (v optimal)", series,
                    yscale="log")
    return checks, [plot], {"n": size["n"]}


def _run_train(ctx, size):
    from attnlimits.verify.slr import TRAINING_ALLOWANCE, TRAINING_PRESET, train_population

    checks, params = [], {}
    for i, (act, model, nu, L) in enumerate(size["runs"]):
        opt = population_optimum(ctx, act, model, nu, L)
        kw = {**TRAINING_PRESET, **size.get("preset", {})}
        res = train_population(act, model=model, nu=nu, L=L, generator=claim_seed(ctx, "TRAIN-pop", i), **kw,
                               device=ctx.device)
        tag = f"{act}, {model} L={L} ν={fmt_nu(nu)}"
        checks.append(mc_check(f"{tag}: held-out risk of the trained (k, v) vs the population optimum", opt.risk,
                          res["risk"], 0.0, allowance=TRAINING_ALLOWANCE,
                          note=f"allowance {TRAINING_ALLOWANCE:g} = SGD noise floor (attnlimits.verify.slr)"))
        checks.append(Check(f"{tag}: distance to the manifold", (0.0, 0.1), float(res["distance"]), None, 0.0,
                            kind="interval"))
        params[tag] = {"time_s": res.get("time_s"), "overlaps": res.get("overlaps")}
    return checks, [], params


# =============================================================================================
# Q1–Q3: quoted versus derived (§16) — verdict "discrepancy"
# =============================================================================================

def _run_Q1(ctx, size):
    from attnlimits.derivations import slr as S

    q = S.QUOTED["Q1"]
    checks = []
    for L in (2, 3, 5):
        quoted = float(S.sp.limit(S.nu * q.quoted, S.nu, S.sp.oo).subs(S.L, L))
        for v in LINEAR_VARIANTS:
            derived = float(nu_limit(v, L))
            checks.append(Check(f"L={L} {v}: lim ν·E, derived vs quoted L/(L−1)", quoted, derived, None,
                                1e-9, note="theory = quoted, value = derived"))
    return checks, [], {"quoted": str(q.quoted), "source": q.source, "note": q.note}


def _run_Q2(ctx, size):
    from attnlimits.derivations import slr as S

    q = S.QUOTED["Q2"]
    checks = []
    for L in (2, 3):
        for nu in (8.0, 16.0, 32.0):
            quoted = float(q.quoted.subs({S.L: L, S.nu: nu}))
            exact = bayes_value(ctx, "spiked", nu, L)[0]
            checks.append(Check(f"E_B spiked L={L} ν={nu:g}: quoted (L−1)e^(−ν) vs exact quadrature", quoted, exact,
                                None, 1e-3 * exact, kind="rel",
                                note=f"derived asymptotic {float(q.derived['softmax'].subs({S.L: L, S.nu: nu})):.4g}"))
    return checks, [], {"quoted": str(q.quoted), "derived": str(q.derived["softmax"]), "note": q.note}


def _run_Q3(ctx, size):
    from attnlimits.derivations import slr as S

    q = S.QUOTED["Q3"]
    checks = []
    for label, (model, nu, L) in (("spiked nu=1 L=3", ("spiked", 1.0, 3)), ("spiked nu=2 L=3", ("spiked", 2.0, 3)),
                                  ("max nu=inf L=3", ("max", INF, 3))):
        soft, lin, bo = (float(x) for x in q.derived[label])
        eb = 0.0 if math.isinf(nu) else bayes_value(ctx, model, nu, L)[0]
        checks.append(Check(f"{label}: softmax reading {soft} ≥ population E_B", eb, soft, None, 0.0, kind="lower"))
        checks.append(Check(f"{label}: BO reading {bo} ≥ population E_B", eb, bo, None, 0.0, kind="lower"))
    return checks, [], {"note": q.note}


# =============================================================================================
# registry
# =============================================================================================

_CLAIMS = [
    Claim("C9", "variable length hurts linear and erf, not softmax or softplus", "L ~ U{1,2,3}: shared − per-length "
          "= .133/.116/.139/.001/0 (max ν=∞), .043/.112 (spiked ν=5) ±.01.", source("§4 (variable length)", "§3.4, §15 C9"),
          _run_C9, quick={}, full={}, group="slr-variable-length", tags=("slr", "varlen", "theory-only")),
    Claim("C9-mc", "variable length with simulation: the shared optima and their ordering",
          "max-SLR ν = ∞, L ~ U{1,2,3}: the risk at each activation's shared optimum, re-estimated on fresh "
          "projection draws, equals the theory there; the simulated risks order softmax < softplus_norm < "
          "linear_centred < erf_learned < linear_uncentred, sharing (k, v) costs linear and erf more than 0.1 and "
          "softmax and softplus_norm less than 0.01 (all at 3 SE).", source("§4 (variable length)", "§3.4, §15 C9"),
          _run_C9_mc, quick={"n": 400_000, "batches": 40}, full={"n": 2_000_000, "batches": 40},
          group="slr-variable-length", tags=("slr", "varlen", "mc")),
    Claim("C10", "softmax strictly beats every linear variant", "L ∈ {2,3,5} × ν ∈ {.5,1,2,5,10}, both models: "
          "E_B < E_lin; smallest gaps 3.0e-4 (max) and 2.0e-3 (spiked).", source("§4", "§7, §8, §15 C10"), _run_C10,
          quick={}, full={}, group="slr-bayes-population", tags=("slr", "linear", "bayes", "theory-only")),
    Claim("C11", "exponential vs polynomial decay in ν", "−log E_B/ν → 1/4 (fitted rate), exact/asymptotic → 1, "
          "E_B(3)/E_B(2) → 2; linear: log–log slope −1 and ν E → L or L−1. Rates on Monte Carlo: linear "
          "attention's risk ∝ ν^−1 (band excludes 0 and −2), softmax ∝ e^(−ν/4) (band excludes 0 and −1). "
          "Population figure vs ν.",
          source("eq. (12), §4", "§9, §14 R3, §15 C11"), _run_C11,
          quick={**MC_SIZES["quick"], "rate_n": 200_000, "rate_n_softmax": 1_000_000},
          full={**MC_SIZES["full"], "rate_n": 1_000_000, "rate_n_softmax": 5_000_000,
                "rate_linear": (("linear_uncentred", 2), ("linear_centred", 2), ("linear_pure", 2),
                                ("linear_uncentred", 3), ("linear_centred", 3)), "rate_softmax_L": (2, 3),
                "rate_softmax_corrections": (-1.0, -2.0)},
          group="slr-bayes-population", tags=("slr", "rates", "mc")),
    Claim("C12", "activation ranking on max-SLR ν = ∞", "softmax 0 < softplus_norm (.049/.111/.233) < erf_learned "
          "(.334/.400/.445) ≤ linear_uncentred at L = 2/3/5 (±.01). Population figure vs L.",
          source("§4 (activations)", "§14 R1, §15 C12"), _run_C12, quick=MC_SIZES["quick"], full=MC_SIZES["full"],
          group="slr-max-infinite-nu", tags=("slr", "activations", "mc")),
    Claim("C13", "nesting invariants", "softplus_norm_bias = softmax (limit); linear_uncentred ≤ linear_pure; "
          "erf_learned ≤ erf_fixed; all ≥ E_B; erf_learned ≤ linear_uncentred (observed).",
          source("§4", "§4, §14 R1/R2, §15 C13"), _run_C13, quick={}, full={}, group="slr-bayes-population", tags=("slr", "activations", "theory-only")),
    Claim("C14", "orthogonal key noise never helps", "The optimum over q_k ≥ m_k² has s_k = √(q_k − m_k²) < .02.",
          source("§3", "§6.2, §15 C14"), _run_C14, quick={}, full={}, tags=("slr", "activations", "theory-only")),
    Claim("C20", "[M] Prop. 3: best linear regression", "Least squares on Σ X_ℓ, d=50: risk .48368 (±.005).",
          "arXiv:2410.01537 Prop. 3; docs/slr.md §13, §15 C20", _run_C20, quick={"d": 50, "n": 200_000},
          full={"d": 50, "n": 1_000_000}, tags=("slr", "predecessor", "mc")),
    Claim("C21", "[M] manifold risk formula", "d=400, L=10, γ²=.5, λ=.1, κ=.6, ν_M=.8: .29364 (±.003).",
          "arXiv:2410.01537 Thm. 1; docs/slr.md §13, §15 C21", _run_C21,
          quick={"n": 400_000, "method": "projected"}, full={"n": 400_000, "method": "direct"},
          tags=("slr", "predecessor", "mc")),
    Claim("C22", "[M] Cor. 2: risk → Bayes at (k*, v*)", "λ = d^(-1/4): .9594/.11235/.011436/.0011457 at "
          "d = 1e2/1e4/1e6/1e8; slope −1/2 in log d (±.05); on Monte Carlo (d = 1e4 … 1e8) the fitted slope's band "
          "contains −1/2 and excludes 0 and −1.", "arXiv:2410.01537 Cor. 2; docs/slr.md §13, §15 C22",
          _run_C22, quick={"rate_n": 400_000}, full={"rate_n": 2_000_000, "rate_ds": (1e3, 1e4, 1e5, 1e6, 1e7, 1e8)},
          tags=("slr", "predecessor", "rates", "mc")),
    Claim("C23", "Bayes parameters independent of L", "Spiked ν=5, L ~ U{1,2,3}: shared softmax optimum = "
          "averaged E_B = .07655 (±2e-3).", source("§4 (variable length)", "§7, §15 C23"), _run_C23,
          quick=MC_SIZES["quick"], full=MC_SIZES["full"], tags=("slr", "varlen", "bayes", "mc")),
    Claim("C24", "softmax → 0 on max-SLR ν = ∞", "E decreasing in m_k to 0 at L = 2, 3, 5 (flag limit).",
          source("§4 (max-SLR)", "§7, §15 C24"), _run_C24, quick=MC_SIZES["quick"], full=MC_SIZES["full"], group="slr-max-infinite-nu", tags=("slr", "mc")),
    Claim("TRAIN-pop", "online training reaches the population optimum", "Adam on fresh batches (D=64): softmax → "
          "Bayes risk, linear_uncentred → its closed form, within 3 SE + the measured SGD noise floor (1e-3).",
          source("§5 (training)", "§6, §12"), _run_train,
          quick={"runs": [("softmax", "spiked", 2.0, 2), ("linear_uncentred", "spiked", 2.0, 2)]},
          full={"runs": [("softmax", "spiked", 2.0, 2), ("linear_uncentred", "spiked", 2.0, 2),
                         ("softmax", "spiked", 2.0, 3), ("linear_uncentred", "spiked", 2.0, 3)]},
          group="slr-bayes-population", tags=("slr", "training", "mc")),
    Claim("Q1", "quoted: linear decay constant L/(L−1)·1/ν", "[D] eq. (12) (v1) vs derived L/ν (uncentred, pure) "
          "and (L−1)/ν (centred): agrees only at L = 2 for uncentred/pure.", source("eq. (12) (v1)", "§16 Q1"), _run_Q1,
          quick={}, full={}, tags=("slr", "quoted", "theory-only"), quoted=True),
    Claim("Q2", "quoted: softmax decay (L−1)e^(−ν)", "Derived (L−1)(√π/2)ν^(−1/2)e^(−ν/4): the exponent differs by 4.",
          source("§4 (quoted)", "§9, §16 Q2"), _run_Q2, quick={}, full={}, group="slr-bayes-population", tags=("slr", "quoted", "theory-only"),
          quoted=True),
    Claim("Q3", "quoted: finite-sample figure readings", "Softmax/BO readings below the population Bayes error "
          "are impossible (spiked ν=1,2, L=3).", source("figures (readings)", "§16 Q3"), _run_Q3, quick={}, full={},
          group="slr-bayes-population", tags=("slr", "quoted", "theory-only"), quoted=True),
]


for _c in _CLAIMS:
    _c.references = references()
    register(_c)
