"""The comparison rule (attnlimits.verify.comparison): p-values, Holm, calibration, power, extrapolation.

Calibration and power are measured on synthetic runs (NumPy, seeded): each run is a family of
``M`` = 200 comparisons shaped like a ``verify --quick`` run — 140 large-sample checks (z) and 60
checks whose SE comes from 4 replicates (Student t with 3 degrees of freedom). Monte Carlo
frequencies are compared with their targets within k = 4 binomial standard errors (k stated in
each test).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from attnlimits.verify.comparison import (
    LEVEL,
    Comparison,
    combine,
    critical_value,
    extrapolate,
    holm,
    p_value,
    statistic,
    z_equivalent,
)
from scipy import stats

M, M_T, R = 200, 60, 4  # checks per run, of which with SE from R replicates


def _null_run(rng, offset=None):
    """p-values of one synthetic run under the null (theory correct); ``offset`` = (index, size in SE)."""
    # large-sample checks: value ~ N(theory, se²), se known
    se = rng.uniform(1e-3, 1e-1, M - M_T)
    val = rng.normal(0.0, se)
    # replicate checks: mean and ddof=1 SE of R draws
    reps = rng.normal(0.0, 1.0, (M_T, R))
    mean, sem = reps.mean(1), reps.std(1, ddof=1) / math.sqrt(R)
    if offset is not None:
        i, k = offset
        val[i] += k * se[i]
    p = [p_value(v, 0.0, s) for v, s in zip(val, se)]
    p += [p_value(v, 0.0, s, dof=R - 1) for v, s in zip(mean, sem)]
    return p


# ----------------------------------------------------------------------------------------------
# p-values and statistics
# ----------------------------------------------------------------------------------------------
def test_p_value_matches_the_normal_and_t_laws():
    assert p_value(0.53, 0.5, 0.01) == pytest.approx(2 * stats.norm.sf(3.0))
    assert p_value(0.53, 0.5, 0.01, dof=3) == pytest.approx(2 * stats.t(3).sf(3.0))
    assert p_value(0.53, 0.5, 0.01, dof=3) == pytest.approx(0.0577, abs=1e-4)  # the figure
    assert statistic(0.47, 0.5, 0.01) == pytest.approx(-3.0)
    assert p_value(0.5, 0.5, None) is None and statistic(0.5, 0.5, 0.0) is None


def test_tolerance_is_a_margin_not_a_floor():
    # a quoted number known to ±0.005: only the deviation beyond 0.005 counts against the SE
    assert statistic(0.52, 0.5, 0.005, tolerance=0.005) == pytest.approx(3.0)
    assert p_value(0.504, 0.5, 1e-6, tolerance=0.005) == 1.0
    # relative tolerance scales with |reference|; allowance adds to the margin
    assert statistic(2.2, 2.0, 0.05, tolerance=0.05, kind="rel") == pytest.approx(2.0)
    assert statistic(2.2, 2.0, 0.05, allowance=0.1) == pytest.approx(2.0)


def test_one_sided_kinds():
    assert p_value(1.0, 0.97, 0.01, kind="upper") == pytest.approx(stats.norm.sf(3.0))
    assert p_value(0.9, 0.97, 0.01, kind="upper") > 0.99
    assert p_value(0.94, 0.97, 0.01, kind="lower") == pytest.approx(stats.norm.sf(3.0))
    assert statistic(0.13, (0.08, 0.12), 0.01, kind="interval") == pytest.approx(1.0)
    assert statistic(0.10, (0.08, 0.12), 0.01, kind="interval") == pytest.approx(-2.0)
    with pytest.raises(ValueError, match="unknown comparison kind"):
        p_value(1.0, 0.0, 1.0, kind="sideways")


def test_comparison_object_and_critical_values():
    c = Comparison(0.512, 0.5, 0.004, dof=3)
    assert c.law == "t(3)" and c.stochastic and c.sided == 2
    assert c.passes(0.01) and not c.passes(0.06)
    assert not Comparison(0.5, 0.5, float("inf")).passes(0.01)  # one draw: no verdict
    assert Comparison(0.5004, 0.5, None, tolerance=5e-4).passes(0.01)
    assert not Comparison(0.5006, 0.5, None, tolerance=5e-4).passes(0.01)
    assert critical_value(2 * stats.norm.sf(3.0)) == pytest.approx(3.0)
    assert critical_value(0.01, dof=3) == pytest.approx(stats.t(3).isf(0.005))
    assert z_equivalent(2 * stats.norm.sf(4.0)) == pytest.approx(4.0)


# ----------------------------------------------------------------------------------------------
# Holm
# ----------------------------------------------------------------------------------------------
def _holm_by_definition(p, level):
    order = sorted(range(len(p)), key=lambda i: p[i])
    out = [False] * len(p)
    for rank, i in enumerate(order):
        if p[i] <= level / (len(p) - rank):
            out[i] = True
        else:
            break
    return out


def test_holm_equals_the_step_down_definition():
    rng = np.random.default_rng(1)
    for _ in range(300):
        m = int(rng.integers(1, 30))
        p = list(rng.uniform(0, 1, m) ** rng.uniform(1, 8))
        r = holm(p, level=0.05)
        assert r.failed.tolist() == _holm_by_definition(p, 0.05)
        assert np.array_equal(r.failed, r.adjusted <= 0.05)
        assert np.all(r.adjusted >= r.p_values - 1e-15)


def test_holm_skips_deterministic_entries_and_states_thresholds():
    r = holm([None, 0.5, 1e-5, None], level=LEVEL)
    assert r.m == 2 and r.failed.tolist() == [False, False, True, False]
    assert r.thresholds[2] == pytest.approx(0.005) and r.thresholds[1] == pytest.approx(0.01)
    assert np.isnan(r.thresholds[0]) and np.isnan(r.adjusted[3])
    assert holm([], level=0.01).m == 0
    with pytest.raises(ValueError):
        holm([0.1], level=1.5)


def test_calibration_family_wise_false_alarm_rate_within_level():
    """3000 synthetic null runs of 200 checks: the family-wise false-alarm rate is ≤ 1 % (+4 SE)."""
    rng = np.random.default_rng(20261203)
    runs = 3000
    alarms = sum(holm(_null_run(rng), LEVEL).any_failed for _ in range(runs))
    rate = alarms / runs
    k = 4.0
    assert rate <= LEVEL + k * math.sqrt(LEVEL * (1 - LEVEL) / runs), rate
    # and not vacuous: Holm is close to exact for independent checks (≈ 0.995 %)
    assert rate >= LEVEL - k * math.sqrt(LEVEL * (1 - LEVEL) / runs), rate


def test_the_old_rule_was_not_calibrated():
    """The rule this module replaces (|Δ| ≤ 3·SE, normal quantile, no multiplicity) fails a correct
    theory in most runs of this shape: 140·0.0027 + 60·0.058 expected false alarms per run."""
    rng = np.random.default_rng(7)
    runs, alarms = 400, 0
    for _ in range(runs):
        reps = rng.normal(0.0, 1.0, (M_T, R))
        t = reps.mean(1) / (reps.std(1, ddof=1) / math.sqrt(R))
        z = rng.normal(0.0, 1.0, M - M_T)
        alarms += bool((np.abs(t) > 3).any() or (np.abs(z) > 3).any())
    assert alarms / runs > 0.9


def test_power_planted_5_se_discrepancy_is_detected():
    """A large-sample check 5 SE off among 200: Holm at 1 % fails it in ≥ 75 % of runs (exact power
    ≈ P(N(5,1) > 4.06) = 0.83; bound 4 binomial SE below); at 6 SE in ≥ 95 % (exact ≈ 0.98)."""
    rng = np.random.default_rng(11)
    runs, k = 600, 4.0
    for size, exact, floor in ((5.0, 0.826, 0.75), (6.0, 0.983, 0.95)):
        hits = 0
        for _ in range(runs):
            r = holm(_null_run(rng, offset=(3, size)), LEVEL)
            hits += bool(r.failed[3])
        power = hits / runs
        assert power >= exact - k * math.sqrt(exact * (1 - exact) / runs) and power >= floor, (size, power)


# ----------------------------------------------------------------------------------------------
# propagated errors and extrapolation
# ----------------------------------------------------------------------------------------------
def test_combine_welch_satterthwaite():
    se, dof = combine([0.02, 0.02], [3, 3])
    assert se == pytest.approx(math.sqrt(2) * 0.02) and dof == pytest.approx(6.0)
    assert combine([0.1, 0.2])[1] is None
    se, dof = combine([0.01, 0.01], [3, 3], coefficients=[2.0, -1.0])
    assert se == pytest.approx(math.sqrt(5) * 0.01) and dof == pytest.approx(25 / (16 / 3 + 1 / 3))


def test_extrapolate_two_sizes_is_richardson():
    e = extrapolate([500, 2000], [0.6, 0.54], [0.002, 0.002], rate=1.0)
    assert e.limit == pytest.approx((2000 * 0.54 - 500 * 0.6) / 1500)
    assert e.se == pytest.approx(math.hypot(4 / 3, 1 / 3) * 0.002)
    assert e.correction(500) == pytest.approx(0.6 - e.limit) and e.chi2_dof == 0


def test_extrapolate_recovers_a_planted_limit_with_calibrated_error():
    """y(n) = 0.3 + 12/n + noise at 3 sizes, 2000 repeats: |limit − 0.3| ≤ 1.96 SE in 95 % of them
    (± 4 binomial SE), the slope is unbiased, and χ² has mean ≈ 1 (one residual degree of freedom)."""
    rng = np.random.default_rng(5)
    sizes = np.array([250.0, 500.0, 1000.0])
    ses = np.array([0.004, 0.003, 0.002])
    cover, slopes, chi2 = 0, [], []
    reps = 2000
    for _ in range(reps):
        y = 0.3 + 12.0 / sizes + rng.normal(0.0, ses)
        e = extrapolate(sizes, y, ses, rate=1.0)
        cover += abs(e.limit - 0.3) <= 1.96 * e.se
        slopes.append(e.slope)
        chi2.append(e.chi2)
    k = 4.0
    assert abs(cover / reps - 0.95) <= k * math.sqrt(0.95 * 0.05 / reps)
    assert abs(np.mean(slopes) - 12.0) <= k * np.std(slopes) / math.sqrt(reps)
    assert abs(np.mean(chi2) - 1.0) <= k * math.sqrt(2.0 / reps)


def test_extrapolate_t_degrees_of_freedom_and_bad_input():
    e = extrapolate([500, 1000], [0.52, 0.51], [0.001, 0.001], dofs=[3, 3])
    assert 3 < e.dof < 6
    with pytest.raises(ValueError, match="two distinct sizes"):
        extrapolate([500, 500], [0.5, 0.5], [0.01, 0.01])
    with pytest.raises(ValueError, match="positive standard errors"):
        extrapolate([500, 1000], [0.5, 0.5], [0.0, 0.01])


def test_mcestimate_carries_dof_and_p_values():
    from attnlimits.verify.stats import mean_se

    e = mean_se(np.array([[0.50, 1.0], [0.53, 1.1], [0.51, 1.05], [0.52, 0.95]]))
    assert e.dof == 3 and mean_se(np.array([1.0])).dof is None
    p = e.p_value([0.5, 1.0])
    assert p[0] == pytest.approx(p_value(0.515, 0.5, float(e.se[0]), dof=3))


def test_power_of_a_t_check_needs_dof():
    """A check whose SE comes from 16 draws (t₁₅) among 200: at Holm 1 % it fails beyond t ≈ 5.6, so
    an 8-SE offset (true SE) is caught in ≈ 96 % of runs (≥ 4 binomial SE below), a 5-SE one in only
    ≈ 36 %; with 4 draws (t₃, critical ≈ 35) even 8 SE is caught in < 2 %: few replicates buy no power."""
    rng = np.random.default_rng(13)
    runs, k = 600, 4.0
    for draws, size, exact in ((16, 8.0, 0.957), (16, 5.0, 0.363), (4, 8.0, 0.016)):
        hits = 0
        for _ in range(runs):
            p = _null_run(rng)
            x = rng.normal(0.0, 1.0, draws)
            mean, se = x.mean() + size / math.sqrt(draws), x.std(ddof=1) / math.sqrt(draws)
            p[0] = p_value(mean, 0.0, se, dof=draws - 1)
            hits += bool(holm(p, LEVEL).failed[0])
        power = hits / runs
        assert abs(power - exact) <= k * math.sqrt(exact * (1 - exact) / runs) + 0.01, (draws, size, power)


@pytest.mark.parametrize("value, ok", [(3.0, True), (3.0009, True), (2.9991, True), (3.002, False), (2.998, False),
                                       (-221.0, False)])
def test_deterministic_two_sided_fails_on_both_sides(value, ok):
    """A deterministic abs/rel check fails below the reference as well as above it (a signed excess must
    not pass for being negative), in Comparison and in a claim's Check alike."""
    from attnlimits.verify.claims.base import Check
    from attnlimits.verify.comparison import Comparison

    assert Comparison(value, 3.0, tolerance=1e-3).passes(0.01) is ok
    assert Comparison(value, 3.0, tolerance=1e-3 / 3, kind="rel").passes(0.01) is ok
    assert Check("x", 3.0, value, None, 1e-3).passed is ok
