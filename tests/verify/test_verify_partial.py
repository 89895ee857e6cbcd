"""``verify`` keeps its verdicts through a stop: each verdict printed as it comes, the
report rewritten after each claim, Ctrl-C inside a claim never swallowed — the run stops with a
valid partial report naming the claims that ran and those that did not."""
from __future__ import annotations

import json

import pytest

from attnlimits.verify.claims.base import REGISTRY, Check, Claim, register


def _ok(ctx, size):
    return [Check("exact", 1.0, 1.0, tolerance=1e-12, tolerance_reason="numerical")], [], {}


def _stopped(ctx, size):
    raise KeyboardInterrupt  # what Ctrl-C does inside a claim (training, say)


@pytest.fixture
def claims():
    names = ("PARTIAL-1", "PARTIAL-2", "PARTIAL-3")
    for name, fn in zip(names, (_ok, _stopped, _ok)):
        if name not in REGISTRY:
            register(Claim(name, f"test claim {name}", "stmt", "tests only", fn, quick={}, full={}, tags=("partial",)))
    yield names
    for n in names:
        REGISTRY.pop(n, None)


def test_ctrl_c_after_the_first_claim_leaves_a_valid_partial_report(tmp_path, claims, capsys):
    from attnlimits.verify.cli import main

    out = tmp_path / "rep"
    assert main(["verify", *claims, "--out", str(out), "--device", "cpu"]) == 130
    captured = capsys.readouterr()
    assert "PARTIAL-1: pass (provisional" in captured.err
    assert "partial report:" in captured.out and "not run: PARTIAL-2, PARTIAL-3" in captured.out
    md = (out / "report.md").read_text()
    assert "**Partial report**: the run was stopped (Ctrl-C). 1 claim(s) ran: PARTIAL-1." in md
    assert "2 did not run: PARTIAL-2, PARTIAL-3" in md
    doc = json.loads((out / "results.json").read_text())
    assert doc["meta"]["status"] == "interrupted" and doc["meta"]["not_run"] == ["PARTIAL-2", "PARTIAL-3"]
    assert [c["claim"] for c in doc["claims"]] == ["PARTIAL-1"]
    assert set(doc["files"]) >= {"report.md", "results.json", "results.csv"}
    assert not list(out.glob(".tmp-*"))


def test_complete_run_is_marked_complete(tmp_path, claims):
    from attnlimits.verify.cli import main

    out = tmp_path / "rep"
    assert main(["verify", claims[0], claims[2], "--out", str(out), "--device", "cpu"]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["meta"]["status"] == "complete" and "Partial report" not in (out / "report.md").read_text()


def test_report_written_after_each_claim(tmp_path, claims, monkeypatch):
    """The report on disk after the first claim already names it and the ones to come."""
    from attnlimits.verify import report
    from attnlimits.verify.claims.base import Context, run_claims

    seen = []

    def on_claim(done, not_run):
        report.write_report(done, tmp_path, meta={"status": "partial", "not_run": not_run})
        seen.append((tmp_path / "report.md").read_text())

    res = run_claims([REGISTRY[claims[0]], REGISTRY[claims[2]]], Context("quick", device="cpu"), on_claim=on_claim)
    assert [r.verdict for r in res] == ["pass", "pass"]
    assert len(seen) == 1 and "1 claim(s) ran: PARTIAL-1" in seen[0] and "did not run: PARTIAL-3" in seen[0]
