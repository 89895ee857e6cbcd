r"""Interpolation error of nonlinear attention versus ridge regression (random matrix theory).

Liao, Liu, Hou, Zou, Ling, arXiv:2506.18656.  The equations are in
:mod:`attnlimits.derivations.attention_rmt.equations` (SymPy; imported on first use, since building ȳ by
Woodbury takes a few seconds), the portable driver of the generated solver in
:mod:`attnlimits.derivations.attention_rmt._driver`, and the plug-in declaration (commands, parameters,
references; plain data) in :mod:`attnlimits.derivations.attention_rmt.result`.

Every public name of :mod:`attnlimits.derivations.attention_rmt.equations` is available here
(``from attnlimits.derivations import attention_rmt as R; R.bulk_system``).
"""
import importlib as _importlib

_EQUATIONS = "attnlimits.derivations.attention_rmt.equations"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    mod = _importlib.import_module(_EQUATIONS)
    try:
        return getattr(mod, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__():
    return sorted(set(globals()) | set(_importlib.import_module(_EQUATIONS).__all__))
