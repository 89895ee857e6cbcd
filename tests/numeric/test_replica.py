"""Tests of the RS fixed-point solver (attnlimits.numeric.slr.rs; docs/slr.md §10, §14 R5).

Kernels are generated from attnlimits.derivations.slr.replica (tests may import every layer).  Expected values:
docs/slr.md §14 R5 (stated ±0.003, overlaps within 2 %), the §8 closed forms and the Bayes risk (α → ∞ with a
fitted log–log slope), Stein's identity (k = 4 replicate standard errors).
"""
import math

import numpy as np
import pytest
import sympy as sp

from attnlimits.derivations.slr import linear_closed_form
from attnlimits.derivations.slr import replica as RD
from attnlimits.numeric import ConvergenceError
from attnlimits.numeric.slr import rs as NR
from attnlimits.symbolic.result import InputError
from attnlimits.numeric.slr.rs import map as RM
from attnlimits.numeric.slr.rs import prox as P
from attnlimits.numeric.slr.rs import rule as RR


def _kern(act, L=2):
    return NR.compile_rs_kernels(act, {L: RD.replica_kernels(act, L)})


def _pop_linear(variant, L, nu):
    e = linear_closed_form(variant, "spiked")["risk"]
    return float(e.subs({sp.Symbol("L", positive=True, integer=True): L, sp.Symbol("nu", positive=True): nu}))


def test_frozen_map_is_deterministic():
    kern = _kern("softmax")
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=256, replicates=2, seed=3)
    x = NR.informed_start("spiked", 2.0)
    g1, _ = NR.rs_map(kern, rules, x, 4.0, 0.1, 0.1)
    NR.rs_map(kern, rules, x * 1.1, 4.0, 0.1, 0.1)  # an unrelated call in between: no state is carried
    g2, _ = NR.rs_map(kern, rules, x, 4.0, 0.1, 0.1)
    assert np.array_equal(g1, g2)


@pytest.mark.parametrize("act,lam", [("softmax", 1.0), ("linear_uncentred", 1.0)])
def test_stein_and_jacobian_forms_agree(act, lam):
    # §10.4: V̂ and m̂ written with ∂g/∂ω (Jacobian) and with E[ξg]/s (before Stein's lemma)
    kern = _kern(act)
    R = 8
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=512, replicates=R, seed=5)
    x = np.array([1.0, 1.5, 1.5, 0.9, 1.0, 0.4])
    _, info = NR.rs_map(kern, rules, x, 4.0, lam, 0.1)
    diffs = []
    for r in range(R):
        _, hj = RM.update_from_averages(kern, info["averages"][r], x, 4.0, lam, "jacobian")
        _, hs = RM.update_from_averages(kern, info["averages"][r], x, 4.0, lam, "stein")
        diffs.append([hj[k] - hs[k] for k in ("m_hat_k", "V_hat_k", "m_hat_v", "V_hat_v")])
    diffs = np.array(diffs)
    mean, se = diffs.mean(axis=0), diffs.std(axis=0, ddof=1) / math.sqrt(R)
    k = 4
    assert np.all(np.abs(mean) <= k * se + 1e-12), (mean, se)


def _channel_free_energy(kern, rule, x, Delta):
    """Per-replicate mean of the Moreau envelope M(ω) = min of the prox objective (generated F_value)
    on the frozen rule: the channel free energy Φ whose derivatives the conjugates are."""
    m_k, q_k, V_k, m_v, q_v, V_v = x
    wchi = m_k * rule.chistar + math.sqrt(q_k - m_k ** 2) * rule.xi
    wz = m_v * rule.zstar + math.sqrt(q_v - m_v ** 2) * rule.xip
    y = rule.zstar[np.arange(rule.n), rule.eps] + Delta * rule.xi0
    mod = kern.modules[rule.L]
    if kern.affine:
        chi, _ = P.prox_affine(mod, wchi, wz, y, V_k, V_v)
    else:
        chi, _ = P.prox_newton(mod, wchi, wz, y, V_k, V_v)
    M = mod.F_value(*P.columns(chi), *P.columns(wchi), *P.columns(wz), y, V_k, V_v)[0]
    return np.broadcast_to(M, (rule.n,)).reshape(rule.replicates, rule.points).mean(axis=1)


def test_stein_form_is_the_derivative_of_the_channel_free_energy():
    """The conjugates are derivatives of Φ = E M(ω) (attnlimits.derivations.slr.replica.conjugate_update):
    m̂_b = −α ∂Φ/∂m_b, V̂_b = 2α ∂Φ/∂q_b, q̂_b = −2α ∂Φ/∂V_b.  Checked by central differences of Φ
    (independent: only the prox objective's value, no g, no Jacobian) on the frozen rule, per
    replicate, at a point where 0.6 % of the samples have two prox minima (linear_centred: exact
    polynomial prox; V_k = 3.35).  The Stein form agrees to the differences' O(h²) error (measured
    ≤ 2e-7 at h = 1e-4; tolerance 1e-5); the Jacobian form (Stein's lemma with the a.e. derivative
    of g) does not: its V̂ differs by 7 % (more than k = 4 replicate SEs), the jumps of g it misses."""
    kern = _kern("linear_centred")
    R, alpha, lam, Delta, h = 8, 4.0, 0.1, 0.1, 1e-4
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=4096, replicates=R, seed=5)
    x = np.array([0.8317, 1.4184, 3.3522, 1.0642, 1.1941, 0.5523])
    _, info = NR.rs_map(kern, rules, x, alpha, lam, Delta)
    stein = [RM.update_from_averages(kern, a, x, alpha, lam, "stein")[1] for a in info["averages"]]
    jac = [RM.update_from_averages(kern, a, x, alpha, lam, "jacobian")[1] for a in info["averages"]]

    def dphi(i):
        e = np.zeros(6)
        e[i] = h
        return (_channel_free_energy(kern, rules[0], x + e, Delta)
                - _channel_free_energy(kern, rules[0], x - e, Delta)) / (2 * h)

    fd = {"m_hat_k": -alpha * dphi(0), "V_hat_k": 2 * alpha * dphi(1), "q_hat_k": -2 * alpha * dphi(2),
          "m_hat_v": -alpha * dphi(3), "V_hat_v": 2 * alpha * dphi(4), "q_hat_v": -2 * alpha * dphi(5)}
    for key, f in fd.items():
        st = np.array([hs[key] for hs in stein])
        assert np.allclose(st, f, rtol=1e-5, atol=1e-5), (key, st, f)
    k = 4
    for key in ("V_hat_k", "V_hat_v"):
        d = np.array([hj[key] for hj in jac]) - fd[key]
        assert abs(d.mean()) > k * d.std(ddof=1) / math.sqrt(R), (key, d.mean(), d.std(ddof=1))


def test_alpha_to_infinity_linear_rate_quick():
    # E_test → the §8 population optimum at rate 1/α (fitted log–log slope), linear_centred spiked L = 2, ν = 2
    kern = _kern("linear_centred")
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=256, replicates=4, seed=0)
    alphas = [25.0, 100.0]
    fps = NR.rs_learning_curve(kern, rules, alphas, 0.1, 0.1, model="spiked", nu=2.0, tol=1e-8)
    pop = _pop_linear("linear_centred", 2, 2)
    E = np.array([f.E_test for f in fps])
    assert np.all(E > pop)
    slope = np.polyfit(np.log(alphas), np.log(E - pop), 1)[0]
    assert -1.3 < slope < -0.7, slope


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["linear_uncentred", "linear_centred"])
def test_alpha_to_infinity_linear_rate(variant):
    kern = _kern(variant)
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=1024, replicates=4, seed=0)
    alphas = [25.0, 50.0, 100.0, 200.0]
    fps = NR.rs_learning_curve(kern, rules, alphas, 0.1, 0.1, model="spiked", nu=2.0, tol=1e-8)
    pop = _pop_linear(variant, 2, 2)
    E = np.array([f.E_test for f in fps])
    slope = np.polyfit(np.log(alphas), np.log(E - pop), 1)[0]
    assert -1.15 < slope < -0.85, slope  # measured −1.02 (uncentred), −0.995 (centred)


@pytest.mark.slow
def test_alpha_to_infinity_softmax_tends_to_bayes():
    from attnlimits.verify.slr.bayes_optimal import bayes_risk_of as bayes_risk

    EB = float(bayes_risk("spiked", 2.0, 2))
    kern = _kern("softmax")
    # 4 × 4096 points: at large α (small V_k, V_v) the 4 × 1024 rule is too coarse — its fixed point
    # at α = 20 lies 0.008 (≈ 5 SE) above the 4 × 4096 one, and near α = 40–50 its frozen map is rough
    # with a near-marginal mode (spectral radius → 1), where no solver converges (measured)
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=4096, replicates=4, seed=0)
    alphas = [20.0, 40.0, 80.0]
    fps = NR.rs_learning_curve(kern, rules, alphas, 0.1, 0.1, model="spiked", nu=2.0, tol=1e-8)
    E = np.array([f.E_test for f in fps])
    print("E_B", EB, "E_test", E, "SE", [f.E_test_error for f in fps], "stability", [f.stability for f in fps])
    assert np.all(E > EB) and np.all(np.diff(E) < 0)
    assert all(f.stability < 1 for f in fps)
    slope = np.polyfit(np.log(alphas), np.log(E - EB), 1)[0]
    print("fitted slope", slope)
    assert -1.3 < slope < -0.7, slope  # measured −0.86 (local −0.74 on 20–40, −0.99 on 40–80)


# docs/slr.md §14 R5: softmax, spiked, L = 2, ν = 2, Δ = 0.1, λ = 0.1
R5 = {4.0: (0.378, dict(m_k=0.833, q_k=1.41, m_v=1.064, q_v=1.194, V_k=3.33, V_v=0.55)),
      10.0: (0.319, dict(m_k=1.27, q_k=2.52, m_v=1.042, q_v=1.108, V_k=1.60, V_v=0.158))}


#: R5's order parameters that the Stein form (the default) does not reproduce within 2 %: at α = 10
#: the reference agrees with the Jacobian form (q_k 2.526, V_k 1.598 on 4×16384 seed 0), i.e. it was
#: made with the form that misses the jumps of g where the prox switches (docs/slr.md §10.6); the
#: Stein form gives q_k 2.586 ± 0.009, V_k 1.647 ± 0.010 (seed 1: 2.572, 1.633): +2.3–2.9 %.
#: Training is the independent referee: L-BFGS ERM at α = 10, 8 seeds, gives q_k 2.586 ± 0.025 (D = 1000)
#: and 2.588 ± 0.019 (D = 2000): on the Stein form's value, 3 SE above the Jacobian form's and
#: R5's (R5's own ERM column: q_k ≈ 2.6).
R5_FORM_BIASED = {10.0: ("q_k", "V_k")}


@pytest.mark.slow
@pytest.mark.parametrize("form", ["stein", "jacobian"])
def test_spec_R5(form):
    # 4 × 16384: on 4 × 4096 the integration error (3-dof SE ≈ 0.001–0.002) is too large for the stated
    # ± 0.003 — measured α = 10, seeds 0/1: Stein 0.3229/0.3201, Jacobian 0.3207/0.3238 at 4 × 4096, Stein
    # 0.3203/0.3208 at 4 × 16384
    kern = _kern("softmax")
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=16384, replicates=4, seed=0)
    fps = NR.rs_learning_curve(kern, rules, sorted(R5), 0.1, 0.1, model="spiked", nu=2.0, form=form)
    for fp in fps:
        E, ov = R5[fp.alpha]
        print(f"R5 {form} alpha={fp.alpha:g}: E_test={fp.E_test:.5f} ± {fp.E_test_error:.1e}", fp.values,
              fp.stability, fp.pd_fail_fraction, fp.multi_minima_fraction, f"{fp.seconds:.1f}s")
        assert abs(fp.E_test - E) <= 0.003, (fp.alpha, fp.E_test)  # stated ± 0.003
        for k, v in ov.items():
            if form == "stein" and k in R5_FORM_BIASED.get(fp.alpha, ()):
                # above the Jacobian-form reference by the form's difference (more than 3 SE), not within 2 %
                assert fp.values[k] - v > 3 * fp.errors[k], (fp.alpha, k, fp.values[k], fp.errors[k])
                continue
            assert fp.values[k] == pytest.approx(v, rel=0.02), (fp.alpha, k, fp.values[k])
        assert fp.pd_fail_fraction < 0.01
        assert fp.stability < 1


def test_nonconvergence_raises():
    kern = _kern("linear_uncentred")
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=128, replicates=2, seed=0)
    with pytest.raises(ConvergenceError, match="did not converge"):
        NR.rs_fixed_point(kern, rules, 4.0, 0.1, 0.1, tol=0.0, accept=0.0, accept_noise=0.0, tol_noise=0.0,
                          coarse=False)


def test_result_fields_and_error_estimate():
    kern = _kern("linear_uncentred")
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=256, replicates=4, seed=1)
    fp = NR.rs_fixed_point(kern, rules, 10.0, 1.0, 0.1, tol_noise=0.0)
    row = fp.as_row()
    for k in ("E_test", "E_test_error", "training_loss", "m_k", "q_k", "V_k", "m_v", "q_v", "V_v", "stability",
              "pd_fail_fraction", "method", "iterations", "m_hat_k", "V_hat_v"):
        assert k in row
    assert fp.residual <= 1e-9 and 0 < fp.E_test_error < 0.05
    assert all(np.isfinite(v) for v in fp.values.values())


def _prox_inputs(act, L, x, points=256, seed=0):
    kern = _kern(act, L)
    rule = NR.make_rule("spiked", 2.0, [(L, 1.0)], points=points, replicates=2, seed=seed)[0]
    m_k, q_k, V_k, m_v, q_v, V_v = x
    wchi = m_k * rule.chistar + math.sqrt(q_k - m_k ** 2) * rule.xi
    wz = m_v * rule.zstar + math.sqrt(q_v - m_v ** 2) * rule.xip
    y = rule.zstar[:, 0] + 0.1 * rule.xi0
    return kern.modules[L], wchi, wz, y, V_k, V_v


@pytest.mark.parametrize("L", [2, 3])
def test_closed_form_newton_direction_matches_lu(L):
    # the adjugate solve of the prox's Newton step against numpy's LU on random symmetric matrices
    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, L, L))
    H = A + A.transpose(0, 2, 1) + 0.5 * np.eye(L)
    g = rng.standard_normal((50, L))
    Hup = [H[:, i, j] for i in range(L) for j in range(i, L)]
    d = P._newton_direction(g.T.copy(), Hup, L).T
    ref = -np.linalg.solve(H, g[..., None])[..., 0]
    assert np.allclose(d, ref, rtol=1e-9, atol=1e-9)
    pd = P._posdef(Hup, L)
    assert np.array_equal(pd, np.linalg.eigvalsh(H)[:, 0] > 0)


@pytest.mark.parametrize("L,x", [(2, (0.833, 1.41, 3.33, 1.064, 1.194, 0.55)), (2, (0.5, 0.4, 6.0, 1.0, 1.3, 1.5)),
                                 (3, (0.833, 1.41, 3.33, 1.064, 1.194, 0.55))])
def test_merging_starts_does_not_change_the_prox(L, x):
    # merging coinciding starts only saves work: same minima (to the Newton tolerance), same diagnostics
    args = _prox_inputs("softmax", L, x)
    c0, d0 = P.prox_newton(*args, dedup_tol=0.0)
    stats = {}
    c1, d1 = P.prox_newton(*args, stats=stats)
    assert stats["dedup"] > 0
    assert np.abs(c0 - c1).max() < 1e-6
    for k in ("multi_minima_fraction", "ambiguous_fraction", "unconverged_fraction"):
        assert d0[k] == d1[k], k
    # the minimum found is a stationary point of F with the lowest F of every start ("all" candidates)
    c2, _ = P.prox_newton(*args, keep_starts="all", dedup_tol=0.0)
    (F1,) = args[0].F_value(*c1.T, *args[1].T, *args[2].T, args[3], args[4], args[5])
    (F2,) = args[0].F_value(*c2.T, *args[1].T, *args[2].T, args[3], args[4], args[5])
    assert np.mean(F1 > F2 + 1e-9) < 0.01


def test_surrogate_equals_map_at_its_anchor():
    # the piece walk's selection-frozen surrogate coincides with the frozen map at the anchor point
    kern = _kern("softmax")
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=256, replicates=2, seed=3)
    x = np.array([0.833, 1.41, 3.33, 1.064, 1.194, 0.55])
    g, info = NR.rs_map(kern, rules, x, 4.0, 0.1, 0.1)
    gs, _ = NR.rs_map(kern, rules, x, 4.0, 0.1, 0.1, anchor=[d["offset"] for d in info["diags"]])
    assert np.allclose(g, gs, rtol=1e-9, atol=1e-12)


def test_two_step_surrogate_is_the_surrogate_near_its_anchor():
    """The walk's first round evaluates the surrogate with two plain Newton steps from the anchored
    minima: the converged surrogate's value at the anchor to the prox tolerance (the converged prox
    stops once ‖∇F‖ ≤ 1e-9·(1 + 1/V_k), the two steps go further: measured 5e-10 here; bound 1e-8)
    and, a relative 1e-3 away, to about Δ⁴ (measured 2.6e-8 here, 1e-9 – 4e-8 at 4×8192 along the
    benchmark curve; bound 1e-6)."""
    kern = _kern("softmax")
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=1024, replicates=2, seed=3)
    x = np.array([0.833, 1.41, 3.33, 1.064, 1.194, 0.55])
    _, info = NR.rs_map(kern, rules, x, 4.0, 0.1, 0.1)
    offs = [d["offset"] for d in info["diags"]]
    for dx, bound in ((0.0, 1e-8), (1e-3, 1e-6)):
        xp = x * (1 + dx * np.array([1, -1, 1, 1, -1, 1]))
        gf, _ = NR.rs_map(kern, rules, xp, 4.0, 0.1, 0.1, anchor=offs)
        g2, _ = NR.rs_map(kern, rules, xp, 4.0, 0.1, 0.1, anchor=offs, newton_steps=2)
        assert RR.residual(g2, gf) <= bound, (dx, RR.residual(g2, gf))


@pytest.mark.parametrize("act", ["softmax", "erf_fixed"])
def test_one_step_surrogate_jacobian_matches_central_differences(act):
    """The solver's Jacobian (forward differences, h = 1e-6, of the surrogate whose prox is one Newton
    step from the anchored minima) against central differences (h = 1e-4) of the fully converged
    surrogate: truncation O(h²) ≈ 1e-8 and convergence noise ≈ gtol/h ≈ 1e-5 relative, so they must
    agree to 1e-4 of the largest entry (measured here 3e-6 and 2.6e-5; along the benchmark curve at
    4×8192 7e-6 – 3e-5, where forward differences of the converged surrogate were off by 5e-4 – 2e-3,
    its tolerance over h)."""
    kern = _kern(act)
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=1024, replicates=2, seed=3)
    x = np.array([0.833, 1.41, 3.33, 1.064, 1.194, 0.55])
    _, info = NR.rs_map(kern, rules, x, 4.0, 0.1, 0.1)
    offs = [d["offset"] for d in info["diags"]]

    def G1(v):
        return NR.rs_map(kern, rules, v, 4.0, 0.1, 0.1, anchor=offs, newton_steps=1)

    g1, i1 = G1(x)
    J, _ = RM.fd_jacobian_with_averages(G1, x, g1, i1["averages"].mean(axis=0))
    Jr = np.empty_like(J)
    for j in range(x.size):
        h = 1e-4 * max(1.0, abs(x[j]))
        xp, xm = x.copy(), x.copy()
        xp[j] += h
        xm[j] -= h
        Jr[:, j] = (NR.rs_map(kern, rules, xp, 4.0, 0.1, 0.1, anchor=offs)[0]
                    - NR.rs_map(kern, rules, xm, 4.0, 0.1, 0.1, anchor=offs)[0]) / (2 * h)
    assert np.abs(J - Jr).max() <= 1e-4 * np.abs(Jr).max(), np.abs(J - Jr).max() / np.abs(Jr).max()


def test_fixed_point_is_reproducible():
    # same input -> bitwise the same output (no state carried between calls)
    kern = _kern("softmax")
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=128, replicates=2, seed=2)
    a = NR.rs_fixed_point(kern, rules, 4.0, 0.1, 0.1)
    b = NR.rs_fixed_point(kern, rules, 4.0, 0.1, 0.1)
    assert a.values == b.values and a.E_test == b.E_test and a.E_test_error == b.E_test_error
    assert a.evaluations == b.evaluations


@pytest.mark.parametrize("m", [2, 4, 6, 10])
def test_batched_pd_check_and_inverse_diagonal(m):
    """The channel's one Gauss–Jordan elimination against eigvalsh (PD test) and LU inverse."""
    from attnlimits.numeric.slr.rs.prox import pd_and_inverse_diagonal as _pd_and_inverse_diagonal

    rng = np.random.default_rng(m)
    B = rng.standard_normal((4000, m, m))
    # a mixture of positive definite and indefinite symmetric matrices
    P = B @ B.transpose(0, 2, 1) / m + rng.standard_normal((4000, 1, 1)) * 0.4 * np.eye(m)
    pd, diag = _pd_and_inverse_diagonal(P)
    assert 0.2 < pd.mean() < 0.9
    assert np.array_equal(pd, np.linalg.eigvalsh(P)[:, 0] > 0)
    ref = np.diagonal(np.linalg.inv(P), axis1=1, axis2=2)
    assert np.allclose(diag, ref, rtol=1e-9, atol=1e-12 * np.abs(ref).max())
    # the packed form the channel passes: the upper triangle of P − diag(shift), and shift
    shift = rng.uniform(0.5, 2.0, m)
    Q = P - np.diag(shift)
    pd2, diag2 = _pd_and_inverse_diagonal([Q[:, i, j] for i in range(m) for j in range(i, m)], shift)
    assert np.array_equal(pd2, pd)
    assert np.allclose(diag2, ref, rtol=1e-9, atol=1e-12 * np.abs(ref).max())


def test_partial_maps_reach_the_same_fixed_point(monkeypatch):
    """On a rough map (softmax spiked L = 2, λ = 0.1, α = 1.946 → 1.395 → 1.0 by continuation on
    4×2048) the piece walk re-anchors on partial maps (the multistart only on the samples with
    several minima) once samples switch; every decision is taken on the map, so the answer is a
    fixed point of the same map: equal to the one without partial maps within 0.01 of its standard
    error (both are fixed points to the noise tolerance of a map that jumps; measured 5e-8 apart in
    E_test, SE 2e-3)."""
    kern = _kern("softmax")
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=2048, replicates=4, seed=0)
    calls = {"rescreen": 0}
    orig = NR.rs_map

    def counting(*a, **k):
        calls["rescreen"] += k.get("rescreen") is not None
        return orig(*a, **k)

    monkeypatch.setattr(RM, "rs_map", counting)  # FrozenRSMap.evaluate looks it up in its module
    out = {}
    for pm in (False, True):
        fp = None
        for a in (1.946, 1.395, 1.0):
            fp = NR.rs_fixed_point(kern, rules, a, 0.1, 0.1, warm=fp, partial_maps=pm)
        out[pm] = fp
    assert calls["rescreen"] > 0
    assert abs(out[True].E_test - out[False].E_test) <= 0.01 * out[False].E_test_error
    for k in NR.UNKNOWNS:
        assert abs(out[True].values[k] - out[False].values[k]) <= 0.01 * out[False].errors[k], k


def test_pilot_start_reaches_the_same_fixed_point():
    """The multilevel start (fixed point on a nested prefix rule, then chord steps with its
    Jacobian on the full rule) ends at the full rule's fixed point: the same one, to the solver's
    tolerance, as the ladder without a pilot — at fewer evaluations of the full map."""
    kern = NR.compile_rs_kernels("softmax", {2: RD.replica_kernels("softmax", 2)})
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=1024, replicates=4, seed=3)
    plain = NR.rs_fixed_point(kern, rules, 4.0, 0.1, 0.1, pilot=None, tol_noise=0.0)
    multi = NR.rs_fixed_point(kern, rules, 4.0, 0.1, 0.1, pilot=256, tol_noise=0.0)
    assert multi.method.startswith("pilot[4x256")
    for k in NR.UNKNOWNS:
        assert multi.values[k] == pytest.approx(plain.values[k], rel=1e-7, abs=1e-9)
    # the errors come from forward-difference Jacobians (step 1e-6) of maps whose prox converges to
    # ‖∇F‖ ≤ 1e-9: at two points 1e-9 apart they differ by up to ~1e-9/1e-6 = 1e-3 relative
    assert multi.E_test_error == pytest.approx(plain.E_test_error, rel=2e-3)
    assert multi.residual <= 1e-9
    # the pilot's Jacobian is the surrogate's at the returned point (stability = its spectral radius)
    assert multi.stability == pytest.approx(float(np.max(np.abs(np.linalg.eigvals(multi.jacobian)))))
    # a prefix rule keeps the replicate structure (first points of every replicate)
    pre = RR.prefix_rule(rules[0], 256)
    assert pre.n == 4 * 256 and pre.points == 256
    assert np.array_equal(pre.chistar[256:512], rules[0].chistar[1024:1280])


@pytest.mark.slow
def test_rough_map_is_accepted_within_its_noise_and_flagged():
    """softmax spiked L=2, α=2, λ=0.03 on 4×1024 (seed 0): the frozen map is rough (prox minima
    switch) and has no fixed point to 1e-6; the best point's residual (1.6e-3) is below a quarter
    of the map's integration noise, so it is returned — flagged, with the residual in its error —
    and refused when only the absolute criterion is allowed (``accept_noise=0``)."""
    kern = NR.compile_rs_kernels("softmax", {2: RD.replica_kernels("softmax", 2)})
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=1024, replicates=4, seed=0)
    fp = NR.rs_fixed_point(kern, rules, 2.0, 0.03, 0.1)
    assert "rough_map" in fp.flags and "residual_above_tol" in fp.flags
    assert 1e-6 < fp.residual < 1e-2
    assert np.isfinite(fp.E_test) and fp.E_test_error > 0
    with pytest.raises(ConvergenceError, match="integration noise"):
        NR.rs_fixed_point(kern, rules, 2.0, 0.03, 0.1, accept_noise=0.0)


def test_noise_relative_tolerance_moves_the_answer_by_a_sliver_of_its_error():
    """The default stop (residual ≤ 1e-3 × the map's integration noise, ``tol_noise``) against the
    strict one (``tol`` = 1e-9 only): every order parameter within 0.02 of its standard error of
    the strict answer (the residual's effect is ≤ 1e-3 of the noise, amplified by (I − J)⁻¹ like the
    error itself), no ``residual_above_tol`` flag, and not more map evaluations."""
    kern = NR.compile_rs_kernels("softmax", {2: RD.replica_kernels("softmax", 2)})
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=1024, replicates=4, seed=3)
    strict = NR.rs_fixed_point(kern, rules, 4.0, 0.1, 0.1, tol_noise=0.0)
    loose = NR.rs_fixed_point(kern, rules, 4.0, 0.1, 0.1)
    for k in NR.UNKNOWNS:
        assert abs(loose.values[k] - strict.values[k]) <= 0.02 * strict.errors[k], k
    assert abs(loose.E_test - strict.E_test) <= 0.02 * strict.E_test_error
    assert "residual_above_tol" not in loose.flags
    assert loose.evaluations <= strict.evaluations


def test_warm_continuation_reaches_the_cold_fixed_points():
    """``rs_learning_curve`` passes each fixed point on (``warm=``: predictor from its Jacobian and
    averages, first Newton round on the surrogate anchored at its prox selection): the fixed points
    are those of independent cold solves on the same rule, to the solver's tolerance, at fewer
    evaluations of the multistart map; the continuation handle is not pickled."""
    import pickle

    kern = NR.compile_rs_kernels("softmax", {2: RD.replica_kernels("softmax", 2)})
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=2048, replicates=4, seed=5)
    alphas = [10.0, 7.0, 5.0]
    curve = NR.rs_learning_curve(kern, rules, alphas, 0.1, 0.1, tol_noise=0.0)
    assert all(fp.method.startswith("warm-walk") for fp in curve[1:])
    for fp in curve[1:]:
        cold = NR.rs_fixed_point(kern, rules, fp.alpha, 0.1, 0.1, tol_noise=0.0)
        for k in NR.UNKNOWNS:
            assert fp.values[k] == pytest.approx(cold.values[k], rel=1e-6, abs=1e-8), (fp.alpha, k)
    back = pickle.loads(pickle.dumps(curve[-1]))
    assert back.anchor is None and back.E_test == curve[-1].E_test
    assert curve[-1].anchor is not None and len(curve[-1].anchor) == 1


def test_shift_invariance_is_derived():
    # σ(χ + c1) = σ(χ) proved by SymPy for softmax (and the centred linear map), not for erf or softplus
    assert RD.shift_invariant("softmax", 2) and RD.shift_invariant("softmax", 3)
    assert not RD.shift_invariant("erf_fixed", 2) and not RD.shift_invariant("softplus_norm", 3)
    assert _kern("softmax").shift_invariant and not _kern("erf_fixed").shift_invariant


@pytest.mark.parametrize("L", [2, 3])
def test_shift_invariant_multistart_finds_the_full_multistarts_minima(L):
    """Rays in 1⊥ only (softmax) against the full ray set, at a point with 1.7 % two-minimum
    samples (α = 1 of the spiked ν = 2 curve): never a higher prox objective, the same minimum on
    all but a few samples (measured 4×8192 at L = 2: 1 differs, lower)."""
    kern = _kern("softmax", L)
    mod = kern.modules[L]
    rule = NR.make_rule("spiked", 2.0, [(L, 1.0)], points=1024, replicates=2, seed=1)[0]
    m_k, q_k, V_k, m_v, q_v, V_v = 0.2013, 0.2859, 8.526, 0.6359, 0.8522, 5.437
    wchi = m_k * rule.chistar + math.sqrt(q_k - m_k ** 2) * rule.xi
    wz = m_v * rule.zstar + math.sqrt(q_v - m_v ** 2) * rule.xip
    y = rule.zstar[np.arange(rule.n), rule.eps] + 0.1 * rule.xi0
    F = {}
    for inv in (False, True):
        chi, _ = P.prox_newton(mod, wchi, wz, y, V_k, V_v, shift_invariant=inv)
        F[inv] = np.broadcast_to(mod.F_value(*P.columns(chi), *P.columns(wchi), *P.columns(wz), y, V_k, V_v)[0], (rule.n,))
    assert np.all(F[True] <= F[False] + 1e-9 * (1 + np.abs(F[False])))
    assert np.mean(F[True] < F[False] - 1e-9 * (1 + np.abs(F[False]))) <= 2e-3


@pytest.mark.parametrize("act", ["softmax", "erf_fixed"])
def test_pruned_ray_starts_give_the_same_minima(act):
    """A one-dimensional prox (softmax, L = 2): the ray starts that the screened profile puts in
    ω^χ's basin are not run — the same minimum on every sample as with them, at the α = 1 overlaps
    of the benchmark curve (1.5 % two-minimum samples; measured on 425 984 samples at 13 overlaps:
    none differs), with about half the Newton starts.  In two dimensions (erf_fixed) nothing is
    pruned."""
    mod, wchi, wz, y, V_k, V_v = _prox_inputs(act, 2, (0.2013, 0.2859, 8.526, 0.6359, 0.8522, 5.437), points=2048,
                                              seed=1)
    inv = _kern(act).shift_invariant
    traces = {}
    chi = {}
    for pr in (False, True):
        traces[pr] = []
        chi[pr], _ = P.prox_newton(mod, wchi, wz, y, V_k, V_v, shift_invariant=inv, prune=pr, trace=traces[pr])
    assert np.abs(chi[True] - chi[False]).max() < 1e-6
    if inv:
        assert traces[True][0] < 0.75 * traces[False][0], (traces[True][0], traces[False][0])
    else:
        assert traces[True] == traces[False]


def test_options_object_and_keywords_are_one_thing():
    """RSOptions is the one home of the solver's options: an options object and the same keywords give the same
    fixed point, bit for bit; an unknown option is a one-line InputError naming it and the options."""
    kern = _kern("linear_centred")
    rules = NR.make_rule("spiked", 2.0, [(2, 1.0)], points=256, replicates=2, seed=0)
    a = NR.rs_fixed_point(kern, rules, 4.0, 0.1, 0.1, tol=1e-10, form="jacobian")
    b = NR.rs_fixed_point(kern, rules, 4.0, 0.1, 0.1, options=NR.RSOptions(tol=1e-10, form="jacobian"))
    assert a.values == b.values and a.E_test == b.E_test and a.method == b.method
    with pytest.raises(InputError, match="RSOptions has no option 'no_such_option' \\(its options: "):
        NR.rs_fixed_point(kern, rules, 4.0, 0.1, 0.1, no_such_option=1)
