r"""Single-location regression (SLR): the model and its equations, written once in SymPy.

Source: Duranthon, Marion, Boyer, Loureiro, Zdeborová, arXiv:2509.21936 ([D]); the predecessor
Marion, Berthier, Biau, Boyer, arXiv:2410.01537 ([M]).  Modules:

- :mod:`attnlimits.derivations.slr.population` — data models, attention variants, risks, linear closed
  forms, quoted-vs-derived statements (population level);
- :mod:`attnlimits.derivations.slr.bayes` — ratio condition, posterior, Nishimori and Stein identities,
  quadrature representations of the Bayes risk, asymptotics;
- :mod:`attnlimits.derivations.slr.predecessor` — [M]'s manifold risk, ζ and Prop. 3, the notation map;
- :mod:`attnlimits.derivations.slr.replica` — the replica-symmetric theory of ridge ERM at finite α (§10);
- :mod:`attnlimits.derivations.slr.bayes_optimal` — the Bayes-optimal state evolution at finite α (§11);
- :mod:`attnlimits.derivations.slr.kernels` — the generated kernels (:func:`activation_kernels`,
  :func:`slr_kernels`) that ``numeric/`` evaluates and ``verify/`` prints for PyTorch;
- :mod:`attnlimits.derivations.slr.result` — the plug-in declaration (commands and parameters; plain data).

The names of :mod:`attnlimits.derivations.slr.population` (and ``activation_kernels``, ``slr_kernels``)
are available here (``from attnlimits.derivations import slr as S; S.activation("softmax")``), imported on
first use so that the command line can read :mod:`attnlimits.derivations.slr.result` without importing SymPy.
"""
import importlib as _importlib

_SUBMODULES = ("population", "bayes", "predecessor", "replica", "bayes_optimal", "kernels", "result", "symbols")
_FROM_KERNELS = ("activation_kernels", "slr_kernels")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    if name in _FROM_KERNELS:
        return getattr(_importlib.import_module(f"{__name__}.kernels"), name)
    population = _importlib.import_module(f"{__name__}.population")
    if name == "QUOTED":  # built lazily (the derived sides need the closed forms)
        return population.quoted_statements()
    try:
        return getattr(population, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__():
    population = _importlib.import_module(f"{__name__}.population")
    return sorted(set(globals()) | set(population.__all__) | set(_SUBMODULES) | set(_FROM_KERNELS))
