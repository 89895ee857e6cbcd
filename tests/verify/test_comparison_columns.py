"""One comparison, one set of columns: ``verify``'s ``results.csv`` and ``explore``'s points table give
the same names and the same values for the same comparison (docs/output.md, "Comparison columns")."""
from __future__ import annotations

import csv
import math

import pytest

from attnlimits.verify.claims.base import Context, run_claims
from attnlimits.verify.claims.property_claims import property_claim
from attnlimits.verify.comparison import COMPARISON_COLUMNS, Comparison, comparison_columns
from attnlimits.verify.explore.driver import evaluate_point
from attnlimits.verify.report import CSV_COLUMNS, write_report


def test_columns_of_a_comparison_by_hand():
    """Independent values: Δ = 0.02, margin 0.005, SE 0.01 → z = (0.02 − 0.005)/0.01 = 1.5, p = 2Φ(−1.5)."""
    cols = comparison_columns(Comparison(0.52, 0.5, se=0.01, allowance=0.005))
    assert tuple(cols) == COMPARISON_COLUMNS
    assert cols["z"] == pytest.approx(1.5, rel=1e-12) and cols["law"] == "z"
    assert cols["p_value"] == pytest.approx(math.erfc(1.5 / math.sqrt(2)), rel=1e-12)
    assert cols["allowance"] == 0.005 and cols["tolerance"] == 0.0 and cols["theory"] == 0.5
    # inside the margin: z = 0, not hidden: the margin columns say why
    inside = comparison_columns(Comparison(0.5027, 0.5, se=0.001, allowance=0.003))
    assert inside["z"] == 0.0 and inside["p_value"] == 1.0 and inside["allowance"] == 0.003
    # deterministic: no z, law or p; an interval's theory as "lo;hi"
    det = comparison_columns(Comparison(1.0, (0.0, 2.0), kind="interval", tolerance=1e-9))
    assert det["z"] is None and det["p_value"] is None and det["law"] == "" and det["theory"] == "0.0;2.0"
    assert set(COMPARISON_COLUMNS) <= set(CSV_COLUMNS)


def test_explore_row_and_verify_row_of_one_comparison_agree(tmp_path):
    """slr-bo-monotone at one point (its stochastic check, ~3 s): evaluated by explore and by verify as a
    property claim at that point with the same seed, the comparison columns are equal, name for name."""
    point = {"alpha": 2.0, "ratio": 1.5, "nu": 2.0, "L": 2}
    claim = property_claim("slr-bo-monotone", "T-columns", "columns", "E_BO non-increasing", "test",
                           quick={"points": [point]})
    ctx = Context("quick", device="cpu", seed=0)
    seed = ctx.seed_for("T-columns", 0)
    from attnlimits.verify.claims.property_claims import find_property

    prop = find_property("slr-bo-monotone")
    size = {k: v for k, v in claim.size("quick").items() if k != "points"}
    size.setdefault("device", "cpu")
    row = evaluate_point(prop, point, size=size, seed=seed, level=0.01)
    (res,) = run_claims([claim], ctx)
    write_report([res], tmp_path, meta={"mode": "quick", "seed": 0, "device": "cpu"})
    with open(tmp_path / "results.csv", newline="") as fh:
        vrows = list(csv.DictReader(fh))
    # the property also checks the free entropy's stationarity at both fixed points (deterministic rows):
    # compare explore's row with verify's row of the same check
    (vrow,) = [r for r in vrows if r["check"].startswith(row["check"])]
    assert set(COMPARISON_COLUMNS) <= set(row) and set(COMPARISON_COLUMNS) <= set(vrow)
    for k in COMPARISON_COLUMNS:
        a, b = row[k], vrow[k]
        if isinstance(a, float):
            assert float(b) == a, k  # the CSV writes float64 round-trip
        else:
            assert ("" if a is None else str(a)) == b, k
    assert row["verdict"] == vrow["verdict"] == "pass"
    # results.json: the same fields by the same names
    import json

    (check,) = [c for c in json.loads((tmp_path / "results.json").read_text())["claims"][0]["checks"]
                if c["label"].startswith(row["check"])]
    for k in COMPARISON_COLUMNS:
        assert check[k] == row[k], k


def test_a_parameter_named_like_a_comparison_column_is_refused():
    """A property parameter called ``z`` or ``value`` would be overwritten by the check's column in the
    points table: refused before any evaluation, naming the parameter."""
    from attnlimits.verify.claims.property_claims import find_property

    prop = find_property("slr-bo-monotone")
    with pytest.raises(ValueError, match="parameter\\(s\\) z are named like columns"):
        evaluate_point(prop, {"alpha": 2.0, "ratio": 1.5, "nu": 2.0, "L": 2, "z": 1.0}, size={}, seed=0, level=0.01)
