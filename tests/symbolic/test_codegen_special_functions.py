"""Printers of the special functions of attnlimits.symbolic.functions (numpy, mpmath, torch) and the torch backend."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
import torch

from attnlimits.symbolic.bundle import KernelBundle
from attnlimits.symbolic.codegen import Kernel, ModuleBuilder, load_module, print_expr
from attnlimits.symbolic.functions import LogSoftplus, ndtr, zeta_erf2

t = sp.Symbol("t", real=True)
s = sp.Symbol("s", real=True)


def test_ndtr_lower_tail_on_every_backend():
    ref = float(mpmath.ncdf(-30))  # 4.9e-198: erfc-based formulas in float64 give 0 or garbage
    b = KernelBundle("ndtr_test", (Kernel("f", [t], [ndtr(t)]),))
    assert b.module("numpy").f(-30.0)[0] == pytest.approx(ref, rel=1e-13)
    with mpmath.workdps(30):
        assert abs(b.module("mpmath").f(mpmath.mpf(-30))[0] / mpmath.ncdf(-30) - 1) < 1e-25
    val = b.module("torch").f(torch.tensor([-30.0], dtype=torch.float64))[0]
    assert float(val[0]) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("tt,ss", [(0.0, 0.5), (0.7, 1.3), (-2.0, 0.1)])
def test_zeta_runtime_against_mpmath_quadrature(tt, ss):
    """ζ(t, s) = E erf(t + s g)²: the generated helper against an independent mpmath quadrature."""
    with mpmath.workdps(30):
        ref = mpmath.quad(lambda g: mpmath.erf(tt + ss * g) ** 2 * mpmath.npdf(g), [-mpmath.inf, 0, mpmath.inf])
    b = KernelBundle("zeta_test", (Kernel("z", [t, s], [zeta_erf2(t, s)]),))
    assert b.module("numpy").z(tt, ss)[0] == pytest.approx(float(ref), abs=1e-14)
    with mpmath.workdps(25):
        assert abs(b.module("mpmath").z(mpmath.mpf(tt), mpmath.mpf(ss))[0] - ref) < 1e-22
    assert "scipy" in b.source("numpy").split('"""')[1]  # the header names what the module needs


def test_zeta_closed_form_at_zero():
    lam = 0.37
    closed = 2 / math.pi * math.asin(2 * lam ** 2 / (1 + 2 * lam ** 2))
    mb = ModuleBuilder("z", "numpy")
    mb.add_kernel(Kernel("z", [s], [zeta_erf2(sp.S.Zero, s)]))
    assert load_module(mb.source()).z(lam)[0] == pytest.approx(closed, abs=1e-14)


def test_torch_log_softplus_stable_with_finite_gradients():
    x = torch.tensor([-800.0, -31.0, -29.0, 0.0, 30.0, 700.0], dtype=torch.float64, requires_grad=True)
    b = KernelBundle("lsp_test", (Kernel("f", [t], [LogSoftplus(t)]),))
    y = b.module("torch").f(x)[0]
    ref = [float(mpmath.log(mpmath.log1p(mpmath.exp(v)))) for v in x.detach().tolist()]
    np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-13)
    y.sum().backward()
    assert torch.isfinite(x.grad).all()


def test_torch_printer_constants_and_maxmin():
    assert print_expr(sp.sqrt(2) * t, "torch") == "1.4142135623730951*t"
    f = load_module("import torch\n\n" + Kernel("f", [t], [sp.Max(t, 0) + sp.Min(t, 1)]).source("torch"))
    x = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64)
    torch.testing.assert_close(f.f(x)[0], torch.clamp(x, min=0) + torch.clamp(x, max=1))
