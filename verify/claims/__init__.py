"""The claims registry. Importing this package registers every result's claims."""
from .base import (  # noqa: F401
    REGISTRY, Check, Claim, ClaimResult, Context, PlotSeries, PlotSpec, citation, register, run_claims, select,
)

from . import attention_rmt  # noqa: F401,E402  (registers V1–V20 and the identities)
from . import slr_population  # noqa: F401,E402  (registers C1–C14, C20–C24, TRAIN-pop, Q1–Q3)

__all__ = ["REGISTRY", "Check", "Claim", "ClaimResult", "Context", "PlotSeries", "PlotSpec",
           "citation", "register", "run_claims", "select"]
