"""BO state evolution solver (attnlimits.numeric.slr.bo_state_evolution) against docs/slr.md §14 R6 and its own error estimate."""
import math

import numpy as np
import pytest

from attnlimits.numeric import ConvergenceError
from attnlimits.numeric.slr.bo_state_evolution import bo_curve, bo_fixed_point, make_rule
from attnlimits.verify.slr.bayes_optimal import bayes_risk_of as bayes_risk
from attnlimits.verify.slr.bayes_optimal import bo_module

R6 = {(2, 2.0): {1: 0.483, 4: 0.247, 10: 0.234, 20: 0.230},
      (3, 1.0): {1: 0.818, 4: 0.518, 10: 0.497, 20: 0.489},
      (3, 2.0): {1: 0.695, 4: 0.381, 10: 0.364, 20: 0.359}}


def _curve(L, nu, alphas, points=2 ** 12, seed=0, starts=("uninformed", "informed")):
    return bo_curve(bo_module([L]), make_rule([L], points=points, replicates=8, seed=seed), ((L, 1.0),), nu,
                    alphas, 0.1, starts=starts, population_bayes_risk=bayes_risk)


def test_R6_L2():
    tab = R6[(2, 2.0)]
    pts = _curve(2, 2.0, sorted(tab))
    for p in pts:
        assert abs(p.E_BO - tab[int(p.alpha)]) <= 0.005, (p.alpha, p.E_BO)
        assert len(p.branches) == 1  # unique fixed point at every R6 setting (docs/slr.md §11)
        assert p.q_k < 1 and p.q_v < 1 and p.residual < 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("key", [(3, 1.0), (3, 2.0)])
def test_R6_L3(key):
    tab = R6[key]
    for p in _curve(key[0], key[1], sorted(tab), points=2 ** 13):
        assert abs(p.E_BO - tab[int(p.alpha)]) <= 0.005, (key, p.alpha, p.E_BO)


def test_error_estimate_covers_independent_rules():
    """Two independent scramblings agree within k = 4 combined standard errors (α = 1, the noisiest point)."""
    a = _curve(2, 2.0, [1.0], seed=1, starts=("uninformed",))[0]
    b = _curve(2, 2.0, [1.0], seed=2, starts=("uninformed",))[0]
    k = 4.0
    assert abs(a.E_BO - b.E_BO) <= k * math.hypot(a.E_BO_se, b.E_BO_se)
    assert abs(a.q_v - b.q_v) <= k * math.hypot(a.q_v_se, b.q_v_se)
    assert 0 < a.E_BO_se < 5e-3


def test_alpha_to_infinity_limit():
    from attnlimits.verify.slr.bayes_optimal import bayes_risk_of as bayes_risk

    al = [20, 40, 80, 160, 320]
    pts = _curve(2, 2.0, al, starts=("uninformed",))
    eb = bayes_risk("spiked", 2.0, 2).value
    gap = np.array([p.E_BO for p in pts]) - eb
    assert np.all(gap > 0) and np.all(np.diff(gap) < 0)
    slope = np.polyfit(np.log(al), np.log(gap), 1)[0]
    assert -1.1 <= slope <= -0.9  # 1 - q_b ~ 1/qhat_b ~ 1/alpha


def test_variable_length_law():
    from attnlimits.verify.slr.bayes_optimal import bayes_risk_of as bayes_risk

    mod = bo_module([1, 2])
    law = ((1, 0.5), (2, 0.5))
    p = bo_fixed_point(mod, make_rule([1, 2], points=2 ** 11), law, 2.0, 4.0, 0.1, population_bayes_risk=bayes_risk)
    eb = 0.5 * bayes_risk("spiked", 2.0, 2).value
    assert eb < p.E_BO < 1
    assert p.E_B_snr == pytest.approx(0.5 * bayes_risk("spiked", 2.0 * p.q_k, 2).value, rel=1e-9)


def test_loud_failure():
    with pytest.raises(ConvergenceError, match="bayes-optimal"):
        bo_fixed_point(bo_module([2]), make_rule([2], points=2 ** 10), ((2, 1.0),), 2.0, 4.0, 0.1,
                       population_bayes_risk=bayes_risk, max_iter=1,
                       tol=1e-300)
    with pytest.raises(ValueError):
        bo_fixed_point(bo_module([2]), make_rule([2], points=2 ** 10), ((2, 1.0),), 2.0, -1.0, 0.1, population_bayes_risk=bayes_risk)
