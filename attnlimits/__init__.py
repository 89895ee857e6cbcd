"""attnlimits: symbolic–numeric derivation and verification of attention-layer theory.

One import name for the whole system; the repository's folders are its layers::

    attnlimits.derivations   the equations of each result, written once in SymPy
    attnlimits.symbolic      the engine: Gaussian expectations, Hermite data, codegen, the registry
    attnlimits.numeric       solvers generated from the symbolic systems
    attnlimits.verify        Monte Carlo, training, the claims, reports and the command line

The public API below is what a notebook needs; every command of the command line has a Python
twin here with the same parameters, the same validation and the same errors
(:class:`InputError`, one line)::

    >>> import attnlimits as al
    >>> sorted(al.results())
    ['rmt', 'slr']
    >>> table = al.slr.population(model="spiked", nu=2, L=3, activation="linear_centred", progress=False)
    >>> round(table[0]["risk"], 12)                       # (L - 1)/(L + nu)
    0.4
    >>> table.to_frame()[["activation", "risk"]]          # doctest: +SKIP

Results of commands are :class:`Table` objects (a sequence of tidy rows with ``to_frame()`` and
``plot()``).  ``al.rmt``, ``al.slr`` and every result a plug-in registers are found through the
``attnlimits.results`` entry points (:func:`results`).
"""
from __future__ import annotations

import importlib as _importlib
import importlib.util as _importlib_util
from pathlib import Path as _Path


def _check_layers_installed() -> None:
    """The layers (derivations/, symbolic/, numeric/, verify/) are this package's subpackages only
    through the installed mapping (pyproject.toml ``package-dir``): a wheel copies them into this
    folder, an editable install maps each ``attnlimits.<layer>`` to its folder.  Nothing here extends
    the package's search path, so each file imports under exactly one module name.

    When this file is a checkout's (``PYTHONPATH=<checkout>``, or the checkout as working directory)
    its layers must be that checkout's too: an editable install of another checkout would otherwise
    pair this ``__init__`` with that checkout's code without a word.  Raise, naming both and the fix."""
    checkout = _Path(__file__).resolve().parent.parent
    if not ((checkout / "pyproject.toml").is_file() and (checkout / "verify" / "__init__.py").is_file()):
        return  # an installed wheel: the layers sit inside this folder
    spec = _importlib_util.find_spec(f"{__name__}.verify")
    origin = _Path(spec.origin).resolve().parent.parent if spec is not None and spec.origin else None
    if origin != checkout:
        found = f"installed from {origin}" if origin is not None else "not installed"
        raise ImportError(
            f"attnlimits is imported from the checkout {checkout} but its layers are {found}; install this "
            f"checkout in the interpreter that runs it (python -m venv --system-site-packages VENV && "
            f"VENV/bin/pip install --no-deps -e {checkout}) and run VENV/bin/python (README, \"Development\")")


_check_layers_installed()

from ._api import (
    InputError as InputError,
    Table as Table,
    __version__ as __version__,
    claims as claims,
    explore as explore,
    explore_properties as explore_properties,
    export as export,
    figure as figure,
    hermite as hermite,
    results as results,
    run as run,
    show as show,
    sweep as sweep,
    verify_claims as verify_claims,
    weights as weights,
)

__all__ = ["InputError", "Table", "__version__", "claims", "explore", "explore_properties", "export", "figure", "hermite", "results", "run",
           "show", "sweep", "verify_claims", "weights"]

_LAYERS = ("derivations", "symbolic", "numeric", "verify")


def __getattr__(name):
    """The layers on first use, and each registered result as a namespace of its commands
    (``al.slr.replica(...)``, ``al.rmt(...)``)."""
    if name in _LAYERS:
        return _importlib.import_module(f"{__name__}.{name}")
    from . import _api

    ns = _api.result_namespace(name)
    if ns is not None:
        return ns
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    from . import _api

    return sorted(set(globals()) | set(_LAYERS) | set(_api.results()))
