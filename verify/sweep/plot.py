"""Curves from a results table: ``attnlimits sweep plot DIR --x alpha --y E_test --hue activation``.

One curve per value of ``hue`` (or one curve), ``y`` against ``x`` over the points whose status
is ``ok``.  Error bars: when several points share a curve and an ``x`` (seeds), the standard
error of their mean, ``std(ddof=1)/sqrt(n)``; for a single point, its ``<y>_error`` (or ``<y>_se``) column when
the table has one.  A swept parameter that varies within a curve (other than ``seed``) is an
error: fix it with ``--where name=value`` or make it the ``--hue``.  A point whose rows carry a
``flag`` (docs/output.md: a theory value that is not a prediction — ``rsb``, ``unstable``, ``rough``… — or
a training seed that stalled or did not converge) is drawn apart: a hollow marker (theory) or an ``x``
(training), off the curve's line, with a legend entry per reason and a line in the title
(:mod:`attnlimits.verify.flags`).  Drawn with matplotlib's Agg canvas (no display, no global backend change).
"""
from __future__ import annotations

import math
from pathlib import Path

from attnlimits.symbolic.result import InputError

from attnlimits.verify.flags import caption, mark_flagged, summary_flag

from .table import ResultsTable

__all__ = ["plot_table", "curves"]


def _match(value, wanted: str) -> bool:
    if value is None:
        return wanted.lower() in ("", "none", "null")
    if isinstance(value, bool):
        return str(value).lower() == wanted.strip().lower()
    if isinstance(value, (int, float)):
        try:
            return math.isclose(float(value), float(wanted), rel_tol=1e-9, abs_tol=1e-300)
        except ValueError:
            return False
    return str(value) == wanted


def _parse_where(where) -> list[tuple[str, str]]:
    out = []
    for w in where or ():
        name, sep, val = str(w).partition("=")
        if not sep or not name.strip():
            raise InputError(f"--where needs name=value, got {w!r}")
        out.append((name.strip(), val.strip()))
    return out


def curves(directory, x: str, y: str, hue: str | None = None, where=(), *, flags: bool = False) -> dict:
    """The curves as data: ``{hue value: [(x, y, y_err or None, n), ...]}`` sorted by ``x``; with ``flags`` each
    tuple gains the point's ``flag``: every word the ``flag`` column of its rows carries (``""`` when none)."""
    table = ResultsTable(directory)
    if not table.part_files():
        raise InputError(f"{directory} holds no sweep results (no {table.parts}/*.parquet)")
    rows = [r for r in table.rows() if r.get("status") == "ok"]
    if not rows:
        raise InputError(f"{directory} has no point with status ok")
    columns = list(dict.fromkeys(k for r in rows for k in r))
    for what, name in (("--x", x), ("--y", y), ("--hue", hue)):
        if name is not None and name not in columns:
            raise InputError(f"{what} {name!r} is not a column; columns: {', '.join(columns)}")
    for name, val in _parse_where(where):
        if name not in columns:
            raise InputError(f"--where {name!r} is not a column; columns: {', '.join(columns)}")
        rows = [r for r in rows if _match(r.get(name), val)]
    if not rows:
        raise InputError("no point matches --where " + " ".join(map(str, where)))
    man = table.manifest() or {}
    swept = [a for a in man.get("axes", []) if a not in (x, hue, "seed") and a in columns]
    err_col = next((f"{y}{s}" for s in ("_error", "_se") if f"{y}{s}" in columns), None)  # docs/output.md

    def number(v):  # raw-text parameters (an mpmath backend's exact "0.5") count as numbers
        if isinstance(v, str):
            try:
                return float(v)
            except ValueError:
                return v
        return v

    groups: dict = {}
    for r in rows:
        xv, yv = number(r.get(x)), number(r.get(y))
        if not isinstance(xv, (int, float)) or not isinstance(yv, (int, float)) or isinstance(yv, bool):
            continue
        if not (math.isfinite(float(xv)) and math.isfinite(float(yv))):
            continue
        groups.setdefault(r.get(hue) if hue else None, {}).setdefault(float(xv), []).append(r)
    if not groups:
        raise InputError(f"no numeric values of {x!r} and {y!r} to plot")
    out = {}
    for h, by_x in groups.items():
        pts = []
        for xv in sorted(by_x):
            rs = by_x[xv]
            for a in swept:
                vals = sorted({repr(r.get(a)) for r in rs})
                if len(vals) > 1:
                    label = f" (hue {hue}={h})" if hue else ""
                    raise InputError(f"parameter {a} takes {', '.join(vals[:5])} at {x}={xv:g}{label}: "
                                     f"give --where {a}=VALUE or --hue {a}")
            ys = [float(r[y]) for r in rs]
            n = len(ys)
            mean = sum(ys) / n
            if n > 1:
                var = sum((v - mean) ** 2 for v in ys) / (n - 1)
                err = math.sqrt(var / n)
            else:
                e = rs[0].get(err_col) if err_col else None
                err = float(e) if isinstance(e, (int, float)) and math.isfinite(float(e)) else None
            pts.append((xv, mean, err, n) + ((summary_flag(r.get("flag") for r in rs),) if flags else ()))
        out[h] = pts
    return out


def _geometric(xs) -> bool:
    """True for a log-spaced grid: positive, spanning at least a factor 10, constant ratios (±5 %)."""
    xs = sorted(set(xs))
    if len(xs) < 3 or xs[0] <= 0 or xs[-1] / xs[0] < 10:
        return False
    ratios = [b / a for a, b in zip(xs, xs[1:])]
    return max(ratios) / min(ratios) < 1.05


def _fixed_parameters(directory, x, hue, where) -> str:
    """``name=value`` for each parameter that is constant over the plotted points (the title's second line)."""
    table = ResultsTable(directory)
    man = table.manifest() or {}
    params = [p for p in man.get("parameters", []) if p not in (x, hue, "seed")]
    rows = [r for r in table.rows() if r.get("status") == "ok"]
    for name, val in _parse_where(where):
        rows = [r for r in rows if _match(r.get(name), val)]
    out = []
    for p in params:
        vals = {repr(r.get(p)) for r in rows if p in r}
        if len(vals) == 1:
            v = rows[0].get(p)
            out.append(f"{p}={v:g}" if isinstance(v, float) else f"{p}={v}")
    return ", ".join(out)


def plot_table(directory, x: str, y: str, hue: str | None = None, where=(), output=None,
               logx: bool | None = None, logy: bool = False, title: str | None = None) -> Path:
    """Draw ``y`` against ``x`` (one curve per ``hue``) from the table in ``directory``; return the PNG path.

    ``output`` defaults to ``DIR/<y>_vs_<x>[_by_<hue>].png``.  See the module docstring for the
    error bars.  ``logx=None`` (default) draws a log axis when the x values form a log-spaced grid.
    The title names the command and every parameter held fixed over the plotted points; the
    legend sits outside the data; log axes get plain tick labels; the file is written atomically.
    Raises :class:`attnlimits.symbolic.result.InputError` for an unknown column, an empty
    selection, or a swept parameter varying within a curve.
    """
    import textwrap

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from attnlimits.verify.outputs import check_output_file, plain_log_ticks, save_figure

    if output is None:
        output = Path(directory) / (f"{y}_vs_{x}" + (f"_by_{hue}" if hue else "") + ".png")
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output = check_output_file(output, option="-o/--output", suffixes=(".png", ".pdf", ".svg"))
    data = curves(directory, x, y, hue, where, flags=True)
    fig = Figure(figsize=(7.2, 4.4), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)

    def order(h):
        return (0, float(h)) if isinstance(h, (int, float)) else (1, str(h))

    n_max = 1
    for i, h in enumerate(sorted(data, key=order)):
        pts = data[h]
        xs = [p[0] for p in pts]
        fl = [p[4] for p in pts]
        # a flagged point leaves the curve (its y is a gap there) and is drawn apart by mark_flagged
        ys = [p[1] if not f else math.nan for p, f in zip(pts, fl)]
        errs = [p[2] if p[2] is not None else 0.0 for p in pts]
        n_max = max([n_max] + [p[3] for p in pts])
        label = f"{hue} = {h}" if hue else y
        color = f"C{i % 10}"
        clean = any(not f for f in fl)
        if clean and any(p[2] is not None for p in pts):
            ax.errorbar(xs, ys, yerr=errs, marker="o", ms=3, capsize=2, label=label, color=color)
        elif clean:
            ax.plot(xs, ys, marker="o", ms=3, label=label, color=color)
        mark_flagged(ax, xs, [p[1] for p in pts], fl, color=color, ms=3, capsize=2,
                     yerr=errs if any(p[2] is not None for p in pts) else None, label=None if clean else label)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    all_x = [p[0] for pts in data.values() for p in pts]
    if logx or (logx is None and _geometric(all_x)):
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    man = ResultsTable(directory).manifest() or {}
    fixed = _fixed_parameters(directory, x, hue, where)
    head = title or man.get("command", "")
    sub = fixed + (f"; mean ± SE over {n_max} seeds" if n_max > 1 else "")
    said = caption(p[4] for pts in data.values() for p in pts)
    sub += (f"; {said}" if sub else said) if said else ""
    ax.set_title(head + ("\n" + "\n".join(textwrap.wrap(sub, 80)) if sub else ""), fontsize=9)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.grid(True, alpha=0.3)
    plain_log_ticks(fig)
    return save_figure(fig, output)
