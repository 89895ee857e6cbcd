"""The PNG plot of a claim (:func:`plot_claim`): its plot specs side by side, drawn on a
:class:`matplotlib.figure.Figure` with the Agg canvas (the user's backend is never changed)."""
from __future__ import annotations

import math
import re
import textwrap
import warnings
from pathlib import Path
from typing import Any

from attnlimits.verify.flags import caption, measured_points, theory_line

from .checks import as_float, attr_of

__all__ = ["safe_name", "draw_spec", "plot_caption", "plot_claim"]


# --------------------------------------------------------------------------------------------------
# plots
# --------------------------------------------------------------------------------------------------
def safe_name(name: str, taken: set[str]) -> str:
    """File-name-safe version of a claim name, unique (case-insensitively) among ``taken``."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)).strip("._-") or "claim"
    stem = stem[:80]
    cand, i = stem, 2
    while cand.lower() in taken:
        cand, i = f"{stem}-{i}", i + 1
    taken.add(cand.lower())
    return cand


def _array(values: Any):
    import numpy as np

    if values is None:
        return None
    out = []
    for v in (values.tolist() if hasattr(values, "tolist") else list(values)):
        f = as_float(v)
        out.append(math.nan if f is None else f)
    return np.asarray(out, dtype=float)


def _set_scale(ax, which: str, scale: str, data) -> None:
    import numpy as np

    scale = (scale or "linear").lower()
    if scale == "log":
        finite = np.concatenate([d[np.isfinite(d)] for d in data]) if data else np.array([])
        if finite.size and np.all(finite > 0):
            (ax.set_xscale if which == "x" else ax.set_yscale)("log")
        elif finite.size:  # non-positive data on a log axis: symmetric log instead of dropping points
            nonzero = np.abs(finite[finite != 0])
            linthresh = float(np.min(nonzero)) if nonzero.size else 1.0
            (ax.set_xscale if which == "x" else ax.set_yscale)("symlog", linthresh=linthresh)
    elif scale in ("linear", "symlog", "logit"):
        (ax.set_xscale if which == "x" else ax.set_yscale)(scale)


def draw_spec(ax, spec: Any) -> None:
    """Draw one plot spec of a claim (its lines, points and bands) on ``ax``."""
    series = list(attr_of(spec, "series", []) or [])
    lines = [s for s in series if attr_of(s, "kind", "line") == "line"]
    points = [s for s in series if attr_of(s, "kind", "line") == "points"]
    paired = len(lines) == len(points)  # theory curve i and MC points i share a colour
    groups = [g for g in dict.fromkeys(attr_of(s, "group", None) for s in series) if g is not None]
    xs, ys = [], []
    n_line = n_point = 0
    for idx, s in enumerate(series):
        x, y = _array(attr_of(s, "x")), _array(attr_of(s, "y"))
        if x is None or y is None or len(x) != len(y):
            raise ValueError(f"series {attr_of(s, 'label', '?')!r}: x and y lengths differ")
        xs.append(x), ys.append(y)
        kind = attr_of(s, "kind", "line")
        is_points = kind == "points"
        group = attr_of(s, "group", None)
        if groups:
            color = f"C{groups.index(group) % 10}" if group is not None else ("black" if kind == "dashed" else
                                                                              f"C{idx % 10}")
        elif paired:
            color = f"C{n_point if is_points else n_line}"
        else:
            color = f"C{idx % 10}"
        label = attr_of(s, "label", None) or None
        flags = attr_of(s, "flags", None)
        flags = list(flags) if flags is not None and len(list(flags)) == len(x) else None
        if kind == "dashed":
            ax.plot(x, y, "--" if group is not None else "-.", lw=1.1, color=color, label=label, zorder=1)
            continue
        yerr = _array(attr_of(s, "yerr"))
        if yerr is not None and len(yerr) != len(y):
            yerr = None
        if is_points:  # NaN / negative errors drawn as none; a flagged point as an x (verify/flags.py)
            measured_points(ax, x, y, yerr, flags, color=color, label=label, zorder=3)
            n_point += 1
        else:  # the line through the unflagged points, a flagged one hollow; isolated points stay visible
            theory_line(ax, x, y, flags, color=color, label=label, err=yerr, band=1.0, zorder=2)
            n_line += 1
    _set_scale(ax, "x", attr_of(spec, "xscale", "log"), xs)
    _set_scale(ax, "y", attr_of(spec, "yscale", "linear"), ys)
    ax.set_xlabel(str(attr_of(spec, "xlabel", "") or ""))
    ax.set_ylabel(str(attr_of(spec, "ylabel", "") or ""))
    ax.set_title(str(attr_of(spec, "title", "") or ""), fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    if any(attr_of(s, "label", None) for s in series):
        ax.legend(fontsize=7, framealpha=0.85)


def plot_caption(result: Any) -> str:
    """The sentence saying what the flagged markers of a claim's plots mean ("" when no point is flagged)."""
    return caption(f for spec in (attr_of(result, "plots", None) or []) for s in (attr_of(spec, "series", None) or [])
                   for f in (attr_of(s, "flags", None) or []))


def plot_claim(result: Any, path: Path) -> Path:
    """One PNG for a claim: its plot specs as subplots, side by side (at most 3 per row)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    specs = list(result.plots)
    ncols = min(len(specs), 3)
    nrows = math.ceil(len(specs) / ncols)
    fig = Figure(figsize=(4.8 * ncols, 3.8 * nrows + 0.4))
    FigureCanvasAgg(fig)
    try:
        axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. all-NaN series, empty legend
            for ax, spec in zip(axes, specs):
                draw_spec(ax, spec)
            for ax in axes[len(specs):]:
                ax.set_visible(False)
            title = f"{result.claim} — {result.title}" if result.title else str(result.claim)
            if len(title) > 40 * ncols + 30:
                title = title[: 40 * ncols + 29] + "…"
            fig.suptitle(title, fontsize=10)
            said = plot_caption(result)
            if said:  # what the hollow / x markers mean, under the panels
                fig.text(0.5, 0.005, "\n".join(textwrap.wrap(said, 60 * ncols)), ha="center", va="bottom",
                         fontsize=7, color="0.3")
            fig.tight_layout(rect=(0, 0.06 if said else 0, 1, 1))
            from attnlimits.verify.outputs import save_figure

            save_figure(fig, path, dpi=110)  # atomically; a link in its place is replaced, not written through
    finally:
        fig.clear()
    return path
