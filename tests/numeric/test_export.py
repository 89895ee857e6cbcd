"""Exported solvers: standalone (numpy-only / mpmath-only) and equal to the in-process CLI."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from attnlimits.verify.cli import main as cli_main

ARGS = ["--c", "0.5", "--gamma", "0.01,0.1", "--snr", "1", "--wk", "1,0", "--wq", "1,0", "--json"]

#: run a file with some top-level modules made unimportable
BLOCKER = textwrap.dedent(
    """
    import sys, runpy, importlib.abc
    blocked = set(sys.argv[1].split(','))
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split('.')[0] in blocked:
                raise ImportError(f'{name} is blocked in this test')
    sys.meta_path.insert(0, Block())
    path = sys.argv[2]
    sys.argv = [path] + sys.argv[3:]
    runpy.run_path(path, run_name='__main__')
    """
)
PACKAGE = "sympy,scipy,torch,symbolic,numeric,derivations,verify,matplotlib"


def run_blocked(path, blocked, args):
    return subprocess.run([sys.executable, "-c", BLOCKER, blocked, str(path), *args],
                          capture_output=True, text=True, timeout=300)


def cli_json(args, capsys):
    assert cli_main(args) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("backend", ["numpy", "mpmath"])
def test_export_round_trip(tmp_path, capsys, backend):
    path = tmp_path / f"rmt_tanh_{backend}.py"
    assert cli_main(["export", "rmt", "--activation", "tanh", "--backend", backend, "-o", str(path)]) == 0
    assert "wrote" in capsys.readouterr().out
    text = path.read_text()
    assert "Source-expression hash:" in text and "SymPy" in text
    other = "mpmath" if backend == "numpy" else "numpy"
    blocked = f"{PACKAGE},{other}"
    extra = ["--digits", "20"] if backend == "mpmath" else []
    proc = run_blocked(path, blocked, ARGS + extra)
    assert proc.returncode == 0, proc.stderr
    exported = json.loads(proc.stdout)
    cli_args = ["rmt", "--activation", "tanh", *ARGS] + (["--digits", "20"] if backend == "mpmath" else [])
    inproc = cli_json(cli_args, capsys)
    assert [r["gamma"] for r in exported] == [r["gamma"] for r in inproc]
    assert set(exported[0]) == set(inproc[0]) - {"threads"}  # the CLI also records its thread setting
    # the echoed inputs agree too: the default is the zero diagonal in both
    assert {k: exported[0][k] for k in ("diagonal", "c", "snr", "wk", "wq")} == \
        {k: inproc[0][k] for k in ("diagonal", "c", "snr", "wk", "wq")}
    assert exported[0]["diagonal"] == "zero"
    (kept,) = json.loads(run_blocked(path, blocked, ["--c", "0.5", "--gamma", "0.1", "--kappa", "0.5", "--json"]
                                     + extra).stdout)
    assert kept["diagonal"] == "keep" and float(kept["kappa"]) == 0.5
    for a, b in zip(exported, inproc):
        assert abs(a["E_attention"] - b["E_attention"]) <= 1e-12
        assert abs(a["E_ridge"] - b["E_ridge"]) <= 1e-12
    help_proc = run_blocked(path, blocked, ["--help"])
    assert help_proc.returncode == 0 and "--gamma" in help_proc.stdout and "example" in help_proc.stdout
    bad = run_blocked(path, blocked, ["--c", "-1", "--gamma", "1"])
    assert bad.returncode == 2 and "error: c must be > 0" in bad.stderr and "Traceback" not in bad.stderr


def test_export_to_unwritable_path_is_one_line(capsys):
    assert cli_main(["export", "rmt", "--activation", "tanh", "-o", "/nonexistent-dir/x.py"]) == 2
    err = capsys.readouterr().err
    assert ("cannot write" in err or "does not exist" in err) and len(err.strip().splitlines()) == 1


def test_export_write_failing_partway_keeps_the_previous_file(tmp_path, monkeypatch, capsys):
    """A write that fails halfway (disk full) leaves the previous exported file intact."""
    import builtins

    from attnlimits.symbolic import files

    path = tmp_path / "rmt.py"
    assert cli_main(["export", "rmt", "--activation", "tanh", "-o", str(path)]) == 0
    good = path.read_text()
    real_open = builtins.open

    class Half:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.fh.close()

        def write(self, text):
            self.fh.write(text[: len(text) // 2])
            raise OSError(28, "No space left on device")

    # the package's one atomic writer opens its temporary file by name: make that write fail halfway
    monkeypatch.setattr(files, "open", lambda f, *a, **k: Half(real_open(f, *a, **k)), raising=False)
    assert cli_main(["export", "rmt", "--activation", "relu", "-o", str(path)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert path.read_text() == good and [p.name for p in tmp_path.iterdir()] == ["rmt.py"]
