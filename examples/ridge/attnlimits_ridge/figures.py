"""The figure of the result: the test error against γ at λ = 0.1, theory line and
simulation markers with ± SE, and the residuals in SE below."""
from __future__ import annotations

import numpy as np


def risk_vs_gamma(out, mode, seed, device):
    from attnlimits.verify.figures import axes

    from .model import solve
    from .simulation import simulate

    size = {"d": 100, "seeds": 20} if mode == "quick" else {"d": 400, "seeds": 100}
    lam = 0.1
    fig, ax, rax = axes("ridge test error vs γ = d/n (λ = 0.1, r² = 1, σ² = 0.25)", "γ = d/n", "test error",
                        logx=True, residual=True)
    dense = list(np.geomspace(0.2, 5.0, 80))
    theory = solve(dense, lam)
    ax.plot(dense, [r["test_error"] for r in theory], "-", color="k", label="theory (d/n → γ)")
    rows = [{"panel": "ridge-risk-gamma", "kind": "theory", "gamma": r["gamma"], "test_error": r["test_error"],
             "lam": lam} for r in theory]
    xs, ms, ses, zs = [], [], [], []
    for g in (0.25, 0.5, 1.0, 2.0, 4.0):
        th = solve([g], lam)[0]["test_error"]
        mean, se, _ = simulate(g, lam, d=size["d"], seeds=size["seeds"], seed=seed, device=device)
        xs.append(g), ms.append(mean), ses.append(se), zs.append((mean - th) / se)
        rows.append({"panel": "ridge-risk-gamma", "kind": "simulation", "gamma": g, "test_error": mean,
                     "test_error_se": se, "theory": th, "lam": lam, "d": size["d"], "seeds": size["seeds"]})
    ax.errorbar(xs, ms, yerr=ses, fmt="o", color="C3", capsize=2, label=f"ridge on generated data, d = {size['d']}")
    rax.plot(xs, zs, "o", color="C3")
    note = f"simulation: d = {size['d']}, {size['seeds']} draws per point from seed {seed}"
    return fig, ax, rows, note
