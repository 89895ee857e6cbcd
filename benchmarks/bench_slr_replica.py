"""Benchmark: RS learning curve of ridge ERM (docs/slr.md §10.6), softmax, spiked L = 2, ν = 2, λ = 0.1, Δ = 0.1.

attnlimits: generated kernels on a frozen scrambled-Sobol rule, ray-screened multistart Newton prox,
damped → Anderson → Newton outer solve with continuation in α, error by replicates (delta method).
Baseline, measured in the same run with the same generated kernels and prox: the spec's §10.6 recipe
— damped iteration (0.5) on **fresh** Monte Carlo samples every iteration, 60 iterations, 2·10⁴
samples rising to 8·10⁴ for the last 20, E_test reported as the mean of the last 10 iterates with
their standard error (sd/√10).

The baseline uses the same (current) prox, so the ratio measures the method (frozen rule, outer
solver, error estimate), not the prox; the prox's own speed-up is measured by the per-fixed-point
figures at the end (compare with an older checkout).

Equal standard error: the generated solver's rule size is chosen so that its E_test standard error
matches the baseline's: the per-replicate spread is measured at two rule sizes (16 replicates each)
at the first α, its power law in n fitted (RQMC: faster than n^{-1/2}), and the smallest power of two
that reaches the baseline's SE used; the probes' cost is printed and added.  The baseline's SE is
the spread of ``--baseline-repeats`` independent runs, pooled over α.  Printed: per-α E_test ± SE of both, wall and CPU (``time.process_time``) times and their
ratios, the load average (the machine may be shared: CPU time is the more trustworthy figure).
Also: the cost of one fixed point against L (2, 3, 5) and the share of time spent in the prox.
One thread (``OMP_NUM_THREADS=1`` and ``threadpoolctl``).

Run: OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_slr_replica.py [--alphas 1,2,...]
     [--baseline-iters 60] [--baseline-repeats 2] [--skip-L] [--points-L 1024]
"""
from __future__ import annotations

import argparse
import sys
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
        print(f"  baseline alpha={a:g} (seed {seed}) ...", file=sys.stderr, flush=True)
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
                # the generated §10.5 test error (derivations.slr.replica.test_error), not retyped here
                Es.append(float(kern.modules[L].test_error(x[3], x[4], av["A"], av["B"], Delta, 0.0)[0]))
        out.append((float(np.mean(Es)), float(np.std(Es, ddof=1) / math.sqrt(len(Es)))))
    return out


class _Clock:
    """Wall and CPU seconds of a block."""

    def __enter__(self):
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.w, time.process_time() - self.c


def _load():
    import os
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def main():
    from threadpoolctl import threadpool_limits

    ap = argparse.ArgumentParser()
    ap.add_argument("--alphas", default=",".join(f"{a:g}" for a in np.round(np.geomspace(1, 20, 10), 3)))
    ap.add_argument("--baseline-iters", type=int, default=60)
    ap.add_argument("--baseline-repeats", type=int, default=2,
                    help="independent baseline runs; their spread is the baseline's standard error")
    ap.add_argument("--skip-L", action="store_true")
    ap.add_argument("--points-L", type=int, default=1024)
    args = ap.parse_args()
    with threadpool_limits(1):
        _run(args)


def _run(args):
    alphas = [float(a) for a in args.alphas.split(",")]
    lam, Delta = 0.1, 0.1
    kern = rs_kernels("softmax", 2)
    print(_load(), "(start)")

    # The §10.6 recipe's own SE (sd of the last 10 iterates / √10) ignores that damped iterates are
    # strongly correlated, so it understates the baseline's error by a large factor; calibrating to it
    # asks for millions of points.  The baseline's error is measured instead by the spread of
    # ``--baseline-repeats`` independent runs (the recipe's SE is printed beside it).
    with _Clock() as cb:
        runs = [baseline_curve(kern, alphas, lam, Delta, iters=args.baseline_iters, seed=k)
                for k in range(args.baseline_repeats)]
    cb.wall /= len(runs)
    cb.cpu /= len(runs)
    E_runs = np.array([[e for e, _ in r] for r in runs])  # (repeats, alphas)
    naive = np.array([[s for _, s in r] for r in runs]).mean(axis=0)
    sd_run = E_runs.std(axis=0, ddof=1) if len(runs) > 1 else naive
    base = [(float(E_runs[0, i]), float(sd_run[i])) for i in range(len(alphas))]
    if len(runs) > 1:
        # pooled over α (the error varies slowly with α): 10 α × (repeats − 1) degrees of freedom
        pooled = float(np.sqrt(np.mean(sd_run ** 2)))
        print(f"baseline SE of one run pooled over the {len(alphas)} alphas: {pooled:.1e} "
              f"({len(alphas) * (len(runs) - 1)} degrees of freedom)", flush=True)
    print("baseline SE of one run: recipe (sd/√10 of the last iterates) " +
          ", ".join(f"{v:.1e}" for v in naive) + "; measured (sd over " + f"{len(runs)} runs) " +
          ", ".join(f"{v:.1e}" for v in sd_run), flush=True)
    se_base = float(np.sqrt(np.mean(sd_run ** 2)))  # pooled (root mean square over α)

    # Calibrate the rule size to the baseline's standard error at the first α.  The frozen rule's
    # error does not fall like N^-1/2 (RQMC on a smooth-in-most-places integrand: measured ≈ N^-0.8),
    # so one probe rescaled by N^-1/2 overstates the size needed and the speed-up.  Instead the
    # per-replicate spread σ(n) is measured at two sizes with 16 replicates each (15 degrees of
    # freedom, against 3 for a 4-replicate rule), log σ fitted on log n, and the smallest power of
    # two n with σ(n)/√4 ≤ the baseline's SE is used.  The probes' cost is reported and counted.
    R_probe, sizes = 16, (256, 1024)
    with _Clock() as cp:
        sig = []
        for n_ in sizes:
            pr = rs_learning_curve("softmax", "spiked", 2.0, 2, alphas[:1], lam, Delta, points=n_,
                                   replicates=R_probe)[0]
            sig.append(pr.E_test_error * math.sqrt(R_probe))
    slope = math.log(sig[1] / sig[0]) / math.log(sizes[1] / sizes[0])
    need = sizes[1] * (se_base * 2 / sig[1]) ** (1 / slope)  # σ(n)/2 = se_base
    points = int(2 ** max(8, math.ceil(math.log2(need))))
    print(f"calibration: per-replicate sd of E_test {sig[0]:.2e} at n={sizes[0]}, {sig[1]:.2e} at n={sizes[1]} "
          f"({R_probe} replicates each): sd ∝ n^{slope:.2f}; SE {se_base:.1e} needs n ≈ {need:.0f} -> rule "
          f"{points} x 4", flush=True)
    with _Clock() as co:
        fps = rs_learning_curve("softmax", "spiked", 2.0, 2, alphas, lam, Delta, points=points, replicates=4)
    print(f"learning curve softmax spiked L=2 nu=2 lam={lam} Delta={Delta}, {len(alphas)} alphas")
    print(f"{'alpha':>7} {'baseline E':>12} {'SE':>8} {'attnlimits E':>13} {'SE':>8} {'maps':>5} {'diff/SE':>8}")
    for a, (eb, sb), fp in zip(alphas, base, fps):
        # diff/SE with the pooled baseline SE (one α's own spread has repeats − 1 degrees of freedom)
        print(f"{a:7.3f} {eb:12.5f} {sb:8.1e} {fp.E_test:13.5f} {fp.E_test_error:8.1e} {fp.evaluations:5d} "
              f"{(fp.E_test - eb) / math.hypot(se_base, fp.E_test_error):8.2f}")
    se_ours = float(np.mean([f.E_test_error for f in fps]))
    print(f"baseline (one run): wall {cb.wall:.1f} s, CPU {cb.cpu:.1f} s, mean SE {se_base:.1e}")
    print(f"attnlimits ({points} x 4 Sobol): wall {co.wall:.1f} s, CPU {co.cpu:.1f} s, mean SE {se_ours:.1e} "
          f"(the 4-replicate SEs have 3 degrees of freedom each); calibration probes: wall {cp.wall:.1f} s, "
          f"CPU {cp.cpu:.1f} s")
    for what, tb, to, tp in (("CPU", cb.cpu, co.cpu, cp.cpu), ("wall", cb.wall, co.wall, cp.wall)):
        print(f"ratio {what} (baseline / attnlimits) = {tb / to:.1f}x at SE {se_ours:.1e} vs {se_base:.1e} "
              f"(attnlimits SE / baseline SE = {se_ours / se_base:.2f}), {tb / (to + tp):.1f}x including the "
              "calibration probes")
    prox = sum(f.prox_seconds for f in fps) / sum(f.seconds for f in fps)
    print(f"share of (wall) time in the prox: {100 * prox:.0f}%; per fixed point CPU {co.cpu / len(alphas):.2f} s, "
          f"{np.mean([f.evaluations for f in fps]):.1f} map evaluations")
    print(_load(), "(after the curve)")

    if not args.skip_L:
        pl = args.points_L
        print(f"cost of one fixed point vs L (softmax, spiked nu=2, alpha=4, lam=0.1, {pl} x 4 Sobol, from the "
              "informed start, error estimate included):")
        for L in (2, 3, 5):
            with _Clock() as ck:
                rs_kernels("softmax", L)
            with _Clock() as cf:
                fp = rs_learning_curve("softmax", "spiked", 2.0, L, [4.0], lam, Delta, points=pl, replicates=4)[0]
            print(f"  L={L}: CPU {cf.cpu:.2f} s, wall {cf.wall:.2f} s ({fp.evaluations} maps, prox "
                  f"{100 * fp.prox_seconds / fp.seconds:.0f}% of wall), E_test={fp.E_test:.4f} ± "
                  f"{fp.E_test_error:.1e}; kernel generation CPU {ck.cpu:.1f} s")
        print(_load(), "(end)")


if __name__ == "__main__":
    main()
