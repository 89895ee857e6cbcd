r"""Report writer for ``attnlimits verify``: a terminal table, Markdown, JSON, tidy CSV and PNG plots.

Input is the list of :class:`attnlimits.verify.claims.base.ClaimResult` returned by
:func:`attnlimits.verify.claims.base.run_claims`.

Outputs (GUIDE §3: results go to a folder the user chooses, with the parameters, seeds and versions
that made them)
---------------------------------------------------------------------------------------------------------
:func:`format_table`
    plain text, at most :data:`TABLE_WIDTH` columns: one block per claim (name, verdict, time,
    title) with one line per check (label, kind, theory, MC mean ± SE, threshold, ✓/✗), then a
    summary line ``"22 claims: 21 pass, 0 fail, 1 discrepancy (43.2 s)"``.
:func:`write_report`
    into ``out_dir`` (created with its parents):

    ``report.md``     metadata, environment, summary table, a *Discrepancies* section (always present;
                      quoted vs derived numbers), then one section per claim with its checks and plot;
    ``results.json``  ``{"meta", "environment", "summary", "claims"}``; NaN/±inf written as ``null``;
    ``results.csv``   tidy, one row per check (a claim without checks, e.g. one that raised, gets
                      one row with empty check columns so that it is not lost);
    ``plots/<claim>.png``  one PNG per claim with plot specs (several specs side by side).
:func:`environment_info`
    versions (Python, attnlimits, numpy, scipy, sympy, mpmath, torch, matplotlib), CUDA availability
    and device name, platform and a UTC time stamp. No host name.

Comparison rule shown in the tables (:mod:`attnlimits.verify.comparison`, stated there once): each
check with a Monte Carlo SE has a statistic (``z``, or ``t<dof>`` when its SE comes from few
replicates) — the deviation beyond its tolerance (a quoted number's precision) and allowance, in
SEs —, a raw p-value, and, after :func:`attnlimits.verify.claims.base.run_claims` applied Holm's
procedure at the run's family-wise level, the *adjusted threshold* its p-value was compared with
(``level/(m − rank + 1)``) and its Holm-adjusted p-value; it fails iff the adjusted p ≤ level.
The *threshold* column is the same decision in the value's units; the *MDD* column is the check's
minimum detectable deviation relative to its headline quantity (``t·SE + tolerance + allowance`` at
the level a lone deviation needs under Holm, level/m; :attr:`attnlimits.verify.claims.base.Check.mdd`),
and each claim states its own (the largest of its checks') against the mode's target. Checks without SE are
deterministic (``|value − theory| ≤ tolerance + allowance``). ``report.md`` states the rule, the
level and the family size; ``results.json`` has them under ``"family"``.

Plots use :class:`matplotlib.figure.Figure` with :class:`~matplotlib.backends.backend_agg.FigureCanvasAgg`
directly, so the user's global matplotlib backend is never changed.

Modules, each importing only those above it: :mod:`.checks` (reading checks, formatting, the family
summary), :mod:`.records` (environment, JSON, CSV rows), :mod:`.plots` (the PNGs), :mod:`.table` (the
terminal table), :mod:`.markdown` (``report.md``); this module writes the folder.

Example
-------
>>> from attnlimits.verify.report import format_table, write_report          # doctest: +SKIP
>>> print(format_table(results))                                    # doctest: +SKIP
>>> write_report(results, "verify-report", meta={"mode": "quick", "seed": 0})  # doctest: +SKIP
"""
from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Mapping, Sequence

from .checks import CSV_COLUMNS, family_summary, float_or_none, verdict_counts
from .markdown import markdown_text
from .plots import draw_spec, plot_caption, plot_claim, safe_name
from .records import check_dict, claim_dict, clean, csv_rows, environment_info
from .table import MIN_WIDTH, TABLE_WIDTH, format_table, terminal_width

__all__ = ["format_table", "write_report", "environment_info", "family_summary", "TABLE_WIDTH", "CSV_COLUMNS",
           "terminal_width", "MIN_WIDTH", "plot_caption", "draw_spec", "check_dict", "MANIFEST_KEY"]

# --------------------------------------------------------------------------------------------------
# write_report
# --------------------------------------------------------------------------------------------------
#: PNG path → the ``plots`` list of the ClaimResult drawn there in this process (held, so that an
#: identity test is sound): ``verify`` rewrites the report after every claim on shallow copies of the
#: results (a stop leaves a valid partial report); redrawing every earlier figure each time would make
#: the report writing quadratic in the number of claims
_DRAWN: dict = {}


def _drawn_for(path: Path, result) -> bool:
    """Whether ``path`` holds this process's figure of ``result``'s plots (``None``: of any result)."""
    stored = _DRAWN.get(str(Path(path).resolve()))
    if stored is None or not Path(path).exists():
        return False
    return result is None or stored is result.plots


#: the entry of the output folder's manifest (:data:`attnlimits.verify.outputs.MANIFEST`) listing the report's files
MANIFEST_KEY = "verify"


def _inside(out: Path, path: Path) -> bool:
    root, real = out.resolve(), path.resolve()
    return real == root or root in real.parents


def write_report(results: Sequence, out_dir: str | os.PathLike, *, meta: Mapping | None = None) -> Path:
    """Write ``report.md``, ``results.json``, ``results.csv`` and ``plots/<claim>.png`` into ``out_dir``.

    Parameters
    ----------
    results : list of ClaimResult
    out_dir : path
        Created with its parents if missing; existing files of the same names are overwritten.
        The files written are listed in ``out_dir/.attnlimits-manifest.json``; a figure in ``plots/``
        is removed only when that manifest lists it from an earlier report and this one does not
        draw it (named on stderr) — other files in the folder are never touched.  ``plots`` a link
        to a folder outside ``out_dir``: ``OSError``, nothing written through it.
    meta : dict
        Run metadata shown in the report and stored in the JSON: ``mode``, ``device``, ``seed``,
        ``command`` (string or argv list), ``elapsed_s`` (or ``elapsed``) and anything else.
        ``mode``, ``seed`` and ``device`` are also columns of the CSV. An ``environment`` entry, if
        given, replaces :func:`environment_info` (e.g. to reuse one collected earlier).

    Returns
    -------
    pathlib.Path
        Path of ``report.md``.

    Raises
    ------
    OSError
        ``"cannot write report to DIR: reason"`` when the folder or a file cannot be written.

    Notes
    -----
    A plot that cannot be drawn (malformed series) does not abort the report: the claim's section
    says why, and the JSON has ``"plot": null`` for it.
    """
    from attnlimits.verify.outputs import record_files, remove_previous, write_text

    meta = dict(meta or {})
    out = Path(out_dir)
    env = meta.pop("environment", None) or environment_info()
    taken: set[str] = set()
    safe = {i: safe_name(r.claim, taken) for i, r in enumerate(results)}
    plots: dict[int, str] = {}
    plot_errors: dict[int, str] = {}
    try:
        out.mkdir(parents=True, exist_ok=True)
        planned = {f"plots/{safe[i]}.png" for i, r in enumerate(results) if r.plots}
        if planned and not _inside(out, out / "plots"):  # nothing written through a link out of the folder
            raise OSError(f"plots is a link to {(out / 'plots').resolve()}, outside the folder; nothing is written "
                          "through it")
        # a rerun into the same folder must not leave the previous run's figures, and must not touch
        # anything else: only the figures the manifest lists as written by an earlier report go
        remove_previous(out, MANIFEST_KEY, planned, under="plots")
        if planned:
            (out / "plots").mkdir(exist_ok=True)
        for i, r in enumerate(results):
            if not r.plots:
                continue
            rel = f"plots/{safe[i]}.png"
            try:
                if not _drawn_for(out / rel, r):  # a partial report rewritten after each claim redraws only the new
                    plot_claim(r, out / rel)
                    _DRAWN[str((out / rel).resolve())] = r.plots
                plots[i] = rel
            except OSError:
                raise
            except Exception as exc:  # noqa: BLE001 - reported in the markdown, never fatal
                plot_errors[i] = f"{type(exc).__name__}: {exc}"
        summary = {"claims": len(results), **verdict_counts(results),
                   "elapsed_s": float_or_none(meta.get("elapsed_s", meta.get("elapsed")))
                   or round(sum(float(r.elapsed or 0.0) for r in results), 3)}
        doc = {"meta": clean(meta), "environment": clean(env), "summary": summary,
               "family": clean(family_summary(results, float_or_none(meta.get("level")))),
               "claims": [claim_dict(r, plots.get(i)) for i, r in enumerate(results)]}
        # every file atomically (temporary + replace): a write failing partway keeps the previous file;
        # results.json lists the files of this run (the folder may hold others)
        doc["files"] = ["report.md", "results.json", "results.csv", *sorted(plots.values())]
        write_text(out / "results.json", json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
        buf = io.StringIO(newline="")
        writer = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS))
        writer.writeheader()
        writer.writerows(csv_rows(results, meta))
        write_text(out / "results.csv", buf.getvalue())
        md_path = out / "report.md"
        write_text(md_path, markdown_text(results, meta, env, plots, plot_errors, safe))
        record_files(out, MANIFEST_KEY, doc["files"])
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.filename and os.fspath(exc.filename) != os.fspath(out):
            reason += f" ({exc.filename})"
        raise OSError(f"cannot write report to {out}: {reason}") from exc
    return md_path
