"""Code generation: exactness check, printers, kernels with spectral averages, matrix calculus."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp

from attnlimits.derivations import attention_rmt as R
from attnlimits.numeric import compile_model
from attnlimits.symbolic.codegen import FloatLiteralError, Kernel, ModuleBuilder, assert_exact, load_module, print_expr
from attnlimits.symbolic.matexpr import directional_derivative, matrix_diff
from attnlimits.symbolic.spectral import MarchenkoPasturLaw, SpectralAverage

x, y = sp.symbols("x y")


def test_float_literals_are_rejected():
    assert_exact(sp.Rational(1, 3) * x + sp.sqrt(2))
    with pytest.raises(FloatLiteralError, match="Rational"):
        assert_exact(sp.Float("0.1") * x)
    with pytest.raises(FloatLiteralError):
        Kernel("k", [x], [x + sp.Float(0.5)]).source("numpy")


def test_all_model_expressions_are_exact():
    for k in R.model.kernels():
        assert_exact(*k.outputs)


@pytest.mark.parametrize("dps", [30, 60])
def test_mpmath_printing_keeps_precision(dps):
    mb = ModuleBuilder("t", "mpmath")
    mb.add_kernel(Kernel("third", [x], [x / 3 + sp.Rational(1, 7) + sp.pi]))
    mod = load_module(mb.source())
    with mpmath.workdps(dps):
        (v,) = mod.third(mpmath.mpf(1))
        exact = mpmath.mpf(1) / 3 + mpmath.mpf(1) / 7 + mpmath.pi
        assert abs(v - exact) < mpmath.mpf(10) ** (-dps + 1)


def test_kernel_with_averages_matches_direct_sum():
    c, t = sp.Symbol("c", positive=True), sp.Symbol("t", nonnegative=True)
    law = MarchenkoPasturLaw(c)
    k = Kernel("k", [y], [SpectralAverage(1 / (y + t), t, law), SpectralAverage(t**2 * y, t, law) + 1])
    mb = ModuleBuilder("t", "numpy")
    mb.add_kernel(k)
    mod = load_module(mb.source())
    tn = np.linspace(0, 3, 11)
    w = np.full(11, 1 / 11)
    a, b = mod.k(2.0, _nodes=(tn, w))
    assert a == pytest.approx(np.sum(w / (2 + tn)), rel=1e-14)
    assert b == pytest.approx(np.sum(w * tn**2 * 2) + 1, rel=1e-14)


def test_woodbury_kernel_matches_direct_numpy():
    """The generated ȳ equals the spec's boxed formula assembled by hand with numpy."""
    rng = np.random.default_rng(0)
    mod = compile_model(R.model, "numpy")
    r = 3
    A = rng.normal(size=(3, 3))
    Q = A @ A.T + np.eye(3)
    q = [Q[0, 0], Q[0, 1], Q[0, 2], Q[1, 1], Q[1, 2], Q[2, 2]]
    dq = list(rng.normal(size=6))
    m = rng.normal(size=(r, 1))
    wK, wQ = rng.normal(size=(r, 1)), rng.normal(size=(r, 1))
    G, O = np.eye(r) + m @ m.T, np.eye(r) + wK @ wQ.T
    c, gamma, a1 = 0.7, 0.3, 0.6
    al = a1 / c
    Z = np.zeros((r, r))
    C = np.block([[al**2 * O.T @ G @ (c * np.eye(r) + G) @ O, al * O.T @ G, al * O.T],
                  [al * G @ O, np.eye(r), Z], [al * O, Z, Z]])
    v = np.kron(np.array([[q[0]], [q[1]], [q[2]]]), m)
    N = np.eye(3 * r) + np.kron(Q, G) @ C
    ybar_direct = q[0] - (v.T @ C @ np.linalg.solve(N, v))[0, 0]
    Gam, Om = mod.rmt_geometry_rank1(m, wK, wQ, r)
    np.testing.assert_allclose(Gam, G, rtol=1e-14)
    out = mod.rmt_outer(*q, *dq, c, gamma, a1, m, Gam, Om, r)
    assert out[0] == pytest.approx(ybar_direct, rel=1e-10)


def test_boxed_and_stable_forms_agree_and_derivative_is_exact():
    """Stable ȳ = boxed ȳ, and dȳ/dγ (matrix calculus) = high-precision central difference."""
    mb = ModuleBuilder("t", "mpmath")
    ins = [*R.q, *R.q_rate, R.c, R.gamma, R.a1, R.m_vec, R.Gamma_mat, R.Omega_mat, R.r]
    mb.add_kernel(Kernel("forms", ins, [R.ybar, R.ybar_boxed_expression(), R.ybar_rate], use_cse=False))
    mod = load_module(mb.source())
    mp = compile_model(R.model, "mpmath")
    with mpmath.workdps(40):
        rng = np.random.default_rng(1)
        A = rng.normal(size=(3, 3))
        Q = A @ A.T + np.eye(3)
        q0 = [mpmath.mpf(v) for v in (Q[0, 0], Q[0, 1], Q[0, 2], Q[1, 1], Q[1, 2], Q[2, 2])]
        dq = [mpmath.mpf(v) for v in rng.normal(size=6)]
        m, Gam, Om, r = mp.geometry("2", ["0.5", "1"], ["1.5", "-0.3"])
        args = (mpmath.mpf("0.5"), mpmath.mpf("0.2"), mpmath.mpf("0.6"), m, Gam, Om, r)
        y_stable, y_boxed, rate = mod.forms(*q0, *dq, *args)
        assert abs(y_stable - y_boxed) < mpmath.mpf(10) ** -35
        h = mpmath.mpf(10) ** -12
        yp = mod.forms(*[a + h * b for a, b in zip(q0, dq)], *dq, *args)[0]
        ym = mod.forms(*[a - h * b for a, b in zip(q0, dq)], *dq, *args)[0]
        assert abs((yp - ym) / (2 * h) - rate) < mpmath.mpf(10) ** -20


def test_matrix_diff_rules():
    M = sp.MatrixSymbol("M", 2, 2)
    E = sp.ImmutableMatrix([[x, 1], [0, x**2]])
    d = matrix_diff(sp.Inverse(E) * M, x).doit()
    expected = (-E.inv() * E.diff(x) * E.inv() * M).doit()
    assert sp.simplify(sp.Matrix(d) - sp.Matrix(expected)) == sp.zeros(2, 2)
    assert isinstance(matrix_diff(M, x), sp.ZeroMatrix)
    kd = matrix_diff(sp.KroneckerProduct(E, sp.ImmutableMatrix([[y]])), y).doit()
    assert sp.Matrix(kd) == sp.Matrix(sp.kronecker_product(E, sp.Matrix([[1]])))
    s = sp.Symbol("s")
    dd = directional_derivative(x**2 * y, {}, {x: s})
    assert sp.simplify(dd - 2 * x * y * s) == 0


def test_print_expr_backends():
    e = sp.tanh(x) + sp.Rational(1, 3)
    assert "numpy.tanh" in print_expr(e, "numpy")
    assert "mpmath.tanh" in print_expr(e, "mpmath")
    with pytest.raises(ValueError, match="unknown backend"):
        print_expr(e, "jax")


@pytest.mark.parametrize("backend", ["numpy", "mpmath"])
def test_shared_exponentials_compute_each_exp_once_and_keep_values(backend):
    """``Kernel(share_exp=True)``: exp(k·x + c) with integer k becomes exp(c)·E_x^k, E_x = exp(x) once."""
    from attnlimits.symbolic.codegen import share_exponentials

    x, y_, w = sp.symbols("x y w", real=True)
    exprs = [sp.exp(2 * x) / (1 + sp.exp(x) + sp.exp(3 * y_ - x + 1)), sp.exp(x * w) + sp.exp(-y_)]
    new, defs = share_exponentials(exprs, [x, y_, w])
    assert {str(E) for E, _ in defs} == {"_exp_x", "_exp_y"}
    assert new[1].has(sp.exp(x * w))  # not integer-linear in one input: left alone
    mb = ModuleBuilder("t", backend)
    mb.add_kernel(Kernel("plain", [x, y_, w], exprs))
    mb.add_kernel(Kernel("shared", [x, y_, w], exprs, share_exp=True))
    src = mb.source()
    body = src[src.index("def shared"):]
    assert body.count("exp(x)") == 1 and "exp(2*x)" not in body
    mod = load_module(src)
    if backend == "numpy":
        args = (np.array([-3.0, 0.2, 5.0]), np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.3, 2.0]))
        for a, b in zip(mod.plain(*args), mod.shared(*args)):
            assert np.allclose(a, b, rtol=1e-14, atol=0)
    else:
        with mpmath.workdps(40):
            args = (mpmath.mpf("0.7"), mpmath.mpf("-1.1"), mpmath.mpf("0.25"))
            for a, b in zip(mod.plain(*args), mod.shared(*args)):
                assert abs(a - b) < mpmath.mpf(10) ** -37 * abs(a)


def test_numpy_printer_writes_small_integer_powers_of_names_as_products():
    """x**3 and x**(-2) of a name print as products (numpy's pow has fast paths for 2, 0.5, -1 only);
    values agree with the mpmath printer's (exact powers) to a few ulp, on arrays and on scalars."""
    a, b = sp.symbols("a b", real=True)
    e = a**3 / b**2 + a**-1 - b**4 + (a + b)**3 + a ** sp.Rational(3, 2)
    src = print_expr(e, "numpy")
    assert "a**3" not in src and "b**(-2" not in src and "b**4" not in src
    assert "(a*a*a)/(b*b)" in src and "(1/a)" in src and "(b*b*b*b)" in src
    assert "(a + b)**3" in src  # a compound base is not repeated
    mb = ModuleBuilder("t", "numpy")
    mb.add_kernel(Kernel("f", [a, b], [e]))
    mod = load_module(mb.source())
    mm = ModuleBuilder("t", "mpmath")
    mm.add_kernel(Kernel("f", [a, b], [e]))
    ref = load_module(mm.source())
    av, bv = np.array([0.3, 1.7, 4.0]), np.array([-2.5, 0.9, 1e-3])
    (got,) = mod.f(av, bv)
    with mpmath.workdps(40):
        want = [float(ref.f(mpmath.mpf(float(p)), mpmath.mpf(float(q)))[0]) for p, q in zip(av, bv)]
    assert np.allclose(got, want, rtol=1e-14, atol=0)
    (g0,) = mod.f(0.3, -2.5)  # Python floats
    assert isinstance(g0, float) and abs(g0 - want[0]) <= 1e-14 * abs(want[0])


def test_allocator_tuning_is_idempotent_and_can_be_turned_off(monkeypatch):
    import attnlimits.numeric.allocator as A

    first = A.tune_allocator()
    assert A.tune_allocator() is first and A.allocator_tuned() is first
    monkeypatch.setattr(A, "_STATE", {"tuned": False})
    monkeypatch.setenv(A.ENV_VAR, "0")
    assert A.tune_allocator() is False and A.allocator_tuned() is False
