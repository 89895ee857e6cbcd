"""Fixed-point solver: escalation, failure messages, invariants, precision."""
from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from attnlimits.numeric import ConvergenceError, InvariantError, compile_system
from attnlimits.symbolic.system import EquationSystem, Invariant

x, a = sp.symbols("x a", real=True)

#: Dottie number (fixed point of cos), 60 digits — an independent constant (OEIS A003957)
DOTTIE = "0.739085133215160641655312087673873404013411758900757464965680635"


@pytest.mark.parametrize("dps", [30, 50])
def test_mpmath_solve_at_two_precisions(dps):
    s = EquationSystem("dottie", [x], [a], [a * sp.cos(x)], {"x": x}, initial_guess=[0])
    cs = compile_system(s, "mpmath")
    with mpmath.workdps(dps):
        res = cs.solve({"a": 1})
        assert abs(res.values[x] - mpmath.mpf(DOTTIE)) < mpmath.mpf(10) ** (-dps + 4)
        assert "newton" in res.method


def test_escalates_to_anderson_when_damping_diverges():
    # G(x) = a - 4x: damped iteration x <- x/2 + G(x)/2 has factor -1.5 and diverges
    s = EquationSystem("stiff", [x], [a], [a - 4 * x], {"x": x}, initial_guess=[0])
    res = compile_system(s).solve({"a": 5})
    assert float(res.values[x]) == pytest.approx(1.0, abs=1e-13)
    assert "anderson" in res.method and res.stability == pytest.approx(4)


def test_no_fixed_point_raises_useful_error():
    s = EquationSystem("nofix", [x], [a], [x + 1 + a**2], {"x": x}, initial_guess=[0])
    with pytest.raises(ConvergenceError) as info:
        compile_system(s).solve({"a": 0.5})
    msg = str(info.value)
    assert "nofix" in msg and "a=0.5" in msg and "residual" in msg and "Try:" in msg
    assert "\n" not in msg


def test_invariant_violation_is_typed():
    s = EquationSystem("neg", [x], [a], [a], {"x": x}, initial_guess=[0],
                       invariants=[Invariant("x > 0", x > 0)])
    assert float(compile_system(s).solve({"a": 2}).values[x]) == 2
    with pytest.raises(InvariantError, match="x > 0"):
        compile_system(s).solve({"a": -1})


def test_warm_start_uses_newton():
    s = EquationSystem("dottie", [x], [a], [a * sp.cos(x)], {"x": x}, initial_guess=[0])
    cs = compile_system(s)
    cold = cs.solve({"a": 1})
    warm = cs.solve({"a": 1.01}, x0=cold.x)
    assert warm.method == "newton(warm)" and warm.iterations <= 5
