"""The random-matrix result's verification (docs/attention_rmt.md): Monte Carlo of the interpolation error
(:mod:`.montecarlo`), the ``attnlimits rmt`` command and its export (:mod:`.commands`), the claims (:mod:`.claims`) and
the explore properties (:mod:`.properties`).

Lazy face (importing it does not import torch): ``simulate_attention``, ``probe_error_explicit``,
``probe_errors_cholesky``, ``noise_kernel_stieltjes``, ``AttentionMCResult``, ``MCOptions``, ``torch_activation``.
"""
from __future__ import annotations

import importlib

_EXPORTS = {"montecarlo": ["simulate_attention", "probe_error_explicit", "probe_errors_cholesky",
                           "noise_kernel_stieltjes", "AttentionMCResult", "MCOptions", "torch_activation"]}
_WHERE = {name: mod for mod, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
