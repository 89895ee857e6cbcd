"""The figure panels of the registered results, one command each: ``attnlimits figure NAME [--full] [--out DIR]``.

A result declares its panels in its manifest (``Result.figures``, :class:`attnlimits.symbolic.result.Panel`:
name, title, source, the ``"module:function"`` that draws it and its quick-mode time); ``attnlimits figure
--list`` shows them.  Each panel computes its theory live (dense grids: the theory is cheap) and, where the
panel has a finite-size side, simulates it at ``quick`` size (minutes on two cores) or at the paper's size
with ``--full``.  :func:`make_figure` writes ``DIR/NAME.png`` and ``DIR/NAME.csv`` (tidy: one row per
plotted point, with the parameters, sizes and seeds that made it) and returns the rows.

Modules: :mod:`.drawing` holds what every panel shares (:func:`axes` in the panels' style, the colours, the
command runner, the finishing step) and imports no panel; :mod:`.registry` collects the declared panels and
draws one; the panels of each built-in result sit in their own module (:mod:`.rmt`, :mod:`.slr`) and import
only :mod:`.drawing`.  A plug-in's panel uses :func:`axes` the same way.
"""
from __future__ import annotations

from .drawing import axes
from .registry import Figure, all_figures, make_figure

__all__ = ["Figure", "all_figures", "axes", "make_figure"]
