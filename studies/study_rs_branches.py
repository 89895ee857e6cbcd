"""Every RS branch along a learning curve through the interpolation peak, the equilibrium one, the replicon,
and ERM points: the figure of docs/slr.md §10.7.

    python studies/study_rs_branches.py --out branches.json            # RS (minutes)
    python studies/study_rs_branches.py --erm-D 300 --erm-seeds 3 --out branches.json
    python studies/study_rs_branches.py --plot docs/slr_branches.png --from branches.json

RS: :func:`attnlimits.numeric.slr.rs.rs_branch_search` on log-spaced α (default 12 points in [1, 20]),
linear_uncentred, spiked ν = 2, L = 2, λ = 0.1, Δ = 0.1, Sobol 4×1024.  ERM (optional): L-BFGS from the
informed start (``attnlimits.verify.slr.train.train_erm``), E_test by the §6.1 formula at the learned overlaps.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np


def run_rs(args):
    from attnlimits.numeric.slr.rs import rs_branch_search, rs_select_equilibrium
    from attnlimits.verify.slr.replica import rs_problem

    rs = rs_problem(args.activation, "spiked", 2.0, 2, points=args.points, replicates=4, seed=0)
    nu, kern, rules = rs.nu, rs.kern, rs.rules
    alphas = [float(a) for a in np.geomspace(args.alpha_min, args.alpha_max, args.n_alpha).round(4)]
    t0 = time.process_time()
    found = rs_branch_search(kern, rules, alphas, args.lam, 0.1, model="spiked", nu=nu)
    cpu = time.process_time() - t0
    out = []
    for a in alphas:
        for origin, f, phase in rs_select_equilibrium(found[a]):
            out.append({"alpha": a, "origin": origin, "phase": phase, "E_test": f.E_test, "E_test_error": f.E_test_error,
                        "training_objective": f.training_objective, "replicon": f.replicon,
                        "replicon_error": f.replicon_error, "stability_damped": f.stability_damped,
                        "m_k": f.values["m_k"], "q_k": f.values["q_k"], "flags": list(f.flags)})
    return {"activation": args.activation, "lam": args.lam, "alphas": alphas, "points": args.points,
            "rs_cpu_s": cpu, "branches": out}


def run_erm(args, alphas):
    from attnlimits.verify.slr.train import train_erm

    res = []
    for a in alphas:
        r = train_erm(args.activation, model="spiked", nu=2.0, L=2, alpha=a, lam=args.lam, D=args.erm_D,
                      seeds=args.erm_seeds, seed=0, delta=0.1)
        vals = [row["E_test_overlaps"] for row in r.seeds if row.get("E_test_overlaps") is not None]
        res.append({"alpha": a, "E_test": float(np.mean(vals)),
                    "E_test_se": float(np.std(vals, ddof=1) / math.sqrt(len(vals))) if len(vals) > 1 else None,
                    "D": args.erm_D, "seeds": len(vals)})
        print(f"ERM α={a:g}: {res[-1]['E_test']:.4f}", file=sys.stderr)
    return res


def plot(data, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    ax2 = ax.twinx()
    br = data["branches"]
    eq = sorted((b for b in br if b["phase"] == "equilibrium"), key=lambda b: b["alpha"])
    meta = [b for b in br if b["phase"] != "equilibrium"]
    ax.plot([b["alpha"] for b in eq], [b["E_test"] for b in eq], "-", color="k", lw=2.8, label="RS equilibrium branch")
    rsb = [b for b in eq if b["replicon"] >= 1]
    ax.plot([b["alpha"] for b in rsb], [b["E_test"] for b in rsb], "o", mfc="none", mec="r", ms=11,
            label="equilibrium with replicon ≥ 1 (rsb)")
    ax.plot([b["alpha"] for b in meta], [b["E_test"] for b in meta], "s", color="0.55", ms=5,
            label="metastable fixed points")
    for e in data.get("erm", []):
        ax.errorbar(e["alpha"], e["E_test"], yerr=e.get("E_test_se") or 0, fmt="D", color="tab:blue", ms=6)
    if data.get("erm"):
        ax.plot([], [], "D", color="tab:blue",
                label=data.get("erm_label") or f"ERM D={data['erm'][0]['D']} (L-BFGS, informed)")
    ax2.plot([b["alpha"] for b in eq], [b["replicon"] for b in eq], "--", color="tab:red", label="replicon (equilibrium)")
    ax2.axhline(1.0, color="tab:red", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("α = N/D")
    ax.set_ylabel("E_test")
    ax2.set_ylabel("replicon", color="tab:red")
    ax2.set_yscale("log")
    ax.set_title(f"{data['activation']}, spiked ν=2, L=2, λ={data['lam']:g}: every RS branch")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--activation", default="linear_uncentred")
    ap.add_argument("--lam", type=float, default=0.1)
    ap.add_argument("--alpha-min", type=float, default=1.0)
    ap.add_argument("--alpha-max", type=float, default=20.0)
    ap.add_argument("--n-alpha", type=int, default=12)
    ap.add_argument("--points", type=int, default=1024)
    ap.add_argument("--erm-D", type=int, default=0)
    ap.add_argument("--erm-seeds", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--from", dest="src")
    ap.add_argument("--plot")
    args = ap.parse_args()
    data = json.load(open(args.src)) if args.src else run_rs(args)
    if args.erm_D:
        data["erm"] = run_erm(args, data["alphas"])
    if args.out:
        json.dump(data, open(args.out, "w"), indent=1)
    if args.plot:
        plot(data, args.plot)
    for b in data["branches"]:
        print(f"α={b['alpha']:<7g} {b['phase']:12s} {b['origin']:14s} E={b['E_test']:.4f} ± {b['E_test_error']:.3f} "
              f"obj={b['training_objective']:.5f} replicon={b['replicon']:.3f}")


if __name__ == "__main__":
    main()
