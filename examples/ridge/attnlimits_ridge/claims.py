"""The claim of the result: its property ``ridge-vs-simulation`` at three fixed points (one mechanism
for ``verify`` and ``explore``): under-parametrised, over-parametrised, and the interpolation peak."""
from __future__ import annotations

from attnlimits.verify.claims.property_claims import property_claim
from attnlimits.verify.claims.base import REGISTRY, register

POINTS = [{"gamma": 0.5, "lam": 0.1}, {"gamma": 2.0, "lam": 0.1}, {"gamma": 1.0, "lam": 1.0}]

if "RIDGE-1" not in REGISTRY:
    register(property_claim(
        "ridge-vs-simulation", "RIDGE-1", "the limiting ridge test error matches ridge trained on generated data",
        "R = r² λ² m'(−λ) + σ² γ (m − λ m'), m the Marchenko–Pastur Stieltjes transform at z = −λ",
        "Hastie et al. (2022) Thm. 5", quick={"points": POINTS, "d": 200, "seeds": 60},
        full={"points": POINTS, "d": 400, "seeds": 100}, tags=("ridge", "simulation"),
        references=("Hastie, Montanari, Rosset, Tibshirani, Ann. Statist. 50 (2022)",)))
