"""Continuation checked against independent root finding (the docstring examples of every module
run in ``tests/test_docstring_examples.py``, against the installed package)."""
from __future__ import annotations


def test_sweep_matches_independent_root_finding():
    import mpmath
    import sympy as sp

    from attnlimits.numeric import compile_system
    from attnlimits.symbolic.system import EquationSystem

    x, a = sp.symbols("x a")
    s = EquationSystem("dottie", [x], [a], [a * sp.cos(x)], {"x": x}, initial_guess=[0])
    values = [0.2 + 0.05 * k for k in range(20)]
    res = compile_system(s, derivative_params=[a]).sweep({"a": 1}, "a", values)
    for v, r in zip(values, res):
        ref = mpmath.findroot(lambda u: u - v * mpmath.cos(u), 0.5)
        assert abs(float(r.values[x]) - float(ref)) < 1e-13
    assert all(r.method == "newton(warm)" for r in res[1:])
