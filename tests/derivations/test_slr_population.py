"""attnlimits.derivations.slr: closed forms derived by the engine vs the spec's formulas (§8, §9)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from attnlimits.derivations import slr as S
from attnlimits.derivations.slr import population as SPOP
from attnlimits.symbolic.gaussian import wick_expectation
from attnlimits.symbolic.hermite import ActivationError

L, nu, mu, m = S.L, S.nu, S.mu, S.m

# docs/slr.md §8 table, typed here as the independent expectation
SPEC_SPIKED = {
    "linear_uncentred": (L * (L - 1) / (L ** 2 + (L - 1) * nu), sp.sqrt(nu) * (L - 1) / L),
    "linear_centred": ((L - 1) / (L + nu), sp.sqrt(nu) * L / (L + nu)),
    "linear_pure": (L / (L + nu), None),
}
SPEC_MAX = {
    "linear_uncentred": (1 - (1 + mu ** 2) / L, mu),
    "linear_centred": (1 - 1 / L - mu ** 2 / (L - 1), L * mu / (L - 1)),
    "linear_pure": (1 - mu ** 2 / L, None),
}


@pytest.mark.parametrize("variant", list(SPEC_SPIKED))
@pytest.mark.parametrize("model", ["spiked", "max"])
def test_linear_closed_forms_match_spec_table(variant, model):
    d = S.linear_closed_form(variant, model)
    risk, arg = (SPEC_SPIKED if model == "spiked" else SPEC_MAX)[variant]
    assert sp.simplify(d["risk"] - risk) == 0
    if arg is None:
        assert d["argmin_m_k"] is None
    else:
        assert sp.simplify(d["argmin_m_k"] - arg) == 0
    # orthogonal key noise only adds to B (so q_k = m_k^2 is optimal)
    assert sp.simplify(d["dB_ds2"]).is_nonnegative or all(
        float(d["dB_ds2"].subs(L, k)) >= 0 for k in range(2, 8))


@pytest.mark.parametrize("variant", list(SPEC_SPIKED))
def test_exchangeable_reduction_equals_full_wick_at_L3(variant):
    """A and B by the 3-block reduction = brute-force Wick over all 2L Gaussians (spiked, L = 3)."""
    act = S.activation(variant)
    Lv = 3
    xs = sp.symbols("x1:4", real=True)
    es = sp.symbols("e1:4", real=True)
    s = sp.Symbol("s", positive=True)
    chi = [m * x + s * e for x, e in zip(xs, es)]
    sig = S.sigma_vector(act, Lv, chi=chi)
    mean = [sp.sqrt(nu), 0, 0, 0, 0, 0]
    B_full = wick_expectation(sum(si ** 2 for si in sig), xs + es, mean, sp.eye(6))
    A_full = wick_expectation(sig[0], xs + es, mean, sp.eye(6))
    A_red, B_red = SPOP._affine_AB(act, "spiked", s=s)
    assert sp.simplify(B_full - B_red.subs(L, Lv)) == 0
    assert sp.simplify(A_full - A_red.subs(L, Lv)) == 0


R4_SPIKED = {  # (L, nu): uncentred / centred / pure
    (2, 1): (0.40000, 0.33333, 0.66667), (2, 2): (0.33333, 0.25000, 0.50000), (2, 5): (0.22222, 0.14286, 0.28571),
    (2, 10): (0.14286, 0.08333, 0.16667), (3, 1): (0.54545, 0.50000, 0.75000), (3, 2): (0.46154, 0.40000, 0.60000),
    (3, 10): (0.20690, 0.15385, 0.23077),
}
R4_MAX_INF = {2: (0.34085, 0.18169, 0.84085), 3: (0.42793, 0.30857, 0.76127), 4: (0.48510, 0.39680, 0.73510),
              5: (0.52950, 0.46188, 0.72950), 10: (0.66322, 0.63692, 0.76322), 100: (0.92712, 0.92648, 0.93712)}
M_L = {2: 0.564190, 3: 0.846284, 4: 1.029375, 5: 1.162964, 10: 1.538753, 100: 2.507594}  # R4
VARIANTS = ("linear_uncentred", "linear_centred", "linear_pure")


@pytest.mark.parametrize("key", list(R4_SPIKED))
def test_spiked_linear_values_R4(key):
    Lv, nuv = key
    for v, expected in zip(VARIANTS, R4_SPIKED[key]):
        val = float(S.linear_closed_form(v, "spiked")["risk"].subs({L: Lv, nu: nuv}))
        assert val == pytest.approx(expected, abs=6e-6)


@pytest.mark.parametrize("Lv", list(R4_MAX_INF))
def test_max_inf_linear_values_R4(Lv):
    for v, expected in zip(VARIANTS, R4_MAX_INF[Lv]):
        val = float(S.linear_closed_form(v, "max")["risk"].subs({L: Lv, mu: M_L[Lv]}))
        assert val == pytest.approx(expected, abs=1e-5)  # M_L is given to 6 decimals


def test_variable_length_closed_forms_R2():
    third = sp.Rational(1, 3)
    law = {1: third, 2: third, 3: third}
    c = S.linear_closed_form_varlen("linear_centred", "spiked", law, nu_value=5)
    assert float(c["risk"]) == pytest.approx(0.24319, abs=6e-6)
    assert float(c["per_length"]) == pytest.approx(0.13095, abs=6e-6)
    p = S.linear_closed_form_varlen("linear_pure", "spiked", law, nu_value=5)
    assert float(p["risk"]) == pytest.approx(0.28571, abs=6e-6)
    assert float(p["per_length"]) == pytest.approx(0.27579, abs=6e-6)
    u = S.linear_closed_form_varlen("linear_uncentred", "spiked", law, nu_value=5)
    assert float(u["risk"]) == pytest.approx(0.22222, abs=6e-6)
    # max-SLR nu = inf with M_L (M_1 = 0): docs/slr.md §14 R1/R2 0.3895 (per-length 0.2562), centred 0.27895 (0.16342)
    mus = {1: 0, 2: M_L[2], 3: M_L[3]}
    u = S.linear_closed_form_varlen("linear_uncentred", "max", law, mu_values=mus)
    assert float(u["risk"]) == pytest.approx(0.3895, abs=1e-4)
    assert float(u["per_length"]) == pytest.approx(0.2562, abs=1e-4)
    c = S.linear_closed_form_varlen("linear_centred", "max", law, mu_values=mus)
    assert float(c["risk"]) == pytest.approx(0.27895, abs=2e-5)
    assert float(c["per_length"]) == pytest.approx(0.16342, abs=2e-5)


def test_asymptotics_section9():
    a = S.linear_asymptotics()
    assert a["spiked_nu_E"] == {"linear_uncentred": L, "linear_centred": L - 1, "linear_pure": L}
    assert all(v == 1 for v in a["max_large_L"].values())


def test_optimal_value_vector_derived():
    mv, e = S.optimal_value_risk()
    assert sp.simplify(mv - S.A_sym / S.B_sym) == 0
    assert sp.simplify(e - (1 - S.A_sym ** 2 / S.B_sym)) == 0


def test_softmax_shift_invariance_and_normalisation():
    chi = S.chi_symbols(3)
    c = sp.Symbol("c", real=True)
    sig = S.sigma_vector("softmax", 3)
    shifted = S.sigma_vector("softmax", 3, chi=[x + c for x in chi])
    assert sp.simplify(shifted - sig) == sp.zeros(3, 1)
    assert sp.simplify(sum(sig) - 1) == 0
    cen = S.sigma_vector("linear_centred", 3)
    assert sp.simplify(S.sigma_vector("linear_centred", 3, chi=[x + c for x in chi]) - cen) == sp.zeros(3, 1)


def numeric_activation(name):
    """The generated NumPy activation of ``name``, through the SLR theory of a problem that uses it
    (the problem's model, ν and L do not enter the activation)."""
    from attnlimits.verify.slr.problem import slr_problem
    from attnlimits.verify.slr.theory import theory_of

    return theory_of(slr_problem("spiked", 2.0, 3, activation=name)).numeric_activation()


def test_generated_kernels_match_sympy_jacobian():
    """The stable generated weights and their χ-derivatives equal SymPy's σ and Jacobian."""
    rng = np.random.default_rng(0)
    chi_val = rng.normal(size=3) * 2
    for name, extra in (("softmax", None), ("softplus_norm_bias", -1.5), ("erf_learned", 0.3)):
        act = S.activation(name)
        chi = S.chi_symbols(3)
        sig = S.sigma_vector(act, 3, extra=extra)
        sig = sig.applyfunc(lambda e: e.rewrite(sp.exp))
        jac = sig.jacobian(chi)
        sub = dict(zip(chi, chi_val))
        na = numeric_activation(name)
        direction = rng.normal(size=3)
        s_num, (ds,), _ = na.weights(chi_val[None, :], extra if extra is not None else 0.0, [direction[None, :]])
        np.testing.assert_allclose(s_num[0], np.array(sig.subs(sub).evalf(), float).ravel(), rtol=1e-12)
        np.testing.assert_allclose(ds[0], np.array(jac.subs(sub).evalf(), float) @ direction, rtol=1e-10, atol=1e-14)


def test_softplus_bias_to_minus_infinity_is_softmax():
    chi = np.array([[0.3, -1.2, 2.0], [-800.0, -801.0, -799.5]])
    sp_w, _, _ = numeric_activation("softplus_norm_bias").weights(chi, -40.0)
    sm_w, _, _ = numeric_activation("softmax").weights(chi, 0.0)
    np.testing.assert_allclose(sp_w, sm_w, rtol=1e-12)
    assert np.isfinite(sp_w).all()


def test_activation_names():
    with pytest.raises(ActivationError, match="linear_uncentred, linear_centred, linear_pure"):
        S.activation("linear")
    for bare in ("erf", "softplus"):
        with pytest.raises(ActivationError, match="ambiguous"):
            S.activation(bare)
    with pytest.raises(ActivationError, match="unknown activation"):
        S.activation("relu_attention")
    a = S.activation("normalised:exp(2*t)")
    assert a.kind == "normalised" and sp.simplify(a.expr - 2 * S.t) == 0
    with pytest.raises(ActivationError):
        S.activation("elementwise:__import__('os').system('true')")
    assert set(S.ACTIVATIONS) == {"softmax", "linear_uncentred", "linear_centred", "linear_pure", "erf_fixed",
                                  "erf_learned", "softplus_norm", "softplus_norm_bias"}


def test_quoted_forms_Q1_Q2():
    q1 = S.QUOTED["Q1"]
    # quoted L/((L-1) nu) agrees with uncentred/pure only at L = 2
    for v in ("linear_uncentred", "linear_pure"):
        lead = sp.limit(nu * q1.derived[v], nu, sp.oo)
        assert sp.simplify((lead - sp.limit(nu * q1.quoted, nu, sp.oo)).subs(L, 2)) == 0
        assert sp.simplify((lead - sp.limit(nu * q1.quoted, nu, sp.oo)).subs(L, 3)) != 0
    q2 = S.QUOTED["Q2"]
    ratio = sp.simplify(q2.derived["softmax"] / q2.quoted)
    assert sp.limit(ratio, nu, sp.oo) == sp.oo  # e^{3ν/4}/√ν: the exponents differ
    assert math.isclose(float(ratio.subs({L: 2, nu: 1})), math.sqrt(math.pi) / 2 * math.exp(0.75), rel_tol=1e-12)


def test_normalised_activation_must_be_positive():
    """A normalised weight that is not positive is refused (``normalised:t`` would give
    E_test = 308 ± 27113 with exit 0); one SymPy cannot prove positive but is, passes."""
    from attnlimits.derivations.slr.population import custom_activation
    from attnlimits.symbolic.hermite import ActivationError

    for bad, where in (("t", "-8"), ("t**3 + 1", "-8"), ("cos(t)", "-8"), ("1/t", "-8")):
        with pytest.raises(ActivationError, match=f"positive weight.*t = {where}"):
            custom_activation(bad, kind="normalised")
    assert custom_activation("2 + sin(t)", kind="normalised").kind == "normalised"
    assert custom_activation("exp(2*t)", kind="normalised").expr.free_symbols
