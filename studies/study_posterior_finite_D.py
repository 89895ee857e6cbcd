r"""Finite-D posterior sampling vs the BO state evolution (claim C19-post).

Collapsed Gibbs over the hidden locations (:func:`attnlimits.verify.slr.posterior.posterior_on_generated`: k and v
integrated out exactly, rank-one updates, Rao–Blackwellised posterior means) on spiked-SLR data at
``D ∈ {50, 100, 200}`` and R6 points (``L = 2, ν = 2, Δ = 0.1, α ∈ {1, 4, 10}``), several seeds, two chains
per seed (one from the true locations, one from uniformly random locations), one thread.  Per (α, D):
mean ± SE over seeds of ``m_k, q_k, m_v, q_v`` and of the test error of the posterior-mean predictor
(§6.1, exact from the overlaps), their deviation from the state evolution
(:func:`attnlimits.verify.slr.bayes_optimal.bo_state_evolution`), ``deviation·D``, and the mixing diagnostics
(largest split-R̂ over the traces and seeds, largest informed − random gap of the trace means).

Run (about 12 min on a shared, loaded 2-core machine)::

    OMP_NUM_THREADS=1 python studies/study_posterior_finite_D.py --out /tmp/posterior_study
    OMP_NUM_THREADS=1 python studies/study_posterior_finite_D.py --quick

Writes ``runs.csv`` (one row per seed) and ``summary.csv``.
"""
from __future__ import annotations

import argparse
import csv
import math
import time
from pathlib import Path

import numpy as np
import torch

QUANTITIES = ("m_k", "q_k", "m_v", "q_v", "E_test")

#: (alpha, D) -> seeds (kept small where N = αD makes a sweep expensive)
PLAN = {(1.0, 50): 10, (1.0, 100): 8, (1.0, 200): 6,
        (4.0, 50): 10, (4.0, 100): 6, (4.0, 200): 4,
        (10.0, 50): 6, (10.0, 100): 4, (10.0, 200): 2}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--L", type=int, default=2)
    ap.add_argument("--nu", type=float, default=2.0)
    ap.add_argument("--delta", type=float, default=0.1)
    ap.add_argument("--alphas", default="1,4,10")
    ap.add_argument("--Ds", default="50,100,200")
    ap.add_argument("--sweeps", type=int, default=50)
    ap.add_argument("--burn-in", type=int, default=15)
    ap.add_argument("--seed-scale", type=float, default=1.0, help="multiply the seed counts of PLAN")
    ap.add_argument("--out", default="/tmp/attnlimits_posterior_study")
    ap.add_argument("--quick", action="store_true", help="α = 4, D ∈ {50, 100}, 3 seeds, 30 sweeps")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    from attnlimits.verify.slr.bayes_optimal import bo_state_evolution
    from attnlimits.verify.slr.posterior import posterior_on_generated

    alphas = [float(x) for x in a.alphas.split(",")]
    Ds = [int(x) for x in a.Ds.split(",")]
    sweeps, burn = a.sweeps, a.burn_in
    if a.quick:
        alphas, Ds, sweeps, burn = [4.0], [50, 100], 30, 10
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    se_pts = bo_state_evolution("spiked", a.nu, a.L, alphas, a.delta, points=2 ** 14, starts=("uninformed",))
    runs, summary = [], []
    for alpha, se in zip(alphas, se_pts):
        theory = {"m_k": se.q_k, "q_k": se.q_k, "m_v": se.q_v, "q_v": se.q_v, "E_test": se.E_BO}
        print(f"SE alpha={alpha:g}: q_k={se.q_k:.5f} q_v={se.q_v:.5f} E_BO={se.E_BO:.5f}", flush=True)
        for D in Ds:
            S = 3 if a.quick else max(2, int(round(PLAN.get((alpha, D), 4) * a.seed_scale)))
            seeds = [int(50_000 + 100 * D + 10 * alpha + s) for s in range(S)]
            t0 = time.perf_counter()
            rows = posterior_on_generated(a.nu, a.L, alpha, a.delta, D, seeds, sweeps=sweeps, burn_in=burn)
            dt = time.perf_counter() - t0
            runs.extend(rows)
            rec = {"alpha": alpha, "D": D, "seeds": S, "sweeps": sweeps, "burn_in": burn, "seconds": dt,
                   "rhat_max": max(r["rhat_max"] for r in rows),
                   "start_gap_max": max(abs(r[k]) for r in rows for k in r if k.startswith("start_gap_")),
                   "flips_per_sweep": float(np.mean([r["flips_per_sweep"] for r in rows]))}
            for qn in QUANTITIES:
                x = np.array([r[qn] for r in rows])
                m, s = float(x.mean()), float(x.std(ddof=1) / math.sqrt(S))
                rec.update({f"{qn}": m, f"{qn}_se": s, f"{qn}_theory": theory[qn], f"{qn}_dev": m - theory[qn],
                            f"{qn}_dev_D": (m - theory[qn]) * D, f"{qn}_z": (m - theory[qn]) / s if s > 0 else math.nan})
            summary.append(rec)
            print(f"  D={D} S={S} ({dt:.0f} s): " + "  ".join(
                f"{qn}={rec[qn]:.4f}±{rec[qn + '_se']:.4f} (dev {rec[qn + '_dev']:+.4f}, z {rec[qn + '_z']:+.1f})"
                for qn in QUANTITIES) + f"  R̂max={rec['rhat_max']:.3f} gap={rec['start_gap_max']:.4f}"
                f" flips/sweep={rec['flips_per_sweep']:.1f}", flush=True)
    with open(out / "runs.csv", "w", newline="") as fh:
        keys = sorted({k for r in runs for k in r})
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(runs)
    with open(out / "summary.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(summary[0]))
        w.writeheader()
        w.writerows(summary)
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
