"""``attnlimits export slr``: the RS and BO solvers as standalone files, round trip against the CLI's run functions.

The exported file runs in a fresh interpreter (``python -I``, from a temporary folder) with every
attnlimits package, SymPy, mpmath and torch made unimportable; its JSON rows must equal the
in-process rows of :func:`attnlimits.verify.slr.replica.run_replica` /
:func:`attnlimits.verify.slr.bayes_optimal.run_bayes_optimal` for the same parameters (the same code on the
same frozen rule: identical numbers; 1e-12 relative is allowed for platform rounding only).
"""
from __future__ import annotations

import ast
import json
import math
import subprocess
import sys

import textwrap

import pytest

from attnlimits.verify.cli import main as cli_main

#: run a file with some top-level modules made unimportable (as tests/numeric/test_export.py does)
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

BLOCKED = "sympy,mpmath,torch,symbolic,numeric,derivations,verify,matplotlib,attnlimits"
TIMING = {"seconds", "prox_seconds"}  # wall-clock fields of the rows
PROJECT = {"symbolic", "numeric", "derivations", "verify", "attnlimits"}


def run_file(path, args, cwd):
    return subprocess.run([sys.executable, "-I", "-c", BLOCKER, BLOCKED, str(path), *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


def assert_same_rows(exported, inproc):
    from attnlimits.verify.cli import format_rows

    inproc = json.loads(format_rows(inproc, fmt="json"))  # as the CLI prints them (non-finite -> null)
    assert len(exported) == len(inproc)
    for a, b in zip(exported, inproc):
        b = {k: v for k, v in b.items() if k not in TIMING}
        a = {k: v for k, v in a.items() if k not in TIMING}
        assert set(a) == set(b)
        for k, v in b.items():
            if isinstance(v, float) and math.isfinite(v):
                assert a[k] == pytest.approx(v, rel=1e-12, abs=1e-300), k
            else:
                assert a[k] == v, k


def imported_modules(text):
    out = set()
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.Import):
            out |= {a.name.split(".")[0] for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            assert n.level == 0, "relative import in an exported file"
            out.add(n.module.split(".")[0])
    return out


def check_text(text, *hash_labels):
    assert text.startswith('"""Standalone')
    assert "Source-expression hash" in text and "SymPy 1." in text and "How to run:" in text
    for label in hash_labels:
        assert label in text
    mods = imported_modules(text)
    assert not mods & PROJECT, mods & PROJECT
    assert mods <= set(sys.stdlib_module_names) | {"numpy", "scipy", "mpmath"}


def test_replica_export_round_trip(tmp_path, capsys):
    from attnlimits.derivations.slr.result import REPLICA_COMMAND
    from attnlimits.verify.slr.replica import run_replica

    path = tmp_path / "rs_softmax.py"
    assert cli_main(["export", "slr", "--solver", "replica", "--activation", "softmax", "--L", "2",
                     "-o", str(path)]) == 0
    assert "wrote" in capsys.readouterr().out
    text = path.read_text()
    check_text(text, "L=2:")
    assert "import mpmath" not in text
    args = {"alpha": "2,4", "lam": "0.1", "delta": "0.1", "points": "128", "replicates": "2", "branches": "informed"}
    proc = run_file(path, [*(x for k, v in args.items() for x in (f"--{k}", v)), "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    exported = json.loads(proc.stdout)
    inproc = list(run_replica(REPLICA_COMMAND.parse({**args, "activation": "softmax", "L": "2"})))
    assert_same_rows(exported, inproc)
    assert [r["alpha"] for r in exported] == [2.0, 4.0]
    # the exported command line: help with an example, bad input in one line with exit 2
    help_proc = run_file(path, ["--help"], tmp_path)
    assert help_proc.returncode == 0 and "--alpha" in help_proc.stdout and "examples:" in help_proc.stdout
    assert "--activation" not in help_proc.stdout  # fixed at export time
    for bad, msg in ((["--points", "100"], "power of 2"), (["--model", "spiked", "--nu", "inf"], "max-SLR only")):
        b = run_file(path, bad, tmp_path)
        assert b.returncode == 2 and msg in b.stderr and len(b.stderr.strip().splitlines()) == 1, b.stderr


def test_bayes_optimal_export_round_trip(tmp_path, capsys):
    from attnlimits.derivations.slr.result import BAYES_OPTIMAL_COMMAND
    from attnlimits.verify.slr.bayes_optimal import run_bayes_optimal

    path = tmp_path / "bo_L2.py"
    assert cli_main(["export", "slr", "--solver", "bayes-optimal", "--L", "2", "--nu", "2", "-o", str(path)]) == 0
    capsys.readouterr()
    text = path.read_text()
    check_text(text, "BO state evolution, L=2", "population Bayes risk (bayes_spiked)")
    args = {"alpha": "1,4", "delta": "0.1", "points": "256", "replicates": "2"}
    proc = run_file(path, [*(x for k, v in args.items() for x in (f"--{k}", v)), "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    exported = json.loads(proc.stdout)
    inproc = run_bayes_optimal(BAYES_OPTIMAL_COMMAND.parse({**args, "model": "spiked", "nu": "2", "L": "2"}))
    assert_same_rows(exported, inproc)
    assert all(r["E_BO"] > r["E_B_snr"] - 1e-12 for r in exported)  # E_BO >= E_B^pop(nu q_k) (docs/slr.md §11)
    b = run_file(path, ["--delta", "0"], tmp_path)
    assert b.returncode == 2 and "--delta must be > 0" in b.stderr and len(b.stderr.strip().splitlines()) == 1


def test_bayes_optimal_max_export_round_trip(tmp_path, capsys):
    """max-SLR, ν = ∞, L = 2: the exported file carries the max-SLR kernels and the max path of the solver
    (one code path with :func:`attnlimits.verify.slr.bayes_optimal.bo_state_evolution`) and prints the in-process rows."""
    from attnlimits.derivations.slr.result import BAYES_OPTIMAL_COMMAND
    from attnlimits.verify.slr.bayes_optimal import run_bayes_optimal

    path = tmp_path / "bo_max.py"
    assert cli_main(["export", "slr", "--solver", "bayes-optimal", "--model", "max", "--nu", "inf", "--L", "2",
                     "-o", str(path)]) == 0
    assert "BO state evolution, max, L=2" in capsys.readouterr().out
    text = path.read_text()
    check_text(text, "BO state evolution (max-SLR), L=2")
    assert "def bomax_fixed_point" in text and "def make_inner_rule" in text and "bomax_test_error" in text
    assert "BAYES_SOURCES" not in text and "def bayes_risk" not in text and "import mpmath" not in text
    args = {"alpha": "2,4", "delta": "0.1", "points": "256", "replicates": "2"}
    proc = run_file(path, [*(x for k, v in args.items() for x in (f"--{k}", v)), "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    exported = json.loads(proc.stdout)
    inproc = run_bayes_optimal(BAYES_OPTIMAL_COMMAND.parse({**args, "model": "max", "nu": "inf", "L": "2"}))
    assert_same_rows(exported, inproc)
    assert all(r["model"] == "max" and r["nu"] == math.inf for r in inproc)
    # E_BO >= E_B^max(q_k) (docs/slr.md §11, max-SLR: E_BO = 1 - q_v [1 - E_B^max(q_k)])
    assert all(r["E_BO"] > r["E_B_snr"] - 1e-12 for r in exported)
    # finite ν through the same file (--nu is an option; the model is fixed): the Gauss–Hermite inner rule
    args = {"alpha": "4", "delta": "0.1", "nu": "2", "points": "64", "replicates": "2", "inner_points": "8"}
    proc = run_file(path, [*(x for k, v in args.items() for x in (f"--{k.replace('_', '-')}", v)), "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    inproc = run_bayes_optimal(BAYES_OPTIMAL_COMMAND.parse({**args, "model": "max", "L": "2"}))
    assert inproc[0]["inner_rule"].startswith("inner gauss-hermite 8/dim") and inproc[0]["nu"] == 2.0
    assert_same_rows(json.loads(proc.stdout), inproc)
    help_proc = run_file(path, ["--help"], tmp_path)
    assert help_proc.returncode == 0 and "--model" not in help_proc.stdout and "--inner-points" in help_proc.stdout


@pytest.mark.parametrize("argv, msg", [
    (["--solver", "gibbs"], "--solver must be one of replica, bayes-optimal"),
    (["--solver", "replica", "--activation", "erf_learned"], "learned"),
    (["--solver", "replica", "--L", "1"], "--L must be >= 2"),
    (["--solver", "replica", "--model", "spiked", "--nu", "inf"], "max-SLR only"),
    (["--solver", "bayes-optimal", "--activation", "softmax"], "--solver replica only"),
    (["--solver", "bayes-optimal", "--model", "spiked", "--nu", "inf"], "must be finite and >= 0 for spiked-SLR"),
    (["--solver", "bayes-optimal", "--model", "max", "--nu", "-1"], "--nu must be >= 0"),
])
def test_export_bad_input_is_one_line(tmp_path, capsys, argv, msg):
    assert cli_main(["export", "slr", *argv, "-o", str(tmp_path / "x.py")]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "x.py").exists()


def test_export_help_has_example(capsys):
    with pytest.raises(SystemExit) as exc:
        cli_main(["export", "slr", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--solver" in out and "attnlimits export slr --solver replica" in out


@pytest.mark.slow
def test_replica_export_tune_branches_and_length_law(tmp_path, capsys):
    """λ tuning, --branches and a variable-length law through the exported file (minutes)."""
    from attnlimits.derivations.slr.result import REPLICA_COMMAND
    from attnlimits.verify.slr.replica import run_replica

    path = tmp_path / "rs_lin.py"
    assert cli_main(["export", "slr", "--solver", "replica", "--activation", "linear_uncentred", "--L", "2,3",
                     "--model", "max", "--nu", "inf", "-o", str(path)]) == 0
    capsys.readouterr()
    for extra in ({"lam": "tune"}, {"lam": "0.1", "branches": "all"}):
        args = {"alpha": "4", "delta": "0.1", "points": "256", "replicates": "2", **extra}
        argv = [x for k, v in args.items() for x in ((f"--{k}",) if v is True else (f"--{k}", v))]
        proc = run_file(path, [*argv, "--json"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        inproc = list(run_replica(REPLICA_COMMAND.parse({**args, "activation": "linear_uncentred", "L": "2,3",
                                                         "model": "max", "nu": "inf"})))
        assert_same_rows(json.loads(proc.stdout), inproc)


def test_replica_export_with_a_loss_and_two_ridges_round_trip(tmp_path, capsys):
    """A non-square loss is fixed in the file (its joint-prox kernels printed), --lam-k/--lam-v stay options; the
    rows equal the in-process ones (same code, same rule)."""
    from attnlimits.derivations.slr.result import REPLICA_COMMAND
    from attnlimits.verify.slr.replica import run_replica

    path = tmp_path / "rs_huber.py"
    assert cli_main(["export", "slr", "--solver", "replica", "--activation", "softmax", "--L", "2", "--loss",
                     "huber:1", "-o", str(path)]) == 0
    assert "loss huber:1" in capsys.readouterr().out
    text = path.read_text()
    check_text(text, "L=2:")
    assert "def joint_start" in text
    args = {"alpha": "4", "lam": "2", "lam-v": "1", "delta": "1", "points": "128", "replicates": "2",
            "branches": "informed"}
    proc = run_file(path, [*(x for k, v in args.items() for x in (f"--{k}", v)), "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    exported = json.loads(proc.stdout)
    inproc = list(run_replica(REPLICA_COMMAND.parse(
        {**{k.replace("-", "_"): v for k, v in args.items()}, "activation": "softmax", "L": "2", "loss": "huber:1"})))
    assert_same_rows(exported, inproc)
    assert exported[0]["loss"] == "huber:1" and exported[0]["lam_v"] == 1.0 and exported[0]["lam_k"] == 2.0
    help_proc = run_file(path, ["--help"], tmp_path)
    assert "--loss" not in help_proc.stdout and "--lam-v" in help_proc.stdout
