"""The max-SLR BO system (docs/slr.md §11, max-SLR): derived pieces against independent forms."""
import math

import mpmath
import numpy as np
import pytest
import scipy.special
import sympy as sp

from attnlimits.derivations.slr import bayes_optimal as B
from attnlimits.derivations.slr import population as P


@pytest.mark.parametrize("L", [2, pytest.param(3, marks=pytest.mark.slow)])
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
    rng = np.random.default_rng(0)
    for _ in range(4):
        a, b = sp.Rational(int(rng.integers(-20, 20)), 10), sp.Rational(int(rng.integers(-20, 20)), 10)
        V = sp.Rational(int(rng.integers(1, 20)), 20)
        val = closed.subs({w1: a, w2: b, B.V_k: V}).evalf(30)
        with mpmath.workdps(30):
            am, bm, sV = mpmath.mpf(a.p) / a.q, mpmath.mpf(b.p) / b.q, mpmath.sqrt(mpmath.mpf(V.p) / V.q)
            ref = mpmath.quad(lambda t: mpmath.npdf(t, am, sV) * mpmath.ncdf((t - bm) / sV), [-mpmath.inf, am, mpmath.inf])
            assert abs(mpmath.mpf(str(val)) - ref) < mpmath.mpf(10) ** -25


def _inner_numeric(L, finite, n):
    """lambdified inner integrands summed on an n-node Gauss-Hermite rule (per dimension)."""
    from attnlimits.symbolic.gaussian import gauss_hermite_rule

    ox = B.omega_chi(L)
    uu = B.inner_variables(L, finite)
    args = [*ox, B.V_k, *([B.nu] if finite else []), *uu]
    f = sp.lambdify(args, B.max_inner_outputs(L, finite), [{"ndtr": scipy.special.ndtr}, "numpy"])
    d = len(uu)
    x, w = gauss_hermite_rule(d, n) if d else (np.zeros((1, 0)), np.ones(1))
    x = np.asarray(x, float).reshape(-1, d)

    def p(om, V, nu=None):
        extra = [nu] if finite else []
        out = f(*om, V, *extra, *[x[:, j] for j in range(d)])
        return np.array([np.sum(np.broadcast_to(o, w.shape) * w) for o in out])

    return p


@pytest.mark.slow
@pytest.mark.parametrize("finite,nu", [(False, math.inf), (True, 2.0)])
def test_inner_rule_against_monte_carlo_L3(finite, nu):
    """p_eps = E_{h~N(omega, V I)} softmax(nu h)_eps (argmax at nu = inf) against direct sampling, 4 SE;
    sum_eps p_eps = 1; heat equation dp/dV = (1/2) Laplacian p (inner-rule derivatives); dP against
    central differences of the same rule."""
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
    # heat equation: holds for the exact integral; on the rule the residual is the rule error (1e-7 at
    # n = 32, finite nu), so it is checked on a 64-node rule, where that error is below 1e-9
    fine = _inner_numeric(L, finite, 64)(om, V, nu)
    assert np.allclose(fine[-L:], 0.5 * fine[L + L * L:L + 2 * L * L].reshape(L, L).sum(1), atol=1e-8)
    # first derivatives against central differences of the same rule
    for l in range(L):
        d = np.zeros(L)
        d[l] = 1e-5
        fd = (p(om + d, V, nu)[:L] - p(om - d, V, nu)[:L]) / 2e-5
        assert np.allclose(dP[:, l], fd, atol=1e-7)


def test_finite_nu_L2_inner_rule_against_mpmath():
    """E_u sigmoid(nu (w1 - w2) + nu sqrt(2V) u) by the derived L = 2 integrand on Gauss-Hermite vs mpmath
    quad: geometric convergence (2.5e-6 at the default 24 nodes, V = 0.6; below 1e-10 at 80)."""
    om, V, nu = np.array([0.4, -0.3]), 0.6, 2.0
    with mpmath.workdps(30):
        ref = float(mpmath.quad(lambda u: mpmath.npdf(u) / (1 + mpmath.exp(-nu * (om[0] - om[1]
                                                                                 + mpmath.sqrt(2 * V) * u))),
                                mpmath.linspace(-12, 12, 25)))
    e24 = abs(_inner_numeric(2, True, 24)(om, V, nu)[0] - ref)
    e80 = abs(_inner_numeric(2, True, 80)(om, V, nu)[0] - ref)
    assert e24 < 1e-5 and e80 < 1e-10 and e80 < e24 / 1000


def test_max_test_error_formula():
    e = B.max_test_error()
    assert sp.simplify(e - (1 - 2 * B.q_v * P.A_sym + B.q_v * P.B_sym)) == 0


def test_max_ibp_integrand_is_the_weighted_square_of_g_out():
    """ibp_k = W sum_l (g^chi_l)^2 with W = L p_1 and, in the scaled symbols, g^chi_l = sum_eps u_eps_l / sum_eps t_eps
    (the derivative of log sum_eps p_eps e^{B_eps}); g^z_l = t_l (y - omz_l) / (S sum t)."""
    L = 2
    ik, iv, _ = B.max_stationarity(L, "ibp")
    Ps, _, _, _ = B.max_location_symbols(L)
    t, u, _, _ = B.max_scaled_symbols(L)
    var = B.sample_variables(L)
    rng = np.random.default_rng(2)
    x = rng.standard_normal(2 * L + 1)
    vals = {v: float(a) for v, a in zip(var, x)}
    qk, qv, dl = 0.6, 0.7, 0.1
    vals.update({B.q_k: qk, B.q_v: qv, B.Delta: dl, B.M: 0.0, Ps[0]: 0.4})
    tv = rng.uniform(0.1, 0.9, L)
    uv = rng.normal(size=(L, L))
    vals.update({t[e]: float(tv[e]) for e in range(L)})
    vals.update({u[e][l]: float(uv[e, l]) for e in range(L) for l in range(L)})
    gx = uv.sum(0) / tv.sum()
    assert float(ik.subs(vals)) == pytest.approx(L * 0.4 * float((gx ** 2).sum()), rel=1e-12)
    S = 1 - qv + dl ** 2
    h, n = x[L:2 * L], x[-1]
    omz = math.sqrt(qv) * h
    y = omz[0] + math.sqrt(S) * n
    gz = tv * (y - omz) / (S * tv.sum())
    assert float(iv.subs(vals)) == pytest.approx(L * 0.4 * float((gz ** 2).sum()), rel=1e-12)


def test_max_status_states_what_is_missing():
    s = B.MAX_SLR_STATUS
    assert "max-SLR" in s and "Not checked" in s
