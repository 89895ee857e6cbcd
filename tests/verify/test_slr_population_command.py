"""The ``slr population`` command (attnlimits.symbolic.result contract): rows, limit values, table text."""
from __future__ import annotations

import pytest

from attnlimits.symbolic.result import InputError
from attnlimits.verify.slr.population_command import POPULATION_COMMAND, format_population_table, run_population


def test_rows_and_table():
    p = POPULATION_COMMAND.parse({"model": "spiked", "nu": "2", "L": "3", "activation": "softmax,linear_uncentred"})
    rows = run_population(p)
    assert [r["activation"] for r in rows] == ["softmax", "linear_uncentred"]
    for key in ("risk", "risk_error", "bayes_risk", "bayes_error", "argmin_m_k", "limit", "limit_reason", "method",
                "model", "nu", "L", "metric"):
        assert key in rows[0]
    assert rows[0]["risk"] == pytest.approx(0.35242, abs=5e-6)  # docs/slr.md §14 R3: softmax attains E_B
    assert rows[1]["risk"] == pytest.approx(0.46154, abs=5e-6)  # docs/slr.md §14 R4
    text = format_population_table(rows)
    assert text.startswith("single-location regression, spiked, L=3, nu=2, metric excess: Bayes risk 0.352423")
    assert "linear_uncentred" in text


def test_limit_row_reports_the_limit_value():
    p = POPULATION_COMMAND.parse({"model": "max", "nu": "inf", "L": "2", "activation": "softmax"})
    (row,) = run_population(p)
    assert row["limit"] and row["risk"] == 0.0 and row["nu"] == "inf"
    assert row["risk_at_bound"] > 0 and row["limit_method"].startswith("derived")


def test_bad_input_is_an_input_error():
    with pytest.raises(InputError):
        run_population(POPULATION_COMMAND.parse({"model": "spiked", "nu": "inf", "L": "2"}))
    with pytest.raises(InputError, match="ambiguous"):
        run_population(POPULATION_COMMAND.parse({"model": "spiked", "nu": "1", "L": "2", "activation": "linear"}))
