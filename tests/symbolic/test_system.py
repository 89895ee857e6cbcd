"""EquationSystem: validation, Jacobians, implicit derivatives; §8 E derived from MP moments."""
from __future__ import annotations

import math

import pytest
import sympy as sp

from attnlimits.derivations import attention_rmt as R
from attnlimits.numeric import compile_system
from attnlimits.symbolic.codegen import FloatLiteralError
from attnlimits.symbolic.system import EquationSystem, Invariant

x, a = sp.symbols("x a", real=True)


def dottie():
    return EquationSystem("dottie", [x], [a], [a * sp.cos(x)], {"x": x, "x2": x**2}, initial_guess=[0])


def test_validation_errors():
    with pytest.raises(ValueError, match="undeclared"):
        EquationSystem("s", [x], [a], [sp.Symbol("b") * x], initial_guess=[0])
    with pytest.raises(ValueError, match="2 equations"):
        EquationSystem("s", [x], [a], [x, a])
    with pytest.raises(FloatLiteralError):
        EquationSystem("s", [x], [a], [sp.Float("0.3") * x])


def test_jacobian_and_implicit_derivative_closed_form():
    s = dottie()
    assert sp.simplify(s.jacobian()[0, 0] - (1 + a * sp.sin(x))) == 0
    cs = compile_system(s, "numpy", derivative_params=[a])
    res = cs.solve({"a": 0.8})
    xv = float(res.values[x])
    assert xv == pytest.approx(0.8 * math.cos(xv), abs=1e-14)
    d = cs.observable_derivatives({"a": 0.8}, "a")
    # x = a cos x  =>  dx/da = cos x / (1 + a sin x): closed form, not finite differences
    expected = math.cos(xv) / (1 + 0.8 * math.sin(xv))
    assert float(d["x"]) == pytest.approx(expected, rel=1e-13)
    assert float(d["x2"]) == pytest.approx(2 * xv * expected, rel=1e-13)
    assert res.stability < 1  # plain iteration is a contraction here


def test_m1_derived_from_mp_moments_equals_spec():
    # docs/attention_rmt.md §8 E: M1 = nu + a1^2/c + 2 kappa a1 + c kappa^2 (stated); derived here from the series
    m1 = R.large_gamma_m1()
    spec = R.nu + R.a1**2 / R.c + 2 * R.kappa * R.a1 + R.c * R.kappa**2
    assert sp.simplify(m1 - spec) == 0


def test_crossover_c_star():
    cs = R.crossover_c_star()
    assert sp.simplify(cs - (R.nu + sp.sqrt(R.nu**2 + 4 * R.a1**2)) / 2) == 0
    # tanh: 0.8341, erf: 0.9239, ReLU: 0.6987, linear: 1.618 (docs/attention_rmt.md §4.1 table)
    for a1v, nuv, expected in [(0.605706, 0.394294, 0.8341), (2 / math.sqrt(3 * math.pi), 2 / math.pi * math.asin(2 / 3), 0.9239),
                               (0.5, 0.5 - 1 / (2 * math.pi), 0.6987), (1, 1, 1.618)]:
        assert float(cs.subs({R.a1: a1v, R.nu: nuv})) == pytest.approx(expected, abs=5e-4)


def test_noise_kernel_law_reduces_to_mp_for_linear_f():
    # a1 = nu = 1 (f = t): m = -(z + m/(c + m))^-1, the MP-type equation of Z^T Z/p - I
    m_eq = R.noise_kernel_stieltjes_update.subs({R.a1: 1, R.nu: 1})
    assert sp.simplify(m_eq + 1 / (R.z + R.stieltjes_m / (R.c + R.stieltjes_m))) == 0


def test_ridge_closed_form_limits():
    # §7: gamma -> 0: (1-c)/(1+SNR) for c < 1; gamma -> oo: 1 - E ~ 2(c + SNR)/gamma
    E = R.error_ridge
    f = sp.lambdify((R.c, R.gamma, R.snr), E, "mpmath")
    assert float(f(0.25, 1e-9, 1)) == pytest.approx(0.75 / 2, abs=1e-7)
    g = 1e6
    assert (1 - float(f(0.5, g, 2))) * g == pytest.approx(2 * (0.5 + 2), rel=1e-4)
    # c > 1: decays like gamma^2 (log-log slope 2)
    e1, e2 = float(f(2, 1e-4, 1)), float(f(2, 1e-5, 1))
    assert math.log(e1 / e2) / math.log(10) == pytest.approx(2, abs=0.01)


def test_invariants_are_relations():
    inv = Invariant("pos", x > 0)
    s = EquationSystem("s", [x], [a], [a], initial_guess=[1], invariants=[inv])
    assert s.invariant_kernel_outputs() == [x]
