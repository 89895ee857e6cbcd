"""§1, §9 — the numerical method: NumPy against mpmath solvers (ID-backends), the exported standalone
solver (ID-export), the implicit derivative against a central difference (ID-derivative)."""
from __future__ import annotations


from attnlimits.verify.claims.property_claims import property_claim
from attnlimits.verify.claims.base import Check, Claim

from .common import hermite, rmt_model, source

__all__ = ["SPEC_CHECKS", "CLAIMS"]

#: ID-backends is the property ``rmt-mpmath-equals-float64`` (:mod:`attnlimits.verify.rmt.properties`)
#: at these points: aligned, random, general (key and query at different angles) and anti-aligned weights.
_BACKEND_POINTS = (
    {"activation": "tanh", "c": 0.5, "gamma": 0.1, "snr": 1.0, "wk": 1.0, "wq": 1.0},
    {"activation": "tanh", "c": 2.0, "gamma": 0.01, "snr": 0.0, "wk": 0.0, "wq": 0.0},
    {"activation": "tanh", "c": 0.25, "gamma": 1.0, "snr": 4.0, "wk": 0.6, "wq": 0.8},
    {"activation": "tanh", "c": 1.0, "gamma": 3.0, "snr": 1.0, "wk": 1.0, "wq": -1.0},
)


def _run_derivative(ctx, size):
    h = hermite(ctx, "tanh")
    rmt = rmt_model(ctx)
    checks = []
    step = 1e-4
    pts = ({"c": 0.5, "snr": 1.0, "wk": [1], "wq": [1]}, {"c": 2.0, "snr": 0.0, "wk": [], "wq": []},
           {"c": 0.25, "snr": 4.0, "wk": [0.6, 0.5, 0.0], "wq": [0.8, 0.0, 0.4]})
    for pt in pts:
        for g in (1e-3, 0.1, 10.0):
            recs = rmt.curve(pt["c"], [g * (1 + step), g, g * (1 - step)], a1=float(h.a1), nu=float(h.nu),
                             snr=pt["snr"], wk=pt["wk"], wq=pt["wq"], error_estimate=False)
            cd = -g * g * (recs[0]["ybar"] - recs[2]["ybar"]) / (2 * g * step)
            checks.append(Check(f"c={pt['c']:g} SNR {pt['snr']:g} γ={g:g}: implicit vs central diff",
                                theory=recs[1]["E_attention"], value=cd, se=None, tolerance=1e-6,
                                note="central difference of ȳ at γ(1 ± 1e-4) (§6)"))
    return checks, [], {"points": list(pts), "relative_step": step, "activation": "tanh"}


#: claim name → its deterministic theory-vs-spec checks (no Monte Carlo)
SPEC_CHECKS = {}

#: the claims of this part, in the registry's order
CLAIMS = [
    property_claim("rmt-mpmath-equals-float64", "ID-backends", "NumPy and mpmath solvers agree",
                   "The generated float64 and mpmath solvers give the same Ē and Ē_RR to 1e-10 (times max(1, |Ē|), "
                   "or 3× the quadrature error float64 states if larger): the property rmt-mpmath-equals-float64 at "
                   "fixed points, to 1e-10.",
                   source("Theorem 1, Prop. 2", "§1, §9"),
                   quick={"points": list(_BACKEND_POINTS[:2]), "digits": 25, "relative_tolerance": 1e-10},
                   full={"points": list(_BACKEND_POINTS), "digits": 30, "relative_tolerance": 1e-10},
                   tags=("rmt", "identity", "theory-only")),
    property_claim("rmt-exported-equals-inprocess", "ID-export", "the exported standalone solver gives the in-process numbers",
                   "The file `attnlimits export rmt` writes (numpy only, run as its own process) gives the in-process "
                   "Ē and Ē_RR to 1e-12 (times max(1, |Ē|)), at c < 1 and c > 1, with and without weights: the "
                   "property rmt-exported-equals-inprocess at fixed points.",
                   source("Theorem 1, Prop. 2", "§1, §9"),
                   quick={"points": [
                       {"activation": "tanh", "c": 0.5, "gamma": 0.1, "snr": 1.0, "wk": 0.0, "wq": 0.0},
                       {"activation": "relu", "c": 2.0, "gamma": 0.01, "snr": 0.5, "wk": 1.0, "wq": 0.5}]},
                   full={"points": [
                       {"activation": "tanh", "c": 0.5, "gamma": 0.1, "snr": 1.0, "wk": 0.0, "wq": 0.0},
                       {"activation": "relu", "c": 2.0, "gamma": 0.01, "snr": 0.5, "wk": 1.0, "wq": 0.5},
                       {"activation": "sin", "c": 4.0, "gamma": 1.0, "snr": 2.0, "wk": -1.0, "wq": 1.0},
                       {"activation": "erf", "c": 0.25, "gamma": 0.001, "snr": 0.0, "wk": 0.0, "wq": 0.0}]},
                   tags=("rmt", "identity", "theory-only")),
    Claim("ID-derivative", "implicit dȳ/dγ equals a central difference",
          "Ē = −γ²dȳ/dγ from the implicit-function theorem agrees with a central difference at "
          "γ(1 ± 1e-4) to 1e-6.",
          source("Theorem 1", "§6, §9"), _run_derivative, quick={}, full={}, tags=("rmt", "identity", "theory-only")),
]
