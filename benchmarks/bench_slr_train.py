"""Benchmark of the finite-D ERM trainer (attnlimits.verify.slr.train, docs/slr.md §12).

1. Batched seeds against a loop over seeds: the same run (softmax, spiked L=2, ν=2, Δ=0.1,
   λ=0.1, L-BFGS from the informed start), CPU, one thread; ratio loop / batched.
2. float32 against float64 on the same data: time ratio and the gap in E_test (§6.1 at the
   learned overlaps) and overlaps.
3. Scaling in D at α = 10, L = 2 (D = 200 … 1600): seconds per objective+gradient evaluation,
   L-BFGS evaluations, wall and CPU time per run, peak resident memory (VmHWM); log-log slopes in
   D, extrapolated to the paper scale √(ND) = 10⁴ (D = 10⁴/√α, N = 10⁴√α).
Every timing line carries the load average (the machine is shared).

Usage: ``python benchmarks/bench_slr_train.py [--quick]``
"""
from __future__ import annotations

import argparse
import math
import os

import numpy as np
import torch

from attnlimits.verify.slr.erm_solver import StackedObjective
from attnlimits.verify.slr.train import memory_needed, train_erm
from _timing import clock, ratio_line, timed  # benchmarks/_timing.py (this script's folder is on sys.path)

SET = dict(model="spiked", nu=2.0, L=2, lam=0.1, delta=0.1, device="cpu", test=False)

_MMM = dict(sep=" / ", labels=True, unit="s")  # "min … / median … / max … s"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    repeats = 1 if args.quick else 3
    D, S, alpha = (100, 4, 4.0) if args.quick else (200, 4, 4.0)

    print(f"# 1. batched vs looped seeds: D={D}, α={alpha}, {S} seeds, L-BFGS, 1 thread, {repeats} repeats "
          f"({_load()})")
    tb, rb = timed(lambda: train_erm("softmax", alpha=alpha, D=D, seeds=S, **SET), repeats)
    tl, rl = timed(lambda: train_erm("softmax", alpha=alpha, D=D, seeds=S, batched=False, **SET), repeats)
    print(f"batched: {tb.mmm(**_MMM)}; loop: {tl.mmm(**_MMM)}; "
          + ratio_line("ratio loop/batched (median) ", tl, tb, unit="") + f" ({_load()})")
    dev = max(abs(a["m_k"] - b["m_k"]) for a, b in zip(rb.seeds, rl.seeds))
    print(f"largest |Δm_k| batched vs loop: {dev:.2e}; iterations per seed {[r['iterations'] for r in rb.seeds]}")

    print(f"\n# 2. float32 vs float64 (same data, same start) ({_load()})")
    tested = {k: v for k, v in SET.items() if k != "test"}
    train_erm("softmax", alpha=alpha, D=20, seeds=1, n_test=100, **tested)  # warm-up: generated kernels
    t64, r64 = timed(lambda: train_erm("softmax", alpha=alpha, D=D, seeds=2, n_test=4000, **tested), repeats)
    t32, r32 = timed(lambda: train_erm("softmax", alpha=alpha, D=D, seeds=2, n_test=4000, dtype="float32",
                                        tol_grad=1e-4, **tested), repeats)
    print(f"float64: {t64.mmm(**_MMM)}; float32: {t32.mmm(**_MMM)}; "
          + ratio_line("ratio 64/32 ", t64, t32, unit="") + f" ({_load()})")
    for a, b in zip(r64.seeds, r32.seeds):
        print(f"  seed {a['seed_index']}: E_test(§6.1) {a['E_test_overlaps']:.5f} vs {b['E_test_overlaps']:.5f} "
              f"(gap {b['E_test_overlaps'] - a['E_test_overlaps']:+.1e}); m_k gap {b['m_k'] - a['m_k']:+.1e}, "
              f"q_k gap {b['q_k'] - a['q_k']:+.1e}; float32 status {b['status']} ‖g‖ {b['grad_norm']:.1e}")

    print(f"\n# 3. scaling in D at α=10, L=2 (one seed, informed L-BFGS): time and memory per run ({_load()})")
    Ds = (100, 200, 400) if args.quick else (200, 400, 800, 1600)
    a10 = 10.0
    rows = []
    base_rss = _vm_hwm()
    for Dv in Ds:
        N = int(a10 * Dv)
        X = torch.randn(1, N, 2, Dv, dtype=torch.float64)
        y = torch.randn(1, N, dtype=torch.float64)
        prob = StackedObjective("softmax", Dv, 0.1, [(X, y)], False, None, torch.float64, torch.device("cpu"), N)
        th = torch.randn(1, 2 * Dv, dtype=torch.float64)
        prob.value_and_grad(th)
        te, _ = timed(lambda p=prob: p.value_and_grad(th), 5)
        del X, y, prob
        with clock() as c:
            r = train_erm("softmax", alpha=a10, D=Dv, seeds=1, **SET)
        wall, cpu = c.wall, c.cpu
        hwm = _vm_hwm()
        s0 = r.seeds[0]
        rows.append((Dv, N, te.min, s0["iterations"], s0["evals"], wall, cpu, hwm))
        print(f"D={Dv}: N={N}, eval {te.min * 1e3:.1f} ms, L-BFGS {s0['iterations']} it / {s0['evals']} evals "
              f"({s0['status']}), run {wall:.1f} s wall / {cpu:.1f} s CPU, data {memory_needed(1, N, 2, Dv) / 2**20:.0f} MiB, "
              f"peak RSS {hwm / 2**20:.0f} MiB ({_load()})", flush=True)
    lD = np.log([r[0] for r in rows])
    p_eval = float(np.polyfit(lD, np.log([r[2] for r in rows]), 1)[0])
    p_run = float(np.polyfit(lD, np.log([r[6] for r in rows]), 1)[0])
    p_it = float(np.polyfit(lD, np.log([r[4] for r in rows]), 1)[0])
    extra = np.array([r[7] - base_rss for r in rows], dtype=float)
    p_mem = float(np.polyfit(lD[extra > 0], np.log(extra[extra > 0]), 1)[0]) if (extra > 0).sum() >= 2 else math.nan
    print(f"fitted log-log slopes in D (α fixed, N ∝ D): time per evaluation D^{p_eval:.2f}, evaluations per run "
          f"D^{p_it:.2f}, CPU time per run D^{p_run:.2f}, peak RSS above the {base_rss / 2**20:.0f} MiB before the scan D^{p_mem:.2f} "
          f"(data ∝ N·D ∝ D^2; the peak is cumulative, the D run in increasing order)")
    last = rows[-1]
    for a in (4.0, 10.0, 20.0):
        Dp = int(round(1e4 / math.sqrt(a)))
        Np = int(a * Dp)
        for L in (2, 3):
            sz = Np * L * Dp
            ratio_eval = sz / (last[1] * 2 * last[0])
            t_eval = last[2] * ratio_eval ** (p_eval / 2)  # p_eval is in D, the size N·L·D ∝ D² at fixed α
            msg = (f"paper scale α={a:g}, L={L}: D={Dp}, N={Np}: N·L·D·8 B = {sz * 8 / 2**30:.2f} GiB per seed "
                   f"(with buffers {memory_needed(1, Np, L, Dp) / 2**30:.2f} GiB); per evaluation ≈{t_eval:.2f} s")
            if a == 10.0 and L == 2:
                t_run = last[6] * (Dp / last[0]) ** p_run
                msg += f"; one L-BFGS run ≈{t_run / 60:.0f} min CPU (D^{p_run:.2f} from D={last[0]}, 1 thread)"
            print(msg)


def _load():
    return "load %.2f %.2f %.2f" % os.getloadavg()


def _vm_hwm():
    """Peak resident memory of this process (bytes, /proc/self/status VmHWM)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


if __name__ == "__main__":
    main()
