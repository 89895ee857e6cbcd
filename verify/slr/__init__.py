"""Single-location regression in PyTorch and by name: samplers, estimators, Bayes MC, training, [M].

Modules: :mod:`attnlimits.verify.slr.samplers` (projection and sequence samplers, teachers, overlaps),
:mod:`attnlimits.verify.slr.estimators` (generated attention weights, direct and projection risks),
:mod:`attnlimits.verify.slr.bayes_mc` (Bayes quantities, calibration), :mod:`attnlimits.verify.slr.training` (online
training), :mod:`attnlimits.verify.slr.predecessor` ([M]), :mod:`attnlimits.verify.slr.theory` (``SLRTheory``: the
population/Bayes numbers of one SLRProblem, with the derived kernels) and
:mod:`attnlimits.verify.slr.population_command` (``attnlimits slr population``).  The public names are
re-exported here (``from attnlimits.verify.slr import sample_projections, theory_of``).
"""
from attnlimits.verify.torch_device import resolve_device  # noqa: F401

from . import bayes_mc as _bayes_mc_module
from . import estimators, predecessor, samplers, theory, training  # noqa: F401
from .bayes_mc import *  # noqa: F401,F403
from .estimators import *  # noqa: F401,F403
from .predecessor import *  # noqa: F401,F403
from .samplers import *  # noqa: F401,F403
from .theory import *  # noqa: F401,F403
from .training import *  # noqa: F401,F403

__all__ = (list(samplers.__all__) + list(estimators.__all__) + list(_bayes_mc_module.__all__) + list(training.__all__)
           + list(predecessor.__all__) + list(theory.__all__) + ["resolve_device"])
