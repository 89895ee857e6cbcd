"""Tests of the PyTorch Monte Carlo simulators (docs/attention_rmt.md §3, §4.2, §7, §10; claims V1, V19)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnlimits.verify.torch_device import resolve_device
from attnlimits.verify.rmt.montecarlo import (
    AttentionMCResult,
    attention_kernel,
    draw_tokens,
    noise_kernel_stieltjes,
    probe_error_curve,
    probe_error_curve_features,
    probe_error_explicit,
    probe_errors_cholesky,
    simulate_attention,
    torch_activation,
)
from attnlimits.verify.stats import MCEstimate, mean_se

t = sp.Symbol("t")
TANH = sp.tanh(t)
LINEAR = t
SETTINGS = {
    "w0": {},
    "aligned": {"wk": [1.0], "wq": [1.0]},
    "mixed": {"wk": [0.6, 0.5], "wq": [0.8, 0.0, 0.4]},
    "block": {"L": [[0.8, 0.0, 0.0], [0.0, 0.0, 0.7], [0.4, 0.0, 0.0]]},
}
CPU = "cpu"


def _rel(a, b, floor=1e-14):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.max(np.abs(a - b) / np.maximum(np.abs(b), floor))


# ---------------------------------------------------------------------------------------------
# exact identities and solver equivalence
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [0.01, 0.1, 1.0])
@pytest.mark.parametrize("diagonal", ["zero", "keep"])
def test_v1_push_through_identity(gamma, diagonal):
    """docs/attention_rmt.md §3 / V1: (1/n)||y − Φᵀw*||² = γ²||Qy||²/n to 1e-8 relative."""
    explicit, resolvent = probe_error_explicit(
        TANH, 300, 150, gamma, mu=[1.0], wk=[0.6, 0.5], wq=[0.8, 0.0, 0.4], seed=3,
        diagonal=diagonal, device=CPU,
    )
    assert 0.0 < explicit < 1.0
    assert abs(explicit - resolvent) <= 1e-8 * abs(resolvent)
    # the same draw in the simulator (draw 0 of the seed)
    res = simulate_attention(
        TANH, 300, 150, [gamma], mu=[1.0], settings={"m": SETTINGS["mixed"]}, draws=1, seed=3,
        diagonal=diagonal, ridge=False, device=CPU,
    )
    assert _rel(res.errors["m"][0, 0], resolvent) <= 1e-10


@pytest.mark.parametrize("n,p", [(200, 100), (120, 240)])
def test_eigh_path_equals_cholesky_path(n, p):
    gammas = np.geomspace(1e-3, 10.0, 7)
    kw = dict(mu=[1.0, 0.5], settings=SETTINGS, draws=2, seed=11, device=CPU)
    a = simulate_attention(TANH, n, p, gammas, **kw)
    b = probe_errors_cholesky(TANH, n, p, gammas, **kw)
    for name in SETTINGS:
        assert _rel(a.errors[name], b.errors[name]) <= 1e-10, name
        np.testing.assert_array_equal(a.kappa_hat[name], b.kappa_hat[name])
    assert _rel(a.ridge, b.ridge, floor=1e-12) <= 1e-10
    # trace estimator too
    a = simulate_attention(TANH, n, p, gammas, estimator="trace", draws=1, seed=2, device=CPU)
    b = probe_errors_cholesky(TANH, n, p, gammas, estimator="trace", draws=1, seed=2, device=CPU)
    assert _rel(a.errors["w0"], b.errors["w0"]) <= 1e-10


def test_independent_of_batch_size():
    kw = dict(mu=[1.0], settings=SETTINGS, draws=3, seed=5, device=CPU)
    gammas = [0.01, 0.1, 1.0]
    ref = simulate_attention(TANH, 150, 100, gammas, batch=None, **kw)
    for batch in (1, 2):
        other = simulate_attention(TANH, 150, 100, gammas, batch=batch, **kw)
        for name in SETTINGS:
            assert _rel(other.errors[name], ref.errors[name]) <= 1e-10
            assert _rel(other.kappa_hat[name], ref.kappa_hat[name]) <= 1e-10
            assert _rel(other.frob[name], ref.frob[name]) <= 1e-10
        assert _rel(other.ridge, ref.ridge) <= 1e-10
    # draw i of a 3-draw run is draw i of any longer run
    longer = simulate_attention(TANH, 150, 100, gammas, batch=4, **{**kw, "draws": 5})
    assert _rel(longer.errors["aligned"][:3], ref.errors["aligned"]) <= 1e-10


def test_seeding_reproducible_and_distinct():
    kw = dict(mu=[1.0], draws=2, device=CPU)
    a = simulate_attention(TANH, 100, 50, [0.1, 1.0], seed=7, **kw)
    b = simulate_attention(TANH, 100, 50, [0.1, 1.0], seed=7, **kw)
    c = simulate_attention(TANH, 100, 50, [0.1, 1.0], seed=8, **kw)
    np.testing.assert_array_equal(a.errors["w0"], b.errors["w0"])
    np.testing.assert_array_equal(a.ridge, b.ridge)
    assert not np.any(a.errors["w0"] == c.errors["w0"])
    assert not np.array_equal(a.errors["w0"][0], a.errors["w0"][1])  # draws differ
    assert a.meta["draw_seeds"] == b.meta["draw_seeds"] != c.meta["draw_seeds"]


def test_trace_and_quadratic_estimators_agree_at_mu0():
    """At μ = 0, y is independent of G, so E[quadratic | G] = trace: the paired difference has
    mean 0. Assert |mean| ≤ k·SE with k = 4 (plus 1e-4 against an SE that happens to be tiny)."""
    gammas = [0.01, 0.1, 1.0, 10.0]
    kw = dict(draws=8, seed=21, device=CPU, settings={"w0": {}, "a": {"wk": [1.0], "wq": [2.0]}})
    quad = simulate_attention(TANH, 300, 150, gammas, **kw)
    trace = simulate_attention(TANH, 300, 150, gammas, estimator="trace", **kw)
    for name in ("w0", "a", "ridge"):
        d = mean_se(quad._samples(name) - trace._samples(name))
        assert np.all(np.abs(d.mean) <= 4 * d.se + 1e-4), (name, d)
    # the trace estimator fluctuates much less than the quadratic one
    assert np.all(trace.estimate("w0").se[:3] < quad.estimate("w0").se[:3])


def test_trace_estimator_warns_with_signal():
    with pytest.warns(UserWarning, match="mu = 0"):
        simulate_attention(TANH, 40, 20, [1.0], mu=[1.0], draws=1, estimator="trace", device=CPU)


# ---------------------------------------------------------------------------------------------
# direct construction for f = identity
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["w0", "mixed", "block"])
def test_linear_keep_matches_direct_construction(name):
    """f = t, diagonal kept: K = XᵀWX/p exactly; rebuild G = ΦᵀΦ/n with p×p W in NumPy."""
    n, p, seed = 120, 80, 4
    mu = [0.9, -0.3]
    spec = SETTINGS[name]
    X, y = draw_tokens(n, p, mu=mu, seed=seed, index=0, device=CPU)
    Xn, yn = X.numpy(), y.numpy()
    W = np.eye(p)
    if "wk" in spec:
        wk = np.zeros(p); wk[: len(spec["wk"])] = spec["wk"]
        wq = np.zeros(p); wq[: len(spec["wq"])] = spec["wq"]
        W += np.outer(wk, wq)
    elif "L" in spec:
        L = np.asarray(spec["L"]); W[: L.shape[0], : L.shape[0]] += L
    K_direct = Xn.T @ W @ Xn / p
    K, kappa_hat = attention_kernel(X, LINEAR, spec, diagonal="keep")
    np.testing.assert_allclose(K.numpy(), K_direct, rtol=1e-12, atol=1e-13)
    assert abs(kappa_hat.item() - np.mean(np.diag(K_direct))) < 1e-13
    Phi = Xn @ K_direct
    G = Phi.T @ Phi / n
    lam, V = np.linalg.eigh(G)
    gammas = np.array([0.01, 0.1, 1.0])
    a = (V.T @ yn) ** 2
    E_direct = (gammas[:, None] ** 2 * a / (np.maximum(lam, 0) + gammas[:, None]) ** 2).sum(1) / n
    res = simulate_attention(
        LINEAR, n, p, gammas, mu=mu, settings={name: spec}, draws=1, seed=seed,
        diagonal="keep", device=CPU,
    )
    assert _rel(res.errors[name][0], E_direct) <= 1e-10
    assert _rel(res.frob[name][0], np.sum(Phi**2) / n**2) <= 1e-12
    assert _rel(res.kappa_hat[name][0], np.mean(np.diag(K_direct))) <= 1e-12
    # ridge baseline: same draw, Φ = X
    Gr = Xn.T @ Xn / n
    Er = gammas**2 * np.array([np.sum(np.linalg.solve(Gr + g * np.eye(n), yn) ** 2) for g in gammas]) / n
    assert _rel(res.ridge[0], Er) <= 1e-10
    # zero-diagonal and set-diagonal modes act only on the diagonal
    Kz, _ = attention_kernel(X, LINEAR, spec, diagonal="zero")
    Ks, _ = attention_kernel(X, LINEAR, spec, diagonal="set", kappa=0.25)
    off = ~np.eye(n, dtype=bool)
    np.testing.assert_allclose(Kz.numpy()[off], K_direct[off], rtol=1e-12, atol=1e-13)
    assert np.all(np.diag(Kz.numpy()) == 0) and np.all(np.diag(Ks.numpy()) == 0.25)


# ---------------------------------------------------------------------------------------------
# unbiasedness against a closed form (docs/attention_rmt.md §7)
# ---------------------------------------------------------------------------------------------


def _mp_ridge_error(c, gamma, snr):
    """docs/attention_rmt.md §7: c γ m² + (1 − c + γ) m − 1 = 0 (positive root), D = γ(1 + (c+SNR) m),
    E_RR = γ² D'/D² with m' = −(c m² + m)/(2cγm + γ + 1 − c)."""
    b = 1 - c + gamma
    m = (-b + math.sqrt(b * b + 4 * c * gamma)) / (2 * c * gamma)
    dm = -(c * m * m + m) / (2 * c * gamma * m + gamma + 1 - c)
    D = gamma * (1 + (c + snr) * m)
    dD = 1 + (c + snr) * (m + gamma * dm)
    return gamma**2 * dD / D**2


@pytest.mark.parametrize("snr", [0.0, 1.0])
def test_ridge_unbiased_against_marchenko_pastur(snr):
    """Ridge error mean within k = 4 SE + 0.005 (finite-size allowance, n = 400) of §7."""
    n, p = 400, 200
    gammas = np.array([0.05, 0.5, 2.0])
    mu = None if snr == 0 else [math.sqrt(snr)]
    res = simulate_attention(LINEAR, n, p, gammas, mu=mu, draws=6, seed=31, device=CPU)
    theory = np.array([_mp_ridge_error(p / n, g, snr) for g in gammas])
    est = res.estimate("ridge")
    assert est.agrees(theory, k=4.0, allowance=0.005), (est, theory)
    assert np.all(np.abs(est.mean - theory) < 0.02)


# ---------------------------------------------------------------------------------------------
# properties (Hypothesis)
# ---------------------------------------------------------------------------------------------


@given(
    n=st.integers(8, 40),
    ratio=st.sampled_from([0.25, 0.5, 1.0, 2.0]),
    snr=st.floats(0.0, 4.0),
    seed=st.integers(0, 2**31 - 1),
    f_name=st.sampled_from(["tanh", "relu", "he2", "linear"]),
    diagonal=st.sampled_from(["zero", "keep"]),
)
def test_errors_in_unit_interval_and_increasing(n, ratio, snr, seed, f_name, diagonal):
    f = {
        "tanh": TANH,
        "relu": sp.Max(t, 0) - 1 / sp.sqrt(2 * sp.pi),
        "he2": (t**2 - 1) / sp.sqrt(2),
        "linear": LINEAR,
    }[f_name]
    if f_name == "he2" and diagonal == "keep":
        diagonal = "zero"  # He2's diagonal ~ sqrt(p) is refused in keep mode
    p = max(3, int(round(ratio * n)))
    gammas = np.geomspace(1e-4, 1e3, 12)
    res = simulate_attention(
        f, n, p, gammas, mu=[math.sqrt(snr)], settings={"w0": {}, "a": SETTINGS["mixed"]},
        draws=2, seed=seed, diagonal=diagonal, device=CPU,
    )
    for arr in list(res.errors.values()) + [res.ridge]:
        assert np.all(arr >= 0.0) and np.all(arr <= 1.0 + 1e-12)
        assert np.all(np.diff(arr, axis=1) >= -1e-12)


# ---------------------------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------------------------


ACTIVATIONS = {
    "relu": (sp.Max(t, 0) - 1 / sp.sqrt(2 * sp.pi), lambda x: np.maximum(x, 0) - 1 / np.sqrt(2 * np.pi)),
    "tanh": (sp.tanh(t), np.tanh),
    "he2": ((t**2 - 1) / sp.sqrt(2), lambda x: (x**2 - 1) / np.sqrt(2)),
    "abs": (sp.Abs(t) - sp.sqrt(2 / sp.pi), lambda x: np.abs(x) - np.sqrt(2 / np.pi)),
    "erf": (sp.erf(t), None),
    "sigmoid": (1 / (1 + sp.exp(-t)) - sp.Rational(1, 2), lambda x: 1 / (1 + np.exp(-x)) - 0.5),
    "cos": (sp.cos(t) - sp.exp(-sp.Rational(1, 2)), lambda x: np.cos(x) - np.exp(-0.5)),
    "mix": (sp.Rational(3, 5) * t + sp.Rational(3, 10) * (t**3 - 3 * t) / sp.sqrt(6),
            lambda x: 0.6 * x + 0.3 * (x**3 - 3 * x) / np.sqrt(6)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_torch_activation_matches_numpy_and_sympy(name):
    expr, np_fn = ACTIVATIONS[name]
    x = np.concatenate([np.linspace(-6, 6, 101), [0.0, 1e-9, -1e-9, 37.0]])
    got = torch_activation(expr)(torch.tensor(x, dtype=torch.float64)).numpy()
    ref_sympy = sp.lambdify(t, expr, "numpy")(x) if name != "erf" else None
    if name == "erf":
        ref_sympy = np.array([float(sp.erf(sp.Float(v, 30))) for v in x])
    np.testing.assert_allclose(got, ref_sympy, rtol=1e-14, atol=1e-15)
    if np_fn is not None:
        np.testing.assert_allclose(got, np_fn(x), rtol=1e-13, atol=1e-15)
    # exact values at a few rational points against SymPy's own evaluation
    for v in (sp.Rational(-3, 2), sp.Rational(1, 3), sp.Integer(2)):
        ev = torch_activation(expr)(torch.tensor([float(v)], dtype=torch.float64)).item()
        assert abs(ev - float(expr.subs(t, v).evalf(30))) <= 1e-14 * max(1.0, abs(ev))


def test_torch_activation_other_symbol_constants_and_shapes():
    s = sp.Symbol("s")
    g = torch_activation(sp.Max(s, sp.Rational(1, 3)) + sp.pi * sp.Heaviside(s) + sp.sign(s))
    x = torch.tensor([[-1.0, 0.0], [0.5, 2.0]], dtype=torch.float64)
    expected = np.maximum(x.numpy(), 1 / 3) + np.pi * np.heaviside(x.numpy(), 0.5) + np.sign(x.numpy())
    np.testing.assert_allclose(g(x).numpy(), expected, rtol=1e-15)
    zero = torch_activation(sp.Integer(0))(x)
    assert zero.shape == x.shape and torch.all(zero == 0)
    pw = torch_activation(sp.Piecewise((t, t > 0), (0, True)))
    np.testing.assert_array_equal(pw(x).numpy(), np.maximum(x.numpy(), 0))
    with pytest.raises(ValueError):
        torch_activation(t + s)


# ---------------------------------------------------------------------------------------------
# noise kernel (docs/attention_rmt.md §4.2, V19)
# ---------------------------------------------------------------------------------------------


def _noise_kernel_fixed_point(z, c, a1, nu, damping=0.5, tol=1e-13, maxiter=20000):
    m = -1.0 / z
    for _ in range(maxiter):
        new = -1.0 / (z + a1**2 * m / (c + a1 * m) + (nu - a1**2) * m / c)
        if abs(new - m) < tol:
            return new
        m = (1 - damping) * m + damping * new
    raise RuntimeError("fixed point did not converge")


def test_noise_kernel_stieltjes_matches_fixed_point():
    n, c, z = 600, 0.5, 0.3j
    a1, nu = 0.605706, 0.394294  # tanh, docs/attention_rmt.md §4.1 table
    theory = _noise_kernel_fixed_point(z, c, a1, nu)
    m = noise_kernel_stieltjes(TANH, n, int(c * n), [z], seed=1, draws=1, device=CPU)
    assert m.shape == (1, 1) and m.dtype == complex
    assert abs(m[0, 0] - theory) < 0.02, (m[0, 0], theory)


# ---------------------------------------------------------------------------------------------
# p x p route of the error curve
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p, n, rank", [(30, 80, None), (80, 30, None), (40, 60, 5)])
@pytest.mark.parametrize("estimator", ["quadratic", "trace"])
def test_pxp_and_nxn_routes_agree(p, n, rank, estimator):
    # both routes against the Cholesky solve per gamma on G (an independent route)
    g = torch.Generator().manual_seed(p * n)
    Phi = torch.randn(2, p, n, generator=g, dtype=torch.float64)
    if rank is not None:  # rank-deficient features: eigenvalues exactly 0 on both sides
        Phi = Phi[:, :, :rank] @ torch.randn(2, rank, n, generator=g, dtype=torch.float64)
    y = torch.randint(0, 2, (2, n), generator=g, dtype=torch.float64) * 2 - 1
    gam = np.logspace(-3, 1, 9)
    pxp = probe_error_curve_features(Phi, y, gam, estimator=estimator, route="pxp")
    nxn = probe_error_curve_features(Phi, y, gam, estimator=estimator, route="nxn")
    G = Phi.transpose(-1, -2) @ Phi / n
    chol = probe_error_curve(G, y, gam, estimator=estimator, solver="cholesky")
    assert pxp.shape == (2, gam.size)
    assert float((pxp - nxn).abs().max()) < 1e-11
    assert float((pxp - chol).abs().max()) < 1e-9
    auto = probe_error_curve_features(Phi, y, gam, estimator=estimator)
    assert torch.equal(auto, pxp if p < n else nxn)


def test_simulation_routes_agree_and_are_recorded():
    kw = dict(mu=[1.0], settings={"w0": {}, "a": SETTINGS["aligned"]}, draws=2, seed=3, device=CPU)
    auto = simulate_attention(TANH, 80, 40, [0.01, 0.1, 1.0], **kw)
    nxn = simulate_attention(TANH, 80, 40, [0.01, 0.1, 1.0], route="nxn", **kw)
    assert auto.meta["route"] == "pxp" and nxn.meta["route"] == "nxn"
    for name in ("w0", "a"):
        np.testing.assert_allclose(auto.errors[name], nxn.errors[name], rtol=0, atol=1e-11)
        np.testing.assert_allclose(auto.frob[name], nxn.frob[name], rtol=1e-13)
    np.testing.assert_allclose(auto.ridge, nxn.ridge, rtol=0, atol=1e-11)
    assert simulate_attention(TANH, 30, 40, [1.0], draws=1, device=CPU).meta["route"] == "nxn"
    with pytest.raises(ValueError, match="route"):
        simulate_attention(TANH, 30, 20, [1.0], draws=1, device=CPU, route="qr")


# ---------------------------------------------------------------------------------------------
# small API checks
# ---------------------------------------------------------------------------------------------


def test_mean_se_and_result_helpers():
    one = mean_se(np.array([[0.3, 0.4]]))
    assert np.all(np.isinf(one.se)) and one.n_draws == 1
    est = mean_se(np.array([1.0, 2.0, 3.0, 6.0]))
    assert est.mean == 3.0 and abs(est.se - np.std([1, 2, 3, 6], ddof=1) / 2) < 1e-15
    res = simulate_attention(TANH, 60, 30, [0.1, 1.0], mu=[1.0],
                             settings={"w0": {}, "a": SETTINGS["aligned"]}, draws=3, device=CPU)
    assert isinstance(res, AttentionMCResult) and res.n_draws == 3
    d = res.paired_difference("a", "ridge")
    assert isinstance(d, MCEstimate) and d.samples.shape == (3, 2)
    np.testing.assert_allclose(d.mean, (res.errors["a"] - res.ridge).mean(0))
    assert len(res.to_records()) == 3 * 2
    assert res.meta["diagonal"] == "zero" and res.meta["dtype"] == "float64"
    assert resolve_device("auto").type in ("cpu", "cuda") and resolve_device(CPU).type == "cpu"


def test_invalid_arguments():
    with pytest.raises(ValueError, match="diagonal=\"set\""):
        simulate_attention(TANH, 20, 10, [1.0], kappa=0.5, draws=1, device=CPU)
    with pytest.raises(ValueError, match="refused"):
        simulate_attention((t**2 - 1) / sp.sqrt(2), 40, 300, [1.0], diagonal="keep", draws=1,
                           ridge=False, device=CPU)
    with pytest.raises(ValueError):
        simulate_attention(TANH, 20, 10, [0.0], draws=1, device=CPU)
    with pytest.raises(ValueError):
        simulate_attention(TANH, 20, 10, [1.0], settings={"x": {"wk": [1.0]}}, draws=1, device=CPU)
