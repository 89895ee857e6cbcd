"""The claims registry. Importing this package registers every result's claims."""
from .base import (  # noqa: F401
    REGISTRY, Check, Claim, ClaimResult, Context, PlotSeries, PlotSpec, citation, register, run_claims, select,
)

from . import attention_rmt  # noqa: F401,E402  (registers V1–V20 and the identities)

__all__ = ["REGISTRY", "Check", "Claim", "ClaimResult", "Context", "PlotSeries", "PlotSpec",
           "citation", "register", "run_claims", "select"]
