r"""Phase diagram of the spiked- or max-SLR BO state evolution in the (α, ν) plane (claim C19-phase).

The table is :func:`attnlimits.verify.slr.bayes_optimal.phase_scan` (informed and uninformed starts of the state
evolution of ``docs/slr.md`` §11, continuation in α, free entropies compared): a computationally hard phase
is a point where the two fixed points differ and the informed one has the larger free entropy (AMP, which
follows the uninformed branch, would then miss the BO error).  This module only draws and summarises it.

- :func:`plot_phase_diagram` — one PNG, one panel per L: colour = :math:`E_{BO}` on the (α, ν) grid, a marker
  at every grid point (grey dot: one fixed point; orange square: two distinct fixed points, the uninformed
  one selected; red cross: hard phase), and the sentence "no hard phase found in this range" in the title of
  every panel where that is the result; the model is in every panel title, and ν = ∞ (max-SLR, argmax)
  is a separate top row labelled ∞ above a dashed line.
- :func:`phase_summary` — per L: grid size, number of distinct and of hard points, largest
  :math:`|E_{\rm informed}-E_{\rm uninformed}|`.
- :data:`PHASE_COMMAND`, :func:`run_phase` — ``attnlimits slr bo-phase`` (:mod:`attnlimits.symbolic.result` contract):
  the table's rows, and the PNG when ``--plot PATH`` is given.
"""
from __future__ import annotations

import math

import numpy as np

from attnlimits.symbolic.result import InputError

__all__ = ["plot_phase_diagram", "phase_summary", "run_phase", "PHASE_COMMAND", "DISTINCT_TOL",
           "NO_HARD_PHASE"]

#: Two fixed points count as distinct when their E_BO differ by more than this (the rule of
#: :func:`attnlimits.numeric.slr.bo_state_evolution.bo_curve`, whose branches are already de-duplicated, is kept; this is for
#: the marker only).
DISTINCT_TOL = 1e-3

NO_HARD_PHASE = "no hard phase found in this range"


def phase_summary(rows) -> dict:
    """Per L: ``points``, ``distinct``, ``hard``, ``max_gap`` (max |E_informed − E_uninformed|), the α and ν ranges
    (ν = inf counts as the largest)."""
    out = {}
    for L in sorted({int(r["L"]) for r in rows}):
        sub = [r for r in rows if int(r["L"]) == L]
        out[L] = {"points": len(sub), "distinct": sum(bool(r["distinct"]) for r in sub),
                  "hard": sum(bool(r["hard"]) for r in sub),
                  "max_gap": max(abs(r["E_informed"] - r["E_uninformed"]) for r in sub),
                  "alpha_range": (min(r["alpha"] for r in sub), max(r["alpha"] for r in sub)),
                  "nu_range": (min(r["nu"] for r in sub), max(r["nu"] for r in sub))}
    return out


def _edges(vals):
    v = np.asarray(sorted(vals), dtype=float)
    if v.size == 1:
        return np.array([v[0] / 1.5, v[0] * 1.5])
    lv = np.log(v)
    mid = (lv[1:] + lv[:-1]) / 2
    return np.exp(np.concatenate([[lv[0] - (mid[0] - lv[0])], mid, [lv[-1] + (lv[-1] - mid[-1])]]))


def _nu_positions(nus):
    """Plot positions (log axis) of the sorted ν values: finite ν as themselves, ν = ∞ one grid step (the last
    log spacing, at least ×2) above the largest finite ν (or 1 when every ν is ∞).  Returns (positions, labels,
    y of the line between the finite rows and the ∞ row or None)."""
    fin = [v for v in nus if math.isfinite(v)]
    pos, labels = list(fin), [f"{v:g}" for v in fin]
    line = None
    if len(fin) < len(nus):
        if not fin:
            y = 1.0
        else:
            step = max(2.0, fin[-1] / fin[-2]) if len(fin) > 1 else 2.0
            y = fin[-1] * step
            line = math.sqrt(fin[-1] * y)
        pos.append(y)
        labels.append("∞")
    return pos, labels, line


def _model_name(rows) -> str:
    models = sorted({str(r.get("model", "spiked")) for r in rows})
    return "/".join(f"{m}-SLR" for m in models)


def plot_phase_diagram(rows, path, *, title: str | None = None) -> str:
    r"""Write the (α, ν) phase diagram of :func:`attnlimits.verify.slr.bayes_optimal.phase_scan` rows to ``path`` (PNG).

    One panel per L; log–log axes (sample ratio α = N/D, spike strength ν; ν = ∞ as a separate top row
    labelled ∞); colour :math:`E_{BO}` (shared colour bar); markers as in the module docstring; the model
    (the rows' ``model``, spiked when absent) in every title; the panel says "no hard phase found in this range" (with
    the grid it was scanned on) when no point is hard, and counts the hard and distinct points otherwise.
    Returns ``str(path)``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    rows = list(rows)
    if not rows:
        raise InputError("no phase-scan rows to plot")
    Ls = sorted({int(r["L"]) for r in rows})
    summ = phase_summary(rows)
    mname = _model_name(rows)
    conts = {r.get("continuation", "up") for r in rows}
    fig = Figure(figsize=(max(9.0, 4.6 * len(Ls) + 1.2), 5.0))  # at least the width of the legend
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(Ls), squeeze=False)[0]
    norm = Normalize(vmin=0.0, vmax=max(1.0, max(r["E_BO"] for r in rows)))
    mesh = None
    for ax, L in zip(axes, Ls):
        sub = [r for r in rows if int(r["L"]) == L]
        nus = sorted({float(r["nu"]) for r in sub})
        # colour cells: the α present at every ν of the panel (the regular grid); other α (refinements at
        # some ν only) are drawn as markers at their α, over the cell of the nearest grid α
        al_all = sorted({float(r["alpha"]) for r in sub})
        al = [a for a in al_all if all(any(float(r["alpha"]) == a and float(r["nu"]) == n for r in sub) for n in nus)]
        al = al or al_all
        ypos, ylab, yline = _nu_positions(nus)
        Z = np.full((len(nus), len(al)), np.nan)
        for r in sub:
            if float(r["alpha"]) in al:
                Z[nus.index(float(r["nu"])), al.index(float(r["alpha"]))] = r["E_BO"]
        mesh = ax.pcolormesh(_edges(al), _edges(ypos), np.ma.masked_invalid(Z), cmap="viridis", norm=norm,
                             shading="flat")
        if yline is not None:
            ax.axhline(yline, color="white", ls="--", lw=1.2)
        for r in sub:
            gap = abs(r["E_informed"] - r["E_uninformed"])
            y = ypos[nus.index(float(r["nu"]))]
            if r["hard"]:
                ax.plot(r["alpha"], y, "x", color="red", ms=10, mew=2.5)
            elif r["distinct"] or gap > DISTINCT_TOL:
                ax.plot(r["alpha"], y, "s", mfc="none", mec="orange", ms=9, mew=2)
            else:
                ax.plot(r["alpha"], y, ".", color="0.85", ms=5)
            if r.get("continuation") == "none" and len(conts) > 1:
                ax.plot(r["alpha"], y, "o", mfc="none", mec="white", ms=8, mew=1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(al)
        ax.set_xticklabels([f"{a:g}" for a in al], fontsize=8, rotation=90 if len(al) > 9 else 0)
        ax.set_yticks(ypos)
        ax.set_yticklabels(ylab, fontsize=8)
        ax.minorticks_off()
        ax.set_xlabel(r"sample ratio $\alpha = N/D$")
        ax.set_ylabel({"spiked-SLR": r"spike strength $\nu$", "max-SLR": r"inverse temperature $\nu$"}.get(
            mname, r"$\nu$"))
        s = summ[L]
        if s["hard"] == 0:
            head = NO_HARD_PHASE
            sub_t = ("same fixed point from both starts everywhere" if s["distinct"] == 0
                     else f"{s['distinct']} point(s) with two fixed points, none hard")
        else:
            head = f"HARD PHASE at {s['hard']} of {s['points']} grid points"
            sub_t = f"{s['distinct']} point(s) with two fixed points"
        ax.set_title(f"{mname}, L = {L}\n{head}\n({sub_t})", fontsize=9,
                     color="black" if s["hard"] == 0 else "red")
    cbar = fig.colorbar(mesh, ax=list(axes), fraction=0.04, pad=0.02)
    cbar.set_label(r"Bayes-optimal test error $E_{BO}$")
    handles = [Line2D([], [], ls="", marker=".", color="0.6", ms=7, label="one fixed point (informed = uninformed)"),
               Line2D([], [], ls="", marker="s", mfc="none", mec="orange", mew=2, ms=8,
                      label="two fixed points, uninformed selected"),
               Line2D([], [], ls="", marker="x", color="red", mew=2.5, ms=9,
                      label="hard phase (informed has larger free entropy)")]
    if len(conts) > 1:
        handles.append(Line2D([], [], ls="", marker="o", mfc="none", mec="0.4", ms=8, mew=1.2,
                              label="both starts cold at this α"))
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), fontsize=8, frameon=False,
               bbox_to_anchor=(0.45 if len(handles) < 4 else 0.5, 1.0))
    delta = rows[0].get("delta", 0.1)
    how = {frozenset({"up"}): "with continuation in α", frozenset({"none"}): "cold at every α"}.get(
        frozenset(conts), "continued in α (rings: cold at that α)")
    fig.suptitle(title or f"BO state evolution of {mname}, informed vs uninformed starts {how} "
                          f"(Δ = {delta:g}; docs/slr.md §11)", fontsize=10, y=0.925)
    fig.subplots_adjust(left=0.06, right=0.86, bottom=0.12, top=0.72, wspace=0.28)
    from attnlimits.verify.outputs import save_figure

    save_figure(fig, path, dpi=120)  # atomic: a failing write leaves the previous file
    fig.clear()
    return str(path)


def run_phase(params: dict, *, progress=None):
    """``attnlimits slr bo-phase``: the rows of :func:`attnlimits.verify.slr.bayes_optimal.phase_scan`, each
    (L, ν) pair's yielded as it ends; the PNG with ``plot`` (its path checked before the scan)."""

    model = params.get("model") or "spiked"
    if model not in ("spiked", "max"):
        raise InputError(f"--model must be 'spiked' or 'max', got {model!r}")
    for name in ("alpha", "nu"):
        vals = params[name]
        ok_inf = name == "nu" and model == "max"
        if not vals or any(not ((math.isfinite(v) or (ok_inf and v == math.inf)) and v > 0) for v in vals):
            raise InputError(f"--{name} values must be {'> 0 (inf allowed)' if ok_inf else 'finite and > 0'}"
                             f"{' for max-SLR' if ok_inf else ''}, got {vals}")
    if params.get("plot"):  # a bad path is found before the scan, not after it
        from attnlimits.verify.outputs import check_output_file

        check_output_file(params["plot"])
    continuation = params.get("continuation") or "up"
    if continuation not in ("up", "none"):
        raise InputError(f"--continuation must be 'up' or 'none', got {continuation!r}")
    return _phase_rows(params, model, continuation, progress)


def _phase_rows(params, model, continuation, progress):
    """The rows of each (L, ν) pair yielded as its scan ends (a stop keeps the finished pairs), then the figure."""
    from .bayes_optimal import phase_scan_rows

    rows = []
    for row in phase_scan_rows(tuple(params["L"]), tuple(params["nu"]), tuple(params["alpha"]), params["delta"],
                               model=model, points=int(params["points"]), inner_points=24, test_points=2 ** 15,
                               continuation=continuation, progress=progress):
        rows.append(row)
        yield row
    if params.get("plot"):
        path = plot_phase_diagram(rows, params["plot"])
        if progress is not None:
            progress(f"figure: {path}")


from attnlimits.derivations.slr.result import PHASE_COMMAND  # noqa: E402,F401  (declared with the result)
