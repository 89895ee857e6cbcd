"""Sweeps: parameter grids of any registered command on Dask, with a resumable results table.

``attnlimits sweep GRID.toml --out DIR`` runs every point of a grid file (:mod:`.grid`) as a task
on Dask (:mod:`.runner`), writing each finished point at once to a Parquet table keyed by a hash
of command, parameters and code version (:mod:`.table`), so a rerun resumes; ``attnlimits sweep
plot DIR --x alpha --y E_test --hue activation`` draws the curves (:mod:`.plot`).

Public API (re-exported lazily, so that a Dask worker imports only :mod:`.worker`)
----------
- grids: :func:`load_grid`, :func:`parse_grid`, :class:`Grid`, :func:`point_key`, :func:`find_command`
- running: :func:`run_sweep`, :class:`SweepSummary`, :func:`execute_point`, :func:`execute_chain`,
  :class:`PinThreads`, :func:`thread_settings`
- the table: :class:`ResultsTable`
- plots: :func:`plot_table`
- command line: :func:`add_subparser`, :func:`run`, :func:`main`
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "grid": ["load_grid", "parse_grid", "Grid", "point_key", "find_command", "code_version_of"],
    "runner": ["run_sweep", "SweepSummary", "default_workers"],
    "worker": ["execute_point", "execute_chain", "PinThreads", "THREAD_ENV", "thread_settings"],
    "table": ["ResultsTable"],
    "plot": ["plot_table"],
    "cli": ["add_subparser", "run", "main"],
}
_WHERE = {name: mod for mod, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
