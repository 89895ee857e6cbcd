"""Benchmark: RS learning curve of ridge ERM (docs/slr.md §10.6), softmax, spiked L = 2, ν = 2, λ = 0.1, Δ = 0.1.

attnlimits: generated kernels on a frozen scrambled-Sobol rule, ray-screened multistart Newton prox,
continuation in α from the largest α down (each point warm-started from the previous one: predictor
from its Jacobian, Newton on the selection-frozen surrogate, checks on the multistart map), error by
replicates (delta method).

Baseline, measured in the same run with the same generated kernels and **the same prox**: the spec's
§10.6 recipe — damped iteration (0.5) on **fresh** Monte Carlo samples every iteration, 60
iterations, 2·10⁴ samples rising to 8·10⁴ for the last 20, E_test the mean of the last 10 iterates.
Its standard error is the spread of ``--baseline-repeats`` independent runs pooled over α (the
recipe's own sd/√10 ignores that damped iterates are correlated and is printed beside it).  The
same prox in both makes the ratio one of the method (frozen rule, outer solver, error estimate).

Timing on a shared machine: the runs are interleaved — attnlimits' curves, baseline run 1, the curves
again, baseline run 2, the curves again — and the curves are timed by the median of their rounds, the
baseline by the mean of its runs (a slow spell of the host then reaches both; one such spell has made the same multistart map 60 % slower
in one run than in the run before).

Equal standard error: the curve is solved on two rule sizes (``--points``, default 4096 and 8192,
× 4 replicates), whose root-mean-square SEs over α bracket the baseline's; the cost at the
baseline's SE is interpolated on log(CPU) against log(SE) between them (measured RQMC rate in
between); if they do not bracket it, the nearer one is rescaled conservatively (SE ∝ n^-1/2 when
ours is larger, no credit when smaller).

The §10.6 prox as the spec writes it for L = 2 softmax (a 1201-point grid on u, then safeguarded
Newton, 60 steps) is far slower than the multistart one; its cost per map is measured at 2·10⁴ and
8·10⁴ samples, and the recipe's cost with it (60 maps per α, nothing else of weight) printed as a
second, derived baseline; ``--spec-prox-alphas`` also *runs* that recipe as written (its grid prox)
at the given α and reports its measured CPU per α (5–8 min each; it does not depend on α) and E_test
beside the library-prox run's (the two proxes find the same minima, so the estimator and its SE are
the same).  Also: the cost of one fixed point against L (2, 3, 5), the share of time in the prox,
and the cost per warm-started fixed point at 4 × 1024.  CPU times are
``time.process_time`` of one thread (``OMP_NUM_THREADS=1`` and ``threadpoolctl``); the load average
is printed (the machine may be shared).

Run: OMP_NUM_THREADS=1 python benchmarks/bench_slr_replica.py [--alphas 1,2,...] [--no-allocator-tuning]
     [--baseline-iters 60] [--baseline-repeats 2] [--points 4096,8192] [--spec-prox-alphas 4] [--skip-L]
     [--points-L 1024]
"""
from __future__ import annotations

import argparse
import sys
import math

import numpy as np

from attnlimits.numeric.slr.rs import RSRule, informed_start, rs_map
from attnlimits.verify.slr.replica import rs_kernels, rs_problem
from _timing import Clock, Timing, clock  # benchmarks/_timing.py (this script's folder is on sys.path)


def _mc_rule(nu, L, n, rng):
    g = rng.standard_normal((n, L))
    chistar = g.copy()
    chistar[:, 0] += math.sqrt(nu)
    return [RSRule(L, 1.0, np.zeros(n, int), chistar, rng.standard_normal((n, L)), rng.standard_normal((n, L)),
                   rng.standard_normal((n, L)), rng.standard_normal(n), 1, n, f"mc {n}")]


def baseline_curve(kern, alphas, lam, Delta, nu=2.0, L=2, iters=60, seed=0, prox=None):
    """§10.6 damped iteration on fresh MC samples (2e4, 8e4 for the last 20), mean ± SE of the last 10.

    ``prox`` (e.g. :func:`_spec_prox_L2`) replaces the library's prox for the run (the recipe as the spec
    writes it); default the library's multistart prox, so that the ratio is one of the method."""
    if prox is not None:
        import attnlimits.numeric.slr.rs.map as NRm  # where the map looks the prox up

        orig = NRm.prox_newton
        NRm.prox_newton = prox
        try:
            return baseline_curve(kern, alphas, lam, Delta, nu, L, iters, seed)
        finally:
            NRm.prox_newton = orig
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
                # the generated §10.5 test error (attnlimits.derivations.slr.replica.test_error), not retyped here
                Es.append(float(kern.modules[L].test_error(x[3], x[4], av["A"], av["B"], Delta, 0.0)[0]))
        out.append((float(np.mean(Es)), float(np.std(Es, ddof=1) / math.sqrt(len(Es)))))
    return out


def _load():
    import os
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def _spec_prox_L2(mod, wchi, wz, y, V_k, V_v, *, chunk=4096, grid=1201, span=30.0, steps=60, **_):
    """The §10.6 prox as the spec writes it for L = 2 softmax, on the generated F: χ = ω^χ + (u/2)(1, −1)
    (softmax depends on χ₁ − χ₂ only), a grid of 1201 points on u ∈ [−30, 30], then safeguarded
    Newton in u (only decreasing steps, |Δu| ≤ 1, 60 steps).  Same signature as the library's prox."""
    n = wchi.shape[0]
    w1, w2, z1, z2 = wchi[:, 0], wchi[:, 1], wz[:, 0], wz[:, 1]
    us = np.linspace(-span, span, grid)[:, None]
    u = np.empty(n)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for a in range(0, n, chunk):
            b = min(n, a + chunk)
            F = mod.F_value(w1[None, a:b] + us / 2, w2[None, a:b] - us / 2, w1[None, a:b], w2[None, a:b],
                            z1[None, a:b], z2[None, a:b], y[None, a:b], V_k, V_v)[0]
            u[a:b] = us[np.argmin(np.where(np.isfinite(F), F, np.inf), axis=0), 0]
        for _ in range(steps):
            F0, g1, g2, h11, h12, h22 = (np.broadcast_to(o, (n,)) for o in
                                         mod.F_newton(w1 + u / 2, w2 - u / 2, w1, w2, z1, z2, y, V_k, V_v))
            d1, d2 = (g1 - g2) / 2, (h11 - 2 * h12 + h22) / 4
            step = np.clip(np.where(d2 > 0, -d1 / np.where(d2 > 0, d2, 1.0), -np.sign(d1)), -1.0, 1.0)
            for _ in range(8):
                un = u + step
                Fn = np.broadcast_to(mod.F_value(w1 + un / 2, w2 - un / 2, w1, w2, z1, z2, y, V_k, V_v)[0], (n,))
                ok = np.isfinite(Fn) & (Fn < F0)
                u, F0, step = np.where(ok, un, u), np.where(ok, Fn, F0), np.where(ok, 0.0, step / 2)
                if not (step != 0).any():
                    break
    return np.stack([w1 + u / 2, w2 - u / 2], axis=1), {
        "prox_iterations": steps, "unconverged_fraction": 0.0, "ambiguous_fraction": 0.0,
        "multi_minima_fraction": 0.0}


def _map_seconds(kern, n, prox=None, reps=3, seed=123):
    """CPU seconds of one map (the §10.6 recipe's unit of work) on n fresh samples at the informed start."""
    import attnlimits.numeric.slr.rs.map as NRm  # where the map looks the prox up

    rng = np.random.default_rng(seed)
    x = informed_start("spiked", 2.0)
    orig = NRm.prox_newton
    if prox is not None:
        NRm.prox_newton = prox
    try:
        clocks = []
        for _ in range(reps):
            rules = _mc_rule(2.0, 2, n, rng)  # drawn outside the timing
            with clock() as c:
                rs_map(kern, rules, x, 4.0, 0.1, 0.1)
            clocks.append(c)
    finally:
        NRm.prox_newton = orig
    return Timing.of([c.wall for c in clocks], [c.cpu for c in clocks]).cpu  # the median CPU seconds


def main():
    from threadpoolctl import threadpool_limits

    ap = argparse.ArgumentParser()
    ap.add_argument("--alphas", default=",".join(f"{a:g}" for a in np.round(np.geomspace(1, 20, 10), 3)))
    ap.add_argument("--baseline-iters", type=int, default=60)
    ap.add_argument("--baseline-repeats", type=int, default=2,
                    help="independent baseline runs; their spread is the baseline's standard error")
    ap.add_argument("--points", default="4096,8192", help="rule sizes (per replicate, 4 replicates) to solve at")
    ap.add_argument("--spec-prox-alphas", default="",
                    help="alphas at which to also *run* the recipe with the spec's own prox (1201-point grid, "
                         "then safeguarded Newton; 5-8 min CPU per alpha), e.g. 1")
    ap.add_argument("--skip-L", action="store_true")
    ap.add_argument("--points-L", type=int, default=1024)
    ap.add_argument("--no-allocator-tuning", action="store_true",
                    help="leave glibc's malloc thresholds alone (numeric/allocator.py); both methods see the same")
    args = ap.parse_args()
    if not args.no_allocator_tuning:
        from attnlimits.numeric.allocator import tune_allocator

        print(f"allocator tuning (attnlimits.numeric.allocator): {tune_allocator()}")
    with threadpool_limits(1):
        _run(args)


def _rms(v):
    return float(np.sqrt(np.mean(np.square(v))))


def _run(args):
    alphas = [float(a) for a in args.alphas.split(",")]
    lam, Delta = 0.1, 0.1
    kern = rs_kernels("softmax", 2)
    print(_load(), "(start)")

    order = sorted(range(len(alphas)), key=lambda i: -alphas[i])  # continuation from the largest α down
    sizes = [int(p) for p in args.points.split(",")]
    ours = {p: [] for p in sizes}  # (clock, fixed points) per round

    def ours_round():
        for points in sizes:
            with clock() as co:
                fps_desc = rs_problem("softmax", "spiked", 2.0, 2, points=points, replicates=4).learning_curve(
                    [alphas[i] for i in order], lam, Delta)
            ours[points].append((co, fps_desc))
        print("  attnlimits round: " + ", ".join(f"{p} x 4 CPU {ours[p][-1][0].cpu:.1f} s" for p in sizes),
              file=sys.stderr, flush=True)

    # interleaved (ours, baseline, ours, baseline, ..., ours), so that a slow spell of a shared machine
    # reaches both: ours is timed by the median of its rounds, the baseline by the mean of its runs
    ours_round()
    runs, cpus, walls = [], [], []
    for k in range(args.baseline_repeats):
        with clock() as ck:
            runs.append(baseline_curve(kern, alphas, lam, Delta, iters=args.baseline_iters, seed=k))
        cpus.append(ck.cpu)
        walls.append(ck.wall)
        ours_round()
    cb = Clock(wall=float(np.mean(walls)), cpu=float(np.mean(cpus)))  # the mean of the baseline runs
    print("baseline runs CPU s: " + ", ".join(f"{c:.1f}" for c in cpus) + "; attnlimits rounds CPU s: " +
          "; ".join(f"{p} x 4: " + ", ".join(f"{c.cpu:.1f}" for c, _ in ours[p]) for p in sizes))
    E_runs = np.array([[e for e, _ in r] for r in runs])  # (repeats, alphas)
    naive = np.array([[s for _, s in r] for r in runs]).mean(axis=0)
    sd_run = E_runs.std(axis=0, ddof=1) if len(runs) > 1 else naive
    se_base = _rms(sd_run)  # pooled over α (the error varies slowly with α): α × (repeats − 1) dof
    print(f"baseline SE of one run pooled over the {len(alphas)} alphas: {se_base:.1e} "
          f"({len(alphas) * (len(runs) - 1)} degrees of freedom)", flush=True)
    print("baseline SE of one run: recipe (sd/√10 of the last iterates) " +
          ", ".join(f"{v:.1e}" for v in naive) + "; measured (sd over " + f"{len(runs)} runs) " +
          ", ".join(f"{v:.1e}" for v in sd_run), flush=True)
    base = [(float(E_runs[0, i]), float(sd_run[i])) for i in range(len(alphas))]

    measured = []
    for points in sizes:
        co = Timing.of([c.wall for c, _ in ours[points]], [c.cpu for c, _ in ours[points]])  # medians of the rounds
        fps_desc = ours[points][0][1]  # deterministic: every round gives the same fixed points
        fps = [None] * len(alphas)
        for j, i in enumerate(order):
            fps[i] = fps_desc[j]
        se_o = _rms([f.E_test_error for f in fps])
        measured.append((points, co, se_o))
        print(f"\nlearning curve softmax spiked L=2 nu=2 lam={lam} Delta={Delta}, {len(alphas)} alphas, "
              f"attnlimits on {points} x 4 Sobol (solved from alpha={alphas[order[0]]:g} down)")
        print(f"{'alpha':>7} {'baseline E':>12} {'SE':>8} {'attnlimits E':>13} {'SE':>8} {'maps':>5} {'CPU s':>6} "
              f"{'diff/SE':>8}")
        for a, (eb, sb), fp in zip(alphas, base, fps):
            # diff/SE with the pooled baseline SE (one α's own spread has repeats − 1 degrees of freedom)
            print(f"{a:7.3f} {eb:12.5f} {sb:8.1e} {fp.E_test:13.5f} {fp.E_test_error:8.1e} {fp.evaluations:5d} "
                  f"{fp.seconds:6.2f} {(fp.E_test - eb) / math.hypot(se_base, fp.E_test_error):8.2f}")
        prox = sum(f.prox_seconds for f in fps) / sum(f.seconds for f in fps)
        print(f"attnlimits ({points} x 4): wall {co.median:.1f} s, CPU {co.cpu:.1f} s (median of "
              f"{len(ours[points])} rounds), RMS SE {se_o:.2e} (each SE "
              f"from 4 replicates, 3 dof); prox {100 * prox:.0f}% of wall; {np.mean([f.evaluations for f in fps]):.1f} "
              f"map evaluations (multistart + surrogate) per point", flush=True)
    print(f"\nbaseline (one run): wall {cb.wall:.1f} s, CPU {cb.cpu:.1f} s, RMS SE {se_base:.2e}")
    for points, co, se_o in measured:
        print(f"ratio at {points} x 4: CPU {cb.cpu / co.cpu:.1f}x, wall {cb.wall / co.median:.1f}x, at SE "
              f"{se_o:.2e} vs {se_base:.2e} (ratio {se_o / se_base:.2f})")
    # the cost at the baseline's SE
    lo = [(p, c, s_) for p, c, s_ in measured if s_ >= se_base]
    hi = [(p, c, s_) for p, c, s_ in measured if s_ < se_base]
    if lo and hi:
        (p1, c1, s1), (p2, c2, s2) = max(lo, key=lambda t: t[0]), min(hi, key=lambda t: t[0])
        w = math.log(se_base / s1) / math.log(s2 / s1)
        cpu_eq = math.exp((1 - w) * math.log(c1.cpu) + w * math.log(c2.cpu))
        how = (f"interpolated between {p1} x 4 (SE {s1:.2e}, CPU {c1.cpu:.1f} s) and {p2} x 4 (SE {s2:.2e}, "
               f"CPU {c2.cpu:.1f} s) on log CPU vs log SE")
    else:
        p1, c1, s1 = min(measured, key=lambda t: abs(math.log(t[2] / se_base)))
        cpu_eq = c1.cpu * (s1 / se_base) ** 2 if s1 > se_base else c1.cpu
        how = f"from {p1} x 4 rescaled conservatively (SE ∝ n^-1/2 if larger, no credit if smaller)"
    print(f"RATIO AT EQUAL SE (CPU, baseline / attnlimits) = {cb.cpu / cpu_eq:.1f}x  [{how}]")
    # the §10.6 recipe with the spec's own prox (1201-point grid): its 60 maps per α at measured cost
    t_ours = {n: _map_seconds(kern, n) for n in (20000, 80000)}
    t_spec = {n: _map_seconds(kern, n, prox=_spec_prox_L2, reps=1) for n in (20000, 80000)}
    it = args.baseline_iters
    per_alpha = {k: (it - 20) * t[20000] + 20 * t[80000] for k, t in (("ours", t_ours), ("spec", t_spec))}
    spec_cpu = cb.cpu * per_alpha["spec"] / per_alpha["ours"]
    print(f"one map (CPU s) at 2e4 / 8e4 samples: multistart prox {t_ours[20000]:.2f} / {t_ours[80000]:.2f}, "
          f"§10.6 grid prox {t_spec[20000]:.2f} / {t_spec[80000]:.2f}; the recipe with the grid prox would take "
          f"≈ {spec_cpu:.0f} s CPU per run (its measured run rescaled by the maps' cost), i.e. "
          f"{spec_cpu / cpu_eq:.0f}x the attnlimits curve at equal SE (derived, not run)")
    print(_load(), "(after the curve)")
    if args.spec_prox_alphas:
        # the recipe exactly as the spec writes it (its grid prox), run at a few α: measured, not derived
        a_sp = [float(a) for a in args.spec_prox_alphas.split(",")]
        with clock() as cs:
            sp = baseline_curve(kern, a_sp, lam, Delta, iters=args.baseline_iters, seed=0, prox=_spec_prox_L2)
        per_alpha_sp = cs.cpu / len(a_sp)
        per_alpha_base = cb.cpu / len(alphas)
        for a, (e_sp, s_sp) in zip(a_sp, sp):
            line = f"spec recipe with its grid prox, run at alpha={a:g} (seed 0): E_test {e_sp:.6f} (recipe sd/√10 {s_sp:.1e})"
            if a in alphas:
                j = alphas.index(a)
                # the first α of a seed's run draws the same fresh samples in both runs
                same = j == 0 and a_sp.index(a) == 0
                line += (f"; the recipe with the library's prox, seed 0, same alpha: {E_runs[0, j]:.6f} "
                         + ("(the same samples: the two proxes found the same minima if these agree)" if same else
                            "(other samples: agree within the recipe's SE)"))
            print(line)
        print(f"spec recipe with its grid prox: CPU {per_alpha_sp:.0f} s per alpha (measured at "
              f"{args.spec_prox_alphas}), {per_alpha_sp / per_alpha_base:.1f}x the recipe with the library's prox "
              f"({per_alpha_base:.1f} s per alpha); its estimator and so its SE are the same recipe's, so at equal SE: "
              f"RATIO (spec recipe as written, measured per alpha) = {per_alpha_sp * len(alphas) / cpu_eq:.0f}x")

    if not args.skip_L:
        pl = args.points_L
        print(f"\ncost of one fixed point vs L (softmax, spiked nu=2, alpha=4, lam=0.1, {pl} x 4 Sobol, from the "
              "informed start, error estimate included):")
        for L in (2, 3, 5):
            with clock() as ck:
                rs_kernels("softmax", L)
            with clock() as cf:
                fp = rs_problem("softmax", "spiked", 2.0, L, points=pl, replicates=4).learning_curve([4.0], lam, Delta)[0]
            print(f"  L={L}: CPU {cf.cpu:.2f} s, wall {cf.wall:.2f} s ({fp.evaluations} maps, prox "
                  f"{100 * fp.prox_seconds / fp.seconds:.0f}% of wall), E_test={fp.E_test:.4f} ± "
                  f"{fp.E_test_error:.1e}; kernel generation CPU {ck.cpu:.1f} s")
        with clock() as cw:
            fps = rs_problem("softmax", "spiked", 2.0, 2, points=pl, replicates=4).learning_curve(
                [alphas[i] for i in order], lam, Delta)
        print(f"  L=2 along the curve at {pl} x 4 (warm-started from the previous alpha): CPU "
              f"{cw.cpu / len(alphas):.2f} s per fixed point with its error estimate (first, cold one "
              f"{fps[0].seconds:.2f} s wall); RMS SE {_rms([f.E_test_error for f in fps]):.1e}")
        print(_load(), "(end)")


if __name__ == "__main__":
    main()
