"""Tests of attnlimits.verify.report: terminal table, report.md, results.json, results.csv, plots/*.png."""
from __future__ import annotations

import csv
import json
import math
import re
import socket

import numpy as np
import pytest

from attnlimits.verify.claims.base import Check, ClaimResult, PlotSeries, PlotSpec
from attnlimits.verify.report import CSV_COLUMNS, TABLE_WIDTH, environment_info, format_table, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ANSI = re.compile(r"\033\[[0-9;]*m")

# A fixed environment keeps write_report from importing torch in every test.
FAKE_ENV = {"timestamp": "2025-01-01T00:00:00Z", "python": "3.x", "platform": "test", "machine": "x86_64",
            "versions": {"attnlimits": "dev", "numpy": np.__version__}, "cuda_available": False,
            "cuda_version": None, "cuda_device": None}
META = {"mode": "quick", "device": "cpu", "seed": 7, "elapsed_s": 12.5,
        "command": "attnlimits verify --quick", "environment": FAKE_ENV}


def _curve_specs() -> list[PlotSpec]:
    g = np.logspace(-2, 1, 25)
    gm = np.logspace(-2, 1, 6)
    theory = lambda x: x / (1 + x)  # noqa: E731
    return [
        PlotSpec("E(γ)", "γ", "E", [
            PlotSeries("theory", list(g), list(theory(g))),
            PlotSeries("MC", list(gm), list(theory(gm) + 0.01), yerr=[0.02] * 6, kind="points"),
        ]),
        PlotSpec("gap", "γ", "ΔE", [
            PlotSeries("theory", g, np.log(g) / 10),  # arrays accepted too
            PlotSeries("MC", gm, np.log(gm) / 10, yerr=None, kind="points"),
        ], xscale="linear"),
    ]


def fake_results() -> list[ClaimResult]:
    long_title = "Interpolation error of nonlinear attention matches the limiting formula across all γ " * 2
    return [
        ClaimResult(
            "V4", long_title, "pass",
            checks=[
                Check("E(γ=0.01)", 0.123456789, 0.12401, se=3.1e-4),
                Check("E(γ=1), no SE", 0.5, 0.501, se=None, tolerance=0.01, kind="rel"),
                Check("slope in band", (0.9, 1.1), 1.02, se=0.01, kind="interval"),
            ],
            plots=_curve_specs(),
            params={"n": 1000, "p": 500, "gammas": [0.01, 0.1, 1.0], "draws": np.int64(8),
                    "kappa": np.float64(0.0), "bad": float("nan")},
            elapsed=3.25, source="docs/attention_rmt.md §12", tags=("rmt", "tanh"),
        ),
        ClaimResult(
            "V9", "Cosine activation gives no gain", "fail",
            checks=[Check("gap", 0.0, float("nan"), se=0.01), Check("other", 1.0, 1.0, se=float("inf"))],
            notes="MC value is not a number", elapsed=1.5, source="docs/attention_rmt.md §12",
        ),
        ClaimResult(
            "Q1", "Linear decay constant as quoted", "discrepancy",
            checks=[Check("ν·E at L=3", 1.5, 3.0, se=1e-3, tolerance=1e-2)],
            params={"quoted": 1.5, "derived": 3.0}, notes="quoted eq. (12) v1", elapsed=0.25,
            source="[D] eq. (12)", tags=("slr",),
        ),
        ClaimResult(
            "id-parseval", "Parseval identity for Hermite coefficients", "pass",
            checks=[Check("Σ a_k²", 1.0, 1.0 + 1e-12, tolerance=1e-10)], elapsed=0.5,
        ),
        ClaimResult(
            "V/20 weird", "Claim that raised", "fail",
            notes="error: RuntimeError: boom\nTraceback (most recent call last):\n  ```fenced```", elapsed=0.1,
            plots=[PlotSpec("single", "x", "y", [PlotSeries("y", [1, 2, 3], [1.0, None, 3.0])])],
        ),
    ]


# ------------------------------------------------------------------------------------------------
# format_table
# ------------------------------------------------------------------------------------------------
def test_format_table_content_and_summary():
    table = format_table(fake_results())
    lines = table.splitlines()
    assert max(len(line) for line in lines) <= TABLE_WIDTH
    assert lines[-1] == "5 claims: 2 pass, 2 fail, 1 discrepancy (5.6 s)"
    for word in ("PASS", "FAIL", "DISCREPANCY", "V4", "id-parseval", "V/20 weird"):
        assert word in table
    v4 = next(line for line in lines if line.startswith("E(γ=0.01)", 2))
    assert "0.1235" in v4 and "0.124 ± 0.00031" in v4 and "0.00093" in v4 and v4.endswith("✓")
    no_se = next(line for line in lines if "E(γ=1), no SE" in line)
    assert "0.501 " in no_se and "±" not in no_se and "0.005" in no_se and no_se.endswith("✓")
    interval = next(line for line in lines if "slope in band" in line)
    assert "[0.9, 1.1]" in interval and "interval" in interval
    nan_line = next(line for line in lines if line.startswith("gap", 2))
    assert "nan" in nan_line and nan_line.endswith("✗")
    assert next(line for line in lines if "ν·E" in line).endswith("✗")
    assert "…" not in table  # names, labels and titles are wrapped, never clipped
    assert "(no checks) error: RuntimeError: boom" in table
    assert "\033[" not in table


def test_format_table_color_and_counts():
    res = fake_results()
    colored = format_table(res, color=True)
    assert "\033[" in colored
    assert ANSI.sub("", colored) == format_table(res)
    assert format_table(res[:1], elapsed=43.21).splitlines()[-1] == "1 claim: 1 pass, 0 fail, 0 discrepancy (43.2 s)"
    other = ClaimResult("X", "t", "skipped", elapsed=1.0)
    assert format_table([other]).splitlines()[-1] == "1 claim: 0 pass, 0 fail, 0 discrepancy, 1 other (1.0 s)"
    assert format_table([]).splitlines()[-1] == "0 claims: 0 pass, 0 fail, 0 discrepancy (0.0 s)"


# ------------------------------------------------------------------------------------------------
# write_report
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "nested" / "report"
    path = write_report(fake_results(), out, meta=META)
    assert path == out / "report.md"
    return out


def test_write_report_creates_files(report_dir):
    for name in ("report.md", "results.json", "results.csv", "plots/V4.png", "plots/V_20_weird.png"):
        assert (report_dir / name).is_file(), name
    assert sorted(p.name for p in (report_dir / "plots").iterdir()) == ["V4.png", "V_20_weird.png"]


def test_json(report_dir):
    text = (report_dir / "results.json").read_text(encoding="utf-8")
    assert not re.search(r"\bNaN\b|\bInfinity\b", text)
    doc = json.loads(text)
    assert doc["meta"]["seed"] == 7 and doc["meta"]["mode"] == "quick" and "environment" not in doc["meta"]
    assert doc["environment"] == FAKE_ENV
    assert doc["summary"] == {"claims": 5, "pass": 2, "fail": 2, "discrepancy": 1, "other": 0, "elapsed_s": 12.5}
    claims = {c["claim"]: c for c in doc["claims"]}
    assert list(claims) == ["V4", "V9", "Q1", "id-parseval", "V/20 weird"]
    v4 = claims["V4"]
    assert v4["plot"] == "plots/V4.png" and v4["tags"] == ["rmt", "tanh"]
    assert v4["params"]["draws"] == 8 and v4["params"]["bad"] is None
    assert v4["checks"][1]["se"] is None and v4["checks"][2]["theory"] == [0.9, 1.1]
    assert all(isinstance(v4["checks"][0][k], float) for k in ("theory", "value", "se", "threshold", "k"))
    assert claims["V9"]["checks"][0]["value"] is None and claims["V9"]["checks"][0]["passed"] is False
    assert claims["V9"]["checks"][1]["se"] is None  # inf -> null
    assert claims["Q1"]["verdict"] == "discrepancy" and claims["Q1"]["plot"] is None


def test_csv(report_dir):
    with open(report_dir / "results.csv", newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == CSV_COLUMNS
        rows = list(reader)
    # 3 + 2 + 1 + 1 checks, plus one row for the claim without checks
    assert len(rows) == 8
    assert [r["claim"] for r in rows].count("V4") == 3
    assert all(r["mode"] == "quick" and r["seed"] == "7" and r["device"] == "cpu" for r in rows)
    by_label = {r["check"]: r for r in rows}
    assert by_label["slope in band"]["theory"] == "0.9;1.1"
    assert by_label["E(γ=1), no SE"]["se"] == "" and by_label["E(γ=1), no SE"]["kind"] == "rel"
    assert float(by_label["E(γ=0.01)"]["value"]) == 0.12401
    assert math.isclose(float(by_label["E(γ=0.01)"]["threshold"]), 3 * 3.1e-4)
    assert by_label["E(γ=0.01)"]["passed"] == "True" and by_label["gap"]["passed"] == "False"
    assert math.isnan(float(by_label["gap"]["value"]))
    assert by_label["ν·E at L=3"]["verdict"] == "discrepancy"
    empty = [r for r in rows if r["claim"] == "V/20 weird"]
    assert len(empty) == 1 and empty[0]["verdict"] == "fail" and empty[0]["check"] == ""


def test_png_files(report_dir):
    for name in ("V4.png", "V_20_weird.png"):
        data = (report_dir / "plots" / name).read_bytes()
        assert data[:8] == PNG_MAGIC
        assert len(data) > 10_000
    # two plot specs side by side: wider than tall
    data = (report_dir / "plots" / "V4.png").read_bytes()
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width > 1.5 * height


def test_markdown(report_dir):
    md = (report_dir / "report.md").read_text(encoding="utf-8")
    assert "![V4 plots](plots/V4.png)" in md
    assert "(plots/V_20_weird.png)" in md
    for path in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md):
        assert (report_dir / path).is_file()
    assert "`attnlimits verify --quick`" in md and "| seed | 7 |" in md and "| mode | quick |" in md
    assert "12.5 s" in md
    # summary table, one row per claim
    assert md.count("](#claim-") >= 5
    assert '<a id="claim-id-parseval"></a>' in md
    # discrepancy section lists both numbers
    disc = md.split("## Discrepancies", 1)[1].split("## Claims", 1)[0]
    assert "Q1" in disc and "quoted" in disc and "derived" in disc
    row = next(line for line in disc.splitlines() if line.startswith("| ν·E"))
    assert "| 1.5 |" in row and "| 3 ± 0.001 |" in row
    # checks tables: pipes inside cells escaped, right column count
    for line in md.splitlines():
        if line.startswith("| check | kind"):
            assert line.count(" | ") == 13  # the MDD column
    assert "\\|Δ\\|" in md
    assert '"gammas": [0.01, 0.1, 1.0]' in md and '"bad": null' in md and "NaN" not in md
    # a notes block containing ``` still renders as one block
    assert "````text" in md


def test_report_without_discrepancies_says_so(tmp_path):
    res = [r for r in fake_results() if r.verdict != "discrepancy"]
    md = write_report(res, tmp_path, meta=META).read_text(encoding="utf-8")
    assert "## Discrepancies" in md and "None in this run" in md


def test_unsafe_and_colliding_names(tmp_path):
    spec = [PlotSpec("s", "x", "y", [PlotSeries("y", [1, 2], [1, 2])])]
    res = [ClaimResult(name, "t", "pass", [Check("c", 1.0, 1.0)], spec) for name in ("../evil", "evil", "EVIL", "")]
    write_report(res, tmp_path / "r", meta=META)
    names = sorted(p.name for p in (tmp_path / "r" / "plots").iterdir())
    assert names == ["EVIL-3.png", "claim.png", "evil-2.png", "evil.png"]
    assert not (tmp_path / "evil.png").exists()


def test_bad_plot_data_does_not_abort(tmp_path):
    spec = [PlotSpec("s", "x", "y", [PlotSeries("y", [1, 2, 3], [1, 2])])]
    res = [ClaimResult("V1", "t", "pass", [Check("c", 1.0, 1.0)], spec)]
    md = write_report(res, tmp_path, meta=META).read_text(encoding="utf-8")
    assert "Plot could not be drawn" in md
    assert json.loads((tmp_path / "results.json").read_text())["claims"][0]["plot"] is None


def test_unwritable_directory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError, match=r"^cannot write report to .*file.*: ") as info:
        write_report(fake_results()[:1], blocker / "sub", meta=META)
    assert "\n" not in str(info.value)


def test_does_not_import_pyplot(tmp_path):
    """Plots use Figure + FigureCanvasAgg: the user's pyplot backend is never selected or changed."""
    import sys

    had_pyplot = "matplotlib.pyplot" in sys.modules
    write_report(fake_results()[:1], tmp_path, meta=META)
    assert had_pyplot or "matplotlib.pyplot" not in sys.modules


# ------------------------------------------------------------------------------------------------
# environment_info
# ------------------------------------------------------------------------------------------------
def test_environment_info():
    env = environment_info()
    json.dumps(env, allow_nan=False)
    for key in ("timestamp", "python", "platform", "versions", "cuda_available", "cuda_device"):
        assert key in env
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", env["timestamp"])
    assert set(env["versions"]) >= {"attnlimits", "numpy", "scipy", "sympy", "mpmath", "torch"}
    assert env["versions"]["attnlimits"]  # version or "dev"
    assert env["versions"]["numpy"] == np.__version__
    assert isinstance(env["cuda_available"], bool)
    host = socket.gethostname()
    if len(host) >= 6 and host not in ("localhost",):
        assert host not in json.dumps(env)


def test_learning_curve_styles_groups_bands_and_reference_levels(tmp_path):
    """Grouped series share a colour; a line with yerr gets a ±yerr band; 'dashed' draws a level."""
    from matplotlib.figure import Figure

    from attnlimits.verify.report import draw_spec

    a = [1.0, 2.0, 4.0]
    spec = PlotSpec("curve", "α", "E", [
        PlotSeries("softmax", a, [0.6, 0.5, 0.45], [0.01, 0.01, 0.01], kind="line", group="softmax"),
        PlotSeries("", a, [0.61, 0.52, 0.44], [0.02, 0.02, 0.02], kind="points", group="softmax"),
        PlotSeries("", a, [0.4] * 3, kind="dashed", group="softmax"),
        PlotSeries("linear", a, [0.9, 0.8, 0.7], [0.0, 0.0, 0.0], kind="line", group="linear"),
        PlotSeries("", a, [0.5] * 3, kind="dashed", group="linear"),
        PlotSeries("Bayes risk", a, [0.35] * 3, kind="dashed"),
    ])
    fig = Figure()
    ax = fig.subplots()
    draw_spec(ax, spec)
    lines = ax.get_lines()
    by_label = {ln.get_label(): ln for ln in lines}
    assert by_label["softmax"].get_color() == "C0" and by_label["linear"].get_color() == "C1"
    dashed = [ln for ln in lines if ln.get_linestyle() in ("--", "-.")]
    assert [ln.get_color() for ln in dashed] == ["C0", "C1", "black"]
    assert len(ax.collections) >= 2  # the softmax band and the linear (zero-width) band
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["softmax", "linear", "Bayes risk"]
    res = [ClaimResult("C18", "t", "pass", [Check("c", 1.0, 1.0)], [spec])]
    md = write_report(res, tmp_path, meta=META).read_text(encoding="utf-8")
    assert "Plot could not be drawn" not in md
    assert (tmp_path / "plots").is_dir() and next((tmp_path / "plots").glob("*.png")).read_bytes()[:8] == PNG_MAGIC


# ------------------------------------------------------------------------------------------------
# the comparison rule in the report: z / t, p, adjusted thresholds, the stated level
# ------------------------------------------------------------------------------------------------
def _family_results():
    from attnlimits.verify.claims.base import apply_family_rule

    res = [ClaimResult("V4", "levels", "", checks=[
        Check("z check", 0.5, 0.503, se=0.001),                            # z = 3
        Check("t check", 0.5, 0.503, se=0.001, dof=3),                     # t3 = 3, p = 0.058
        Check("quoted", 0.5, 0.5101, se=0.001, tolerance=0.01, tolerance_reason="quoted"),
        Check("unlabelled", 0.5, 0.5101, se=0.001, tolerance=0.01),
        Check("deterministic", 0.5, 0.5004, tolerance=5e-4, tolerance_reason="quoted"),
        Check("far", 0.5, 0.51, se=0.001),                                 # 10 SE: fails
    ], elapsed=1.0)]
    h = apply_family_rule(res, 0.01)
    return res, h


def test_family_rule_sets_thresholds_and_decides_by_holm():
    (r,), h = _family_results()
    assert h.m == 5 and h.level == 0.01
    by = {c.label: c for c in r.checks}
    assert not by["far"].passed and by["far"].holm_threshold == pytest.approx(0.01 / 5)
    assert by["z check"].passed and by["t check"].passed and by["deterministic"].passed
    assert by["t check"].p_value == pytest.approx(0.0577, abs=1e-4) and by["t check"].law == "t(3)"
    assert by["deterministic"].p_value is None and by["deterministic"].holm_threshold is None
    # threshold in value units = tolerance + critical t/z at the Holm threshold × SE
    from attnlimits.verify.comparison import critical_value
    c = by["quoted"]
    assert c.threshold == pytest.approx(0.01 + critical_value(c.holm_threshold) * 0.001)


def test_report_shows_statistics_p_values_and_the_rule(tmp_path):
    res, _ = _family_results()
    table = format_table(res)
    assert max(len(line) for line in table.splitlines()) <= TABLE_WIDTH
    t_line = next(line for line in table.splitlines() if "t check" in line)
    assert "t3 +3.00" in t_line and "0.058" in t_line
    assert "family-wise rule: Holm at 0.01 over 5 checks" in table
    md = write_report(res, tmp_path, meta={**META, "level": 0.01}).read_text(encoding="utf-8")
    assert "## How verdicts are decided" in md and "Holm's step-down procedure at level 0.01" in md
    assert "0.01 (quoted)" in md and "0.01 (unlabelled)" in md
    assert "1 check(s) with an SE carry a tolerance not labelled" in md
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    fam = doc["family"]
    assert fam["level"] == 0.01 and fam["m"] == 5 and fam["failed"] == 1 and fam["with_t"] == 1
    chk = {c["label"]: c for c in doc["claims"][0]["checks"]}
    assert chk["t check"]["dof"] == 3 and chk["far"]["passed"] is False
    assert chk["far"]["holm_threshold"] == pytest.approx(0.002) and chk["far"]["p_adjusted"] < 0.01
    with open(tmp_path / "results.csv", newline="", encoding="utf-8") as fh:
        rows = {r["check"]: r for r in csv.DictReader(fh)}
    assert rows["t check"]["law"] == "t(3)" and float(rows["z check"]["z"]) == pytest.approx(3.0)
    assert rows["quoted"]["tolerance_reason"] == "quoted"


def test_table_wraps_instead_of_clipping_and_uses_the_width():
    """No line ends in an ellipsis and no two rows read identically: long claim names, check labels
    and titles are written whole; every line fits the width asked for."""
    from attnlimits.verify.claims.base import Check, ClaimResult

    long_label = "mixed-geometry ρ=2 aligned key-only vs query-only at c=0.5, γ=1e-2, SNR 4"
    checks = [Check(long_label + f" #{i}", 0.5, 0.5, se=0.01) for i in range(3)]
    res = [ClaimResult("mixed-geometry-long-name", "a title " * 30, "pass", checks)]
    for width in (110, 160):
        table = format_table(res, width=width)
        assert max(len(line) for line in table.splitlines()) <= width and "…" not in table
        assert "mixed-geometry-long-name" in table
        for i in range(3):
            assert f"#{i}" in table  # every label whole: three distinct rows
    wide = format_table(res, width=160)
    assert len(wide.splitlines()) < len(format_table(res, width=110).splitlines())


def test_rewriting_a_partial_report_draws_only_new_figures(tmp_path, monkeypatch):
    """verify rewrites the report after every claim; earlier figures are kept, not redrawn (the quick
    run's report writing was quadratic: about 9 s between claims by the end of 65)."""
    import attnlimits.verify.report as R

    calls = []
    real = R.plot_claim
    monkeypatch.setattr(R, "plot_claim", lambda r, path: (calls.append(r.claim), real(r, path)))
    results = fake_results()
    with_plots = [r.claim for r in results if r.plots]
    write_report(results[:1], tmp_path, meta={"mode": "quick"})
    write_report(results, tmp_path, meta={"mode": "quick"})
    assert sorted(calls) == sorted(with_plots)  # each figure drawn once
    fresh = fake_results()  # new result objects (a rerun into the same folder): drawn again
    write_report(fresh, tmp_path, meta={"mode": "quick"})
    assert len(calls) == 2 * len(with_plots)
    assert all((tmp_path / p).exists() for p in json.load(open(tmp_path / "results.json"))["files"])


def test_shallow_copies_of_results_are_not_redrawn(tmp_path, monkeypatch):
    """verify passes shallow copies of the results to each rewrite (the provisional family rule works
    on copies): a copy shares its plots and is not redrawn."""
    import copy

    import attnlimits.verify.report as R

    calls = []
    real = R.plot_claim
    monkeypatch.setattr(R, "plot_claim", lambda r, path: (calls.append(r.claim), real(r, path)))
    results = fake_results()
    write_report(results, tmp_path, meta={"mode": "quick"})
    n = len(calls)
    write_report([copy.copy(r) for r in results], tmp_path, meta={"mode": "quick"})
    assert len(calls) == n and n > 0


@pytest.mark.parametrize("width", [80, 110])
def test_table_at_80_columns_cuts_no_number(width):
    """At 80 columns (and 110) every line fits and every number is whole: the SE of a small mean with a
    small SE (e.g. ± 4.5e-05) keeps its exponent; the mean, SE, statistic and p-value appear as
    formatted, independently of the layout."""
    from attnlimits.verify.claims.base import Check, ClaimResult

    checks = [Check("tiny value with a small SE", -0.001234, -0.001301, se=4.538e-5, dof=125),
              Check("rel", 12345.678, 12350.0, se=None, tolerance=1e-3, kind="rel"),
              Check("interval", (0.45, 0.55), 0.5012, se=0.0123, kind="interval"),
              Check("huge z", 0.0, 1.0, se=1e-6)]
    res = [ClaimResult("C-narrow", "a claim checked at the terminal's width", "fail", checks)]
    table = format_table(res, width=width)
    lines = table.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "…" not in table
    body = "\n".join(lines)
    for text in ("-0.001301 ± 4.5e-05", "t125 -1.48", "1.235e+04", "[0.45, 0.55]", "0.5012 ± 0.012",
                 "z +1.0e+06"):
        assert text in body, text


def test_terminal_width_honours_columns(monkeypatch):
    from attnlimits.verify.report import MIN_WIDTH, terminal_width

    monkeypatch.setenv("COLUMNS", "80")
    assert terminal_width() == 80
    monkeypatch.setenv("COLUMNS", "20")
    assert terminal_width() == MIN_WIDTH
