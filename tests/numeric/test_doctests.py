"""Continuation checked against independent root finding (docstring examples of every module are
collected by pytest itself: ``--doctest-modules`` in ``pyproject.toml``)."""
from __future__ import annotations


def test_sweep_matches_independent_root_finding():
    import mpmath
    import sympy as sp

    from numeric import compile_system
    from symbolic.system import EquationSystem

    x, a = sp.symbols("x a")
    s = EquationSystem("dottie", [x], [a], [a * sp.cos(x)], {"x": x}, initial_guess=[0])
    values = [0.2 + 0.05 * k for k in range(20)]
    res = compile_system(s, derivative_params=[a]).sweep({"a": 1}, "a", values)
    for v, r in zip(values, res):
        ref = mpmath.findroot(lambda u: u - v * mpmath.cos(u), 0.5)
        assert abs(float(r.values[x]) - float(ref)) < 1e-13
    assert all(r.method == "newton(warm)" for r in res[1:])
