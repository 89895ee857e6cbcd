"""The engine: Gaussian/Hermite data, spectral averages, equation systems, code generation.

Public API
----------
- Hermite data: :func:`hermite_coefficients`, :func:`hermite_coefficient`, :func:`parse_activation`,
  :data:`BUILTIN_ACTIVATIONS`, :class:`HermiteData`, :class:`ActivationError`, the symbol :data:`t`.
- Spectral averages: :class:`MarchenkoPasturLaw`, :class:`SpectralAverage`.
- Systems: :class:`EquationSystem`, :class:`Invariant`; matrix calculus :func:`matrix_diff`,
  :func:`directional_derivative`.
- Code generation: :class:`Kernel`, :class:`ModuleBuilder`, :func:`load_module`,
  :func:`assert_exact`, :class:`GeneratedModel`.
"""
from .codegen import FloatLiteralError, Kernel, ModuleBuilder, assert_exact, expression_hash, load_module, print_expr
from .hermite import (
    BUILTIN_ACTIVATIONS,
    ActivationError,
    HermiteData,
    hermite_coefficient,
    hermite_coefficients,
    kinks,
    parse_activation,
    t,
)
from .matexpr import directional_derivative, matrix_diff, scalar_diff
from .model import GeneratedModel
from .spectral import MarchenkoPasturLaw, SpectralAverage, replace_averages_by_moments
from .system import EquationSystem, Invariant

__all__ = [
    "BUILTIN_ACTIVATIONS", "ActivationError", "HermiteData", "hermite_coefficient",
    "hermite_coefficients", "kinks", "parse_activation", "t",
    "MarchenkoPasturLaw", "SpectralAverage", "replace_averages_by_moments",
    "EquationSystem", "Invariant", "matrix_diff", "scalar_diff", "directional_derivative",
    "FloatLiteralError", "Kernel", "ModuleBuilder", "assert_exact", "expression_hash",
    "load_module", "print_expr", "GeneratedModel",
]
