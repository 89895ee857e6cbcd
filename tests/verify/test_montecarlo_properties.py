"""Hypothesis properties of the Monte Carlo side (issue: the verification layer).

Each property has an exact or closed-form reference: the push-through identity (V1), the
unbiasedness of the quadratic estimator for the trace identity at μ = 0 (stated confidence:
4 standard errors), batch-size independence and seed reproducibility (exact up to round-off).
"""
from __future__ import annotations

import numpy as np
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from attnlimits.symbolic.hermite import hermite_coefficients
from attnlimits.verify.rmt.montecarlo import attention_kernel, draw_tokens, probe_error_curve, probe_error_explicit, simulate_attention

ACTS = ["tanh", "relu", "he2", "sin", "identity"]
K_SE = 4.0  # confidence level of the statistical property: 4 standard errors


def centred(name):
    return hermite_coefficients(name).centred


@settings(max_examples=10, deadline=None)
@given(n=st.integers(30, 120), ratio=st.sampled_from([0.5, 1.0, 2.0]), gamma=st.floats(1e-3, 10),
       act=st.sampled_from(ACTS), snr=st.floats(0, 4), seed=st.integers(0, 10_000),
       diagonal=st.sampled_from(["zero", "keep"]))
def test_push_through_identity_v1(n, ratio, gamma, act, snr, seed, diagonal):
    # He2 keeps a diagonal ~ sqrt(p/2), which the kept-diagonal mode refuses by design (docs/attention_rmt.md §4.3,
    # tested in test_montecarlo.py): not an input of this property
    assume(not (act == "he2" and diagonal == "keep"))
    p = max(2, int(ratio * n))
    explicit, resolvent = probe_error_explicit(centred(act), n, p, gamma, mu=[snr**0.5], wk=[1.0], wq=[0.5],
                                               seed=seed, diagonal=diagonal)
    assert abs(explicit - resolvent) <= 1e-8 * max(abs(resolvent), 1e-12)


@settings(max_examples=6, deadline=None)
@given(n=st.integers(40, 100), ratio=st.sampled_from([0.5, 2.0]), act=st.sampled_from(ACTS),
       seed=st.integers(0, 10_000))
def test_quadratic_estimator_unbiased_for_trace_identity_at_mu0(n, ratio, act, seed):
    # at μ = 0, y is independent of G: E_y[γ² yᵀ(G+γ)⁻²y/n] = γ² tr (G+γ)⁻²/n exactly
    p = max(2, int(ratio * n))
    X, _ = draw_tokens(n, p, seed=seed, device="cpu")
    K, _ = attention_kernel(X, centred(act))
    Phi = X @ K
    G = Phi.T @ Phi / n
    gammas = [0.01, 0.1, 1.0]
    trace = probe_error_curve(G, None, gammas, estimator="trace").numpy()
    gen = torch.Generator().manual_seed(seed + 1)
    ys = torch.randint(0, 2, (400, n), generator=gen, dtype=torch.float64) * 2 - 1
    quad = probe_error_curve(G.expand(400, n, n), ys, gammas).numpy()
    mean, se = quad.mean(0), quad.std(0, ddof=1) / np.sqrt(len(quad))
    assert np.all(np.abs(mean - trace) <= K_SE * se + 1e-12)


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 5), seed=st.integers(0, 10_000), act=st.sampled_from(ACTS))
def test_batch_size_independence_and_seed_reproducibility(batch, seed, act):
    kw = dict(mu=[1.0], settings={"w0": {}, "al": {"wk": [1.0], "wq": [1.0]}}, draws=5, seed=seed, device="cpu")
    full = simulate_attention(centred(act), 60, 30, [0.01, 1.0], **kw)
    part = simulate_attention(centred(act), 60, 30, [0.01, 1.0], batch=batch, **kw)
    again = simulate_attention(centred(act), 60, 30, [0.01, 1.0], batch=batch, **kw)
    for name in ("w0", "al"):
        np.testing.assert_allclose(part.errors[name], full.errors[name], rtol=1e-10, atol=1e-14)
        np.testing.assert_array_equal(again.errors[name], part.errors[name])
    other = simulate_attention(centred(act), 60, 30, [0.01, 1.0], **{**kw, "seed": seed + 1})
    assert not np.allclose(other.errors["w0"], full.errors["w0"])
