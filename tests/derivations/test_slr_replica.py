"""Tests of the RS system of ridge ERM for SLR (attnlimits.derivations.slr.replica; docs/slr.md §10).

Expected values come from independent sources: the spec's typed formulas (§10.2, §10.3), brute-force
numerical minimisation (scipy) of the full proximal objective, and finite differences.
"""
import numpy as np
import pytest
import sympy as sp
from scipy.optimize import minimize

from attnlimits.derivations.slr import replica as R
from attnlimits.symbolic.codegen import ModuleBuilder, load_module
from attnlimits.symbolic.result import InputError


def _load(kernels):
    mb = ModuleBuilder("test", "numpy")
    for k in kernels.values():
        mb.add_kernel(k)
    mb.add_source("import scipy.special")
    return load_module(mb.source())


def test_prior_update_matches_spec_10_2():
    pr = R.prior_update()
    mh, qh, Vh, lam = R.m_hat, R.q_hat, R.V_hat, R.lam
    assert sp.simplify(pr["V"] - 1 / (lam + Vh)) == 0
    assert sp.simplify(pr["m"] - mh / (lam + Vh)) == 0
    assert sp.simplify(pr["q"] - (mh ** 2 + qh) / (lam + Vh) ** 2) == 0


@pytest.mark.parametrize("L", [2, 3])
def test_z_elimination_matches_spec_10_3(L):
    s, wz, z_hat, e_hat, F_z = R.z_elimination(L)
    S2 = sum(x * x for x in s)
    r = R.y - sum(s[i] * wz[i] for i in range(L))
    assert sp.simplify(F_z - r ** 2 / (2 * (1 + R.V_v * S2))) == 0
    # ẑ = ω^z + V_v r/(1 + V_v‖s‖²) s and the training residual y − sᵀẑ = r/(1 + V_v‖s‖²)
    for i in range(L):
        assert sp.simplify(z_hat[i] - (wz[i] + R.V_v * r / (1 + R.V_v * S2) * s[i])) == 0
    _, _, resid = R.training_residual(L)
    assert sp.simplify(resid - r / (1 + R.V_v * S2)) == 0


def test_loss_hessian_blocks_match_spec_formulas():
    # H_zz = σσᵀ, H_χz = uσᵀ + eJᵀ, H_χχ = uuᵀ + e Σ z_i ∇²σ_i (docs/slr.md §10.3 step 5), softmax L = 2
    chi, z, sig, ell, grad, H = R.loss_hessian("softmax", 2)
    L = 2
    J = sig.jacobian(chi)
    e = sum(sig[i] * z[i] for i in range(L)) - R.y
    u = J.T * sp.Matrix(z)
    Hzz = sig * sig.T
    Hcz = u * sig.T + e * J.T
    Hcc = u * u.T + e * sum((z[i] * sp.hessian(sig[i], chi) for i in range(L)), sp.zeros(L, L))
    assert sp.simplify(H[L:, L:] - Hzz) == sp.zeros(L, L)
    assert sp.simplify(H[:L, L:] - Hcz) == sp.zeros(L, L)
    assert sp.simplify(H[:L, :L] - Hcc) == sp.zeros(L, L)


def _full_objective(sig_fn, chi, z, wchi, wz, y, Vk, Vv):
    s = sig_fn(chi)
    return 0.5 * (s @ z - y) ** 2 + ((chi - wchi) ** 2).sum() / (2 * Vk) + ((z - wz) ** 2).sum() / (2 * Vv)


def _softmax(c):
    e = np.exp(c - c.max())
    return e / e.sum()


@pytest.mark.parametrize("act,sig_fn", [
    ("linear_uncentred", lambda c: 1 + c),
    ("linear_centred", lambda c: 1 + c - c.mean()),
    ("linear_pure", lambda c: c),
])
def test_affine_exact_prox_is_global_minimum(act, sig_fn):
    L = 2
    mod = _load(R.replica_kernels(act, L))
    rng = np.random.default_rng(1)
    for _ in range(3):
        wchi, wz = rng.normal(size=L) * 1.5, rng.normal(size=L)
        y, Vk, Vv = rng.normal(), rng.uniform(0.2, 3), rng.uniform(0.1, 2)
        co = mod.affine_poly(*wchi, *wz, y, Vk, Vv)
        roots = np.roots(co)
        real = roots[np.abs(roots.imag) < 1e-8].real
        vals = [mod.affine_fields(t, *wchi, *wz, y, Vk, Vv) for t in real]
        best = min(vals, key=lambda v: v[-1])
        # brute force over (χ, z) from many starts
        f = lambda x: _full_objective(sig_fn, x[:L], x[L:], wchi, wz, y, Vk, Vv)  # noqa: E731
        bf = min((minimize(f, np.concatenate([wchi, wz]) + rng.normal(size=2 * L) * 2, method="BFGS", tol=1e-12)
                  for _ in range(12)), key=lambda r: r.fun)
        assert best[-1] == pytest.approx(bf.fun, abs=1e-8)
        assert np.allclose(best[:L], bf.x[:L], atol=1e-4)


def test_linear_uncentred_polynomial_has_degree_5():
    coeffs = R.affine_residual_polynomial("linear_uncentred", 2)[-1]
    assert len(coeffs) - 1 == 5


def test_reduced_objective_equals_full_minimum_softmax():
    L = 2
    mod = _load(R.replica_kernels("softmax", L))
    rng = np.random.default_rng(2)
    for _ in range(4):
        wchi, wz = rng.normal(size=L) * 2, rng.normal(size=L)
        y, Vk, Vv = rng.normal(), rng.uniform(0.3, 3), rng.uniform(0.1, 1)
        fr = lambda c: mod.F_value(*c, *wchi, *wz, y, Vk, Vv)[0]  # noqa: E731
        ff = lambda x: _full_objective(_softmax, x[:L], x[L:], wchi, wz, y, Vk, Vv)  # noqa: E731
        red = min((minimize(fr, wchi + rng.normal(size=L) * 3, method="BFGS", tol=1e-12) for _ in range(10)),
                  key=lambda r: r.fun)
        full = min((minimize(ff, np.concatenate([wchi, wz]) + rng.normal(size=2 * L) * 3, method="BFGS",
                             tol=1e-12) for _ in range(10)), key=lambda r: r.fun)
        assert red.fun == pytest.approx(full.fun, abs=1e-8)
        # the generated gradient and Hessian of F agree with finite differences
        c0 = wchi + rng.normal(size=L)
        out = mod.F_newton(*c0, *wchi, *wz, y, Vk, Vv)
        h = 1e-6
        for i in range(L):
            e = np.zeros(L)
            e[i] = h
            assert out[1 + i] == pytest.approx((fr(c0 + e) - fr(c0 - e)) / (2 * h), abs=1e-6)
        # ẑ from the post kernel is the z-minimiser of the full objective at χ = c0
        post = mod.post(*c0, *wz, y, Vv)
        zf = minimize(lambda z: _full_objective(_softmax, c0, z, wchi, wz, y, Vk, Vv), wz, tol=1e-12).x
        assert np.allclose(post[L:2 * L], zf, atol=1e-5)


@pytest.mark.parametrize("name", ["erf_learned", "softplus_norm_bias"])
def test_learned_scalar_refused(name):
    with pytest.raises(InputError, match="learned scalar"):
        R.replica_kernels(name, 2)


def test_length_one_refused():
    with pytest.raises(InputError):
        R.replica_kernels("softmax", 1)


def test_conjugate_forms_differ_only_by_stein():
    # with E[ξ g] = s E[∂g/∂ω] the two forms coincide: substitute gxi = s·dg
    ins, jac = R.conjugate_update("jacobian")
    _, st = R.conjugate_update("stein")
    gg, dg, gx, gxi, m, s, alpha = ins
    for k in ("m_hat", "q_hat", "V_hat"):
        assert sp.simplify(st[k].subs(gxi, s * dg) - jac[k]) == 0


def test_no_float_literals_in_kernels():
    from attnlimits.symbolic.codegen import assert_exact
    for k in R.replica_kernels("softmax", 2).values():
        assert_exact(*k.outputs)


# ---------------------------------------------------------------------------------------------
# §10.7 RS training objective and §10.8 replicon
# ---------------------------------------------------------------------------------------------

def _energy_symbols():
    ins, expr = R.rs_energy()
    return dict(zip([str(s) for s in ins], ins)), expr


def test_rs_energy_is_stationary_in_the_conjugates_at_the_prior_update():
    # ∂e/∂(m̂, q̂, V̂) = 0 solved for (m, q, V) gives §10.2 (spec's typed formulas), per block
    S, e = _energy_symbols()
    for b in ("k", "v"):
        m, q, V = S[f"m_{b}"], S[f"q_{b}"], S[f"V_{b}"]
        mh, qh, Vh = S[f"m_hat_{b}"], S[f"q_hat_{b}"], S[f"V_hat_{b}"]
        sol = sp.solve([sp.diff(e, v) for v in (mh, qh, Vh)], [m, q, V], dict=True)
        assert len(sol) == 1
        lam = S["lam"]
        assert sp.simplify(sol[0][m] - mh / (lam + Vh)) == 0
        assert sp.simplify(sol[0][V] - 1 / (lam + Vh)) == 0
        assert sp.simplify(sol[0][q] - (mh ** 2 + qh) / (lam + Vh) ** 2) == 0


def test_rs_energy_at_a_fixed_point_is_the_training_objective():
    # prior relations (§10.2) and q̂ = α E‖g‖² (§10.4): e/α = E ℓ + λ(q_k + q_v)/(2α), the objective per sample
    S, e = _energy_symbols()
    lam, al = S["lam"], S["alpha"]
    sub = {}
    for b in ("k", "v"):
        mh, qh, Vh = S[f"m_hat_{b}"], S[f"q_hat_{b}"], S[f"V_hat_{b}"]
        sub.update({S[f"m_{b}"]: mh / (lam + Vh), S[f"q_{b}"]: (mh ** 2 + qh) / (lam + Vh) ** 2,
                    S[f"V_{b}"]: 1 / (lam + Vh), S[f"gg_{b}"]: qh / al})
    target = S["train_half_sq"] + lam * (S["q_k"] + S["q_v"]) / (2 * al)
    assert sp.simplify((e - target).subs(sub)) == 0


def test_rs_energy_envelope_derivatives_give_the_stein_update():
    # with the channel term E M(ω), ω = m x* + √(q − m²) ξ, and the envelope theorem ∂M/∂ω = −g,
    # ∂M/∂V = −‖g‖²/2: stationarity in (m, q, V) gives m̂ = α(gx − (m/s) gξ), V̂ = −α gξ/s, q̂ = α gg,
    # the 'stein' form of conjugate_update
    m, q, V, mh, qh, Vh, al = sp.symbols("m q V mh qh Vh alpha", real=True)
    gx, gxi, gg = sp.symbols("gx gxi gg", real=True)
    s = sp.sqrt(q - m ** 2)
    # the coupling terms of rs_energy for one block, times α (e = coupling + α E M + prior)
    ins, e = R.rs_energy()
    S = dict(zip([str(x) for x in ins], ins))
    coupling = (e.subs({S["m_hat_v"]: 0, S["q_hat_v"]: 0, S["V_hat_v"]: 0}) - R.rs_energy()[1].subs(
        {S["m_hat_k"]: 0, S["q_hat_k"]: 0, S["V_hat_k"]: 0, S["m_hat_v"]: 0, S["q_hat_v"]: 0, S["V_hat_v"]: 0}))
    coupling = sp.expand(coupling * S["alpha"]).subs(
        {S["m_k"]: m, S["q_k"]: q, S["V_k"]: V, S["m_hat_k"]: mh, S["q_hat_k"]: qh, S["V_hat_k"]: Vh})
    coupling = coupling - R.prior_energy().subs({R.m_hat: mh, R.q_hat: qh, R.V_hat: Vh})
    assert sp.simplify(coupling - (m * mh + qh * V / 2 - Vh * q / 2)) == 0
    # derivatives of α E M through ω: dω/dm = x* − (m/s) ξ, dω/dq = ξ/(2s)
    dM_dm = -(gx - m / s * gxi)
    dM_dq = -gxi / (2 * s)
    dM_dV = -gg / 2
    sol = sp.solve([sp.diff(coupling, m) + al * dM_dm, sp.diff(coupling, q) + al * dM_dq,
                    sp.diff(coupling, V) + al * dM_dV], [mh, qh, Vh], dict=True)[0]
    (gg_, dg, gx_, gxi_, mm, ss, aa), upd = R.conjugate_update("stein")
    ref = {k: v.subs({gg_: gg, gx_: gx, gxi_: gxi, mm: m, ss: s, aa: al}) for k, v in upd.items()}
    assert sp.simplify(sol[mh] - ref["m_hat"]) == 0
    assert sp.simplify(sol[qh] - ref["q_hat"]) == 0
    assert sp.simplify(sol[Vh] - ref["V_hat"]) == 0


def test_prox_jacobian_matches_finite_differences_of_the_prox():
    # G = ∂g/∂ω against central differences of the brute-force prox (scipy), softmax L = 2
    L = 2
    chi, z, sig, ell, grad, H = R.loss_hessian("softmax", L)
    f_sig = sp.lambdify([chi], list(sig), "numpy")
    f_H = sp.lambdify([chi, z, R.y], H, "numpy")
    w_up, G = R.prox_jacobian(L)
    Vk, Vv, yv = 0.7, 0.9, 0.3
    f_G = sp.lambdify([w_up, R.V_k, R.V_v], G, "numpy")
    rng = np.random.default_rng(3)
    om = rng.normal(size=2 * L) * 0.5

    def prox(o):
        def obj(h):
            s = np.array(f_sig(h[:L]))
            return 0.5 * (s @ h[L:] - yv) ** 2 + ((h[:L] - o[:L]) ** 2).sum() / (2 * Vk) + \
                ((h[L:] - o[L:]) ** 2).sum() / (2 * Vv)
        return minimize(obj, o, method="BFGS", options={"gtol": 1e-12}).x

    h0 = prox(om)
    Hn = np.array(f_H(h0[:L], h0[L:], yv), float)
    W = np.linalg.inv(Hn + np.diag([1 / Vk] * L + [1 / Vv] * L))
    Gs = np.array(f_G([W[i, j] for i in range(2 * L) for j in range(i, 2 * L)], Vk, Vv), float)
    vinv = np.array([1 / Vk] * L + [1 / Vv] * L)
    eps = 1e-5
    Gfd = np.empty((2 * L, 2 * L))
    for j in range(2 * L):
        d = np.zeros(2 * L)
        d[j] = eps
        gp = vinv * (prox(om + d) - (om + d))
        gm = vinv * (prox(om - d) - (om - d))
        Gfd[:, j] = (gp - gm) / (2 * eps)
    assert np.allclose(Gs, Gfd, atol=1e-4), (Gs, Gfd)


def test_replicon_operator_reduces_to_the_scalar_at_condition():
    # one block only (z), L = 2, H = c² 11ᵀ on z (σ ≡ c): T_vv,vv = Σ_ℓ (G Gᵀ)_ℓℓ summed = L²c⁴/(1+LVc²)²,
    # the scalar E[(∂_ω g)²] of the square loss with feature variance Lc²
    L = 2
    ins, outs = R.replicon_operator(L)
    c, Vv = sp.Rational(3, 2), sp.Rational(2, 3)
    Vk = sp.Rational(1, 2)
    Hm = sp.zeros(2 * L, 2 * L)
    Hm[L:, L:] = c ** 2 * sp.ones(L, L)
    W = (Hm + sp.diag(*([1 / Vk] * L + [1 / Vv] * L))).inv()
    vals = {ins[k]: W[i, j] for k, (i, j) in enumerate((i, j) for i in range(2 * L) for j in range(i, 2 * L))}
    vals.update({R.V_k: Vk, R.V_v: Vv})
    K = sp.Matrix(3, 3, [sp.nsimplify(o.subs(vals)) for o in outs])
    assert sp.simplify(K[2, 2] - L ** 2 * c ** 4 / (1 + L * Vv * c ** 2) ** 2) == 0
    assert all(sp.simplify(K[i, j]) == 0 for i in range(3) for j in range(3) if (i, j) != (2, 2))
    assert sp.simplify(R.replicon_prior() - 1 / (R.lam + R.V_hat) ** 2) == 0
