"""Benchmark of the Monte Carlo simulators of :mod:`attnlimits.verify.rmt.montecarlo` (docs/attention_rmt.md §10).

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

import numpy as np
import sympy as sp
import torch

from attnlimits.verify.torch_device import resolve_device
from attnlimits.verify.rmt.montecarlo import (
    attention_kernel,
    draw_tokens,
    probe_error_curve,
    probe_error_curve_features,
    probe_errors_cholesky,
    simulate_attention,
)
from _timing import alternate, ratio_line, timed  # benchmarks/_timing.py (this script's folder is on sys.path)


_MS = dict(spec="9.1f", sep="  ", scale=1e3, labels=True, unit="ms")  # "min … median … max … ms"


def _sync(dev: torch.device):
    """The device sync of the timings (None on the CPU)."""
    return (lambda: torch.cuda.synchronize(dev)) if dev.type == "cuda" else None


def _routes(f, n, p, gammas, Phi, y, mu, settings, args, dev) -> dict:
    """Section (c): p×p versus n×n route."""
    r = args.route_repeats
    print(f"\n(c) error curve, p×p route vs n×n route ({r} alternating repeats, threads={torch.get_num_threads()}):")
    (ta, tb), (ea, eb) = alternate(
        [lambda: probe_error_curve_features(Phi, y, gammas, route="pxp"),
         lambda: probe_error_curve_features(Phi, y, gammas, route="nxn")], r, sync=_sync(dev))
    d_curve = float((ea - eb).abs().max())
    print(f"    one Φ, p×p (ΦΦᵀ/n)     : {ta.mmm(**_MS)}")
    print(f"    one Φ, n×n (ΦᵀΦ/n)     : {tb.mmm(**_MS)}")
    print(ratio_line("    ratio n×n/p×p (median) : ", tb, ta, spec="9.2f") + f"    max |ΔE| {d_curve:.1e}")
    kw = dict(mu=mu, settings=settings, draws=args.draws, seed=args.seed, device=dev)
    (sa, sb), (ra, rb) = alternate(
        [lambda: simulate_attention(f, n, p, gammas, route="pxp", **kw),
         lambda: simulate_attention(f, n, p, gammas, route="nxn", **kw)], max(1, r // 2), sync=_sync(dev))
    d_sim = max(float(np.max(np.abs(ra.errors["aligned"] - rb.errors["aligned"]))),
                float(np.max(np.abs(ra.ridge - rb.ridge))))
    print(f"    whole run, p×p         : {sa.mmm(**_MS)}")
    print(f"    whole run, n×n         : {sb.mmm(**_MS)}")
    print(ratio_line("    ratio n×n/p×p (median) : ", sb, sa, spec="9.2f") + f"    max |ΔE| {d_sim:.1e}")
    return {"route_curve_pxp": list(ta.walls), "route_curve_nxn": list(tb.walls), "route_curve_diff": d_curve,
            "route_sim_pxp": list(sa.walls), "route_sim_nxn": list(sb.walls), "route_sim_diff": d_sim}


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
    # timings here: the best (min) of the repeats, device synchronised
    t_eig, e_eig = timed(lambda: probe_error_curve(G, y, gammas, solver="eigh"), 3, sync=_sync(dev))
    t_chol, e_chol = timed(lambda: probe_error_curve(G, y, gammas, solver="cholesky"), 3, sync=_sync(dev))
    diff_solver = float((e_eig - e_chol).abs().max())
    print("\n(a) 50-point gamma grid on one G (n×n):")
    print(f"    one eigendecomposition : {t_eig.min * 1e3:9.1f} ms")
    print(f"    Cholesky per gamma     : {t_chol.min * 1e3:9.1f} ms")
    print(ratio_line("    ratio chol/eig         : ", t_chol, t_eig, stat="min", spec="9.2f"))
    print(f"    max |E_eig - E_chol|   : {diff_solver:.2e}")

    # ---- (a') whole simulation, all draws, attention + ridge -----------------------------
    kw = dict(mu=mu, settings=settings, draws=args.draws, seed=args.seed, device=dev)
    t_sim_eig, r_eig = timed(lambda: simulate_attention(f, n, p, gammas, **kw), args.repeats, sync=_sync(dev))
    t_sim_chol, r_chol = timed(lambda: probe_errors_cholesky(f, n, p, gammas, **kw), args.repeats,
                               sync=_sync(dev))
    diff_sim = max(
        float(np.max(np.abs(r_eig.errors["aligned"] - r_chol.errors["aligned"]))),
        float(np.max(np.abs(r_eig.ridge - r_chol.ridge))),
    )
    print(f"    whole run ({args.draws} draws, attention + ridge):")
    print(f"    eigendecomposition     : {t_sim_eig.min:9.2f} s")
    print(f"    Cholesky per gamma     : {t_sim_chol.min:9.2f} s")
    print(ratio_line("    ratio chol/eig         : ", t_sim_chol, t_sim_eig, stat="min", spec="9.2f"))
    print(f"    max |difference|       : {diff_sim:.2e}")

    # ---- (b) batched draws vs one draw at a time ------------------------------------------
    t_one, r_one = timed(lambda: simulate_attention(f, n, p, gammas, batch=1, **kw), args.repeats,
                         sync=_sync(dev))
    t_all, r_all = timed(lambda: simulate_attention(f, n, p, gammas, batch=None, **kw), args.repeats,
                         sync=_sync(dev))
    diff_batch = max(
        float(np.max(np.abs(r_one.errors["aligned"] - r_all.errors["aligned"]))),
        float(np.max(np.abs(r_one.ridge - r_all.ridge))),
    )
    rate_one, rate_all = args.draws / t_one.min, args.draws / t_all.min
    print(f"\n(b) throughput, {args.draws} draws (batch used: {r_all.meta['batch']}):")
    print(f"    one draw at a time     : {rate_one:9.2f} draws/s  ({t_one.min:.2f} s)")
    print(f"    batched                : {rate_all:9.2f} draws/s  ({t_all.min:.2f} s)")
    print(ratio_line("    ratio batched/single   : ", t_one, t_all, stat="min", spec="9.2f"))  # = rate ratio
    print(f"    max |difference|       : {diff_batch:.2e}")
    est = r_all.estimate("aligned")
    print(f"\n    E_att(gamma=1e-3 / 1e2, aligned): {est.mean[0]:.4f}±{est.se[0]:.4f}"
          f" / {est.mean[-1]:.4f}±{est.se[-1]:.4f}")
    return {
        **routes,
        "t_eig": t_eig.min, "t_chol": t_chol.min, "diff_solver": diff_solver,
        "t_sim_eig": t_sim_eig.min, "t_sim_chol": t_sim_chol.min, "diff_sim": diff_sim,
        "rate_one": rate_one, "rate_all": rate_all, "diff_batch": diff_batch,
    }


if __name__ == "__main__":
    main()
