"""Solvers generated from symbolic systems: fixed points, precision polish, sweeps, export."""
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
