"""Thread control for BLAS (through threadpoolctl) and PyTorch, as a feature.

On small or shared machines, threaded BLAS and torch kernels are often many times *slower* than
one thread (measured on a 2-core machine with a second CPU-bound process: a bare n = 1000 ``eigh``
took 15.5 s with 2 threads and 0.28 s with 1).  attnlimits therefore sets the thread count of
every process it runs, and records it in its outputs:

- ``--threads N`` on every command, else ``$ATTNLIMITS_THREADS``, else :func:`default_threads`;
- :func:`apply_threads` sets ``OMP_NUM_THREADS`` and friends (for libraries loaded later, torch
  included), limits the BLAS pools already loaded (threadpoolctl), and calls
  ``torch.set_num_threads`` when torch is already imported;
- sweep workers call it at start-up with 1 thread each.
"""
from __future__ import annotations

import os
import sys

__all__ = ["apply_threads", "default_threads", "resolve_threads", "current_threads", "ENV_VAR", "THREAD_VARIABLES"]

ENV_VAR = "ATTNLIMITS_THREADS"
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
         "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS")
_APPLIED: dict = {"threads": None}
_LIMITER = []  # keeps the threadpoolctl context alive


def default_threads() -> int:
    """One thread on machines with at most 4 cores (where a second busy process makes threaded
    BLAS/torch 9–45× slower), else half the cores, at most 8."""
    n = os.cpu_count() or 1
    return 1 if n <= 4 else min(8, n // 2)


def resolve_threads(value=None) -> int:
    """The thread count to use: ``value`` (an int or text), else ``$ATTNLIMITS_THREADS``, else the default."""
    src = "--threads"
    if value is None:
        value, src = os.environ.get(ENV_VAR), ENV_VAR
    if value is None or str(value).strip() == "":
        return default_threads()
    try:
        n = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{src} must be a positive integer, got {value!r}") from None
    if not 1 <= n <= 1024:
        raise ValueError(f"{src} must be between 1 and 1024, got {n}")
    return n


def apply_threads(n: int) -> int:
    """Use ``n`` threads in BLAS and torch for the rest of this process; returns ``n``."""
    n = int(n)
    for var in THREAD_VARIABLES:
        os.environ[var] = str(n)
    try:
        from threadpoolctl import threadpool_limits

        _LIMITER[:] = [threadpool_limits(limits=n)]
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        pass
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(n)
    _APPLIED["threads"] = n
    return n


def current_threads() -> int | None:
    """The count set by :func:`apply_threads` in this process (``None`` if never called)."""
    return _APPLIED["threads"]
