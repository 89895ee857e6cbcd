"""``attnlimits explore``: property-based verification runs — where does each result's theory hold?

The properties are declared with their result (:class:`attnlimits.symbolic.properties.Property`,
``Result.properties``); :mod:`.driver` searches a property's domain (a space-filling design, then
Hypothesis; screen, shrink, confirm: the false-alarm rule is in its docstring and in every report) and :mod:`.output` writes
the tidy table of every point, a validity map per property and ``report.md``.

>>> from attnlimits.verify.explore import properties
>>> "slr-bayes-bound" in properties()
True
"""
from __future__ import annotations

import time
from pathlib import Path

from attnlimits.symbolic.result import InputError, discover_results
from attnlimits.verify.comparison import LEVEL

__all__ = ["properties", "explore", "ExploreResult", "ExploreInterrupted"]


def properties() -> dict:
    """Every declared property of every registered result, by name."""
    out = {}
    for res in discover_results().values():
        for prop in getattr(res, "properties", ()) or ():
            out.setdefault(prop.name, prop)
    return out


class ExploreInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: ``.result`` holds the properties finished and the points of the interrupted one
    (the outputs are written before it is raised)."""

    def __init__(self, result):
        super().__init__("interrupted")
        self.result = result


class ExploreResult:
    """The runs of one ``explore`` call: ``runs`` (one :class:`.driver.PropertyRun` per property),
    ``rows`` (every point tried), ``files`` (what was written) and ``failed`` (confirmed failures)."""

    def __init__(self, runs, files, level, seed, budget):
        self.runs, self.files, self.level, self.seed, self.budget = runs, files, level, seed, budget

    @property
    def rows(self) -> list:
        return [r for run in self.runs for r in run.rows]

    @property
    def failed(self) -> list:
        return [run.prop.name for run in self.runs if run.failed]

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(self.rows)

    def __repr__(self):
        return (f"ExploreResult({len(self.runs)} properties, {len(self.rows)} points, "
                f"failed: {self.failed or 'none'})")


def explore(names=(), *, budget: int = 100, seed: int = 0, out="attnlimits-explore", time_limit: float | None = None,
            level: float = LEVEL, csv: bool = False, progress=None, workers: int | None = None,
            scheduler: str | None = None, client=None) -> ExploreResult:
    """Explore the named properties (all when ``names`` is empty); write the table, maps and report.md
    to ``out``; return an :class:`ExploreResult`.  ``time_limit`` (seconds) bounds the whole run.

    The points of the space-filling phase and the confirmations run in this process by default, or on
    Dask: a local cluster of ``workers`` processes, an existing ``scheduler`` (address or scheduler
    file) or a ``client``.  The points, draws and verdicts are the same either way."""
    from .driver import Evaluator, _Interrupted, explore_property
    from .output import write_outputs

    known = properties()
    names = list(names) or list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(f"unknown propert{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}; "
                         f"known: {', '.join(known)}")
    if not 0 < level < 1:
        raise InputError(f"--level must lie in (0, 1), got {level}")
    if int(budget) < 1:
        raise InputError("--budget must be >= 1")
    if workers is not None and int(workers) < 0:
        raise InputError(f"--workers must be >= 0, got {workers}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    deadline = None if time_limit is None else time.monotonic() + float(time_limit)
    runs = []
    evaluator = Evaluator(workers=workers, scheduler=scheduler, client=client)
    try:
        for name in names:
            runs.append(explore_property(known[name], budget=int(budget), seed=int(seed), level=level,
                                         n_properties=len(names), database=out / "hypothesis-db" / name,
                                         deadline=deadline, progress=progress, evaluator=evaluator))
    except _Interrupted as stop:
        runs.append(stop.run)
        files = write_outputs(runs, out, level=level, seed=seed, budget=budget, csv=csv, interrupted=True)
        raise ExploreInterrupted(ExploreResult(runs, files, level, seed, budget)) from None
    finally:
        evaluator.close()
    files = write_outputs(runs, out, level=level, seed=seed, budget=budget, csv=csv)
    return ExploreResult(runs, files, level, seed, budget)
