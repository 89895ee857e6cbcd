"""Tests for attnlimits.symbolic.hermite (docs/attention_rmt.md §4.1).

Expected values come from sources independent of the code under test: closed forms written out
with mpmath, the spec's six-digit table, direct ``mpmath.quad`` integrals written here, and
Wick/Isserlis moments E ξ^{2k} = (2k-1)!! for polynomials. Closed forms are checked at two
precisions with tolerances that scale with ``dps``.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import given, strategies as st

from attnlimits.symbolic.hermite import (
    BUILTIN_ACTIVATIONS,
    ActivationError,
    HermiteData,
    hermite_coefficient,
    hermite_coefficients,
    kinks,
    parse_activation,
    t,
)

DPS = (30, 50)


def tol(dps: int) -> mpmath.mpf:
    """Agreement demanded at ``dps`` digits (a few digits of slack for rounding)."""
    return mpmath.mpf(10) ** (-(dps - 5))


def gauss_quad(g, dps: int, points=(0,)) -> mpmath.mpf:
    """Independent reference: E g(ξ) by mpmath.quad split at ``points``, at dps + 15."""
    with mpmath.workdps(dps + 15):
        pts = [mpmath.ninf, *[mpmath.mpf(p) for p in points], mpmath.inf]
        return mpmath.quad(lambda x: g(x) * mpmath.exp(-x * x / 2) / mpmath.sqrt(2 * mpmath.pi), pts)


# Closed forms of (a1, nu) from the spec table, written independently with mpmath.
CLOSED_FORMS = {
    "sin": (lambda: mpmath.exp(-mpmath.mpf(1) / 2), lambda: (1 - mpmath.exp(-2)) / 2),
    "erf": (lambda: 2 / mpmath.sqrt(3 * mpmath.pi), lambda: 2 / mpmath.pi * mpmath.asin(mpmath.mpf(2) / 3)),
    "relu": (lambda: mpmath.mpf(1) / 2, lambda: mpmath.mpf(1) / 2 - 1 / (2 * mpmath.pi)),
    "cos": (lambda: mpmath.mpf(0), lambda: (1 + mpmath.exp(-2)) / 2 - mpmath.exp(-1)),
    "abs": (lambda: mpmath.mpf(0), lambda: 1 - 2 / mpmath.pi),
    "he2": (lambda: mpmath.mpf(0), lambda: mpmath.mpf(1)),
    "he3": (lambda: mpmath.mpf(0), lambda: mpmath.mpf(1)),
    "identity": (lambda: mpmath.mpf(1), lambda: mpmath.mpf(1)),
}

# docs/attention_rmt.md §4.1 table: (a1, nu, b2) to the digits printed there.
SPEC_TABLE = {
    "tanh": (0.605706, 0.394294, 0.02742),
    "sin": (0.606531, 0.432332, 0.06445),
    "erf": (0.651470, 0.464559, 0.04015),
    "sigmoid": (0.206621, 0.043379, 0.000687),
    "relu": (0.5, 0.340845, 0.090845),
    "cos": (0.0, 0.199788, 0.199788),
    "identity": (1.0, 1.0, 0.0),
    "he2": (0.0, 1.0, 1.0),
}


# --------------------------------------------------------------------------------------------
# built-ins and parsing
# --------------------------------------------------------------------------------------------

def test_builtins_are_exact_expressions_in_t():
    assert t.is_real
    assert set(BUILTIN_ACTIVATIONS) == {"tanh", "relu", "erf", "sigmoid", "sin", "cos", "abs",
                                        "he2", "he3", "identity"}
    for name, expr in BUILTIN_ACTIVATIONS.items():
        assert expr.free_symbols == {t}, name
        assert not expr.atoms(sympy.Float), name
        assert parse_activation(name) == expr


@pytest.mark.parametrize(
    "text",
    ["__import__('os')", "t.__class__", "lambda: 1", "x+1", "'3'", "3", "t[0]", "9**9**9",
     "exp(t)**2**3", "foo(t)", "t if t else 1", "t == 1", "", "t +", "Abs(t, 2)", "exp",
     "I*t", "log(t)", "sqrt(t)", "__builtins__", "().__class__", "t.real", "exp(t=1)"],
)
def test_parse_activation_refuses(text):
    with pytest.raises(ActivationError) as info:
        parse_activation(text)
    message = str(info.value)
    assert message and "\n" not in message


def test_parse_activation_makes_decimals_exact():
    expr = parse_activation("0.6*t + 0.3*(t**2-1)/sqrt(2)")
    assert not expr.atoms(sympy.Float)
    expected = sympy.Rational(3, 5) * t + sympy.Rational(3, 10) * (t**2 - 1) / sympy.sqrt(2)
    assert sympy.expand(expr - expected) == 0
    h = hermite_coefficients(expr)
    assert h.method == "exact"
    assert h.exact["a1"] == sympy.Rational(3, 5)
    assert sympy.simplify(h.exact["a2"] - sympy.Rational(3, 10)) == 0
    assert sympy.simplify(h.exact["nu"] - sympy.Rational(9, 20)) == 0
    assert h.parseval_residual == 0.0


def test_parse_activation_accepts_whitelisted_functions():
    expr = parse_activation("relu(t - 1) + sigmoid(2*t) + t^2 + Max(0, -t) + pi*E")
    assert expr.free_symbols == {t}
    assert not expr.atoms(sympy.Float)


def test_sympy_input_is_normalised():
    plain_t = sympy.Symbol("t")  # no real=True
    h = hermite_coefficients(sympy.Float(0.6) * plain_t + sympy.tanh(plain_t) * 0)
    assert h.exact["a1"] == sympy.Rational(3, 5)
    with pytest.raises(ActivationError):
        hermite_coefficients(t + sympy.Symbol("x"))
    with pytest.raises(ActivationError):
        hermite_coefficients(sympy.Integer(2))


# --------------------------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dps", DPS)
@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_closed_forms_at_two_precisions(name, dps):
    h = hermite_coefficients(name, dps=dps)
    assert h.dps == dps
    with mpmath.workdps(dps + 10):
        a1_ref, nu_ref = CLOSED_FORMS[name][0](), CLOSED_FORMS[name][1]()
        assert abs(h.a1 - a1_ref) < tol(dps)
        assert abs(h.nu - nu_ref) < tol(dps)
        assert abs(h.b2 - (nu_ref - a1_ref**2)) < tol(dps)
    assert mpmath.mp.dps == 15  # global precision untouched


@pytest.mark.parametrize("name", sorted(SPEC_TABLE))
def test_spec_table_six_digits(name):
    a1, nu, b2 = SPEC_TABLE[name]
    h = hermite_coefficients(name)
    assert abs(h.a1_float - a1) < 1e-6
    assert abs(h.nu_float - nu) < 1e-6
    assert abs(h.b2_float - b2) < 1e-5


def test_relu_nu_is_exact_not_gauss_hermite():
    h = hermite_coefficients("relu")
    assert h.method == "exact"
    assert sympy.simplify(h.exact["nu"] - (sympy.Rational(1, 2) - 1 / (2 * sympy.pi))) == 0
    assert sympy.simplify(h.exact["a0"] - 1 / sympy.sqrt(2 * sympy.pi)) == 0
    assert abs(h.nu_float - 0.340845) < 1e-6
    assert abs(h.nu_float - 0.3400) > 5e-4


@pytest.mark.parametrize("dps", DPS)
@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_numeric_activations_against_direct_quadrature(name, dps):
    fn = {"tanh": mpmath.tanh, "sigmoid": lambda x: 1 / (1 + mpmath.exp(-x))}[name]
    h = hermite_coefficients(name, dps=dps)
    a0 = gauss_quad(fn, dps)
    a1 = gauss_quad(lambda x: x * fn(x), dps)
    a2 = gauss_quad(lambda x: (x * x - 1) * fn(x), dps) / mpmath.sqrt(2)
    nu = gauss_quad(lambda x: (fn(x) - a0) ** 2, dps)
    with mpmath.workdps(dps + 10):
        for got, ref in ((h.a0, a0), (h.a1, a1), (h.a2, a2), (h.nu, nu)):
            assert abs(got - ref) < tol(dps)
    assert h.method == "mixed"  # a0, a2 by parity (sigmoid: odd about 1/2), a1, nu by quadrature
    assert max(h.errors.values()) < 10.0 ** (-dps)


def test_centring_is_automatic():
    for f in (sympy.tanh(t), sympy.Max(0, t)):
        h, h3 = hermite_coefficients(f), hermite_coefficients(f + 3)
        with mpmath.workdps(40):
            assert abs(h3.a0 - h.a0 - 3) < 1e-28
            for name in ("a1", "a2", "nu"):
                assert abs(getattr(h3, name) - getattr(h, name)) < 1e-28
        assert sympy.simplify(h3.centred - h.centred) == 0  # a0 exact for both: centred agree


def test_centred_expression_has_mean_zero():
    for name in ("relu", "sigmoid", "tanh"):
        h = hermite_coefficients(name)
        hc = hermite_coefficients(h.centred)
        assert abs(hc.a0) < 1e-28
        assert abs(hc.nu - h.nu) < 1e-28


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "sin", "erf", "atan(t)", "t*exp(-t**2/3) + sin(2*t)"])
def test_stein_identity(name):
    expr = parse_activation(name)
    derivative = sympy.lambdify(t, sympy.diff(expr, t), "mpmath")
    h = hermite_coefficients(expr)
    assert abs(h.a1 - gauss_quad(derivative, 30)) < tol(30)


def test_parseval():
    h = hermite_coefficients("tanh")
    assert 0 <= h.parseval_residual < 1e-6
    # partial sums stay below nu (Bessel), coefficient by coefficient
    with mpmath.workdps(40):
        partial = mpmath.fsum(hermite_coefficient("tanh", k) ** 2 for k in range(1, 12))
        assert partial <= h.nu + 1e-28
    smooth = hermite_coefficients("sin")
    assert smooth.parseval_residual < 1e-25
    # kinked: slow convergence is reported, not an error
    relu = hermite_coefficients("relu")
    assert 1e-6 < relu.parseval_residual < 1e-2
    assert hermite_coefficients("he3").parseval_residual == 0.0


def test_hermite_coefficient_general_k():
    # erf: a_3 = E[erf'''(xi)]/sqrt(3!) = -4/(3 sqrt(3 pi)) / sqrt(6) (Stein, by hand)
    with mpmath.workdps(40):
        ref = -4 / (3 * mpmath.sqrt(3 * mpmath.pi)) / mpmath.sqrt(6)
        assert abs(hermite_coefficient("erf", 3) - ref) < tol(30)
        he4 = lambda x: (x**4 - 6 * x**2 + 3) / mpmath.sqrt(24)  # noqa: E731
        assert abs(hermite_coefficient("relu", 4) - gauss_quad(lambda x: max(x, 0) * he4(x), 30)) < tol(30)
        he3 = lambda x: (x**3 - 3 * x) / mpmath.sqrt(6)  # noqa: E731
        assert abs(hermite_coefficient("tanh", 3) - gauss_quad(lambda x: mpmath.tanh(x) * he3(x), 30)) < tol(30)
        assert hermite_coefficient("tanh", 4) == 0
        assert abs(hermite_coefficient("relu", 0) - 1 / mpmath.sqrt(2 * mpmath.pi)) < tol(30)
    assert hermite_coefficient(t**5, 7) == 0
    with pytest.raises(ActivationError):
        hermite_coefficient("tanh", -1)


def _wick(n: int) -> int:
    """E xi^n = (n-1)!! for even n, 0 for odd n."""
    if n % 2:
        return 0
    out = 1
    for j in range(n - 1, 0, -2):
        out *= j
    return out


@given(st.lists(st.fractions(min_value=-5, max_value=5, max_denominator=6), min_size=2, max_size=5))
def test_polynomials_match_wick(coeffs):
    coeffs = [Fraction(c) for c in coeffs]
    if all(c == 0 for c in coeffs[1:]):
        coeffs[1] = Fraction(1)
    c = [sympy.Rational(x.numerator, x.denominator) for x in coeffs]
    f = sum(ci * t**i for i, ci in enumerate(c))
    a0 = sum(ci * _wick(i) for i, ci in enumerate(c))
    a1 = sum(ci * _wick(i + 1) for i, ci in enumerate(c))
    a2 = sum(ci * (_wick(i + 2) - _wick(i)) for i, ci in enumerate(c)) / sympy.sqrt(2)
    m2 = sum(ci * cj * _wick(i + j) for i, ci in enumerate(c) for j, cj in enumerate(c))
    h = hermite_coefficients(f)
    assert h.method == "exact"
    for name, ref in (("a0", a0), ("a1", a1), ("a2", a2), ("nu", m2 - a0**2)):
        assert sympy.simplify(h.exact[name] - ref) == 0, name
    assert h.parseval_residual == 0.0


# --------------------------------------------------------------------------------------------
# refusals, kinks, data object
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["exp(t**2)", "exp(t**2/2)", "exp(t**2/4)", "t*exp(t**2/3)"])
def test_divergent_moments_raise(text):
    with pytest.raises(ActivationError, match="diverge"):
        hermite_coefficients(text)
    with pytest.raises(ActivationError, match="diverge"):
        hermite_coefficient(text, 1)


@pytest.mark.parametrize("text", ["exp(exp(exp(t)))", "exp(exp(t))", "sin(t) + exp(exp(exp(t**2)))",
                                  "exp(exp(exp(exp(t))))", "cosh(cosh(cosh(t)))", "2*exp(exp(exp(exp(exp(t)))))"])
def test_towers_of_exponentials_are_refused_quickly(text):
    # Unguarded, exp(exp(exp(t))) runs for over 150 s (mpmath evaluating exp(exp(exp(99)))), and a guard of
    # that case alone lets exp(exp(exp(exp(t)))) hang: the magnitude bound on the expression tree
    # (activations.magnitude_bound) refuses every tower before any evaluation.
    # A hang guard, not a speed test: the refusal must come within 20 s.
    for call in (lambda: hermite_coefficients(text), lambda: hermite_coefficient(text, 1)):
        start = time.monotonic()
        with pytest.raises(ActivationError, match="diverge|grows beyond") as exc:
            call()
        assert time.monotonic() - start < 20.0
        assert "\n" not in str(exc.value)


def test_bounded_mpmath_evaluation():
    from attnlimits.symbolic.activations import EXP_ARGUMENT_LIMIT, mpmath_function

    f = mpmath_function(sympy.exp(t))
    assert f(mpmath.mpf(2)) == mpmath.exp(2)
    assert f(-mpmath.mpf(EXP_ARGUMENT_LIMIT) * 2) == 0  # below 10^(-4e6): zero
    with pytest.raises(OverflowError):
        f(mpmath.mpf(EXP_ARGUMENT_LIMIT) * 2)
    start = time.monotonic()
    with pytest.raises(OverflowError):
        mpmath_function(sympy.exp(sympy.exp(sympy.exp(t))))(mpmath.mpf(99))
    with pytest.raises(OverflowError):
        mpmath_function(sympy.sin(sympy.exp(sympy.exp(t))))(mpmath.mpf(30))
    assert time.monotonic() - start < 20.0


def test_activations_module_doctests_and_reexports():
    import doctest

    import attnlimits.symbolic.activations as A
    import attnlimits.symbolic.hermite as H

    assert doctest.testmod(A).failed == 0
    for name in ("t", "BUILTIN_ACTIVATIONS", "ActivationError", "parse_activation", "kinks"):
        assert getattr(H, name) is getattr(A, name)


@pytest.mark.parametrize("text", ["1/t", "1/(t - 1/3)", "tanh(t)/(t**2 - 1)"])
def test_singular_activations_raise(text):
    with pytest.raises(ActivationError, match="singular"):
        hermite_coefficients(text)


def test_removable_singularity_and_slow_gaussian_growth_are_fine():
    sinc = hermite_coefficients("sin(t)/t")
    ref = gauss_quad(lambda x: mpmath.sin(x) / x if x else mpmath.mpf(1), 30)
    assert abs(sinc.a0 - ref) < tol(30)
    h = hermite_coefficients("exp(t**2/5)")  # E f^2 = sqrt(5) finite
    assert h.method == "exact"
    assert sympy.simplify(h.exact["a0"] - sympy.sqrt(sympy.Rational(5, 3))) == 0


def test_kinks():
    assert kinks("relu") == [0]
    assert kinks("tanh") == []
    assert kinks("relu(t) + abs(t**2 - 2)") == [-sympy.sqrt(2), 0, sympy.sqrt(2)]
    assert kinks(sympy.Abs(sympy.sin(t)), window=7) == [-2 * sympy.pi, -sympy.pi, 0, sympy.pi, 2 * sympy.pi]
    assert kinks("Max(0, tanh(t) - 1/2)") == [sympy.atanh(sympy.Rational(1, 2))]
    pw = sympy.Piecewise((t, t < 1), (2 * t - 1, True))
    assert kinks(pw) == [1]


def test_kinked_activations_split_correctly():
    # Max(0, t^3 - t) has kinks at -1, 0, 1; compare with direct split quadrature.
    h = hermite_coefficients("Max(0, t**3 - t)")
    assert h.method == "exact"
    g = lambda x: max(x**3 - x, 0)  # noqa: E731
    with mpmath.workdps(45):
        assert abs(h.a1 - gauss_quad(lambda x: x * g(x), 30, points=(-1, 0, 1))) < tol(30)
        assert abs(h.nu - (gauss_quad(lambda x: g(x) ** 2, 30, points=(-1, 0, 1))
                           - gauss_quad(g, 30, points=(-1, 0, 1)) ** 2)) < tol(30)
    heav = hermite_coefficients("Heaviside(t)")
    assert heav.exact["nu"] == sympy.Rational(1, 4)
    assert sympy.simplify(heav.exact["a1"] - 1 / sympy.sqrt(2 * sympy.pi)) == 0


def test_hermite_data_object():
    h = hermite_coefficients("erf")
    assert isinstance(h, HermiteData)
    assert h.method == "mixed"
    assert sympy.simplify(h.exact["a1"] - 2 / sympy.sqrt(3 * sympy.pi)) == 0
    assert "nu" not in h.exact  # (2/pi) asin(2/3) is beyond the closed-form engine
    floats = h.floats()
    assert set(floats) >= {"a0", "a1", "a2", "nu", "b2", "parseval_residual"}
    assert all(isinstance(v, float) for v in floats.values())
    assert abs(floats["b2"] - (floats["nu"] - floats["a1"] ** 2)) < 1e-15
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.nu = mpmath.mpf(0)
    with pytest.raises(TypeError):
        h.exact["nu"] = 0
    assert hermite_coefficients("erf") is h  # cached


def test_speed_and_thread_safety():
    start = time.perf_counter()
    hermite_coefficients(sympy.tanh(t), dps=31)  # a precision no other test uses: not cached
    assert time.perf_counter() - start < 2.0  # typically ~0.1 s
    out = {}

    def worker():
        out["h"] = hermite_coefficients("tanh(t) + sin(t)/2", dps=20)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    with mpmath.workdps(30):
        ref = mpmath.mpf("0.6057055096021588255835402275558804394262") + mpmath.exp(-mpmath.mpf(1) / 2) / 2
        assert abs(out["h"].a1 - ref) < 1e-18


def test_bad_arguments():
    with pytest.raises(ActivationError):
        hermite_coefficients("tanh", dps=2)
    with pytest.raises(ActivationError):
        hermite_coefficients("tanh", parseval_order=-1)
    with pytest.raises(ActivationError):
        hermite_coefficients(3.0)
