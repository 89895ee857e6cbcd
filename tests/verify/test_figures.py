"""``attnlimits figure``: the papers' panels as one command each (PNG + tidy CSV)."""
from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from attnlimits.symbolic.result import InputError
from attnlimits.verify.figures import all_figures, make_figure

FIGURES = all_figures()


def test_list_names_every_panel():
    out = subprocess.run([sys.executable, "-m", "attnlimits", "figure", "--list"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0
    for name in ("rmt-1a", "rmt-1b", "rmt-1c", "slr-risk-nu", "slr-risk-L", "slr-finite-alpha"):
        assert name in out.stdout and name in FIGURES
    bad = subprocess.run([sys.executable, "-m", "attnlimits", "figure", "nope"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no figure 'nope'" in bad.stderr


def test_unknown_figure_and_mode():
    with pytest.raises(InputError, match="no figure"):
        make_figure("nope", "x")
    with pytest.raises(InputError, match="mode"):
        make_figure("rmt-1c", "x", mode="huge")


def test_rmt_1c_png_and_tidy_csv(tmp_path):
    png, rows = make_figure("rmt-1c", tmp_path, device="cpu")
    assert png.exists() and png.stat().st_size > 10_000
    with open(tmp_path / "rmt-1c.csv") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == len(rows)
    theory = [r for r in rows if r["kind"] == "theory"]
    sims = [r for r in rows if r["kind"] == "simulation"]
    assert {r["curve"] for r in theory} == {"ridge", "w0", "aligned"}
    # the ridge theory is the closed form 0.75/(1 + SNR) at gamma -> 0 (T4 1c)
    for r in theory:
        if r["curve"] == "ridge" and r["snr"] in (0.0, 1.0, 4.0):
            assert r["E"] == pytest.approx(0.75 / (1 + r["snr"]), abs=2e-4)
    # every simulated point carries its sizes and seed
    assert sims and all({"n", "p", "draws", "seed", "E_se", "theory"} <= set(r) for r in sims)
    # and the comparison columns verify and explore write: z = (E − theory)/E_se here (no margin)
    from attnlimits.verify.comparison import COMPARISON_COLUMNS

    assert set(COMPARISON_COLUMNS) <= set(table[0])
    for r in sims:
        assert r["value"] == r["E"] and r["se"] == r["E_se"] and r["dof"] == r["draws"] - 1
        assert r["z"] == pytest.approx((r["E"] - r["theory"]) / r["E_se"], rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_quick_figure(tmp_path, name):
    png, rows = make_figure(name, tmp_path, device="cpu")
    assert png.exists() and rows


def test_a_figure_reports_progress_from_its_steps_and_commands(tmp_path, monkeypatch):
    """A panel's own steps and the progress lines of the commands it runs reach make_figure's progress,
    prefixed with the figure's name (slr-finite-alpha runs minutes: it must not be silent)."""
    from attnlimits.verify import figures
    from attnlimits.verify.figures import drawing, registry

    def make(out, mode, seed, device):
        drawing.report_step("first step")
        (row,) = drawing.run_command("slr", "population", model="spiked", nu=2.0, L=[2], activation=["linear_uncentred"])
        fig, ax, _ = figures.axes("probe", "x", "y")
        ax.plot([1, 2], [row["risk"]] * 2, label="risk")
        return fig, ax, [{"x": 1.0, "risk": row["risk"]}], "probe"

    declared = registry.all_figures()
    monkeypatch.setattr(registry, "all_figures",
                        lambda: {**declared, "probe": figures.Figure("probe", "probe", "test", make, 0.1)})
    lines = []
    make_figure("probe", tmp_path, device="cpu", progress=lines.append)
    assert "figure probe: first step" in lines
    assert any(line.startswith("figure probe: [1/1] linear_uncentred") for line in lines), lines
    assert drawing.PROGRESS.get() is None  # reset after the figure
    lines.clear()
    make_figure("probe", tmp_path, device="cpu")  # no progress: silent, no error
    assert lines == []
