"""Verification: Monte Carlo in PyTorch, the claims registry, reports, weights, the CLI.

Re-exports are lazy so that ``attnlimits rmt`` does not pay for importing torch.

- Estimates (:mod:`attnlimits.verify.stats`): ``mean_se``, ``MCEstimate``; devices
  (:mod:`attnlimits.verify.torch_device`): ``resolve_device``.
- The comparison rule (:mod:`attnlimits.verify.comparison`, shared by ``verify`` and ``explore``):
  ``Comparison``, ``p_value``, ``holm``, ``extrapolate``, ``combine``.
- Claims (:mod:`attnlimits.verify.claims`): ``REGISTRY``, ``Claim``, ``Check``, ``Context``, ``select``,
  ``run_claims``.
- Reports (:mod:`attnlimits.verify.report`): ``format_table``, ``write_report``.
- Weights (:mod:`attnlimits.verify.weights`): ``analyze_checkpoint``, ``fit_identity_plus_low_rank``,
  ``extract_heads``, ``load_state_dict``, ``CheckpointError``.

Each result has its own home and face: :mod:`attnlimits.verify.rmt` (Monte Carlo, commands, claims, properties of
the random-matrix result) and :mod:`attnlimits.verify.slr` (single-location regression); this face names none.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "stats": ["mean_se", "MCEstimate"],
    "comparison": ["Comparison", "p_value", "holm", "extrapolate", "combine"],
    "torch_device": ["resolve_device"],
    "claims": ["REGISTRY", "Claim", "Check", "Context", "select", "run_claims"],
    "report": ["format_table", "write_report"],
    "weights": ["analyze_checkpoint", "fit_identity_plus_low_rank", "extract_heads",
                "load_state_dict", "CheckpointError"],
}
_WHERE = {name: mod for mod, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
