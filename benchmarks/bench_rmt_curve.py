"""Benchmark: a 200-point γ curve of Ē (attention_rmt) — generated solver vs a plain baseline.

Generated solver: sweep from large γ with warm-started Newton (symbolic Jacobian) and the exact
derivative dȳ/dγ from the implicit-function theorem.
Baseline (measured in the same run): plain damped iteration (damping ½, from (1/γ, 0, 0), stop at
L1 change < 1e-13(1 + |A11|)) at γ and γ(1 ± h), and Ē by the central difference of ȳ — the way
such curves are usually computed by hand.  Both use the same generated kernels for G(x) and ȳ,
so the comparison is algorithmic.

Usage: python benchmarks/bench_rmt_curve.py [--points 200] [--c 0.5] [--snr 1] [--repeats 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from derivations import attention_rmt as R
from numeric import compile_model

A1, NU = 0.6057055096021588, 0.3942944903978412  # tanh (see `attnlimits hermite --activation tanh`)


def baseline_ybar(mod, c, gamma, geom, nodes):
    x = [1 / gamma, 0.0, 0.0]
    p = [c, gamma, A1, NU, 0.0]
    for _ in range(100000):
        gx = mod.rmt_bulk_update(*x, *p, _nodes=nodes)
        change = sum(abs(a - b) for a, b in zip(gx, x))
        x = [0.5 * a + 0.5 * b for a, b in zip(x, gx)]
        if change < 1e-13 * (1 + abs(x[0])):
            break
    obs = mod.rmt_bulk_observables(*x, *p, _nodes=nodes)
    m, Gam, Om, r = geom
    return mod.rmt_outer(*obs[:6], *[0.0] * 6, c, gamma, A1, m, Gam, Om, r)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--c", type=float, default=0.5)
    ap.add_argument("--snr", type=float, default=1.0)
    ap.add_argument("--h", type=float, default=1e-5, help="relative step of the central difference")
    ap.add_argument("--repeats", type=int, default=3, help="timings are the best of this many runs")
    args = ap.parse_args()
    mod = compile_model(R.model, "numpy")
    gammas = np.logspace(-3, 1, args.points)
    kw = dict(a1=A1, nu=NU, snr=args.snr, wk=[1], wq=[1])

    mod.curve(args.c, list(gammas[:3]), error_estimate=False, **kw)  # warm-up (caches)
    t_gen = np.inf
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        recs = mod.curve(args.c, list(gammas), error_estimate=False, **kw)
        t_gen = min(t_gen, time.perf_counter() - t0)
    E_gen = np.array([r["E_attention"] for r in recs])

    geom = mod.geometry(args.snr, [1], [1])
    nodes = mod.law_nodes(args.c, 3000)
    t_base = np.inf
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        E_base = []
        for g in gammas:
            hp, hm = g * (1 + args.h), g * (1 - args.h)
            yp, ym = baseline_ybar(mod, args.c, hp, geom, nodes), baseline_ybar(mod, args.c, hm, geom, nodes)
            E_base.append(-g**2 * (yp - ym) / (hp - hm))
        t_base = min(t_base, time.perf_counter() - t0)
    diff = np.max(np.abs(E_gen - np.array(E_base)))
    print(f"points={args.points} c={args.c} snr={args.snr} (tanh, aligned unit weights); best of {args.repeats}")
    print(f"generated (warm Newton + implicit derivative): {t_gen:.3f} s")
    print(f"baseline (damped iteration + central difference): {t_base:.3f} s")
    print(f"speed-up: {t_base / t_gen:.1f}x   max |dE| = {diff:.2e}")


if __name__ == "__main__":
    main()
