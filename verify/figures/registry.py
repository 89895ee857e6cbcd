"""The panels the results declare, and the drawing of one: :func:`all_figures`, :func:`make_figure`."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from attnlimits.symbolic.result import InputError, discover_results

from .drawing import PROGRESS, finish

__all__ = ["Figure", "all_figures", "make_figure"]




@dataclass(frozen=True)
class Figure:
    """A panel ready to draw: its declaration with ``make`` a callable (imported when called)."""

    name: str
    title: str
    source: str
    make: Callable
    quick_minutes: float  # measured on two cores, for --list
    options: bool = False  # make() takes the finite-sample options (seeds, alphas, workers, progress)



def all_figures() -> dict:
    """Every panel the registered results declare (``Result.figures``, :class:`attnlimits.symbolic.result.Panel`),
    in the registry's order, by name; a name declared twice is an error naming both results."""
    from attnlimits.symbolic.result import resolve

    out, owner = {}, {}
    for res in discover_results().values():
        for panel in getattr(res, "figures", ()):
            if panel.name in out:
                raise ValueError(f"figure {panel.name!r} of result {res.name!r} is declared twice "
                                 f"(also by {owner[panel.name]!r})")
            owner[panel.name] = res.name
            out[panel.name] = Figure(panel.name, panel.title, panel.source,
                                     (lambda dotted: lambda *a, **kw: resolve(dotted)(*a, **kw))(panel.make),
                                     panel.quick_minutes, getattr(panel, "options", False))
    return out


def make_figure(name: str, out, *, mode: str = "quick", seed: int = 0, device: str = "auto",
                progress: Callable | None = None, seeds: int | None = None, alphas=None,
                workers: int | None = None) -> tuple[Path, list[dict]]:
    """Draw panel ``name`` into ``out`` (``NAME.png`` and ``NAME.csv``); return the PNG path and rows.

    ``seeds``, ``alphas`` and ``workers`` apply to the finite-sample panels (``Figure.options``): the ERM
    seeds per (activation, α), the α of the ERM markers, and the Dask worker processes of ``--full``
    (``0``: in this process); other panels refuse them."""
    figures = all_figures()
    if name not in figures:
        raise InputError(f"no figure {name!r}; figures: {', '.join(figures)}")
    if mode not in ("quick", "full"):
        raise InputError(f"mode must be quick or full, got {mode!r}")
    if not figures[name].options and (seeds is not None or alphas is not None or workers is not None):
        raise InputError(f"figure {name!r} takes no --seeds/--alpha/--workers (finite-sample panels only)")
    if seeds is not None and int(seeds) < 2:
        raise InputError(f"--seeds must be >= 2 (a standard error needs two), got {seeds}")
    if alphas is not None and (not alphas or any(not (float(a) > 0 and math.isfinite(float(a))) for a in alphas)):
        raise InputError(f"--alpha must be positive sample ratios, got {alphas}")
    from attnlimits.verify.outputs import OutputLock, check_output_folder, record_files

    # before any work: the folder writable, the two files not folders; then the folder locked
    out = check_output_folder(out, files=(f"{name}.png", f"{name}.csv"))
    t0 = time.perf_counter()
    with OutputLock(out, f"attnlimits figure {name}"):
        if progress:
            progress(f"figure {name} ({mode}): {figures[name].title}")
        token = PROGRESS.set((lambda msg: progress(f"figure {name}: {msg}")) if progress else None)
        try:
            if figures[name].options:
                fig, ax, rows, note = figures[name].make(out, mode, seed, device, seeds=seeds, alphas=alphas,
                                                         workers=workers, progress=progress)
            else:
                fig, ax, rows, note = figures[name].make(out, mode, seed, device)
        finally:
            PROGRESS.reset(token)
        png = finish(fig, ax, out, name, rows, note + f"; made by: attnlimits figure {name}"
                      + (" --full" if mode == "full" else "") + f" (seed {seed})")
        record_files(out, "figure", [f"{name}.png", f"{name}.csv"], merge=True)
    if progress:
        progress(f"figure {name}: {time.perf_counter() - t0:.1f} s -> {png}")
    return png, rows
