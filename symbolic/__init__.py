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
- Results as plug-ins: :class:`Result`, :class:`Command`, :class:`Param` (:mod:`attnlimits.symbolic.result`).

Names are imported on first use.
"""
import importlib as _importlib

_EXPORTS = {
    "codegen": ["FloatLiteralError", "Kernel", "ModuleBuilder", "assert_exact", "expression_hash", "load_module",
                "print_expr"],
    "gaussian": ["GaussianExpectation", "GaussianIntegral", "IntegrationError", "NotPolynomialError",
                 "expectation_1d", "expectation_1d_mp", "gauss_hermite_rule", "gaussian_expectation",
                 "sobol_normal", "wick_expectation"],
    "functions": ["LogSoftplus", "LogSoftplusPrime", "Sigmoid", "Softplus"],
    "hermite": ["BUILTIN_ACTIVATIONS", "ActivationError", "HermiteData", "hermite_coefficient",
                "hermite_coefficients", "kinks", "parse_activation", "t"],
    "matexpr": ["directional_derivative", "matrix_diff", "scalar_diff"],
    "model": ["GeneratedModel"],
    "spectral": ["MarchenkoPasturLaw", "SpectralAverage", "replace_averages_by_moments"],
    "system": ["EquationSystem", "Invariant"],
    "result": ["Result", "Command", "Param", "InputError", "discover_results", "register_result", "resolve"],
}
_WHERE = {name: mod for mod, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name):
    # imported on first use, so that light modules (attnlimits.symbolic.result) cost no SymPy import
    if name in _WHERE:
        return getattr(_importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
