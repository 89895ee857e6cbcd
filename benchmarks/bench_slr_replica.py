"""Benchmark: RS learning curve of ridge ERM (docs/slr.md §10.6), softmax, spiked L = 2, ν = 2, λ = 0.1, Δ = 0.1.

attnlimits: generated kernels on a frozen scrambled-Sobol rule, ray-screened multistart Newton prox,
damped → Anderson → Newton outer solve with continuation in α, error by replicates (delta method).
Baseline, measured in the same run with the same generated kernels and prox: the spec's §10.6 recipe
— damped iteration (0.5) on **fresh** Monte Carlo samples every iteration, 60 iterations, 2·10⁴
samples rising to 8·10⁴ for the last 20, E_test reported as the mean of the last 10 iterates with
their standard error (sd/√10).

Equal standard error: the generated solver's rule size is chosen so that its E_test standard error
matches the baseline's (SE ∝ N^{-1/2}; the first α calibrates).  Printed: per-α E_test ± SE of both,
wall times and the ratio.  Also: cost of one fixed point against L (2, 3, 5) and the share of time
spent in the prox.

Run: python benchmarks/bench_slr_replica.py [--alphas 1,2,...] [--baseline-iters 60] [--skip-L]
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from numeric.replica import RSRule, UNKNOWNS, informed_start, make_rule, rs_map
from verify.slr.replica import rs_kernels, rs_learning_curve


def _mc_rule(nu, L, n, rng):
    g = rng.standard_normal((n, L))
    chistar = g.copy()
    chistar[:, 0] += math.sqrt(nu)
    return [RSRule(L, 1.0, np.zeros(n, int), chistar, rng.standard_normal((n, L)), rng.standard_normal((n, L)),
                   rng.standard_normal((n, L)), rng.standard_normal(n), 1, n, f"mc {n}")]


def baseline_curve(kern, alphas, lam, Delta, nu=2.0, L=2, iters=60, seed=0):
    """§10.6 damped iteration on fresh MC samples (2e4, 8e4 for the last 20), mean ± SE of the last 10."""
    rng = np.random.default_rng(seed)
    out = []
    for a in alphas:
        x = informed_start("spiked", nu)
        Es = []
        for it in range(iters):
            n = 20000 if it < iters - 20 else 80000
            rules = _mc_rule(nu, L, n, rng)
            g, info = rs_map(kern, rules, x, a, lam, Delta)
            x = 0.5 * g + 0.5 * x
            if it >= iters - 10:
                av = dict(zip(("gg_k", "gg_v", "dg_k", "dg_v", "gx_k", "gx_v", "gxi_k", "gxi_v", "A", "B"),
                              info["averages"][0]))
                Es.append(1 - 2 * x[3] * av["A"] + x[4] * av["B"])
        out.append((float(np.mean(Es)), float(np.std(Es, ddof=1) / math.sqrt(len(Es)))))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--alphas", default=",".join(f"{a:g}" for a in np.round(np.geomspace(1, 20, 10), 3)))
    ap.add_argument("--baseline-iters", type=int, default=60)
    ap.add_argument("--skip-L", action="store_true")
    args = ap.parse_args()
    alphas = [float(a) for a in args.alphas.split(",")]
    lam, Delta = 0.1, 0.1
    kern = rs_kernels("softmax", 2)

    t0 = time.perf_counter()
    base = baseline_curve(kern, alphas, lam, Delta, iters=args.baseline_iters)
    t_base = time.perf_counter() - t0
    se_base = float(np.mean([s for _, s in base]))

    # calibrate the rule size to the baseline's standard error at the first α
    probe = rs_learning_curve("softmax", "spiked", 2.0, 2, alphas[:1], lam, Delta, points=256, replicates=4)[0]
    scale = (probe.E_test_error / se_base) ** 2
    points = int(2 ** max(6, math.ceil(math.log2(max(256 * scale, 64)))))
    t0 = time.perf_counter()
    fps = rs_learning_curve("softmax", "spiked", 2.0, 2, alphas, lam, Delta, points=points, replicates=4)
    t_ours = time.perf_counter() - t0
    print(f"learning curve softmax spiked L=2 nu=2 lam={lam} Delta={Delta}, {len(alphas)} alphas")
    print(f"{'alpha':>7} {'baseline E':>12} {'SE':>8} {'attnlimits E':>13} {'SE':>8} {'maps':>5}")
    for a, (eb, sb), fp in zip(alphas, base, fps):
        print(f"{a:7.3f} {eb:12.5f} {sb:8.1e} {fp.E_test:13.5f} {fp.E_test_error:8.1e} {fp.evaluations:5d}")
    se_ours = float(np.mean([f.E_test_error for f in fps]))
    print(f"baseline: {t_base:.1f} s, mean SE {se_base:.1e}; attnlimits ({points} x 4 Sobol): {t_ours:.1f} s, "
          f"mean SE {se_ours:.1e}")
    # at equal SE: rescale our time by (SE_ours/SE_base)^2 (cost ∝ N) if the calibration missed
    t_eq = t_ours * (se_ours / se_base) ** 2
    print(f"ratio (baseline / attnlimits) = {t_base / t_ours:.1f}x as run, {t_base / t_eq:.1f}x at equal SE")
    prox = sum(f.prox_seconds for f in fps) / sum(f.seconds for f in fps)
    print(f"share of time in the prox: {100 * prox:.0f}%; per fixed point {t_ours / len(alphas):.2f} s")

    if not args.skip_L:
        print("cost of one fixed point vs L (softmax, spiked nu=2, alpha=4, lam=0.1, 256 x 4 Sobol):")
        for L in (2, 3, 5):
            tk = time.perf_counter()
            rs_kernels("softmax", L)
            tk = time.perf_counter() - tk
            fp = rs_learning_curve("softmax", "spiked", 2.0, L, [4.0], lam, Delta, points=256, replicates=4)[0]
            print(f"  L={L}: {fp.seconds:.2f} s ({fp.evaluations} maps, prox {100 * fp.prox_seconds / fp.seconds:.0f}%), "
                  f"E_test={fp.E_test:.4f} ± {fp.E_test_error:.1e}; kernel generation {tk:.1f} s")


if __name__ == "__main__":
    main()
