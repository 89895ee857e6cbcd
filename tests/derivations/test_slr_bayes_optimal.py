"""The BO system of spiked-SLR (docs/slr.md §11): derived pieces against independent forms."""
import math

import numpy as np
import pytest
import sympy as sp

from attnlimits.derivations.slr import bayes_optimal as B


def test_prior_update_and_free_entropy():
    # Gaussian prior: psi_P(qhat) = qhat/2 - log(1+qhat)/2 (closed form), q = qhat/(1+qhat)
    assert sp.simplify(B.prior_update() - B.qhat / (1 + B.qhat)) == 0
    assert sp.simplify(B.prior_free_entropy() - (B.qhat / 2 - sp.log(1 + B.qhat) / 2)) == 0


def test_teacher_measure_is_a_shifted_gaussian():
    assert B.teacher_measure_shift(2) == 1


@pytest.mark.parametrize("L", [1, 2, 3])
def test_output_partition_matches_spec_closed_form(L):
    # §11: Z_out = (1/L) sum_eps exp(sqrt(nu) w_eps - nu q_k/2) N(y; omz_eps, S), S = 1 - q_v + Delta^2
    S = 1 - B.q_v + B.Delta ** 2
    ox, oz = B.omega_chi(L), B.omega_z(L)
    spec = sum(sp.exp(sp.sqrt(B.nu) * ox[e] - B.nu * B.q_k / 2) * sp.exp(-(B.y - oz[e]) ** 2 / (2 * S))
               / sp.sqrt(2 * sp.pi * S) for e in range(L)) / L
    Z = B.output_partition(L)
    rng = np.random.default_rng(1)
    for _ in range(5):
        vals = {B.nu: sp.Rational(int(rng.integers(1, 9)), 3), B.q_k: sp.Rational(int(rng.integers(1, 9)), 10),
                B.q_v: sp.Rational(int(rng.integers(1, 9)), 10), B.Delta: sp.Rational(1, 10),
                B.y: sp.Rational(int(rng.integers(-9, 9)), 7)}
        vals.update({o: sp.Rational(int(rng.integers(-9, 9)), 5) for o in (*ox, *oz)})
        assert abs(sp.N((Z - spec).subs(vals), 30)) < 1e-25


def test_ibp_integrands_are_the_spec_pi_form():
    # §11: qhat_k = alpha nu E sum pi^2, qhat_v = alpha E sum pi^2 (y - omz)^2 / S^2, pi the location weights
    L = 2
    ik, iv = B.stationarity(L, "ibp")
    var = B.sample_variables(L)
    rng = np.random.default_rng(3)
    qk, qv, nu, dl = 0.7, 0.8, 2.0, 0.1
    x = rng.standard_normal(2 * L + 1)
    sub = {v: float(t) for v, t in zip(var, x)}
    sub.update({B.q_k: qk, B.q_v: qv, B.nu: nu, B.Delta: dl, B.M: 0.0})
    g, h, n = x[:L], x[L:2 * L], x[-1]
    S = 1 - qv + dl ** 2
    omx = math.sqrt(qk) * g + np.array([math.sqrt(nu) * qk, 0.0])
    omz = math.sqrt(qv) * h
    y = omz[0] + math.sqrt(S) * n
    a = math.sqrt(nu) * omx - (y - omz) ** 2 / (2 * S)
    pi = np.exp(a - a.max()) / np.exp(a - a.max()).sum()
    assert float(ik.subs(sub)) == pytest.approx(nu * (pi ** 2).sum(), rel=1e-12)
    assert float(iv.subs(sub)) == pytest.approx((pi ** 2 * (y - omz) ** 2).sum() / S ** 2, rel=1e-12)


def test_test_error_formula():
    e, snr = B.test_error()
    assert sp.simplify(e - (1 - B.q_v * (1 - B.EB))) == 0
    assert snr == B.nu * B.q_k


def test_direct_and_ibp_updates_agree_within_integration_error():
    """The derived (direct) and integrated-by-parts updates agree in expectation: |gap| <= 4 SE."""
    from attnlimits.numeric.slr.bo_state_evolution import bo_map, make_rule
    from attnlimits.verify.slr.bayes_optimal import bo_module

    mod = bo_module([2])
    rule = make_rule([2], points=2 ** 13, replicates=8, seed=5)
    for q in ((0.6, 0.7), (0.3, 0.4)):
        d = bo_map(mod, rule, ((2, 1.0),), 2.0, 0.1, q, form="direct")
        i = bo_map(mod, rule, ((2, 1.0),), 2.0, 0.1, q, form="ibp")
        diff = d - i
        se = diff.std(0, ddof=1) / math.sqrt(diff.shape[0])
        k = 4.0
        assert np.all(np.abs(diff.mean(0)) <= k * se + 1e-12), (q, diff.mean(0), se)
        assert np.all(se < 0.02 * np.abs(i.mean(0)))  # the check is informative (errors below 2%)


def test_max_slr_is_stated_as_missing():
    assert "derived" in B.MAX_SLR_STATUS and "Not checked" in B.MAX_SLR_STATUS
