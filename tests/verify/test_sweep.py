"""Sweeps: grid files, point keys, the resumable table, failures, plots, and faults on a
real ``distributed.LocalCluster`` with two worker processes (a killed worker, a killed client,
Ctrl-C): no finished point is lost and a rerun completes only what is missing.

Expected values are independent of the code under test: the toy command computes
``f = x*y + seed + row`` with ``f_error = |x|/10`` (verify/sweep/_toyrun.py), so every row and
every mean/standard error below is written down by hand.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from attnlimits.symbolic.result import InputError
from attnlimits.verify.sweep import _toy
from attnlimits.verify.sweep.cli import add_subparser, main, run
from attnlimits.verify.sweep.grid import parse_grid, point_key
from attnlimits.verify.sweep.plot import curves, plot_table
from attnlimits.verify.sweep.runner import run_sweep
from attnlimits.verify.sweep.table import ResultsTable
from attnlimits.verify.sweep.worker import thread_settings

ROOT = Path(__file__).resolve().parents[2]
RESULTS = {"toy": _toy.TOY_RESULT}


@pytest.fixture(autouse=True)
def _toy_registered(monkeypatch):
    """Only the toy result: the CLI tests must not pay for importing every installed plug-in."""
    _toy.register()
    monkeypatch.setattr("attnlimits.verify.sweep.grid.registry", lambda: dict(RESULTS))


def grid(text: str, source="grid.toml"):
    return parse_grid(text, source=source, results=RESULTS)


def write_grid(tmp_path: Path, text: str, name="grid.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def log_lines(path: Path) -> list[dict]:
    return [json.loads(s) for s in path.read_text().splitlines()] if path.exists() else []


def wait_for(cond, timeout: float, what: str):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def n_ok(out) -> int:
    return sum(1 for s in ResultsTable(out).statuses().values() if s == "ok")


# ------------------------------------------------------------------------------------------------
# grid files
# ------------------------------------------------------------------------------------------------
def test_grid_product_ranges_and_order():
    g = grid('''command = "toy"
[fixed]
y = 2
[axes]
x = { start = 0, stop = 1, num = 5 }
seed = { start = 0, stop = 6, step = 3 }
sleep = { start = 1e-3, stop = 1e-1, num = 3, log = true }
''')
    assert g.axes["x"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert g.axes["seed"] == [0, 3, 6] and all(isinstance(s, int) for s in g.axes["seed"])
    assert g.axes["sleep"] == [1e-3, 1e-2, 1e-1]
    assert len(g) == 5 * 3 * 3
    # first axis varies slowest; defaults filled in; fixed value parsed
    assert [p["x"] for p in g.points[:9]] == [0.0] * 9
    assert [p["seed"] for p in g.points[:3]] == [0, 0, 0]
    assert g.points[0] == {**g.points[0], "y": 2.0, "rows": 1, "kind": "a"}
    assert len(set(g.keys)) == len(g)
    assert g.chains() == [[i] for i in range(len(g))]  # toy has no expensive axis


def test_grid_zip_groups_and_mode_zip():
    g = grid('''command = "toy"
zip = [["x", "y"]]
[axes]
x = [1, 2, 3]
y = [10, 20, 30]
seed = [0, 1]
''')
    assert [(p["x"], p["y"], p["seed"]) for p in g.points] == [
        (1, 10, 0), (1, 10, 1), (2, 20, 0), (2, 20, 1), (3, 30, 0), (3, 30, 1)]
    g = grid('command = "toy"\nmode = "zip"\n[axes]\nx = [1, 2]\nseed = [5, 6]\n')
    assert [(p["x"], p["seed"]) for p in g.points] == [(1, 5), (2, 6)]


def test_grid_chains_follow_expensive_axes():
    g = grid('command = "toy chain"\n[axes]\nseed = [0, 1]\nx = [0.3, 0.1, 0.2]\n')
    assert g.together == ("x",)
    chains = g.chains()
    assert len(chains) == 2
    assert [[g.points[i]["x"] for i in c] for c in chains] == [[0.3, 0.1, 0.2]] * 2  # grid order kept
    g = grid('command = "toy"\ntogether = ["seed"]\n[axes]\nx = [1, 2]\nseed = [0, 1, 2]\n')
    assert [len(c) for c in g.chains()] == [3, 3]


BAD = [
    ('command = "toyy"\n', 1, "unknown command 'toyy'; known: toy, toy chain, toy merge"),
    ('command = "toy"\n[fixed]\ny = 1\n[axes]\nx = [1]\nw = [1, 2]\n', 6, "unknown parameter 'w' of toy"),
    ('command = "toy"\n[fixed]\nsleep = -1\n[axes]\nx = [1]\n', 3, "--sleep must be >= 0"),
    ('command = "toy"\n[axes]\nx = [1, 2]\nseed = [0, -3]\n', 4, "axis seed: --seed must be >= 0, got -3"),
    ('command = "toy"\n[axes]\nx = [1, "a"]\n', 3, "axis x: --x must be a number, got 'a'"),
    ('command = "toy"\n[axes]\nkind = ["a", "c"]\nx = [1]\n', 3, "must be one of a, b"),
    ('command = "toy"\n[fixed]\ny = 2\n', 1, "toy needs x: give it under [fixed] or [axes]"),
    ('command = "toy"\n\n[axes\nx = [1]\n', 3, "invalid TOML"),
    ('command = "toy"\nmodee = "zip"\n[axes]\nx = [1]\n', 2, "unknown key 'modee'"),
    ('command = "toy"\n[axes]\nx = { start = 1, stop = 2, nun = 3 }\n', 3, "unknown range key(s) nun"),
    ('command = "toy"\n[axes]\nx = { start = 0, stop = 2, num = 3, log = true }\n', 3, "log range needs start > 0"),
    ('command = "toy"\n[axes]\nx = { start = 0, stop = 2 }\n', 3, "exactly one of num and step"),
    ('command = "toy"\n[axes]\nx = { start = 0, stop = 2, step = -1 }\n', 3, "does not lead from"),
    ('command = "toy"\n[axes]\nx = []\n', 3, "axis x: is empty"),
    ('command = "toy"\n[fixed]\nx = [1, 2]\n', 3, "x takes one value; to sweep it, put the list under [axes]"),
    ('command = "toy"\n[fixed]\nx = 1\n[axes]\nx = [2]\n', 5, "both fixed and an axis"),
    ('command = "toy"\nzip = [["x", "seed"]]\n[axes]\nx = [1, 2]\nseed = [0]\n', 2, "equal lengths: x has 2, seed has 1"),
    ('command = "toy"\ntogether = ["y"]\n[axes]\nx = [1]\n', 2, "together names 'y', which is not an axis"),
    ('command = "toy"\n[axes]\nx = [1, 1]\n', 2, "the same point twice"),
]


@pytest.mark.parametrize("text,line,msg", BAD, ids=[b[2][:30] for b in BAD])
def test_grid_errors_are_one_line_with_the_line_number(text, line, msg):
    with pytest.raises(InputError) as ei:
        grid(text)
    text_err = str(ei.value)
    assert "\n" not in text_err
    assert text_err.startswith(f"grid.toml:{line}: "), text_err
    assert msg in text_err, text_err


def test_cli_bad_grid_exit_2_one_line(tmp_path, capsys):
    p = write_grid(tmp_path, 'command = "toy"\n[fixed]\ny = 1\n[axes]\nx = [1, 2]\nseeds = [0]\n')
    rc = main([str(p), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert err[-1] == (f"attnlimits sweep: error: {p}:6: unknown parameter 'seeds' of toy; known: x, y, seed, "
                       "rows, sleep, work, fail_above, input_error_below, log, die_at, die_flag, kind, z, unnamed")
    assert not (tmp_path / "out").exists()  # validated before anything ran
    assert main([str(tmp_path / "missing.toml"), "--out", "x"]) == 2
    assert "cannot read grid file" in capsys.readouterr().err


def test_point_key_depends_on_command_parameters_and_code_version():
    a = grid('command = "toy"\n[axes]\nx = [1]\n')
    b = grid('command = "toy"\n[fixed]\ny = 1.0\nkind = "a"\n[axes]\nx = [1.0]\n')  # defaults spelled out
    c = grid('command = "toy"\ncode_version = "v2"\n[axes]\nx = [1]\n')
    d = grid('command = "toy chain"\n[axes]\nx = [1]\n')
    e = grid('command = "toy"\n[axes]\nx = [1.5]\n')
    assert a.keys == b.keys
    assert len({a.keys[0], c.keys[0], d.keys[0], e.keys[0]}) == 4
    assert a.keys[0] == point_key("toy", a.points[0], a.code_version)
    assert c.code_version == "v2" and a.code_version.startswith("attnlimits==")


# ------------------------------------------------------------------------------------------------
# the table: resume, force, failures (in this process: workers=0)
# ------------------------------------------------------------------------------------------------
def test_resume_force_and_failure_rows(tmp_path):
    log = tmp_path / "out" / "log.jsonl"  # output files stay inside the output folder
    text = f'command = "toy"\n[fixed]\nfail_above = 2.5\nlog = "{log}"\n[axes]\nx = [1, 2, 3]\nseed = [0, 1]\n'
    out = tmp_path / "out"
    s = run_sweep(grid(text), out, workers=0, progress=False)
    assert (s.planned, s.skipped, s.done, s.failed) == (6, 0, 4, 2)
    rows = ResultsTable(out).rows()
    assert len(rows) == 6
    ok = sorted((r["x"], r["seed"], r["f"], r["f_error"]) for r in rows if r["status"] == "ok")
    assert ok == [(1.0, 0, 1.0, 0.1), (1.0, 1, 2.0, 0.1), (2.0, 0, 2.0, 0.2), (2.0, 1, 3.0, 0.2)]
    failed = [r for r in rows if r["status"] == "failed"]
    assert sorted(r["x"] for r in failed) == [3.0, 3.0]
    for r in failed:
        assert r["error"].startswith("ValueError: toy diverges for x = 3 > 2.5 [at _toyrun.py:")
        assert "\n" not in r["error"] and r["f"] is None
    for r in rows:
        assert r["seed"] in (0, 1) and r["elapsed_s"] >= 0 and r["command"] == "toy"
        assert json.loads(r["versions"])["pyarrow"] and r["worker"]
    attempts = {r["point_key"]: r["attempt"] for r in rows}

    s = run_sweep(grid(text), out, workers=0, progress=False)  # resume: nothing to do
    assert (s.skipped, s.done, s.failed) == (6, 0, 0)
    assert len(log_lines(log)) == 4
    s = run_sweep(grid(text), out, workers=0, progress=False, retry_failed=True)
    assert (s.skipped, s.to_run, s.failed) == (4, 2, 2)
    grown = text.replace("x = [1, 2, 3]", "x = [1, 2, 3, 0.5]")
    s = run_sweep(grid(grown), out, workers=0, progress=False)  # a grown grid runs only the new points
    assert (s.skipped, s.done) == (6, 2)
    assert len(log_lines(log)) == 6
    s = run_sweep(grid(text), out, workers=0, progress=False, force=True)
    assert (s.skipped, s.done, s.failed) == (0, 4, 2)
    now = {r["point_key"]: r["attempt"] for r in ResultsTable(out).rows()}
    assert len(now) == 8 and all(now[k] != a for k, a in attempts.items())  # latest attempt wins
    assert len(ResultsTable(out).read_all()) == 6 + 2 + 2 + 6  # every attempt is kept on disk
    man = json.loads((out / "sweep.json").read_text())
    assert man["command"] == "toy" and len(man["runs"]) == 5


@pytest.mark.parametrize("workers", [0, "dask"])
def test_merged_chains_one_call_each_rows_back_to_points(tmp_path, workers, request):
    client = request.getfixturevalue("client") if workers == "dask" else None
    log = tmp_path / "out" / "log.jsonl"  # a relative output path is taken inside each run's folder
    text = 'command = "toy merge"\n[fixed]\nlog = "log.jsonl"\n[axes]\nx = [1, 2]\nz = [0.5, 0.25, 3]\n'
    g = grid(text)
    assert g.together == ("z",) and g.merge and [len(c) for c in g.chains()] == [3, 3]
    s = run_sweep(g, tmp_path / "out", client=client, workers=0 if client is None else None, progress=False)
    assert (s.done, s.failed) == (6, 0)
    rows = ResultsTable(tmp_path / "out").rows()
    assert sorted((r["x"], r["z"], r["f"], r["calls_z"]) for r in rows) == [
        (1.0, 0.25, 1.25, 3), (1.0, 0.5, 1.5, 3), (1.0, 3.0, 4.0, 3),
        (2.0, 0.25, 2.25, 3), (2.0, 0.5, 2.5, 3), (2.0, 3.0, 5.0, 3)]  # each from one call of 3 z
    assert len({r["point_key"] for r in rows}) == 6 and len(log_lines(log)) == 2
    # the call fails (z = 3 > 2.5): every point of the chain runs alone, errors stay per point
    out2 = tmp_path / "out2"
    s = run_sweep(grid(text.replace("[fixed]", "[fixed]\nfail_above = 2.5")), out2, client=client,
                  workers=0 if client is None else None, progress=False)
    assert (s.done, s.failed) == (4, 2)
    assert sorted(r["z"] for r in ResultsTable(out2).rows() if r["status"] == "failed") == [3.0, 3.0]
    # rows that do not name their z: one call per point
    s = run_sweep(grid(text.replace("[fixed]", "[fixed]\nunnamed = true")), tmp_path / "out3", client=client,
                  workers=0 if client is None else None, progress=False)
    assert s.done == 6 and {r["calls_z"] for r in ResultsTable(tmp_path / "out3").rows()} == {1}
    assert not grid(text.replace("[fixed]", "merge = false\n[fixed]")).merge
    assert not grid('command = "toy merge"\n[fixed]\nx = 1\n[axes]\nz = [[1, 2], [3]]\n').merge  # list values


def test_command_input_error_and_several_rows(tmp_path):
    out = tmp_path / "out"
    g = grid('command = "toy"\n[fixed]\nrows = 3\ninput_error_below = 0\n[axes]\nx = [-1, 2]\n')
    run_sweep(g, out, workers=0, progress=False, csv=True)
    rows = ResultsTable(out).rows()
    bad = [r for r in rows if r["status"] == "failed"]
    assert len(bad) == 1 and bad[0]["error"].startswith("InputError: --x must be >= 0, got -1")
    good = sorted((r["row_index"], r["f"]) for r in rows if r["status"] == "ok")
    assert good == [(0, 2.0), (1, 3.0), (2, 4.0)]
    header = (out / "results.csv").read_text().splitlines()[0].split(",")
    assert header[:3] == ["x", "y", "seed"] and "point_key" in header and "status" in header
    assert len((out / "results.csv").read_text().splitlines()) == 1 + 4


def test_table_survives_crash_debris_and_compacts(tmp_path):
    out = tmp_path / "out"
    run_sweep(grid('command = "toy"\n[axes]\nx = [1, 2, 3, 4]\n'), out, workers=0, progress=False)
    t = ResultsTable(out)
    before = sorted(map(tuple, (sorted(r.items()) for r in t.rows())))
    (t.parts / ".tmp-crashed.parquet").write_bytes(b"PAR1 half a file")  # killed mid-write
    (t.parts / "part-broken.parquet").write_bytes(b"not parquet")  # damaged disk
    with pytest.warns(UserWarning, match="part-broken.parquet is damaged.*moved to .*damaged"):
        assert len(t.rows()) == 4
    assert not (t.parts / "part-broken.parquet").exists() and (out / "damaged" / "part-broken.parquet").exists()
    assert t.clean_temporaries() == 1
    assert t.compact() == 4 and len(t.part_files()) == 1
    assert sorted(map(tuple, (sorted(r.items()) for r in t.rows()))) == before
    # a column whose type differs between points (text in one, number in another) stays readable
    t.append([{"point_key": "k", "attempt": "a", "row_index": 0, "status": "ok", "finished_at": "z",
               "f": "n/a"}])
    assert {r["point_key"]: r["f"] for r in t.rows()}["k"] == "n/a"


def test_another_command_refuses_the_folder(tmp_path):
    out = tmp_path / "out"
    run_sweep(grid('command = "toy"\n[axes]\nx = [1]\n'), out, workers=0, progress=False)
    with pytest.raises(InputError, match="holds a sweep of 'toy', not 'toy chain'"):
        run_sweep(grid('command = "toy chain"\n[axes]\nx = [1]\n'), out, workers=0, progress=False)


# ------------------------------------------------------------------------------------------------
# plots and the command line
# ------------------------------------------------------------------------------------------------
def test_plot_curves_error_bars_and_png(tmp_path, capsys):
    out = tmp_path / "out"
    run_sweep(grid('command = "toy"\n[axes]\nkind = ["a", "b"]\nx = [1, 2]\nseed = [0, 1, 2, 3]\n'
                   'y = [1, 3]\n'), out, workers=0, progress=False)
    with pytest.raises(InputError, match="parameter y takes 1.0, 3.0 at x=1"):
        curves(out, "x", "f", hue="kind")
    data = curves(out, "x", "f", hue="kind", where=["y=3"])
    # f = 3x + seed over seeds 0..3: mean 3x + 1.5, SE = std(0,1,2,3; ddof=1)/sqrt(4) = sqrt(5/3)/2
    se = math.sqrt(5 / 3) / 2
    for h in ("a", "b"):
        assert [(p[0], p[1], p[3]) for p in data[h]] == [(1.0, 4.5, 4), (2.0, 7.5, 4)]
        assert [p[2] for p in data[h]] == pytest.approx([se, se], rel=1e-12)
    single = curves(out, "x", "f", where=["y=3", "seed=2", "kind=a"])
    assert single[None] == [(1.0, 5.0, 0.1, 1), (2.0, 8.0, 0.2, 1)]  # error bar from f_error
    png = plot_table(out, "x", "f", hue="kind", where=["y=3"])
    assert png == out / "f_vs_x_by_kind.png" and png.read_bytes()[:4] == b"\x89PNG"
    assert main(["plot", str(out), "--x", "x", "--y", "g", "--where", "seed=0", "--hue", "y",
                 "--where", "kind=b", "-o", str(tmp_path / "g.png"), "--logx"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "g.png")
    assert (tmp_path / "g.png").stat().st_size > 1000
    assert main(["plot", str(out), "--x", "x", "--y", "nope"]) == 2
    assert "--y 'nope' is not a column" in capsys.readouterr().err
    assert main(["plot", str(out), "--x", "x"]) == 2
    assert main(["plot", str(out), "--x", "x", "--y", "f", "--force"]) == 2


def test_cli_run_in_process_check_and_subparser(tmp_path, capsys):
    p = write_grid(tmp_path, 'command = "toy"\n[fixed]\nfail_above = 1\n[axes]\nx = [0.5, 2]\n')
    out = tmp_path / "out"
    assert main([str(p), "--check"]) == 0
    assert "toy, 2 points in 2 chains; axes: x (2)" in capsys.readouterr().out
    assert main([str(p), "--out", str(out), "--workers", "0", "--csv", "--no-progress"]) == 1  # one failed
    cap = capsys.readouterr()
    assert "sweep: 2 points: 1 ok, 1 failed" in cap.out and "failed {'x': 2.0}: ValueError" in cap.err
    assert (out / "results.csv").exists()
    assert main([str(p), "--out", str(out), "--workers", "0"]) == 0  # nothing left to do
    assert "1 ok" not in capsys.readouterr().out
    # the lead's CLI: add_subparser on its subparsers, then run(args)
    parser = argparse.ArgumentParser(prog="attnlimits")
    add_subparser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["sweep", "plot", str(out), "--x", "x", "--y", "f"])
    assert args.sweep_run is run and run(args) == 0
    assert main([str(p), "--out", str(out), "--x", "x"]) == 2
    with pytest.raises(SystemExit) as ei:
        main(["--help"])
    assert ei.value.code == 0
    assert "attnlimits sweep plot results/" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------------
# a real LocalCluster with two worker processes
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client():
    import logging

    from distributed import Client, LocalCluster

    from attnlimits.verify.sweep.runner import THREAD_ENV

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                           worker_dashboard_address=None, env=dict(THREAD_ENV), silence_logs=logging.CRITICAL)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_dask_sweep_chains_stay_on_one_worker_in_order(tmp_path, client):
    out = tmp_path / "out"
    g = grid('command = "toy chain"\n[fixed]\nsleep = 0.02\n[axes]\nseed = [0, 1, 2]\nx = [0.4, 0.1, 0.3, 0.2]\n')
    s = run_sweep(g, out, client=client, progress=False)
    assert (s.done, s.failed, s.workers) == (12, 0, 2)
    rows = ResultsTable(out).rows()
    for seed in (0, 1, 2):
        chain = sorted((r["finished_at"], r["x"], r["worker"]) for r in rows if r["seed"] == seed)
        assert [c[1] for c in chain] == [0.4, 0.1, 0.3, 0.2]  # grid order along the expensive axis
        assert len({c[2] for c in chain}) == 1  # one worker process per chain
    assert all(r["f"] == r["x"] + r["seed"] for r in rows)
    s = run_sweep(grid('command = "toy"\n[axes]\nx = [5, 6]\n'), tmp_path / "sched",
                  scheduler=client.scheduler.address, progress=False)  # --scheduler ADDRESS
    assert (s.done, s.workers) == (2, 2)
    for info in client.run(thread_settings).values():  # BLAS/OpenMP pinned to one thread per worker
        assert set(info["env"].values()) == {"1"}
        assert info["pools"] and {n for _, n in info["pools"]} == {1}


def test_killed_worker_loses_no_point(tmp_path, client):
    out, log = tmp_path / "out", tmp_path / "out" / "log.jsonl"
    g = grid(f'command = "toy"\n[fixed]\nsleep = 0.15\nlog = "{log}"\n[axes]\nx = {{ start = 1, stop = 16, step = 1 }}\n')
    pids = sorted(client.run(os.getpid).values())
    seen = {}

    def killer():
        wait_for(lambda: n_ok(out) >= 3, 60, "three finished points")
        seen.update({r["point_key"]: r["attempt"] for r in ResultsTable(out).rows()})
        os.kill(pids[0], signal.SIGKILL)  # a worker process of our own cluster, by id

    th = threading.Thread(target=killer)
    th.start()
    s = run_sweep(g, out, client=client, progress=False)
    th.join()
    assert (s.planned, s.done, s.failed, s.remaining) == (16, 16, 0, 0)
    rows = {r["point_key"]: r for r in ResultsTable(out).rows()}
    assert set(rows) == set(g.keys) and all(r["status"] == "ok" for r in rows.values())
    assert all(rows[k]["attempt"] == a for k, a in seen.items())  # recorded before the kill: kept as is
    assert sorted({p["x"] for p in log_lines(log)}) == [float(i) for i in range(1, 17)]
    wait_for(lambda: len(client.scheduler_info()["workers"]) == 2, 30, "the nanny to restart the worker")


def _client_process(grid_path: Path, out: Path, extra=()) -> subprocess.Popen:
    code = ("import sys; from attnlimits.verify.sweep import _toy, grid; grid.registry = lambda: {'toy': _toy.TOY_RESULT}; "
            "from attnlimits.verify.sweep.cli import main; sys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    return subprocess.Popen([sys.executable, "-c", code, str(grid_path), "--out", str(out), "--workers", "2",
                             *extra], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _reap(proc: subprocess.Popen) -> None:
    """End what is left of the process group we started (by its id), then wait for the leader."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def test_ctrl_c_in_process_keeps_finished_points(tmp_path, client):
    out = tmp_path / "out"
    # 0.5 s per point (16 points on 2 workers: ≥ 4 s): with 0.2 s the whole grid could finish before
    # the watcher thread saw three points on a loaded machine, and nothing was left to interrupt
    text = 'command = "toy"\n[fixed]\nsleep = 0.5\n[axes]\nx = { start = 1, stop = 16, step = 1 }\n'
    running = threading.Event()
    running.set()
    sent = []

    def enough():
        # the table is read while workers write it: a partial file is "not yet", not an error that
        # would end this thread silently (and leave nothing to interrupt the sweep)
        try:
            return n_ok(out) >= 3
        except Exception:  # noqa: BLE001
            return False

    def ctrl_c():
        wait_for(lambda: enough() or not running.is_set(), 60, "three finished points")
        if running.is_set():
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does to this (main) thread

    # Python's own SIGINT handler for the duration: in the full suite an earlier test leaves another
    # one installed (the interrupt was sent and swallowed: "Ctrl-C sent: True", twice in CI runs)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    th = threading.Thread(target=ctrl_c)
    th.start()
    try:
        with pytest.raises(KeyboardInterrupt) as ei:
            run_sweep(grid(text), out, client=client, progress=False)
            raise AssertionError(f"the sweep ended without the interrupt (Ctrl-C sent: {bool(sent)}, "
                                 f"SIGINT handler before the test: {previous!r})")
    finally:
        running.clear()
        th.join()
        signal.signal(signal.SIGINT, previous)
    s = ei.value.summary
    before = {r["point_key"]: r["attempt"] for r in ResultsTable(out).rows()}
    # workers write their points themselves, so the table may hold a point the client had not counted
    assert s.interrupted and s.done <= len(before) and 3 <= len(before) < 16
    assert not list(out.glob(".writers-*"))  # the run's token is gone: no more writes from it
    s = run_sweep(grid(text), out, client=client, progress=False)
    # a write already under way when the run stopped may land just after the snapshot: >=, not ==
    assert s.skipped >= len(before) and s.skipped + s.done == 16 and s.failed == 0
    after = {r["point_key"]: r["attempt"] for r in ResultsTable(out).rows()}
    assert len(after) == 16 and all(after[k] == a for k, a in before.items())


@pytest.mark.parametrize("how", ["SIGKILL", pytest.param("SIGINT", marks=pytest.mark.slow)])
def test_killed_or_interrupted_client_then_resume(tmp_path, client, how):
    out, log = tmp_path / "out", tmp_path / "out" / "log.jsonl"
    text = f'command = "toy"\n[fixed]\nsleep = 0.2\nlog = "{log}"\n[axes]\nx = {{ start = 1, stop = 16, step = 1 }}\n'
    p = write_grid(tmp_path, text)
    proc = _client_process(p, out)
    try:
        wait_for(lambda: proc.poll() is not None or (out / "parts").is_dir() and n_ok(out) >= 3, 90,
                 "three finished points")
        assert proc.poll() is None, proc.communicate()
        if how == "SIGKILL":
            os.kill(proc.pid, signal.SIGKILL)  # the client only; its workers must not run on
            proc.wait(timeout=30)
        else:
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C goes to the whole foreground group
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 130, err
            assert "interrupted: every finished point is in the table" in err
            # no worker tracebacks: the summary and the one line (workers ignore SIGINT)
            lines = [s for s in err.strip().splitlines() if not s.startswith("sweep [")]  # progress
            assert "Traceback" not in err and len(lines) <= 2, err
    finally:
        _reap(proc)
    before = {r["point_key"]: r["attempt"] for r in ResultsTable(out).rows()}
    assert 3 <= len(before) < 16 and all(s == "ok" for s in ResultsTable(out).statuses().values())
    s = run_sweep(grid(text), out, client=client, progress=False)
    assert s.skipped >= len(before) and s.skipped + s.done == 16 and s.failed == 0  # see the Ctrl-C test
    after = {r["point_key"]: r["attempt"] for r in ResultsTable(out).rows()}
    assert len(after) == 16 and all(after[k] == a for k, a in before.items())  # nothing lost, nothing redone


def test_worker_writes_its_point_only_while_it_sees_the_run(tmp_path):
    from attnlimits.verify.sweep.worker import execute_point

    g = grid('command = "toy"\n[axes]\nx = [2]\n')
    (tmp_path / ".writers-tok").write_text("tok")
    kw = {"command_name": g.command_name, "code_version": g.code_version, "out": str(tmp_path)}
    rec = execute_point(g.command.run, g.points[0], g.keys[0], pin=False, token="tok", **kw)
    assert "table_rows" not in rec and Path(rec["written"]).parent == tmp_path / "parts"
    assert ResultsTable(tmp_path).rows()[0]["f"] == 2.0
    rec = execute_point(g.command.run, g.points[0], g.keys[0], pin=False, token="other", **kw)  # another machine
    assert "written" not in rec and rec["table_rows"][0]["f"] == 2.0 and rec["table_rows"][0]["status"] == "ok"
    assert len(ResultsTable(tmp_path).part_files()) == 1


def test_300_parts_with_a_damaged_one_resume(tmp_path, recwarn):
    """More part files than the compaction threshold, one of them damaged: the rerun names the
    file, sets it aside, compacts the rest and redoes exactly the lost point."""
    out = tmp_path / "out"
    text = 'command = "toy"\n[axes]\nx = { start = 1, stop = 300, step = 1 }\n'
    s = run_sweep(grid(text), out, workers=0, progress=False, compact_above=10_000)
    assert s.done == 300
    t = ResultsTable(out)
    parts = t.part_files()
    assert len(parts) == 300
    parts[17].write_bytes(b"PAR1 damaged")
    s = run_sweep(grid(text), out, workers=0, progress=False)  # compact_above = 256 by default
    assert (s.skipped, s.done, s.failed) == (299, 1, 0)
    assert any("is damaged" in str(w.message) and parts[17].name in str(w.message) for w in recwarn)
    assert (out / "damaged" / parts[17].name).exists()
    rows = t.rows()
    assert len(rows) == 300 and sorted(r["x"] for r in rows) == [float(i) for i in range(1, 301)]
    assert len(t.part_files()) <= 2


def test_workers_capped_by_cores(tmp_path, capsys):
    from attnlimits.verify.sweep.runner import default_workers

    s = run_sweep(grid('command = "toy"\n[axes]\nx = [1, 2]\n'), tmp_path / "out", workers=1000, progress=False)
    assert s.done == 2 and 1 <= s.workers <= min(2, default_workers())
    assert f"--workers 1000 is more than the {default_workers()} core(s) available" in capsys.readouterr().err


def test_plot_log_grid_title_and_legend(tmp_path, monkeypatch):
    """A log-spaced grid gets a log x axis with plain ticks; the title names the fixed parameters;
    the legend sits outside the axes."""
    from matplotlib.figure import Figure

    import attnlimits.verify.outputs as io_mod

    out = tmp_path / "out"
    run_sweep(grid('command = "toy"\n[fixed]\ny = 3\n[axes]\nkind = ["a", "b"]\n'
                   'x = { start = 0.01, stop = 10, num = 7, log = true }\n'), out, workers=0, progress=False)
    seen = {}
    real = io_mod.save_figure

    def keep(fig, path, **kw):
        seen["fig"] = fig
        return real(fig, path, **kw)

    monkeypatch.setattr(io_mod, "save_figure", keep)
    plot_table(out, "x", "f", hue="kind")
    fig: Figure = seen["fig"]
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert "y=3" in ax.get_title() and ax.get_title().startswith("toy")
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels and all("$" not in t for t in labels)  # plain numbers, not 10^k mathtext
    legend = ax.get_legend()
    assert legend.get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1  # right of the data
