"""What runs inside a Dask worker: one point of a sweep (imports neither SymPy nor the registry).

Kept apart from :mod:`attnlimits.verify.sweep.runner` so that a worker pays only for what the swept command
itself imports: a task ships the command's ``run`` string (``"module:function"``), not the
:class:`attnlimits.symbolic.result.Command` object, whose unpickling would import :mod:`symbolic`.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
import socket
import sys
import time
import traceback
import uuid
from pathlib import Path

__all__ = ["execute_point", "execute_chain", "PinThreads", "THREAD_ENV", "plain", "resolve_run", "thread_settings", "point_rows",
           "write_part", "canonical_params", "META_COLUMNS", "durable_write", "fsync_dir", "one_line", "package_versions",
           "pin_threads"]

from attnlimits.numeric.allocator import tune_allocator
from attnlimits.numeric.threads import THREAD_VARIABLES, apply_threads
from attnlimits.symbolic.result import resolve as resolve_run  # noqa: F401  (light: no SymPy)

#: environment given to worker processes (read by OpenMP, MKL, OpenBLAS, numexpr, torch at import)
THREAD_ENV = {v: "1" for v in THREAD_VARIABLES}

_VERSIONS: str | None = None
_LIMITED = False


def package_versions() -> str:
    """JSON of the versions of the packages that compute (cached per process)."""
    global _VERSIONS
    if _VERSIONS is None:
        from importlib import metadata

        out = {"python": sys.version.split()[0]}
        for name in ("attnlimits", "numpy", "scipy", "sympy", "mpmath", "torch", "dask", "distributed",
                     "pyarrow"):
            try:
                out[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                pass
        _VERSIONS = json.dumps(out, sort_keys=True)
    return _VERSIONS


def pin_threads() -> None:
    """One BLAS/OpenMP/torch thread in this process (a Dask worker)."""
    global _LIMITED
    if not _LIMITED:
        apply_threads(1)  # env variables, BLAS pools (threadpoolctl), torch if loaded
        tune_allocator()  # freed temporaries reused (numeric/allocator.py)
        _LIMITED = True
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


try:
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except Exception:  # pragma: no cover - distributed missing: only workers=0 works
    _WorkerPlugin = object


class PinThreads(_WorkerPlugin):
    """Worker plugin: one BLAS/OpenMP/torch thread per worker process (also on a remote cluster)."""

    name = "attnlimits-pin-threads"

    def setup(self, worker=None):
        pin_threads()


def one_line(exc: BaseException) -> str:
    """An exception as one line ``Type: first line of the message`` (a sweep's error column)."""
    text = next((s.strip() for s in str(exc).splitlines() if s.strip()), "")
    msg = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    tb = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ is not None else []
    if tb:
        fr = tb[-1]
        msg += f" [at {os.path.basename(fr.filename)}:{fr.lineno} in {fr.name}]"
    return msg[:500]


def execute_point(run: str, params: dict, key: str, after=None, pin: bool = True, *, command_name: str = "",
                  code_version: str = "", out: str | None = None, token: str | None = None,
                  writes: tuple = ()) -> dict:
    """Run the command function ``run`` on one point; never raises (a failure is a record).

    Parameters
    ----------
    run : str
        the command's ``"module:function"`` (imported here, in the worker).
    params : dict
        parsed parameters of the point.
    key : str
        the point key.
    after : object, optional
        the previous point of a chain (ignored: it only orders the chain on one worker).
    pin : bool
        pin BLAS/torch threads to 1 first (True in workers).
    command_name, code_version : str
        written into the rows.
    out, token : str, optional
        the output folder and the run's token: when this process sees ``out/.writers-<token>``
        (same machine, or a shared filesystem), it writes the point's part file itself, at once,
        and returns only the record; otherwise the client writes the returned rows.
    writes : tuple of str
        the parameters that name files the command writes: a relative path is taken inside
        ``out`` (the grid was checked to stay inside it, :meth:`Grid.check_outputs`).

    Returns
    -------
    dict with ``key, attempt, status ("ok"/"failed"), error, elapsed_s, worker, finished_at``,
    and either ``written`` (the part file's path) or ``table_rows`` (for the client to write).
    """
    if pin:
        pin_threads()
    t0 = time.perf_counter()
    status, error, rows = "ok", "", []
    try:
        result = resolve_run(run)(inside_out(params, writes, out), progress=None)
        if result is None:
            result = []
        if isinstance(result, dict):
            result = [result]
        rows = [{k: plain(v) for k, v in dict(r).items()} for r in result]
    except Exception as exc:  # noqa: BLE001 - recorded, the sweep goes on
        status, error, rows = "failed", one_line(exc), []
    rec = {"key": key, "attempt": uuid.uuid4().hex, "status": status, "error": error, "rows": rows,
           "elapsed_s": time.perf_counter() - t0, "worker": f"{socket.gethostname()}:{os.getpid()}",
           "versions": package_versions(),
           "finished_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")}
    table_rows = point_rows(rec, params, command_name, code_version)
    del rec["rows"], rec["versions"]
    if out is not None and token is not None and sees_folder(out, token):
        try:
            rec["written"] = str(write_part(Path(out) / "parts", table_rows))
            return rec
        except Exception:  # noqa: BLE001 - cannot write here after all: the client writes
            pass
    rec["table_rows"] = table_rows
    return rec


def inside_out(params: dict, writes: tuple, out: str | None) -> dict:
    """``params`` with each output path of ``writes`` that is relative taken inside ``out``."""
    params = dict(params)
    if out is None:
        return params
    for name in writes:
        v = params.get(name)
        if isinstance(v, str) and v.strip() and not Path(v).is_absolute():
            params[name] = str(Path(out) / v)
    return params


def _same(a, b) -> bool:
    if a == b:
        return True
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)
    return math.isclose(fa, fb, rel_tol=1e-9, abs_tol=0.0)


def execute_chain(run: str, points: list, keys: list, axes: tuple, after=None, pin: bool = True, *,
                  command_name: str = "", code_version: str = "", out: str | None = None,
                  token: str | None = None, writes: tuple = ()) -> list:
    """Run a merged chain: one call with the lists of the chain's values along ``axes``.

    Each point of ``points`` holds a one-element list on every axis of ``axes``; the call gets
    the concatenation, and each returned row goes to the point whose values it names (a row
    must carry every axis of ``axes``).  When the call fails, or a row names no point or several,
    or a point gets no row, the points are run one by one instead (:func:`execute_point`), so
    errors stay per point.  Returns one record per point (as :func:`execute_point`).
    """
    if pin:
        pin_threads()
    task = {"command_name": command_name, "code_version": code_version, "out": out, "token": token,
            "writes": writes}
    merged = inside_out(points[0], writes, out)
    for a in axes:
        merged[a] = [p[a][0] for p in points]
    t0 = time.perf_counter()
    try:
        result = resolve_run(run)(dict(merged), progress=None)
        result = [result] if isinstance(result, dict) else list(result or [])
        rows = [{k: plain(v) for k, v in dict(r).items()} for r in result]
        owner: list[list] = [[] for _ in points]
        for row in rows:
            hits = [i for i, p in enumerate(points)
                    if all(a in row and _same(_first(row[a]), p[a][0]) for a in axes)]
            if len(hits) != 1:
                raise LookupError("rows do not name their point")
            owner[hits[0]].append(row)
        if any(not o for o in owner):
            raise LookupError("a point got no row")
    except Exception:  # noqa: BLE001 - one call per point instead
        return [execute_point(run, p, k, pin=False, **task) for p, k in zip(points, keys)]
    elapsed = (time.perf_counter() - t0) / len(points)
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")
    recs, all_rows = [], []
    for p, k, own in zip(points, keys, owner):
        rec = {"key": k, "attempt": uuid.uuid4().hex, "status": "ok", "error": "", "rows": own,
               "elapsed_s": elapsed, "worker": f"{socket.gethostname()}:{os.getpid()}", "versions": package_versions(),
               "finished_at": now}
        rec["table_rows"] = point_rows(rec, p, command_name, code_version)
        del rec["rows"], rec["versions"]
        all_rows.extend(rec["table_rows"])
        recs.append(rec)
    if out is not None and token is not None and sees_folder(out, token):
        try:
            path = str(write_part(Path(out) / "parts", all_rows))  # the chain's points in one file
            for rec in recs:
                del rec["table_rows"]
                rec["written"] = path
        except Exception:  # noqa: BLE001 - the client writes
            pass
    return recs


def _first(v):
    """A row's value of a list parameter, when it repeats it as a one-element list or its JSON text."""
    if isinstance(v, str) and v.startswith("["):
        try:
            v = json.loads(v)
        except ValueError:
            return v
    if isinstance(v, list) and len(v) == 1:
        return v[0]
    return v


def _nested(v):
    if isinstance(v, dict):
        return {str(k): _nested(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_nested(x) for x in v]
    x = plain(v)
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return x


def plain(v):
    """``v`` as a plain Python value for a table cell (lists and dicts as JSON text; numpy scalars unwrapped)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple, dict)):  # e.g. an argmin {m_k: .., q_k: ..}: JSON text in one cell
        return json.dumps(_nested(v), sort_keys=True)
    item = getattr(v, "item", None)  # numpy / torch scalars
    if callable(item):
        try:
            out = item()
            if isinstance(out, (bool, int, float, str)):
                return out
        except (TypeError, ValueError):
            pass
    try:
        return float(v)  # mpmath mpf and friends
    except (TypeError, ValueError):
        return str(v)


META_COLUMNS = ("point_key", "attempt", "row_index", "status", "error", "elapsed_s", "seed", "command",
                "code_version", "versions", "worker", "finished_at", "params_json")


def _jsonable(v):
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def canonical_params(params: dict) -> str:
    """Parsed parameters as canonical JSON (sorted keys, floats by ``repr``)."""
    return json.dumps({k: _jsonable(params[k]) for k in sorted(params)}, sort_keys=True,
                      separators=(",", ":"), default=str)


def point_rows(record: dict, params: dict, command_name: str, code_version: str) -> list[dict]:
    """Table rows of one point record (see :mod:`attnlimits.verify.sweep.table` for the columns)."""
    # a list parameter with one value (a point of an axis over gamma, L, activation) is stored as
    # that value, so that its column matches the command's own output column and plots directly
    base = {k: plain(v[0] if isinstance(v, (list, tuple)) and len(v) == 1 else v) for k, v in params.items()}
    meta = {"point_key": record["key"], "attempt": record["attempt"], "status": record["status"],
            "error": record["error"], "elapsed_s": float(record["elapsed_s"]), "command": command_name,
            "code_version": code_version, "versions": record["versions"], "worker": record["worker"],
            "finished_at": record["finished_at"], "params_json": canonical_params(params)}
    outs = record["rows"] or [{}]
    rows = []
    for i, out in enumerate(outs):
        row = dict(base)
        for k, v in out.items():
            row[f"output_{k}" if (k in META_COLUMNS and k != "seed") else k] = v
        seed = params.get("seed", out.get("seed"))
        row.update(meta)
        row["row_index"] = i
        row["seed"] = seed if isinstance(seed, (int, float, str)) and not isinstance(seed, bool) else None
        rows.append(row)
    return rows


def fsync_dir(path: Path) -> None:
    """Flush the folder ``path`` to disk (a rename in it survives a crash)."""
    from attnlimits.symbolic.files import fsync_dir as sync

    sync(path)


def durable_write(path: Path, write, sync_dir: bool = False) -> None:
    """Call ``write(tmp_path)``, flush it to disk, rename it to ``path`` (same folder), creating the
    folder: :func:`attnlimits.symbolic.files.atomic_write` with ``fsync``.

    The rename is atomic, so a reader (or a process that crashes mid-write) sees the whole file
    or none.  ``sync_dir`` also flushes the folder entry (power-loss durability of the rename;
    without it a power cut may drop the newest parts, whose points then simply run again).
    """
    from attnlimits.symbolic.files import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, write, fsync=True, sync_dir=sync_dir)


def write_part(parts_dir, rows: list[dict]):
    """Write ``rows`` as a new uniquely named Parquet part in ``parts_dir``, atomically; return its path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not rows:
        raise ValueError("write_part needs at least one row")
    parts_dir = Path(parts_dir)
    table = pa.Table.from_pylist([{k: plain(v) for k, v in r.items()} for r in rows])
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    path = parts_dir / f"part-{stamp}-{uuid.uuid4().hex[:8]}.parquet"
    durable_write(path, lambda tmp: pq.write_table(table, tmp))
    return path


def sees_folder(out: str, token: str) -> bool:
    """True when this process sees the client's output folder and the run is still on.

    The client writes ``out/.writers-<token>`` when a run starts and removes it when the run ends
    or is interrupted; checked before every write (a small read), so that a task still running
    after Ctrl-C does not write into a table that a new run may be reading.
    """
    try:
        return (Path(out) / f".writers-{token}").read_text() == token
    except OSError:
        return False


def thread_settings() -> dict:
    """This process's thread settings: the pinning variables, BLAS/OpenMP pools, torch (if loaded).

    Run it on every worker with ``client.run(thread_settings)`` to check the pinning.
    """
    out = {"env": {k: os.environ.get(k) for k in THREAD_ENV}}
    try:
        import numpy  # noqa: F401 - loads BLAS, so that its pool is listed
        from threadpoolctl import threadpool_info

        out["pools"] = sorted({(i.get("internal_api", "?"), i["num_threads"]) for i in threadpool_info()})
    except Exception:  # noqa: BLE001 - diagnostics only
        out["pools"] = []
    torch = sys.modules.get("torch")
    out["torch"] = torch.get_num_threads() if torch is not None else None
    return out
