"""run_claims applies one family-wise rule (Holm, attnlimits.verify.comparison) to the checks of a run."""
from __future__ import annotations

import pytest
from attnlimits.verify.claims.base import Check, Claim, Context, run_claims


def _claim(name, checks, quoted=False):
    return Claim(name, name, "", "test", lambda ctx, size: (list(checks), [], {}), quoted=quoted)


def test_family_decides_after_the_last_claim():
    ok = [Check(f"c{i}", 0.0, 0.5 * (i % 5 - 2), se=1.0) for i in range(40)]      # |z| ≤ 1
    z35 = Check("z = 3.5", 0.0, 3.5, se=1.0)    # p = 4.7e-4: fails alone at 1 % (m = 1), not among 43
    far = Check("z = 8", 0.0, 8.0, se=1.0)
    quoted = Check("quoted 6 SE off", 1.0, 1.006, se=0.001)
    det = Check("deterministic", 0.5, 0.5003, tolerance=5e-4, tolerance_reason="quoted")
    res = run_claims([_claim("A", ok + [z35, det]), _claim("B", [far]), _claim("Q", [quoted], quoted=True)],
                     Context("quick"), level=0.01)
    assert [r.verdict for r in res] == ["pass", "fail", "discrepancy"]
    assert far.p_adjusted < 0.01 and far.holm_threshold == pytest.approx(0.01 / 43)
    assert z35.passed and z35.level == 0.01 and det.holm_threshold is None and det.passed
    (alone,) = run_claims([_claim("A", [Check("z = 3.5", 0.0, 3.5, se=1.0)])], Context("quick"))
    assert alone.verdict == "fail"  # a family of one is judged at the full 1 %


def test_t_checks_need_more_standard_errors():
    t3 = Check("t3 = 5", 0.0, 5.0, se=1.0, dof=3)
    z = Check("z = 5", 0.0, 5.0, se=1.0)
    res = run_claims([_claim("T", [t3]), _claim("Z", [z])], Context("quick"), level=0.01)
    assert res[0].verdict == "pass" and res[1].verdict == "fail"
    assert t3.p_value == pytest.approx(0.0154, abs=1e-3)


def test_cli_level_option(tmp_path, capsys):
    import json

    from attnlimits.verify.cli import main

    assert main(["verify", "V1", "--level", "1.5", "--no-report"]) == 2
    assert "--level must lie strictly between 0 and 1" in capsys.readouterr().err
    out = tmp_path / "rep"
    assert main(["verify", "V1", "--level", "0.05", "--device", "cpu", "--out", str(out)]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["meta"]["level"] == 0.05 and doc["family"]["level"] == 0.05
    assert "Holm's step-down procedure at level 0.05" in (out / "report.md").read_text()
