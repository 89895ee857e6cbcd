"""Properties of a result: statements over a declared parameter domain, as plain data.

A :class:`Property` names a result, a domain (one spec per parameter) and an evaluation function
``"module:function"`` (imported only when the property runs, like a command's ``run``)::

    Property("bayes-bound", result="slr", title="optimal population risk >= Bayes risk",
             domain={"nu": Range(0.25, 8, scale="log"), "L": IntRange(1, 5),
                     "activation": Choice(("softmax", "linear_uncentred"))},
             evaluate="attnlimits.verify.slr.properties:bayes_bound")

The evaluation function is called as ``evaluate(point, *, size, seed)`` with ``point`` a mapping
parameter → value drawn from the domain, ``size`` the property's ``quick`` (screening) or
``confirm`` size, and an explicit ``seed``; it returns a list of ``(label, comparison)`` pairs,
each comparison an :class:`attnlimits.verify.comparison.Comparison` (a theory-only invariant has
no SE and is decided by its tolerance; a theory-versus-simulation check carries the simulation's
SE and degrees of freedom), or raises :class:`NotEvaluable` when a precondition of the statement
does not hold at the point.  ``attnlimits explore`` (:mod:`attnlimits.verify.explore`) draws the
points with Hypothesis from strategies *generated from these specs* — never written per property.

Nothing here imports SymPy, NumPy or the verification layer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["Range", "IntRange", "Choice", "Expression", "Property", "NotEvaluable", "domain_text", "simplest_point"]


class NotEvaluable(Exception):
    """Raised by an evaluation function when a *precondition* of its statement does not hold at the
    point (an iterative solver that did not converge, a branch that does not exist there): the message
    says why.  ``explore`` records the point with the verdict ``not-evaluable`` and that reason — it
    is neither a pass nor a failure, and it is never confirmed.  A random check must carry an error
    bar; a random *precondition* is reported this way instead of as a deterministic failure."""


@dataclass(frozen=True)
class Range:
    """A real interval ``[lo, hi]``, drawn uniformly in ``x`` (``scale="lin"``) or in ``log x`` (``"log"``)."""

    lo: float
    hi: float
    scale: str = "lin"

    def __post_init__(self):
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.lo < self.hi):
            raise ValueError(f"Range needs finite lo < hi, got [{self.lo}, {self.hi}]")
        if self.scale not in ("lin", "log"):
            raise ValueError(f"Range scale must be 'lin' or 'log', got {self.scale!r}")
        if self.scale == "log" and self.lo <= 0:
            raise ValueError("a log Range needs lo > 0")

    def text(self) -> str:
        return f"[{self.lo:g}, {self.hi:g}]" + (" (log)" if self.scale == "log" else "")

    def contains(self, v) -> bool:
        return isinstance(v, (int, float)) and self.lo <= float(v) <= self.hi


@dataclass(frozen=True)
class IntRange:
    """The integers ``lo..hi`` (both included)."""

    lo: int
    hi: int

    def __post_init__(self):
        if not int(self.lo) <= int(self.hi):
            raise ValueError(f"IntRange needs lo <= hi, got {self.lo}..{self.hi}")

    def text(self) -> str:
        return f"{self.lo}..{self.hi}"

    def contains(self, v) -> bool:
        return isinstance(v, int) and self.lo <= v <= self.hi


@dataclass(frozen=True)
class Choice:
    """One of ``values`` (names, numbers): the first is the simplest (what a failure shrinks to)."""

    values: tuple

    def __post_init__(self):
        if not self.values:
            raise ValueError("Choice needs at least one value")

    def text(self) -> str:
        return "{" + ", ".join(map(str, self.values)) + "}"

    def contains(self, v) -> bool:
        return v in self.values


@dataclass(frozen=True)
class Expression:
    """A formula in ``t`` generated from a small grammar: the leaves ``leaves``, the unary
    functions ``functions``, ``+ - *`` and small integer constants, nested at most ``depth`` deep."""

    leaves: tuple = ("t",)
    functions: tuple = ("exp", "tanh", "sin", "cos", "erf", "Abs", "sqrt", "log")
    depth: int = 4
    constants: tuple = (1, 2, 3, 6, 40, 1000)

    def text(self) -> str:
        return f"formulas in t: {', '.join(self.functions)}, + - *, depth <= {self.depth}"

    def contains(self, v) -> bool:
        return isinstance(v, str)


@dataclass(frozen=True)
class Property:
    """A statement of a result over a domain, checked point by point (module docstring).

    ``kind``: ``"theory"`` (invariants of the theory alone) or ``"simulation"`` (theory against
    Monte Carlo).  ``quick``: the size a point is screened at; ``confirm``: the (larger) size of the
    fresh, independent confirmation of a screened failure.  ``map``: the two parameters of the
    validity map (default: the first two numeric ones of the domain).  ``seconds``: the stated time
    bound of one point at quick size (a point past it is marked slow, not failed: wall time depends
    on the machine's load).
    """

    name: str
    result: str
    title: str
    domain: dict
    evaluate: str
    kind: str = "theory"
    quick: dict = field(default_factory=dict)
    confirm: dict = field(default_factory=dict)
    map: tuple = ()
    seconds: float = 60.0
    doc: str = ""

    def __post_init__(self):
        if self.kind not in ("theory", "simulation"):
            raise ValueError(f"Property kind must be 'theory' or 'simulation', got {self.kind!r}")
        for k, spec in self.domain.items():
            if not isinstance(spec, (Range, IntRange, Choice, Expression)):
                raise ValueError(f"{self.name}: domain entry {k!r} is not a Range/IntRange/Choice/Expression")

    def map_axes(self) -> tuple:
        if self.map:
            return tuple(self.map)
        numeric = [k for k, s in self.domain.items() if isinstance(s, (Range, IntRange))]
        others = [k for k in self.domain if k not in numeric]
        return tuple((numeric + others)[:2])


def domain_text(prop: Property) -> str:
    """One line: ``nu in [0.25, 8] (log), L in 1..5, activation in {softmax, ...}``."""
    return ", ".join(f"{k} in {s.text()}" for k, s in prop.domain.items())


def simplest_point(prop: Property) -> dict:
    """The simplest point of ``prop``'s domain: 0 where a range holds it (else its lower end), the first
    choice, the first leaf of an expression grammar (``t``).  The results contract evaluates every
    property there; it is also where a shrunk failure tends to."""
    out = {}
    for k, spec in prop.domain.items():
        if isinstance(spec, Range):
            out[k] = 0.0 if spec.lo <= 0.0 <= spec.hi else float(spec.lo)
        elif isinstance(spec, IntRange):
            out[k] = 0 if spec.lo <= 0 <= spec.hi else int(spec.lo)
        elif isinstance(spec, Choice):
            out[k] = spec.values[0]
        else:
            out[k] = spec.leaves[0]
    return out
