r"""Build an :class:`attnlimits.numeric.slr.problem.SLRProblem` from names, once, at the edge of a command or API call.

:func:`slr_problem` validates the data model, ν, the length law and Δ (:meth:`SLRProblem.build`), resolves the
activation name into its :class:`attnlimits.derivations.slr.population.Activation` (:func:`resolve_activation`) and
the loss into its canonical name, and returns the frozen problem that the solvers then take whole.  Every bad
input is an :class:`attnlimits.symbolic.result.InputError` with a one-line message.

>>> p = slr_problem("spiked", 2, [2, 3], delta=0.1, activation="softmax")
>>> p.activation.name, p.lengths.items, p.delta
('softmax', ((2, 0.5), (3, 0.5)), 0.1)
"""
from __future__ import annotations

from attnlimits.numeric.slr.problem import LengthLaw, SLRProblem, check_delta, check_model_nu
from attnlimits.symbolic.result import InputError

__all__ = ["LengthLaw", "SLRProblem", "check_delta", "check_model_nu", "resolve_activation", "slr_problem"]


def resolve_activation(name):
    """The :class:`attnlimits.derivations.slr.population.Activation` of ``name`` (a docs/slr.md §4 full name, an
    ``elementwise:``/``normalised:`` text, or an Activation, returned as is); an unknown or ambiguous name is an
    :class:`InputError` naming the choices."""
    from attnlimits.derivations.slr.population import Activation, activation
    from attnlimits.symbolic.hermite import ActivationError

    if isinstance(name, Activation):
        return name
    try:
        return activation(name)
    except ActivationError as exc:
        raise InputError(str(exc)) from None


def slr_problem(model, nu, L, *, delta=0.1, activation=None, extra=None, loss="square", min_length: int = 1,
                why: str = "") -> SLRProblem:
    """The validated :class:`SLRProblem` of names: ``activation`` resolved once (``None`` for a problem without
    one, such as the Bayes risk), ``loss`` by its canonical name
    (:func:`attnlimits.derivations.slr.losses.parse_loss`); ``min_length``/``why`` as in :meth:`LengthLaw.parse`."""
    from attnlimits.derivations.slr.losses import parse_loss

    act = None if activation is None else resolve_activation(activation)
    lo = parse_loss(None if loss is None else str(loss)).name
    return SLRProblem.build(model, nu, L, delta=delta, activation=act, extra=extra, loss=lo, min_length=min_length,
                            why=why)
