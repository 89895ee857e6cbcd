"""Thread setting on a small shared machine: 1 thread vs all cores, with and without a competing
CPU-bound process beside it (the case that made ``verify --quick`` 2.5× slower than stated).

Workloads, each timed in a fresh subprocess with the thread count set through attnlimits'
``attnlimits.numeric.threads.apply_threads`` (BLAS via threadpoolctl, torch via ``set_num_threads``):

- ``eigh``: numpy ``eigh`` of a 1000×1000 symmetric matrix (the RMT Monte Carlo's core);
- ``torch-eigh``: the same in torch float64;
- ``matmul``: numpy 1500×1500 matrix product.

The competing load is ``python -c 'while True: pass'`` on one core.  Prints min/median/max over
repeats and the ratio "all cores / 1 thread" (> 1 means one thread is faster).

Run: OMP_NUM_THREADS unset, ``python benchmarks/bench_threads.py [--repeats 5]``.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from _timing import Timing, ratio_line  # benchmarks/_timing.py (this script's folder is on sys.path)

HERE = os.path.dirname(os.path.abspath(__file__))
#: work -> (set-up, the timed statement)
WORK = {
    "eigh": ("import numpy as np; r=np.random.default_rng(0); a=r.standard_normal((1000,1000)); a=a+a.T",
             "np.linalg.eigh(a)"),
    "torch-eigh": ("import torch; g=torch.Generator().manual_seed(0); a=torch.randn(1000,1000,generator=g,"
                   "dtype=torch.float64); a=a+a.T", "torch.linalg.eigh(a)"),
    "matmul": ("import numpy as np; r=np.random.default_rng(0); a=r.standard_normal((1500,1500))", "a@a"),
}


def _time(work: str, threads: int) -> float:
    """Wall seconds of the work's statement in a fresh subprocess (timed there with ``_timing.clock``)."""
    setup, stmt = WORK[work]
    code = (f"import sys\nsys.path.insert(0, {HERE!r})\n"
            f"from attnlimits.numeric.threads import apply_threads\nfrom _timing import clock\n"
            f"apply_threads({threads:d})\n{setup}\nwith clock() as c:\n    {stmt}\nprint(c.wall)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--work", default="eigh,torch-eigh,matmul")
    args = ap.parse_args(argv)
    cores = os.cpu_count() or 1
    print(f"cores: {cores}; competing load: one busy-loop process; times in s (min/median/max of {args.repeats})")
    print(f"{'work':<11} {'load':<5} {'1 thread':>24} {f'{cores} threads':>24} {'ratio':>7}")
    for load in (False, True):
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if load else None
        try:
            time.sleep(0.5 if load else 0)
            for work in args.work.split(","):
                one, many = [], []
                for _ in range(args.repeats):  # the two settings alternate within the run
                    one.append(_time(work, 1))
                    many.append(_time(work, cores))
                one, many = Timing.of(one), Timing.of(many)
                print(f"{work:<11} {'yes' if load else 'no':<5} {one.mmm('.3f'):>24} {many.mmm('.3f'):>24} "
                      + ratio_line("", many, one, spec=">6.2f"))
        finally:
            if hog is not None:
                hog.kill()


if __name__ == "__main__":
    main()
