"""Rate fits and rate bands of the comparison rule (attnlimits.verify.comparison.fit_rate / rate_band).

Expected values are computed independently (closed-form least squares on synthetic points); the
calibration test draws seeded synthetic points and compares the coverage of the 99 % band with its
target within k = 4 binomial standard errors (k stated in the test).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from attnlimits.verify.comparison import (
    LEVEL,
    RateBand,
    RateFit,
    critical_value,
    fit_rate,
    rate_band,
)


def test_exact_power_law_and_its_se():
    x = np.array([10.0, 20.0, 40.0, 80.0])
    y = 3.0 * x ** -1.0
    rel = 0.01
    f = fit_rate(x, y, rel * y)
    assert isinstance(f, RateFit)
    assert f.slope == pytest.approx(-1.0, abs=1e-12) and f.intercept == pytest.approx(math.log(3.0), abs=1e-12)
    # SE of an OLS slope with equal weights: σ / sqrt(Σ (u − ū)²), u = log x, σ = relative SE
    u = np.log(x)
    assert f.se == pytest.approx(rel / math.sqrt(np.sum((u - u.mean()) ** 2)), rel=1e-12)
    assert f.dof is None and f.chi2 == pytest.approx(0.0, abs=1e-20) and f.chi2_dof == 2


def test_welch_dof_with_equal_points_is_the_sum_of_dofs():
    # Welch–Satterthwaite: dof = (Σ c_i² s_i²)² / Σ (c_i² s_i²)²/ν_i with c the slope's weights on log y
    x = [1.0, 2.0, 4.0, 8.0]
    y = [1.0, 0.5, 0.25, 0.125]
    f = fit_rate(x, y, [0.01 * v for v in y], dofs=[3, 3, 3, 3])
    u = np.log(x)
    c = (u - u.mean()) / np.sum((u - u.mean()) ** 2)  # the slope's coefficients on log y
    t = (c * 0.01) ** 2
    assert f.dof == pytest.approx(np.sum(t) ** 2 / np.sum(t ** 2 / 3), rel=1e-12)


def test_correction_term_removes_the_curvature_of_a_shifted_power_law():
    nu = np.array([40.0, 80.0, 160.0, 320.0, 640.0])
    y = 2.0 / (4.0 + nu)  # ∝ ν^-1 (1 − 4/ν + …)
    plain = fit_rate(nu, y, 0.003 * y)
    corrected = fit_rate(nu, y, 0.003 * y, corrections=(-1.0,))
    assert abs(plain.slope + 1) > 0.02  # biased by the correction
    assert abs(corrected.slope + 1) < 2e-3 and len(corrected.corrections) == 1
    assert corrected.predict(nu) == pytest.approx(y, rel=1e-3)


def test_exponential_fit():
    x = np.array([6.0, 10.0, 14.0, 18.0])
    y = 5.0 * np.exp(-0.25 * x)
    f = fit_rate(x, y, 0.02 * y, log_x=False)
    assert f.slope == pytest.approx(-0.25, abs=1e-12) and not f.log_x


def test_unweighted_fit_takes_its_se_from_the_residuals():
    rng = np.random.default_rng(3)
    x = np.geomspace(1, 100, 8)
    y = x ** 0.5 * np.exp(0.05 * rng.standard_normal(8))
    f = fit_rate(x, y)
    u, ly = np.log(x), np.log(y)
    b, a = np.polyfit(u, ly, 1)
    s2 = np.sum((ly - a - b * u) ** 2) / 6
    assert f.slope == pytest.approx(b, rel=1e-12) and f.dof == 6
    assert f.se == pytest.approx(math.sqrt(s2 / np.sum((u - u.mean()) ** 2)), rel=1e-10)


@pytest.mark.parametrize("bad", [{"values": [1.0, -1.0, 0.5]}, {"values": [1.0, 0.5, 0.25], "ses": [0.1, 0.0, 0.1]}])
def test_bad_input_is_refused(bad):
    kw = {"x": [1.0, 2.0, 4.0], "values": [1.0, 0.5, 0.25], "ses": [0.01, 0.01, 0.01]} | bad
    with pytest.raises(ValueError):
        fit_rate(kw["x"], kw["values"], kw["ses"])


def test_rate_band_contains_predicted_and_excludes_wrong():
    b = rate_band(-0.99, 0.01, -1.0, (0.0, -2.0))
    assert isinstance(b, RateBand) and b.passed and b.excludes == (True, True)
    assert b.crit == pytest.approx(critical_value(LEVEL), rel=1e-12)
    assert "excluded" in b.describe() and "-1" in b.describe()
    # too noisy to tell −1/2 from 0: the old quick C16 band (−0.5 ± 0.70) fails
    old = rate_band(-0.5, 0.70, -0.5, 0.0, dof=20)
    assert old.contains_predicted and not old.passed and old.excludes == (False,)
    # precise but wrong: the predicted rate is outside
    assert not rate_band(-0.8, 0.01, -1.0, 0.0).contains_predicted
    # t with few dof widens the band
    assert rate_band(-1, 0.1, -1, 0.0, dof=3).crit > rate_band(-1, 0.1, -1, 0.0).crit
    with pytest.raises(ValueError):
        rate_band(-1, 0.0, -1, 0.0)


def test_band_coverage_is_calibrated():
    """Seeded synthetic fits (5 points, 2 % noise in y): the 99 % band covers the true slope with frequency
    0.99 within k = 4 binomial SEs, and the SE matches the scatter of the fitted slopes (±10 %)."""
    rng = np.random.default_rng(29)
    x = np.array([10.0, 20.0, 40.0, 80.0, 160.0])
    reps, covered, slopes, ses = 2000, 0, [], []
    for _ in range(reps):
        y = x ** -1.0 * (1 + 0.02 * rng.standard_normal(x.size))
        f = fit_rate(x, y, 0.02 * x ** -1.0)
        covered += rate_band(f.slope, f.se, -1.0, 0.0).contains_predicted
        slopes.append(f.slope), ses.append(f.se)
    p = 1 - LEVEL
    assert abs(covered / reps - p) <= 4 * math.sqrt(p * (1 - p) / reps)
    assert np.std(slopes) == pytest.approx(np.mean(ses), rel=0.1)
