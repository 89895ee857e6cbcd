"""Solvers generated from symbolic systems: fixed points, precision polish, sweeps, export.

Code generation (:mod:`attnlimits.numeric.models`, imported on first use: it needs SymPy):
:func:`compile_model`, :func:`compile_system`, :class:`CompiledSystem`, :func:`export_model`,
:func:`model_source`.

Single-location regression (lazy re-exports, so that ``attnlimits rmt`` does not import them):
:func:`make_setting`, :func:`optimal_population_risk`, :func:`population_risk`,
:func:`population_AB`, :class:`PopulationOptimum` (:mod:`attnlimits.numeric.population`) and
:func:`bayes_risk`, :func:`bayes_risk_varlen` (:mod:`attnlimits.numeric.bayes`).
"""
import importlib as _importlib
from ._portable_solver import (
    ConvergenceError,
    FixedPointResult,
    InvariantError,
    SystemKernels,
    solve_fixed_point,
)

__all__ = [
    "ConvergenceError",
    "FixedPointResult",
    "InvariantError",
    "SystemKernels",
    "solve_fixed_point",
]

_LAZY = {
    "CompiledSystem": "models", "compile_model": "models", "compile_system": "models", "export_model": "models",
    "model_source": "models",
    "make_setting": "population", "optimal_population_risk": "population", "population_risk": "population",
    "population_AB": "population", "PopulationOptimum": "population", "SettingError": "population",
    "bayes_risk": "bayes", "bayes_risk_varlen": "bayes",
}
__all__ += sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(_importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
