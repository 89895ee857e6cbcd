"""Single-location regression in PyTorch: samplers, Monte Carlo estimators, Bayes MC, training, [M].

Everything lives in :mod:`verify.slr.montecarlo` for now and is re-exported here
(``from verify.slr import sample_projections``).
"""
from verify._torchutil import resolve_device  # noqa: F401

from .montecarlo import *  # noqa: F401,F403
from .montecarlo import __all__ as _all

__all__ = list(_all) + ["resolve_device"]
