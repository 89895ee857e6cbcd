r"""The search: Hypothesis draws points of a property's domain, steers toward the largest discrepancy,
shrinks a failure to the simplest failing point, and confirms it on fresh draws before reporting it.

The false-alarm rule (stated in every report)
---------------------------------------------
A run explores ``K`` properties at family-wise level ``level`` (default 1 %, the level of
``attnlimits verify``: :data:`attnlimits.verify.comparison.LEVEL`); each property gets ``level/K``.

1. **Screen.** Each point's comparisons give p-values (:mod:`attnlimits.verify.comparison`: z or t
   with the right degrees of freedom). A point *screens as failing* when one of its ``m``
   stochastic comparisons has :math:`p < (\text{level}/K)/(B\,m)` (Bonferroni over the budget ``B``
   and the point's checks), or a deterministic comparison (no SE) exceeds its tolerance, or the
   evaluation raises.  A point past the property's stated time is marked ``slow`` but not failed
   (wall time depends on the machine's load; a property whose statement *is* a time bound, like
   ``grammar-answers``, measures it inside its evaluation).  The same point always gets
   the same draws (its seed is a hash of the run seed and the point), so Hypothesis's shrinking
   replays are exact.
2. **Shrink.** Hypothesis shrinks the first failure to the simplest point that still screens as
   failing; for numeric parameters of theory properties a bisection then moves each toward the
   simple end of its range while the point still fails (the boundary of the failing region).
3. **Confirm.** The shrunk point is evaluated once more at the ``confirm`` size with *fresh,
   independent* draws; the property fails only if this confirmation fails at level
   ``level/(K·MAX_CONFIRMATIONS)`` (Bonferroni over its ``m`` checks).  A failure that does not
   confirm (a false alarm of the screen) does not end the search: it goes on over the rest of the
   budget (no further shrinking; a later screened failure is confirmed where it was found), up to
   :data:`MAX_CONFIRMATIONS` confirmations per property.  For a correct theory a reported failure
   therefore needs a false confirmation, of probability at most ``level/K`` per property (Bonferroni
   over its confirmations): at most ``level`` for the run.

Points are logged as they finish; Ctrl-C stops the search and keeps every finished point.
"""
from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

from attnlimits.symbolic.properties import Choice, Expression, IntRange, Property, Range
from attnlimits.symbolic.result import InputError, resolve
from attnlimits.verify.comparison import LEVEL, z_equivalent

__all__ = ["PropertyRun", "explore_property", "point_strategy", "evaluate_point", "point_seed", "MAX_CONFIRMATIONS"]

#: confirmations per property and run: a false alarm of the screen (a failure that does not confirm)
#: does not end the search; it goes on over the rest of the budget, confirming up to this many
#: screened failures in all, each at level/(K·MAX_CONFIRMATIONS) (Bonferroni)
MAX_CONFIRMATIONS = 3


# --------------------------------------------------------------------------------------------
# strategies, generated from the declared specs
# --------------------------------------------------------------------------------------------

def _strategy(spec):
    from hypothesis import strategies as st

    if isinstance(spec, Range):
        if spec.scale == "log":
            lo, hi = math.log(spec.lo), math.log(spec.hi)
            return st.floats(lo, hi, allow_nan=False).map(lambda u: float(min(spec.hi, max(spec.lo, math.exp(u)))))
        return st.floats(spec.lo, spec.hi, allow_nan=False, allow_infinity=False)
    if isinstance(spec, IntRange):
        return st.integers(int(spec.lo), int(spec.hi))
    if isinstance(spec, Choice):
        return st.sampled_from(tuple(spec.values))
    if isinstance(spec, Expression):
        leaves = st.sampled_from(tuple(spec.leaves) + tuple(str(c) for c in spec.constants))

        def extend(inner):
            unary = st.tuples(st.sampled_from(tuple(spec.functions)), inner).map(lambda fa: f"{fa[0]}({fa[1]})")
            binary = st.tuples(inner, st.sampled_from(("+", "-", "*")), inner).map(lambda a: f"({a[0]}{a[1]}{a[2]})")
            return st.one_of(unary, binary)

        return st.recursive(leaves, extend, max_leaves=max(2, 2 * int(spec.depth))).filter(lambda s: "t" in s)
    raise TypeError(f"no strategy for {spec!r}")  # pragma: no cover - Property validates its domain


def point_strategy(prop: Property):
    """The Hypothesis strategy of a point of ``prop``'s domain: one generated strategy per spec."""
    from hypothesis import strategies as st

    return st.fixed_dictionaries({k: _strategy(s) for k, s in prop.domain.items()})


def point_seed(seed: int, point: dict, salt: str = "") -> int:
    """A seed that depends only on the run seed and the point (replays are exact)."""
    text = json.dumps({"seed": int(seed), "point": {k: repr(v) for k, v in sorted(point.items())}, "salt": salt})
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


# --------------------------------------------------------------------------------------------
# one point
# --------------------------------------------------------------------------------------------

def evaluate_point(prop: Property, point: dict, *, size: dict, seed: int, level: float) -> dict:
    """Evaluate ``prop`` at ``point`` and judge it at per-point level ``level`` (Bonferroni over its
    stochastic checks).  Returns one row: the point, the worst check, its p-value and |z|, the verdict
    (``pass``/``fail``/``error``/``slow``) and the seconds taken."""
    fn = resolve(prop.evaluate)
    t0 = time.perf_counter()
    row = {"property": prop.name, **point}
    try:
        comps = list(fn(dict(point), size=dict(size), seed=int(seed)))
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - a point that raises is a finding, reported in one line
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        row.update(check="evaluation", value=None, reference=None, se=None, z=math.inf, p=0.0,
                   verdict="error", message=f"{type(exc).__name__}: {msg}"[:300],
                   seconds=time.perf_counter() - t0)
        return row
    seconds = time.perf_counter() - t0
    stoch = [(lab, c) for lab, c in comps if c.stochastic]
    judged = []  # (fails, |z|, p, label, comparison)
    for lab, c in comps:
        if c.stochastic:
            p = c.p_value
            z = z_equivalent(p, sided=c.sided) or 0.0
            bad = p < level / max(1, len(stoch))
        else:
            ex = c.excess
            z = max(ex, 0.0) / max(float(c.tolerance), 1e-300) if math.isfinite(ex) else math.inf
            bad = not c.passes(level)
            p = 0.0 if bad else 1.0
        judged.append((bad, z, p, lab, c))
    failed = any(j[0] for j in judged)
    pick = max(judged, key=lambda j: (j[0], j[1])) if judged else None
    worst = None if pick is None else (pick[3], pick[4])
    worst_z, worst_p = (0.0, 1.0) if pick is None else (pick[1], pick[2])
    verdict = "fail" if failed else "pass"
    if not failed and seconds > prop.seconds:
        # informational: wall time depends on the machine's load, so it never decides a verdict (a
        # replay must fail the same way); a property whose statement is a time bound measures it itself
        verdict = "slow"
    lab, c = worst if worst is not None else ("(no checks)", None)
    row.update(check=lab, value=None if c is None else _num(c.value), reference=None if c is None else
               _num(c.reference), se=None if c is None else _num(c.se), z=worst_z, p=worst_p, verdict=verdict,
               message="" if verdict != "slow" else f"{seconds:.1f} s > the stated {prop.seconds:g} s",
               seconds=seconds)
    return row


def _num(v):
    if v is None:
        return None
    if isinstance(v, tuple):
        return json.dumps([float(x) for x in v])
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------------------------
# the search of one property
# --------------------------------------------------------------------------------------------

class _Failing(Exception):
    """Raised inside the Hypothesis test for a point that screens as failing (Hypothesis shrinks it)."""

    def __init__(self, point):
        super().__init__(repr(point))
        self.point = point


class _Stop(BaseException):
    """Out of time or out of shrink budget: ends the search without being taken for a failure."""


@dataclass
class PropertyRun:
    prop: Property
    rows: list = field(default_factory=list)
    counterexample: dict | None = None  # the shrunk failing point
    confirmation: dict | None = None  # its confirmation row
    status: str = "pass"  # pass | fail (confirmed) | unconfirmed | interrupted | timeout
    #: screened failures whose confirmation passed (false alarms of the screen), with their confirmation rows
    unconfirmed: list = field(default_factory=list)
    seconds: float = 0.0
    screen_level: float = 0.0
    confirm_level: float = 0.0

    @property
    def failed(self) -> bool:
        return self.status == "fail"


def explore_property(prop: Property, *, budget: int = 100, seed: int = 0, level: float = LEVEL, n_properties: int = 1,
                     database: Path | None = None, deadline: float | None = None, progress=None,
                     max_shrink: int | None = None, refine_steps: int = 6) -> PropertyRun:
    """Search ``prop``'s domain (module docstring for the rule); ``deadline`` is a ``time.monotonic``
    time after which the search stops (the finished points are kept)."""
    from hypothesis import HealthCheck, Phase, given, settings, target
    from hypothesis import seed as hseed
    from hypothesis.database import DirectoryBasedExampleDatabase

    if budget < 1:
        raise InputError("--budget must be >= 1")
    run = PropertyRun(prop)
    prop_level = level / max(1, n_properties)
    run.screen_level = prop_level / budget
    run.confirm_level = prop_level / MAX_CONFIRMATIONS
    quick = dict(prop.quick)
    t_start = time.perf_counter()
    state = {"evals": 0, "failed_at": None, "last_fail": None, "generated": 0}
    max_shrink = max_shrink if max_shrink is not None else max(20, budget)
    cleared: list = []  # screened failures that did not confirm: passed over in later rounds

    def log(row, phase):
        row["phase"] = phase
        run.rows.append(row)
        if progress is not None:
            n = state["generated"]
            el = time.perf_counter() - t_start
            eta = "" if phase != "search" or n == 0 else f", ETA {max(0.0, el / n * (budget - n)):.0f} s"
            progress(f"explore {prop.name}: {phase} point {len(run.rows)} ({n}/{budget} drawn{eta}): "
                     f"{_short(row, prop)} -> {row['verdict']}")

    def test(point):
        if deadline is not None and time.monotonic() > deadline:
            raise _Stop("time")
        if point in cleared:
            return
        shrinking = state["failed_at"] is not None
        if shrinking and state["evals"] - state["failed_at"] >= max_shrink:
            raise _Stop("shrink budget")
        if not shrinking:
            if state["generated"] >= budget:
                raise _Stop("budget")
            state["generated"] += 1
        state["evals"] += 1
        row = evaluate_point(prop, point, size=quick, seed=point_seed(seed, point), level=run.screen_level)
        log(row, "shrink" if shrinking else "search")
        target(float(min(row["z"], 1e6)) if math.isfinite(row["z"]) else 1e6, label="discrepancy")
        if row["verdict"] in ("fail", "error"):
            if state["failed_at"] is None:
                state["failed_at"] = state["evals"]
            state["last_fail"] = dict(point)
            raise _Failing(dict(point))

    db = DirectoryBasedExampleDatabase(str(database)) if database is not None else None
    key = hashlib.sha256(f"attnlimits-explore:{prop.result}:{prop.name}".encode()).digest()
    for round_ in range(MAX_CONFIRMATIONS):
        # the first round replays the database and shrinks; later rounds (after a false alarm) go on
        # drawing the rest of the budget and confirm a screened failure where it was found
        phases = ([Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink] if round_ == 0
                  else [Phase.generate, Phase.target])
        wrapped = settings(max_examples=max(1, int(budget) - state["generated"]), database=db if round_ == 0 else None,
                           deadline=None, derandomize=False, suppress_health_check=list(HealthCheck),
                           report_multiple_bugs=False, print_blob=False, phases=phases)(
            hseed(int(seed) + round_)(given(point_strategy(prop))(test)))
        wrapped._hypothesis_internal_database_key = key
        shrunk = None
        try:
            wrapped()
        except _Failing as exc:
            shrunk = exc.point
        except _Stop as stop:
            shrunk = state["last_fail"] if str(stop) != "budget" else None
            if str(stop) == "time" and shrunk is None and not run.unconfirmed:
                run.status = "timeout"
        except KeyboardInterrupt:
            run.status = "interrupted"
            run.seconds = time.perf_counter() - t_start
            raise _Interrupted(run) from None
        except Exception as exc:  # noqa: BLE001 - Hypothesis' own errors (Flaky, Unsatisfiable) in one line
            run.status = "error"
            run.rows.append({"property": prop.name, "phase": "search", "verdict": "error", "check": "hypothesis",
                             "message": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]})
        if shrunk is None:
            break
        try:
            if round_ == 0:
                shrunk = _refine(prop, shrunk, seed, run, log, refine_steps, deadline)
            conf = evaluate_point(prop, shrunk, size=dict(prop.confirm or prop.quick),
                                  seed=point_seed(seed, shrunk, salt="confirm"), level=run.confirm_level)
            log(conf, "confirm")
        except KeyboardInterrupt:
            run.status = "interrupted"
            run.seconds = time.perf_counter() - t_start
            raise _Interrupted(run) from None
        run.counterexample, run.confirmation = shrunk, conf
        if conf["verdict"] in ("fail", "error"):
            run.status = "fail"
            break
        run.status = "unconfirmed"
        run.unconfirmed.append((dict(shrunk), conf))
        cleared.append(dict(shrunk))
        state["failed_at"], state["last_fail"] = None, None
        if state["generated"] >= budget or (deadline is not None and time.monotonic() > deadline):
            break
    run.seconds = time.perf_counter() - t_start
    return run


class _Interrupted(BaseException):
    def __init__(self, run):
        super().__init__("interrupted")
        self.run = run


def _refine(prop, point, seed, run, log, steps, deadline):
    """Move each numeric parameter of a failing theory point toward the simple end of its range while
    it still fails (bisection, ``steps`` halvings): the boundary of the failing region."""
    if prop.kind != "theory" or steps <= 0:
        return point
    best = dict(point)
    for name, spec in prop.domain.items():
        if not isinstance(spec, (Range, IntRange)):
            continue

        def fails(v):
            cand = {**best, name: v}
            row = evaluate_point(prop, cand, size=dict(prop.quick), seed=point_seed(seed, cand), level=run.screen_level)
            log(row, "refine")
            return row["verdict"] != "pass"

        good, bad = spec.lo, best[name]
        if good == bad:
            continue
        if deadline is not None and time.monotonic() > deadline:
            break
        if fails(good):
            best[name] = good
            continue
        for _ in range(steps):
            if isinstance(spec, IntRange):
                if abs(bad - good) <= 1:
                    break
                mid = (good + bad) // 2
            elif spec.scale == "log":
                mid = math.sqrt(good * bad)
            else:
                mid = 0.5 * (good + bad)
            if fails(mid):
                bad = mid
            else:
                good = mid
        best[name] = bad
    return best


def _short(row, prop) -> str:
    parts = []
    for k in prop.domain:
        v = row.get(k)
        parts.append(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}")
    return ", ".join(parts)
