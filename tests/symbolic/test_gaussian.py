"""Tests for attnlimits.symbolic.gaussian (GUIDE §2; docs/slr.md §6–§8).

Expected values are independent of the code under test: Gaussian moments written out by hand
(E x^{2k} = (2k-1)!!, E[x^2 y^2] = 1 + 2 rho^2), closed forms (E e^{ax} = e^{a^2/2},
E[erf(ax)^2] = (2/pi) asin(2a^2/(1+2a^2)), E max(g1, g2) = 1/sqrt(pi), E|x| = sqrt(2/pi)) and the
spec's reference Bayes errors (docs/slr.md §9 R3).
"""
from __future__ import annotations

import math
import time

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import given, strategies as st
from sympy import Rational

from attnlimits.symbolic.gaussian import (
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

x, y, z = sympy.symbols("x y z")
a, rho, mu, s = sympy.symbols("a rho mu s")


def sigmoid_np(u):
    return 0.5 * (1.0 + np.tanh(0.5 * u))


# ------------------------------------------------------------------------------------------
# wick_expectation
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("k, expected", [(0, 1), (1, 0), (2, 1), (3, 0), (4, 3), (6, 15), (8, 105)])
def test_wick_standard_moments_are_exact_integers(k, expected):
    got = wick_expectation(x ** k, [x])
    assert got == expected and isinstance(got, sympy.Integer)


def test_wick_symbolic_coefficients_and_correlation():
    assert sympy.expand(wick_expectation((a + x) ** 2, [x]) - (a ** 2 + 1)) == 0
    corr = [[1, rho], [rho, 1]]
    assert wick_expectation(x * y, [x, y], cov=corr) == rho
    assert sympy.expand(wick_expectation(x ** 2 * y ** 2, [x, y], cov=corr) - (1 + 2 * rho ** 2)) == 0
    # x^3 y with correlation: 3 rho (three pairings of x with y)
    assert sympy.expand(wick_expectation(x ** 3 * y, [x, y], cov=corr) - 3 * rho) == 0
    # coefficients may be non-polynomial in the parameters
    assert wick_expectation(sympy.exp(a) * x ** 2 + sympy.sin(a), [x]) == sympy.exp(a) + sympy.sin(a)


def test_wick_mean_and_variance():
    got = wick_expectation(x ** 3, [x], mean=[mu], cov=[[s]])
    assert sympy.expand(got - (mu ** 3 + 3 * mu * s)) == 0
    got = wick_expectation(x ** 4, [x], mean=[mu], cov=[[s]])
    assert sympy.expand(got - (mu ** 4 + 6 * mu ** 2 * s + 3 * s ** 2)) == 0
    # E[x y] = Cov + mu_x mu_y
    got = wick_expectation(x * y, [x, y], mean=[mu, a], cov=[[1, rho], [rho, 2]])
    assert sympy.expand(got - (rho + mu * a)) == 0


def test_wick_keeps_rationals_and_reads_floats_as_decimals():
    got = wick_expectation(x ** 2 + y ** 4, [x, y], mean=[Rational(1, 3), 0], cov=[[0.1, 0], [0, 0.5]])
    assert got == Rational(1, 10) + Rational(1, 9) + 3 * Rational(1, 4)
    assert not got.atoms(sympy.Float)


def test_wick_matches_mixed_moment_from_generating_function():
    # E[x^2 y^2 z^2] for a 3x3 correlated Gaussian, from the MGF exp(t' S t / 2).
    S = sympy.Matrix([[2, 1, 0], [1, 3, 1], [0, 1, 1]])
    t = sympy.symbols("t0:3")
    tv = sympy.Matrix(t)
    mgf = sympy.exp((tv.T * S * tv)[0] / 2)
    expected = sympy.diff(mgf, t[0], 2, t[1], 2, t[2], 2).subs({ti: 0 for ti in t})
    assert wick_expectation(x ** 2 * y ** 2 * z ** 2, [x, y, z], cov=S) == expected


@pytest.mark.parametrize("expr", [sympy.sin(x), 1 / x, sympy.sqrt(x), sympy.Abs(x), x ** a,
                                  sympy.exp(a * x) + x])
def test_wick_rejects_non_polynomials_with_one_line_message(expr):
    with pytest.raises(NotPolynomialError) as info:
        wick_expectation(expr, [x])
    assert isinstance(info.value, ValueError)
    assert "\n" not in str(info.value) and "polynomial" in str(info.value)


def test_wick_validates_shapes_and_symmetry():
    with pytest.raises(ValueError, match="symmetric"):
        wick_expectation(x * y, [x, y], cov=[[1, 0], [1, 1]])
    with pytest.raises(ValueError, match="2x2"):
        wick_expectation(x * y, [x, y], cov=[[1]])
    with pytest.raises(ValueError, match="distinct"):
        wick_expectation(x, [x, x])
    with pytest.raises(ValueError, match="semi-definite"):
        wick_expectation(x * y, [x, y], cov=[[1, 2], [2, 1]])


def test_wick_quadratic_form_in_100_variables_is_fast():
    xs = sympy.symbols("x0:100")
    coeffs = sympy.symbols("c0:5050")
    pairs = [(i, j) for i in range(100) for j in range(i, 100)]
    form = sympy.Add(*[coeffs[k] * xs[i] * xs[j] for k, (i, j) in enumerate(pairs)])
    start = time.perf_counter()
    got = wick_expectation(form, xs)
    elapsed = time.perf_counter() - start
    trace = sympy.Add(*[coeffs[k] for k, (i, j) in enumerate(pairs) if i == j])
    assert got == trace
    assert elapsed < 2.0


@given(
    chol=st.lists(st.integers(-2, 2), min_size=3, max_size=3),
    m=st.lists(st.integers(-4, 4), min_size=2, max_size=2),
    c=st.lists(st.integers(-5, 5), min_size=6, max_size=6),
)
def test_wick_equals_gauss_hermite_on_random_quadratics(chol, m, c):
    # random symmetric PSD covariance L L^T (possibly singular), rational mean, quadratic polynomial
    L = sympy.Matrix([[chol[0], 0], [chol[1], chol[2]]])
    cov = L * L.T
    mean = [Rational(m[0], 2), Rational(m[1], 3)]
    poly = c[0] + c[1] * x + c[2] * y + c[3] * x ** 2 + c[4] * x * y + c[5] * y ** 2
    exact = wick_expectation(poly, [x, y], mean=mean, cov=cov)
    assert exact.is_Rational
    fn = sympy.lambdify((x, y), poly, "numpy")
    res = gaussian_expectation(lambda p: fn(p[:, 0], p[:, 1]) + 0 * p[:, 0], 2,
                               mean=[float(v) for v in mean],
                               cov=np.array(cov.tolist(), dtype=float), method="gauss-hermite")
    assert res.method == "gauss-hermite"
    assert abs(res.value - float(exact)) <= 1e-10


# ------------------------------------------------------------------------------------------
# rules
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dim, n", [(1, 8), (2, 5), (3, 4)])
def test_gauss_hermite_rule_shape_weights_and_exactness(dim, n):
    nodes, weights = gauss_hermite_rule(dim, n)
    assert nodes.shape == (n ** dim, dim) and weights.shape == (n ** dim,)
    assert abs(weights.sum() - 1) < 1e-14
    assert not nodes.flags.writeable and not weights.flags.writeable
    assert gauss_hermite_rule(dim, n)[0] is nodes  # cached
    # exact up to degree 2n - 1 per variable: E[x1^(2n-2)] = (2n-3)!!
    deg = 2 * n - 2
    assert math.isclose(weights @ nodes[:, 0] ** deg, float(sympy.factorial2(deg - 1)), rel_tol=1e-12)
    with pytest.raises(ValueError):
        nodes[0, 0] = 1.0


def test_sobol_normal_shape_determinism_and_errors():
    pts = sobol_normal(256, 3, seed=7, replicates=4)
    assert pts.shape == (4, 256, 3) and np.all(np.isfinite(pts))
    assert np.array_equal(pts, sobol_normal(256, 3, seed=7, replicates=4))
    assert not np.allclose(pts[0], pts[1])  # independent scramblings
    assert not np.allclose(pts, sobol_normal(256, 3, seed=8, replicates=4))
    assert abs(pts.mean()) < 0.02 and abs(pts.var() - 1) < 0.02
    with pytest.raises(ValueError, match="power of 2"):
        sobol_normal(100, 2, seed=0)


# ------------------------------------------------------------------------------------------
# gaussian_expectation
# ------------------------------------------------------------------------------------------

def test_gauss_hermite_exp_and_correlated_mean_cov():
    r = gaussian_expectation(lambda p: np.exp(0.7 * p[:, 0]), 1)
    assert r.method == "gauss-hermite" and abs(r.value - math.exp(0.49 / 2)) < 1e-10
    mean, cov = np.array([0.3, -0.2]), np.array([[1.0, 0.4], [0.4, 0.5]])
    r = gaussian_expectation(lambda p: np.exp(p[:, 0] + p[:, 1]), 2, mean=mean, cov=cov)
    assert abs(r.value - math.exp(0.1 + 0.5 * cov.sum())) < 1e-10
    assert float(r) == r.value and r.n_evals > 0


def test_vector_valued_integrand():
    r = gaussian_expectation(lambda p: np.stack([p[:, 0] ** 2, np.cos(p[:, 0]), sigmoid_np(p[:, 0])], 1), 1)
    assert r.value.shape == (3,) and r.error.shape == (3,)
    assert np.allclose(r.value, [1.0, math.exp(-0.5), 0.5], atol=1e-10)
    with pytest.raises(TypeError):
        float(r)


def test_singular_covariance_via_eigh():
    cov = [[1.0, 1.0], [1.0, 1.0]]  # x = y almost surely
    r = gaussian_expectation(lambda p: np.stack([(p[:, 0] - p[:, 1]) ** 2, p[:, 0] * p[:, 1]], 1), 2, cov=cov)
    assert np.allclose(r.value, [0.0, 1.0], atol=1e-12)
    with pytest.raises(ValueError, match="semi-definite"):
        gaussian_expectation(lambda p: p[:, 0], 2, cov=[[1.0, 2.0], [2.0, 1.0]])


HONEST_CASES = {  # float64 integrand, mpmath integrand (30-digit reference)
    "cos": (np.cos, mpmath.cos),
    "exp": (lambda u: np.exp(1.5 * u), lambda u: mpmath.exp(1.5 * u)),
    "sigmoid": (lambda u: sigmoid_np(2 * u + 1), lambda u: 1 / (1 + mpmath.exp(-2 * u - 1))),
    "lorentzian": (lambda u: 1 / (4 + u ** 2), lambda u: 1 / (4 + u ** 2)),
    "oscillating": (lambda u: np.sin(5 * u + 1), lambda u: mpmath.sin(5 * u + 1)),
}


@pytest.mark.parametrize("name", sorted(HONEST_CASES))
@pytest.mark.parametrize("tol", [1e-4, 1e-8, 1e-11])
def test_gauss_hermite_error_estimate_is_honest(name, tol):
    f, g = HONEST_CASES[name]
    exact = float(expectation_1d_mp(g, dps=30)[0])
    r = gaussian_expectation(lambda p: f(p[:, 0]), 1, tol=tol)
    assert r.error <= tol
    assert abs(r.value - exact) <= 10 * r.error


def test_gauss_hermite_failure_says_what_to_try():
    with pytest.raises(IntegrationError) as info:
        gaussian_expectation(lambda p: np.abs(p[:, 0]), 1, tol=1e-14)
    msg = str(info.value)
    assert "dim=1" in msg and "tol=1e-14" in msg and "qmc" in msg and "\n" not in msg


def test_non_finite_integrand_raises():
    with pytest.raises(IntegrationError, match="non-finite"):
        gaussian_expectation(lambda p: np.where(p[:, 0] > 5, np.inf, 0.0), 1)


def test_qmc_max_of_two_gaussians_within_4_se():
    r = gaussian_expectation(lambda p: np.max(p, axis=1), 2, method="qmc", seed=3)
    assert r.method == "qmc" and r.n_evals == 16 * 2 ** 14
    k = 4  # standard errors
    assert abs(r.value - 1 / math.sqrt(math.pi)) <= k * r.error
    assert r.error < 1e-4


def test_qmc_dim5_smooth_vs_exact():
    c = np.array([0.3, -0.2, 0.5, 0.1, 0.4])
    exact = math.exp(0.5 * c @ c) + math.exp(-2.5)  # E exp(c.x) + E prod cos(x_i)
    r = gaussian_expectation(lambda p: np.exp(p @ c) + np.prod(np.cos(p), axis=1), 5, seed=1)
    assert r.method == "qmc"
    assert abs(r.value - exact) <= 4 * r.error and r.error < 1e-4


def test_argument_errors():
    with pytest.raises(ValueError, match="method"):
        gaussian_expectation(lambda p: p[:, 0], 1, method="simpson")
    with pytest.raises(ValueError, match="vectorised"):
        gaussian_expectation(lambda p: np.ones(3), 1)
    with pytest.raises(ValueError, match="replicates"):
        gaussian_expectation(lambda p: p[:, 0], 5, replicates=1)


# ------------------------------------------------------------------------------------------
# one-dimensional quadrature
# ------------------------------------------------------------------------------------------

def test_expectation_1d_kinks_and_scalar_functions():
    r = expectation_1d(abs, splits=[0.0])
    assert r.method == "scipy-quad" and abs(r.value - math.sqrt(2 / math.pi)) < 1e-12 and r.error < 1e-11
    # E max(x, 0) for x ~ N(m, sd^2) = m Phi(m/sd) + sd phi(m/sd)
    m, sd = 0.4, 1.7
    exact = m * 0.5 * math.erfc(-m / sd / math.sqrt(2)) + sd * math.exp(-(m / sd) ** 2 / 2) / math.sqrt(2 * math.pi)
    r = expectation_1d(lambda u: max(u, 0.0), mean=m, sd=sd, splits=[0.0])
    assert abs(r.value - exact) < 1e-12
    assert expectation_1d(math.cos, mean=2.0, sd=0.0).value == math.cos(2.0)


def test_expectation_1d_quad_problem_becomes_integration_error():
    with pytest.raises(IntegrationError, match="quad|finite"):
        with np.errstate(over="ignore"):
            expectation_1d(lambda u: np.exp(0.6 * u * u))  # E exp(0.6 x^2) diverges


@pytest.mark.parametrize("nu, expected", [(5, 0.084397), (1, 0.32494)])
def test_expectation_1d_mp_spiked_bayes_error(nu, expected):
    # spiked-SLR L = 2 Bayes error E_n[sigmoid(-nu - sqrt(2 nu) n)] (docs/slr.md §7, §9 R3)
    def f(n):
        return 1 / (1 + mpmath.exp(nu + mpmath.sqrt(2 * nu) * n))

    value, err = expectation_1d_mp(f, dps=20)
    assert mpmath.mp.dps == 15  # global precision untouched
    assert err < mpmath.mpf(10) ** -15
    assert abs(value - expected) <= 0.5 * 10 ** (math.floor(math.log10(expected)) - 4)
    r = expectation_1d(lambda n: sigmoid_np(-nu - math.sqrt(2 * nu) * n))
    assert abs(r.value - float(value)) < 1e-11


def test_expectation_1d_mp_two_precisions_agree():
    def f(n):
        return 1 / (1 + mpmath.exp(5 + mpmath.sqrt(10) * n))

    v20, e20 = expectation_1d_mp(f, dps=20)
    v40, e40 = expectation_1d_mp(f, dps=40)
    assert abs(v20 - v40) < mpmath.mpf(10) ** -18
    assert e40 < mpmath.mpf(10) ** -35
    assert mpmath.mp.dps == 15
    # mean and sd given as SymPy numbers / strings; splits accepted
    v, _ = expectation_1d_mp(lambda u: abs(u), dps=30, mean=sympy.Rational(1, 2), sd="2", splits=[0])
    m, sd = mpmath.mpf(1) / 2, mpmath.mpf(2)
    with mpmath.workdps(30):
        exact = m * (1 - 2 * mpmath.ncdf(-m / sd)) + 2 * sd * mpmath.npdf(m / sd)
    assert abs(v - exact) < mpmath.mpf(10) ** -25


# ------------------------------------------------------------------------------------------
# GaussianExpectation node
# ------------------------------------------------------------------------------------------

def test_node_is_a_sympy_expression_with_bound_variables():
    E = GaussianExpectation((a + x) ** 2, [x])
    assert E.free_symbols == {a}
    assert E.dim == 1 and E.variables == (x,)
    assert sympy.expand(E.doit() - (a ** 2 + 1)) == 0
    assert (2 * E + 1).subs(a, 3).doit() == 21
    assert E.subs(x, 5) == E  # bound variable untouched
    assert E.diff(x) == 0 and E.diff(y) == 0
    assert E.func(*E.args) == E and hash(E) == hash(E.func(*E.args))
    assert "E[" in str(E)


def test_node_doit_closed_form_by_sympy_in_1d():
    E = GaussianExpectation(sympy.exp(a * x), [x])
    assert sympy.simplify(E.doit() - sympy.exp(a ** 2 / 2)) == 0


def test_node_derivative_by_price_theorem():
    E = GaussianExpectation(x ** 2 * y ** 2, [x, y], cov=[[1, rho], [rho, 1]])
    assert sympy.expand(E.diff(rho).doit() - 4 * rho) == 0
    E = GaussianExpectation(x ** 4, [x], mean=[mu], cov=[[s]])
    assert sympy.expand(E.diff(mu).doit() - sympy.diff(mu ** 4 + 6 * mu ** 2 * s + 3 * s ** 2, mu)) == 0
    assert sympy.expand(E.diff(s).doit() - (6 * mu ** 2 + 6 * s)) == 0
    # non-polynomial: d/da E[exp(a x)] = a exp(a^2/2)
    r = GaussianExpectation(sympy.exp(a * x), [x]).diff(a).numeric({a: 0.5})
    assert abs(r.value - 0.5 * math.exp(0.125)) < 1e-10


def test_node_numeric_methods():
    r = GaussianExpectation(x ** 4 + a, [x]).numeric({"a": 1})
    assert r.method == "wick" and r.value == 4.0
    r = GaussianExpectation(1 / (1 + sympy.exp(-x)), [x]).numeric()
    assert r.method == "gauss-hermite" and abs(r.value - 0.5) < 1e-12
    erf2 = GaussianExpectation(sympy.erf(a * x) ** 2, [x])
    for av in (0.3, 1.2):
        exact = 2 / math.pi * math.asin(2 * av ** 2 / (1 + 2 * av ** 2))
        r = erf2.numeric({a: av})
        assert r.method == "gauss-hermite" and abs(r.value - exact) < 1e-10
    r = GaussianExpectation(sympy.Abs(x - 1), [x], mean=[1], cov=[[4]]).numeric()
    assert r.method == "scipy-quad" and abs(r.value - 2 * math.sqrt(2 / math.pi)) < 1e-10
    r = GaussianExpectation(sympy.Max(x, y), [x, y]).numeric(seed=5)
    assert r.method == "qmc" and abs(r.value - 1 / math.sqrt(math.pi)) <= 4 * r.error


def test_node_numeric_reports_missing_parameters():
    with pytest.raises(ValueError, match="a"):
        GaussianExpectation(sympy.exp(a * x), [x]).numeric()
    with pytest.raises(ValueError, match="Gaussian variable"):
        GaussianExpectation(sympy.exp(a * x), [x]).numeric({x: 1, a: 1})


def test_result_type():
    r = GaussianIntegral(1.5, 1e-9, "gauss-hermite", 20)
    assert float(r) == 1.5


def test_user_strings_are_never_evaluated():
    with pytest.raises(TypeError, match="strings"):
        wick_expectation("x**2", [x])
    with pytest.raises(TypeError, match="strings"):
        GaussianExpectation(x ** 2, [x], cov=[["__import__('os')"]])
