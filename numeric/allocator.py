"""Allocator tuning for the array-heavy solvers (glibc only), as a feature.

The generated NumPy kernels create one temporary array per operation.  glibc serves a request
above its mmap threshold by a fresh ``mmap`` and, below it, from the heap, whose free top it
returns to the system (``trim``) as soon as it exceeds the trim threshold; either way a temporary
of a few hundred KiB lands on pages the kernel must zero on first touch, and on a virtual machine
that costs far more than the arithmetic.  Measured on the 2-core CI-class machine (numpy 2.4, one
thread, 32768 doubles): ``1/(x*x)`` 376 µs → 23 µs, ``exp(x)`` 333 → 185 µs; the generated prox
objective with gradient and Hessian (softmax, L = 2) 23 → 6.9 ms per call (with the product form
of small integer powers in :mod:`attnlimits.symbolic.codegen`).

:func:`tune_allocator` raises both thresholds (``mallopt``) so that freed temporaries are reused:
blocks up to 32 MiB come from the heap and up to 256 MiB of free heap is kept.  The cost is a
process that keeps up to that much freed memory instead of returning it.  The command-line entry
point, the sweep workers and the test session call it; a Python user of :mod:`numeric` may call it
once at start-up.  ``ATTNLIMITS_MALLOC_TUNING=0`` turns it off; elsewhere than on glibc it does
nothing.  The numbers computed do not depend on it.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

__all__ = ["tune_allocator", "allocator_tuned", "ENV_VAR"]

ENV_VAR = "ATTNLIMITS_MALLOC_TUNING"
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's upper limit on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX)
TRIM_THRESHOLD = 256 << 20
_STATE = {"tuned": False}


def tune_allocator() -> bool:
    """Raise glibc's mmap and trim thresholds for this process; returns whether it was done."""
    if _STATE["tuned"]:
        return True
    if os.environ.get(ENV_VAR, "").strip() in ("0", "no", "false", "off") or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt): nothing to tune
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    ok = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    _STATE["tuned"] = ok
    return ok


def allocator_tuned() -> bool:
    """Whether :func:`tune_allocator` succeeded in this process."""
    return _STATE["tuned"]
