"""Study of the open RS-vs-ERM disagreement at small λ / low α (docs/slr.md §10.6, §12 "open findings").

Where RS and ERM disagree (expected at small λ and low SNR) a tolerance is not widened: the study
runs a finite-size scan in D (does the gap shrink like D^(−1/2) or grow?), ERM with λ continuation
and from several starts, compares training losses, and reports the point as an open finding.

At each point (softmax, spiked, L=2, Δ=0.1, α=2; ν=2 and λ ∈ {0.1, 0.01} by default):

1. **RS** (:meth:`attnlimits.verify.slr.replica.RSProblem.fixed_point`, informed branch, Sobol ``--rs-points`` ×
   ``--rs-replicates``; also the small-overlap branch at the quick rule): E_test, overlaps,
   training loss E[½ r²] and training objective E[½ r²] + λ(q_k+q_v)/(2α) — the large-D limit of
   the ERM objective divided by N.
2. **D-scan** (L-BFGS from the informed start, float64, batched seeds): D ∈ ``--Ds``; the gap
   ERM − RS in E_test (ERM: §6.1 formula at the learned overlaps), mean ± SE over seeds; fitted
   slope of log|gap| on log D (weighted least squares, weights from the SE of log|gap|; slope SE
   from the fit), and the same for the objective.
3. **Starts** at ``--starts-D`` (same seeds and data as the scan): informed; λ-continuation
   (random start N(0, I) at λ = 10, then down a log path with 2 points per decade to the target,
   each stage warm-started from the previous minimiser); ``--random`` random starts N(0, s²I)
   directly at the target λ. Per start and seed: final objective/N (lower = better minimum),
   E_test (§6.1), m_k, q_k, status.

Results are written to ``--out`` (JSON) after every part; a rerun resumes from it (the RS numbers
are cached there).  One thread (``torch.set_num_threads(1)``); the load average is printed with
every timing.

Usage: ``OMP_NUM_THREADS=1 python studies/study_rs_vs_erm.py --out study.json``
(``--quick``: D ∈ {50, 100, 200}, 3 seeds, RS at 1024 × 4 — a smoke test of the script).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np
import torch

POINT = dict(activation="softmax", model="spiked", L=2, delta=0.1, alpha=2.0)


def _load(path):
    if path and os.path.exists(path):
        with open(path) as fh:
            return json.load(fh)
    return {}


def _save(path, data):
    from attnlimits.symbolic.files import write_text_atomic

    write_text_atomic(path, json.dumps(data, indent=1, default=float))


def _load_avg():
    return "load %.2f %.2f %.2f" % os.getloadavg()


def _mean_se(v):
    v = np.asarray(v, float)
    return float(v.mean()), (float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan)


def fit_loglog(x, y, se):
    """Weighted least squares of log y on log x; weights 1/SE(log y)² with SE(log y) = se/y.
    Returns (slope, slope_se, intercept); slope_se from the weights (fixed, not rescaled)."""
    x, y, se = (np.asarray(a, float) for a in (x, y, se))
    lx, ly = np.log(x), np.log(y)
    s = np.maximum(se / y, 1e-12)
    w = 1.0 / s ** 2
    A = np.vstack([np.ones_like(lx), lx]).T
    cov = np.linalg.inv(A.T @ (w[:, None] * A))
    beta = cov @ A.T @ (w * ly)
    chi2 = float(np.sum(w * (ly - A @ beta) ** 2))
    dof = max(len(x) - 2, 1)
    return float(beta[1]), float(math.sqrt(cov[1, 1])), float(beta[0]), chi2 / dof


def rs_part(pt, rule, quick_rule):
    from attnlimits.verify.slr.replica import rs_problem

    t0 = time.perf_counter()
    fp = rs_problem(pt["activation"], pt["model"], pt["nu"], pt["L"], **rule).fixed_point(pt["alpha"], pt["lam"],
                                                                                       pt["delta"])
    out = {"rule": rule, "E_test": fp.E_test, "E_test_error": fp.E_test_error, "values": fp.values,
           "errors": fp.errors, "training_loss": fp.training_loss, "training_loss_error": fp.training_loss_error,
           "training_objective": fp.training_objective, "flags": list(fp.flags), "stability": fp.stability,
           "multi_minima_fraction": fp.multi_minima_fraction, "pd_fail_fraction": fp.pd_fail_fraction,
           "seconds": time.perf_counter() - t0, "load": os.getloadavg()}
    print(f"  RS {rule}: E_test {fp.E_test:.4f} ± {fp.E_test_error:.4f}, objective {fp.training_objective:.5f}, "
          f"loss {fp.training_loss:.5f}, m_k {fp.values['m_k']:.3f} q_k {fp.values['q_k']:.3f} "
          f"m_v {fp.values['m_v']:.3f} q_v {fp.values['q_v']:.3f}; multi-minima {fp.multi_minima_fraction:.3%}; "
          f"{out['seconds']:.0f} s, {_load_avg()}", flush=True)
    t0 = time.perf_counter()
    br = rs_problem(pt["activation"], pt["model"], pt["nu"], pt["L"], **quick_rule).branches(pt["alpha"], pt["lam"],
                                                                                           pt["delta"])
    out["branches"] = [{"branch": name, "E_test": f.E_test, "E_test_error": f.E_test_error,
                        "training_objective": f.training_objective, **{k: f.values[k] for k in ("m_k", "q_k", "m_v",
                                                                                                 "q_v")}}
                       for name, f in br]
    print(f"  RS branches at {quick_rule}: " + "; ".join(
        f"{b['branch']}: E {b['E_test']:.4f}, obj {b['training_objective']:.5f}" for b in out["branches"])
        + f" ({time.perf_counter() - t0:.0f} s, {_load_avg()})", flush=True)
    return out


def _seed_rows(res, N):
    return [{"seed_index": r["seed_index"], "E_test": r["E_test_overlaps"], "E_test_fresh": r["E_test"],
             "objective_per_N": r["objective"] / N, "train_half_mse": r["train_mse"] / 2, "m_k": r["m_k"],
             "q_k": r["q_k"], "m_v": r["m_v"], "q_v": r["q_v"], "distance": r["distance"], "status": r["status"],
             "iterations": r["iterations"], "grad_norm": r["grad_norm"]} for r in res.seeds]


def erm(pt, D, seeds, *, lam=None, init="informed", init_theta=None, n_test=4000):
    from attnlimits.verify.slr.train import train_erm

    return train_erm(pt["activation"], model=pt["model"], nu=pt["nu"], L=pt["L"], alpha=pt["alpha"],
                     lam=pt["lam"] if lam is None else lam, D=D, seeds=seeds, seed=pt["seed"], delta=pt["delta"],
                     init=init, init_theta=init_theta, device="cpu", n_test=n_test)


def scan_part(pt, D, seeds, rs):
    t0 = time.perf_counter()
    res = erm(pt, D, seeds)
    N = res.settings["N"]
    rows = _seed_rows(res, N)
    e, se = _mean_se([r["E_test"] for r in rows])
    o, ose = _mean_se([r["objective_per_N"] for r in rows])
    tl, tlse = _mean_se([r["train_half_mse"] for r in rows])
    out = {"D": D, "N": N, "seeds": seeds, "E_test": e, "E_test_se": se, "objective": o, "objective_se": ose,
           "train_half_mse": tl, "train_half_mse_se": tlse,
           **{k: _mean_se([r[k] for r in rows])[0] for k in ("m_k", "q_k", "m_v", "q_v", "distance")},
           "gap": e - rs["E_test"], "gap_se": math.hypot(se, rs["E_test_error"]),
           "objective_gap": o - rs["training_objective"], "rows": rows, "seconds": time.perf_counter() - t0,
           "load": os.getloadavg()}
    print(f"  D={D} ({seeds} seeds): ERM E_test {e:.4f} ± {se:.4f} (gap {out['gap']:+.4f} ± {out['gap_se']:.4f}), "
          f"objective/N {o:.5f} ± {ose:.5f} (RS {rs['training_objective']:.5f}), q_k {out['q_k']:.3f}, "
          f"status {sorted({r['status'] for r in rows})}, {out['seconds']:.0f} s, {_load_avg()}", flush=True)
    return out


def starts_part(pt, D, seeds, n_random, scale):
    out = {"D": D, "seeds": seeds}
    t0 = time.perf_counter()
    inf = erm(pt, D, seeds)
    N = inf.settings["N"]
    out["informed"] = _seed_rows(inf, N)
    P = inf.theta.shape[1]
    # λ continuation: random start at λ = 10, 2 points per decade down to the target
    lam_path = [10.0 ** (k / 2) for k in range(2, int(round(2 * math.log10(pt["lam"]))) - 1, -1)]
    g = torch.Generator().manual_seed(90_000 + D)
    th = scale * torch.randn((seeds, P), generator=g, dtype=torch.float64)
    stages = []
    for lam in lam_path:
        last = math.isclose(lam, pt["lam"], rel_tol=1e-9)
        r = erm(pt, D, seeds, lam=lam, init_theta=th, n_test=4000 if last else 500)
        th = r.theta
        stages.append({"lam": lam, "E_test": _mean_se([x["E_test_overlaps"] for x in r.seeds])[0],
                       "q_k": _mean_se([x["q_k"] for x in r.seeds])[0]})
    out["continuation"] = _seed_rows(r, N)
    out["continuation_path"] = stages
    for j in range(n_random):
        g = torch.Generator().manual_seed(70_000 + 17 * j + D)
        th = scale * torch.randn((seeds, P), generator=g, dtype=torch.float64)
        out[f"random{j}"] = _seed_rows(erm(pt, D, seeds, init_theta=th), N)
    out["seconds"] = time.perf_counter() - t0
    out["load"] = os.getloadavg()
    names = [k for k in out if k in ("informed", "continuation") or k.startswith("random")]
    for name in names:
        rows = out[name]
        o, ose = _mean_se([r["objective_per_N"] for r in rows])
        e, se = _mean_se([r["E_test"] for r in rows])
        print(f"  D={D} start {name:12s}: objective/N {o:.5f} ± {ose:.5f}, E_test {e:.4f} ± {se:.4f}, "
              f"q_k {np.mean([r['q_k'] for r in rows]):.3f}, status {sorted({r['status'] for r in rows})}", flush=True)
    best = []
    for i in range(seeds):
        objs = {name: out[name][i]["objective_per_N"] for name in names}
        b = min(objs, key=objs.get)
        best.append({"seed": i, "best": b, "objective_spread": max(objs.values()) - min(objs.values()),
                     "informed_minus_best": objs["informed"] - objs[b],
                     "E_test_of_best": out[b][i]["E_test"], "E_test_informed": out["informed"][i]["E_test"]})
    out["best_per_seed"] = best
    print(f"  D={D}: lowest objective per seed: {[b['best'] for b in best]}; largest objective spread "
          f"{max(b['objective_spread'] for b in best):.2e}; {out['seconds']:.0f} s, {_load_avg()}", flush=True)
    return out


def summarise(pt, data, quiet=False):
    rs = data["rs"]
    sc = sorted(data["scan"].values(), key=lambda r: r["D"])
    Ds = [r["D"] for r in sc]
    gaps = [abs(r["gap"]) for r in sc]
    ses = [r["gap_se"] for r in sc]
    slope, slope_se, _, chi2 = fit_loglog(Ds, gaps, ses)
    ogaps = [abs(r["objective_gap"]) for r in sc]
    oses = [math.hypot(r["objective_se"], rs["training_loss_error"]) for r in sc]
    oslope, oslope_se, _, ochi2 = fit_loglog(Ds, ogaps, oses)
    s = {"gap_slope": slope, "gap_slope_se": slope_se, "gap_chi2_dof": chi2, "objective_gap_slope": oslope,
         "objective_gap_slope_se": oslope_se, "objective_chi2_dof": ochi2,
         "signs": [math.copysign(1, r["gap"]) for r in sc]}
    if not quiet:
        print(f"  fit |ERM − RS| E_test ∝ D^{slope:.2f} ± {slope_se:.2f} (χ²/dof {chi2:.2f}); "
              f"|objective gap| ∝ D^{oslope:.2f} ± {oslope_se:.2f} (χ²/dof {ochi2:.2f})", flush=True)
    return s


def markdown(paths):
    """Markdown tables of finished study files (scan, fit, starts); files with the same point are merged."""
    out = []
    merged: dict = {}
    for path in paths:
        for key, d in _load(path).items():
            m = merged.setdefault(key, {})
            for part, val in d.items():
                if part in ("scan", "starts"):
                    m.setdefault(part, {}).update(val)
                else:
                    m[part] = val
    for key, d in merged.items():
        rs = d.get("rs")
        if rs is None:
            continue
        v = rs["values"]
        out.append(f"**{key}** — RS ({rs['rule']['replicates']}×{rs['rule']['points']}): E_test "
                   f"{rs['E_test']:.4f} ± {rs['E_test_error']:.4f}, (m_k, q_k, m_v, q_v) = ({v['m_k']:.3f}, "
                   f"{v['q_k']:.3f}, {v['m_v']:.3f}, {v['q_v']:.3f}), training loss E[½r²] "
                   f"{rs['training_loss']:.5f}, objective/N {rs['training_objective']:.5f}, multi-minimum prox "
                   f"samples {rs['multi_minima_fraction']:.2%}, branches found: "
                   f"{', '.join(b['branch'] for b in rs.get('branches', []))}\n")
        out.append("| D | seeds | ERM E_test (§6.1) | ERM − RS | objective/N (RS " f"{rs['training_objective']:.5f})"
                   " | ½·train MSE | q_k (RS " f"{v['q_k']:.3f}) | q_v (RS " f"{v['q_v']:.3f}) | distance to M | status |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(d.get("scan", {}).values(), key=lambda r: r["D"]):
            st = ",".join(sorted({x["status"] for x in r["rows"]}))
            out.append(f"| {r['D']} | {r['seeds']} | {r['E_test']:.4f} ± {r['E_test_se']:.4f} | "
                       f"{r['gap']:+.4f} ± {r['gap_se']:.4f} | {r['objective']:.5f} ± {r['objective_se']:.5f} | "
                       f"{r['train_half_mse']:.5f} | {r['q_k']:.3f} | {r['q_v']:.3f} | {r['distance']:.3f} | {st} |")
        if len(d.get("scan", {})) >= 3:
            f = summarise(None, d, quiet=True)
            out.append(f"\nFit |ERM − RS| ∝ D^s: s = {f['gap_slope']:.2f} ± {f['gap_slope_se']:.2f} "
                       f"(χ²/dof {f['gap_chi2_dof']:.2f}); |objective gap|: s = {f['objective_gap_slope']:.2f} ± "
                       f"{f['objective_gap_slope_se']:.2f}.\n")
        for D, st in sorted(d.get("starts", {}).items(), key=lambda kv: int(kv[0])):
            names = [k for k in st if k in ("informed", "continuation") or k.startswith("random")]
            out.append(f"\nStarts at D={D} ({st['seeds']} seeds, same data as the scan's first {st['seeds']}):\n")
            out.append("| start | objective/N | E_test (§6.1) | q_k | m_k | seeds at the lowest objective (±1e-9) |")
            out.append("|---|---|---|---|---|---|")
            for n in names:
                rows = st[n]
                o, ose = _mean_se([r["objective_per_N"] for r in rows])
                e, se = _mean_se([r["E_test"] for r in rows])
                wins = sum(rows[i]["objective_per_N"] <= min(st[m][i]["objective_per_N"] for m in names) + 1e-9
                           for i in range(st["seeds"]))
                out.append(f"| {n} | {o:.6f} ± {ose:.6f} | {e:.4f} ± {se:.4f} | "
                           f"{np.mean([r['q_k'] for r in rows]):.3f} | {np.mean([r['m_k'] for r in rows]):.3f} | "
                           f"{wins} |")
            spread = max(b["objective_spread"] for b in st["best_per_seed"])
            espread = max(max(st[n][i]["E_test"] for n in names) - min(st[n][i]["E_test"] for n in names)
                          for i in range(st["seeds"]))
            out.append(f"\nLargest spread over starts within a seed: objective/N {spread:.2e}, E_test {espread:.4f}.\n")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="study_rs_vs_erm.json")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--lams", default="0.1,0.01")
    ap.add_argument("--nu", type=float, default=2.0)
    ap.add_argument("--Ds", default="100,200,400,800,1600")
    ap.add_argument("--seeds", default="10,10,8,5,5", help="seeds per D of --Ds")
    ap.add_argument("--starts-D", default="400,800")
    ap.add_argument("--starts-seeds", type=int, default=5)
    ap.add_argument("--random", type=int, default=3)
    ap.add_argument("--init-scale", type=float, default=1.0)
    ap.add_argument("--rs-points", type=int, default=4096)
    ap.add_argument("--rs-replicates", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parts", default="rs,scan,starts")
    ap.add_argument("--table", nargs="*", help="print markdown tables of these finished study files and exit")
    args = ap.parse_args()
    if args.table:
        print(markdown(args.table))
        return
    torch.set_num_threads(1)
    if args.quick:
        args.Ds, args.seeds, args.starts_D, args.starts_seeds = "50,100,200", "3,3,3", "100", 3
        args.rs_points = 1024
    Ds = [int(x) for x in args.Ds.split(",")]
    seeds = [int(x) for x in args.seeds.split(",")]
    if len(seeds) == 1:
        seeds = seeds * len(Ds)
    parts = set(args.parts.split(","))
    data = _load(args.out)
    for lam in (float(x) for x in args.lams.split(",")):
        pt = dict(POINT, nu=args.nu, lam=lam, seed=args.seed)
        key = f"softmax spiked L=2 nu={args.nu:g} alpha=2 lam={lam:g} delta=0.1"
        d = data.setdefault(key, {"point": pt})
        print(f"# {key}", flush=True)
        rule = {"points": args.rs_points, "replicates": args.rs_replicates}
        if "rs" not in d or d["rs"]["rule"] != rule:
            d["rs"] = rs_part(pt, rule, {"points": 1024, "replicates": 4})
            _save(args.out, data)
        else:
            print(f"  RS (cached): E_test {d['rs']['E_test']:.4f} ± {d['rs']['E_test_error']:.4f}, objective "
                  f"{d['rs']['training_objective']:.5f}", flush=True)
        if "scan" in parts:
            d.setdefault("scan", {})
            for D, S in zip(Ds, seeds):
                if str(D) in d["scan"] and d["scan"][str(D)]["seeds"] == S:
                    r = d["scan"][str(D)]
                    print(f"  D={D} (cached): gap {r['gap']:+.4f} ± {r['gap_se']:.4f}", flush=True)
                    continue
                d["scan"][str(D)] = scan_part(pt, D, S, d["rs"])
                _save(args.out, data)
            if len(d["scan"]) >= 3:
                d["fit"] = summarise(pt, d)
                _save(args.out, data)
        if "starts" in parts:
            d.setdefault("starts", {})
            for D in (int(x) for x in args.starts_D.split(",")):
                if str(D) in d["starts"]:
                    continue
                d["starts"][str(D)] = starts_part(pt, D, args.starts_seeds, args.random, args.init_scale)
                _save(args.out, data)
    print(f"written {args.out}", flush=True)


if __name__ == "__main__":
    main()
