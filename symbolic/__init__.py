"""The engine: Gaussian/Hermite data, spectral averages, equation systems, code generation.

Public API
----------
- Hermite data: :func:`hermite_coefficients`, :func:`hermite_coefficient`, :func:`parse_activation`,
  :data:`BUILTIN_ACTIVATIONS`, :class:`HermiteData`, :class:`ActivationError`, the symbol :data:`t`.
- Spectral averages: :class:`MarchenkoPasturLaw`, :class:`SpectralAverage`.
- Systems: :class:`EquationSystem`, :class:`Invariant`; matrix calculus :func:`matrix_diff`,
  :func:`directional_derivative`.
- Gaussian expectations: :func:`wick_expectation` (exact), :class:`GaussianExpectation` (node),
  :func:`gaussian_expectation`, :func:`expectation_1d`, :func:`expectation_1d_mp`,
  :func:`gauss_hermite_rule`, :func:`sobol_normal`, :class:`GaussianIntegral`,
  :class:`IntegrationError`, :class:`NotPolynomialError`.
- Code generation: :class:`Kernel`, :class:`ModuleBuilder`, :func:`load_module`,
  :func:`assert_exact`, :class:`GeneratedModel`.
"""
from .codegen import FloatLiteralError, Kernel, ModuleBuilder, assert_exact, expression_hash, load_module, print_expr
from .gaussian import (
    GaussianExpectation,
    GaussianIntegral,
    IntegrationError,
    NotPolynomialError,
    expectation_1d,
    expectation_1d_mp,
    gauss_hermite_rule,
    gaussian_expectation,
    sobol_normal,
    wick_expectation,
)
from .functions import LogSoftplus, LogSoftplusPrime, Sigmoid, Softplus
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
    "Softplus", "Sigmoid", "LogSoftplus", "LogSoftplusPrime",
    "BUILTIN_ACTIVATIONS", "ActivationError", "HermiteData", "hermite_coefficient",
    "hermite_coefficients", "kinks", "parse_activation", "t",
    "MarchenkoPasturLaw", "SpectralAverage", "replace_averages_by_moments",
    "EquationSystem", "Invariant", "matrix_diff", "scalar_diff", "directional_derivative",
    "FloatLiteralError", "Kernel", "ModuleBuilder", "assert_exact", "expression_hash",
    "load_module", "print_expr", "GeneratedModel",
    "GaussianExpectation", "GaussianIntegral", "IntegrationError", "NotPolynomialError",
    "expectation_1d", "expectation_1d_mp", "gauss_hermite_rule", "gaussian_expectation",
    "sobol_normal", "wick_expectation",
]
