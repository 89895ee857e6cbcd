"""The evaluation of the result's property (declared in ``result.py``; ``attnlimits explore`` searches it, and
the claim RIDGE-1 is the same statement at fixed points).

``ridge-vs-simulation``: over γ and λ, the limiting test error matches ridge trained on generated data
at dimension ``d`` (mean over ``seeds`` draws, Student t with ``seeds − 1`` degrees of freedom), with a
finite-size allowance measured in the same run: the correction decays at least like d^(-1/2), so what
remains at d is at most |E(d) − E(d/2)|/(√2 − 1) ≈ 2.5·|E(d) − E(d/2)|.
"""
from __future__ import annotations

from attnlimits.verify.comparison import Comparison


def vs_simulation(point, *, size, seed):
    from .model import solve
    from .simulation import simulate

    g, lam = float(point["gamma"]), float(point["lam"])
    theory = solve([g], lam)[0]["test_error"]
    device = size.get("device", "cpu")
    mean, se, dof = simulate(g, lam, d=int(size["d"]), seeds=int(size["seeds"]), seed=seed, device=device)
    half, _, _ = simulate(g, lam, d=int(size["d"]) // 2, seeds=int(size["seeds"]), seed=seed + 1, device=device)
    return [("test error R", Comparison(mean, theory, se=se, dof=dof, allowance=2.5 * abs(mean - half)))]
