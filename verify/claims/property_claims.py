"""Claims that are properties evaluated at fixed points: one mechanism for ``verify`` and ``explore``.

A property (:mod:`attnlimits.symbolic.properties`) states something over a domain; ``attnlimits
explore`` draws its points with Hypothesis.  A claim that is naturally parametric is the same
property evaluated at the points the claim has always been checked at, so ``verify`` keeps its
meaning and the statement has one implementation::

    register(property_claim("rmt-mpmath-equals-float64", "ID-backends", "NumPy and mpmath solvers agree",
                            "...", source, quick={"points": [...], "digits": 25}, full={...}))

Each point must lie in the property's declared domain (checked when the claim runs).  Its
comparisons become :class:`~attnlimits.verify.claims.base.Check` rows labelled with the point; the
family-wise rule of ``verify`` then applies to them like to any other check.  The point's seed is
:meth:`Context.seed_for` of the claim and the point's index; ``size`` is the claim's size minus
``points``, plus the run's ``device``.  A point where the property is not evaluable (it raises
:class:`~attnlimits.symbolic.properties.NotEvaluable`: a precondition does not hold) fails the claim
with the reason — ``explore`` passes such a point over, but a claim states the property *there*.
"""
from __future__ import annotations

import sys

from attnlimits.symbolic.properties import NotEvaluable
from attnlimits.symbolic.result import discover_results, resolve

from .base import Check, Claim

__all__ = ["property_claim", "find_property", "point_tag"]


def find_property(name: str):
    """The :class:`~attnlimits.symbolic.properties.Property` called ``name`` among the installed results."""
    for res in discover_results().values():
        for prop in getattr(res, "properties", ()):
            if prop.name == name:
                return prop
    raise KeyError(f"no installed result declares a property {name!r}; see `attnlimits explore --list`")


def point_tag(point: dict) -> str:
    """``c=0.5, gamma=0.1, ...``: how a point is named in check labels."""
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in point.items())


def _check_in_domain(prop, point: dict, claim: str) -> None:
    missing = [k for k in prop.domain if k not in point]
    extra = [k for k in point if k not in prop.domain]
    outside = [k for k, spec in prop.domain.items() if k in point and not spec.contains(point[k])]
    if missing or extra or outside:
        raise ValueError(f"claim {claim}: point {point} is not in the domain of property {prop.name} "
                         f"(missing {missing}, unknown {extra}, outside {outside})")


def property_claim(prop_name: str, name: str, title: str, statement: str, source: str, *, quick: dict,
                   full: dict | None = None, tags: tuple = (), references: tuple = ()) -> Claim:
    """A :class:`Claim` that evaluates property ``prop_name`` at ``size["points"]`` (module docstring)."""

    def run(ctx, size):
        prop = find_property(prop_name)
        evaluate = resolve(prop.evaluate)
        points = list(size["points"])
        rest = {k: v for k, v in size.items() if k != "points"}
        rest.setdefault("device", ctx.device)
        checks = []
        for i, point in enumerate(points):
            _check_in_domain(prop, point, name)
            tag = point_tag(point)
            try:
                comps = list(evaluate(dict(point), size=dict(rest), seed=ctx.seed_for(name, i)))
            except NotEvaluable as exc:
                # the claim states the property at this point: a precondition that does not hold there
                # leaves the claim unverified, so it fails (loudly, with the reason), unlike in explore
                checks.append(Check.holds(f"evaluable ({tag})", False,
                                          note=f"property {prop_name}: not evaluable at this point: {exc}"))
                continue
            for label, c in comps:
                reason = "numerical" if float(c.tolerance) > 0 and not c.stochastic else ""
                theory = tuple(c.reference) if isinstance(c.reference, (tuple, list)) else c.reference
                checks.append(Check(f"{label} ({tag})", theory, c.value, c.se, float(c.tolerance),
                                    allowance=float(c.allowance), kind=c.kind, dof=c.dof, tolerance_reason=reason,
                                    note=f"property {prop_name} at this point"))
        return checks, [], {"property": prop_name, "points": points, "size": rest}

    # the claim belongs to the module that declares it (the results contract finds claims by module)
    caller = sys._getframe(1).f_globals.get("__name__", __name__)
    run.__module__ = caller
    run.__qualname__ = f"property_claim[{prop_name}]"
    return Claim(name, title, statement, source, run, quick=dict(quick), full=dict(full if full is not None else quick),
                 tags=tuple(tags) + ("property",), references=tuple(references))
