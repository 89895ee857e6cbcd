r"""The SLR problem, validated once: data model, ν, length law, label noise Δ and the activation.

A command or an API call builds one :class:`SLRProblem` at its edge and passes it whole to the
solvers, so every input is parsed and checked in one place, with one error type
(:class:`attnlimits.symbolic.result.InputError`, a one-line message naming the option) and one name per
quantity (``delta`` for the label-noise variance Δ, from the command line to the solver).

- :class:`LengthLaw` — the one parser of a length law: an int, a list of ints (uniform law, docs/slr.md §3.4)
  or a dict ``{L: P(L)}``, kept sorted as ``((L, P), …)``;
- :func:`check_model_nu` — the data model and its spike strength (ν = ∞ for max-SLR only, docs/slr.md §2);
- :class:`SLRProblem` — the frozen problem.  ``activation`` is whatever the caller resolved: the
  :class:`attnlimits.derivations.slr.population.Activation` in process (resolved once by
  :func:`attnlimits.verify.slr.problem.slr_problem`), the activation's name in an exported solver that
  carries its kernels already printed.

This module imports only the standard library and :class:`InputError`: its text is copied into exported
solvers (``attnlimits export slr``) with that import rewritten.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from attnlimits.symbolic.result import InputError

__all__ = ["MODELS", "LengthLaw", "SLRProblem", "check_model_nu", "check_delta"]

#: the data models (docs/slr.md §2)
MODELS = ("spiked", "max")


@dataclass(frozen=True)
class LengthLaw:
    """A sequence-length law: ``items`` = sorted ``((L, P(L)), …)`` with probabilities summing to 1.

    ``label`` is the law as the command line shows it in a row's ``L`` column (``"2"``, ``"[2, 3]"``)."""

    items: tuple
    label: str = field(default="", compare=False)

    @classmethod
    def parse(cls, L, *, min_length: int = 1, option: str = "--L", why: str = "") -> "LengthLaw":
        """The law of ``L``: an int, a list of ints or a comma list ``"1,2,3"`` (uniform over the list) or a
        dict ``{L: P(L)}``; an existing :class:`LengthLaw` is returned as is (after the ``min_length`` check).
        Every length must be an integer ≥ ``min_length`` (``why`` says which theory needs it); bad input
        (``2.5``, ``"two"``) raises :class:`InputError`.

        >>> LengthLaw.parse("1,2").as_dict(), LengthLaw.parse(3).as_dict()
        ({1: 0.5, 2: 0.5}, {3: 1.0})
        """
        if isinstance(L, LengthLaw):
            law = L
        else:
            if isinstance(L, str) and "," in L:
                L = [v.strip() for v in L.split(",")]
            if isinstance(L, dict):
                items = [(_length(k, option), _probability(v, option)) for k, v in L.items()]
                label = str(L)
            elif isinstance(L, (list, tuple)):
                vals = [_length(v, option) for v in L]
                if len(set(vals)) != len(vals):
                    raise InputError(f"{option}: repeated length in {list(L)}")
                items = [(v, 1.0 / len(vals)) for v in vals]
                label = str(vals[0]) if len(vals) == 1 else str(vals)
            else:
                items = [(_length(L, option), 1.0)]
                label = str(L)
            if not items:
                raise InputError(f"{option}: the length law is empty")
            for Lv, p in items:
                if p < 0:
                    raise InputError(f"{option}: P(L={Lv}) = {p} is negative")
            tot = sum(p for _, p in items)
            if not math.isclose(tot, 1.0, rel_tol=1e-9):
                raise InputError(f"{option}: length probabilities sum to {tot}, not 1")
            law = cls(tuple(sorted(items)), label)
        for Lv, _ in law.items:
            if Lv < min_length:
                raise InputError(f"{option} must be >= {min_length}{why} (every length of the law), got {Lv}")
        return law

    @property
    def lengths(self) -> tuple:
        """The lengths of the law, increasing."""
        return tuple(Lv for Lv, _ in self.items)

    @property
    def max_length(self) -> int:
        return max(self.lengths)

    @property
    def variable(self) -> bool:
        """Whether more than one length has weight (docs/slr.md §3.4)."""
        return len(self.items) > 1

    def as_dict(self) -> dict:
        return {int(Lv): p for Lv, p in self.items}


def _length(v, option: str) -> int:
    """One sequence length: an integer (``3``, ``3.0``, ``"3"``), else :class:`InputError`."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise InputError(f"{option}: a length must be a positive integer, got {v!r}") from None
    if not (math.isfinite(f) and f == int(f)):
        raise InputError(f"{option}: a length must be a positive integer, got {v!r}")
    return int(f)


def _probability(v, option: str) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        raise InputError(f"{option}: a length probability must be a number, got {v!r}") from None


def check_model_nu(model, nu, *, prefix: str = "--") -> float:
    """Validate the data model and ν (ν = ∞ for max-SLR only); returns ν as a float.  The messages name the
    options ``{prefix}model`` and ``{prefix}nu`` (the command line's by default; ``prefix=""`` for Python)."""
    if model not in MODELS:
        raise InputError(f"{prefix}model must be 'spiked' or 'max', got {model!r}")
    try:
        nu = float(nu)
    except (TypeError, ValueError):
        raise InputError(f"{prefix}nu must be a number >= 0 (or inf for max-SLR), got {nu!r}") from None
    if math.isnan(nu) or nu < 0:
        raise InputError(f"{prefix}nu must be >= 0, got {nu}")
    if math.isinf(nu) and model == "spiked":
        raise InputError(f"{prefix}nu inf is defined for max-SLR only (spiked-SLR needs a finite spike)")
    return nu


def check_delta(delta) -> float:
    """Validate the label-noise variance Δ ≥ 0 (finite); returns it as a float."""
    try:
        d = float(delta)
    except (TypeError, ValueError):
        raise InputError(f"--delta must be a number >= 0, got {delta!r}") from None
    if not (d >= 0 and math.isfinite(d)):
        raise InputError(f"--delta must be >= 0, got {delta}")
    return d


@dataclass(frozen=True)
class SLRProblem:
    """One SLR problem, validated once (:meth:`build`) and passed whole to the solvers.

    ``model`` ("spiked" or "max"), ``nu`` (a float, ∞ allowed for max-SLR), ``lengths`` (a :class:`LengthLaw`),
    ``delta`` (the label-noise variance Δ), ``activation`` (resolved by the caller; see the module docstring),
    ``extra`` (the value of a fixed extra scalar of the activation, ``None`` for its default) and ``loss`` (the
    per-sample loss of ERM by its canonical name)."""

    model: str
    nu: float
    lengths: LengthLaw
    delta: float = 0.1
    activation: Any = field(default=None, compare=False)
    extra: float | None = None
    loss: str = "square"

    @classmethod
    def build(cls, model, nu, L, *, delta=0.1, activation=None, extra=None, loss="square", min_length: int = 1,
              why: str = "") -> "SLRProblem":
        """Validate the inputs once and build the problem (``L`` as :meth:`LengthLaw.parse` takes it)."""
        nu = check_model_nu(model, nu)
        law = LengthLaw.parse(L, min_length=min_length, why=why)
        if extra is not None:
            try:
                extra = float(extra)
            except (TypeError, ValueError):
                raise InputError(f"--extra must be a number, got {extra!r}") from None
        return cls(model, nu, law, check_delta(delta), activation, extra, str(loss))

    @property
    def activation_name(self) -> str:
        """The activation's canonical name (or the name itself when the problem carries a name)."""
        return getattr(self.activation, "name", self.activation)

    def with_delta(self, delta) -> "SLRProblem":
        """The same problem at another label-noise variance (validated)."""
        return SLRProblem(self.model, self.nu, self.lengths, check_delta(delta), self.activation, self.extra,
                          self.loss)
