"""Run a grid on Dask: one task per point, each finished point written to the table at once.

:func:`run_sweep` runs the points of a :class:`attnlimits.verify.sweep.grid.Grid` that the results table
(:class:`attnlimits.verify.sweep.table.ResultsTable`) does not hold yet:

- on a ``distributed.LocalCluster`` sized to the machine (one worker process per core, one
  thread per worker, BLAS/OpenMP/torch threads pinned to 1 inside the workers), on an existing
  scheduler (``scheduler="tcp://host:8786"``; the workers need attnlimits installed), on a
  ``client`` you pass, or in this process (``workers=0``);
- points of one :meth:`attnlimits.verify.sweep.grid.Grid.chains` chain are submitted as a chain of tasks,
  each depending on the previous one, so Dask runs the chain in order on the worker that holds
  its predecessor and what the points share (a compiled solver, a warm start cached by the
  command) stays in that process, while every point still reports as soon as it finishes; a
  *merged* chain (list-valued expensive axis, :attr:`attnlimits.verify.sweep.grid.Grid.merge`) is one task
  making one call, as ``attnlimits rmt --gamma 0.01,0.1,1`` does (:func:`execute_chain`);
- each finished point is written at once, atomically: by the worker itself when it sees the
  output folder (same machine or shared filesystem), else by the client as results complete
  (``distributed.as_completed``, in batches); so Ctrl-C, a killed worker (Dask reruns its tasks
  elsewhere) or a killed client loses no finished point, and a rerun completes only what is
  missing (a point that was running at the fault runs again);
- a point whose command raises is recorded with ``status="failed"`` and its one-line error; the
  sweep goes on.  A point that kills every worker it runs on (Dask's ``KilledWorker``) is
  recorded failed too.

Progress goes to stderr: points done / failed / remaining, rate and ETA.
"""
from __future__ import annotations

import datetime as _dt
import logging
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from attnlimits.symbolic.result import InputError

from .grid import Grid, point_identity
from .worker import THREAD_ENV, PinThreads, one_line, package_versions, execute_chain, execute_point, point_rows
from .table import ResultsTable

__all__ = ["run_sweep", "execute_point", "SweepSummary", "PinThreads", "THREAD_ENV", "default_workers", "local_cluster"]

def default_workers() -> int:
    """Worker processes for a local cluster: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class SweepSummary:
    """What a run did: points planned, skipped (already in the table), done (ok), failed, not run."""

    planned: int
    skipped: int
    to_run: int
    done: int = 0
    failed: int = 0
    not_run: int = 0
    elapsed_s: float = 0.0
    interrupted: bool = False
    workers: int = 0
    out: str = ""
    errors: list = field(default_factory=list)
    stale: int = 0          # points made by other code, recomputed
    stale_reused: int = 0   # points made by other code, kept (--reuse-stale)
    stale_versions: list = field(default_factory=list)

    @property
    def remaining(self) -> int:
        return self.to_run - self.done - self.failed

    def line(self) -> str:
        parts = [f"{self.done} ok", f"{self.failed} failed"]
        if self.skipped:
            parts.append(f"{self.skipped} already in the table"
                         + (f" ({self.stale_reused} made by other code)" if self.stale_reused else ""))
        if self.stale:
            parts.append(f"{self.stale} recomputed (made by other code)")
        if self.remaining:
            parts.append(f"{self.remaining} not run")
        head = "sweep interrupted" if self.interrupted else "sweep"
        return f"{head}: {self.planned} points: {', '.join(parts)} ({self.elapsed_s:.1f} s); table {self.out}"


class _Progress:
    """A one-line progress bar on ``stream``: done / failed / remaining, rate, ETA."""

    def __init__(self, total: int, stream, enabled: bool):
        self.total, self.stream, self.enabled = total, stream, enabled and total > 0
        self.t0 = time.monotonic()
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.last = 0.0
        self.done = self.failed = 0
        self.printed = None

    def start(self) -> None:
        """Restart the clock (the rate and ETA count from the first submitted task)."""
        self.t0 = time.monotonic()

    def update(self, done: int, failed: int, force: bool = False) -> None:
        self.done, self.failed = done, failed
        if not self.enabled:
            return
        now = time.monotonic()
        finished = done + failed
        if not force and finished < self.total and now - self.last < (0.2 if self.tty else 10.0):
            return
        self.last = now
        if (done, failed) == self.printed:
            return
        self.printed = (done, failed)
        el = now - self.t0
        rate = finished / el if el > 0 else 0.0
        left = self.total - finished
        eta = _hms(left / rate) if rate > 0 else "?"
        width = 24
        fill = int(width * finished / self.total)
        bar = "#" * fill + "." * (width - fill)
        line = (f"sweep [{bar}] {finished}/{self.total}: {done} done, {failed} failed, {left} remaining"
                f" | {rate:.2f} pt/s | ETA {eta}")
        self.stream.write(("\r" + line + "\033[K") if self.tty else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.update(self.done, self.failed, force=True)
            if self.tty:
                self.stream.write("\n")
                self.stream.flush()


def _hms(s: float) -> str:
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def _select(grid: Grid, table: ResultsTable, force: bool, retry_failed: bool,
            reuse_stale: bool = False) -> tuple[list[int], dict]:
    """The indices of the points to run, and the stale points found: ``{"recompute": n,
    "reused": n, "versions": [...]}`` — points whose only finished rows were made by other code
    (another :func:`~attnlimits.verify.sweep.grid.code_version_of`).  They are run again unless
    ``reuse_stale``."""
    stale = {"recompute": 0, "reused": 0, "versions": []}
    if force:
        return list(range(len(grid))), stale
    have = table.statuses()
    other = table.versions_by_identity()
    todo = []
    for i, k in enumerate(grid.keys):
        st = have.get(k)
        if st is None:
            made_by = [v for v in other.get(point_identity(grid.command_name, grid.points[i]), ())
                       if v != grid.code_version]
            if made_by:
                stale["versions"] = sorted(set(stale["versions"]) | set(made_by))
                if reuse_stale:
                    stale["reused"] += 1
                    continue
                stale["recompute"] += 1
            todo.append(i)
        elif st == "failed" and retry_failed:
            todo.append(i)
    return todo, stale


def run_sweep(grid: Grid, out, *, client=None, scheduler: str | None = None, workers: int | None = None,
              force: bool = False, retry_failed: bool = False, progress: bool = True, csv: bool = False,
              stream=None, compact_above: int = 256, reuse_stale: bool = False) -> SweepSummary:
    """Run the points of ``grid`` missing from the table in ``out``; return a :class:`SweepSummary`.

    Parameters
    ----------
    grid : Grid
        a validated grid (:func:`attnlimits.verify.sweep.grid.load_grid`).
    out : path
        the output folder (created); see :mod:`attnlimits.verify.sweep.table`.
    client : distributed.Client, optional
        run on this client (not closed afterwards).
    scheduler : str, optional
        address of an existing Dask scheduler (``tcp://host:8786``) or a scheduler file path.
    workers : int, optional
        worker processes of the local cluster (default :func:`default_workers`, at most one per
        chain); ``0`` runs the points in this process, one after the other.
    force : bool
        rerun every point, including those already in the table.
    retry_failed : bool
        rerun the points whose latest attempt failed (they are skipped otherwise).
    reuse_stale : bool
        keep points computed by other code (another code fingerprint) instead of recomputing
        them; either way they are counted in the summary and reported on ``stream``.
    progress : bool
        draw the progress bar on ``stream`` (default ``sys.stderr``).
    csv : bool
        write ``out/results.csv`` at the end (also after an interrupt).
    compact_above : int
        merge the part files into one at the end when there are more than this many.

    Raises
    ------
    KeyboardInterrupt
        re-raised after cleanup, with ``exc.summary`` the :class:`SweepSummary` so far; every
        point finished before it is in the table.
    """
    from attnlimits.verify.outputs import OutputLock, check_output_folder

    stream = sys.stderr if stream is None else stream
    t0 = time.monotonic()
    grid.check_outputs(out)  # before anything is written
    # the folder writable, parts/ a folder inside it (not a link out of it), then locked for the run
    check_output_folder(out, subdirs=("parts",), files=("sweep.json",) + (("results.csv",) if csv else ()))
    lock = OutputLock(out, f"attnlimits sweep {grid.source}", stream=stream).acquire()
    try:
        return _run_locked(grid, out, client=client, scheduler=scheduler, workers=workers, force=force,
                           retry_failed=retry_failed, progress=progress, csv=csv, stream=stream,
                           compact_above=compact_above, reuse_stale=reuse_stale, t0=t0)
    finally:
        lock.release()


def _run_locked(grid: Grid, out, *, client, scheduler, workers, force, retry_failed, progress, csv, stream,
                compact_above, reuse_stale, t0) -> SweepSummary:
    table = ResultsTable(out)
    table.directory.mkdir(parents=True, exist_ok=True)
    table.clean_temporaries()
    if len(table.part_files()) > compact_above:
        table.compact()
    todo, stale = _select(grid, table, force, retry_failed, reuse_stale)
    summary = SweepSummary(planned=len(grid), skipped=len(grid) - len(todo), to_run=len(todo), out=str(table.directory),
                           stale=stale["recompute"], stale_reused=stale["reused"], stale_versions=stale["versions"])
    if stale["recompute"] or stale["reused"]:
        what = ("kept as they are (--reuse-stale)" if reuse_stale else "recomputed (--reuse-stale keeps them)")
        print(f"sweep: {stale['recompute'] + stale['reused']} point(s) in the table were made by other code "
              f"({', '.join(stale['versions'])}; this code {grid.code_version}): {what}", file=stream, flush=True)
    table.start_run(grid, len(grid), len(todo))
    chains = grid.chains(todo)
    bar = _Progress(len(todo), stream, progress)

    def record(batch: list[dict]) -> None:
        """Count the finished points of ``batch``; write (as one part) those no worker wrote."""
        rows = [row for rec in batch if "written" not in rec for row in rec["table_rows"]]
        if rows:
            table.append(rows)
        for rec in batch:
            if rec["status"] == "ok":
                summary.done += 1
            else:
                summary.failed += 1
                if len(summary.errors) < 20:
                    summary.errors.append((grid.points[where[rec["key"]]], rec["error"]))
        if batch:
            bar.update(summary.done, summary.failed)

    where = {k: i for i, k in enumerate(grid.keys)}
    token = uuid.uuid4().hex
    token_file = table.directory / f".writers-{token}"
    token_file.write_text(token)
    task = {"command_name": grid.command_name, "code_version": grid.code_version,
            "out": str(table.directory.resolve()), "token": token,
            "writes": tuple(p.name for p in grid.command.parameters if p.writes)}

    try:
        if todo and workers == 0:
            summary.workers = 0
            bar.start()
            _run_serial(grid, chains, record, task)
        elif todo:
            _run_dask(grid, chains, record, summary, task, client=client, scheduler=scheduler, workers=workers,
                      on_start=bar.start)
    except KeyboardInterrupt as exc:
        _unlink(token_file)
        summary.interrupted = True
        summary.elapsed_s = time.monotonic() - t0
        bar.close()
        if csv:
            table.to_csv()
        exc.summary = summary  # type: ignore[attr-defined]
        raise
    except BaseException:
        _unlink(token_file)
        raise
    _unlink(token_file)
    bar.close()
    if len(table.part_files()) > compact_above:
        table.compact()
    if csv:
        table.to_csv()
    summary.elapsed_s = time.monotonic() - t0
    return summary


def local_cluster(LocalCluster, n: int):
    """A local cluster whose worker processes ignore SIGINT: Ctrl-C reaches the whole foreground
    process group, and workers that took it printed a traceback each (about 70 lines for one
    Ctrl-C); the client handles it and closes the cluster.  A process started while SIGINT is
    ignored keeps ignoring it (Python installs its handler only over the default one)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                            worker_dashboard_address=None, env=dict(THREAD_ENV), silence_logs=logging.ERROR)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                            worker_dashboard_address=None, env=dict(THREAD_ENV), silence_logs=logging.ERROR)
    finally:
        signal.signal(signal.SIGINT, previous)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _run_serial(grid: Grid, chains, record, task: dict) -> None:
    try:
        from threadpoolctl import threadpool_limits
    except Exception:  # noqa: BLE001
        threadpool_limits = None
    torch = sys.modules.get("torch")
    saved = torch.get_num_threads() if torch is not None else None
    ctx = threadpool_limits(1) if threadpool_limits else None
    try:
        if torch is not None:
            torch.set_num_threads(1)
        for chain in chains:
            if grid.merge and len(chain) > 1:
                record(execute_chain(grid.command.run, [grid.points[i] for i in chain], [grid.keys[i] for i in chain],
                                     grid.together, pin=False, **task))
                continue
            for i in chain:
                record([execute_point(grid.command.run, grid.points[i], grid.keys[i], pin=False, **task)])
    finally:
        if ctx is not None:
            ctx.restore_original_limits()
        if torch is not None and saved is not None:
            torch.set_num_threads(saved)


def _run_dask(grid: Grid, chains, record, summary: SweepSummary, task: dict, *, client, scheduler, workers,
              on_start) -> None:
    try:
        from distributed import Client, LocalCluster, as_completed
        from distributed.scheduler import KilledWorker
        from distributed.utils import CancelledError
    except ImportError as exc:  # pragma: no cover - declared dependency
        raise InputError(f"sweeps need dask[distributed] ({exc}); or run in this process with --workers 0") from None

    cluster = None
    own_client = client is None
    futures: dict = {}
    try:
        if client is None:
            if scheduler:
                kw = {"scheduler_file": scheduler} if Path(scheduler).is_file() else {"address": scheduler}
                try:
                    client = Client(timeout="30s", **kw)
                except (OSError, TimeoutError) as exc:
                    raise InputError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from None
            else:
                n = workers if workers is not None else min(default_workers(), len(chains))
                if n < 0:
                    raise InputError(f"--workers must be >= 0, got {n}")
                cores = default_workers()
                if n > cores:  # more single-threaded processes than cores only add contention
                    print(f"sweep: --workers {n} is more than the {cores} core(s) available; using {cores}",
                          file=sys.stderr, flush=True)
                    n = cores
                n = min(n, len(chains))
                cluster = local_cluster(LocalCluster, max(1, n))
                client = Client(cluster)
        client.register_plugin(PinThreads(), name=PinThreads.name)
        summary.workers = len(client.scheduler_info().get("workers", {}))

        nonce = uuid.uuid4().hex[:8]
        index: dict = {}  # task key -> the point indices it runs
        for chain in chains:
            if grid.merge and len(chain) > 1:  # one call for the whole chain
                fut = client.submit(execute_chain, grid.command.run, [grid.points[i] for i in chain],
                                    [grid.keys[i] for i in chain], grid.together, **task,
                                    key=f"attnlimits-sweep-chain-{grid.keys[chain[0]]}-{nonce}", pure=False)
                futures[fut.key] = fut
                index[fut.key] = list(chain)
                continue
            prev = None
            for i in chain:
                fut = client.submit(execute_point, grid.command.run, grid.points[i], grid.keys[i], prev, **task,
                                    key=f"attnlimits-sweep-{grid.keys[i]}-{nonce}", pure=False)
                futures[fut.key] = fut
                index[fut.key] = [i]
                prev = fut
        on_start()
        # with_results: each result is fetched as soon as its task finishes (when no worker wrote
        # it, the client does); batches(): results that arrived meanwhile go in one part file
        ac = as_completed(list(futures.values()), with_results=True, raise_errors=False)
        for finished in ac.batches():
            batch = []
            for fut, res in finished:
                members = index[fut.key]
                futures.pop(fut.key, None)  # release it (a chain successor may still hold it)
                results = res if isinstance(res, list) else [res] * len(members)
                for i, one in zip(members, results):
                    rec = _record_of(fut, one, grid, i, KilledWorker, CancelledError)
                    if rec is None:
                        summary.not_run += 1  # cancelled, or its chain predecessor killed its workers
                    else:
                        batch.append(rec)
            record(batch)
    except KeyboardInterrupt:
        # stop the workers' own writes first (they check the run's token before writing), then
        # cancel: points still running would otherwise land while the cluster closes
        _unlink(Path(task["out"]) / f".writers-{task['token']}")
        raise
    finally:
        if futures and client is not None:
            try:
                client.cancel(list(futures.values()), force=True)
            except Exception:  # noqa: BLE001 - shutting down anyway
                pass
        futures.clear()
        if own_client and client is not None:
            try:
                client.close(timeout=10)
            except Exception:  # noqa: BLE001
                pass
        if cluster is not None:
            try:
                cluster.close(timeout=10)
            except Exception:  # noqa: BLE001
                pass


def _record_of(fut, res, grid: Grid, i: int, KilledWorker, CancelledError) -> dict | None:
    """The point record of a finished future, or ``None`` when the point did not run."""
    if isinstance(res, dict) and "attempt" in res:
        return res
    if isinstance(res, CancelledError) or fut.status == "cancelled":
        return None  # cancelled by the scheduler: a rerun does it
    if isinstance(res, KilledWorker) and res.task != fut.key:
        return None  # its chain predecessor killed its workers: a rerun does it
    exc = res if isinstance(res, BaseException) else RuntimeError(f"unexpected task result {type(res).__name__}")
    error = one_line(exc)
    if isinstance(res, KilledWorker):
        error = f"KilledWorker: the worker process died each of {res.allowed_failures + 1} times it ran this point"
    rec = {"key": grid.keys[i], "attempt": uuid.uuid4().hex, "status": "failed", "error": error, "rows": [],
           "elapsed_s": 0.0, "worker": "", "versions": package_versions(),
           "finished_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")}
    rec["table_rows"] = point_rows(rec, grid.points[i], grid.command_name, grid.code_version)
    return rec
