"""Compile and export solver modules for results described by a :class:`~symbolic.model.GeneratedModel`.

:func:`compile_model` assembles, for one backend, the generated kernels of a result, the backend
runtime, the portable fixed-point solver (:mod:`numeric._portable_solver`) and the result's
portable driver into one module text, and loads it.  :func:`export_model` writes the same text to
a standalone file (runnable with only numpy, or only mpmath, installed).  The exported file and
the in-process module are therefore the same program.
"""
from __future__ import annotations

import inspect
import os
import threading
import types
from pathlib import Path

from symbolic.codegen import BACKENDS, ModuleBuilder, load_module, strip_module_header
from symbolic.model import GeneratedModel

from . import _portable_solver

__all__ = ["compile_model", "model_source", "export_model"]

_CACHE: dict = {}
_LOCK = threading.Lock()


def model_source(model: GeneratedModel, backend: str = "numpy", *, constants: dict | None = None,
                 main: bool = False) -> str:
    """The full module text for ``model`` on ``backend`` ("numpy" or "mpmath").

    ``constants`` (name → Python source) are emitted after the model's own constants, e.g. the
    Hermite data of the activation an exported file is specialised to.  With ``main=True`` the
    module ends in ``if __name__ == "__main__": sys.exit(main())``.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    mb = ModuleBuilder(title=model.title, backend=backend, source_hash=model.source_hash(),
                       description=model.description)
    for name, val in {**model.constants, **(constants or {})}.items():
        mb.add_constant(name, val)
    for k in model.kernels():
        mb.add_kernel(k)
    mb.add_source(strip_module_header(inspect.getsource(_portable_solver)))
    mb.add_source(strip_module_header(model.driver_source()))
    tail = 'if __name__ == "__main__":\n    sys.exit(main())\n' if main else None
    return mb.source(main=tail)


def compile_model(model: GeneratedModel, backend: str = "numpy") -> types.ModuleType:
    """Generate and load the solver module of ``model`` for ``backend`` (cached per process).

    Cost: generating the kernels takes about a second the first time; later calls are free.
    """
    key = (model.name, model.source_hash(), backend)
    with _LOCK:
        mod = _CACHE.get(key)
        if mod is None:
            mod = load_module(model_source(model, backend), name=f"attnlimits_{model.name}_{backend}")
            _CACHE[key] = mod
    return mod


def export_model(model: GeneratedModel, path: str | os.PathLike, backend: str = "numpy", *,
                 constants: dict | None = None) -> Path:
    """Write a standalone solver for ``model`` to ``path``; returns the path.

    The file needs only the Python standard library plus numpy (``backend="numpy"``) or mpmath
    (``backend="mpmath"``); ``python FILE --help`` documents its command line.
    """
    src = model_source(model, backend, constants=constants, main=True)
    path = Path(path)
    try:
        path.write_text(src)
    except OSError as exc:
        raise OSError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
