"""What runs inside a Dask worker: one point of a sweep (imports neither SymPy nor the registry).

Kept apart from :mod:`verify.sweep.runner` so that a worker pays only for what the swept command
itself imports: a task ships the command's ``run`` string (``"module:function"``), not the
:class:`~symbolic.result.Command` object, whose unpickling would import :mod:`symbolic`.
"""
from __future__ import annotations

import datetime as _dt
import importlib
import json
import math
import os
import socket
import sys
import time
import traceback
import uuid

__all__ = ["execute_point", "PinThreads", "THREAD_ENV", "plain", "resolve_run", "thread_settings"]

#: environment given to worker processes (read by OpenMP, MKL, OpenBLAS, numexpr, torch at import)
THREAD_ENV = {v: "1" for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                               "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS")}

_VERSIONS: str | None = None
_LIMITED = False


def _versions() -> str:
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


def _pin_threads() -> None:
    """One BLAS/OpenMP/torch thread in this process (a Dask worker)."""
    global _LIMITED
    for k, v in THREAD_ENV.items():
        os.environ[k] = v
    if not _LIMITED:
        try:
            from threadpoolctl import threadpool_limits

            threadpool_limits(1)
        except Exception:  # noqa: BLE001 - threadpoolctl is optional
            pass
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
        _pin_threads()


def _one_line(exc: BaseException) -> str:
    text = next((s.strip() for s in str(exc).splitlines() if s.strip()), "")
    msg = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    tb = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ is not None else []
    if tb:
        fr = tb[-1]
        msg += f" [at {os.path.basename(fr.filename)}:{fr.lineno} in {fr.name}]"
    return msg[:500]


def execute_point(run: str, params: dict, key: str, after=None, pin: bool = True) -> dict:
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

    Returns
    -------
    dict with ``key, attempt, status ("ok"/"failed"), error, rows, elapsed_s, worker, versions,
    finished_at``.
    """
    if pin:
        _pin_threads()
    t0 = time.perf_counter()
    status, error, rows = "ok", "", []
    try:
        out = resolve_run(run)(dict(params), progress=None)
        if out is None:
            out = []
        if isinstance(out, dict):
            out = [out]
        rows = [dict(r) for r in out]
        rows = [{k: plain(v) for k, v in r.items()} for r in rows]
    except Exception as exc:  # noqa: BLE001 - recorded, the sweep goes on
        status, error, rows = "failed", _one_line(exc), []
    return {"key": key, "attempt": uuid.uuid4().hex, "status": status, "error": error, "rows": rows,
            "elapsed_s": time.perf_counter() - t0, "worker": f"{socket.gethostname()}:{os.getpid()}",
            "versions": _versions(),
            "finished_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")}




def resolve_run(dotted: str):
    """Import ``"module:function"`` (same rule as :func:`symbolic.result.resolve`, without SymPy)."""
    mod, sep, attr = dotted.partition(":")
    if not sep:
        mod, _, attr = dotted.rpartition(".")
    obj = importlib.import_module(mod)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


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
