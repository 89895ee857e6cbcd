r"""Finite-D study of GAMP against the BO state evolution (claim C19-AMP's allowance).

GAMP (:func:`attnlimits.verify.slr.amp.gamp`) on spiked-SLR data (:func:`attnlimits.verify.slr.sample_sequences`, teacher of docs/slr.md §2)
at ``D ∈ {250, 500, 1000, 2000}``, several seeds per D, one thread.  For every run the seven overlaps of the
GAMP estimate are measured and the test error of the posterior-mean predictor (softmax attention with key
:math:`\sqrt\nu\hat k` and value :math:`\hat v`, docs/slr.md §11) is computed *exactly from the overlaps* by the §6.1
formula (:meth:`attnlimits.verify.slr.theory.SLRTheory.population_risk_general`, exact at finite D for the orthonormal teacher, C5),
so that no test-sampling noise enters.  Deviations from the state evolution
(:func:`attnlimits.verify.slr.bayes_optimal.bo_state_evolution`):

- ``rms``  : :math:`\sqrt{\overline{(x_s-x_{SE})^2}}` over seeds (what one run deviates by);
- ``bias`` : :math:`\bar x-x_{SE}` with its standard error over seeds;
- ``sd``   : the seed-to-seed standard deviation.

Fitted log–log slopes of ``rms`` and ``sd`` against D (least squares on the D grid) say whether the one-run
deviation decays like :math:`D^{-1/2}` (fluctuations) or :math:`D^{-1}` (bias); ``c = rms·√D`` and
``rms·D`` are printed so the allowances of C19-AMP (:math:`1/\sqrt D` on overlaps, :math:`0.1/\sqrt D` (formerly :math:`5/D`) on the test
error) can be compared with the data.

Run (the default grid with 24/24/12/8 seeds and two points took about 25 min on a shared, loaded 2-core machine)::

    OMP_NUM_THREADS=1 python studies/study_gamp_finite_D.py --out /tmp/gamp_study
    OMP_NUM_THREADS=1 python studies/study_gamp_finite_D.py --quick

Writes ``runs.csv`` (one row per run), ``summary.csv`` (one row per D and quantity) and ``slopes.json``.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import time
from pathlib import Path

import numpy as np
import torch

QUANTITIES = ("m_k", "q_k", "m_v", "q_v", "E_test")


def run_one(nu, L, alpha, delta, D, seed, *, iterations=60, damping=0.5, points=2 ** 15):
    from attnlimits.verify.slr import overlaps, sample_sequences
    from attnlimits.verify.slr.amp import gamp
    from attnlimits.verify.slr.problem import slr_problem
    from attnlimits.verify.slr.theory import theory_of

    gen = torch.Generator().manual_seed(int(seed))
    N = int(round(alpha * D))
    data = sample_sequences("spiked", nu, L, N, D, generator=gen, delta=delta)
    t0 = time.perf_counter()
    res = gamp(data["X"], data["y"], nu, delta, iterations=iterations, damping=damping,
               k_star=data["k_star"], v_star=data["v_star"], device="cpu")
    t_gamp = time.perf_counter() - t0
    ov = overlaps(res["k_hat"], res["v_hat"], data["k_star"], data["v_star"])
    r = math.sqrt(nu)  # the BO predictor's key is √ν k̂
    key = {"m_k": r * ov["m_k"], "q_k": nu * ov["q_k"], "m_v": ov["m_v"], "q_v": ov["q_v"],
           "m_kvstar": r * ov["m_kvstar"], "m_vkstar": ov["m_vkstar"], "q_kv": r * ov["q_kv"]}
    E, E_se = theory_of(slr_problem("spiked", nu, L, activation="softmax")).population_risk_general(key, points=points)
    del data
    return {**ov, "E_test": float(E), "E_test_qmc_se": float(E_se), "converged": bool(res["converged"]),
            "iterations": res["iterations"], "V_k": res["V_k"], "V_v": res["V_v"], "seconds_gamp": t_gamp}


def slope(Ds, ys):
    Ds, ys = np.asarray(Ds, float), np.asarray(ys, float)
    ok = ys > 0
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(Ds[ok]), np.log(ys[ok]), 1)[0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--Ds", default="250,500,1000,2000")
    ap.add_argument("--seeds", default="12,12,8,6", help="seeds per D (one number or one per D)")
    ap.add_argument("--points", default="2:2:4", help="L:nu:alpha[,L:nu:alpha...]")
    ap.add_argument("--delta", type=float, default=0.1)
    ap.add_argument("--out", default="/tmp/attnlimits_gamp_study")
    ap.add_argument("--quick", action="store_true", help="D ∈ {250, 500}, 3 seeds (smoke run)")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    from attnlimits.verify.slr.bayes_optimal import bo_state_evolution

    Ds = [int(x) for x in a.Ds.split(",")]
    seeds = [int(x) for x in a.seeds.split(",")]
    if a.quick:
        Ds, seeds = [250, 500], [3]
    if len(seeds) == 1:
        seeds = seeds * len(Ds)
    pts = [tuple(float(v) for v in p.split(":")) for p in a.points.split(",")]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    runs, summary, slopes = [], [], {}
    for (L, nu, alpha) in pts:
        L = int(L)
        se = bo_state_evolution("spiked", nu, L, [alpha], a.delta, points=2 ** 14, starts=("uninformed",))[0]
        theory = {"m_k": se.q_k, "q_k": se.q_k, "m_v": se.q_v, "q_v": se.q_v, "E_test": se.E_BO}
        print(f"SE L={L} nu={nu:g} alpha={alpha:g}: q_k={se.q_k:.5f} q_v={se.q_v:.5f} E_BO={se.E_BO:.5f}"
              f" ± {se.E_BO_se:.1e}", flush=True)
        tag = f"L={L},nu={nu:g},alpha={alpha:g}"
        per_D = {}
        for D, S in zip(Ds, seeds):
            rows = []
            for s in range(S):
                t0 = time.perf_counter()
                r = run_one(nu, L, alpha, a.delta, D, 12_000 + 1000 * D + s)
                r.update({"L": L, "nu": nu, "alpha": alpha, "delta": a.delta, "D": D, "seed": 12_000 + 1000 * D + s,
                          "seconds": time.perf_counter() - t0})
                rows.append(r)
                print(f"  D={D} seed={s}: m_k={r['m_k']:.4f} q_k={r['q_k']:.4f} m_v={r['m_v']:.4f} "
                      f"q_v={r['q_v']:.4f} E={r['E_test']:.5f} conv={r['converged']} ({r['seconds']:.1f} s)",
                      flush=True)
            runs.extend(rows)
            per_D[D] = rows
            for qn in QUANTITIES:
                x = np.array([r[qn] for r in rows]) - theory[qn]
                summary.append({"point": tag, "D": D, "seeds": S, "quantity": qn, "theory": theory[qn],
                                "mean": float(np.mean(x) + theory[qn]), "bias": float(np.mean(x)),
                                "bias_se": float(np.std(x, ddof=1) / math.sqrt(S)),
                                "sd": float(np.std(x, ddof=1)), "rms": float(np.sqrt(np.mean(x ** 2))),
                                "rms_sqrtD": float(np.sqrt(np.mean(x ** 2)) * math.sqrt(D)),
                                "rms_D": float(np.sqrt(np.mean(x ** 2)) * D),
                                "abs_bias_D": float(abs(np.mean(x)) * D)})
        for qn in QUANTITIES:
            sub = [s for s in summary if s["point"] == tag and s["quantity"] == qn]
            slopes[f"{tag}:{qn}"] = {"rms": slope([s["D"] for s in sub], [s["rms"] for s in sub]),
                                     "sd": slope([s["D"] for s in sub], [s["sd"] for s in sub]),
                                     "abs_bias": slope([s["D"] for s in sub], [abs(s["bias"]) for s in sub])}
    with open(out / "runs.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(runs[0]))
        w.writeheader()
        w.writerows(runs)
    with open(out / "summary.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(summary[0]))
        w.writeheader()
        w.writerows(summary)
    (out / "slopes.json").write_text(json.dumps(slopes, indent=1))
    print("\npoint, quantity, D, seeds: bias ± se | sd | rms | rms·√D | rms·D")
    for s in summary:
        print(f"{s['point']} {s['quantity']:>6} D={s['D']:>5} S={s['seeds']:>2}: {s['bias']:+.5f} ± {s['bias_se']:.5f} "
              f"| {s['sd']:.5f} | {s['rms']:.5f} | {s['rms_sqrtD']:.3f} | {s['rms_D']:.2f}")
    print("\nfitted log-log slopes vs D (rms, sd, |bias|):")
    for k, v in slopes.items():
        print(f"  {k}: rms {v['rms']:+.2f}, sd {v['sd']:+.2f}, |bias| {v['abs_bias']:+.2f}")
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
