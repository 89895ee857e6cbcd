r"""The equations of the result, written once, in SymPy.

Model: :math:`x \sim N(0, I_d)`, :math:`y = x^\top\beta + \varepsilon` with :math:`\|\beta\|^2 = r^2` and
:math:`\varepsilon \sim N(0, \sigma^2)`; ``n`` samples, ridge estimator
:math:`\hat\beta = (X^\top X/n + \lambda I)^{-1} X^\top y/n`.  For :math:`d/n \to \gamma` the test error
:math:`R = \|\hat\beta - \beta\|^2` converges to (Hastie, Montanari, Rosset, Tibshirani, "Surprises in
high-dimensional ridgeless least squares interpolation", Ann. Statist. 2022, Thm. 5 for isotropic
features)

.. math::
    R = r^2 \lambda^2\, m'(-\lambda) + \sigma^2 \gamma\,\bigl(m(-\lambda) - \lambda\, m'(-\lambda)\bigr),

where :math:`m(z)` is the Stieltjes transform of the Marchenko–Pastur law of ratio :math:`\gamma` at
:math:`z = -\lambda`.  It is computed from the effective regularisation :math:`\kappa`, the positive fixed
point of

.. math::
    \kappa = \lambda + \frac{\gamma\,\kappa}{1 + \kappa}, \qquad m = \frac{\kappa}{\lambda\,(1 + \kappa)},

a map that is increasing and concave in :math:`\kappa` with value :math:`\lambda > 0` at 0, so plain
iteration from :math:`\kappa = \lambda` converges to the one positive root (the equivalent fixed point
:math:`m = 1/(1 - \gamma + \lambda + \gamma\lambda m)` repels it for :math:`\gamma > 1 + \lambda`).
Nothing is typed twice: :math:`m'(z) = -\,dm/d\lambda` is the implicit derivative of the fixed point,
taken by SymPy from the same equations.
"""
from __future__ import annotations

import sympy as sp

from attnlimits.symbolic.system import EquationSystem

# ``lamda`` is how SymPy spells a symbol it prints as λ (``lambda`` is a Python keyword)
kappa, gamma, lam, r2, sigma2 = sp.symbols("kappa gamma lamda r2 sigma2", positive=True)


def fixed_point_update() -> sp.Expr:
    """G(κ; γ, λ): the effective regularisation is the fixed point κ = G(κ)."""
    return lam + gamma * kappa / (1 + kappa)


def stieltjes() -> sp.Expr:
    """m(−λ) = κ / (λ (1 + κ)): λ m is the deterministic equivalent of tr λ(S + λ)⁻¹ / d = κ/(1 + κ)."""
    return kappa / (lam * (1 + kappa))


def dm_dlambda() -> sp.Expr:
    """dm/dλ at the fixed point: ∂m/∂λ + ∂m/∂κ · dκ/dλ, with dκ/dλ = −(∂F/∂λ)/(∂F/∂κ) for F = κ − G
    (implicit differentiation by SymPy, not typed)."""
    F = kappa - fixed_point_update()
    dkappa = -sp.diff(F, lam) / sp.diff(F, kappa)
    return sp.simplify(sp.diff(stieltjes(), lam) + sp.diff(stieltjes(), kappa) * dkappa)


def test_error() -> sp.Expr:
    """R(γ, λ; r², σ²) at the fixed point κ."""
    mprime = -dm_dlambda()  # m'(z) at z = −λ
    risk = r2 * lam**2 * mprime + sigma2 * gamma * (stieltjes() - lam * mprime)
    return sp.collect(sp.expand(sp.cancel(risk)), [r2, sigma2], sp.factor)  # a bias and a variance term


def system() -> EquationSystem:
    return EquationSystem(
        "ridge", [kappa], [gamma, lam, r2, sigma2], [fixed_point_update()],
        {"m": stieltjes(), "test_error": test_error()},
        initial_guess=[lam],
        source="Hastie, Montanari, Rosset, Tibshirani (2022), Thm. 5 (isotropic features)",
    )
