"""The max-SLR BO system (docs/slr.md §11, max-SLR): derived pieces against independent forms."""
import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from derivations.slr import bayes_optimal as B
from derivations.slr import population as P


@pytest.mark.parametrize("L", [2, 3])
def test_max_channel_is_normalised(L):
    # §3.3: the marginal of X is Gaussian, so P_out integrates to one in y (no prior term on k)
    assert B.max_channel_normalisation(L) == 1


def test_helmert_basis():
    for L in (2, 3, 4):
        U = B.helmert_basis(L)
        assert sp.simplify(U.T * U - sp.eye(L - 1)) == sp.zeros(L - 1, L - 1)
        assert sp.simplify(U * U.T - (sp.eye(L) - sp.ones(L, L) / L)) == sp.zeros(L, L)


def test_L2_argmax_closed_form_against_the_spec_integral():
    """Phi((w1 - w2)/sqrt(2V)) against mpmath quadrature of §11's 1-D integral int N(t; w1, V) Phi((t - w2)/sqrt V) dt."""
    w1, w2, closed = B.max_argmax_probability_L2()
    f = sp.lambdify((w1, w2, B.V_k), closed.rewrite(sp.erfc), "mpmath")
    rng = np.random.default_rng(0)
    for _ in range(4):
        a, b, V = float(rng.normal()), float(rng.normal()), float(rng.uniform(0.05, 1.0))
        with mpmath.workdps(30):
            ref = mpmath.quad(lambda t: mpmath.npdf(t, a, mpmath.sqrt(V)) * mpmath.ncdf((t - b) / mpmath.sqrt(V)),
                              [-mpmath.inf, a, mpmath.inf])
            assert abs(f(a, b, V) - ref) < mpmath.mpf(10) ** -25


def _inner_numeric(L, finite, n):
    """lambdified inner integrands summed on an n-node Gauss-Hermite rule (per dimension)."""
    from symbolic.gaussian import gauss_hermite_rule

    ox = B.omega_chi(L)
    uu = B.inner_variables(L, finite)
    args = [*ox, B.V_k, *([B.nu] if finite else []), *uu]
    f = sp.lambdify(args, B.max_inner_outputs(L, finite), "numpy")
    d = len(uu)
    x, w = gauss_hermite_rule(d, n) if d else (np.zeros((1, 0)), np.ones(1))
    x = np.asarray(x, float).reshape(-1, d)

    def p(om, V, nu=None):
        extra = [nu] if finite else []
        out = f(*om, V, *extra, *[x[:, j] for j in range(d)])
        return np.array([np.sum(np.broadcast_to(o, w.shape) * w) for o in out])

    return p


@pytest.mark.parametrize("finite,nu", [(False, math.inf), (True, 2.0)])
def test_inner_rule_against_monte_carlo_L3(finite, nu):
    """p_eps = E_{h~N(omega, V I)} softmax(nu h)_eps (argmax at nu = inf) against direct sampling, 4 SE;
    sum_eps p_eps = 1; heat equation dp/dV = (1/2) Laplacian p (inner-rule derivatives)."""
    L = 3
    p = _inner_numeric(L, finite, 32)
    om, V = np.array([0.3, -0.2, 0.1]), 0.4
    out = p(om, V, nu)
    pe, dP, ddP, dV = out[:L], out[L:L + L * L].reshape(L, L), out[L + L * L:L + 2 * L * L].reshape(L, L), out[-L:]
    rng = np.random.default_rng(1)
    h = om + math.sqrt(V) * rng.standard_normal((400_000, L))
    if finite:
        e = np.exp(nu * (h - h.max(1, keepdims=True)))
        s = e / e.sum(1, keepdims=True)
    else:
        s = (h == h.max(1, keepdims=True)).astype(float)
    mc, se = s.mean(0), s.std(0) / math.sqrt(len(s))
    k = 4.0
    assert np.all(np.abs(pe - mc) <= k * se), (pe, mc, se)
    assert abs(pe.sum() - 1) < 1e-10
    assert np.allclose(dV, 0.5 * ddP.sum(1), atol=1e-8)
    # first derivatives against central differences of the same rule
    for l in range(L):
        d = np.zeros(L)
        d[l] = 1e-5
        fd = (p(om + d, V, nu)[:L] - p(om - d, V, nu)[:L]) / 2e-5
        assert np.allclose(dP[:, l], fd, atol=1e-7)


def test_finite_nu_L2_inner_rule_against_mpmath():
    """E_u sigmoid(nu (w1 - w2) + nu sqrt(2V) u) by the derived L = 2 integrand on Gauss-Hermite vs mpmath quad."""
    p = _inner_numeric(2, True, 40)
    om, V, nu = np.array([0.4, -0.3]), 0.6, 2.0
    with mpmath.workdps(30):
        ref = mpmath.quad(lambda u: mpmath.npdf(u) / (1 + mpmath.exp(-nu * (om[0] - om[1] + mpmath.sqrt(2 * V) * u))),
                          [-mpmath.inf, 0, mpmath.inf])
    assert abs(p(om, V, nu)[0] - float(ref)) < 1e-10


def test_max_test_error_formula():
    e = B.max_test_error()
    assert sp.simplify(e - (1 - 2 * B.q_v * P.A_sym + B.q_v * P.B_sym)) == 0


def test_max_ibp_integrand_is_the_weighted_square_of_g_out():
    # ibp_k = W sum_l (g^chi_l)^2 with W = L p_1 at the sample; checked at a numeric point against
    # the channel functions evaluated directly at the mapped fields
    L = 2
    ik, iv, _ = B.max_stationarity(L, "ibp")
    gx, gz, _, _ = B.max_channel_functions(L)
    Ps, dP, _, dVP = B.max_location_symbols(L)
    var = B.sample_variables(L)
    sub = B.max_sample_map(L)
    rng = np.random.default_rng(2)
    vals = {v: float(t) for v, t in zip(var, rng.standard_normal(2 * L + 1))}
    vals.update({B.q_k: 0.6, B.q_v: 0.7, B.Delta: 0.1, B.M: 0.0})
    vals.update({s: float(rng.uniform(0.1, 0.9)) for s in Ps})
    vals.update({s: float(rng.normal()) for r in dP for s in r})
    gsub = {k: v.subs(vals) for k, v in sub.items()}
    g2 = sum((g.subs(gsub).subs(vals)) ** 2 for g in gx)
    assert float(ik.subs(vals)) == pytest.approx(float(L * vals[Ps[0]] * g2), rel=1e-12)


def test_max_status_states_what_is_missing():
    s = B.MAX_SLR_STATUS
    assert "max-SLR" in s and "not" in s
