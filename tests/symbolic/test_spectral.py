"""Marchenko–Pastur law of T: moments, quadrature, spectral-average calculus (docs/attention_rmt.md §5, §9)."""
from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from attnlimits.derivations import attention_rmt as R
from attnlimits.numeric import compile_model
from attnlimits.symbolic.spectral import MarchenkoPasturLaw, SpectralAverage, replace_averages_by_moments

c = sp.Symbol("c", positive=True)
t, x = sp.symbols("t x", nonnegative=True)


def test_moments_match_spec():
    law = MarchenkoPasturLaw(c)
    assert sp.simplify(law.moment(1) - c) == 0
    assert sp.simplify(law.moment(2) - (c + c**2)) == 0
    assert sp.simplify(law.moment(3) - c * (1 + 3 * c + c**2)) == 0


@pytest.mark.parametrize("cv", [sp.Rational(1, 2), sp.Integer(2)])
def test_density_mass_and_moments_by_mpmath(cv):
    # independent check: integrate the closed-form density with mpmath.quad
    law = MarchenkoPasturLaw(cv)
    xm, xp = [float(e) for e in law.edges()]
    dens = sp.lambdify(x, law.density_x(x), "mpmath")
    mass = mpmath.quad(dens, [xm, xp])
    assert float(mass) == pytest.approx(float(law.continuous_mass()), abs=1e-12)
    m2 = mpmath.quad(lambda u: (cv * u) ** 2 * dens(u), [xm, xp])
    assert float(m2) == pytest.approx(float(law.moment(2).subs(c, cv)), abs=1e-10)


@pytest.mark.parametrize("cv", [0.25, 0.5, 1.0, 2.0, 4.0])
def test_float_quadrature_is_spectrally_exact(cv):
    # §9: mass and first two moments exact to 1e-12 with the midpoint rule in theta
    mod = compile_model(R.model, "numpy")
    tn, w = mod.law_nodes(cv, 3000)
    assert w.sum() == pytest.approx(1.0, abs=1e-12)
    for k, expected in [(1, cv), (2, cv + cv**2), (3, cv * (1 + 3 * cv + cv**2))]:
        assert w @ tn**k == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("dps", [30, 50])
def test_mpmath_quadrature_at_two_precisions(dps):
    mod = compile_model(R.model, "mpmath")
    with mpmath.workdps(dps):
        cv = mpmath.mpf(1) / 2
        tn, w = mod.law_nodes(cv, 8)
        m3 = mpmath.fsum(wi * ti**3 for ti, wi in zip(tn, w))
        assert abs(m3 - cv * (1 + 3 * cv + cv**2)) < mpmath.mpf(10) ** (-dps + 3)


def test_average_calculus():
    law = MarchenkoPasturLaw(c)
    a = sp.Symbol("a")
    avg = SpectralAverage(a * t**2 / (1 + a * t), t, law)
    d = sp.diff(avg, a)
    assert isinstance(d, SpectralAverage)
    assert sp.simplify(d.integrand - sp.diff(a * t**2 / (1 + a * t), a)) == 0
    assert SpectralAverage(a + 1, t, law) == a + 1  # mass one
    with pytest.raises(NotImplementedError, match="law parameter"):
        sp.diff(avg, c)
    assert avg.free_symbols == {a, c}


def test_replace_averages_by_moments():
    law = MarchenkoPasturLaw(c)
    e = SpectralAverage(t**2 + 3 * t, t, law) + 1
    assert sp.simplify(replace_averages_by_moments(e) - (c + c**2 + 3 * c + 1)) == 0
