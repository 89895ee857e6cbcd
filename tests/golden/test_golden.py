"""Golden outputs of the solvers: a change of structure must not move numbers.

``golden.json`` is written by ``make_golden.py``.  Counts (RS map iterations and
evaluations), methods, flags and branch phases must match exactly; floats to 1e-9 relative — bit-for-bit
on one machine where the operations are unchanged, and 1e-9 leaves room for another CPU's BLAS kernels
or another numpy/scipy release (a reordered sum), far below any change a refactor could make by mistake.

The fields read off the RS map's forward-difference Jacobian (step h = 1e-6 relative, in
``fd_jacobian_with_averages``) are compared to 1e-6 instead: a quotient (G(x + h) − G(x)) / h carries
the last digits of the map's values (about 1e-13, the prox minimiser's own convergence) divided by h,
so a library release that moves the values at 1e-13 moves these fields at about 1e-8 (measured: up to
1.4e-8 between numpy 2.4 / scipy 1.17 environments), beyond 1e-9 and far below any
change of method (which moves them at 1e-3 or more).
"""
import json
import math
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

#: fields computed from the forward-difference Jacobian of the RS map, and their relative tolerance
JACOBIAN_FIELDS = frozenset({"E_test_error", "stability"})
JACOBIAN_RTOL = 1e-6
RTOL = 1e-9


def _compare(got, want, path="", key="") -> list:
    bad = []
    if isinstance(want, dict):
        if set(got) != set(want):
            return [f"{path}: keys {sorted(got)} != {sorted(want)}"]
        for k in want:
            bad += _compare(got[k], want[k], f"{path}.{k}", k)
    elif isinstance(want, list):
        if len(got) != len(want):
            return [f"{path}: length {len(got)} != {len(want)}"]
        for i, (g, w) in enumerate(zip(got, want)):
            bad += _compare(g, w, f"{path}[{i}]", key)
    elif isinstance(want, float) and not isinstance(want, bool):
        rtol = JACOBIAN_RTOL if key in JACOBIAN_FIELDS else RTOL
        if not (math.isclose(float(got), want, rel_tol=rtol, abs_tol=1e-300) or (math.isnan(want) and math.isnan(got))):
            bad.append(f"{path}: {got!r} != {want!r}")
    elif got != want:
        bad.append(f"{path}: {got!r} != {want!r}")
    return bad


@pytest.fixture(scope="module")
def computed():
    import sys

    sys.path.insert(0, str(HERE))
    from make_golden import compute

    return compute()


def test_golden_outputs_unchanged(computed):
    want = json.loads((HERE / "golden.json").read_text())
    bad = _compare(computed, want)
    assert not bad, "numbers moved:\n" + "\n".join(bad[:20])


def test_golden_compare_sees_a_moved_number():
    """The comparison itself can fail: a value moved by 1e-8 and a Jacobian field moved by 1e-5 are reported."""
    want = {"a": {"E_test": 0.5, "stability": 0.8, "iterations": 3}}
    assert not _compare({"a": {"E_test": 0.5 * (1 + 1e-10), "stability": 0.8 * (1 + 1e-7), "iterations": 3}}, want)
    assert len(_compare({"a": {"E_test": 0.5 * (1 + 1e-8), "stability": 0.8, "iterations": 3}}, want)) == 1
    assert len(_compare({"a": {"E_test": 0.5, "stability": 0.8 * (1 + 1e-5), "iterations": 3}}, want)) == 1
    assert len(_compare({"a": {"E_test": 0.5, "stability": 0.8, "iterations": 4}}, want)) == 1
