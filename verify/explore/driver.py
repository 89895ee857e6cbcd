r"""The search: a space-filling design and then Hypothesis draw points of a property's domain; the
points that screen as failing are confirmed on fresh draws at a larger size before a failure is reported.

The false-alarm rule (stated in every report)
---------------------------------------------
A run explores ``K`` properties at family-wise level ``level`` (default 1 %, the level of
``attnlimits verify``: :data:`attnlimits.verify.comparison.LEVEL`); each property gets ``level/K``.
The guarantee comes from the confirmation alone, so the screen is chosen for power.

1. **Screen.** Each point's comparisons give p-values (:mod:`attnlimits.verify.comparison`: z, or t
   with the SE's degrees of freedom). The point's p-value is ``p_point = min(1, m·min p)`` over its
   ``m`` stochastic comparisons (Bonferroni within the point); 0 when a deterministic comparison (no
   SE) exceeds its tolerance or the evaluation raises. A point *screens as failing* when
   ``p_point <`` :data:`SCREEN_LEVEL` (1 %, a fixed per-point level: no correction for the budget).
   An evaluation that raises :class:`~attnlimits.symbolic.properties.NotEvaluable` (a precondition
   of the statement does not hold there, e.g. an iterative solver did not converge) is recorded as
   ``not-evaluable`` with its reason: neither a pass nor a failure. A point past the property's
   stated time is marked ``slow`` but not failed (wall time depends on the machine's load). The same
   point always gets the same draws (its seed hashes the run seed and the point), whichever process
   evaluates it, and no point is evaluated twice (the points are memoised).
2. **Search.** The first :data:`SPACE_FILLING_SHARE` of the budget is a scrambled Sobol design with
   Latinized margins in each parameter's declared scale (log ranges in log space, integers and
   choices in equal strata; a domain with an expression grammar skips it), evaluated as one batch
   of independent tasks (on Dask with ``workers``/``scheduler``); Hypothesis draws the rest,
   steered toward the largest |z|.  Confirmed counterexamples of an earlier run into the same
   folder are evaluated first.
   A *hard* failure — a deterministic check or an evaluation error, or ``p_point < (level/K)/B``
   at budget ``B`` — is shrunk at once (Hypothesis's shrinking when Hypothesis drew it; for theory
   properties then a bisection of each number toward the simple end of its range and a try of each
   simpler choice while the point still fails: the boundary of the failing region) and confirmed
   where it ends; a confirmed hard failure ends the search, an unconfirmed one is passed
   over and the search goes on.
3. **Confirm.** At most :data:`MAX_CONFIRMATIONS` points per property are confirmed: the hard
   failures above, then, when the budget is spent, the screened points with the smallest ``p_point``
   (largest |z|) up to that number. Each confirmation evaluates the point again at the ``confirm``
   size with *fresh, independent* draws (another seed stream) and fails at level
   ``(level/K)/MAX_CONFIRMATIONS`` (Bonferroni over its ``m`` checks). The property fails when a
   confirmation fails.

Why the guarantee holds: which points are confirmed depends only on the screen's draws, and the
confirmation's draws are independent of them, so for a correct theory each confirmation fails with
probability at most ``(level/K)/MAX_CONFIRMATIONS`` whatever was selected; there are at most
``MAX_CONFIRMATIONS`` of them (Bonferroni): at most ``level/K`` per property, at most ``level`` for the
run. The screen's level only sets which points are worth a confirmation.

Points are logged as they finish; Ctrl-C stops the search and keeps every finished point.
"""
from __future__ import annotations

import hashlib
import json
import math
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from attnlimits.symbolic.properties import Choice, Expression, IntRange, NotEvaluable, Property, Range
from attnlimits.symbolic.result import InputError, resolve
from attnlimits.verify.comparison import COMPARISON_COLUMNS, LEVEL, comparison_columns, z_equivalent

__all__ = ["PropertyRun", "Interrupted", "explore_property", "point_strategy", "evaluate_point", "point_seed", "MAX_CONFIRMATIONS",
           "SCREEN_LEVEL", "SPACE_FILLING_SHARE", "space_filling_points", "coverage", "coverage_text", "rule_text",
           "Evaluator"]

#: confirmations per property and run, each at level (level/K)/MAX_CONFIRMATIONS (Bonferroni)
MAX_CONFIRMATIONS = 3
#: the per-point screening level: a point whose Bonferroni p-value over its stochastic checks is below
#: it is a candidate for a confirmation (no correction for the budget: the confirmation guards the level)
SCREEN_LEVEL = 0.01
#: the share of the budget spent on the space-filling (scrambled Sobol) design before Hypothesis
SPACE_FILLING_SHARE = 0.5
#: equal-width bins (in each parameter's scale) of the coverage report
COVERAGE_BINS = 10
#: significant digits of a space-filling point's numbers (the report's reproduce command is then exact)
DIGITS = 6

SEARCH_PHASES = ("sobol", "search")


# --------------------------------------------------------------------------------------------
# strategies and the space-filling design, generated from the declared specs
# --------------------------------------------------------------------------------------------

def _strategy(spec):
    from hypothesis import strategies as st

    if isinstance(spec, Range):
        # numbers to DIGITS significant digits: the report's reproduce command gives the very point (and seed)
        if spec.scale == "log":
            lo, hi = math.log(spec.lo), math.log(spec.hi)
            return st.floats(lo, hi, allow_nan=False).map(lambda u: _round(spec, math.exp(u)))
        return st.floats(spec.lo, spec.hi, allow_nan=False, allow_infinity=False).map(lambda v: _round(spec, v))
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


def _round(spec, v: float) -> float:
    return float(min(spec.hi, max(spec.lo, float(f"{v:.{DIGITS}g}"))))


def point_strategy(prop: Property):
    """The Hypothesis strategy of a point of ``prop``'s domain: one generated strategy per spec."""
    from hypothesis import strategies as st

    return st.fixed_dictionaries({k: _strategy(s) for k, s in prop.domain.items()})


def _scale(spec, v) -> float:
    """``v`` in its spec's scale, mapped to [0, 1] (log ranges in log space)."""
    if isinstance(spec, Range) and spec.scale == "log":
        return (math.log(v) - math.log(spec.lo)) / (math.log(spec.hi) - math.log(spec.lo))
    return (float(v) - spec.lo) / (spec.hi - spec.lo) if spec.hi > spec.lo else 0.0


def _from_unit(spec, u: float):
    """The value of ``spec`` at ``u`` in [0, 1): uniform in the spec's scale; integers and choices in
    equal strata."""
    if isinstance(spec, Range):
        if spec.scale == "log":
            v = math.exp(math.log(spec.lo) + u * (math.log(spec.hi) - math.log(spec.lo)))
        else:
            v = spec.lo + u * (spec.hi - spec.lo)
        return _round(spec, v)
    if isinstance(spec, IntRange):
        n = int(spec.hi) - int(spec.lo) + 1
        return int(spec.lo) + min(int(u * n), n - 1)
    n = len(spec.values)
    return spec.values[min(int(u * n), n - 1)]


def space_filling_points(prop: Property, n: int, seed: int) -> list:
    """``n`` points of a scrambled Sobol sequence with Latinized margins (each of ``n`` equal strata of
    every parameter's scale holds one point), mapped to each parameter's scale; repeats (a small
    discrete domain) are dropped.  Empty when the domain has an expression grammar (those
    points come from Hypothesis alone)."""
    if n < 1 or not prop.domain or any(isinstance(s, Expression) for s in prop.domain.values()):
        return []
    import numpy as np
    from scipy.stats import qmc

    names = list(prop.domain)
    rng = np.random.default_rng(point_seed(seed, {}, salt=f"sobol:{prop.name}"))
    sobol = qmc.Sobol(len(names), scramble=True, rng=rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "balance properties need n = 2^m": the first n points are used
        u = sobol.random(int(n))
    # Latinized margins: each coordinate replaced by its rank's stratum, jittered within it, so every one of
    # n equal strata of every parameter holds one point for any n (the Sobol order of the points is kept)
    ranks = np.argsort(np.argsort(u, axis=0, kind="stable"), axis=0, kind="stable")
    u = (ranks + rng.uniform(size=u.shape)) / u.shape[0]
    out, seen = [], set()
    for row in u:
        pt = {k: _from_unit(prop.domain[k], float(x)) for k, x in zip(names, row)}
        key = _key(pt)
        if key not in seen:
            seen.add(key)
            out.append(pt)
    return out


def _key(point: dict) -> str:
    return json.dumps({k: repr(v) for k, v in sorted(point.items())})


def point_seed(seed: int, point: dict, salt: str = "") -> int:
    """A seed that depends only on the run seed and the point (replays are exact)."""
    text = json.dumps({"seed": int(seed), "point": {k: repr(v) for k, v in sorted(point.items())}, "salt": salt})
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


# --------------------------------------------------------------------------------------------
# one point
# --------------------------------------------------------------------------------------------

def evaluate_point(prop: Property, point: dict, *, size: dict, seed: int, level: float) -> dict:
    """Evaluate ``prop`` at ``point`` and judge it at per-point level ``level`` (Bonferroni over its
    stochastic checks).  Returns one row: the point, the worst check (``check``, its comparison columns
    :data:`~attnlimits.verify.comparison.COMPARISON_COLUMNS` and its ``discrepancy``, the
    normal-equivalent |z| the search steers by), the point's p-value ``p_point`` (module docstring),
    the verdict (``pass``/``fail``/``error``/``slow``/``not-evaluable``) and the seconds taken.
    A property parameter named like a comparison column would be overwritten: refused."""
    fn = resolve(prop.evaluate)
    t0 = time.perf_counter()
    clash = sorted(set(point) & {"check", "discrepancy", "p_point", "verdict", "message", "seconds",
                                 *COMPARISON_COLUMNS})
    if clash:
        raise ValueError(f"property {prop.name}: parameter(s) {', '.join(clash)} are named like columns of the "
                         "points table; rename them in its domain")
    row = {"property": prop.name, **point}
    try:
        comps = list(fn(dict(point), size=dict(size), seed=int(seed)))
    except KeyboardInterrupt:
        raise
    except NotEvaluable as exc:  # a precondition does not hold here: no verdict on the statement
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else "a precondition does not hold"
        row.update(check="precondition", **comparison_columns(None), discrepancy=0.0, p_point=1.0,
                   verdict="not-evaluable", message=msg[:300], seconds=time.perf_counter() - t0)
        return row
    except Exception as exc:  # noqa: BLE001 - a point that raises is a finding, reported in one line
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        row.update(check="evaluation", **comparison_columns(None), discrepancy=math.inf, p_point=0.0,
                   verdict="error", message=f"{type(exc).__name__}: {msg}"[:300],
                   seconds=time.perf_counter() - t0)
        return row
    seconds = time.perf_counter() - t0
    stoch = [(lab, c) for lab, c in comps if c.stochastic]
    m = max(1, len(stoch))
    judged = []  # (fails, |z|, p, label, comparison)
    p_point = 1.0
    for lab, c in comps:
        if c.stochastic:
            p = c.p_value
            z = z_equivalent(p, sided=c.sided) or 0.0
            bad = not p > level / m  # a NaN p-value fails
            p_point = min(p_point, m * p) if p == p else 0.0
        else:
            ex = c.excess
            ex = abs(ex) if c.kind in ("abs", "rel") else max(ex, 0.0)  # two-sided: the excess is signed
            z = ex / max(float(c.tolerance), 1e-300) if math.isfinite(ex) else math.inf
            bad = not c.passes(level)
            p = 0.0 if bad else 1.0
            if bad:
                p_point = 0.0
        judged.append((bad, z, p, lab, c))
    failed = any(j[0] for j in judged)
    pick = max(judged, key=lambda j: (j[0], j[1])) if judged else None
    worst = None if pick is None else (pick[3], pick[4])
    worst_z = 0.0 if pick is None else pick[1]
    verdict = "fail" if failed else "pass"
    if not failed and seconds > prop.seconds:
        # informational: wall time depends on the machine's load, so it never decides a verdict (a
        # replay must fail the same way); a property whose statement is a time bound measures it itself
        verdict = "slow"
    lab, c = worst if worst is not None else ("(no checks)", None)
    # the worst check in the columns verify's results.csv gives the same comparison; ``discrepancy`` is
    # the normal-equivalent |z| of its p-value (the excess in tolerances for a deterministic check): what
    # the search steers toward and ranks by
    row.update(check=lab, **comparison_columns(c), discrepancy=worst_z,
               p_point=float(min(1.0, p_point)), verdict=verdict,
               message="" if verdict != "slow" else f"{seconds:.1f} s > the stated {prop.seconds:g} s",
               seconds=seconds)
    return row


def _evaluate_task(prop, point, size, seed, level, pin=True):
    """One point in a Dask worker: BLAS/torch threads pinned to 1, then :func:`evaluate_point`."""
    if pin:
        from attnlimits.verify.sweep.worker import pin_threads

        pin_threads()
    return evaluate_point(prop, point, size=size, seed=seed, level=level)


class Evaluator:
    """Evaluates batches of independent points: in this process (default) or on Dask — a local cluster
    of ``workers`` processes, an existing ``scheduler`` (address or scheduler file) or a ``client``.
    The rows are the same either way (a point's draws depend only on the run seed and the point), and
    are returned in the order of the batch."""

    def __init__(self, *, workers: int | None = None, scheduler: str | None = None, client=None):
        self.client, self._own, self._cluster = client, False, None
        if client is None and (scheduler or (workers or 0) > 0):
            try:
                from distributed import Client, LocalCluster
            except ImportError as exc:  # pragma: no cover - declared dependency
                raise InputError(f"--workers/--scheduler need dask[distributed] ({exc})") from None
            from attnlimits.verify.sweep.runner import local_cluster, default_workers

            if scheduler:
                kw = {"scheduler_file": scheduler} if Path(scheduler).is_file() else {"address": scheduler}
                try:
                    self.client = Client(timeout="30s", **kw)
                except (OSError, TimeoutError) as exc:
                    raise InputError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from None
            else:
                self._cluster = local_cluster(LocalCluster, max(1, min(int(workers), default_workers())))
                self.client = Client(self._cluster)
            self._own = True

    @property
    def distributed(self) -> bool:
        return self.client is not None

    def rows(self, prop, jobs, deadline=None):
        """Yield the row of each job ``(point, size, seed, level)`` in order; stop at ``deadline``."""
        if self.client is None:
            for point, size, seed, level in jobs:
                if deadline is not None and time.monotonic() > deadline:
                    return
                yield evaluate_point(prop, point, size=size, seed=seed, level=level)
            return
        futs = [self.client.submit(_evaluate_task, prop, p, s, sd, lv, self._own, pure=False) for p, s, sd, lv in jobs]
        try:
            for f in futs:
                if deadline is not None and time.monotonic() > deadline:
                    return
                yield f.result()
        finally:
            self.client.cancel([f for f in futs if not f.done()])

    def close(self):
        if self._own:
            self.client.close()
            if self._cluster is not None:
                self._cluster.close()
            self.client = None


# --------------------------------------------------------------------------------------------
# the search of one property
# --------------------------------------------------------------------------------------------

class _Failing(Exception):
    """Raised inside the Hypothesis test for a point that fails hard (Hypothesis shrinks it)."""

    def __init__(self, point):
        super().__init__(repr(point))
        self.point = point


class _Stop(BaseException):
    """Out of time, budget or shrink budget: ends the search without being taken for a failure."""


@dataclass
class PropertyRun:
    prop: Property
    rows: list = field(default_factory=list)
    counterexample: dict | None = None  # the confirmed failing point (else the last one confirmed)
    confirmation: dict | None = None  # its confirmation row
    status: str = "pass"  # pass | fail (confirmed) | unconfirmed | interrupted | timeout | error
    #: confirmed points that passed their confirmation, with their confirmation rows
    unconfirmed: list = field(default_factory=list)
    seconds: float = 0.0
    screen_level: float = 0.0
    hard_level: float = 0.0
    confirm_level: float = 0.0
    #: Hypothesis draws that repeated a point already evaluated (memoised: not evaluated, not counted)
    repeats: int = 0
    #: every confirmation: (point, row)
    confirmations: list = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    @property
    def searched(self) -> list:
        """The rows of the budget: the space-filling design and Hypothesis's draws (distinct points)."""
        return [r for r in self.rows if r.get("phase") in SEARCH_PHASES]


def _hard(row, hard_level) -> bool:
    return row["verdict"] in ("fail", "error") and float(row.get("p_point", 1.0)) < hard_level


def explore_property(prop: Property, *, budget: int = 100, seed: int = 0, level: float = LEVEL, n_properties: int = 1,
                     database: Path | None = None, deadline: float | None = None, progress=None,
                     max_shrink: int | None = None, refine_steps: int = 6, screen_level: float = SCREEN_LEVEL,
                     space_filling: float = SPACE_FILLING_SHARE, evaluator: Evaluator | None = None) -> PropertyRun:
    """Search ``prop``'s domain (module docstring for the rule); ``deadline`` is a ``time.monotonic``
    time after which the search stops (the finished points are kept; the confirmations still run)."""
    from hypothesis import HealthCheck, Phase, given, settings, target
    from hypothesis import seed as hseed
    from hypothesis.database import DirectoryBasedExampleDatabase

    if budget < 1:
        raise InputError("--budget must be >= 1")
    if not 0 < screen_level < 1:
        raise InputError(f"the screening level must lie in (0, 1), got {screen_level}")
    evaluator = evaluator or Evaluator()
    run = PropertyRun(prop)
    prop_level = level / max(1, n_properties)
    run.screen_level = float(screen_level)
    run.hard_level = prop_level / budget
    run.confirm_level = prop_level / MAX_CONFIRMATIONS
    quick = dict(prop.quick)
    t_start = time.perf_counter()
    memo: dict = {}  # point key -> its screening row
    confirmed: set = set()  # keys of the points confirmed (each at most once)
    state = {"shrinking": False, "shrink_evals": 0, "last_fail": None}
    max_shrink = max_shrink if max_shrink is not None else max(20, budget)

    def n_search():
        return sum(1 for r in run.rows if r.get("phase") in SEARCH_PHASES)

    def log(row, phase):
        row["phase"] = phase
        run.rows.append(row)
        if progress is not None:
            n = n_search()
            el = time.perf_counter() - t_start
            eta = "" if phase not in SEARCH_PHASES or n == 0 else f", ETA {max(0.0, el / n * (budget - n)):.0f} s"
            progress(f"explore {prop.name}: {phase} point {len(run.rows)} ({n}/{budget} searched{eta}): "
                     f"{_short(row, prop)} -> {row['verdict']}")

    def screen(point, phase):
        """The memoised screening row of ``point`` (evaluated and logged the first time only)."""
        k = _key(point)
        if k in memo:
            return memo[k], False
        row = evaluate_point(prop, point, size=quick, seed=point_seed(seed, point), level=run.screen_level)
        memo[k] = row
        log(row, phase)
        return row, True

    def confirm(points, hard=False) -> bool:
        """Confirm ``points`` (a batch of fresh, independent evaluations at the confirmation size);
        True when one fails (the first in order becomes the counterexample).  A hard failure that does
        not confirm stays the run's (unconfirmed) counterexample."""
        points = [p for p in points if _key(p) not in confirmed][: MAX_CONFIRMATIONS - len(run.confirmations)]
        if not points:
            return False
        size = dict(prop.confirm or prop.quick)
        jobs = [(p, size, point_seed(seed, p, salt="confirm"), run.confirm_level) for p in points]
        for p, conf in zip(points, evaluator.rows(prop, jobs)):
            confirmed.add(_key(p))
            log(conf, "confirm")
            run.confirmations.append((dict(p), conf))
        for p, conf in run.confirmations[-len(points):]:
            if conf["verdict"] in ("fail", "error"):
                run.counterexample, run.confirmation, run.status = p, conf, "fail"
                return True
        for p, conf in run.confirmations[-len(points):]:
            run.unconfirmed.append((p, conf))
        if hard:
            run.counterexample, run.confirmation = run.confirmations[-1]
        return False

    def hard_found(point, shrink: bool) -> bool:
        """A hard failure: refine (theory properties), confirm; True when confirmed."""
        if shrink:
            point = _refine(prop, point, run, screen, refine_steps, deadline)
        if confirm([point], hard=True):
            return True
        run.status = "unconfirmed"
        return False

    try:
        # 0. known failures first (the example database of an earlier run into the same folder)
        db = DirectoryBasedExampleDatabase(str(database)) if database is not None else None
        key = hashlib.sha256(f"attnlimits-explore:{prop.result}:{prop.name}".encode()).digest()

        def test(point):
            if deadline is not None and time.monotonic() > deadline:
                raise _Stop("time")
            k = _key(point)
            if state["shrinking"]:
                if k not in memo and state["shrink_evals"] >= max_shrink:
                    raise _Stop("shrink budget")
                state["shrink_evals"] += k not in memo
                row, _ = screen(point, "shrink")
            else:
                if k in memo:
                    run.repeats += 1
                    row = memo[k]
                else:
                    if n_search() >= budget:
                        raise _Stop("budget")
                    row, _ = screen(point, "search")
            target(float(min(row["discrepancy"], 1e6)) if math.isfinite(row["discrepancy"]) else 1e6,
                   label="discrepancy")
            if _hard(row, run.hard_level) and k not in confirmed:
                state["shrinking"] = True
                state["last_fail"] = dict(point)
                raise _Failing(dict(point))

        def hypothesis(phases, rounds_seed, use_db):
            """Run Hypothesis over the rest of the budget; the point it ends with when a hard failure was
            found (shrunk when shrinking is among ``phases``), else None."""
            state.update(shrinking=False, shrink_evals=0, last_fail=None)
            left = budget - n_search()
            if left <= 0 and Phase.reuse not in phases:
                return None
            wrapped = settings(max_examples=max(1, 5 * left + 10), database=db if use_db else None, deadline=None,
                               derandomize=False, suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                               print_blob=False, phases=phases)(hseed(int(seed) + rounds_seed)(
                given(point_strategy(prop))(test)))
            wrapped._hypothesis_internal_database_key = key
            try:
                wrapped()
            except _Failing as exc:
                return exc.point
            except _Stop as stop:
                if str(stop) == "time" and state["last_fail"] is None and run.status == "pass":
                    run.status = "timeout"
                return state["last_fail"] if str(stop) != "budget" else None
            except Exception as exc:  # noqa: BLE001 - Hypothesis' own errors (Flaky, Unsatisfiable) in one line
                run.status = "error"
                run.rows.append({"property": prop.name, "phase": "search", "verdict": "error", "check": "hypothesis",
                                 "message": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]})
            return None

        done = False
        for p in _known_failures(prop, database):  # confirmed counterexamples of earlier runs, as they were
            if n_search() >= budget or done:
                break
            row, _ = screen(p, "search")
            if _hard(row, run.hard_level) and _key(p) not in confirmed:
                done = hard_found(p, shrink=False)
        if not done and db is not None and next(iter(db.fetch(key)), None) is not None:
            found = hypothesis([Phase.reuse], 0, True)
            if found is not None:
                done = hard_found(found, shrink=True)

        # 1. the space-filling design, one batch of independent points
        if not done:
            n_sf = min(budget - n_search(), int(math.ceil(space_filling * budget)))
            pts = [p for p in space_filling_points(prop, n_sf, seed) if _key(p) not in memo]
            jobs = [(p, quick, point_seed(seed, p), run.screen_level) for p in pts]
            first_hard, n_done = None, 0
            for p, row in zip(pts, evaluator.rows(prop, jobs, deadline)):
                memo[_key(p)] = row
                log(row, "sobol")
                n_done += 1
                if first_hard is None and _hard(row, run.hard_level):
                    first_hard = p
            if n_done < len(pts):
                run.status = "timeout"
            if first_hard is not None:
                done = hard_found(first_hard, shrink=True)

        # 2. Hypothesis over the rest of the budget: targets |z|; a hard failure is shrunk and confirmed
        round_ = 0
        while not done and n_search() < budget and len(run.confirmations) < MAX_CONFIRMATIONS:
            if deadline is not None and time.monotonic() > deadline:
                break
            phases = ([Phase.generate, Phase.target, Phase.shrink] if round_ == 0 else [Phase.generate, Phase.target])
            before = n_search()
            found = hypothesis(phases, round_, round_ == 0)
            if found is None:
                if n_search() == before or run.status in ("error", "timeout"):
                    break
                round_ += 1
                continue
            done = hard_found(found, shrink=round_ == 0)
            round_ += 1

        # 3. the strongest screened points, up to MAX_CONFIRMATIONS confirmations in all
        if not done:
            cands = [r for r in run.rows if r.get("phase") in ("sobol", "search", "shrink", "refine")
                     and r.get("verdict") in ("fail", "error")]
            cands.sort(key=lambda r: (float(r.get("p_point", 0.0)), -float(r.get("discrepancy") or 0.0)))
            pts = []
            for r in cands:
                p = {k: r[k] for k in prop.domain}
                if _key(p) not in confirmed and all(_key(p) != _key(q) for q in pts):
                    pts.append(p)
            if pts:
                confirm(pts)
    except KeyboardInterrupt:
        run.status = "interrupted"
        run.seconds = time.perf_counter() - t_start
        raise Interrupted(run) from None
    if run.failed and database is not None:
        _remember_failure(prop, database, run.counterexample)
    run.seconds = time.perf_counter() - t_start
    return run


KNOWN_FAILURES = "known-failures.json"


def _known_failures(prop, database) -> list:
    """The confirmed counterexamples an earlier run into the same folder kept (``database``/
    :data:`KNOWN_FAILURES`), those still in the domain: a rerun evaluates them first.  (Hypothesis's
    own database keeps the failures *it* drew; a point of the Sobol design is kept here.)"""
    if database is None:
        return []
    path = Path(database) / KNOWN_FAILURES
    try:
        pts = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [p for p in pts if isinstance(p, dict) and set(p) == set(prop.domain)
            and all(isinstance(spec, Expression) or spec.contains(p[k]) for k, spec in prop.domain.items())]


def _remember_failure(prop, database, point) -> None:
    from attnlimits.verify.outputs import write_text

    known = _known_failures(prop, database)
    if point in known:
        return
    Path(database).mkdir(parents=True, exist_ok=True)
    write_text(Path(database) / KNOWN_FAILURES, json.dumps(known + [dict(point)], indent=1) + "\n")


class Interrupted(BaseException):
    """A stop (Ctrl-C) during an exploration, carrying the :class:`PropertyRun` made so far."""

    def __init__(self, run):
        super().__init__("interrupted")
        self.run = run


def _refine(prop, point, run, screen, steps, deadline):
    """Move each parameter of a failing theory point toward the simple end of its domain while it still
    fails (a choice: the first value that fails; a number: bisection, ``steps`` halvings): the boundary
    of the failing region."""
    if prop.kind != "theory" or steps <= 0:
        return point
    best = dict(point)

    def fails(name, v):
        cand = {**best, name: v}
        row, _ = screen(cand, "refine")
        return row["verdict"] in ("fail", "error")

    for name, spec in prop.domain.items():
        if deadline is not None and time.monotonic() > deadline:
            break
        if isinstance(spec, Choice):
            for v in spec.values:
                if v == best[name]:
                    break
                if fails(name, v):
                    best[name] = v
                    break
            continue
        if not isinstance(spec, (Range, IntRange)):
            continue
        good, bad = spec.lo, best[name]
        if good == bad:
            continue
        if fails(name, good):
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
            if isinstance(mid, float):
                mid = float(f"{mid:.{DIGITS}g}")
            if fails(name, mid):
                bad = mid
            else:
                good = mid
        best[name] = bad
    return best


# --------------------------------------------------------------------------------------------
# what the search covered, and the rule in words
# --------------------------------------------------------------------------------------------

def coverage(prop: Property, rows, bins: int = COVERAGE_BINS) -> dict:
    """Per parameter: for a range, the fraction of ``bins`` equal-width bins of its scale holding a
    point (an integer range: one bin per integer when it has fewer); for a choice, the count of each
    value; for a grammar, the number of distinct expressions.  Over ``rows`` (the searched points)."""
    out = {}
    for name, spec in prop.domain.items():
        vals = [r[name] for r in rows if name in r and r[name] is not None]
        if isinstance(spec, Choice):
            out[name] = {str(v): sum(1 for x in vals if x == v) for v in spec.values}
        elif isinstance(spec, Expression):
            out[name] = {"distinct": len(set(vals))}
        else:
            nb = min(bins, int(spec.hi) - int(spec.lo) + 1) if isinstance(spec, IntRange) else bins
            if isinstance(spec, IntRange):
                n = int(spec.hi) - int(spec.lo) + 1
                hit = {min(int((int(v) - int(spec.lo)) * nb / n), nb - 1) for v in vals}
            else:
                hit = {min(max(int(_scale(spec, float(v)) * nb), 0), nb - 1) for v in vals}
            out[name] = {"bins": nb, "hit": len(hit), "fraction": len(hit) / nb}
    return out


def coverage_text(run: PropertyRun) -> str:
    """One line: distinct points searched, Hypothesis's repeats, and the coverage of each parameter."""
    rows = run.searched
    n_sf = sum(1 for r in rows if r.get("phase") == "sobol")
    parts = []
    for name, c in coverage(run.prop, rows).items():
        if "fraction" in c:
            parts.append(f"{name} {c['hit']}/{c['bins']} bins")
        elif "distinct" in c:
            parts.append(f"{name} {c['distinct']} distinct")
        else:
            parts.append(f"{name} " + " ".join(f"{k}:{v}" for k, v in c.items()))
    verdicts = {}
    for r in rows:
        verdicts[r.get("verdict")] = verdicts.get(r.get("verdict"), 0) + 1
    ne = verdicts.get("not-evaluable", 0)
    return (f"{len(rows)} distinct points ({n_sf} Sobol, {len(rows) - n_sf} Hypothesis; {run.repeats} repeated draws "
            f"not re-evaluated){f', {ne} not evaluable' if ne else ''}; coverage: " + "; ".join(parts))


def rule_text(level: float, k: int) -> str:
    """The false-alarm rule of a run of ``k`` properties at family-wise ``level``, in words (report.md)."""
    pl = level / max(k, 1)
    return (f"Each property gets level {level:g}/{k} = {pl:.3g}. A point's p-value is min(1, m·min p) over its m "
            f"stochastic checks (z, or Student t with the SE's degrees of freedom), 0 when a deterministic check "
            f"exceeds its tolerance or the evaluation raises; the point *screens as failing* when it is below "
            f"{SCREEN_LEVEL:g} (a fixed per-point level). A point where a precondition of the statement does not "
            f"hold is *not evaluable* (its reason is given): neither a pass nor a failure. The first "
            f"{SPACE_FILLING_SHARE:.0%} of the budget is a scrambled Sobol design (Latinized margins) in each "
            f"parameter's scale, the "
            f"rest Hypothesis steered toward the largest |z|; no point is evaluated twice. A hard failure (a "
            f"deterministic check, an error, or p < {pl:.3g}/budget) is shrunk and confirmed at once; when the "
            f"budget is spent the screened points with the smallest p are confirmed, at most {MAX_CONFIRMATIONS} "
            f"confirmations per property in all. A confirmation evaluates the point again at the confirmation size "
            f"with fresh, independent draws and fails at level {pl:.3g}/{MAX_CONFIRMATIONS} (Bonferroni over its "
            f"checks); the property fails only then. The confirmation's draws are independent of the screen that "
            f"chose the point, so for a correct theory each confirmation fails with probability at most "
            f"{pl:.3g}/{MAX_CONFIRMATIONS}: at most {level:g} for the run. A point past the property's time bound "
            f"is marked slow, not failed (wall time depends on the load).")


def _short(row, prop) -> str:
    parts = []
    for k in prop.domain:
        v = row.get(k)
        parts.append(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}")
    return ", ".join(parts)
