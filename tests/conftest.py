"""Shared test configuration.

Hypothesis profiles
-------------------
``ci``       derandomised, no example database; selected automatically when ``CI`` is set.
``dev``      a handful of examples, for quick local runs (the default outside CI).
``nightly``  thousands of examples; select with ``ATTNLIMITS_HYPOTHESIS_PROFILE=nightly``.
"""
from __future__ import annotations

import os

import mpmath
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile(
    "dev", max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "nightly", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
_profile = os.environ.get("ATTNLIMITS_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
settings.load_profile(_profile)

# The thread setting the command line uses (1 on small machines; ATTNLIMITS_THREADS overrides):
# threaded BLAS/torch on a busy 2-core machine is many times slower (benchmarks/bench_threads.py).
from attnlimits.numeric.threads import apply_threads, resolve_threads  # noqa: E402

apply_threads(resolve_threads())
# and the allocator setting it uses (freed temporaries reused; numeric/allocator.py)
from attnlimits.numeric.allocator import tune_allocator  # noqa: E402

tune_allocator()


@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    """Every test starts and ends at mpmath's default precision (15 digits)."""
    mpmath.mp.dps = 15
    yield
    mpmath.mp.dps = 15


@pytest.fixture(autouse=True)
def _restore_sigint_handler(request):
    """Every test ends with the SIGINT handler it started with.  A test that leaves another one (an
    in-process CLI entry point, an event loop) would swallow the Ctrl-C of a later test (seen in
    ``test_ctrl_c_in_process_keeps_finished_points``): restore it and say which test did it."""
    import signal
    import warnings

    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        warnings.warn(f"{request.node.nodeid} left SIGINT handler {after!r} (was {before!r}); restored",
                      RuntimeWarning, stacklevel=1)
