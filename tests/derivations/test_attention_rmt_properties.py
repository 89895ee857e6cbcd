"""Property-based tests of the attention_rmt theory over (c, γ, SNR, geometry, activation).

Each property is a statement of the spec (§3, §8, §9) that must hold for every parameter point;
Hypothesis searches the space.  Profiles: ``ci`` (derandomised), ``dev``, ``nightly`` (see
tests/conftest.py).
"""
from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from attnlimits.derivations import attention_rmt as R
from attnlimits.numeric import compile_model

ACTIVATIONS = {  # (a1, nu) from closed forms, or the spec's table (tanh, sigmoid)
    "tanh": (0.605706, 0.394294),
    "erf": (2 / math.sqrt(3 * math.pi), 2 / math.pi * math.asin(2 / 3)),
    "relu": (0.5, 0.5 - 1 / (2 * math.pi)),
    "sin": (math.exp(-0.5), (1 - math.exp(-2)) / 2),
    "sigmoid": (0.206621, 0.043379),
    "linear": (1.0, 1.0),
    "cos": (0.0, (1 + math.exp(-2)) / 2 - math.exp(-1)),
    "he2": (0.0, 1.0),
}

log_uniform = lambda lo, hi: st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0**e)  # noqa: E731
cs = log_uniform(0.1, 4.0)
gammas = log_uniform(1e-3, 1e2)
snrs = st.floats(0, 4)
coords = st.lists(st.floats(-1.5, 1.5), min_size=1, max_size=3)
acts = st.sampled_from(sorted(ACTIVATIONS))


@pytest.fixture(scope="module")
def rmt():
    return compile_model(R.model, "numpy")


def curve(rmt, c, gs, act, **kw):
    a1, nu = ACTIVATIONS[act]
    return rmt.curve(c, gs, a1=a1, nu=nu, error_estimate=False, **kw)


@given(c=cs, g=gammas, snr=snrs, wk=coords, wq=coords, act=acts)
def test_error_in_unit_interval_and_increasing(rmt, c, g, snr, wk, wq, act):
    assume(not (act == "linear" and c > 0.7 and g < 0.01))  # b = 0 and d(t) has a root: slow quadrature
    gs = [g, 1.5 * g, 3 * g]
    recs = curve(rmt, c, gs, act, snr=snr, wk=wk, wq=wq)
    E = [float(r["E_attention"]) for r in recs]
    assert all(0 <= e <= 1 for e in E)
    assert E[0] <= E[1] + 1e-10 <= E[2] + 2e-10
    Er = [float(r["E_ridge"]) for r in recs]
    assert all(0 <= e <= 1 for e in Er) and Er[0] <= Er[1] + 1e-12 <= Er[2] + 2e-12


@given(c=cs, g=gammas, wk=coords, wq=coords, act=acts)
def test_weights_irrelevant_at_mu_zero(rmt, c, g, wk, wq, act):
    assume(act != "linear")
    base = curve(rmt, c, [g], act)[0]["E_attention"]
    with_w = curve(rmt, c, [g], act, snr=0, wk=wk, wq=wq)[0]["E_attention"]
    assert float(with_w) == pytest.approx(float(base), abs=1e-10)


@given(c=cs, g=gammas, snr=snrs, wk=coords, wq=coords, act=acts)
def test_orthogonal_weights_irrelevant(rmt, c, g, snr, wk, wq, act):
    assume(act != "linear")
    base = curve(rmt, c, [g], act, snr=snr)[0]["E_attention"]
    orth = curve(rmt, c, [g], act, snr=snr, wk=[0] + wk, wq=[0] + wq)[0]["E_attention"]
    assert float(orth) == pytest.approx(float(base), abs=1e-10)


@given(c=cs, g=gammas, snr=snrs, wk=coords, wq=coords, nu=st.floats(0.05, 2))
def test_a1_zero_blindness(rmt, c, g, snr, wk, wq, nu):
    # §8 D: a1 = 0, kappa = 0  =>  E equals the random-input value whatever mu, w_K, w_Q
    rand = rmt.curve(c, [g], a1=0, nu=nu, error_estimate=False)[0]["E_attention"]
    blind = rmt.curve(c, [g], a1=0, nu=nu, snr=snr, wk=wk, wq=wq, error_estimate=False)[0]["E_attention"]
    assert float(blind) == pytest.approx(float(rand), abs=1e-10)


@given(c=cs, g=gammas, snr=snrs, wk=coords, wq=coords, act=acts)
def test_implicit_derivative_matches_central_difference(rmt, c, g, snr, wk, wq, act):
    # §6: implicit dybar/dgamma vs a central difference at gamma(1 ± 1e-4): agree to 1e-6
    assume(act != "linear")
    h = 1e-4 * g
    recs = curve(rmt, c, [g - h, g, g + h], act, snr=snr, wk=wk, wq=wq)
    fd = (float(recs[2]["ybar"]) - float(recs[0]["ybar"])) / (2 * h)
    E_fd = -g**2 * fd
    assert float(recs[1]["E_attention"]) == pytest.approx(E_fd, abs=1e-6)


@settings(max_examples=4)
@given(c=st.sampled_from([0.25, 0.5, 2.0]), g=log_uniform(1e-2, 10), snr=st.sampled_from([0, 1, 2]),
       wk=coords, wq=coords, act=st.sampled_from(["tanh", "relu", "erf"]))
def test_numpy_and_mpmath_agree(c, g, snr, wk, wq, act):
    a1, nu = ACTIVATIONS[act]
    num = compile_model(R.model, "numpy").curve(c, [g], a1=a1, nu=nu, snr=snr, wk=wk, wq=wq)[0]
    mp = compile_model(R.model, "mpmath").curve(c, [g], a1=a1, nu=nu, snr=snr, wk=wk, wq=wq, digits=20)[0]
    assert abs(float(num["E_attention"]) - float(mp["E_attention"])) <= 1e-10
    assert abs(float(num["E_ridge"]) - float(mp["E_ridge"])) <= 1e-12


@pytest.mark.parametrize("digits", [25, 40])
def test_mpmath_at_two_precisions_against_a_finer_one(digits):
    mp = compile_model(R.model, "mpmath")
    ref = mp.curve("0.5", ["0.1"], a1="0.6", nu="0.45", snr=1, wk=[1], wq=[1], digits=digits + 15)[0]
    got = mp.curve("0.5", ["0.1"], a1="0.6", nu="0.45", snr=1, wk=[1], wq=[1], digits=digits)[0]
    with mpmath.workdps(digits + 15):
        assert abs(got["E_attention"] - ref["E_attention"]) < mpmath.mpf(10) ** (-digits + 3)


def test_invalid_input_is_refused(rmt):
    for bad in [dict(c=0), dict(c=-1), dict(c=float("nan"))]:
        with pytest.raises(ValueError, match="c must"):
            rmt.curve(bad["c"], [1], a1=0.5, nu=0.4)
    with pytest.raises(ValueError, match="gamma must be > 0"):
        rmt.curve(1, [0], a1=0.5, nu=0.4)
    with pytest.raises(ValueError, match="snr must be >= 0"):
        rmt.curve(1, [1], a1=0.5, nu=0.4, snr=-1)
    with pytest.raises(ValueError, match="nu must be >= a1"):
        rmt.curve(1, [1], a1=0.9, nu=0.4)


@given(c=cs, snr=snrs)
def test_ridge_limits(rmt, c, snr):
    # §7: gamma -> 0: (1-c)/(1+SNR) for c < 1, ~gamma^2 for c > 1; gamma -> oo: 1-E ~ 2(c+SNR)/gamma
    small, big = 1e-7, 1e7
    e0 = float(rmt.rmt_ridge(c, small, snr)[0])
    if c < 0.95:
        assert e0 == pytest.approx((1 - c) / (1 + snr), abs=1e-5)
    elif c > 1.05:
        e1 = float(rmt.rmt_ridge(c, 10 * small, snr)[0])
        assert math.log10(e1 / e0) == pytest.approx(2, abs=0.01)  # log-log slope 2
    einf = float(rmt.rmt_ridge(c, big, snr)[0])
    assert (1 - einf) * big == pytest.approx(2 * (c + snr), rel=1e-4)
