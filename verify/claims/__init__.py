"""The claims registry.

Importing this package registers the claims of every registered result: each
:class:`attnlimits.symbolic.result.Result` (found through the ``attnlimits.results`` entry points) names
its claims module(s), which call :func:`register` when imported.
"""
import importlib as _importlib
import warnings as _warnings

from .base import (  # noqa: F401
    REGISTRY, Check, Claim, ClaimResult, Context, PlotSeries, PlotSpec, apply_family_rule, citation, register,
    run_claims, select,
)

__all__ = ["REGISTRY", "Check", "Claim", "ClaimResult", "Context", "PlotSeries", "PlotSpec",
           "apply_family_rule", "citation", "register", "run_claims", "select", "load_claims"]


def load_claims(results=None) -> dict:
    """Import the claims modules of ``results`` (default: every registered result); returns REGISTRY."""
    from attnlimits.symbolic.result import discover_results

    results = discover_results() if results is None else results
    for res in results.values():
        mods = res.claims if isinstance(res.claims, (tuple, list)) else (res.claims,)
        for mod in mods:
            if not mod:
                continue
            try:
                _importlib.import_module(mod)
            except Exception as exc:  # noqa: BLE001 - a broken plug-in must not hide the others
                _warnings.warn(f"attnlimits: claims module {mod!r} of result {res.name!r} failed to import: {exc}")
    return REGISTRY


load_claims()
