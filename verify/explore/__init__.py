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
    ``rows`` (every point tried), ``files`` (what was written), ``failed`` (confirmed failures) and
    ``previous`` (the rows of earlier runs kept in the folder's points table)."""

    def __init__(self, runs, files, level, seed, budget, previous=()):
        self.runs, self.files, self.level, self.seed, self.budget = runs, files, level, seed, budget
        self.previous = list(previous)

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
            level: float = LEVEL, csv: bool = False, progress=None, fresh: bool = False, workers: int | None = None,
            scheduler: str | None = None, client=None) -> ExploreResult:
    """Explore the named properties (all when ``names`` is empty); write the table, maps and report.md
    to ``out``; return an :class:`ExploreResult`.  ``time_limit`` (seconds) bounds the whole run.

    ``out`` is checked before any point is evaluated (writable, ``hypothesis-db`` not a link out of
    it) and locked for the run (a concurrent run into it refuses).  A points table already in ``out``
    (from an earlier run) is kept: this run's rows are added to it and report.md covers both;
    ``fresh=True`` starts a new table instead (the earlier run's maps are removed).

    The points of the space-filling phase and the confirmations run in this process by default, or on
    Dask: a local cluster of ``workers`` processes, an existing ``scheduler`` (address or scheduler
    file) or a ``client``.  The points, draws and verdicts are the same either way."""
    from attnlimits.verify.outputs import OutputLock, check_output_folder, record_files, remove_previous

    from .driver import Evaluator, Interrupted, explore_property
    from .output import read_previous, table_name, write_outputs

    known = properties()
    names = list(names) or list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(f"unknown propert{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}; "
                         f"known: {', '.join(known)}")
    from ._options import check_run_options

    level, budget, time_limit, seed = check_run_options(level=level, budget=budget, time_limit=time_limit, seed=seed)
    if workers is not None and int(workers) < 0:
        raise InputError(f"--workers must be >= 0, got {workers}")
    out = check_output_folder(out, subdirs=("hypothesis-db",), files=(table_name(csv), "report.md"),
                              create_subdirs=True)
    with OutputLock(out, "attnlimits explore " + " ".join(names)):
        previous = [] if fresh else read_previous(out, csv)
        if fresh:
            keep = [table_name(csv), "report.md"] + [f"map-{n}.png" for n in names]
            remove_previous(out, MANIFEST_KEY, keep)
        deadline = None if time_limit is None else time.monotonic() + float(time_limit)
        runs = []
        evaluator = Evaluator(workers=workers, scheduler=scheduler, client=client)
        kw = dict(level=level, seed=seed, budget=budget, csv=csv, previous=previous)
        try:
            for name in names:
                runs.append(explore_property(known[name], budget=int(budget), seed=int(seed), level=level,
                                             n_properties=len(names), database=out / "hypothesis-db" / name,
                                             deadline=deadline, progress=progress, evaluator=evaluator))
        except Interrupted as stop:
            runs.append(stop.run)
            files = write_outputs(runs, out, interrupted=True, **kw)
            record_files(out, MANIFEST_KEY, files, merge=not fresh)
            raise ExploreInterrupted(ExploreResult(runs, files, level, seed, budget, previous)) from None
        finally:
            evaluator.close()
        files = write_outputs(runs, out, **kw)
        record_files(out, MANIFEST_KEY, files, merge=not fresh)
    return ExploreResult(runs, files, level, seed, budget, previous)


#: the entry of the output folder's manifest (:data:`attnlimits.verify.outputs.MANIFEST`) listing explore's files
MANIFEST_KEY = "explore"
