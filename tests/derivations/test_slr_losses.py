"""Per-sample losses of SLR ERM (attnlimits.derivations.slr.losses) and the RS prox for any loss
(attnlimits.derivations.slr.replica: residual_elimination, joint_objective, general_loss_hessian).

Expected values are independent of the code under test: the textbook forms of the presets, SymPy's own
``hessian`` of the composed loss, and the closed-form z-step of the square loss (z_elimination, derived
separately).  Exact checks are symbolic (``simplify(...) == 0``); numeric ones at 1e-12.
"""
import numpy as np
import pytest
import sympy as sp

from attnlimits.derivations.slr import replica as RD
from attnlimits.derivations.slr.losses import loss_derivative, loss_kernels, parse_loss, residual
from attnlimits.symbolic.result import InputError

r = residual


@pytest.mark.parametrize("text, name, expected", [
    ("square", "square", r ** 2 / 2),
    ("r**2/2", "square", r ** 2 / 2),
    ("0.5*r^2", "square", r ** 2 / 2),
    ("logcosh", "logcosh", sp.log(sp.cosh(r))),
    ("pseudo_huber:2", "pseudo_huber:2", 4 * (sp.sqrt(1 + r ** 2 / 4) - 1)),
])
def test_presets_and_formulas(text, name, expected):
    lo = parse_loss(text)
    assert lo.name == name
    assert sp.simplify(lo.expr - expected) == 0
    assert lo.square == (name == "square")
    assert parse_loss(lo.name).expr == lo.expr  # the canonical name re-parses to the same loss


@pytest.mark.parametrize("delta", ["1", "0.5", "0.1", "2.5"])
def test_huber_is_the_textbook_huber(delta):
    lo = parse_loss(f"huber:{delta}")
    d = float(delta)
    assert lo.name == f"huber:{delta}"
    f = sp.lambdify(r, lo.expr, "mpmath")
    for x in np.linspace(-4 * d, 4 * d, 41):
        want = 0.5 * x * x if abs(x) <= d else d * (abs(x) - 0.5 * d)
        assert float(f(x)) == pytest.approx(want, rel=1e-12, abs=1e-15)
    # a.e. derivatives: clip(r, -δ, δ) and the indicator of |r| < δ
    g1, g2 = loss_kernels(lo.name).module("numpy").rho(np.array([-3 * d, -0.5 * d, 0.3 * d, 2 * d]))[1:]
    assert np.allclose(g1, [-d, -0.5 * d, 0.3 * d, d], rtol=1e-12)
    assert np.allclose(np.broadcast_to(g2, (4,)), [0, 1, 1, 0])


def test_torch_and_numpy_print_the_same_loss():
    torch = pytest.importorskip("torch")
    x = np.linspace(-5, 5, 23)
    for name in ("huber:1", "pseudo_huber:0.5", "logcosh", "log(cosh(2*r))/4 + r**2/8"):
        b = loss_kernels(parse_loss(name).name)
        a = b.module("numpy").rho(x)
        t = b.module("torch").rho(torch.tensor(x, dtype=torch.float64))
        for u, v in zip(a, t):
            assert np.allclose(np.broadcast_to(u, x.shape), torch.as_tensor(v).numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("text, fragment", [
    ("huber", "needs a scale"),
    ("huber:-1", "> 0"),
    ("pseudo_huber:abc", "number"),
    ("x + 1", "unknown name"),
    ("__import__('os')", "not allowed"),
    ("exp(r) + y", "unknown name"),
    ("1/r", "not a finite real number"),
    ("3", "does not depend"),
])
def test_bad_losses_are_refused_in_one_line(text, fragment):
    with pytest.raises(InputError) as exc:
        parse_loss(text)
    assert fragment in str(exc.value) and "\n" not in str(exc.value)


def test_residual_elimination_gives_the_square_loss_closed_form():
    """Minimising ½r² + (r − r₀)²/(2V_v‖s‖²) over r must give the z-step of z_elimination (its minimum value
    and its z), derived there independently from the stationarity in z."""
    L = 2
    s, wz, rr, z_of_r, pen = RD.residual_elimination(L)
    s2, wz2, z_hat, e_hat, F_z = RD.z_elimination(L)
    assert s == s2 and wz == wz2
    obj = rr ** 2 / 2 + pen
    (r_star,) = sp.solve(sp.diff(obj, rr), rr)
    assert sp.simplify(obj.subs(rr, r_star) - F_z) == 0
    for zi, zj in zip(z_of_r, z_hat):
        assert sp.simplify(zi.subs(rr, r_star) - zj) == 0


def test_general_loss_hessian_matches_sympy_hessian_for_a_smooth_loss():
    chi, z, sig, ell, H = RD.general_loss_hessian("softmax", 2, loss="logcosh")
    direct = sp.hessian(sp.log(sp.cosh(RD.y - sum(sig[i] * z[i] for i in range(2)))), list(chi) + list(z))
    pt = {chi[0]: 0.3, chi[1]: -0.7, z[0]: 1.1, z[1]: -0.4, RD.y: 0.25}
    assert np.allclose(np.array(H.subs(pt), float), np.array(direct.subs(pt), float), rtol=1e-12, atol=1e-14)


def test_loss_derivative_drops_the_dirac_of_a_kink():
    lo = parse_loss("huber:1")
    d2 = loss_derivative(lo, 2)
    assert not d2.has(sp.DiracDelta)
    assert d2.subs(r, sp.Rational(1, 3)) == 1 and d2.subs(r, 3) == 0


@pytest.mark.parametrize("loss", ["huber:0.5", "logcosh", "pseudo_huber:1"])
def test_value_fields_reduce_to_the_residual_for_a_non_quadratic_loss(loss):
    """min over z ∈ R³ of ρ(y − sᵀz) + ‖z − ω‖²/(2V) by a generic optimiser (scipy BFGS, 1e-10) equals the
    one-dimensional min over r of residual_elimination's ρ(r) + penalty, and the minimising z is z(r̂)."""
    from scipy.optimize import minimize, minimize_scalar

    L = 3
    s, wz, rr, z_of_r, pen = RD.residual_elimination(L)
    rho = sp.lambdify(r, parse_loss(loss).expr, "numpy")
    rng = np.random.default_rng(7)
    for _ in range(5):
        sv, wv, yv, Vv = rng.uniform(0.1, 1.0, L), rng.normal(size=L), 3.0 * rng.normal(), rng.uniform(0.3, 2.0)
        sub = {**dict(zip(s, sv)), **dict(zip(wz, wv)), RD.y: yv, RD.V_v: Vv}
        full = minimize(lambda z: rho(yv - sv @ z) + ((z - wv) ** 2).sum() / (2 * Vv), wv, method="BFGS",
                        options={"gtol": 1e-10})
        pen_f = sp.lambdify(rr, pen.subs(sub), "numpy")
        one = minimize_scalar(lambda t: rho(t) + pen_f(t), bracket=(-10, 10), tol=1e-12)
        assert one.fun == pytest.approx(full.fun, rel=1e-8, abs=1e-10)
        z_r = np.array([float(zi.subs(sub).subs(rr, one.x)) for zi in z_of_r])
        assert np.allclose(z_r, full.x, atol=1e-5)
