"""Solvers generated from symbolic systems: fixed points, precision polish, sweeps, export.

Code generation (:mod:`attnlimits.numeric.models`, imported on first use: it needs SymPy):
:func:`compile_model`, :func:`compile_system`, :class:`CompiledSystem`, :func:`export_model`,
:func:`model_source`.

The solvers specific to single-location regression live in :mod:`attnlimits.numeric.slr` (population risks,
Bayes risk, Bayes-optimal state evolution, the replica-symmetric fixed point and their command cores); this face
names only the engine.
"""
import importlib as _importlib
from .portable_solver import (
    ConvergenceError,
    FixedPointResult,
    InvariantError,
    SolveOptions,
    SystemKernels,
    solve_fixed_point,
)

__all__ = [
    "ConvergenceError",
    "FixedPointResult",
    "InvariantError",
    "SolveOptions",
    "SystemKernels",
    "solve_fixed_point",
]

_LAZY = {
    "CompiledSystem": "models", "compile_model": "models", "compile_system": "models", "export_model": "models",
    "model_source": "models",
}
__all__ += sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(_importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
