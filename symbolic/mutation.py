r"""Planted errors for measuring the power of ``verify`` and ``explore`` (test-only; mutation testing).

A verifier is measured by the errors it finds.  A *plant* is a small, physical error — a coefficient
off by 2 % inside a fixed-point equation, a factor on one output in one region of the parameters, an
error in one of two code paths that should agree — put into a running process by replacing one
module attribute, never by editing a source file.  The catalogue of plants lives in
``benchmarks/mutants.py`` and ``benchmarks/bench_power.py`` counts which claims and properties
catch each one (``docs/power.md``).  Nothing in the package imports this module: it is switched on
only by a test or a benchmark.

- :class:`Plant` — one planted error: its ``target`` (``"package.module:attribute"``), a
  ``transform`` from the original attribute to its replacement, the relative ``size`` and the
  ``region`` where it acts;
- :func:`planted` — context manager: plant, yield, restore (the original object itself, so the
  unplanted values are bit-identical afterwards);
- :func:`apply` — plant for the rest of the process (a benchmark subprocess);
- transforms: :func:`scale_return` (a function's return value, optionally one field of it, in a
  region of its arguments or result), :func:`map_return` (any change of the return value),
  :func:`scale_expr` (a SymPy expression times ``1 + size``, optionally only where a SymPy condition
  holds), :func:`map_system` (the updates of an :class:`attnlimits.symbolic.system.EquationSystem`).

Caches.  A plant must never be served an unplanted value from a cache, nor leave a planted one
behind.  While a plant is active:

- every ``functools.lru_cache`` of a loaded ``attnlimits`` module is cleared on entry and on exit,
  as are the in-process module caches keyed by a model or a bundle rather than by the expression
  (:data:`DICT_CACHES`) and the kernels a :class:`attnlimits.symbolic.model.GeneratedModel` keeps;
- the on-disk cache of generated code (:func:`attnlimits.numeric.models.cache_dir`) is keyed by the
  *source files*, which a plant does not change: ``ATTNLIMITS_CACHE_DIR`` is pointed at a fresh
  temporary folder for the plant's lifetime (removed on exit), so a planted run neither reads a clean
  entry nor writes a planted one where a later clean run would find it;
- caches keyed by the hash of the generated expressions (``numeric/slr/rs/rule.py``) need nothing: a
  changed expression hashes differently (``tests/symbolic/test_mutation.py`` checks it).

Other processes.  A plant lives in one interpreter.  ``benchmarks/bench_power.py`` starts each
planted run as a fresh process that applies the plant before the command line runs in-process
(``verify`` and ``explore`` both evaluate in-process); for the Python processes such a run starts in
turn (the isolated Hermite computation of a user formula, ``attnlimits hermite`` called by a property),
the benchmark names the plant in ``$ATTNLIMITS_PLANT`` and puts a ``sitecustomize`` on ``PYTHONPATH``
that applies it at interpreter start (:func:`site_hook_source`).  An exported solver file does not
import the package: a plant on the export path changes the file's text itself.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import os
import shutil
import sys
import tempfile
import types
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Plant", "planted", "apply", "active", "clear_caches", "resolve_target",
           "scale_return", "map_return", "scale_expr", "map_system", "scale_value", "site_hook_source",
           "DICT_CACHES", "ENV_PLANT"]

ENV_PLANT = "ATTNLIMITS_PLANT"  #: names the plant a benchmark's child processes apply at start (test-only)

#: In-process caches keyed by a model, a bundle or a name (not by the expression), as
#: ``"module:attribute"`` of a dict; cleared when a plant is put in and taken out.
DICT_CACHES = (
    "attnlimits.numeric.models:_CACHE",
    "attnlimits.numeric.slr.population:_COMPILED",
    "attnlimits.verify.slr.bo_kernels:_LOADED",
    "attnlimits.verify.rmt.properties:_HERMITE",
    "attnlimits.verify.rmt.properties:_EXPORTED",
)


@dataclass(frozen=True)
class Plant:
    """One planted error.

    Parameters
    ----------
    name : str
        Short identifier (``"rmt-ridge-c>1"``).
    result : str
        The result it belongs to (``"rmt"``, ``"slr"``).
    description : str
        What is wrong, in the words of a referee.
    target : str
        ``"package.module:attribute"`` — the attribute replaced (a function, a SymPy expression, an
        equation system...).
    transform : callable
        ``transform(original) -> replacement``; see :func:`scale_return`, :func:`scale_expr`,
        :func:`map_system`.
    size : float
        Relative size of the error (0.02 for 2 %), as the catalogue states it.
    region : str
        Where it acts (``"c > 1"``, ``"softmax only"``, ``"everywhere"``).
    kind : str
        ``"coefficient"`` (inside an equation), ``"term"`` (a swapped or dropped term), ``"region"``
        (a factor in one region), ``"path"`` (one of two code paths that should agree).
    claims, properties : tuple of str
        The claims and ``explore`` properties that bear on the target (what a benchmark runs
        by default); not a promise that they catch it.
    """

    name: str
    result: str
    description: str
    target: str
    transform: Callable[[Any], Any]
    size: float
    region: str = "everywhere"
    kind: str = "coefficient"
    claims: tuple = ()
    properties: tuple = ()
    notes: str = field(default="", compare=False)


def resolve_target(target: str):
    """``(module, attribute name, current value)`` of ``"package.module:attribute"``."""
    mod_name, sep, attr = target.partition(":")
    if not sep or not attr:
        raise ValueError(f"plant target {target!r} is not 'package.module:attribute'")
    mod = importlib.import_module(mod_name)
    try:
        value = getattr(mod, attr)
    except AttributeError:
        raise ValueError(f"plant target {target!r}: module {mod_name} has no attribute {attr!r}") from None
    return mod, attr, value


# ------------------------------------------------------------------------------------------------
# caches


def clear_caches() -> None:
    """Clear the in-process caches a plant could be served from or leave behind (module docstring)."""
    for name, mod in list(sys.modules.items()):
        if not name.startswith("attnlimits") or mod is None:
            continue
        for value in list(getattr(mod, "__dict__", {}).values()):
            # never getattr on arbitrary objects: a lazy package's __getattr__ would import (SymPy, seconds)
            if isinstance(value, types.FunctionType):
                clear = value.__dict__.get("cache_clear")  # a plant's wrapper carries its original's
            elif hasattr(type(value), "cache_clear"):  # functools.lru_cache
                clear = value.cache_clear
            else:
                clear = None
            if callable(clear) and str(getattr(value, "__module__", "")).startswith("attnlimits"):
                clear()
            if type(value).__name__ == "GeneratedModel" and hasattr(value, "_kernels"):
                value._kernels = None
                value._hash = None
    for spec in DICT_CACHES:
        mod_name, _, attr = spec.partition(":")
        mod = sys.modules.get(mod_name)
        cache = getattr(mod, attr, None) if mod is not None else None
        if isinstance(cache, dict):
            cache.clear()


# ------------------------------------------------------------------------------------------------
# planting


_ACTIVE: list = []


def active() -> tuple:
    """The plants active in this process, innermost last."""
    return tuple(p for p, _ in _ACTIVE)


def _aliases(original) -> list:
    """``(module, attribute)`` of every loaded ``attnlimits`` module that holds ``original`` itself
    (``from x import f`` copies the reference; these are replaced as well)."""
    out = []
    if original is None or isinstance(original, (bool, int, float, complex, str, bytes)):
        return out  # shared values: an equal object elsewhere is not a copy of this attribute
    for name, mod in list(sys.modules.items()):
        if not name.startswith("attnlimits") or mod is None:
            continue
        for attr, value in list(getattr(mod, "__dict__", {}).items()):
            if value is original:
                out.append((mod, attr))
    return out


class _Undo:
    def __init__(self, patched, env_old, tmp):
        self.patched, self.env_old, self.tmp = patched, env_old, tmp

    def __call__(self):
        for mod, attr, old in reversed(self.patched):
            setattr(mod, attr, old)
        if self.env_old is None:
            os.environ.pop("ATTNLIMITS_CACHE_DIR", None)
        else:
            os.environ["ATTNLIMITS_CACHE_DIR"] = self.env_old
        clear_caches()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)  # a folder this module made


def _install(plant: Plant, *, isolate_cache: bool = True) -> _Undo:
    mod, attr, original = resolve_target(plant.target)
    replacement = plant.transform(original)
    if replacement is original:
        raise ValueError(f"plant {plant.name}: the transform returned the original object")
    tmp = env_old = None
    if isolate_cache:
        env_old = os.environ.get("ATTNLIMITS_CACHE_DIR")
        tmp = tempfile.mkdtemp(prefix=f"attnlimits-plant-{_safe(plant.name)}-")
        os.environ["ATTNLIMITS_CACHE_DIR"] = tmp
    patched = []
    for m, a in [(mod, attr)] + [x for x in _aliases(original) if x != (mod, attr)]:
        patched.append((m, a, getattr(m, a)))
        setattr(m, a, replacement)
    clear_caches()
    return _Undo(patched, env_old, tmp)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


@contextlib.contextmanager
def planted(plant: Plant, *, isolate_cache: bool = True):
    """Put ``plant`` into this process for the ``with`` block, then restore the original objects.

    Caches are cleared on entry and exit and the on-disk cache is a temporary folder meanwhile
    (``isolate_cache=False`` keeps the caller's ``ATTNLIMITS_CACHE_DIR``: only for plants that touch
    no generated code).
    """
    undo = _install(plant, isolate_cache=isolate_cache)
    _ACTIVE.append((plant, undo))
    try:
        yield plant
    finally:
        _ACTIVE.remove((plant, undo))
        undo()


def apply(plant: Plant, *, isolate_cache: bool = True) -> Plant:
    """Put ``plant`` into this process until it ends (a benchmark's planted subprocess); a second call
    with the same plant does nothing.  The temporary cache folder is removed at exit."""
    import atexit

    if plant in active():  # idempotent: a start-up hook may have planted it already
        return plant
    undo = _install(plant, isolate_cache=isolate_cache)
    _ACTIVE.append((plant, undo))
    if undo.tmp is not None:
        atexit.register(shutil.rmtree, undo.tmp, True)
    return plant


# ------------------------------------------------------------------------------------------------
# transforms


def scale_value(value, factor: float, field: str | int | None = None):
    """``value`` times ``factor``: a number (float, NumPy, mpmath, SymPy), or one ``field`` of a
    dataclass (a copy, by :func:`dataclasses.replace`), of a dict (a copy) or of a tuple/list."""
    if field is None:
        return _times(value, factor)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{field: _times(getattr(value, field), factor)})
    if isinstance(value, dict):
        return {**value, field: _times(value[field], factor)}
    if isinstance(value, (tuple, list)):
        items = list(value)
        items[field] = _times(items[field], factor)
        return type(value)(items) if isinstance(value, list) else tuple(items)
    raise TypeError(f"cannot scale field {field!r} of a {type(value).__name__}")


def _times(x, factor):
    if hasattr(x, "free_symbols"):  # SymPy: an exact rational factor (no Float in expressions)
        import sympy as sp

        return x * sp.nsimplify(factor, rational=True)
    if type(x).__module__.startswith("mpmath"):
        import mpmath

        return x * mpmath.mpf(factor)
    return x * factor


def map_return(change: Callable, *, where: Callable | None = None):
    """Transform of a function: its return value ``r`` becomes ``change(r, args, kwargs)`` where
    ``where(args, kwargs, r)`` holds (everywhere when ``where`` is None)."""
    def transform(fn):
        @functools.wraps(fn)
        def planted_fn(*args, **kwargs):
            r = fn(*args, **kwargs)
            if where is None or where(args, kwargs, r):
                return change(r, args, kwargs)
            return r

        planted_fn.__wrapped_original__ = fn
        for name in ("cache_clear", "cache_info"):  # the original's cache, for clear_caches
            if hasattr(fn, name):
                setattr(planted_fn, name, getattr(fn, name))
        return planted_fn

    return transform


def scale_return(size: float, *, field: str | int | None = None, where: Callable | None = None):
    """Transform of a function: its return value (or ``field`` of it, :func:`scale_value`) times
    ``1 + size`` where ``where(args, kwargs, result)`` holds."""
    return map_return(lambda r, a, k: scale_value(r, 1 + size, field), where=where)


def scale_expr(size: float, condition=None):
    """Transform of a SymPy expression: ``expr·(1 + size)``, or ``expr·Piecewise((1 + size, condition),
    (1, True))`` — the error only where ``condition`` (a SymPy relational in the expression's
    parameters) holds.  ``size`` becomes an exact rational."""
    def transform(expr):
        import sympy as sp

        f = sp.nsimplify(1 + size, rational=True)
        if condition is None:
            return expr * f
        return expr * sp.Piecewise((f, condition), (sp.S.One, True))

    return transform


def map_system(change_updates: Callable):
    """Transform of an :class:`attnlimits.symbolic.system.EquationSystem`: a copy whose updates are
    ``change_updates(updates)`` (observables, invariants and initial guess kept)."""
    def transform(system):
        new = dataclasses.replace(system, updates=tuple(change_updates(tuple(system.updates))))
        return new

    return transform


def site_hook_source(catalogue_dir: str) -> str:
    """Text of a ``sitecustomize.py`` that applies the plant named in ``$ATTNLIMITS_PLANT`` (from the
    catalogue module ``mutants`` in ``catalogue_dir``) when an interpreter starts: how a plant reaches
    the Python processes a planted run starts.  Only a benchmark writes it, into a temporary folder
    it puts on ``PYTHONPATH``."""
    return (
        '"""Written by benchmarks/bench_power.py (test-only): apply $ATTNLIMITS_PLANT at start."""\n'
        "import os, sys\n"
        f"_name = os.environ.get({ENV_PLANT!r})\n"
        "if _name:\n"
        f"    sys.path.insert(0, {str(catalogue_dir)!r})\n"
        "    import mutants\n"
        "    mutants.apply(_name)\n"
    )
