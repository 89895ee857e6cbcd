"""The one time guard of :mod:`symbolic` (SIGALRM-based), for SymPy/mpmath calls that can hang.

:func:`with_time_limit` runs a callable under an interval timer and reports whether it finished.
Once the budget is spent the alarm repeats until the call stops (a ``Timeout`` raised where Python ignores
exceptions, such as a garbage-collector callback, is lost; the next one is not).  It nests: an outer guard's
timer is saved and restored, and an inner call that would outlive the
outer deadline is either skipped (``skippable``) or run under the outer deadline alone.
Signals reach only the main thread; elsewhere skippable calls are skipped and the rest run
unguarded (so work must also be bounded by other means, as :mod:`attnlimits.symbolic.activations` does
for mpmath evaluations).
"""
from __future__ import annotations

import signal
import threading
import time
from typing import Any, Callable

__all__ = ["Timeout", "with_time_limit"]


#: seconds between repeated alarms once a guarded call is past its budget
_REARM = 0.05


class Timeout(BaseException):
    """A guarded call ran past its budget (a BaseException, so that SymPy cannot swallow it)."""


def with_time_limit(fn: Callable[[], Any], seconds: float, skippable: bool = False) -> tuple[bool, Any]:
    """Run ``fn()`` with a SIGALRM time limit; return ``(finished, result)``.

    Parameters
    ----------
    fn : callable
        Called without arguments.
    seconds : float
        Budget.
    skippable : bool
        Without a usable timer (not the main thread, no ``setitimer``, or an outer timer due
        sooner), skip the call and return ``(False, None)``; otherwise it runs unguarded.

    Returns
    -------
    (bool, object)
        ``(True, fn())`` when it finished, ``(False, None)`` on timeout or skip. An outer interval
        timer, if any, is restored afterwards (with the time spent deducted).
    """
    unguarded = threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer")
    old_remaining = old_interval = 0.0
    if not unguarded:
        old_remaining, old_interval = signal.getitimer(signal.ITIMER_REAL)
        unguarded = bool(old_remaining) and old_remaining < seconds
    if unguarded:
        return (False, None) if skippable else (True, fn())

    def _handler(signum, frame):  # pragma: no cover - only runs on timeout
        # re-armed before raising: a Timeout raised inside a callback whose exceptions Python ignores (a
        # garbage-collector callback, a __del__) is lost, and the guarded call would then run on unguarded;
        # the next alarm, _REARM seconds later, raises again until one reaches this frame
        signal.setitimer(signal.ITIMER_REAL, _REARM)
        raise Timeout()

    start = time.monotonic()
    old_handler = signal.signal(signal.SIGALRM, _handler)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            result = fn()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Timeout:
        return False, None
    finally:
        signal.signal(signal.SIGALRM, old_handler)
        if old_remaining:
            left = max(old_remaining - (time.monotonic() - start), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, old_interval)
    return True, result
