"""The test of docs/slr.md §10.7's answer, one learning curve at a time: the equilibrium RS branch against the equilibrium ERM
minimum, for every activation ``slr replica`` accepts, at λ = 0.1 and at λ = λ*(α).

    OMP_NUM_THREADS=1 python studies/study_rs_erm_curves.py --dir /tmp/rs_erm_curves \\
        --activation linear_centred,softplus_norm --lam 0.1,star --D 800 --seeds 6

For each (activation, λ) the script writes ``<dir>/<activation>_<lam>.json`` after every α, and a rerun resumes
from it (RS and the finished α are not recomputed).

* **RS** (spiked ν = 2, L = 2, Δ = 0.1, Sobol 4 × 1024): at λ = 0.1 every branch along the curve
  (:meth:`attnlimits.verify.slr.replica.RSProblem.all_branches`: informed, small-overlap, large-λ and α-continuation
  starts), labelled equilibrium/metastable by the RS training objective.  At ``star``: λ*(α) from
  :meth:`RSProblem.tune_lambda` at each α, then the branches at (α, λ*) (informed and small-overlap starts).
* **ERM** (D, seeds, L-BFGS, float64): where RS has a single fixed point and its replicon is below
  ``--multistart-replicon``, one start (informed); otherwise :func:`train_multistart` from the informed and the
  uninformed start on the same data, and per seed the lowest-objective minimum (the equilibrium minimum).
  E_test by the §6.1 formula at the learned overlaps; mean ± SE over seeds.
* **Comparison**: z = (ERM − RS)/√(SE_ERM² + SE_RS²); the point agrees when |ERM − RS| ≤ 3·SE + a finite-size
  allowance 2.5·|E(D) − E(D/2)| (the rule of the explore property ``slr-replica-vs-erm``; ``--half`` measures ERM at
  D/2 with the same starts, on the same seeds), or carries ``rsb`` (replicon ≥ 1) and the disagreement is the
  finding.  ``--table`` prints the comparison as markdown (docs/slr.md §10.7).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np


def _fp_row(origin, f, phase):
    return {"origin": origin, "phase": phase, "E_test": f.E_test, "E_test_error": f.E_test_error,
            "training_objective": f.training_objective, "replicon": f.replicon,
            "replicon_error": f.replicon_error, "m_k": f.values["m_k"], "q_k": f.values["q_k"],
            "flags": list(f.flags)}


def _save(data, path):
    """Write atomically (the package's one writer: a temporary file beside it, then os.replace): a stop
    mid-write never leaves a truncated file, and the resumable study reads only whole ones."""
    from attnlimits.symbolic.files import write_text_atomic

    write_text_atomic(path, json.dumps(data, indent=1))


def rs_curve(act, lam, alphas, points):
    from attnlimits.numeric.slr.rs import rs_select_equilibrium
    from attnlimits.verify.slr.replica import rs_problem

    rs = rs_problem(act, "spiked", 2.0, 2, points=points)
    out = {}
    if lam != "star":
        found = rs.all_branches(alphas, float(lam), 0.1)
        for a in alphas:
            out[str(a)] = {"lam": float(lam), "branches": [_fp_row(*row) for row in found[a]]}
        return out
    for a in alphas:
        best, _grid = rs.tune_lambda(a, 0.1)
        lam_a = float(best.lam)
        rows = rs_select_equilibrium(rs.branches(a, lam_a, 0.1))
        out[str(a)] = {"lam": lam_a, "branches": [_fp_row(*row) for row in rows]}
        print(f"  RS {act} α={a:g}: λ*={lam_a:.4g}, {len(rows)} fixed point(s)", file=sys.stderr, flush=True)
    return out


def erm_point(act, a, lam, D, seeds, multistart):
    from attnlimits.verify.slr.train import train_erm, train_multistart

    t0 = time.time()
    if multistart:
        rows = train_multistart(act, model="spiked", nu=2.0, L=2, alpha=a, lam=lam, D=D, seeds=seeds, seed=0,
                                delta=0.1, inits=("informed", "uninformed"))
        eq = [r for r in rows if r["equilibrium"]]
        by_seed = {}
        for r in eq:  # one equilibrium row per seed (the first of equal-objective ends)
            by_seed.setdefault(r["seed_index"], r)
        vals = [r["E_test_overlaps"] for r in by_seed.values() if r.get("E_test_overlaps") is not None]
        n_minima = [r["n_minima"] for r in by_seed.values()]
        starts = sorted({r["start"] for r in by_seed.values()})
    else:
        res = train_erm(act, model="spiked", nu=2.0, L=2, alpha=a, lam=lam, D=D, seeds=seeds, seed=0, delta=0.1)
        vals = [r["E_test_overlaps"] for r in res.seeds if r.get("E_test_overlaps") is not None]
        n_minima, starts = None, ["informed"]
    return {"E_test": float(np.mean(vals)),
            "E_test_se": float(np.std(vals, ddof=1) / math.sqrt(len(vals))) if len(vals) > 1 else None,
            "values": [float(v) for v in vals], "D": D, "seeds": len(vals), "multistart": multistart,
            "n_minima": n_minima, "equilibrium_starts": starts, "wall_s": time.time() - t0}


def compare(rs, erm):
    eq = next(b for b in rs["branches"] if b["phase"] == "equilibrium")
    se = math.sqrt((erm["E_test_se"] or 0.0) ** 2 + eq["E_test_error"] ** 2)
    return {"rs_E_test": eq["E_test"], "rs_se": eq["E_test_error"], "replicon": eq["replicon"],
            "z": (erm["E_test"] - eq["E_test"]) / se if se > 0 else float("nan"),
            "rsb": bool(eq["replicon"] >= 1.0), "n_branches": len(rs["branches"])}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="study26")
    ap.add_argument("--activation", default="softmax,linear_uncentred,linear_centred,linear_pure,erf_fixed,"
                                             "softplus_norm")
    ap.add_argument("--lam", default="0.1,star")
    ap.add_argument("--n-alpha", type=int, default=12)
    ap.add_argument("--points", type=int, default=1024)
    ap.add_argument("--D", type=int, default=800)
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--multistart-replicon", type=float, default=0.8)
    ap.add_argument("--half", action="store_true", help="add ERM at D/2 to the finished points (the allowance)")
    ap.add_argument("--table", action="store_true", help="print the comparison tables of the finished curves")
    ap.add_argument("--plot", help="draw the curve of --activation at --lam (one of each) to this file")
    args = ap.parse_args()
    if args.table:
        return print_tables(args)
    if args.plot:
        return plot_curve(args)
    import torch

    torch.set_num_threads(1)
    os.makedirs(args.dir, exist_ok=True)
    alphas = [float(a) for a in np.geomspace(1.0, 20.0, args.n_alpha).round(4)]
    for lam in args.lam.split(","):
        for act in args.activation.split(","):
            path = os.path.join(args.dir, f"{act}_{lam}.json")
            data = json.load(open(path)) if os.path.exists(path) else {"activation": act, "lam": lam,
                                                                       "alphas": alphas, "points": {}}
            if "rs" not in data:
                if args.half:
                    continue
                t0 = time.time()
                data["rs"] = rs_curve(act, lam, alphas, args.points)
                data["rs_wall_s"] = time.time() - t0
                _save(data, path)
            for a in alphas:
                key = str(a)
                if args.half:
                    pt = data["points"].get(key)
                    if pt is None or "erm_half" in pt:
                        continue
                    rs = data["rs"][key]
                    pt["erm_half"] = erm_point(act, a, rs["lam"], pt["erm"]["D"] // 2, args.seeds, pt["erm"]["multistart"])
                    _save(data, path)
                    print(f"{act} λ={lam} α={a:g}: ERM D/2 {pt['erm_half']['E_test']:.4f} (D {pt['erm']['E_test']:.4f})",
                          file=sys.stderr, flush=True)
                    continue
                if key in data["points"] and data["points"][key]["erm"]["D"] == args.D:
                    continue
                rs = data["rs"][key]
                eq = next(b for b in rs["branches"] if b["phase"] == "equilibrium")
                multi = len(rs["branches"]) > 1 or eq["replicon"] >= args.multistart_replicon
                erm = erm_point(act, a, rs["lam"], args.D, args.seeds, multi)
                data["points"][key] = {"erm": erm, **compare(rs, erm)}
                _save(data, path)
                p = data["points"][key]
                print(f"{act} λ={lam} α={a:g}: RS {p['rs_E_test']:.4f}±{p['rs_se']:.4f} (replicon "
                      f"{p['replicon']:.2f}, {p['n_branches']} br) ERM {erm['E_test']:.4f}±{erm['E_test_se']:.4f} "
                      f"z={p['z']:+.1f}{' rsb' if p['rsb'] else ''} [{erm['wall_s']:.0f}s"
                      f"{', multistart' if multi else ''}]", file=sys.stderr, flush=True)


def verdict(p) -> tuple:
    """``(allowance, verdict)`` of one point: ``agrees`` within 3 SE + allowance, ``rsb`` (the disagreement is the
    replica-symmetry-breaking finding), ``DISAGREES`` otherwise; allowance None until ``--half`` has run."""
    se = math.sqrt((p["erm"]["E_test_se"] or 0.0) ** 2 + p["rs_se"] ** 2)
    half = p.get("erm_half")
    allow = None if half is None else 2.5 * abs(p["erm"]["E_test"] - half["E_test"])
    gap = abs(p["erm"]["E_test"] - p["rs_E_test"])
    if gap <= 3 * se + (allow or 0.0):
        return allow, "agrees (rsb)" if p["rsb"] else "agrees"
    return allow, "rsb: the finding" if p["rsb"] else "DISAGREES"


def plot_curve(args):
    """The learning-curve figure of docs/slr.md §10.7 (every RS branch, the equilibrium one bold, the replicon on
    the right axis) with the equilibrium ERM minimum at D (± SE), drawn by study_rs_branches.plot."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("study_rs_branches", os.path.join(os.path.dirname(__file__),
                                                                                     "study_rs_branches.py"))
    sb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sb)
    data = json.load(open(os.path.join(args.dir, f"{args.activation}_{args.lam}.json")))
    branches = [{**b, "alpha": float(a)} for a, r in data["rs"].items() for b in r["branches"]]
    erm = [{"alpha": float(a), "E_test": p["erm"]["E_test"], "E_test_se": p["erm"]["E_test_se"], "D": p["erm"]["D"]}
           for a, p in sorted(data["points"].items(), key=lambda kv: float(kv[0]))]
    sb.plot({"activation": data["activation"], "lam": float(args.lam) if args.lam != "star" else float("nan"),
             "branches": branches, "erm": erm,
             "erm_label": f"ERM D={erm[0]['D']}, equilibrium minimum (L-BFGS, informed + uninformed starts)"},
            args.plot)
    print(f"wrote {args.plot}")


def print_tables(args):
    import glob

    for path in sorted(glob.glob(os.path.join(args.dir, "*.json"))):
        data = json.load(open(path))
        if "points" not in data or not data["points"]:
            continue
        print(f"\n**{data['activation']}, λ = {data['lam']}** (D = {next(iter(data['points'].values()))['erm']['D']})\n")
        print("| α | λ | RS equilibrium E_test | replicon | branches | ERM (equilibrium minimum) | z | allowance | verdict |")
        print("|---|---|---|---|---|---|---|---|---|")
        for key in sorted(data["points"], key=float):
            p = data["points"][key]
            allow, v = verdict(p)
            lam = data["rs"][key]["lam"]
            eq = next(b for b in data["rs"][key]["branches"] if b["phase"] == "equilibrium")
            rep = f"{p['replicon']:.2f} ± {eq['replicon_error']:.2f}"
            print(f"| {float(key):.3g} | {lam:.3g} | {p['rs_E_test']:.4f} ± {p['rs_se']:.4f} | {rep} | "
                  f"{p['n_branches']} | {p['erm']['E_test']:.4f} ± {p['erm']['E_test_se']:.4f} | {p['z']:+.1f} | "
                  f"{'—' if allow is None else f'{allow:.4f}'} | {v} |")


if __name__ == "__main__":
    main()
