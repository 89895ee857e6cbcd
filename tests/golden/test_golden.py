"""Golden outputs of the solvers: a change of structure must not move numbers.

``golden.json`` is written by ``make_golden.py``.  Counts (RS map iterations and
evaluations), methods, flags and branch phases must match exactly; floats to 1e-9 relative — bit-for-bit
on one machine where the operations are unchanged, and 1e-9 leaves room for another CPU's BLAS kernels
(a reordered sum), far below any change a refactor could make by mistake.
"""
import json
import math
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _compare(got, want, path="") -> list:
    bad = []
    if isinstance(want, dict):
        if set(got) != set(want):
            return [f"{path}: keys {sorted(got)} != {sorted(want)}"]
        for k in want:
            bad += _compare(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        if len(got) != len(want):
            return [f"{path}: length {len(got)} != {len(want)}"]
        for i, (g, w) in enumerate(zip(got, want)):
            bad += _compare(g, w, f"{path}[{i}]")
    elif isinstance(want, float) and not isinstance(want, bool):
        if not (math.isclose(float(got), want, rel_tol=1e-9, abs_tol=1e-300) or (math.isnan(want) and math.isnan(got))):
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
