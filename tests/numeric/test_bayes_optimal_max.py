"""Max-SLR BO state evolution (attnlimits.numeric.slr.bo_state_evolution, max part) against independent forms (docs/slr.md §11)."""
import math

import numpy as np
import pytest

from attnlimits.numeric import ConvergenceError
from attnlimits.numeric.slr.bo_state_evolution import (bo_curve, bomax_fixed_point, bomax_map, make_inner_rule, make_rule,
                                   _integrate_max)
from attnlimits.verify.slr.bayes_optimal import bo_module

LAW = ((2, 1.0),)


@pytest.fixture(scope="module")
def mod():
    return bo_module([2], "max")


@pytest.mark.parametrize("nu", [math.inf, 2.0])
def test_direct_and_ibp_updates_agree_within_integration_error(mod, nu):
    """Derived (direct: d/dq of E[W log Z_out], weight included) vs integrated-by-parts (alpha E[g_out^2]):
    equal in expectation, |gap| <= 4 SE of the replicate spread; the check is informative (SE < 2%)."""
    rule = make_rule([2], points=2 ** 12, replicates=8, seed=5)
    inner = make_inner_rule([2], nu, 16, _finer=False)
    for q in ((0.6, 0.7), (0.3, 0.4)):
        d = bomax_map(mod, rule, inner, LAW, nu, 0.1, q, form="direct")
        i = bomax_map(mod, rule, inner, LAW, nu, 0.1, q, form="ibp")
        diff = d - i
        se = diff.std(0, ddof=1) / math.sqrt(diff.shape[0])
        k = 4.0
        assert np.all(np.abs(diff.mean(0)) <= k * se + 1e-12), (q, diff.mean(0), se)
        assert np.all(se < 0.02 * np.abs(i.mean(0)))


def test_location_bayes_risk_closed_form_L2_inf(mod):
    """nu = inf, L = 2: E_B^max(q_k) = 1 - E||p||^2 = 1/2 - arcsin(q_k)/pi (bivariate-normal orthant,
    independent of the derivation); both integrands A = E[W p_1] and B = E||p||^2, within 4 SE."""
    rule = make_rule([2], points=2 ** 12, replicates=8, seed=3)
    inner = make_inner_rule([2], math.inf)
    for qk in (0.3, 0.8, 0.97):
        f = _integrate_max(mod, rule, inner, LAW, math.inf, 0.1, (qk, 0.5), "all")
        ref = 0.5 + math.asin(qk) / math.pi  # E||p||^2
        for col in (5, 6):
            v = f[:, col]
            se = v.std(ddof=1) / math.sqrt(len(v))
            assert abs(v.mean() - ref) <= 4 * se + 1e-12, (qk, col, v.mean(), ref, se)


def test_fixed_point_L2_inf(mod):
    """Unique fixed point (both starts), Nishimori A = B within 4 SE, E_BO against the closed form
    1 - q_v (1/2 + arcsin(q_k)/pi) at the solved q, and E_BO > E_B^pop = 0."""
    rule = make_rule([2], points=2 ** 12, replicates=8, seed=0)
    pts = bo_curve(mod, rule, LAW, math.inf, [4.0], 0.1, fixed_point=bomax_fixed_point,
                   inner=make_inner_rule([2], math.inf))
    p = pts[0]
    assert len(p.branches) == 1 and p.residual < 1e-10 and p.model == "max"
    assert abs(p.nishimori_A_minus_B) <= 4 * p.nishimori_A_minus_B_se + 1e-12
    closed = 1 - p.q_v * (0.5 + math.asin(p.q_k) / math.pi)
    assert abs(p.E_BO - closed) <= 4 * p.E_BO_se
    assert 0 < p.E_BO < 1 and 0 < p.E_BO_se < 2e-3
    assert p.E_B_snr == pytest.approx(0.5 - math.asin(p.q_k) / math.pi, abs=4 * p.E_BO_se)


@pytest.mark.slow
def test_finite_nu_inner_error_is_reported(mod):
    rule = make_rule([2], points=2 ** 10, replicates=4, seed=0)
    p = bomax_fixed_point(mod, rule, LAW, 2.0, 4.0, 0.1, inner=make_inner_rule([2], 2.0, 8))
    assert p.inner_error > 0 and p.E_BO_se >= p.inner_error
    from attnlimits.verify.slr.bayes_optimal import bayes_risk_of as bayes_risk

    assert p.E_BO > bayes_risk("max", 2.0, 2).value


@pytest.mark.slow
@pytest.mark.parametrize("nu", [math.inf, 2.0])
def test_alpha_to_infinity_limit(mod, nu):
    """E_BO decreases to E_B^pop(max, nu) (0 at nu = inf) with a fitted power law alpha^slope."""
    from attnlimits.verify.slr.bayes_optimal import bayes_risk_of as bayes_risk

    al = [20, 40, 80, 160, 320]
    rule = make_rule([2], points=2 ** 12, replicates=8, seed=0)
    pts = bo_curve(mod, rule, LAW, nu, al, 0.1, starts=("uninformed",), fixed_point=bomax_fixed_point,
                   inner=make_inner_rule([2], nu, 16))
    eb = 0.0 if math.isinf(nu) else bayes_risk("max", nu, 2).value
    gap = np.array([p.E_BO for p in pts]) - eb
    assert np.all(gap > 0) and np.all(np.diff(gap) < 0)
    slope = np.polyfit(np.log(al), np.log(gap), 1)[0]
    assert -1.2 <= slope <= -0.8, slope


def test_loud_failure(mod):
    rule = make_rule([2], points=2 ** 10)
    with pytest.raises(ConvergenceError, match="max-SLR"):
        bomax_fixed_point(mod, rule, LAW, math.inf, 4.0, 0.1, max_iter=1, tol=1e-300)
    with pytest.raises(ValueError):
        bomax_fixed_point(mod, rule, LAW, math.inf, -1.0, 0.1)
    with pytest.raises(ValueError):
        bomax_fixed_point(mod, rule, LAW, 2.0, 4.0, 0.1, inner=make_inner_rule([2], math.inf))
