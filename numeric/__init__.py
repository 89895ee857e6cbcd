"""Solvers generated from symbolic systems: fixed points, precision polish, sweeps, export.

Single-location regression (lazy re-exports, so that ``attnlimits rmt`` does not import them):
:func:`make_setting`, :func:`optimal_population_risk`, :func:`population_risk`,
:func:`population_AB`, :class:`PopulationOptimum` (:mod:`numeric.population`) and
:func:`bayes_risk`, :func:`bayes_risk_varlen` (:mod:`numeric.bayes`).
"""
import importlib as _importlib
from ._portable_solver import (
    ConvergenceError,
    FixedPointResult,
    InvariantError,
    SystemKernels,
    solve_fixed_point,
)
from .models import CompiledSystem, compile_model, compile_system, export_model, model_source

__all__ = [
    "ConvergenceError",
    "FixedPointResult",
    "InvariantError",
    "SystemKernels",
    "solve_fixed_point",
    "compile_model",
    "compile_system",
    "CompiledSystem",
    "export_model",
    "model_source",
]

_LAZY = {
    "make_setting": "population", "optimal_population_risk": "population", "population_risk": "population",
    "population_AB": "population", "PopulationOptimum": "population", "SettingError": "population",
    "bayes_risk": "bayes", "bayes_risk_varlen": "bayes",
}
__all__ += sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(_importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
