"""Test-only properties for ``attnlimits explore``: a planted wrong theory and a correct one.

``planted``: the "theory" says ``max(0, x − 0.7) = 0``, false exactly on ``x > 0.7`` (deterministic,
decided by its tolerance).  ``noisy_correct``: a Monte Carlo mean of N(0, 1) draws against its true
value 0 with its SE — a correct theory, so any failure is a false alarm.
"""
import numpy as np

from attnlimits.symbolic.properties import Choice, IntRange, Property, Range
from attnlimits.symbolic.result import Result
from attnlimits.verify.comparison import Comparison


def planted(point, *, size, seed):
    return [("max(0, x - 0.7) = 0", Comparison(max(0.0, point["x"] - 0.7), 0.0, tolerance=1e-9))]


def noisy_correct(point, *, size, seed):
    rng = np.random.default_rng(seed)
    draws = rng.standard_normal(int(size.get("n", 100)))
    return [("mean of N(0,1) = 0", Comparison(float(draws.mean()), 0.0, se=float(draws.std(ddof=1) / np.sqrt(draws.size)),
                                              dof=draws.size - 1))]


def screen_false_alarm(point, *, size, seed):
    """Fails at the screening size on x > 0.9 and passes at the confirmation size: every screened failure
    is a false alarm, which must not end the search."""
    bad = size.get("n") == 1 and point["x"] > 0.9
    return [("x <= 0.9 at the screening size only", Comparison(1.0 if bad else 0.0, 0.0, tolerance=0.5))]


PROPERTIES = (
    Property("toy-planted", "toyexplore", "a planted wrong theory: fails on x > 0.7",
             {"x": Range(0.0, 1.0), "k": IntRange(1, 5), "kind": Choice(("a", "b"))},
             evaluate="toy_properties:planted", kind="theory"),
    Property("toy-correct", "toyexplore", "a correct Monte Carlo statement",
             {"x": Range(0.01, 100.0, scale="log"), "kind": Choice(("a", "b", "c"))},
             evaluate="toy_properties:noisy_correct", kind="simulation", quick={"n": 100}, confirm={"n": 400}),
    Property("toy-false-alarm", "toyexplore", "fails at the screening size only (x > 0.9)",
             {"x": Range(0.0, 1.0)}, evaluate="toy_properties:screen_false_alarm", kind="simulation",
             quick={"n": 1}, confirm={"n": 2}),
)

RESULT = Result(name="toyexplore", title="test-only properties", properties=PROPERTIES)
