"""attnlimits.symbolic._timeguard: the SIGALRM time guard of SymPy/mpmath calls."""
from __future__ import annotations

import signal
import threading
import time

import pytest

from attnlimits.symbolic._timeguard import Timeout, with_time_limit

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")


def _spin(seconds):
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        pass
    return "done"


def test_a_call_within_its_budget_returns_its_result():
    assert with_time_limit(lambda: 42, 5.0) == (True, 42)
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0  # no timer left behind


def test_a_call_past_its_budget_stops_near_the_budget():
    t0 = time.monotonic()
    assert with_time_limit(lambda: _spin(10.0), 0.2) == (False, None)
    assert time.monotonic() - t0 < 2.0
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0


def test_a_swallowed_timeout_is_raised_again():
    """A Timeout lost where Python ignores exceptions (a gc callback, __del__) must not leave the call
    unguarded: the alarm repeats.  Without the repeat this call would spin for 10 s and return True."""
    swallowed = []

    def fn():
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10.0:
            try:
                _spin(10.0 - (time.monotonic() - t0))
            except Timeout:
                if swallowed:
                    raise
                swallowed.append(time.monotonic())
        return "ran to the end"

    t0 = time.monotonic()
    assert with_time_limit(fn, 0.2) == (False, None)
    assert len(swallowed) == 1
    assert time.monotonic() - t0 < 2.0


def test_nested_guards_restore_the_outer_timer():
    def outer():
        finished, _ = with_time_limit(lambda: 1, 0.5)
        remaining = signal.getitimer(signal.ITIMER_REAL)[0]
        return finished, remaining

    finished, (inner_finished, remaining) = with_time_limit(outer, 5.0)
    assert finished and inner_finished
    assert 3.0 < remaining <= 5.0  # the outer budget, less the time spent


def test_an_inner_call_longer_than_the_outer_deadline_is_skipped_when_skippable():
    finished, result = with_time_limit(lambda: with_time_limit(lambda: 1, 10.0, skippable=True), 1.0)
    assert finished and result == (False, None)


def test_off_the_main_thread_a_skippable_call_is_skipped_and_the_rest_run():
    out = {}

    def worker():
        out["skip"] = with_time_limit(lambda: 1, 1.0, skippable=True)
        out["run"] = with_time_limit(lambda: 2, 1.0)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert out == {"skip": (False, None), "run": (True, 2)}
