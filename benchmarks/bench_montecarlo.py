"""Benchmark of the Monte Carlo simulators of :mod:`attnlimits.verify.rmt_montecarlo` (spec §10).

(a) A grid of 50 ridge parameters γ from ONE eigendecomposition of G = ΦᵀΦ/n per draw versus one
    Cholesky factorisation + solve per γ: wall time of both (solver only, on the same G; and the
    whole simulation), their ratio and the largest difference of the error curves.
(b) Throughput of batched draws (stacked matmul/eigh) versus one draw at a time: draws per second
    both ways and the ratio; the results must agree to round-off.
(c) The p×p route (eigendecomposition of ΦΦᵀ/n, the default when p < n) versus the n×n route
    (of G = ΦᵀΦ/n) for the error curve, on the same Φ and for the whole simulation: the two sides
    alternate within each repeat, same thread setting; min/median/max over repeats, the ratio of
    the medians and the largest difference of the curves.

Usage::

    python benchmarks/bench_montecarlo.py --n 1000 --p 500 --draws 8 --device auto
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
import sympy as sp
import torch

from attnlimits.verify._torchutil import resolve_device
from attnlimits.verify.rmt_montecarlo import (
    attention_kernel,
    draw_tokens,
    probe_error_curve,
    probe_error_curve_features,
    probe_errors_cholesky,
    simulate_attention,
)
from _timing import best_of  # benchmarks/_timing.py (this script's folder is on sys.path)


def _sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def _timed(fn, dev, repeats: int = 1):
    """Best wall time over ``repeats`` calls (device synchronised), and the last output."""
    return best_of(fn, repeats, sync=lambda: _sync(dev))


def _alternate(fa, fb, dev, repeats: int):
    """Time ``fa`` and ``fb`` alternately ``repeats`` times; lists of wall times and last outputs."""
    ta, tb, oa, ob = [], [], None, None
    for _ in range(repeats):
        for fn, ts, which in ((fa, ta, "a"), (fb, tb, "b")):
            _sync(dev)
            t0 = time.perf_counter()
            out = fn()
            _sync(dev)
            ts.append(time.perf_counter() - t0)
            if which == "a":
                oa = out
            else:
                ob = out
    return ta, tb, oa, ob


def _mmm(ts) -> str:
    return f"min {np.min(ts) * 1e3:9.1f}  median {np.median(ts) * 1e3:9.1f}  max {np.max(ts) * 1e3:9.1f} ms"


def _routes(f, n, p, gammas, Phi, y, mu, settings, args, dev) -> dict:
    """Section (c): p×p versus n×n route."""
    r = args.route_repeats
    print(f"\n(c) error curve, p×p route vs n×n route ({r} alternating repeats, threads={torch.get_num_threads()}):")
    ta, tb, ea, eb = _alternate(
        lambda: probe_error_curve_features(Phi, y, gammas, route="pxp"),
        lambda: probe_error_curve_features(Phi, y, gammas, route="nxn"), dev, r)
    d_curve = float((ea - eb).abs().max())
    print(f"    one Φ, p×p (ΦΦᵀ/n)     : {_mmm(ta)}")
    print(f"    one Φ, n×n (ΦᵀΦ/n)     : {_mmm(tb)}")
    print(f"    ratio n×n/p×p (median) : {np.median(tb) / np.median(ta):9.2f}x    max |ΔE| {d_curve:.1e}")
    kw = dict(mu=mu, settings=settings, draws=args.draws, seed=args.seed, device=dev)
    sa, sb, ra, rb = _alternate(
        lambda: simulate_attention(f, n, p, gammas, route="pxp", **kw),
        lambda: simulate_attention(f, n, p, gammas, route="nxn", **kw), dev, max(1, r // 2))
    d_sim = max(float(np.max(np.abs(ra.errors["aligned"] - rb.errors["aligned"]))),
                float(np.max(np.abs(ra.ridge - rb.ridge))))
    print(f"    whole run, p×p         : {_mmm(sa)}")
    print(f"    whole run, n×n         : {_mmm(sb)}")
    print(f"    ratio n×n/p×p (median) : {np.median(sb) / np.median(sa):9.2f}x    max |ΔE| {d_sim:.1e}")
    return {"route_curve_pxp": ta, "route_curve_nxn": tb, "route_curve_diff": d_curve,
            "route_sim_pxp": sa, "route_sim_nxn": sb, "route_sim_diff": d_sim}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="tokens n")
    ap.add_argument("--p", type=int, default=None, help="embedding dimension p (default n/2)")
    ap.add_argument("--draws", type=int, default=8, help="independent draws")
    ap.add_argument("--gammas", type=int, default=50, help="size of the γ grid")
    ap.add_argument("--device", default="auto", help="auto | cpu | cuda")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch.set_num_threads (default: torch's choice); 1 is steadier on a shared host")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=2, help="timings are the best of this many")
    ap.add_argument("--route-repeats", type=int, default=5,
                    help="repeats of (c), each side alternating (min/median/max are printed)")
    ap.add_argument("--only-routes", action="store_true", help="run section (c) only")
    args = ap.parse_args(argv)
    n = args.n
    p = args.p if args.p is not None else n // 2
    dev = resolve_device(args.device)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    t = sp.Symbol("t")
    f = sp.tanh(t)
    gammas = np.geomspace(1e-3, 1e2, args.gammas)
    mu = [1.0]
    settings = {"aligned": {"wk": [1.0], "wq": [1.0]}}
    print(f"device={dev}  torch={torch.__version__}  threads={torch.get_num_threads()}  "
          f"n={n} p={p} c={p / n:.3g} draws={args.draws} |gamma grid|={len(gammas)}  f=tanh")
    if hasattr(os, "getloadavg"):
        print("load average (1/5/15 min): %.2f %.2f %.2f  (timings are noisy on a loaded host)"
              % os.getloadavg())

    # warm-up (library loading, allocator)
    simulate_attention(f, min(n, 200), min(p, 100), gammas, mu=mu, draws=1, device=dev)

    X, y = draw_tokens(n, p, mu=mu, seed=args.seed, index=0, device=dev)
    K, _ = attention_kernel(X, f, settings["aligned"], diagonal="zero")
    Phi = X @ K
    G = Phi.T @ Phi / n
    routes = _routes(f, n, p, gammas, Phi, y, mu, settings, args, dev)
    if args.only_routes:
        return routes

    # ---- (a) solver only, on one draw's G -------------------------------------------------
    t_eig, e_eig = _timed(lambda: probe_error_curve(G, y, gammas, solver="eigh"), dev, repeats=3)
    t_chol, e_chol = _timed(lambda: probe_error_curve(G, y, gammas, solver="cholesky"), dev,
                            repeats=3)
    diff_solver = float((e_eig - e_chol).abs().max())
    print("\n(a) 50-point gamma grid on one G (n×n):")
    print(f"    one eigendecomposition : {t_eig * 1e3:9.1f} ms")
    print(f"    Cholesky per gamma     : {t_chol * 1e3:9.1f} ms")
    print(f"    ratio chol/eig         : {t_chol / t_eig:9.2f}x")
    print(f"    max |E_eig - E_chol|   : {diff_solver:.2e}")

    # ---- (a') whole simulation, all draws, attention + ridge -----------------------------
    kw = dict(mu=mu, settings=settings, draws=args.draws, seed=args.seed, device=dev)
    t_sim_eig, r_eig = _timed(lambda: simulate_attention(f, n, p, gammas, **kw),
                           dev, repeats=args.repeats)
    t_sim_chol, r_chol = _timed(lambda: probe_errors_cholesky(f, n, p, gammas, **kw),
                           dev, repeats=args.repeats)
    diff_sim = max(
        float(np.max(np.abs(r_eig.errors["aligned"] - r_chol.errors["aligned"]))),
        float(np.max(np.abs(r_eig.ridge - r_chol.ridge))),
    )
    print(f"    whole run ({args.draws} draws, attention + ridge):")
    print(f"    eigendecomposition     : {t_sim_eig:9.2f} s")
    print(f"    Cholesky per gamma     : {t_sim_chol:9.2f} s")
    print(f"    ratio chol/eig         : {t_sim_chol / t_sim_eig:9.2f}x")
    print(f"    max |difference|       : {diff_sim:.2e}")

    # ---- (b) batched draws vs one draw at a time ------------------------------------------
    t_one, r_one = _timed(lambda: simulate_attention(f, n, p, gammas, batch=1, **kw),
                           dev, repeats=args.repeats)
    t_all, r_all = _timed(lambda: simulate_attention(f, n, p, gammas, batch=None, **kw),
                           dev, repeats=args.repeats)
    diff_batch = max(
        float(np.max(np.abs(r_one.errors["aligned"] - r_all.errors["aligned"]))),
        float(np.max(np.abs(r_one.ridge - r_all.ridge))),
    )
    rate_one, rate_all = args.draws / t_one, args.draws / t_all
    print(f"\n(b) throughput, {args.draws} draws (batch used: {r_all.meta['batch']}):")
    print(f"    one draw at a time     : {rate_one:9.2f} draws/s  ({t_one:.2f} s)")
    print(f"    batched                : {rate_all:9.2f} draws/s  ({t_all:.2f} s)")
    print(f"    ratio batched/single   : {rate_all / rate_one:9.2f}x")
    print(f"    max |difference|       : {diff_batch:.2e}")
    est = r_all.estimate("aligned")
    print(f"\n    E_att(gamma=1e-3 / 1e2, aligned): {est.mean[0]:.4f}±{est.se[0]:.4f}"
          f" / {est.mean[-1]:.4f}±{est.se[-1]:.4f}")
    return {
        **routes,
        "t_eig": t_eig, "t_chol": t_chol, "diff_solver": diff_solver,
        "t_sim_eig": t_sim_eig, "t_sim_chol": t_sim_chol, "diff_sim": diff_sim,
        "rate_one": rate_one, "rate_all": rate_all, "diff_batch": diff_batch,
    }


if __name__ == "__main__":
    main()
