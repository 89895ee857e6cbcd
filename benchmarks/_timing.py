"""The one timing helper of the benchmarks: wall times of repeated calls, with an optional device sync.

Benchmarks print ratios against a baseline measured in the same run (README "Standards"); they time
with :func:`timed` (every repeat) or :func:`best_of` (the minimum, the usual estimate of a call's cost
on a noisy machine).  Run a benchmark from the checkout root: ``python benchmarks/bench_X.py``.
"""
from __future__ import annotations

import time
from typing import Callable

__all__ = ["timed", "best_of"]


def timed(fn: Callable, repeats: int = 1, *, sync: Callable | None = None) -> tuple[list, object]:
    """Wall time of each of ``repeats`` calls of ``fn()`` (``sync()`` before and after each, e.g.
    ``torch.cuda.synchronize``), and the last output."""
    ts, out = [], None
    for _ in range(int(repeats)):
        if sync is not None:
            sync()
        t0 = time.perf_counter()
        out = fn()
        if sync is not None:
            sync()
        ts.append(time.perf_counter() - t0)
    return ts, out


def best_of(fn: Callable, repeats: int = 1, *, sync: Callable | None = None) -> tuple[float, object]:
    """The best wall time over ``repeats`` calls of ``fn()``, and the last output."""
    ts, out = timed(fn, repeats, sync=sync)
    return min(ts), out
