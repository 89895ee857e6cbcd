"""Flagged values in tables and figures: one style, one legend entry, one caption sentence.

A value that is not a prediction (a theory point whose row's ``flag`` is not empty: replica symmetry
broken, unstable, rough, unconverged, an error bar larger than the value; see
:data:`attnlimits.numeric.slr.rs_command.THEORY_FLAGS`) or not a converged result (a training seed that
stalled, hit ``max_iter``, diverged or was interrupted) keeps its number in the rows, with its ``flag``
column, and is drawn apart from the clean values in every figure:

- theory: the prediction line (and its band) runs through the clean points only and alone carries the
  curve's label; flagged points are hollow markers in the curve's colour, joined by nothing, with one
  grey legend entry per reason ("RS unstable (replicon ≥ 1): not a prediction");
- measurements: a flagged point (a seed, or a mean over seeds some of which are flagged) is drawn with an
  ``x`` marker, with one legend entry per reason ("stalled seeds …").

Every figure of the package draws such values through :func:`theory_line`, :func:`measured_points` or, for
a series drawn its own way, :func:`mark_flagged` (``slr train --plot``, ``attnlimits figure``, ``sweep plot``,
the report's claim plots), and says what the markers mean with :func:`caption`.  Column rules: docs/output.md ("flag").
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

__all__ = ["LEGEND", "SEED_FLAGS", "caption", "flag_words", "flagged", "mark_flagged", "measured_points",
           "seed_flag", "summary_flag", "theory_line"]

#: The legend text of each flag word (theory words first, then training statuses).
LEGEND = {
    "rsb": "RS unstable (replicon ≥ 1): not a prediction",
    "rsb_uncertain": "replicon within 3 SE of 1: RS possibly broken, not a prediction",
    "unstable": "unstable fixed point (damped map): not a prediction",
    "rough": "fixed point of a rough map: not a prediction",
    "unconverged": "fixed point above its residual target: not a prediction",
    "error_exceeds_value": "integration error ≥ value: not a prediction",
    "stalled": "seeds stalled (stopped above the gradient tolerance)",
    "max_iter": "seeds stopped at max_iter (not converged)",
    "diverged": "seeds diverged",
    "interrupted": "seeds interrupted",
}
#: Training statuses that flag a seed (``converged`` does not).
SEED_FLAGS = ("stalled", "max_iter", "diverged", "interrupted")

_THEORY_STYLE = {"marker": "o", "ms": 4.5, "mfc": "none", "mew": 1.0, "ls": "none"}
_MEASURED_MARKER = "x"
_LEGEND_GREY = "0.45"


def flag_words(flag: Any) -> list[str]:
    """The words of a ``flag`` value (comma-joined text, a list, or empty/None/NaN), in order."""
    if flag is None or (isinstance(flag, float) and math.isnan(flag)) or flag is False:
        return []
    if isinstance(flag, (list, tuple, set)):
        return [str(w) for w in flag if str(w).strip()]
    return [w.strip() for w in str(flag).split(",") if w.strip()]


def flagged(flag: Any) -> bool:
    """Whether a ``flag`` value names at least one reason."""
    return bool(flag_words(flag))


def seed_flag(status: Any) -> str:
    """The ``flag`` of a training seed from its ``status``: the status when it is in :data:`SEED_FLAGS`."""
    return str(status) if str(status) in SEED_FLAGS else ""


def summary_flag(flags: Iterable[Any]) -> str:
    """The ``flag`` of a row pooled from rows with ``flags`` (e.g. a mean over seeds): every word any of them
    carries, comma-joined in first-seen order."""
    return ",".join(dict.fromkeys(w for f in flags for w in flag_words(f)))


def _legend_once(ax, word: str, kind: str) -> None:
    """One grey legend entry per flag word per axes (a proxy artist: no data)."""
    seen = ax.__dict__.setdefault("_attnlimits_flag_legend", set())
    if word in seen:
        return
    seen.add(word)
    text = LEGEND.get(word, f"flagged {word}: " + ("not a prediction" if kind == "theory" else "not converged"))
    if kind == "theory":
        ax.plot([], [], color=_LEGEND_GREY, **_THEORY_STYLE, label=text)
    else:
        ax.plot([], [], _MEASURED_MARKER, color=_LEGEND_GREY, ms=5, ls="none", label=text)


def _mask(flags, n: int):
    import numpy as np

    if flags is None:
        return np.zeros(n, dtype=bool)
    flags = list(flags)
    if len(flags) != n:
        raise ValueError(f"{len(flags)} flags for {n} points")
    return np.array([flagged(f) for f in flags], dtype=bool)


def mark_flagged(ax, x: Sequence, y: Sequence, flags: Sequence | None, *, color, yerr: Sequence | None = None,
                 label: str | None = None, ms: float = 4, capsize: float = 3, zorder: int = 4):
    """Draw only the flagged points of a series, apart from its clean ones: a point whose flag names a theory
    reason (``rsb``, ``unstable``, …) as a hollow marker, one flagged by training statuses only (:data:`SEED_FLAGS`)
    as an ``x`` with its error bar; one grey legend entry per reason.  ``label`` (if any) goes on the first
    artist drawn.  Returns the boolean mask of flagged points; the caller draws the others."""
    import numpy as np

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    bad = _mask(flags, len(x))
    if not bad.any():
        return bad
    e = None if yerr is None else np.asarray(yerr, dtype=float)
    if e is not None:
        e = np.where(np.isfinite(e) & (e >= 0), e, 0.0) if len(e) == len(y) else None
    words = [flag_words(f) if b else [] for f, b in zip(flags, bad)]
    theory = np.array([bool(ws) and any(w not in SEED_FLAGS for w in ws) for ws in words], dtype=bool)
    for sel, kind in ((theory, "theory"), (bad & ~theory, "measured")):
        if not sel.any():
            continue
        if kind == "theory":
            ax.plot(x[sel], y[sel], color=color, zorder=zorder, label=label, **{**_THEORY_STYLE, "ms": ms + 0.5})
        else:
            ax.errorbar(x[sel], y[sel], yerr=None if e is None else e[sel], fmt=_MEASURED_MARKER, ms=ms + 1.5,
                        capsize=capsize, elinewidth=1, color=color, ls="none", label=label, zorder=zorder)
        label = None
        for w in dict.fromkeys(w for ws, t in zip(words, sel) if t for w in ws):
            _legend_once(ax, w, kind)
    return bad


def theory_line(ax, x: Sequence, y: Sequence, flags: Sequence | None = None, *, color, label: str | None = None,
                err: Sequence | None = None, band: float = 1.0, ls: str = "-", lw: float = 1.6, marker: str | None = None,
                ms: float = 4, zorder: int = 2):
    """Draw a theory curve: the line (``ls``; with ``marker`` at the points when given; and a ±``band``·``err``
    band) through the unflagged points only, labelled ``label`` when it has any; flagged points as hollow
    markers in ``color`` with a legend entry per reason (:func:`mark_flagged`).  Values compared with a flagged
    theory point (a residual against it) are drawn the same way.  Returns the boolean mask of flagged points."""
    import numpy as np

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    bad = _mask(flags, len(x))
    good = ~bad
    yc = np.where(good, y, np.nan)  # a flagged point breaks the line: nothing joins it to a prediction
    if good.any():
        ax.plot(x, yc, ls=ls, lw=lw, color=color, label=label, zorder=zorder, marker=marker, ms=ms)
        # a clean point between flagged ones has no segment: keep it visible
        drawn = good & np.isfinite(x) & np.isfinite(y)  # a flagged point or a NaN breaks the line
        lone = drawn & ~np.r_[False, drawn[:-1]] & ~np.r_[drawn[1:], False]
        if lone.any() and marker is None:
            ax.plot(x[lone], y[lone], ".", ms=5, color=color, zorder=zorder)
    if err is not None:
        e = np.asarray(err, dtype=float)
        if len(e) == len(y) and np.isfinite(e[good]).any():
            e = np.where(np.isfinite(e) & (e >= 0), e, 0.0)
            ax.fill_between(x, y - band * e, y + band * e, where=good, color=color, alpha=0.2, lw=0,
                            zorder=zorder - 1, interpolate=False)
    # a curve with no clean point keeps its colour in the legend, said to be no prediction
    mark_flagged(ax, x, y, flags, color=color, ms=ms, zorder=zorder + 1,
                 label=f"{label} (every point flagged: not a prediction)" if label and not good.any() else None)
    return bad


def measured_points(ax, x: Sequence, y: Sequence, yerr: Sequence | None = None, flags: Sequence | None = None, *,
                    color, label: str | None = None, marker: str = "o", ms: float = 4, capsize: float = 3,
                    zorder: int = 3):
    """Draw measured points with error bars: unflagged ones with ``marker`` (labelled ``label``), flagged ones
    (a seed that did not converge, or a mean over seeds some of which did not) with an ``x`` and a legend
    entry per reason (:func:`mark_flagged`).  Returns the boolean mask of flagged points."""
    import numpy as np

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    e = None if yerr is None else np.asarray(yerr, dtype=float)
    if e is not None:
        e = np.where(np.isfinite(e) & (e >= 0), e, 0.0) if len(e) == len(y) else None
    bad = _mask(flags, len(x))
    if (~bad).any():
        ax.errorbar(x[~bad], y[~bad], yerr=None if e is None else e[~bad], fmt=marker, ms=ms, capsize=capsize,
                    elinewidth=1, color=color, ls="none", label=label, zorder=zorder)
    mark_flagged(ax, x, y, flags, color=color, yerr=e, ms=ms, capsize=capsize, zorder=zorder,
                 label=None if (~bad).any() else label)
    return bad


def caption(flags: Iterable[Any]) -> str:
    """One sentence for a figure's note saying what its flagged markers mean ("" when nothing is flagged)."""
    words = list(dict.fromkeys(w for f in flags for w in flag_words(f)))
    theory = [w for w in words if w not in SEED_FLAGS]
    seeds = [w for w in words if w in SEED_FLAGS]
    out = []
    if theory:
        out.append(f"hollow markers: theory points flagged {', '.join(theory)} (column flag), off the prediction "
                   "line: not predictions")
    if seeds:
        out.append(f"x markers: training results with seeds flagged {', '.join(seeds)} (column flag): not "
                   "converged")
    return "; ".join(out)
