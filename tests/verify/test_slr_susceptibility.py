"""The finite-D spin-glass susceptibility of ERM minimisers and claim C15-replicon
(attnlimits.verify.slr.susceptibility, docs/slr.md §10.8)."""
import math

import numpy as np
import torch

from attnlimits.verify.claims import base
from attnlimits.verify.slr.claims import finite as slr_finite  # noqa: F401  (registers the claims)
from attnlimits.verify.slr.susceptibility import _objective, erm_susceptibility


def test_claim_registered_with_a_stated_rule():
    c = base.REGISTRY["C15-replicon"]
    assert c.quick["D"] >= 200 and c.quick["seeds"] >= 3 and len(c.quick["alphas"]) >= 2
    assert c.full["seeds"] >= 6 and 4.0 in c.full["alphas"]
    assert "3 SE" in c.statement and "15 %" in c.statement


def test_erm_susceptibility_is_a_local_minimum_and_the_trace_of_the_squared_inverse():
    rows = erm_susceptibility("linear_uncentred", model="spiked", nu=2.0, L=2, alpha=8.0, lam=0.1, D=30, seeds=2,
                              seed=3)
    assert len(rows) == 2
    for r in rows:
        # a stationary point (L-BFGS stops on its change tolerance, |∇| ~ 1e-6 on an O(N) objective) that is a
        # local minimum
        assert r["lambda_min"] > 0 and r["grad_norm"] < 1e-5
        assert np.all(np.isfinite(r["chi"])) and r["chi"][0] > 0 and r["chi"][2] > 0
        # Cauchy–Schwarz on the blocks of the PSD matrix Hess⁻²: χ_kv² ≤ χ_kk χ_vv
        assert r["chi"][1] ** 2 <= r["chi"][0] * r["chi"][2]


def test_objective_hessian_is_the_ridge_hessian_for_a_constant_attention():
    # with σ ≡ 1 ("elementwise:1+0*t" is refused, so check the v-block of linear_uncentred at k = 0,
    # where σ = 1 and the v-Hessian is ΦᵀΦ + λI with Φ = Σ_ℓ x_ℓ/√D)
    D, N, L, lam = 6, 9, 2, 0.3
    g = torch.Generator().manual_seed(0)
    X = torch.randn(N, L, D, generator=g, dtype=torch.float64)
    y = torch.randn(N, generator=g, dtype=torch.float64)
    f = _objective("linear_uncentred", X, y, lam, D)
    th = torch.cat([torch.zeros(D, dtype=torch.float64), torch.randn(D, generator=g, dtype=torch.float64)])
    H = torch.autograd.functional.hessian(f, th)
    Phi = X.sum(dim=1) / math.sqrt(D)
    assert torch.allclose(H[D:, D:], Phi.T @ Phi + lam * torch.eye(D, dtype=torch.float64), atol=1e-10)
