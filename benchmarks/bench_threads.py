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
import statistics
import subprocess
import sys
import time

WORK = {
    "eigh": "import numpy as np; r=np.random.default_rng(0); a=r.standard_normal((1000,1000)); a=a+a.T\n"
            "t=time.perf_counter(); np.linalg.eigh(a); dt=time.perf_counter()-t",
    "torch-eigh": "import torch; g=torch.Generator().manual_seed(0); a=torch.randn(1000,1000,generator=g,"
                  "dtype=torch.float64); a=a+a.T\nt=time.perf_counter(); torch.linalg.eigh(a); dt=time.perf_counter()-t",
    "matmul": "import numpy as np; r=np.random.default_rng(0); a=r.standard_normal((1500,1500))\n"
              "t=time.perf_counter(); a@a; dt=time.perf_counter()-t",
}


def _time(work: str, threads: int) -> float:
    code = ("import time, sys\nsys.path.insert(0, %r)\nfrom attnlimits.numeric.threads import apply_threads\n"
            "apply_threads(%d)\n%s\nprint(dt)") % (os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                    threads, WORK[work])
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
                f = lambda v: f"{min(v):.3f}/{statistics.median(v):.3f}/{max(v):.3f}"  # noqa: E731
                print(f"{work:<11} {'yes' if load else 'no':<5} {f(one):>24} {f(many):>24} "
                      f"{statistics.median(many) / statistics.median(one):>6.2f}x")
        finally:
            if hog is not None:
                hog.kill()


if __name__ == "__main__":
    main()
