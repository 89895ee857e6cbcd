"""Sweep throughput, per-task scheduler overhead, and what faults lose and redo.

    OMP_NUM_THREADS=1 python benchmarks/bench_sweep.py [--points 64] [--repeats 3]
        [--work 40] [--real "slr population"]

1. Throughput: a grid of CPU-bound toy points (``work`` units of pure-Python arithmetic,
   single-threaded) run in this process (``workers=0``, the baseline, measured in the same run)
   and on a LocalCluster of 2 worker processes (started once; its start-up time is printed
   apart).  Ratio = serial time / Dask time (2 is the ideal on 2 free cores).
2. Per-task overhead: no-op points, (Dask time - serial time) / points.  Both modes write one
   Parquet part per point from the client, so the difference is the scheduler's share.
3. Faults on the toy grid (``sleep`` per point): a worker process SIGKILLed, Ctrl-C (SIGINT to
   this process) and a client subprocess SIGKILLed, each after some points are recorded, then
   the same grid rerun.  Printed: points planned, recorded before the fault, lost (recorded
   before and missing or changed after: must be 0), redone (executions beyond one per point,
   from the toy's execution log), and complete after the rerun.
``--real rmt`` (or ``"slr population"``) adds the throughput of a 16-point grid of that registered
command (a grid is written here for these two only).
Times are min/median/max over the repeats.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _timing import Timing, clock, ratio, ratio_line  # benchmarks/_timing.py (this script's folder is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
_MMM = dict(sep=" / ", labels=True, unit="s")  # "min … / median … / max … s"


def _timed_sweep(grid, client, workers, tmp: Path, repeats: int):
    """The :class:`Timing` of ``repeats`` runs of the sweep (each into a fresh folder; reading its table and
    removing it are not timed), and the median seconds a point's command ran."""
    from attnlimits.verify.sweep.runner import run_sweep

    from attnlimits.verify.sweep.table import ResultsTable

    walls, inside = [], []
    for r in range(repeats):
        out = tmp / f"run-{workers}-{r}-{time.monotonic_ns()}"
        with clock() as c:
            s = run_sweep(grid, out, client=client, workers=workers, progress=False)
        walls.append(c.wall)
        assert s.done == len(grid), s.line()
        inside.append(statistics.median(r["elapsed_s"] for r in ResultsTable(out).rows()))
        shutil.rmtree(out, ignore_errors=True)
    return Timing.of(walls), statistics.median(inside)


def _log_count(log: Path) -> dict:
    out: dict = {}
    if log.exists():
        for line in log.read_text().splitlines():
            x = json.loads(line)["x"]
            out[x] = out.get(x, 0) + 1
    return out


def _fault(name, grid_text, grid_fn, client, tmp: Path, n: int, trigger):
    """Run the toy grid, fault it after ``trigger`` recorded points, rerun; return the figures."""
    from attnlimits.verify.sweep.runner import run_sweep
    from attnlimits.verify.sweep.table import ResultsTable

    out, log = tmp / f"fault-{name}", tmp / f"fault-{name}.log"
    text = grid_text.format(log=log)
    before = trigger(text, out, log)
    after = {r["point_key"]: r["attempt"] for r in ResultsTable(out).rows()}
    lost_now = sum(1 for k, a in before.items() if after.get(k) != a)
    s = run_sweep(grid_fn(text), out, client=client, progress=False)
    final = {r["point_key"]: (r["attempt"], r["status"]) for r in ResultsTable(out).rows()}
    lost = lost_now + sum(1 for k, a in before.items() if final.get(k, (None,))[0] != a)
    counts = _log_count(log)
    return {"fault": name, "planned": n, "recorded_before_rerun": len(after), "lost": lost,
            "redone": sum(counts.values()) - n, "rerun_ran": s.done + s.failed,
            "complete_after_rerun": sum(1 for a, st in final.values() if st == "ok")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--work", type=int, default=300, help="toy work units per point (~0.1-0.3 ms each)")
    ap.add_argument("--noop-points", type=int, default=128)
    ap.add_argument("--fault-points", type=int, default=32)
    ap.add_argument("--real", default=None, help='also time a 16-point grid of this command, e.g. "slr population"')
    ap.add_argument("--skip-faults", action="store_true")
    args = ap.parse_args(argv)

    import logging

    from distributed import Client, LocalCluster

    from attnlimits.verify.sweep import _toy
    from attnlimits.verify.sweep import grid as G
    from attnlimits.verify.sweep.runner import THREAD_ENV, run_sweep
    from attnlimits.verify.sweep.table import ResultsTable

    _toy.register()
    toy_only = {"toy": _toy.TOY_RESULT}

    def toy_grid(text):
        return G.parse_grid(text, results=toy_only)

    tmp = Path(tempfile.mkdtemp(prefix="bench_sweep-"))
    print(f"bench_sweep: {os.cpu_count()} cores visible, load average {os.getloadavg()[0]:.1f}; "
          f"threads pinned to 1 (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')})")
    with clock() as c:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                               worker_dashboard_address=None, env=dict(THREAD_ENV), silence_logs=logging.CRITICAL)
        client = Client(cluster)
    print(f"LocalCluster(2 workers) start-up: {c.wall:.2f} s (not in the times below)")
    try:
        # warm the workers (first import of the toy and the worker module)
        run_sweep(toy_grid('command = "toy"\n[axes]\nx = [1, 2, 3, 4]\n'), tmp / "warm", client=client, progress=False)

        g = toy_grid(f'command = "toy"\n[fixed]\nwork = {args.work}\n[axes]\n'
                     f'x = {{ start = 1, stop = {args.points}, step = 1 }}\n')
        with clock() as c:
            from attnlimits.verify.sweep._toyrun import toy
            toy(g.points[0])
        per_point = c.wall
        serial, in_serial = _timed_sweep(g, None, 0, tmp, args.repeats)
        dask, in_dask = _timed_sweep(g, client, None, tmp, args.repeats)
        print(f"\n1. throughput, {args.points} toy points (~{per_point * 1e3:.0f} ms each here):")
        print(f"   one process : {serial.mmm(**_MMM)}  ({args.points / serial.median:.1f} points/s)")
        print(f"   2 workers   : {dask.mmm(**_MMM)}  ({args.points / dask.median:.1f} points/s)")
        print(ratio_line("   ratio one-process / 2-workers (median): ", serial, dask, unit="")
              + "  (ideal 2.00 on two free cores)")
        print(f"   median time inside one point's command: one process {in_serial * 1e3:.0f} ms, "
              f"in a worker {in_dask * 1e3:.0f} ms (equal on free cores; larger = CPU contention)")

        g0 = toy_grid(f'command = "toy"\n[axes]\nx = {{ start = 1, stop = {args.noop_points}, step = 1 }}\n')
        s0, _ = _timed_sweep(g0, None, 0, tmp, args.repeats)
        d0, _ = _timed_sweep(g0, client, None, tmp, args.repeats)
        print(f"\n2. per-task overhead, {args.noop_points} no-op points:")
        print(f"   one process : {s0.mmm(**_MMM)}  -> {s0.median / args.noop_points * 1e3:.2f} ms/point "
              "(table write + bookkeeping)")
        print(f"   2 workers   : {d0.mmm(**_MMM)}  -> {d0.median / args.noop_points * 1e3:.2f} ms/point")
        print(f"   scheduler overhead per task (median difference): "
              f"{(d0.median - s0.median) / args.noop_points * 1e3:.2f} ms")

        if args.real:
            res, cmd = G.find_command(args.real)
            if args.real == "slr population":
                text = ('command = "slr population"\n[fixed]\nmodel = "spiked"\nactivation = ["softmax"]\n'
                        '[axes]\nnu = [0.5, 1, 2, 4]\nL = [[2], [3], [4], [5]]\n')
            elif args.real == "rmt":
                text = ('command = "rmt"\n[fixed]\nactivation = "tanh"\nwk = [1, 0, 0]\nwq = [1, 0, 0]\n'
                        'gamma = [0.01, 0.1, 1]\n[axes]\nc = [0.25, 0.5, 1, 2]\nsnr = [0, 0.5, 1, 2]\n')
            else:
                raise SystemExit(f"--real: no benchmark grid written for {args.real!r}")
            gr = G.parse_grid(text)
            sr, _ = _timed_sweep(gr, None, 0, tmp, 1)
            dr, _ = _timed_sweep(gr, client, None, tmp, 1)
            print(f"\n1b. throughput, {len(gr)} points of {args.real} (one repeat):")
            print(f"   one process {sr.min:.2f} s, 2 workers {dr.min:.2f} s, ratio {ratio(sr, dr, 'min'):.2f}")

        if not args.skip_faults:
            n = args.fault_points
            text = ('command = "toy"\n[fixed]\nsleep = 0.1\nlog = "{log}"\n[axes]\n'
                    f'x = {{{{ start = 1, stop = {n}, step = 1 }}}}\n')
            k = max(3, n // 4)

            def recorded(out):
                return {r["point_key"]: r["attempt"] for r in ResultsTable(out).rows()} if (out / "parts").is_dir() else {}

            def wait(out, proc=None):
                t = time.monotonic()
                while len(recorded(out)) < k:
                    if time.monotonic() - t > 120 or (proc is not None and proc.poll() is not None):
                        raise RuntimeError("fault benchmark: points did not arrive")
                    time.sleep(0.02)

            def kill_worker(text, out, log):
                pids = sorted(client.run(os.getpid).values())
                box = {}

                def killer():
                    wait(out)
                    box["before"] = recorded(out)
                    os.kill(pids[0], signal.SIGKILL)
                th = threading.Thread(target=killer)
                th.start()
                run_sweep(toy_grid(text), out, client=client, progress=False)
                th.join()
                t = time.monotonic()
                while len(client.scheduler_info()["workers"]) < 2 and time.monotonic() - t < 60:
                    time.sleep(0.1)
                return box["before"]

            def ctrl_c(text, out, log):
                box = {}
                done = threading.Event()

                def interrupter():
                    wait(out)
                    if not done.is_set():
                        os.kill(os.getpid(), signal.SIGINT)
                th = threading.Thread(target=interrupter)
                th.start()
                try:
                    run_sweep(toy_grid(text), out, client=client, progress=False)
                except KeyboardInterrupt:
                    pass
                done.set()
                th.join()
                box["before"] = recorded(out)
                return box["before"]

            def kill_client(text, out, log):
                gp = tmp / f"grid-{time.monotonic_ns()}.toml"
                gp.write_text(text)
                code = ("import sys; from attnlimits.verify.sweep import _toy, grid; "
                        "grid.registry = lambda: {'toy': _toy.TOY_RESULT}; "
                        "from attnlimits.verify.sweep.cli import main; sys.exit(main(sys.argv[1:]))")
                env = {**os.environ, "PYTHONWARNINGS": "ignore"}
                proc = subprocess.Popen([sys.executable, "-c", code, str(gp), "--out", str(out), "--workers", "2",
                                         "--no-progress"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
                try:
                    wait(out, proc)
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=30)
                    time.sleep(1.0)  # its orphaned workers, if any, would write here now
                finally:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)  # our own process group, by id
                    except ProcessLookupError:
                        pass
                return recorded(out)

            print(f"\n3. faults ({n} toy points of 0.1 s; fault after >= {k} recorded; then the same grid rerun):")
            print("   fault          planned  recorded  lost  redone  rerun ran  complete")
            for name, trig in (("killed worker", kill_worker), ("Ctrl-C", ctrl_c), ("killed client", kill_client)):
                f = _fault(name, text, toy_grid, client, tmp, n, trig)
                print(f"   {f['fault']:<14} {f['planned']:>7}  {f['recorded_before_rerun']:>8}  {f['lost']:>4}  "
                      f"{f['redone']:>6}  {f['rerun_ran']:>9}  {f['complete_after_rerun']:>8}")
            print("   (recorded: points in the table after the fault; for the killed worker the sweep itself"
                  " completes, so the rerun has nothing to do)")
    finally:
        client.close()
        cluster.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
