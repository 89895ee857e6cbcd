"""The commands never harm a user's files: they delete only what their manifest says they wrote,
write nothing through a link out of their folder, honour the umask, check their outputs before any
work, and refuse a second run into a folder in use (verify/outputs.py, symbolic/files.py).

Every planted file is compared by content and mtime (``st_mtime_ns``): a deletion, a rewrite or a
write through a link changes one of them.
"""
from __future__ import annotations

import dataclasses
import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attnlimits.symbolic import result as R
from attnlimits.verify.outputs import LOCK, MANIFEST, OutputLock, check_output_folder, read_manifest

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
TOY_GRID = 'command = "toy"\n[fixed]\ny = 2\n[axes]\nx = [1, 2]\n'


@pytest.fixture
def toys(monkeypatch):
    """The toy explore properties (tests/plugins) and the toy sweep command, registered in this process."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    import toy_properties

    from attnlimits.verify.sweep import _toy

    monkeypatch.setitem(R._EXTRA, "toyexplore", toy_properties.RESULT)
    _toy.register()
    monkeypatch.setattr("attnlimits.verify.sweep.grid.registry", lambda: {"toy": _toy.TOY_RESULT})
    return toy_properties


def replace_panel(monkeypatch, name, make):
    """Panel ``name`` drawn by ``make`` instead (the declared panels, as the CLI and make_figure see them)."""
    import attnlimits.verify.figures as F
    from attnlimits.verify.figures import registry

    panels = registry.all_figures()
    panels[name] = dataclasses.replace(panels[name], make=make)
    monkeypatch.setattr(registry, "all_figures", lambda: dict(panels))
    monkeypatch.setattr(F, "all_figures", lambda: dict(panels))


@pytest.fixture
def cheap_figure(monkeypatch):
    """``figure rmt-1a`` drawn from three made-up points (the writing path of a figure, not its physics)."""
    from attnlimits.verify import figures as F

    calls = []

    def make(out, mode, seed, device):
        calls.append(out)
        fig, ax, _ = F.axes("test panel", "x", "y")
        ax.plot([1, 2, 3], [1, 4, 9], label="y")
        return fig, ax, [{"x": x, "y": x * x} for x in (1, 2, 3)], "made-up points"

    replace_panel(monkeypatch, "rmt-1a", make)
    return calls


@pytest.fixture
def cheap_export(monkeypatch):
    """``export rmt`` writing a one-line file through the exporter's writer (generating the real
    solver takes 10-20 s; :func:`test_a_real_export_into_a_planted_folder` runs it)."""
    from attnlimits.numeric.export import write_atomic

    monkeypatch.setattr("attnlimits.verify.rmt.commands.export_rmt",
                        lambda params, path: f"wrote {write_atomic(path, '# a solver')}")


@pytest.fixture
def umask022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _snapshot(paths) -> dict:
    return {str(p): (Path(p).read_bytes(), Path(p).stat().st_mtime_ns) for p in paths}


def _plant(out: Path, outside: Path, *, link_plots: bool) -> list[Path]:
    """User files in ``out`` (at its top, in plots/, named like outputs of no command) and, with
    ``link_plots``, ``out/plots`` a link to ``outside``, a folder elsewhere holding a user file."""
    out.mkdir(parents=True)
    outside.mkdir(parents=True)
    files = [out / "my_thesis_figure.png", out / "notes.txt", out / ".tmp-my-draft.md", out / ".writers-mine",
             outside / "my_thesis_figure.png", outside / "V4.png"]
    if link_plots:
        (out / "plots").symlink_to(outside, target_is_directory=True)
    else:
        (out / "plots").mkdir()
        files.append(out / "plots" / "my_thesis_figure.png")
    for i, f in enumerate(files):
        f.write_bytes(f"user data {i}\n".encode())
        os.utime(f, ns=(1_000_000_000, 1_000_000_000 + i))  # an mtime no write of today can give
    return files


def _main(argv) -> int:
    from attnlimits.verify.cli import main

    return main([str(a) for a in argv])


def _sweep(argv) -> int:
    from attnlimits.verify.sweep.cli import main

    return main([str(a) for a in argv])


def _err_line(capsys) -> str:
    err = [ln for ln in capsys.readouterr().err.strip().splitlines() if "plug-in" not in ln]
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("link_plots", [False, True], ids=["plots-folder", "plots-link-outside"])
def test_planted_files_survive_every_command(tmp_path, toys, cheap_figure, cheap_export, umask022, capsys,
                                            link_plots):
    out, outside = tmp_path / "out", tmp_path / "elsewhere"
    planted = _plant(out, outside, link_plots=link_plots)
    before = _snapshot(planted)
    grid = tmp_path / "grid.toml"
    grid.write_text(TOY_GRID)

    rc = _main(["verify", "ID-parseval", "--out", out])
    if link_plots:  # refused before any claim runs: one line, nothing written through the link
        assert rc == 2
        line = _err_line(capsys)
        assert "--out" in line and "plots is a link to" in line and "outside the folder" in line
        assert not (out / "report.md").exists()
    else:
        assert rc == 0
        capsys.readouterr()
        assert (out / "report.md").exists()
    # a second verify into the same folder (a rerun) removes nothing of the user's either
    assert _main(["verify", "ID-parseval", "--out", out]) == (2 if link_plots else 0)
    assert _main(["explore", "toy-correct", "--budget", "2", "--out", out]) == 0
    assert _main(["figure", "rmt-1a", "--out", out]) == 0 and len(cheap_figure) == 1
    assert _sweep([grid, "--out", out, "--workers", "0", "--no-progress", "--csv"]) == 0
    assert _main(["export", "rmt", "-o", out / "rmt_solver.py"]) == 0
    capsys.readouterr()

    assert _snapshot(planted) == before  # every user file intact: same bytes, same mtime
    assert sorted(p.name for p in outside.iterdir()) == ["V4.png", "my_thesis_figure.png"]
    written = ["points.parquet", "report.md", "rmt-1a.png", "rmt-1a.csv", "sweep.json", "results.csv",
               "rmt_solver.py", MANIFEST] + ([] if link_plots else ["results.json"])
    for name in written:  # umask 022: 0644, not mkstemp's 0600
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o644, name
    assert not (out / LOCK).exists()  # every lock released
    man = read_manifest(out)
    assert set(man) == ({"explore", "figure"} if link_plots else {"verify", "explore", "figure"})
    assert {"rmt-1a.png", "rmt-1a.csv"} <= set(man["figure"]["files"])


@pytest.mark.slow
def test_a_real_export_into_a_planted_folder(tmp_path, umask022, capsys):
    out, outside = tmp_path / "out", tmp_path / "elsewhere"
    planted = _plant(out, outside, link_plots=True)
    before = _snapshot(planted)
    assert _main(["export", "rmt", "-o", out / "rmt_solver.py"]) == 0
    assert _snapshot(planted) == before
    assert stat.S_IMODE((out / "rmt_solver.py").stat().st_mode) == 0o644
    assert "def " in (out / "rmt_solver.py").read_text()


def test_report_removes_only_the_figures_its_manifest_lists(tmp_path, capsys):
    """A rerun removes the previous report's figures that it does not draw again (named on stderr),
    and nothing else: not a user's PNG in plots/, not a file a link in plots/ points to."""
    from test_report import fake_results

    from attnlimits.verify.report import write_report

    out, outside = tmp_path / "r", tmp_path / "elsewhere"
    results = fake_results()
    write_report(results, out, meta={"mode": "quick"})
    plot_of = {c["claim"]: c["plot"] for c in json.loads((out / "results.json").read_text())["claims"] if c["plot"]}
    with_plots = [r for r in results if r.claim in plot_of]
    assert len(with_plots) >= 2
    outside.mkdir()
    user = [out / "plots" / "my_thesis_figure.png", out / "keep.csv", outside / "target.png"]
    for f in user:
        f.write_bytes(b"mine")
    # a user's link in plots/ in the place of a figure of the next run: replaced, never written through
    link = out / plot_of[with_plots[1].claim]
    link.unlink()
    link.symlink_to(outside / "target.png")
    before = _snapshot(user)
    capsys.readouterr()
    write_report([r for r in results if r is not with_plots[0]], out, meta={"mode": "quick"})
    err = capsys.readouterr().err
    gone = plot_of[with_plots[0].claim]
    assert not (out / gone).exists() and gone in err and "removed 1 file(s)" in err
    assert _snapshot(user) == before
    assert not link.is_symlink() and link.read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in (out / "plots").iterdir()) == sorted(
        {Path(p).name for p in plot_of.values()} - {Path(gone).name} | {"my_thesis_figure.png"})
    # without a manifest (a folder of an older version, or the user's own), nothing at all is removed
    (out / MANIFEST).unlink()
    write_report([with_plots[0]], out, meta={"mode": "quick"})
    assert _snapshot(user) == before and link.exists()
    assert "removed" not in capsys.readouterr().err


def test_files_honour_the_umask(tmp_path):
    """The shared writer creates files 0666 less the umask: 0644 under 022, 0664 under 002, 0600
    under 077 (tempfile.mkstemp gave 0600 whatever the umask)."""
    from matplotlib.figure import Figure

    from attnlimits.numeric.export import write_atomic
    from attnlimits.symbolic.files import write_text_atomic
    from attnlimits.verify.outputs import save_figure, write_text

    old = os.umask(0o022)
    try:
        for mask, mode in ((0o022, 0o644), (0o002, 0o664), (0o077, 0o600)):
            os.umask(mask)
            d = tmp_path / f"m{mask:o}"
            d.mkdir()
            fig = Figure()
            fig.subplots().plot([0, 1], [0, 1])
            paths = [write_text_atomic(d / "a.txt", "a"), write_text(d / "b.md", "b"), write_atomic(d / "c.py", "c"),
                     save_figure(fig, d / "d.png")]
            (d / "e.md").write_text("old")  # replacing a file gives the new one the umask's mode too
            os.chmod(d / "e.md", 0o600)
            paths.append(write_text(d / "e.md", "new"))
            for p in paths:
                assert stat.S_IMODE(os.stat(p).st_mode) == mode, (p, oct(mask))
            assert sorted(p.name for p in d.iterdir()) == ["a.txt", "b.md", "c.py", "d.png", "e.md"]  # no temporaries
    finally:
        os.umask(old)


def _live_pid():
    """A process that exists (pid, handle) while the test holds a lock in its name."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    return proc.pid, proc


def _hold(out: Path, pid: int, command="attnlimits explore other-run") -> dict:
    out.mkdir(parents=True, exist_ok=True)
    info = {"pid": pid, "host": socket.gethostname(), "started": "2026-01-02T03:04:05+00:00", "command": command}
    (out / LOCK).write_text(json.dumps(info))
    return info


@pytest.fixture
def no_work(monkeypatch):
    """Every computation the commands could start raises: a test passes only if none started."""
    import attnlimits.verify.claims as C
    import attnlimits.verify.explore.driver as D

    def boom(*a, **k):
        raise AssertionError("computation started")

    monkeypatch.setattr(C, "run_claims", boom)
    monkeypatch.setattr(D, "explore_property", boom)
    replace_panel(monkeypatch, "rmt-1a", boom)
    monkeypatch.setattr("attnlimits.verify.sweep.runner._run_locked", boom)
    monkeypatch.setattr("attnlimits.verify.rmt.commands.export_rmt", boom)
    return boom


def test_a_second_run_into_a_folder_in_use_refuses(tmp_path, toys, no_work, capsys):
    pid, proc = _live_pid()
    try:
        grid = tmp_path / "grid.toml"
        grid.write_text(TOY_GRID)
        for i, argv in enumerate((["verify", "ID-parseval"], ["explore", "toy-correct", "--budget", "2"],
                                  ["figure", "rmt-1a"], None)):
            out = tmp_path / f"busy{i}"
            info = _hold(out, pid)
            t0 = time.perf_counter()
            rc = _main(argv + ["--out", out]) if argv else _sweep([grid, "--out", out, "--workers", "0"])
            assert rc == 2 and time.perf_counter() - t0 < 5
            line = _err_line(capsys)
            for needle in ("is in use by attnlimits explore other-run", f"pid {pid} on {info['host']}",
                           "started 2026-01-02T03:04:05", f"delete {LOCK} there"):
                assert needle in line, (needle, line)
            assert json.loads((out / LOCK).read_text()) == info  # the other run's lock left alone
    finally:
        proc.kill()
        proc.wait()
    # in one process: a second lock on a folder refuses too
    (tmp_path / "one").mkdir()
    with OutputLock(tmp_path / "one", "first"):
        with pytest.raises(R.InputError, match="already being written by this process"):
            OutputLock(tmp_path / "one", "second").acquire()
    assert not (tmp_path / "one" / LOCK).exists()


def test_a_stale_lock_is_taken_over_and_said(tmp_path, toys, capsys):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # a pid that no longer exists on this host
    out = tmp_path / "o"
    _hold(out, proc.pid, command="attnlimits verify V1")
    assert _main(["explore", "toy-correct", "--budget", "2", "--out", out]) == 0
    err = capsys.readouterr().err
    assert f"taking over the lock of an earlier run that is gone (pid {proc.pid}" in err
    assert (out / "report.md").exists() and not (out / LOCK).exists()
    # another host's lock is never taken over
    info = _hold(out, 1, command="attnlimits verify V1")
    info["host"] = "some-other-host"
    (out / LOCK).write_text(json.dumps(info))
    assert _main(["explore", "toy-correct", "--budget", "2", "--out", out]) == 2
    assert "pid 1 on some-other-host" in _err_line(capsys)


def test_an_unwritable_out_fails_before_any_work(tmp_path, toys, no_work, capsys):
    """--out under a regular file (root passes every permission test, so a read-only folder would not
    do): one line naming the option, exit 2, at once, and nothing computed (``no_work`` raises)."""
    afile = tmp_path / "a-file"
    afile.write_text("not a folder")
    bad = afile / "sub"
    grid = tmp_path / "grid.toml"
    grid.write_text(TOY_GRID)
    cases = [(["verify", "ID-parseval", "--out", bad], "--out"),
             (["explore", "toy-correct", "--budget", "2", "--out", bad], "--out"),
             (["figure", "rmt-1a", "--out", bad], "--out"),
             (["export", "rmt", "-o", bad / "solver.py"], "-o/--output"),
             (["verify", "ID-parseval", "--out", afile], "exists and is not a folder")]
    for argv, needle in cases:
        t0 = time.perf_counter()
        assert _main(argv) == 2, argv
        assert time.perf_counter() - t0 < 5, argv
        line = _err_line(capsys)
        assert needle in line and str(afile) in line, (argv, line)
    assert _sweep([grid, "--out", bad, "--workers", "0"]) == 2
    assert "--out" in _err_line(capsys)
    # planned outputs that are folders are refused too
    out = tmp_path / "o"
    (out / "report.md").mkdir(parents=True)
    assert _main(["verify", "ID-parseval", "--out", out]) == 2
    assert "report.md is a folder" in _err_line(capsys)
    with pytest.raises(R.InputError, match="cannot create the folder|cannot write in the folder"):
        check_output_folder("/proc/attnlimits-test")


def test_explore_adds_to_the_table_of_an_earlier_run(tmp_path, toys, capsys):
    import pandas as pd

    from attnlimits.verify.explore import explore

    out = tmp_path / "x"
    first = explore(["toy-correct"], budget=3, seed=0, out=out)
    n1 = len(first.rows)
    second = explore(["toy-planted"], budget=3, seed=1, out=out)
    df = pd.read_parquet(out / "points.parquet")
    assert len(df) == n1 + len(second.rows) and len(second.previous) == n1
    assert set(df["property"]) == {"toy-correct", "toy-planted"}
    assert sorted(set(df["run_seed"])) == [0, 1]
    report = (out / "report.md").read_text()
    assert "## Earlier runs in this folder" in report and "| toy-correct |" in report
    assert (out / "map-toy-correct.png").exists()  # the earlier map is kept
    fresh = explore(["toy-planted"], budget=3, seed=2, out=out, fresh=True)
    df = pd.read_parquet(out / "points.parquet")
    assert len(df) == len(fresh.rows) and set(df["property"]) == {"toy-planted"} and not fresh.previous
    assert not (out / "map-toy-correct.png").exists()  # listed in the manifest: removed by --fresh
    assert "map-toy-correct.png" in capsys.readouterr().err
    # a file named like the table that is not one is refused, not overwritten
    (out / "points.csv").write_text("my,own\n1,2\n")
    with pytest.raises(R.InputError, match="points.csv is there but has no 'property' column"):
        explore(["toy-correct"], budget=2, out=out, csv=True)
    assert (out / "points.csv").read_text() == "my,own\n1,2\n"


def test_sweep_cleanup_removes_only_its_own_temporaries(tmp_path, toys):
    from attnlimits.symbolic.files import TEMP_PREFIX
    from attnlimits.verify.sweep.table import ResultsTable

    out = tmp_path / "s"
    (out / "parts").mkdir(parents=True)
    mine = [out / ".tmp-notes.txt", out / ".writers-of-my-thesis", out / "draft.tmp"]
    for f in mine:
        f.write_text("user")
    ours = [out / f"{TEMP_PREFIX}abc-sweep.json", out / f".writers-{'0' * 32}", out / "parts" / ".tmp-x.parquet"]
    for f in ours:
        f.write_text("left by a crash")
    assert ResultsTable(out).clean_temporaries() == 3
    assert all(f.exists() for f in mine) and not any(f.exists() for f in ours)
