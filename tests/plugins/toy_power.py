"""Test-only properties for the power and the false-alarm rate of ``attnlimits explore``.

``small_error``: a Monte Carlo estimate from ``R`` independent replicate means (SE from their spread,
``R − 1`` degrees of freedom, as a property that averages seeds) of a quantity whose true value is
``1 + shift`` on ``x > 0.7`` and 1 elsewhere, against the "theory" 1.  Each replicate mean has standard
deviation 0.02, so the SE is 0.02/√R: 0.005 at the screening size R = 16, where the planted shift
0.0125 (1.25 %) is 2.5 SE; 0.0025 at the confirmation size R = 64 (5 SE).  ``toy-small-error`` plants it,
``toy-null`` (shift 0) is the same statement without an error: any failure is a false alarm.

``small_domain``: a statement on a domain of 12 points (no point may be evaluated twice; ``CALLS``
counts the evaluations per point and seed).  ``precondition``: not evaluable on ``x > 0.5``.
"""
import numpy as np

from attnlimits.symbolic.properties import Choice, IntRange, NotEvaluable, Property, Range
from attnlimits.symbolic.result import Result
from attnlimits.verify.comparison import Comparison

SHIFT = 0.0125
REPLICATE_SD = 0.02
CALLS: dict = {}


def _estimate(point, size, seed, shift):
    rng = np.random.default_rng(seed)
    reps = int(size.get("replicates", 16))
    means = 1.0 + (shift if point["x"] > 0.7 else 0.0) + REPLICATE_SD * rng.standard_normal(reps)
    return [("estimate = 1", Comparison(float(means.mean()), 1.0, se=float(means.std(ddof=1) / np.sqrt(reps)),
                                        dof=reps - 1))]


def small_error(point, *, size, seed):
    return _estimate(point, size, seed, SHIFT)


def null(point, *, size, seed):
    return _estimate(point, size, seed, 0.0)


def small_domain(point, *, size, seed):
    key = (tuple(sorted(point.items())), seed)
    CALLS[key] = CALLS.get(key, 0) + 1
    return _estimate({"x": 0.0}, size, seed, 0.0)


def precondition(point, *, size, seed):
    if point["x"] > 0.5:
        raise NotEvaluable(f"the solver did not converge at x = {point['x']:.3g} (a precondition, not a failure)")
    return _estimate(point, size, seed, 0.0)


_DOMAIN = {"x": Range(0.0, 1.0), "y": Range(0.1, 10.0, scale="log"), "kind": Choice(("a", "b", "c"))}
PROPERTIES = (
    Property("toy-small-error", "toypower", "a 1.25 % error (2.5 SE at the screening size) on x > 0.7", dict(_DOMAIN),
             evaluate="toy_power:small_error", kind="simulation", quick={"replicates": 16},
             confirm={"replicates": 64}),
    Property("toy-null", "toypower", "the same statement without an error", dict(_DOMAIN), evaluate="toy_power:null",
             kind="simulation", quick={"replicates": 16}, confirm={"replicates": 64}),
    Property("toy-small-domain", "toypower", "a domain of 12 points",
             {"k": IntRange(1, 3), "kind": Choice(("a", "b", "c", "d"))}, evaluate="toy_power:small_domain",
             kind="simulation", quick={"replicates": 16}, confirm={"replicates": 64}),
    Property("toy-precondition", "toypower", "not evaluable on x > 0.5", {"x": Range(0.0, 1.0)},
             evaluate="toy_power:precondition", kind="simulation", quick={"replicates": 16},
             confirm={"replicates": 64}),
)

RESULT = Result(name="toypower", title="test-only properties: power and false alarms", properties=PROPERTIES)
