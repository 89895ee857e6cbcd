"""What an explore run writes: the tidy table of every point, a validity map per property, report.md.

- ``points.parquet`` (``points.csv`` with ``--csv``): one row per point tried — the property, the
  phase (``search``, ``shrink``, ``refine``, ``confirm``), the parameters, the worst check in the
  comparison columns ``verify``'s ``results.csv`` uses (value, theory, se, dof, tolerance,
  allowance, z, law, p_value: :data:`attnlimits.verify.comparison.COMPARISON_COLUMNS`), its ``discrepancy``
  (the normal-equivalent |z| the search steers by), the point's p-value, the verdict and the seconds;
- ``map-<property>.png``: the points in two chosen parameters, coloured by the discrepancy, failures as crosses,
  the shrunk counterexample as a star;
- ``report.md``: the false-alarm rule, one section per property (domain, points, verdict, the
  minimal counterexample and the command that reproduces it).

Every file is written atomically (:mod:`attnlimits.verify.outputs`).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from attnlimits.symbolic.properties import Choice, domain_text
from attnlimits.symbolic.result import InputError
from attnlimits.verify.comparison import COMPARISON_COLUMNS
from attnlimits.verify.explore.driver import MAX_CONFIRMATIONS, coverage_text, rule_text

__all__ = ["write_outputs", "reproduce_command"]


def reproduce_command(prop, point: dict, seed: int) -> str:
    at = ",".join(f"{k}={_fmt(v)}" for k, v in point.items())
    return f"attnlimits explore {prop.name} --at '{at}' --seed {seed}"


def _fmt(v):
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def table_name(csv: bool) -> str:
    """The file name of the points table: ``points.csv`` with ``--csv``, else ``points.parquet``."""
    return "points.csv" if csv else "points.parquet"


def read_previous(out: Path, csv: bool) -> list:
    """The rows of the points table an earlier run left in ``out`` (empty when there is none), to be
    kept: a rerun adds to the table.  A file of that name that is not a readable table is refused
    (:class:`InputError`): it is not ours to overwrite."""
    import pandas as pd

    path = Path(out) / table_name(csv)
    if not path.exists():
        return []
    try:
        df = pd.read_csv(path) if csv else pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable file: refused in one line
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"--out {out}: {path.name} is there but is not a points table ({msg}); move it away, "
                         f"or start a new table with --fresh") from None
    if "property" not in df.columns:
        raise InputError(f"--out {out}: {path.name} is there but has no 'property' column (not an explore table); "
                         f"move it away, or start a new table with --fresh")
    df = df.astype(object).where(df.notna(), None)
    return df.to_dict("records")


def write_outputs(runs, out: Path, *, level, seed, budget, csv=False, interrupted=False, previous=()) -> list:
    """Write the points table (``previous`` rows of earlier runs first, then this run's), a map per
    property and report.md into ``out``; return the paths written."""
    import datetime as _dt

    from attnlimits.verify.outputs import write_text

    out = Path(out)
    files = []
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    rows = [{**r, "run_seed": seed, "run_written": started} for run in runs for r in run.rows]
    files.append(_write_table(list(previous) + rows, out, csv))
    for run in runs:
        png = _write_map(run, out)
        if png is not None:
            files.append(png)
    files.append(write_text(out / "report.md", _report(runs, level=level, seed=seed, budget=budget,
                                                        interrupted=interrupted, previous=previous)))
    return [str(f) for f in files]


def _column(values):
    """One column of the table in one type: numbers (with gaps) as floats, anything else mixed as text."""
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return None  # numeric with gaps: pandas makes it a float column
    return [v if v is None or isinstance(v, str) else json.dumps(v) if isinstance(v, (list, dict)) else str(v)
            for v in values]


def _write_table(rows, out: Path, csv: bool) -> Path:
    import pandas as pd
    from attnlimits.verify.outputs import write_atomically

    df = pd.DataFrame(rows)
    for col in df.columns:  # parameters of several properties share no type: text where mixed
        if df[col].dtype == object:
            fixed = _column(list(df[col]))
            df[col] = pd.to_numeric(df[col]) if fixed is None else fixed
    if csv:
        return write_atomically(out / "points.csv", lambda tmp: df.to_csv(tmp, index=False))
    return write_atomically(out / "points.parquet", lambda tmp: df.to_parquet(tmp, index=False))


def _write_map(run, out: Path):
    from attnlimits.verify.outputs import plain_log_ticks, save_figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    prop = run.prop
    axes = prop.map_axes()
    pts = [r for r in run.rows if all(a in r for a in axes) and r.get("verdict")]
    if not pts or not axes:
        return None
    fig = Figure(figsize=(6.8, 4.6), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)

    def coord(r, a):
        spec = prop.domain[a]
        v = r[a]
        if isinstance(spec, Choice) or isinstance(v, str):
            vals = [str(x) for x in getattr(spec, "values", ())] or sorted({str(p[a]) for p in pts})
            return float(vals.index(str(v))) if str(v) in vals else float("nan")
        return float(v)

    xa, ya = axes[0], axes[1] if len(axes) > 1 else None
    xs = [coord(r, xa) for r in pts]
    ys = [coord(r, ya) for r in pts] if ya else [0.0] * len(pts)
    zs = [min(float(r.get("discrepancy") or 0.0), 6.0) if math.isfinite(float(r.get("discrepancy") or 0.0)) else 6.0
          for r in pts]
    ok = [r["verdict"] == "pass" for r in pts]
    sc = ax.scatter([x for x, g in zip(xs, ok) if g], [y for y, g in zip(ys, ok) if g],
                    c=[z for z, g in zip(zs, ok) if g], cmap="viridis", vmin=0, vmax=6, s=22, label="pass")
    bad = [(x, y) for x, y, g in zip(xs, ys, ok) if not g]
    if bad:
        ax.scatter(*zip(*bad), marker="x", color="red", s=40, label="screened as failing")
    if run.counterexample is not None:
        cx = coord(run.counterexample, xa)
        cy = coord(run.counterexample, ya) if ya else 0.0
        ax.scatter([cx], [cy], marker="*", s=220, color="orange", edgecolor="black", zorder=5,
                   label=f"counterexample ({'confirmed' if run.failed else 'not confirmed'})")
    fig.colorbar(sc, ax=ax, label="discrepancy of the worst check: normal-equivalent |z| (capped at 6)")
    for a, setter, lim_ax in ((xa, ax.set_xlabel, "x"), (ya, ax.set_ylabel, "y")):
        if a is None:
            continue
        setter(a)
        spec = prop.domain[a]
        if getattr(spec, "scale", "") == "log":
            (ax.set_xscale if lim_ax == "x" else ax.set_yscale)("log")
        if isinstance(spec, Choice):
            vals = [str(v) for v in spec.values]
            (ax.set_xticks if lim_ax == "x" else ax.set_yticks)(range(len(vals)))
            (ax.set_xticklabels if lim_ax == "x" else ax.set_yticklabels)(vals, fontsize=7)
    ax.set_title(f"explore {prop.name}: {len(pts)} points, {run.status}\n{prop.title}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.25, 1.0), frameon=False)
    ax.grid(alpha=0.3)
    plain_log_ticks(fig)
    return save_figure(fig, out / f"map-{prop.name}.png")


def _report(runs, *, level, seed, budget, interrupted, previous=()) -> str:
    k = len(runs)
    lines = ["# attnlimits explore", "",
             f"Seed {seed}, budget {budget} points per property, family-wise level {level:g} over {k} "
             f"propert{'y' if k == 1 else 'ies'}" + (" — **interrupted**: the points finished are kept" if interrupted
                                                     else "") + ".", "",
             "## The false-alarm rule", "",
             rule_text(level, k), "",
             "| property | points | status | counterexample | seconds |", "|---|---|---|---|---|"]
    for run in runs:
        ce = "" if run.counterexample is None else ", ".join(f"{k_}={_fmt(v)}" for k_, v in run.counterexample.items())
        lines.append(f"| {run.prop.name} | {len(run.rows)} | {run.status} | {ce} | {run.seconds:.1f} |")
    for run in runs:
        prop = run.prop
        lines += ["", f"## {prop.name}: {prop.title}", "",
                  f"Result `{prop.result}`, {prop.kind}; domain: {domain_text(prop)}; quick size {prop.quick or '-'}, "
                  f"confirmation size {prop.confirm or prop.quick or '-'}; time bound {prop.seconds:g} s per point.",
                  "", f"Status: **{run.status}** after {len(run.rows)} points in {run.seconds:.1f} s "
                      f"(screen level {run.screen_level:.3g}, confirmation level {run.confirm_level:.3g}).",
                  "", "Searched: " + coverage_text(run) + "."]
        if prop.doc:
            lines += ["", prop.doc]
        counts = {}
        for r in run.rows:
            counts[r.get("verdict")] = counts.get(r.get("verdict"), 0) + 1
        lines.append("Verdicts: " + ", ".join(f"{v}: {n}" for v, n in sorted(counts.items(), key=str)) + ".")
        for pt, c in (u for u in run.unconfirmed if u[0] != run.counterexample):
            lines += ["", "Screened failure, not confirmed (a false alarm of the screen): "
                      + ", ".join(f"`{k_}={_fmt(v)}`" for k_, v in pt.items())
                      + f" — confirmation `{c.get('check')}` p {_fmt(c.get('p_value'))}."]
        if run.counterexample is not None:
            c = run.confirmation or {}
            lines += ["", "Minimal counterexample: " + ", ".join(f"`{k_}={_fmt(v)}`" for k_, v in
                                                               run.counterexample.items()) + ".",
                      f"Confirmation ({'failed: a finding' if run.failed else 'passed: not confirmed, a screening false alarm'}): "
                      f"check `{c.get('check')}`, value {_fmt(c.get('value'))}, theory {_fmt(c.get('theory'))}, "
                      f"SE {_fmt(c.get('se'))}, tolerance {_fmt(c.get('tolerance'))}, allowance {_fmt(c.get('allowance'))}, "
                      f"z {_fmt(c.get('z'))}, p {_fmt(c.get('p_value'))}"
                      + (f"; {c.get('message')}" if c.get("message") else "") + ".",
                      "", "Reproduce:", "", "```bash", reproduce_command(prop, run.counterexample, seed), "```"]
        errs = [r for r in run.rows if r.get("verdict") in ("error", "slow") and r.get("message")]
        if errs:
            lines += ["", "First errors:", ""] + [f"- {r.get('message')}" for r in errs[:5]]
    lines += _previous_section(previous, len([r for run in runs for r in run.rows]))
    return "\n".join(lines) + "\n"


def _previous_section(previous, n_now: int) -> list:
    """The earlier runs whose points the table keeps: per property, their points, verdicts and seeds,
    and the points that screened as failing (the table has every row)."""
    if not previous:
        return []
    lines = ["", "## Earlier runs in this folder", "",
             f"The points table keeps {len(previous)} point(s) of earlier runs before this run's {n_now} "
             "(columns `run_seed` and `run_written` tell the runs apart; `--fresh` starts a new table). The "
             "verdicts above are this run's; the earlier points:", "",
             "| property | points | verdicts | seeds |", "|---|---|---|---|"]
    by: dict = {}
    for r in previous:
        by.setdefault(str(r.get("property")), []).append(r)
    for name, rows in by.items():
        counts: dict = {}
        for r in rows:
            counts[r.get("verdict")] = counts.get(r.get("verdict"), 0) + 1
        seeds = sorted({_fmt(r.get("run_seed")) for r in rows if r.get("run_seed") is not None}) or ["-"]
        lines.append(f"| {name} | {len(rows)} | " + ", ".join(f"{v}: {n}" for v, n in sorted(counts.items(), key=str))
                     + f" | {', '.join(seeds)} |")
    bad = [r for r in previous if r.get("verdict") in ("fail", "error")]
    if bad:
        lines += ["", f"{len(bad)} earlier point(s) screened as failing or raised; the first:", ""]
        for r in bad[:5]:
            skip = {"property", "phase", "check", *COMPARISON_COLUMNS, "reference", "discrepancy", "p_point",
                    "verdict", "message", "seconds", "run_seed", "run_written"}
            params = ", ".join(f"`{k_}={_fmt(v)}`" for k_, v in r.items() if k_ not in skip and v is not None)
            lines.append(f"- {r.get('property')} ({r.get('phase')}, {r.get('verdict')}): {params}")
    return lines
