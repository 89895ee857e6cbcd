"""Regression targets of docs/attention_rmt.md §11 (tolerance 5e-4, as the spec states) and the
numbers stated in §7, §8 and §12 for the theory side.

Expected values are the spec's tables, typed from the spec (an independent implementation);
Hermite data come from closed forms where they exist (sin, erf, ReLU, cos, linear) and from the
spec's 6-digit table otherwise (tanh, sigmoid), which is accurate far beyond 5e-4 in Ē.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from attnlimits.derivations import attention_rmt as R
from attnlimits.numeric import compile_model

TOL = 5e-4  # docs/attention_rmt.md §11: "tolerance 5e-4"

TANH = dict(a1=0.605706, nu=0.394294)
HERMITE = {
    "tanh": TANH,
    "sin": dict(a1=math.exp(-0.5), nu=(1 - math.exp(-2)) / 2),
    "erf": dict(a1=2 / math.sqrt(3 * math.pi), nu=2 / math.pi * math.asin(2 / 3)),
    "sigmoid": dict(a1=0.206621, nu=0.043379),
    "relu": dict(a1=0.5, nu=0.5 - 1 / (2 * math.pi)),
    "linear": dict(a1=1.0, nu=1.0),
    "cos": dict(a1=0.0, nu=(1 + math.exp(-2)) / 2 - math.exp(-1)),
}


@pytest.fixture(scope="module")
def rmt():
    return compile_model(R.model, "numpy")


def E(rmt, c, gammas, **kw):
    kw = {**TANH, **kw}
    recs = rmt.curve(c, gammas, error_estimate=False, **kw)
    return np.array([float(r["E_attention"]) for r in recs]), np.array([float(r["E_ridge"]) for r in recs])


T1 = {  # c: (E_att, E_RR) at gamma = 1e-3, 1e-2, 1e-1, 1, 10
    0.25: ([.7500, .7514, .7687, .8172, .8960], [.7500, .7501, .7540, .8246, .9579]),
    0.5: ([.5006, .5236, .6473, .7827, .9023], [.5000, .5004, .5173, .6744, .9181]),
    1.0: ([.0566, .1666, .4532, .7427, .9115], [.0158, .0499, .1562, .4472, .8452]),
    2.0: ([.0257, .0856, .3147, .6993, .9190], [.0000, .0002, .0123, .2071, .7216]),
    4.0: ([.0253, .0811, .2698, .6660, .9237], [.0000, .0000, .0013, .0652, .5406]),
}


@pytest.mark.parametrize("c", sorted(T1))
def test_T1_random_inputs(rmt, c):
    att, rr = E(rmt, c, [1e-3, 1e-2, 1e-1, 1, 10])
    np.testing.assert_allclose(att, T1[c][0], atol=TOL)
    np.testing.assert_allclose(rr, T1[c][1], atol=TOL)


G4 = [1e-3, 1e-2, 1e-1, 1]
T23 = [  # (snr, weights, values)
    (1, {}, [.2631, .2755, .3444, .4318]),
    (1, dict(wk=[0, 1], wq=[0, 1]), [.2631, .2755, .3444, .4318]),
    (1, dict(wk=[0, 2, 0], wq=[0, -1, 1]), [.2631, .2755, .3444, .4318]),
    (1, dict(wk=[1], wq=[1]), [.2531, .2647, .3281, .4003]),
    (1, dict(wk=[2], wq=[2]), [.2507, .2622, .3243, .3926]),
    (1, dict(wk=[1], wq=[-1]), [.3182, .3347, .4485, .7083]),
    (1, dict(wk=[1, 0], wq=[0, 1]), [.2874, .3020, .3862, .4964]),
    (1, dict(wk=[0, 1], wq=[1, 0]), [.2597, .2719, .3396, .4247]),
    (4, {}, [.1028, .1076, .1338, .1642]),
    (4, dict(wk=[2], wq=[2]), [.1002, .1048, .1296, .1568]),
    (4, dict(wk=[1], wq=[-1]), [.2088, .2209, .3158, .6127]),
]


@pytest.mark.parametrize("snr,weights,expected", T23)
def test_T2_T3_structured_inputs(rmt, snr, weights, expected):
    att, rr = E(rmt, 0.5, G4, snr=snr, **weights)
    np.testing.assert_allclose(att, expected, atol=TOL)
    ridge = {1: [.2500, .2502, .2603, .3886], 4: [.1000, .1001, .1039, .1573]}[snr]
    np.testing.assert_allclose(rr, ridge, atol=TOL)


def test_gap_vanishes_with_snr(rmt):
    # §11: E_att/E_RR at gamma = 1e-2, w = 0: 1.101, 1.075, 1.060 at SNR 1, 4, 10
    ratios = [np.divide(*E(rmt, 0.5, [1e-2], snr=s)) for s in (1, 4, 10)]
    np.testing.assert_allclose(np.ravel(ratios), [1.101, 1.075, 1.060], atol=1.5e-3)


def test_T4_figure1(rmt):
    # 1a: p=2048, n=512 (c=4), SNR 1
    _, rr = E(rmt, 4, [0.1, 1, 10, 100], snr=1)
    np.testing.assert_allclose(rr, [.00091, .04768, .47619, .90827], atol=5e-5)
    g = [1e-5, 1e-3, .1, 1, 10, 100]
    att, _ = E(rmt, 4, g, snr=1)
    np.testing.assert_allclose(att, [.0021, .0210, .2174, .5468, .8641, .9818], atol=TOL)
    att, _ = E(rmt, 4, g, snr=1, wk=[1], wq=[1])
    np.testing.assert_allclose(att, [.0016, .0159, .1671, .4308, .7645, .9634], atol=TOL)
    # 1b: gamma=1e-5, SNR 1
    for c, w0, al in [(.25, .3801, .3761), (.5, .2628, .2527), (.75, .1373, .1278), (1, .0057, .0048), (2, .0019, .0015)]:
        assert E(rmt, c, [1e-5], snr=1)[0][0] == pytest.approx(w0, abs=TOL)
        assert E(rmt, c, [1e-5], snr=1, wk=[1], wq=[1])[0][0] == pytest.approx(al, abs=TOL)
    assert E(rmt, 1, [1e-5], snr=1)[1][0] == pytest.approx(.00079, abs=5e-5)
    # 1c: p=512, n=2048 (c=1/4), gamma=1e-5, w=0
    for s, v in zip([0, .5, 1, 2, 4, 8], [.75, .5068, .3801, .2527, .1510, .0837]):
        att, rr = E(rmt, .25, [1e-5], snr=s)
        assert att[0] == pytest.approx(v, abs=TOL)
        assert rr[0] == pytest.approx(.75 / (1 + s), abs=1e-4)


T5 = {  # c: (w=0, aligned rho=2) for E_att - E_RR at gamma = 0.1, 1, 10, SNR 1
    0.1: ([-.001, -.067, -.371], [-.002, -.068, -.376]),
    0.25: ([.012, -.046, -.324], [.006, -.057, -.365]),
    0.5: ([.084, .043, -.209], [.064, .004, -.328]),
    1.0: ([.187, .193, -.029], [.148, .106, -.259]),
}


@pytest.mark.parametrize("c", sorted(T5))
def test_T5_reversal_map(rmt, c):
    att, rr = E(rmt, c, [.1, 1, 10], snr=1)
    np.testing.assert_allclose(att - rr, T5[c][0], atol=1e-3)  # the table has 3 decimals
    att, rr = E(rmt, c, [.1, 1, 10], snr=1, wk=[2], wq=[2])
    np.testing.assert_allclose(att - rr, T5[c][1], atol=1e-3)


def test_T5_notes(rmt):
    # c=2, SNR 4, gamma=1: .1855 at w=0, .1415 at rho=2, ridge .0590
    a0, rr = E(rmt, 2, [1], snr=4)
    a2, _ = E(rmt, 2, [1], snr=4, wk=[2], wq=[2])
    assert (a0[0], a2[0], rr[0]) == pytest.approx((.1855, .1415, .0590), abs=TOL)


T6 = {
    "tanh": ([.2755, .3444, .4318], [.2647, .3281, .4003]),
    "sin": ([.2764, .3349, .4304], [.2608, .3146, .3956]),
    "sigmoid": ([.3484, .4268, .5586], [.3356, .3991, .4735]),
    "relu": ([.2848, .3419, .4475], [.2625, .3141, .4025]),
    "linear": ([.2722, .3240, .3981], [.2694, .3155, .3784]),
    "cos": ([.5075, .5913, .8065], [.5075, .5913, .8065]),
}


@pytest.mark.parametrize("f", sorted(T6))
def test_T6_hermite_coefficients(rmt, f):
    att, rr = E(rmt, .5, [.01, .1, 1], snr=1, **HERMITE[f])
    np.testing.assert_allclose(att, T6[f][0], atol=TOL)
    att, _ = E(rmt, .5, [.01, .1, 1], snr=1, wk=[1], wq=[1], **HERMITE[f])
    np.testing.assert_allclose(att, T6[f][1], atol=TOL)
    np.testing.assert_allclose(rr, [.2502, .2603, .3886], atol=TOL)


def test_sqrt_gamma_law_slope(rmt):
    # §8 F: tanh, c=2: .00255, .00807, .0257, .0856 at gamma=1e-5..1e-2; slope 0.50 ± 0.01
    g = np.array([1e-5, 1e-4, 1e-3, 1e-2])
    att, _ = E(rmt, 2, list(g))
    np.testing.assert_allclose(att, [.00255, .00807, .0257, .0856], atol=5e-5)
    slope = np.polyfit(np.log(g[:3]), np.log(att[:3]), 1)[0]
    assert 0.49 <= slope <= 0.51


def test_linear_attention_kept_diagonal(rmt):
    # §8 G: f = t, kappa = 1, c = 2: .0434/.1665/.3798 vs ridge .0002/.0123/.2071
    att, rr = E(rmt, 2, [.01, .1, 1], a1=1.0, nu=1.0, kappa=1.0)
    np.testing.assert_allclose(att, [.0434, .1665, .3798], atol=TOL)
    np.testing.assert_allclose(rr, [.0002, .0123, .2071], atol=TOL)


def test_claim_theory_values(rmt):
    # V12: cos - e^{-1/2}, c=.5, SNR 2, aligned unit: .5075/.5913/.8065; ridge .1668/.1735/.2651
    att, rr = E(rmt, .5, [.01, .1, 1], snr=2, wk=[1], wq=[1], **HERMITE["cos"])
    np.testing.assert_allclose(att, [.5075, .5913, .8065], atol=TOL)
    np.testing.assert_allclose(rr, [.1668, .1735, .2651], atol=TOL)
    # V13: c=.25, SNR 1, gamma=1: .4207 < ridge .4662
    att, rr = E(rmt, .25, [1], snr=1)
    assert (att[0], rr[0]) == pytest.approx((.4207, .4662), abs=TOL)
    # V16: ReLU, kept diagonal kappa=.991, mu=0, c=2, gamma=.1: .0595; kappa=0: .3373
    assert E(rmt, 2, [.1], kappa=.991, **HERMITE["relu"])[0][0] == pytest.approx(.0595, abs=TOL)
    assert E(rmt, 2, [.1], **HERMITE["relu"])[0][0] == pytest.approx(.3373, abs=TOL)
    # V18: c=1, SNR 1, gamma=3: E_att - E_RR = +.0893 (w=0), -.0124 (w = mu_hat)
    att, rr = E(rmt, 1, [3], snr=1)
    assert att[0] - rr[0] == pytest.approx(.0893, abs=TOL)
    att, rr = E(rmt, 1, [3], snr=1, wk=[1], wq=[1])
    assert att[0] - rr[0] == pytest.approx(-.0124, abs=TOL)
    # V20: .6t + .3He2 (a1=.6, nu=.45), c=.5, SNR 1, aligned unit: .2603/.3086/.3932
    att, _ = E(rmt, .5, [.01, .1, 1], snr=1, wk=[1], wq=[1], a1=.6, nu=.45)
    np.testing.assert_allclose(att, [.2603, .3086, .3932], atol=TOL)


def test_general_rank_omega(rmt):
    # V17: L on e1..e4: L11=.8, L23=.7, L14=-.5, L42=.6, L31=.4; levels .2683/.3336/.4095,
    # differences from w=0: -.0072/-.0108/-.0223
    L = np.zeros((4, 4))
    L[0, 0], L[1, 2], L[0, 3], L[3, 1], L[2, 0] = .8, .7, -.5, .6, .4
    recs = rmt.curve(.5, [.01, .1, 1], snr=1, L=L.tolist(), error_estimate=False, **TANH)
    att = np.array([float(r["E_attention"]) for r in recs])
    np.testing.assert_allclose(att, [.2683, .3336, .4095], atol=TOL)
    base, _ = E(rmt, .5, [.01, .1, 1], snr=1)
    np.testing.assert_allclose(att - base, [-.0072, -.0108, -.0223], atol=TOL)


def test_rank_one_L_equals_wk_wq(rmt):
    wk, wq = np.array([.6, .5, 0]), np.array([.8, 0, .4])
    a, _ = E(rmt, .5, [.01, .1, 1], snr=1, wk=list(wk), wq=list(wq))
    recs = rmt.curve(.5, [.01, .1, 1], snr=1, L=np.outer(wk, wq).tolist(), error_estimate=False, **TANH)
    np.testing.assert_allclose(a, [float(r["E_attention"]) for r in recs], atol=1e-12)


def test_mixed_geometry_kept_diagonal(rmt):
    # §12 mixed-geometry check: mu=e1, wK=(.6,.5,0), wQ=(.8,0,.4), c=.5, SNR 1,
    # kappa = f(sqrt p)/sqrt p at p = 500: theory .2694/.3341/.4080
    kappa = math.tanh(math.sqrt(500)) / math.sqrt(500)
    att, _ = E(rmt, .5, [.01, .1, 1], snr=1, wk=[.6, .5, 0], wq=[.8, 0, .4], kappa=kappa)
    np.testing.assert_allclose(att, [.2694, .3341, .4080], atol=TOL)
