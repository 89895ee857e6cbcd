"""Near the interpolation threshold c = 1 the spectral law's θ-density has poles at distance |1 − √c|
from θ = 0; graded Gauss–Legendre panels keep both backends converging there (explore finding:
``rmt-mpmath-equals-float64`` failed at c = 1.016, γ = 1e-3 with a ConvergenceError by degree 12, and
float64 was 2e-5 off at c = 0.9999 while stating an error of 1e-6)."""
import mpmath
import pytest

from attnlimits.verify.rmt.properties import _rmt_inprocess


@pytest.mark.parametrize("c", [pytest.param(0.9999, marks=pytest.mark.slow), 1.004])
def test_both_backends_converge_near_c_equal_one(c):
    v = {"activation": "tanh", "c": c, "gamma": [0.001], "snr": 0.5, "wk": [0.0, 0.0], "wq": [0.0, 0.0]}
    lo = _rmt_inprocess(v)
    hi20 = _rmt_inprocess(v, digits=20)
    hi30 = _rmt_inprocess(v, digits=30)
    for key in ("E_attention", "E_ridge"):
        a, b = mpmath.mpf(str(hi20[key])), mpmath.mpf(str(hi30[key]))
        assert abs(a - b) <= mpmath.mpf(10) ** -17 * abs(b), (key, a, b)  # two precisions agree to the first's digits
        assert abs(float(lo[key]) - float(b)) <= 1e-9 * abs(float(b)), (key, lo[key], b)  # float64 to its error
