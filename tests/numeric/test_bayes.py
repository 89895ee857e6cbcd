"""Numeric Bayes risk of SLR and the [M] formulas (docs/slr.md §7, §8, §9, §13; R3, R4, R7; C2, C3, C8,
C10, C11, C20–C23).

Expected values are the spec's reference numbers, compared to the number of digits they are
given with (half a unit of the last digit).
"""
from __future__ import annotations

import doctest
import math
import time
from decimal import Decimal

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy import integrate, special

import attnlimits.numeric.slr.bayes_risk as NB
from attnlimits.derivations.slr import bayes as SB
from attnlimits.derivations.slr import predecessor as SP
from attnlimits.derivations.slr.kernels import slr_kernels
from attnlimits.verify.slr.theory import (
    AccuracyWarning,
    expected_max_gaussian,
    expected_max_gaussian_exact,
    predecessor_manifold_risk,
    predecessor_prop3,
    theory_of,
    zeta_erf2_value,
)
from attnlimits.verify.slr.problem import slr_problem


def bayes_risk(model, nu, L, **kw):
    """The Bayes risk of the SLR problem (model, ν, L)."""
    return theory_of(slr_problem(model, nu, L)).bayes_risk(**kw)


def bayes_risk_varlen(model, nu, law, **kw):
    """The P(L)-averaged Bayes risk of the SLR problem with the length law ``law``."""
    return theory_of(slr_problem(model, nu, law)).bayes_risk_varlen(**kw)


def max_stein_mean(nu, L, **kw):
    """The Stein mean of the max model at (ν, L)."""
    return theory_of(slr_problem("max", nu, L)).max_stein_mean(**kw)


def assert_digits(value, ref: str):
    """|value - ref| within half a unit of the last digit of the string ``ref``."""
    unit = 10.0 ** Decimal(ref).as_tuple().exponent
    assert abs(float(value) - float(ref)) <= 0.5 * unit * (1 + 1e-9), (float(value), ref)


R3 = {
    ("spiked", 2): {0.5: "0.39797", 1: "0.32494", 2: "0.22480", 3: "0.15984", 5: "0.084397", 10: "0.019231",
                    20: "1.2057e-3", 24: "4.1092e-4", 32: "4.9109e-5"},
    ("spiked", 3): {0.5: "0.56515", 1: "0.48113", 2: "0.35242", 5: "0.14524", 10: "0.035528", 20: "2.3475e-3",
                    24: "8.0724e-4", 32: "9.7415e-5"},
    ("spiked", 5): {0.5: "0.71839", 1: "0.63918", 2: "0.49995", 5: "0.23171", 10: "0.06254"},
    ("max", 2): {0.5: "0.44925", 1: "0.36316", 2: "0.24001", 5: "0.10936", 10: "0.055963"},
    ("max", 3): {0.5: "0.61738", 1: "0.51843", 2: "0.35418", 5: "0.16374", 10: "0.083923"},
    ("max", 5): {0.5: "0.76142", 1: "0.66737", 2: "0.47613", 5: "0.22451", 10: "0.11529"},
}
R3_CASES = [(m, Lv, nu, ref) for (m, Lv), tab in R3.items() for nu, ref in tab.items()]


@pytest.mark.parametrize("model,Lv,nu,ref", R3_CASES)
def test_r3_bayes_risk(model, Lv, nu, ref):
    r = bayes_risk(model, nu, Lv)
    assert_digits(r.value, ref)
    assert r.error < 1e-12  # C10: quadrature error far below 1e-5
    assert r.method == ("quad-1d" if Lv == 2 else "laplace-lattice")
    assert (r.model, r.nu, r.L, r.dps) == (model, float(nu), Lv, None)


@pytest.mark.parametrize("model", ["spiked", "max"])
@pytest.mark.parametrize("nu", [0.05, 0.5, 2.0, 10.0, 40.0])
def test_general_L_representation_at_L2_matches_the_1d_form(model, nu):
    one = bayes_risk(model, nu, 2)
    lap = bayes_risk(model, nu, 2, representation="laplace")
    assert lap.method == "laplace-lattice"
    assert abs(one.value - lap.value) <= 1e-14 + 1e-12 * one.value
    assert abs(one.value - lap.value) <= 10 * (one.error + lap.error)


@pytest.mark.parametrize("model,Lv,nu", [("spiked", 3, 2.0), ("spiked", 4, 0.3), ("max", 3, 5.0), ("max", 5, 0.2)])
def test_complement_form_agrees_with_direct_form(model, Lv, nu):
    """The spec's forms 1 - E[p_1] and 1 - L E[p_1²] against the cancellation-free ones."""
    direct, _, _ = NB._laplace_f64(slr_kernels(), model, nu, Lv, "direct")
    comp, _, _ = NB._laplace_f64(slr_kernels(), model, nu, Lv, "complement")
    assert abs(direct - comp) < 1e-13


def test_lattice_against_nested_adaptive_quadrature():
    """Independent check: outer quad in u, inner quad split at the step (slow path, ~0.4 s)."""
    nested, _ = NB._bayes_risk_nested_quad(slr_kernels(), "max", 2.0, 3)
    assert abs(nested - bayes_risk("max", 2.0, 3).value) < 1e-11


def test_monte_carlo_nishimori_and_quadrature():
    """C2/C3 in miniature: E p_ε* and E||p||² by MC (seeded) vs the quadrature, spiked L=3, ν=2."""
    rng = np.random.default_rng(20250101)
    nsamp, nu, Lv = 400_000, 2.0, 3
    chi = rng.standard_normal((nsamp, Lv))
    chi[:, 0] += math.sqrt(nu)  # ε* = 1
    p = special.softmax(math.sqrt(nu) * chi, axis=1)
    a, b = p[:, 0], (p**2).sum(axis=1)
    eb = bayes_risk("spiked", nu, Lv).value
    for est in (a, b):
        assert abs((1 - est.mean()) - eb) < 4 * est.std() / math.sqrt(nsamp)


def test_higher_L_and_large_nu_consistency():
    # E_B increases with L and decreases with ν
    vals = [bayes_risk("spiked", 5.0, Lv).value for Lv in (2, 3, 5, 10, 50)]
    assert all(x < y for x, y in zip(vals, vals[1:]))
    vals = [bayes_risk("max", nu, 4).value for nu in (0.1, 1.0, 10.0, 100.0)]
    assert all(x > y for x, y in zip(vals, vals[1:]))
    # tiny values keep their relative accuracy (spiked ν = 200, E_B ~ 1e-23)
    one, lap = bayes_risk("spiked", 200.0, 2), bayes_risk("spiked", 200.0, 2, representation="laplace")
    assert abs(one.value / lap.value - 1) < 1e-12


# ------------------------------------------------------------------------------------------------
# exact cases and input validation


def test_exact_cases():
    assert bayes_risk("spiked", 3.0, 1).value == 0 and bayes_risk("max", 0.5, 1).method == "exact"
    assert bayes_risk("spiked", 0.0, 4).value == 0.75
    assert bayes_risk("max", 0, 3).value == pytest.approx(2 / 3, abs=0)
    r = bayes_risk("max", math.inf, 5)
    assert (r.value, r.error, r.method) == (0.0, 0.0, "exact")
    r = bayes_risk("max", 0.0, 3, dps=30)
    with mpmath.workdps(30):
        assert isinstance(r.value, mpmath.mpf) and abs(r.value - mpmath.mpf(2) / 3) < mpmath.mpf(10) ** -29


@pytest.mark.parametrize(
    "args,kwargs,match",
    [
        (("spiked", -0.1, 2), {}, "nu must be >= 0"),
        (("spiked", math.inf, 2), {}, "max' only"),
        (("max", math.nan, 2), {}, "nu must be >= 0"),
        (("spiked", 1.0, 0), {}, "L must be an integer >= 1"),
        (("spiked", 1.0, 2.5), {}, "L must be an integer >= 1"),
        (("linear", 1.0, 2), {}, "allowed: 'spiked' or 'max'"),
        (("max", "1", 2), {}, "nu must be a real number"),
        (("max", 1.0, 2), {"dps": 0}, "dps must be None"),
        (("max", 1.0, 2), {"tol": 0}, "tol must be a positive"),
        (("max", 1.0, 3), {"representation": "1d"}, "L = 2 only"),
        (("max", 1.0, 3), {"representation": "mc"}, "allowed: 'auto'"),
    ],
)
def test_invalid_input_is_a_one_line_value_error(args, kwargs, match):
    """The numeric layer's own input checks (the SLR problem checks its inputs before it is built)."""
    from attnlimits.verify.slr.theory import kernels

    with pytest.raises(ValueError, match=match) as info:
        NB.bayes_risk(*args, kernels=kernels(), **kwargs)
    assert "\n" not in str(info.value)


def test_accuracy_warning_when_tolerance_is_unreachable():
    with pytest.warns(AccuracyWarning, match="try dps"):
        bayes_risk("spiked", 2.0, 3, tol=1e-30)


# ------------------------------------------------------------------------------------------------
# precision: mpmath at two precisions, speed of the float64 path


@pytest.mark.parametrize("model,nu,Lv", [("spiked", 5, 2), ("spiked", 1, 3)])
def test_mpmath_two_precisions_agree(model, nu, Lv):
    r20 = bayes_risk(model, nu, Lv, dps=20)
    r40 = bayes_risk(model, nu, Lv, dps=40)
    assert r40.method.startswith("mpmath")
    with mpmath.workdps(50):
        assert abs(r20.value - r40.value) < mpmath.mpf(10) ** -18
        assert r40.error < 1e-35
        assert abs(r40.value - bayes_risk(model, nu, Lv).value) < 1e-14
    assert mpmath.mp.dps == 15  # the global precision is never changed


def test_mpmath_1d_and_lattice_agree_at_L2():
    a = bayes_risk("max", 2.0, 2, dps=25)
    b = bayes_risk("max", 2.0, 2, dps=25, representation="laplace")
    with mpmath.workdps(30):
        assert abs(a.value - b.value) < mpmath.mpf(10) ** -23


def test_spiked_L2_float64_is_fast_and_accurate():
    bayes_risk("spiked", 5.0, 2)  # warm the generated functions
    best = min(_timed(lambda: bayes_risk("spiked", 5.0, 2)) for _ in range(5))
    r = bayes_risk("spiked", 5.0, 2)
    assert r.error <= 1e-12
    assert best < 0.05, f"spiked L=2 took {best * 1e3:.1f} ms"


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# ------------------------------------------------------------------------------------------------
# variable length, Stein mean, M_L


def test_varlen_mixture():
    r = bayes_risk_varlen("spiked", 5.0, {1: 1 / 3, 2: 1 / 3, 3: 1 / 3})
    assert_digits(r.value, "0.07655")  # C23
    assert r.method == "mixture" and r.L == {1: 1 / 3, 2: 1 / 3, 3: 1 / 3}
    assert bayes_risk_varlen("max", math.inf, {2: 0.5, 3: 0.5}).value == 0
    for law in ({}, {2: 0.7}, {0: 1.0}, {2: 1.5, 3: -0.5}):
        with pytest.raises(ValueError):
            bayes_risk_varlen("spiked", 1.0, law)


@pytest.mark.parametrize(
    "Lv,nu,unc,cen,pure",
    [(2, 1, "0.43406", "0.36811", "0.93406"), (2, 2, "0.38479", "0.26958", "0.88479"),
     (2, 5, "0.35051", "0.20102", "0.85051"), (3, 1, "0.57708", "0.53228", "0.91041"),
     (3, 2, "0.49941", "0.41578", "0.83274"), (3, 5, "0.44323", "0.33152", "0.77657")],
)
def test_stein_mean_reproduces_the_r4_linear_values(Lv, nu, unc, cen, pure):
    mu = max_stein_mean(nu, Lv)
    assert_digits(1 - (1 + mu**2) / Lv, unc)
    assert_digits(1 - 1 / Lv - mu**2 / (Lv - 1), cen)
    assert_digits(1 - mu**2 / Lv, pure)


@pytest.mark.parametrize("nu", [0.5, 2.0, 7.0])
def test_stein_identity_numerically_at_L2(nu):
    """C8, independent of E_B's quadrature: μ_2(ν) = E[Σ p_ℓ χ_ℓ] = √2 E[n sigmoid(√2 ν n)]."""
    def f(z):
        return math.sqrt(2) * z * special.expit(math.sqrt(2) * nu * z) * math.exp(-z * z / 2) / math.sqrt(2 * math.pi)

    mu = integrate.quad(f, -np.inf, 0)[0] + integrate.quad(f, 0, np.inf)[0]
    assert abs(mu - max_stein_mean(nu, 2)) < 1e-12


def test_expected_max():
    for Lv, ref in zip((2, 3, 4, 5, 10, 100), ("0.564190", "0.846284", "1.029375", "1.162964", "1.538753", "2.507594")):
        assert_digits(expected_max_gaussian(Lv), ref)
    assert expected_max_gaussian(1) == 0.0
    assert expected_max_gaussian_exact(2) == 1 / sp.sqrt(sp.pi)
    assert expected_max_gaussian_exact(3) == 3 / (2 * sp.sqrt(sp.pi))
    assert expected_max_gaussian_exact(1) == 0 and expected_max_gaussian_exact(4) is None
    with mpmath.workdps(40):
        m2 = expected_max_gaussian(2, dps=35)
        assert abs(m2 - 1 / mpmath.sqrt(mpmath.pi)) < mpmath.mpf(10) ** -33
    assert max_stein_mean(math.inf, 3) == expected_max_gaussian(3)
    assert max_stein_mean(80.0, 2) == pytest.approx(expected_max_gaussian(2), rel=0.01)  # μ_L(ν) → M_L


# ------------------------------------------------------------------------------------------------
# C11: exponential decay of the spiked Bayes risk


def _asym(Lv):
    return sp.lambdify([SB.nu], SB.spiked_asymptotic(Lv), "math")


def test_c11_rate_and_ratio():
    eb = {nu: bayes_risk("spiked", nu, 2).value for nu in (8, 16, 24, 32)}
    rates = [-math.log(eb[nu]) / nu for nu in (8, 16, 24, 32)]
    for got, ref in zip(rates, ("0.422", "0.352", "0.325", "0.310")):
        assert_digits(got, ref)
    assert all(x > y > 0.25 for x, y in zip(rates, rates[1:]))
    asym = _asym(2)
    for nu, ref in ((8, "0.809"), (16, "0.884"), (32, "0.934")):
        assert_digits(eb.get(nu, bayes_risk("spiked", nu, 2).value) / asym(nu), ref)
    ratio = bayes_risk("spiked", 32.0, 3).value / eb[32]
    assert_digits(ratio, "1.98")
    # the expansion of -log E_B / ν is accurate to O(1/ν²)
    rate_fn = sp.lambdify([SB.nu], SB.neg_log_rate_expansion(2), "math")
    assert abs(rate_fn(32) - rates[-1]) < 5 / 32**2


def test_c11_exact_ratio_integral_and_first_correction():
    """Spiked L=2: E_B/asymptotic = (1/π)∫e^{-d²/4ν}/(2cosh(d/2)) dd exactly; ν(1 - ratio) → π²/4."""
    f = sp.lambdify([SB.d, SB.nu], SB.exact_ratio_integrand(), "math")
    asym = _asym(2)
    for nu in (8.0, 100.0):
        integral = 2 * integrate.quad(f, 0, 90, args=(nu,), epsabs=1e-15, limit=200)[0]  # 1/cosh(45) ~ 6e-20
        assert abs(integral - bayes_risk("spiked", nu, 2).value / asym(nu)) < 1e-11
    nus = np.array([250.0, 500.0, 1000.0, 2000.0])
    defect = np.array([1 - bayes_risk("spiked", v, 2).value / asym(v) for v in nus])
    slope = np.polyfit(np.log(nus), np.log(defect), 1)[0]
    assert abs(slope + 1) < 0.05  # error of the asymptotic ∝ 1/ν
    assert abs(nus[-1] * defect[-1] / (math.pi**2 / 4) - 1) < 0.01
    asym3 = _asym(3)
    assert abs(bayes_risk("spiked", 400.0, 3).value / asym3(400.0) - 1) < 0.01


# ------------------------------------------------------------------------------------------------
# [M] (§13, R7, C20–C22)


def test_r7_manifold_risk():
    assert_digits(predecessor_manifold_risk(400, 10, 0.5, 0.1, 0.6, 0.8), "0.29364")
    mp = predecessor_manifold_risk(400, 10, 0.5, 0.1, 0.6, 0.8, dps=30)
    assert abs(float(mp) - predecessor_manifold_risk(400, 10, 0.5, 0.1, 0.6, 0.8)) < 1e-14


def test_r7_corollary2_sequence_and_slope():
    ds = [1e2, 1e4, 1e6, 1e8]
    vals = [predecessor_manifold_risk(d, 10, 0.5, d ** -0.25, 1.0, 1.0) for d in ds]
    for v, ref in zip(vals, ("0.9594", "0.11235", "0.011436", "0.0011457")):
        assert_digits(v, ref)
    slope = np.polyfit(np.log(ds), np.log(vals), 1)[0]
    assert abs(slope + 0.5) < 0.05  # C22


def test_prop3():
    assert_digits(predecessor_prop3(0.5, 0.1, 10), "0.48368")


def test_prop3_by_least_squares_monte_carlo():
    """C20 in miniature: least squares of Y on Σ_ℓ X_ℓ (d = 6, seeded) vs Proposition 3."""
    rng = np.random.default_rng(7)
    nsamp, d, Lv, gamma2, eps = 200_000, 6, 4, 0.5, 0.1
    kstar, vstar = np.eye(d)[0], np.eye(d)[1]
    X = rng.standard_normal((nsamp, Lv, d))
    J = rng.integers(Lv, size=nsamp)
    rel = np.sqrt(d / 2) * kstar + math.sqrt(gamma2) * rng.standard_normal((nsamp, d))
    X[np.arange(nsamp), J] = rel
    Y = rel @ vstar + eps * rng.standard_normal(nsamp)
    S = X.sum(axis=1)
    beta, *_ = np.linalg.lstsq(S, Y, rcond=None)
    res = (Y - S @ beta) ** 2
    assert abs(res.mean() - predecessor_prop3(gamma2, eps, Lv)) < 4 * res.std() / math.sqrt(nsamp) + 1e-4


@pytest.mark.parametrize("lam", [0.05, 0.3, 1.0, 4.0])
def test_zeta_at_zero_closed_form_vs_numeric_quadrature(lam):
    closed = float(sp.N(SP.zeta_at_zero(sp.nsimplify(lam)), 20))
    assert abs(zeta_erf2_value(0.0, lam) - closed) < 1e-14


def test_predecessor_input_checks():
    with pytest.raises(ValueError, match="kappa"):
        predecessor_manifold_risk(400, 10, 0.5, 0.1, 1.5, 0.8)
    with pytest.raises(ValueError):
        predecessor_prop3(-1.0, 0.1, 10)


def test_docstring_examples():
    result = doctest.testmod(NB)
    assert result.attempted >= 6 and result.failed == 0


@pytest.mark.parametrize("dps", [None, 30])
def test_zeta_far_from_its_zero_is_one(dps):
    """ζ(t, s) = E erf(t + s g)² → 1 when t/s is large.  Found by the property slr-predecessor-vs-mc: at
    t/s ≈ 37 (d = 433, λ = κ = 1, γ² = 0.15625) the quadrature on [−t/s, ∞) missed the Gaussian mass 37 SDs
    from the interval's end and returned 0; the rule now splits at 0 as well.  Reference: erf(t + sg)² ≥
    erf(t − 8s)² for |g| ≤ 8, so ζ ≥ (1 − 2·10⁻¹⁵)·erf(t − 8s)² ≈ 1 to 1e-14 here."""
    import math

    from attnlimits.numeric.slr.bayes_risk import predecessor_manifold_risk, zeta_erf2_value
    from attnlimits.verify.slr.theory import kernels

    s = math.sqrt(0.15625)
    for t in (14.0, 14.714, 15.0, 20.0):
        assert float(zeta_erf2_value(t, s, dps=dps, kernels=kernels())) == pytest.approx(1.0, abs=1e-12)
    # [M] Theorem 1 there: γ² + γ²·ζ(≈1) + (L − 1)·(2/π) asin(2λ²/(1 + 2λ²)), with ν_M = 0
    expected = 2 * 0.15625 + 2 / math.pi * math.asin(2 / 3)
    assert predecessor_manifold_risk(433, 2, 0.15625, 1.0, 1.0, 0.0, kernels=kernels()) == pytest.approx(expected,
                                                                                                        abs=1e-12)
