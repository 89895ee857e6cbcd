"""What every figure panel shares: the axes in the panels' style, the colours, the command runner, the
comparison columns of a simulated point, the progress line of the panel being drawn, and the finishing
step that writes ``NAME.png`` and ``NAME.csv``.  Panels (a result's, or a plug-in's) import from here;
nothing here imports a panel."""
from __future__ import annotations

import contextvars
import csv
import os
import textwrap
from pathlib import Path

from attnlimits.symbolic.files import atomic_write
from attnlimits.symbolic.result import discover_results

__all__ = ["COLORS", "PROGRESS", "axes", "compared", "finish", "report_step", "run_command"]

#: The colour of each curve, by its key (activation, setting or reference), in every panel.
COLORS = {"ridge": "k", "w0": "C0", "aligned": "C3", "softmax": "C3", "linear_uncentred": "C0",
           "linear_centred": "C9", "erf_learned": "C2", "softplus_norm": "C4", "bayes": "k", "BO": "k"}


#: the progress callback of the figure being drawn (set by :func:`make_figure`); None: silent
PROGRESS: contextvars.ContextVar = contextvars.ContextVar("figure_progress", default=None)


def report_step(msg: str) -> None:
    """One progress line of the figure being drawn (``figure NAME: msg`` on stderr from the CLI)."""
    report = PROGRESS.get()
    if report is not None:
        report(msg)


def compared(value, theory, se, draws) -> dict:
    """The comparison columns of a simulated point against its theory (the columns ``verify`` and
    ``explore`` write for a comparison: docs/output.md, "Comparison columns"); the SE comes from
    ``draws`` draws or seeds (``draws − 1`` degrees of freedom)."""
    from attnlimits.verify.comparison import Comparison, comparison_columns

    try:
        comp = Comparison(float(value), float(theory), se=float(se),
                          dof=float(draws) - 1 if draws and int(draws) > 1 else None)
        return comparison_columns(comp)
    except (TypeError, ValueError):
        return comparison_columns(None)


def run_command(result: str, command: str, **params) -> list[dict]:
    """Rows of a registered command (by its result's and its own name); its own progress lines go to the figure's progress."""
    cmd = discover_results()[result].command(command)
    return list(cmd.function()(cmd.parse(params), progress=report_step if PROGRESS.get() is not None else None))


def axes(title: str, xlabel: str, ylabel: str, logx=False, logy=False, residual=False):
    """A panel's figure and axes in the style of every panel (``residual=True`` adds the (sim − theory)/SE
    axes below): ``(fig, ax, rax)``; for a plug-in's :class:`attnlimits.symbolic.result.Panel` too."""
    import matplotlib

    matplotlib.use("Agg", force=False) if not os.environ.get("MPLBACKEND") else None
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    fig = MplFigure(figsize=(7.0, 5.2 if residual else 4.2), layout="constrained")
    if residual:
        ax, rax = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    else:
        ax, rax = fig.subplots(1, 1), None
    for a in [ax] + ([rax] if rax is not None else []):
        if logx:
            a.set_xscale("log")
            a.xaxis.set_major_locator(LogLocator(base=10, numticks=8))
            a.xaxis.set_minor_formatter(NullFormatter())
        a.grid(alpha=0.3, which="major")
    if logy:
        ax.set_yscale("log")
    else:
        ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.set_title("\n".join(textwrap.wrap(title, 70)), fontsize=9.5)
    ax.set_ylabel(ylabel)
    (rax or ax).set_xlabel(xlabel)
    if rax is not None:
        rax.axhline(0, color="0.5", lw=0.8)
        rax.set_ylabel("(sim − theory)/SE", fontsize=8)
    return fig, ax, rax


def finish(fig, ax, out: Path, name: str, rows: list[dict], note: str) -> Path:
    """Put the legend and the ``note`` (sizes, seeds) beside the axes, write ``out/NAME.png`` and the tidy
    ``out/NAME.csv`` of ``rows``; return the PNG path."""
    from attnlimits.verify.outputs import plain_log_ticks

    plain_log_ticks(fig)  # 0.1, 0.2, 0.5, 1 (or one per decade when wide)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    # the sizes, seeds and fixed parameters, in the right margin under the legend
    ax.annotate("\n".join(textwrap.wrap(note, 44)), xy=(1.02, 0.0), xycoords="axes fraction", fontsize=6.5,
                color="0.3", ha="left", va="bottom")
    from attnlimits.verify.outputs import save_figure

    png = save_figure(fig, out / f"{name}.png", dpi=130)
    cols = list(dict.fromkeys(k for r in rows for k in r))

    def write_csv(tmp):
        with open(tmp, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols)
            w.writeheader()
            w.writerows(rows)
    atomic_write(out / f"{name}.csv", write_csv)
    return png


