"""The power of a check: its minimum detectable deviation (MDD), the claim's MDD against its target,
and the replicon's RSB verdict with its error bar.

Expected values by hand from scipy.stats (t and normal quantiles), independent of
:func:`attnlimits.verify.comparison.critical_value`."""
from __future__ import annotations

import math

import pytest
from scipy import stats

from attnlimits.verify.claims.power import EXCEPTIONS, TARGET, mdd_status
from attnlimits.verify.claims.base import Check, ClaimResult, apply_family_rule
from attnlimits.verify.comparison import minimum_detectable_deviation


@pytest.mark.parametrize("se,dof,alpha,sided,margin", [
    (0.01, None, 0.0027, 2, 0.0),
    (0.01, 2, 0.01 / 250, 2, 0.0),
    (0.004, 9, 0.01 / 40, 2, 0.002),
    (0.02, 30, 0.001, 1, 0.01),
])
def test_mdd_matches_a_hand_computation_with_scipy(se, dof, alpha, sided, margin):
    q = 1 - alpha / sided
    crit = stats.norm.ppf(q) if dof is None else stats.t.ppf(q, dof)
    assert minimum_detectable_deviation(se, dof, alpha, sided=sided, margin=margin) == pytest.approx(
        crit * se + margin, rel=1e-9)


def test_mdd_edge_cases():
    assert minimum_detectable_deviation(None, None, 0.01, margin=0.05) == 0.05  # deterministic: the margin
    assert math.isinf(minimum_detectable_deviation(math.inf, None, 0.01))  # one draw: nothing detected


def test_check_mdd_at_the_level_a_lone_deviation_needs_under_holm():
    """In a family of m checks the MDD is at level/m (Holm's first threshold), relative to |theory|;
    tolerance (relative for kind rel) and allowance add to it; a deterministic check's MDD is its margin;
    qualitative checks have none."""
    a = Check("a", theory=0.5, value=0.5, se=0.002, dof=4, allowance=0.001)
    b = Check("b", theory=2.0, value=2.0, se=0.01)
    c = Check("c", theory=0.4, value=0.4, tolerance=0.01, kind="rel")
    d = Check("d", theory=0.3, value=0.3, se=0.001, kind="upper")
    q = Check.holds("q", True)
    res = [ClaimResult("X", "", "", [a, b, c, d, q])]
    apply_family_rule(res, 0.01)
    m = 3  # a, b, d carry an SE
    assert a.mdd == pytest.approx(stats.t.ppf(1 - 0.01 / m / 2, 4) * 0.002 + 0.001)
    assert a.mdd_relative == pytest.approx(a.mdd / 0.5)
    assert b.mdd == pytest.approx(stats.norm.ppf(1 - 0.01 / m / 2) * 0.01)
    assert c.mdd == pytest.approx(0.004) and c.mdd_relative == pytest.approx(0.01)
    assert d.mdd == pytest.approx(stats.norm.ppf(1 - 0.01 / m) * 0.001)  # one-sided
    assert q.mdd is None and q.mdd_relative is None
    assert res[0].mdd == pytest.approx(max(a.mdd_relative, b.mdd_relative, c.mdd_relative, d.mdd_relative))
    # alone (no family): the per-check level 2·Φ(−3)
    alone = Check("e", theory=1.0, value=1.0, se=0.01)
    assert alone.mdd == pytest.approx(0.03, rel=1e-4)
    # an explicit headline scale; a zero theory without one has no relative MDD
    assert Check("f", 0.0, 0.0, se=0.01, scale=0.5).mdd_relative == pytest.approx(0.06, rel=1e-4)
    assert Check("g", 0.0, 0.0, se=0.01).mdd_relative is None
    d2 = a.to_dict()
    assert d2["mdd"] == pytest.approx(a.mdd) and d2["mdd_relative"] == pytest.approx(a.mdd_relative)


def test_few_dof_make_a_check_powerless():
    """The issue's example: an SE of 1 % of the quantity from 3 seeds in a family of 250 cannot
    detect less than a 158 % deviation; from 30 seeds (same SE) about 4.8 %."""
    c3 = Check("x", 1.0, 1.0, se=0.01, dof=2, mdd_level=0.01 / 250)
    c30 = Check("x", 1.0, 1.0, se=0.01, dof=29, mdd_level=0.01 / 250)
    assert c3.mdd_relative == pytest.approx(1.581, rel=1e-3)
    assert c30.mdd_relative == pytest.approx(stats.t.ppf(1 - 0.01 / 500, 29) * 0.01)


def test_claim_status_against_the_target_and_the_exceptions(monkeypatch):
    weak = ClaimResult("WEAK", "", "", [Check("x", 1.0, 1.0, se=0.1)], mode="quick")
    strong = ClaimResult("STRONG", "", "", [Check("x", 1.0, 1.0, se=0.001)], mode="quick")
    apply_family_rule([weak, strong], 0.01)
    assert strong.mdd < TARGET["quick"] and mdd_status(strong) == "ok"
    assert mdd_status(weak) == "above target"
    monkeypatch.setitem(EXCEPTIONS, ("WEAK", "quick"), "the reason")
    assert mdd_status(weak) == "exception: the reason"
    # full mode is held to 1 %
    strong.mode = "full"
    assert mdd_status(strong) == ("ok" if strong.mdd <= 0.01 else "above target")


def test_every_exception_has_a_reason():
    for (name, mode), why in EXCEPTIONS.items():
        assert mode in TARGET and len(why) > 20, (name, mode)


@pytest.mark.parametrize("rep,err,phase", [
    (1.09, 0.21, "uncertain"),  # the docs/slr.md row once flagged rsb on the point value alone
    (1.32, 0.04, "rsb"),
    (0.603, 0.006, "rs"),
    (0.95, 0.02, "uncertain"),
    (1.0, 0.0, "rsb"),
    (float("nan"), 0.1, "unknown"),
    (1.5, float("nan"), "rsb"),
])
def test_rsb_flag_uses_the_replicon_error_bar(rep, err, phase):
    from attnlimits.numeric.slr.rs.fixed_point import REPLICON_K, replicon_phase

    assert REPLICON_K == 3.0
    assert replicon_phase(rep, err) == phase
