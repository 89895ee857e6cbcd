"""Work no signal can interrupt runs in a child process with a deadline (symbolic/_isolate.py)."""
import subprocess
import sys
import time

import pytest

from attnlimits.symbolic._isolate import DeadlineExceeded, call_with_deadline


def test_deadline_kills_the_child():
    start = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="within 0.5 s"):
        call_with_deadline(time.sleep, 30, seconds=0.5)
    assert time.monotonic() - start < 10


def test_result_and_exceptions_come_back():
    assert call_with_deadline(divmod, 7, 2, seconds=60) == (3, 1)
    with pytest.raises(ZeroDivisionError):
        call_with_deadline(divmod, 1, 0, seconds=60)


def test_a_script_without_a_main_guard_runs_once(tmp_path):
    """spawn must not re-run the caller's script (it has no ``if __name__ == '__main__'`` guard)."""
    script = tmp_path / "user.py"
    script.write_text("from attnlimits.symbolic.hermite import hermite_data_bounded\n"
                      "print('RUN', float(hermite_data_bounded('sin(t) + t').a1))\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-1000:]
    assert proc.stdout.count("RUN") == 1
