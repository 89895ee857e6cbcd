"""Checks built to see small errors (docs/power.md): each holds on the code as it is and fails under the
planted error of the benchmark catalogue (``benchmarks/mutants.py``) it is meant to see.

- the two identities of the RS theory at a fixed point (:func:`attnlimits.verify.slr.replica.rs_identities`):
  deterministic, so a 2 % error inside the fixed-point map or a 3 % error of the test-error expression is
  seen exactly, where the comparison with ERM at D = 400 cannot resolve it;
- C5's predictor with all seven overlaps non-zero: a 3 % error of the residual covariance moves the risk by
  about 1 %, which the direct Monte Carlo (2·10⁶ sequences at D = 16) resolves at k = 4 standard errors.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def mutants():
    sys.path.insert(0, str(BENCH))
    try:
        import mutants as m
    finally:
        sys.path.remove(str(BENCH))
    return m


def _identities(alpha=4.0):
    from attnlimits.verify.slr.replica import rs_identities, rs_problem

    problem = rs_problem("softmax", "spiked", 2.0, 2, points=512, replicates=4)
    fp = problem.fixed_point(alpha, 0.1, 0.1)
    return {c["label"].split(" (")[0]: abs(c["value"] - c["reference"]) / c["tolerance"]
            for c in rs_identities(problem, fp, 2)}


def test_rs_identities_hold_on_the_code_as_it_is():
    ratios = _identities()
    assert len(ratios) == 2 and all(r <= 1.0 for r in ratios.values()), ratios


@pytest.mark.slow
@pytest.mark.parametrize("plant, broken", [("slr-replica-qhat", "RS free energy"),
                                           ("slr-replica-test-error", "RS test-error expression")])
def test_rs_identities_fail_under_a_planted_error(mutants, plant, broken):
    with mutants.planted(plant):
        ratios = _identities()
    # the broken identity misses by far more than its tolerance (at least 100 times), the other holds
    assert ratios[broken] > 100.0, ratios
    assert all(r <= 1.0 for k, r in ratios.items() if k != broken), ratios


class _Ctx:
    mode, seed, device = "quick", 0, "cpu"


@pytest.mark.slow
def test_c5_cross_overlaps_sees_a_3_percent_residual_covariance_error(mutants):
    from attnlimits.verify.slr.claims.population import _c5_cross_overlaps

    k = 4.0  # standard errors: clean within k, planted beyond k
    clean, _ = _c5_cross_overlaps(_Ctx(), {"n": 200_000}, 2.0, 3)
    assert abs(clean.value - clean.theory) - clean.allowance <= k * clean.se
    with mutants.planted("slr-residual-cov"):
        bad, _ = _c5_cross_overlaps(_Ctx(), {"n": 200_000}, 2.0, 3)
    assert abs(bad.value - bad.theory) - bad.allowance > k * bad.se


def test_the_B_plant_moves_the_linear_risk_as_B_does(mutants):
    """B(m) 2 % too large lowers sup A²/B by the same factor, so the risk becomes 1 − (1 − E)/1.02."""
    from attnlimits.verify.slr.claims.population_shared import linear_closed_form_values as _linear

    clean, arg = _linear("linear_centred", "max", 3, mu=1.0)
    with mutants.planted("slr-linear-B-max"):
        planted, arg_p = _linear("linear_centred", "max", 3, mu=1.0)
        spiked_p = _linear("linear_centred", "spiked", 3, 2.0)
    assert planted == pytest.approx(1 - (1 - clean) / 1.02, rel=1e-12) and arg_p == arg
    assert spiked_p == _linear("linear_centred", "spiked", 3, 2.0)  # spiked-SLR untouched


_RMT_POINTS = ({"activation": "tanh", "c": 2.0, "gamma": 0.1, "snr": 1.0, "wk": 0.5, "wq": -0.3},
               {"activation": "relu", "c": 0.4, "gamma": 0.01, "snr": 2.0, "wk": 0.0, "wq": 0.0})


def _excess(comparisons):
    """Largest |value − reference| / tolerance over the comparisons (deterministic checks)."""
    return max(abs(c.value - c.reference) / c.tolerance for _, c in comparisons)


def test_derivative_identity_holds_on_the_code_as_it_is():
    from attnlimits.verify.rmt.properties import derivative_identity

    assert all(_excess(derivative_identity(p, size={}, seed=0)) <= 1.0 for p in _RMT_POINTS)


@pytest.mark.slow
def test_derivative_identity_sees_an_error_of_the_error_expression(mutants):
    from attnlimits.verify.rmt.properties import derivative_identity

    for plant in ("rmt-woodbury-alpha", "rmt-ridge-snr"):  # both act at SNR > 0, at every c
        with mutants.planted(plant):
            assert all(_excess(derivative_identity(p, size={}, seed=0)) > 100.0 for p in _RMT_POINTS), plant


def test_a1_by_direct_quadrature_matches_the_engine():
    from attnlimits.symbolic.activations import parse_activation
    from attnlimits.symbolic.hermite import hermite_coefficients
    from attnlimits.verify.rmt.properties import _a1_by_quadrature

    for expr in ("tanh(t)", "log(1+exp(t))", "sqrt(Abs(t))*tanh(2*t)"):
        value, error = _a1_by_quadrature(expr)
        assert float(hermite_coefficients(parse_activation(expr)).a1) == pytest.approx(value, rel=1e-8, abs=10 * error)
    assert _a1_by_quadrature("log(t)") is None  # complex on t < 0: no reference, the Bessel check alone


def test_kappa_vs_measured_holds_and_sees_a_3_percent_kappa_error(mutants):
    from attnlimits.verify.rmt.properties import kappa_vs_measured

    def excess(point):
        ((_, c),) = kappa_vs_measured(point, size={"n": 400_000}, seed=1)
        return (abs(c.value - c.reference) - c.tolerance) / c.se  # in SE beyond the tolerance

    k = 4.0  # standard errors
    for point in ({"activation": "sigmoid", "p": 100}, {"activation": "relu", "p": 400}):
        assert excess(point) <= k, point
    with mutants.planted("rmt-kappa"):
        assert excess({"activation": "relu", "p": 400}) > k


def test_bo_stationarity_holds_and_sees_an_error_of_the_prior_update(mutants):
    from attnlimits.verify.slr.properties import bo_large_alpha

    def broken(point):
        return [abs(c.value - c.reference) > c.tolerance for label, c in
                bo_large_alpha(point, size={"points": 2 ** 10, "replicates": 16}, seed=1) if "dpsi_P" in label]

    point = {"alpha": 60.0, "nu": 2.0, "L": 2}
    assert broken(point) == [False] * 4
    with mutants.planted("slr-bo-prior"):
        assert broken(point) == [True] * 4


def test_predictor_on_frame_has_the_overlaps_it_states():
    """The overlaps returned are the vectors' own (dot products over D), to round-off."""
    import torch

    from attnlimits.verify.slr import predictor_on_frame

    D = 16
    k, v, (ks, vs), ov = predictor_on_frame((1.0, 0.3, 1.0), (0.3, 1.0, -1.0, 0.5), D, 7, device="cpu")
    dot = lambda a, b: float(a @ b) / D  # noqa: E731
    measured = {"m_k": dot(k, ks), "m_kvstar": dot(k, vs), "q_k": dot(k, k), "m_vkstar": dot(v, ks),
                "m_v": dot(v, vs), "q_v": dot(v, v), "q_kv": dot(k, v)}
    assert measured == pytest.approx(ov, abs=1e-12)
    assert abs(dot(ks, vs)) < 1e-12 and isinstance(k, torch.Tensor)
