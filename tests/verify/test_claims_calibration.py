"""Calibration of the verify statistics: the z's of a correct theory look like N(0, 1) (or their t law),
and a small systematic offset — one sign in most of a claim's checks — is flagged.

The fast tests exercise :func:`attnlimits.verify.comparison.calibration` on draws with a known law; the slow
test runs the Monte Carlo checks of C7 and C6-command over several master seeds and applies it."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from attnlimits.verify.comparison import calibration


def test_normal_draws_are_calibrated():
    rng = np.random.default_rng(11)
    c = calibration(rng.standard_normal(500))
    assert c.ks_p > 1e-3 and c.ad_p > 1e-3 and abs(c.mean_z) < 4 * c.mean_z_se
    assert c.expected_beyond_3 == pytest.approx(500 * 2 * stats.norm.sf(3))


def test_t_statistics_are_mapped_through_their_law():
    """t(3) draws are heavy-tailed: calibrated against t(3), not against N(0, 1)."""
    rng = np.random.default_rng(3)
    t = rng.standard_t(3, size=600)
    assert calibration(t, dofs=[3] * t.size).ad_p > 1e-3
    assert calibration(t).ad_p < 1e-3


def test_anderson_darling_matches_a_hand_computation():
    z = np.random.default_rng(5).standard_normal(50)
    F = np.sort(stats.norm.cdf(z))
    n, i = z.size, np.arange(1, 51)
    a2 = -n - np.mean((2 * i - 1) * (np.log(F) + np.log(1 - F[::-1])))
    assert calibration(z).ad_statistic == pytest.approx(a2, rel=1e-10)


def test_a_small_offset_is_flagged():
    """An offset of 0.3 SE per check is invisible in any one check, but not in 400 (AD) nor in a claim
    whose 17 of 18 checks share one sign (the pattern once seen in C7)."""
    rng = np.random.default_rng(7)
    assert calibration(rng.standard_normal(400) + 0.3).ad_p < 1e-3
    rng = np.random.default_rng(8)
    z = np.concatenate([rng.standard_normal(200), np.abs(rng.standard_normal(17)), [-0.2]])
    groups = ["other"] * 200 + ["C7"] * 18
    c = calibration(z, groups=groups)
    assert c.signs["C7"]["positive"] == 17
    assert c.signs["C7"]["p"] == pytest.approx(2 * 19 / 2 ** 18)  # two-sided binomial: P(≥17 or ≤1 of 18)
    assert set(c.flagged()) == {"C7"}


def test_bad_input():
    with pytest.raises(ValueError):
        calibration([math.nan])
    with pytest.raises(ValueError):
        calibration([0.1, 0.2], groups=["a"])


@pytest.mark.slow
def test_linear_mc_checks_are_calibrated_over_master_seeds():
    """C7's and C6-command's Monte Carlo checks at master seeds 0–3 (36 + 36 statistics): pooled z's
    against N(0, 1) (Anderson–Darling, p > 0.001) and a sign test per claim (Bonferroni at 1 %)."""
    import warnings

    from attnlimits.verify.claims.base import Context, run_claims, select
    from attnlimits.verify.slr.claims import population  # noqa: F401  (registers C7 and C6-command)

    s, d, g = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(4):
            for r in run_claims(select(["C7", "C6-command"]), Context("quick", device="cpu", seed=seed)):
                for c in r.checks:
                    if c.stochastic and c.kind == "abs" and not c.tolerance and not c.allowance:
                        s.append(c.statistic), d.append(c.dof), g.append(r.claim)
    cal = calibration(s, d, g)
    assert cal.n >= 60
    assert cal.ad_p > 1e-3, cal.to_dict()
    assert not cal.flagged(), cal.signs
