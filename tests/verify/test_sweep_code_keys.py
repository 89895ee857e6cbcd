"""Sweeps keyed on the code: a point computed by other code is stale — reported and
recomputed, or kept with ``reuse_stale`` — and the table shows the newest code's rows only; grid
values are checked by the parameters' validators before anything runs; a missing optional
dependency is one line naming the extra."""
from __future__ import annotations

import argparse

import pytest

from attnlimits.symbolic.result import InputError
from attnlimits.verify.sweep import _toy
from attnlimits.verify.sweep import grid as G
from attnlimits.verify.sweep.cli import EXAMPLE_GRID, missing_extra
from attnlimits.verify.sweep.runner import run_sweep
from attnlimits.verify.sweep.table import ResultsTable

RESULTS = {"toy": _toy.TOY_RESULT}
TEXT = 'command = "toy"\n[axes]\nx = [1, 2, 3]\n'


@pytest.fixture(autouse=True)
def _toy_registered(monkeypatch):
    _toy.register()
    monkeypatch.setattr("attnlimits.verify.sweep.grid.registry", lambda: dict(RESULTS))


def _grid(monkeypatch, fingerprint: str):
    """The grid as parsed by code whose source fingerprint is ``fingerprint`` (nothing is edited)."""
    monkeypatch.setattr(G, "source_fingerprint", lambda command: fingerprint)
    return G.parse_grid(TEXT, results=RESULTS)


def test_code_version_carries_the_source_fingerprint():
    from attnlimits.verify.claims.base import code_fingerprint

    g = G.parse_grid(TEXT, results=RESULTS)
    assert g.code_version.startswith("attnlimits==") and g.code_version.endswith("+src." + code_fingerprint())


def test_new_fingerprint_recomputes_and_reports_stale_points(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    old = _grid(monkeypatch, "0" * 16)
    s = run_sweep(old, out, workers=0, progress=False)
    assert (s.done, s.stale) == (3, 0)
    rows = ResultsTable(out).rows()
    assert {r["code_version"] for r in rows} == {old.code_version}

    new = _grid(monkeypatch, "1" * 16)
    assert new.code_version != old.code_version and new.keys != old.keys
    s = run_sweep(new, out, workers=0, progress=False)
    err = capsys.readouterr().err
    assert (s.done, s.skipped, s.stale, s.stale_reused) == (3, 0, 3, 0)
    assert "3 point(s) in the table were made by other code" in err and old.code_version in err
    assert "3 recomputed (made by other code)" in s.line()
    rows = ResultsTable(out).rows()
    assert len(rows) == 3 and {r["code_version"] for r in rows} == {new.code_version}  # newest code only
    assert len(ResultsTable(out).read_all()) == 6                                     # both kept on disk

    again = run_sweep(new, out, workers=0, progress=False)  # nothing stale any more
    assert (again.done, again.skipped, again.stale) == (0, 3, 0)


def test_reuse_stale_keeps_the_old_points(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    old = _grid(monkeypatch, "0" * 16)
    run_sweep(old, out, workers=0, progress=False)
    new = _grid(monkeypatch, "2" * 16)
    s = run_sweep(new, out, workers=0, progress=False, reuse_stale=True)
    assert (s.done, s.skipped, s.stale, s.stale_reused) == (0, 3, 0, 3)
    assert "kept as they are (--reuse-stale)" in capsys.readouterr().err
    assert {r["code_version"] for r in ResultsTable(out).rows()} == {old.code_version}


def test_the_help_grid_is_valid():
    from attnlimits.symbolic.result import discover_results

    g = G.parse_grid(EXAMPLE_GRID, results=discover_results())
    assert g.command_name == "slr population" and len(g) == 15


def test_grid_values_checked_by_the_command_validators():
    from attnlimits.symbolic.result import discover_results

    bad = 'command = "slr population"\n[fixed]\nnu = 2\nL = 3\n[axes]\nactivation = ["softmax", "linear"]\n'
    with pytest.raises(InputError, match=r"^<grid>:6: axis activation: 'linear' is ambiguous"):
        G.parse_grid(bad, results=discover_results())
    fixed = 'command = "slr replica"\n[fixed]\nactivation = ["softmax", "nope"]\n[axes]\nalpha = [1, 2]\n'
    with pytest.raises(InputError, match=r"^<grid>:3: activation: .*nope"):
        G.parse_grid(fixed, results=discover_results())


def test_missing_optional_dependency_is_one_line():
    exc = missing_extra(ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow"))
    assert isinstance(exc, InputError) and "pip install 'attnlimits[sweep]'" in str(exc)
    other = ModuleNotFoundError("No module named 'foo'", name="foo")
    assert missing_extra(other) is other


def test_missing_pyarrow_through_the_command(monkeypatch, capsys, tmp_path):
    import builtins

    from attnlimits.verify.sweep import cli

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.split(".")[0] == "pyarrow" or name in ("attnlimits.verify.sweep.plot", "plot"):
            raise ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    args = argparse.Namespace(target="plot", directory=str(tmp_path), x="x", y="f", hue=None, where=[],
                              output=None, logx=False, logy=False, out=None, scheduler=None, workers=None,
                              force=False, retry_failed=False, reuse_stale=False, csv=False, check=False,
                              no_progress=False)
    assert cli.run(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "attnlimits[sweep]" in err


def test_output_paths_stay_inside_the_output_folder(tmp_path):
    out = tmp_path / "out"
    for bad, line in ((f'log = "{tmp_path / "elsewhere.jsonl"}"', 3), ('log = "../escape.jsonl"', 3),
                      ('log = "/etc/x.jsonl"', 3)):
        g = G.parse_grid(f'command = "toy"\n[fixed]\n{bad}\n[axes]\nx = [1]\n', source="grid.toml", results=RESULTS)
        with pytest.raises(InputError, match=rf"^grid.toml:{line}: log = .* writes outside the output folder"):
            run_sweep(g, out, workers=0, progress=False)
        assert not out.exists()  # refused before anything was written
    on_axis = G.parse_grid('command = "toy"\n[axes]\nx = [1]\nlog = ["a.jsonl", "/tmp/b.jsonl"]\n',
                           source="grid.toml", results=RESULTS)
    with pytest.raises(InputError, match=r"^grid.toml:4: log = '/tmp/b.jsonl'"):
        on_axis.check_outputs(out)
    # a relative path is written inside the output folder
    g = G.parse_grid('command = "toy"\n[fixed]\nlog = "sub/log.jsonl"\n[axes]\nx = [1, 2]\n', results=RESULTS)
    (out / "sub").mkdir(parents=True)
    s = run_sweep(g, out, workers=0, progress=False)
    assert s.done == 2 and len((out / "sub" / "log.jsonl").read_text().splitlines()) == 2
