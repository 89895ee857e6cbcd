r"""Single-location regression (SLR): the model and its equations, written once in SymPy.

Source: Duranthon, Marion, Boyer, Loureiro, Zdeborová, arXiv:2509.21936 ([D]); the predecessor
Marion, Berthier, Biau, Boyer, arXiv:2410.01537 ([M]).  Modules:

- :mod:`derivations.slr.population` — data models, attention variants, risks, linear closed
  forms, quoted-vs-derived statements (population level);
- :mod:`derivations.slr.bayes` — ratio condition, posterior, Nishimori and Stein identities,
  quadrature representations of the Bayes risk, asymptotics;
- :mod:`derivations.slr.predecessor` — [M]'s manifold risk, ζ and Prop. 3, the notation map;
- :mod:`derivations.slr.replica` — the RS system of ridge ERM at finite α (§10): prior part,
  z-elimination, loss Hessian, exact linear prox polynomial, conjugate updates, kernels.

The public names of all three are re-exported here (``from derivations import slr as S``).
"""
from . import bayes, population, predecessor, replica  # noqa: F401
from .population import *  # noqa: F401,F403
from .population import __all__ as _population_all
from .population import quoted_statements


def __getattr__(name):
    if name == "QUOTED":  # built lazily (the derived sides need the closed forms)
        return quoted_statements()
    if not name.startswith("__") and hasattr(population, name):  # the population module's other names
        return getattr(population, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(_population_all) + ["bayes", "population", "predecessor", "replica"]
