"""Symbolic checks of the SLR Bayes derivation (docs/slr.md §3.5, §7, §8, §9) and of [M] (§13).

Every identity is asserted by SymPy simplification to zero; closed forms that SymPy cannot derive
(ζ(0, λ)) are checked against independent mpmath quadrature.
"""
from __future__ import annotations

import math

import mpmath
import pytest
import sympy as sp

from attnlimits.derivations.slr import bayes as SB
from attnlimits.derivations.slr import predecessor as SP
from attnlimits.symbolic.codegen import assert_exact

nu, n = SB.nu, SB.n


# ------------------------------------------------------------------------------------------------
# §3.5 ratio condition, posterior, normalisation


@pytest.mark.parametrize("model,c_expected", [("spiked", sp.sqrt(SB.nu)), ("max", SB.nu)])
def test_c_nu_derived_from_the_ratio_condition(model, c_expected):
    assert sp.simplify(SB.c_nu(model) - c_expected) == 0


@pytest.mark.parametrize("model", SB.MODELS)
@pytest.mark.parametrize("Lv", [2, 3, 4])
def test_ratio_condition_every_L(model, Lv):
    chi = SB.chi_vector(Lv)
    for eps, other in [(0, 1), (Lv - 1, 0)]:
        r = SB.ratio_condition(model, Lv, eps, other)
        assert sp.simplify(r - SB.c_nu(model) * (chi[eps] - chi[other])) == 0


@pytest.mark.parametrize("model", SB.MODELS)
@pytest.mark.parametrize("Lv", [2, 3])
def test_posterior_is_softmax_and_nishimori(model, Lv):
    assert SB.posterior_residual(model, Lv) == sp.zeros(Lv, 1)
    assert SB.nishimori_residual(model, Lv) == 0
    assert SB.risk_decomposition_residual(model, Lv) == 0


@pytest.mark.parametrize("model", SB.MODELS)
def test_reweighting_is_normalised(model):
    assert SB.normalisation_residual(model) == 0


def test_unknown_model_is_rejected():
    with pytest.raises(ValueError, match="spiked"):
        SB.c_nu("linear")


# ------------------------------------------------------------------------------------------------
# §8 Stein


def test_stein_lemma_and_identity():
    assert SB.stein_lemma_residual() == 0
    for Lv in (2, 3, 4):
        assert SB.stein_identity_residual(Lv) == 0


# ------------------------------------------------------------------------------------------------
# §7 one-dimensional forms and the Laplace representation


def test_spiked_L2_form():
    f = SB.one_d_form("spiked")
    expected = SB.sigmoid(-nu - sp.sqrt(2 * nu) * n)
    assert sp.simplify(f.function - expected) == 0
    assert sp.simplify(f.step + sp.sqrt(nu / 2)) == 0


def test_max_L2_form():
    f = SB.one_d_form("max")
    x = sp.sqrt(2) * nu * n
    expected = 2 * SB.sigmoid(x) * SB.sigmoid(-x)
    assert sp.simplify((f.function - expected).rewrite(sp.exp)) == 0
    assert f.step == 0


def test_laplace_identity_and_kernels():
    for K in (1, 2):
        assert SB.laplace_identity_residual(K) == 0
    for k in (0, 1, 2):
        assert sp.simplify(SB.laplace_kernel(k) - sp.exp(k * SB.s - sp.exp(SB.s))) == 0


def test_step_part_is_the_gaussian_average_of_the_smooth_step():
    assert SB.step_part_identity_residual() == 0
    # the remainder K0 - Φ(-s) decays at both ends: like -e^s on the left, like -φ(s)/s on the right
    rem = SB.kernel_remainder()
    left, right = rem.subs(SB.s, -40).evalf(50), rem.subs(SB.s, 12).evalf(50)
    assert abs(left / -sp.exp(-40).evalf(50) - 1) < 1e-10
    assert abs(right) < 1e-32


def test_ndtr_is_accurate_in_the_lower_tail():
    val = SB.ndtr(sp.Integer(-30)).evalf(30)
    ref = mpmath.ncdf(-30)
    assert abs(float(val) / float(ref) - 1) < 1e-12
    assert sp.diff(SB.ndtr(SB.x), SB.x) == SB.gaussian_density(SB.x)


def test_token_laws_and_steps():
    laws = SB.token_laws("spiked")
    assert laws["signal"] == (nu, sp.sqrt(nu)) and laws["noise"] == (0, sp.sqrt(nu))
    assert SB.token_laws("max") == {"noise": (0, nu)}
    assert sp.simplify(SB.inner_step("spiked", "signal") - (SB.u - nu) / sp.sqrt(nu)) == 0
    assert sp.simplify(SB.inner_step("max", "noise") - SB.u / nu) == 0


def test_spec_inner_integrands():
    sp_ = SB.spec_inner_integrands("spiked")
    phi0, step0 = sp_["phi0"]
    expected = SB.gaussian_density(SB.g) * sp.exp(-sp.exp(-SB.u) * sp.exp(sp.sqrt(nu) * SB.g))
    assert sp.simplify(sp.powsimp(phi0 - expected, force=True)) == 0
    assert sp.simplify(step0 - SB.u / sp.sqrt(nu)) == 0
    assert sp.simplify(sp_["phi1"][1] - (SB.u - nu) / sp.sqrt(nu)) == 0
    psi, step = SB.spec_inner_integrands("max")["psi"]
    a = nu * SB.g
    expected = SB.gaussian_density(SB.g) * sp.exp(-2 * SB.u) * sp.exp(2 * a) * sp.exp(-sp.exp(-SB.u) * sp.exp(a))
    assert sp.simplify(sp.powsimp(psi - expected, force=True)) == 0
    assert sp.simplify(step - SB.u / nu) == 0


def test_outer_integrands():
    P = SB.phi_symbol
    d = SB.outer_integrand("spiked", 3).integrand
    assert sp.simplify(d - 2 * P("noise", 1) * P("signal", 0) * P("noise", 0)) == 0
    d = SB.outer_integrand("max", 4).integrand
    assert sp.simplify(d - 12 * P("noise", 1) ** 2 * P("noise", 0) ** 2) == 0
    c = SB.outer_integrand("spiked", 3, "complement")
    assert c.constant == 1 and sp.simplify(c.integrand + P("signal", 1) * P("noise", 0) ** 2) == 0
    c = SB.outer_integrand("max", SB.L, "complement")
    assert sp.simplify(c.integrand + SB.L * P("noise", 2) * P("noise", 0) ** (SB.L - 1)) == 0
    with pytest.raises(ValueError):
        SB.outer_integrand("spiked", 3, "other")


def test_inner_integrand_matches_quadrature_of_its_definition():
    """Φ_1 of the spiked signal token at one u, from the SymPy integrand vs a direct expectation."""
    f = sp.lambdify([SB.g], SB.inner_integrand("spiked", "signal", 1).subs({nu: 2, SB.u: 1}), "mpmath")
    with mpmath.workdps(25):
        step = (1 - 2) / mpmath.sqrt(2)  # a = u, with a = 2 + sqrt(2) g; finite range (|g| <= 12)
        lhs = mpmath.quad(f, [-12, step - 3, step, step + 3, 12])
        t = mpmath.exp(-1)  # u = 1
        a = lambda z: 2 + mpmath.sqrt(2) * z  # noqa: E731
        rhs = t * mpmath.quad(lambda z: mpmath.npdf(z) * mpmath.exp(a(z)) * mpmath.exp(-t * mpmath.exp(a(z))),
                              [-12, step - 3, step, step + 3, 12])
        assert abs(lhs - rhs) < mpmath.mpf(10) ** -20


# ------------------------------------------------------------------------------------------------
# §9 asymptotics


def test_completed_square_and_sech_integral():
    assert SB.completed_square_residual() == 0
    assert SB.sech_integral() == sp.pi


def test_spiked_asymptotic_constant():
    expected = (SB.L - 1) * sp.sqrt(sp.pi) / 2 * nu ** sp.Rational(-1, 2) * sp.exp(-nu / 4)
    assert sp.simplify(SB.spiked_asymptotic() - expected) == 0


def test_neg_log_rate_expansion():
    Lv = SB.L
    expected = sp.Rational(1, 4) + (sp.log(nu) / 2 - sp.log((Lv - 1) * sp.sqrt(sp.pi) / 2)) / nu
    assert sp.simplify(sp.expand_log(SB.neg_log_rate_expansion() - expected, force=True)) == 0
    assert sp.limit(SB.neg_log_rate_expansion(2), nu, sp.oo) == sp.Rational(1, 4)


def test_expected_max_integration_by_parts():
    for Lv in (2, 3, 5):
        assert SB.expected_max_by_parts_residual(Lv) == 0


def test_expressions_are_exact():
    exprs = [SB.one_d_form(m).integrand for m in SB.MODELS]
    exprs += [SB.laplace_kernel(k) for k in (0, 1, 2)] + [SB.kernel_remainder(), SB.step_part()]
    exprs += [SB.outer_integrand(m, 3, f).integrand for m in SB.MODELS for f in ("direct", "complement")]
    exprs += [SB.spiked_asymptotic(), SB.exact_ratio_integrand(), SB.expected_max_integrand(4)]
    exprs += [SP.manifold_excess_risk(), SP.prop3_risk()]
    assert_exact(*exprs)


def test_references():
    text = " ".join(SB.REFERENCES)
    for key in ("2509.21936", "Nishimori", "Stein", "2410.01537"):
        assert key in text


# ------------------------------------------------------------------------------------------------
# [M] (§13)


def test_manifold_risk_matches_the_stated_formula():
    d, Lv, gam, lam, kap, nuM = SP.d, SP.L, SP.gamma, SP.lam, SP.kappa, SP.nu_M
    stated = (gam**2 - 2 * gam**2 * nuM * sp.erf(lam * kap * sp.sqrt(d / (2 * (1 + 2 * lam**2 * gam**2))))
              + gam**2 * SP.zeta_erf2(lam * kap * sp.sqrt(d / 2), lam * gam)
              + (Lv - 1) * 2 / sp.pi * sp.asin(2 * lam**2 / (1 + 2 * lam**2)))
    assert sp.simplify(SP.manifold_excess_risk() - stated) == 0
    assert SP.manifold_risk_terms() == {"E_yy": gam**2, "E_yz": gam**2 * nuM, "E_zz": gam**2, "E_zz_other": 1}


def test_erf_gaussian_mean_and_zeta_at_s0():
    assert SP.erf_gaussian_mean_residual() == 0
    t = sp.Symbol("t", real=True)
    assert SP.zeta_erf2(t, 0) == sp.erf(t) ** 2


@pytest.mark.parametrize("lam", ["0.05", "0.1", "0.5", "1", "3"])
def test_zeta_at_zero_closed_form_vs_quadrature(lam):
    """Independent check: the arcsine closed form against mpmath quadrature of E[erf(λg)²]."""
    with mpmath.workdps(30):
        lm = mpmath.mpf(lam)
        quad = mpmath.quad(lambda z: mpmath.erf(lm * z) ** 2 * mpmath.npdf(z), [-mpmath.inf, 0, mpmath.inf])
        closed = sp.N(SP.zeta_at_zero(sp.Rational(lam)), 30)
        assert abs(quad - mpmath.mpf(str(closed))) < mpmath.mpf(10) ** -25


def test_zeta_evalf_and_integral_rewrite():
    z = SP.zeta_erf2(sp.Rational(1, 2), sp.Rational(1, 3))
    with mpmath.workdps(25):
        ref = mpmath.quad(lambda g: mpmath.erf(mpmath.mpf(1) / 2 + g / 3) ** 2 * mpmath.npdf(g),
                          [-mpmath.inf, mpmath.inf])
    assert abs(float(z.evalf(20)) - float(ref)) < 1e-15
    assert z.rewrite(sp.Integral).has(sp.Integral)


def test_prop3_derived_risk_and_beta():
    gam, eps, Lv = SP.gamma, SP.eps, SP.L
    assert sp.simplify(SP.prop3_risk() - (eps**2 + gam**2 - gam**4 / (gam**2 + Lv - 1))) == 0
    assert sp.simplify(SP.prop3_beta() - sp.Matrix([0, gam**2 / (gam**2 + Lv - 1)])) == sp.zeros(2, 1)
    assert sp.limit(SP.prop3_risk(), Lv, sp.oo) == eps**2 + gam**2


def test_cor2_leading_term():
    assert sp.simplify(SP.cor2_leading_term() - 4 * (SP.L - 1) * SP.lam**2 / sp.pi) == 0


def test_notation_map():
    assert SP.NOTATION_MAP["kappa"] == "m_k" and SP.NOTATION_MAP["d"] == "D"
    assert {"theta", "eta", "rho"} <= set(SP.NOTATION_MAP)
    assert any("2410.01537" in r for r in SP.REFERENCES)
    assert math.isclose(float(SP.zeta_at_zero(sp.Rational(1, 10))), 0.012483540641115765, rel_tol=1e-14)
