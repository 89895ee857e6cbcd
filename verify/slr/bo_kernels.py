r"""The generated Bayes-optimal kernel modules of SLR (``docs/slr.md`` §11), loaded and cached on disk.

:func:`bo_module` — the module of :mod:`attnlimits.derivations.slr.bayes_optimal` for a set of lengths, cached
(:func:`attnlimits.numeric.models.cache_dir`) keyed by the derivation, engine and SymPy versions.  The bottom of
the BO glue: :mod:`.bayes_optimal` (the commands) and :mod:`.amp` (GAMP) both use it, and it imports neither.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from attnlimits.symbolic.result import InputError

__all__ = ["bo_module", "bo_module_source"]

_LOADED: dict = {}


def _cache_key(lengths) -> str:
    import sympy

    import attnlimits.derivations.slr.bayes_optimal as D
    import attnlimits.derivations.slr.population as P
    import attnlimits.symbolic.codegen as C

    h = hashlib.sha256(f"{sympy.__version__}|{sorted(lengths)}".encode())
    import attnlimits.symbolic.functions as F

    h.update(Path(F.__file__).read_bytes())
    for m in (D, P, C):
        h.update(Path(m.__file__).read_bytes())
    return h.hexdigest()[:24]


def bo_module(lengths, model: str = "spiked"):
    """Generated BO kernels for the lengths ``lengths`` (iterable of ints), loaded; ``model="max"`` gives
    the max-SLR module (:func:`attnlimits.derivations.slr.bayes_optimal.max_module_source`, about 40 s per length
    to generate the first time, then cached on disk)."""
    from attnlimits.numeric.slr.bo_state_evolution import load_bo_module

    if model not in ("spiked", "max"):
        raise InputError(f"--model must be 'spiked' or 'max', got {model!r}")
    Ls = tuple(sorted({int(L) for L in lengths}))
    if (model, Ls) in _LOADED:
        return _LOADED[(model, Ls)]
    mod = load_bo_module(bo_module_source(Ls, model))
    _LOADED[(model, Ls)] = mod
    return mod


def bo_module_source(lengths, model: str = "spiked") -> str:
    """The text of the generated BO kernel module for ``lengths`` (on-disk cache, else generated)."""
    from attnlimits.derivations.slr import bayes_optimal as D
    from attnlimits.numeric.models import cache_dir, read_sealed, write_sealed

    Ls = tuple(sorted({int(L) for L in lengths}))
    folder = cache_dir()
    src = None
    path = None
    prefix = "slr_bayes_optimal" if model == "spiked" else "slr_bayes_optimal_max"
    if folder is not None:
        path = folder / f"{prefix}-{_cache_key(Ls)}.py"
        src = read_sealed(path)  # altered or unsealed: regenerated, never executed
    if src is None:
        src = D.module_source(Ls) if model == "spiked" else D.max_module_source(Ls)
        if path is not None:
            write_sealed(path, src)  # best effort, as for the other generated modules
    return src
