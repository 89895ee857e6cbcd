"""Work that a signal cannot interrupt, run where it can be stopped: a child process with a deadline.

SymPy/mpmath can spend minutes inside one big-integer operation (``erf`` of a large argument at
high precision, the value of a tower of exponentials), where a SIGALRM handler never runs.  The
Hermite data of a *user-typed* formula are therefore computed in a fresh process (``spawn``: no
state or locks inherited) that is killed at the deadline; the result comes back through a pipe.
Built-in activations and cached results never pay for this.
"""
from __future__ import annotations

import multiprocessing as mp
import os
from typing import Any, Callable

__all__ = ["call_with_deadline", "DeadlineExceeded", "ISOLATE_SECONDS"]

#: default deadline, seconds (``$ATTNLIMITS_SYMBOLIC_SECONDS`` overrides)
ISOLATE_SECONDS = 60.0


class DeadlineExceeded(Exception):
    """The isolated call did not finish in time (the child was killed)."""


def _child(conn, fn, args, kwargs):  # pragma: no cover - runs in the child process
    try:
        conn.send((True, fn(*args, **kwargs)))
    except BaseException as exc:  # noqa: BLE001 - the parent re-raises it
        try:
            conn.send((False, exc))
        except Exception:  # noqa: BLE001 - an exception that does not pickle: its text
            conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


class _main_hidden:
    """While a child starts, hide the caller's ``__main__`` from ``spawn``: the child then imports only
    ``fn``'s module, never re-runs the user's script (which may have no ``if __name__ == "__main__"``
    guard)."""

    def __enter__(self):
        import sys

        self.main = sys.modules.get("__main__")
        self.saved = {k: getattr(self.main, k) for k in ("__file__", "__spec__") if hasattr(self.main, k)}
        try:
            if "__file__" in self.saved:
                delattr(self.main, "__file__")
            self.main.__spec__ = None
        except AttributeError:  # pragma: no cover - read-only module attributes
            pass
        return self

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            setattr(self.main, k, v)
        if "__spec__" not in self.saved and hasattr(self.main, "__spec__"):
            try:
                delattr(self.main, "__spec__")
            except AttributeError:  # pragma: no cover
                pass
        return False


def call_with_deadline(fn: Callable, *args, seconds: float | None = None, **kwargs) -> Any:
    """``fn(*args, **kwargs)`` in a child process; :class:`DeadlineExceeded` after ``seconds``.

    ``fn`` must be importable by name (a module-level function); its exceptions are re-raised here.
    ``ATTNLIMITS_ISOLATE=0`` runs it in this process instead (debugging)."""
    if os.environ.get("ATTNLIMITS_ISOLATE", "1") == "0":
        return fn(*args, **kwargs)
    if seconds is None:
        seconds = float(os.environ.get("ATTNLIMITS_SYMBOLIC_SECONDS", ISOLATE_SECONDS))
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args, kwargs), daemon=True)
    with _main_hidden():
        proc.start()
    child.close()
    try:
        if not parent.poll(seconds):
            raise DeadlineExceeded(f"not finished within {seconds:g} s")
        ok, value = parent.recv()
    except EOFError:
        raise DeadlineExceeded("the worker process ended without an answer") from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        parent.close()
    if ok:
        return value
    raise value
