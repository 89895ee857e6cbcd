"""§3 — the exact finite-n identity (V1)."""
from __future__ import annotations


from attnlimits.verify.claims.base import Check, Claim

from .common import hermite, p_for, run_seed, source

__all__ = ["SPEC_CHECKS", "CLAIMS"]

# =============================================================================================
# V1 — exact identity of §3
# =============================================================================================

_V1_INSTANCES = (
    {"act": "tanh", "c": 0.5, "mu": [1.0], "wk": [1.0], "wq": [1.0], "diagonal": "zero", "kappa": None},
    {"act": "relu", "c": 2.0, "mu": [1.5], "wk": [0.6, 0.5, 0.0], "wq": [0.8, 0.0, 0.4],
     "diagonal": "keep", "kappa": None},
    {"act": "cos", "c": 0.5, "mu": None, "wk": None, "wq": None, "diagonal": "set", "kappa": 0.3},
)
_V1_GAMMAS = (1e-3, 1e-1, 10.0)


def _spec_V1(ctx):
    return []


def _run_V1(ctx, size):
    from attnlimits.verify.rmt.montecarlo import probe_error_explicit

    checks, rows = [], []
    n = size["n"]
    for k, inst in enumerate(_V1_INSTANCES):
        p = p_for(inst["c"], n)
        for g in _V1_GAMMAS:
            seed = run_seed(ctx, "V1", k)
            explicit, resolvent = probe_error_explicit(
                hermite(ctx, inst["act"]).centred, n, p, g, mu=inst["mu"], wk=inst["wk"], wq=inst["wq"],
                seed=seed, diagonal=inst["diagonal"], kappa=inst["kappa"], device=ctx.device)
            checks.append(Check(f"{inst['act']} c={inst['c']:g} γ={g:g}", theory=resolvent, value=explicit,
                                se=None, tolerance=1e-8, kind="rel",
                                note="explicit read-out error (value) vs γ²‖Qy‖²/n (theory), same draw"))
            rows.append({"activation": inst["act"], "c": inst["c"], "n": n, "p": p, "gamma": g,
                         "seed": seed, "explicit": explicit, "resolvent": resolvent,
                         "diagonal": inst["diagonal"]})
    return checks, [], {"instances": rows, "device": str(ctx.device)}


#: claim name → its deterministic theory-vs-spec checks (no Monte Carlo)
SPEC_CHECKS = {"V1": _spec_V1}

#: the claims of this part, in the registry's order
CLAIMS = [
    Claim("V1", "exact finite-n identity E = γ²‖Qy‖²/n",
          "For any instance, the explicit ridge read-out error equals γ²yᵀQ²y/n (push-through identity), "
          "to 1e-8 relative.", source("§2 (probe)", "§3, §12 V1"), _run_V1,
          quick={"n": 300}, full={"n": 1000}, tags=("rmt", "identity", "mc")),
]
