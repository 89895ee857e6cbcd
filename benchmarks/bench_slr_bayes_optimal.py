"""Benchmark of the BO state-evolution solver (docs/slr.md §11) against damped iteration on fresh samples.

Both sides evaluate the same generated kernels (``bo_L{L}_ibp``) on a 20-point curve
E_BO(α), α log-spaced in [0.5, 50] (spiked, L = 2, ν = 2, Δ = 0.1):

- baseline (§11's method): damped iteration q ← ½q + ½G(q) with 2·10⁵ fresh Gaussian samples per
  iteration, 40 iterations from q = 0.01 at every α; value = mean of E_BO over the last 10
  iterates, standard error = their standard deviation / √10;
- frozen rule (:mod:`attnlimits.numeric.slr.bo_state_evolution`): scrambled Sobol, 8 replicates, Newton with
  continuation in α; error by propagating the replicate spread.  The rule is doubled until its
  standard error is at most the baseline's at the same α (median over the baseline points of the
  ratio ≤ 1: equal standard error), and the final rule is timed.

Prints both times (min/median/max over ``--repeats`` for the frozen rule), both standard errors
and the ratio baseline / frozen.  Single-threaded (OMP_NUM_THREADS=1 recommended)::

    OMP_NUM_THREADS=1 python benchmarks/bench_slr_bayes_optimal.py --repeats 3
"""
from __future__ import annotations

import argparse
import math
import statistics

import numpy as np

from _timing import Timing, clock, ratio_line  # benchmarks/_timing.py (this script's folder is on sys.path)


def baseline_point(mod, alpha, nu, delta, L, rng, *, iterations=40, samples=200_000, damping=0.5):
    from attnlimits.verify.slr.bayes_optimal import bayes_risk_of as bayes_risk

    ibp = getattr(mod, f"bo_L{L}_ibp")
    terms = getattr(mod, f"bo_L{L}_log_terms")
    q = np.array([0.01, 0.01])
    Es = []
    for t in range(iterations):
        x = rng.standard_normal((samples, 2 * L + 1))
        cols = [x[:, j] for j in range(2 * L + 1)]
        A = terms(*cols, q[0], q[1], nu, delta)
        Mx = np.max(np.stack(A), axis=0)
        ik, iv = ibp(*cols, q[0], q[1], nu, delta, Mx)
        qhat = alpha * np.array([ik.mean(), iv.mean()])
        new = np.array([mod.bo_prior_update(h)[0] for h in qhat])
        q = np.clip((1 - damping) * q + damping * new, 1e-12, 1 - 1e-12)
        if t >= iterations - 10:
            eb = bayes_risk("spiked", nu * q[0], L).value
            Es.append(float(mod.bo_test_error(q[0], q[1], nu, eb)[0]))
    return float(np.mean(Es)), float(np.std(Es, ddof=1) / math.sqrt(len(Es)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--baseline-points", type=int, default=None,
                    help="run the baseline on this many of the α values only (time scaled to the full curve)")
    ap.add_argument("--L", type=int, default=2)
    ap.add_argument("--nu", type=float, default=2.0)
    args = ap.parse_args(argv)
    try:
        import threadpoolctl

        threadpoolctl.threadpool_limits(1)
    except ImportError:  # pragma: no cover
        pass
    from attnlimits.numeric.slr.bo_state_evolution import bo_curve, make_rule
    from attnlimits.verify.slr.bayes_optimal import bo_module

    L, nu, delta = args.L, args.nu, 0.1
    from attnlimits.verify.slr.bayes_optimal import bayes_risk_of as bayes_risk

    mod = bo_module([L])
    alphas = list(np.geomspace(0.5, 50, args.points))
    law = ((L, 1.0),)
    sub = alphas if args.baseline_points is None else alphas[:: max(1, len(alphas) // args.baseline_points)]
    rng = np.random.default_rng(0)
    with clock() as c:
        base = [baseline_point(mod, a, nu, delta, L, rng) for a in sub]
    t_base = c.wall * len(alphas) / len(sub)
    se_base = statistics.median(s for _, s in base)
    print(f"baseline (40 it x 2e5 fresh samples): {t_base:.2f} s for {len(alphas)} points "
          f"(measured on {len(sub)}), median SE {se_base:.2e}, max SE {max(s for _, s in base):.2e}")
    pts = 2 ** 9
    while True:
        rule = make_rule([L], points=pts, replicates=8)
        curve = bo_curve(mod, rule, law, nu, alphas, delta, starts=("uninformed",), population_bayes_risk=bayes_risk)
        ratios = [curve[alphas.index(a)].E_BO_se / b[1] for a, b in zip(sub, base)]
        if statistics.median(ratios) <= 1.0 or pts >= 2 ** 16:
            break
        pts *= 2
    walls = []
    for _ in range(args.repeats):  # the rule is made outside the timing
        rule = make_rule([L], points=pts, replicates=8)
        with clock() as c:
            curve = bo_curve(mod, rule, law, nu, alphas, delta, starts=("uninformed",),
                             population_bayes_risk=bayes_risk)
        walls.append(c.wall)
    times = Timing.of(walls)
    print(f"frozen rule (Sobol 8 x {pts}, Newton, continuation): min/median/max "
          f"{times.mmm()} s, max SE "
          f"{max(p.E_BO_se for p in curve):.2e}")
    ratios = [curve[alphas.index(a)].E_BO_se / b[1] for a, b in zip(sub, base)]
    print(f"SE ratio frozen/baseline per baseline point: {', '.join(f'{r:.2f}' for r in ratios)}")
    diffs = [abs(p.E_BO - b[0]) for p, b in zip([curve[alphas.index(a)] for a in sub], base)]
    print("alpha, frozen E_BO ± SE, baseline E_BO ± SE: " + "; ".join(
        f"{a:.3g}: {curve[alphas.index(a)].E_BO:.5f} ± {curve[alphas.index(a)].E_BO_se:.1e}, {b[0]:.5f} ± {b[1]:.1e}"
        for a, b in zip(sub, base)))
    print(f"max |frozen - baseline| over the baseline points: {max(diffs):.2e}")
    # the baseline is one run (its median is itself)
    print(ratio_line("ratio baseline / frozen (median): ", Timing.of([t_base]), times, spec=".1f", unit=""))


if __name__ == "__main__":
    main()
