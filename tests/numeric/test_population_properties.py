"""Property tests (Hypothesis) of the population theory of single-location regression."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from attnlimits.verify.slr.problem import slr_problem
from attnlimits.verify.slr.theory import theory_of

models = st.sampled_from(["spiked", "max"])
nus = st.floats(min_value=0.3, max_value=6.0, allow_nan=False)
lengths = st.sampled_from([2, 3])


@given(models, nus, lengths)
def test_softmax_optimum_is_the_bayes_risk(model, nu, L):
    """min over (k, v) of the softmax risk = E_B, at m_k = c_ν (docs/slr.md §7), for any ν and L."""
    t = theory_of(slr_problem(model, nu, L, activation="softmax"))
    s = t.setting
    r = t.optimal_population_risk(tol=1e-6)
    b = t.bayes_risk()
    # the optimiser's own error estimate must cover the distance to the exact quadrature
    assert abs(r.risk - b.value) <= max(1e-6, 10 * r.risk_error), (r.risk, r.risk_error, b.value)
    assert abs(r.argmin["m_k"] - s.c_nu) <= 2e-3 * s.c_nu


@given(models, nus, lengths, st.sampled_from(["linear_uncentred", "linear_centred", "linear_pure", "erf_fixed"]))
def test_every_activation_is_above_bayes(model, nu, L, act):
    t = theory_of(slr_problem(model, nu, L, activation=act))
    r = t.optimal_population_risk(n_gh=24)
    assert r.risk >= t.bayes_risk().value - 1e-6
    assert 0.0 <= r.risk <= 1.0
