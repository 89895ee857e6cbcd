"""The shared frozen-map toolkit (attnlimits.numeric.frozen): the ladder, its domain and the finite-difference
Jacobian.  Expected values are closed forms."""
import math

import numpy as np
import pytest

from attnlimits.numeric.frozen import Domain, LadderOptions, fd_jacobian, ladder, relative_residual


def test_ladder_reaches_the_fixed_point_of_a_contraction():
    # x = cos(x) componentwise: the Dottie number 0.7390851332151607 (closed form of no kind, but the
    # residual is exact: cos(x*) - x* = 0 to float precision)
    G = np.cos
    r = ladder(G, np.array([0.0, 1.0, 2.0]), 1e-12)
    assert r.residual <= 1e-12
    assert np.allclose(r.x, 0.7390851332151607, atol=1e-11)
    assert r.evaluations >= r.iterations > 0
    assert "anderson" in r.method


def test_ladder_stages_follow_the_options():
    G = np.cos
    r = ladder(G, np.array([0.5]), 1e-12, options=LadderOptions(damped_exit=0.0, max_damped=3, newton_at=1e-3,
                                                               max_newton=0))
    assert r.method.startswith("damped") and "newton" not in r.method and r.J is None
    r2 = ladder(G, np.array([0.5]), 1e-13, options=LadderOptions(newton_at=1e-2, max_newton=8))
    assert "newton" in r2.method and r2.J is not None and r2.residual <= 1e-13


def test_ladder_keeps_iterates_in_the_domain():
    seen = []

    def G(x):
        seen.append(np.array(x))
        return 1.5 * x - 0.2  # repelling fixed point at 0.4; the domain [0, 1] clips the iterates

    clip = Domain(project=lambda x: np.clip(np.asarray(x, float), 0.0, 1.0), residual=relative_residual)
    ladder(G, np.array([0.9]), 1e-12, options=LadderOptions(max_damped=5, max_anderson=5, max_newton=2), domain=clip)
    assert all(0.0 <= float(v[0]) <= 1.0 for v in seen)


def test_fd_jacobian_default_and_injected_step():
    def G(x):
        return np.array([x[0] ** 2 + x[1], math.sin(x[1])])

    x = np.array([0.3, 0.7])
    exact = np.array([[2 * x[0], 1.0], [0.0, math.cos(x[1])]])
    J = fd_jacobian(G, x, G(x))
    assert np.allclose(J, exact, atol=1e-5)  # forward differences, step 1e-6: error O(1e-6)
    J2 = fd_jacobian(G, x, G(x), step=lambda xj: 1e-7 * max(1e-3, min(xj, 1 - xj)))
    assert np.allclose(J2, exact, atol=1e-6)


def test_relative_residual():
    assert relative_residual(np.array([2.0, 0.5]), np.array([1.0, 0.0])) == pytest.approx(1.0)
    assert relative_residual(np.array([30.0]), np.array([10.0])) == pytest.approx(2.0)
