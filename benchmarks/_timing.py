"""The one timing helper of the benchmarks: wall and CPU seconds of calls, their statistics, and ratios.

Benchmarks print ratios against a baseline measured in the same run (benchmarks/README.md).  They time

- a call repeated: :func:`timed` (``sync()`` before and after each call, e.g. ``torch.cuda.synchronize``);
- two or more sides alternating within each repeat: :func:`alternate`;
- a block: ``with clock() as c: ...``, then ``c.wall`` and ``c.cpu``;

and summarise the repeats as a :class:`Timing` (min/median/max wall seconds, median CPU seconds), printed
with :meth:`Timing.mmm`, compared with :func:`ratio` and :func:`ratio_line`.  Wall time is
``time.perf_counter``, CPU time ``time.process_time`` (this process, every thread).  Run a benchmark from
the checkout root: ``python benchmarks/bench_X.py`` (its folder is then on ``sys.path``).
"""
from __future__ import annotations

import math
import statistics
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

__all__ = ["Timing", "Clock", "clock", "timed", "alternate", "ratio", "ratio_line"]


@dataclass(frozen=True)
class Timing:
    """Wall seconds over the repeats (``min``, ``median``, ``max``), the median CPU seconds (``cpu``; NaN
    when not measured), and the samples themselves."""

    min: float
    median: float
    max: float
    cpu: float = math.nan
    walls: tuple = field(default=(), repr=False)
    cpus: tuple = field(default=(), repr=False)

    @classmethod
    def of(cls, walls: Sequence[float], cpus: Sequence[float] = ()) -> Timing:
        """The statistics of measured samples (``cpus`` optional)."""
        walls, cpus = tuple(float(w) for w in walls), tuple(float(c) for c in cpus)
        return cls(min(walls), statistics.median(walls), max(walls),
                   statistics.median(cpus) if cpus else math.nan, walls, cpus)

    def mmm(self, spec: str = ".2f", *, sep: str = "/", scale: float = 1.0, labels: bool = False,
            unit: str = "") -> str:
        """min, median and max as text: each ``value * scale`` formatted by ``spec``, joined by ``sep``,
        each after its name when ``labels``, then `` unit``.  E.g. ``"0.12/0.13/0.20"`` (the defaults) or
        ``mmm(sep=" / ", labels=True, unit="s")`` = ``"min 0.12 / median 0.13 / max 0.20 s"``."""
        vals = (self.min, self.median, self.max)
        parts = [f"{v * scale:{spec}}" for v in vals]
        if labels:
            parts = [f"{name} {p}" for name, p in zip(("min", "median", "max"), parts)]
        text = sep.join(parts)
        return f"{text} {unit}" if unit else text


@dataclass
class Clock:
    """Wall and CPU seconds of a block (set when the block ends; NaN before)."""

    wall: float = math.nan
    cpu: float = math.nan


@contextmanager
def clock(sync: Callable | None = None) -> Iterator[Clock]:
    """``with clock() as c: ...``: then ``c.wall`` and ``c.cpu`` are the block's wall and CPU seconds
    (``sync()`` before and after the block when given)."""
    c = Clock()
    if sync is not None:
        sync()
    c0 = time.process_time()
    t0 = time.perf_counter()
    try:
        yield c
    finally:
        if sync is not None:
            sync()
        c.wall = time.perf_counter() - t0
        c.cpu = time.process_time() - c0


def timed(fn: Callable, repeats: int = 1, *, sync: Callable | None = None) -> tuple[Timing, Any]:
    """``repeats`` calls of ``fn()`` (``sync()`` before and after each): their :class:`Timing`, and the
    last output."""
    (t,), (out,) = alternate([fn], repeats, sync=sync)
    return t, out


def alternate(fns: Sequence[Callable], repeats: int, *, sync: Callable | None = None,
              flip: bool = False) -> tuple[list[Timing], list]:
    """Call every ``fns[i]()`` once per repeat, in turn (in the reverse order on odd repeats when ``flip``),
    ``repeats`` times: one :class:`Timing` per function, and each function's last output."""
    walls = [[] for _ in fns]
    cpus = [[] for _ in fns]
    outs: list = [None] * len(fns)
    order = list(range(len(fns)))
    for rep in range(int(repeats)):
        for i in (order[::-1] if flip and rep % 2 else order):
            with clock(sync) as c:
                outs[i] = fns[i]()
            walls[i].append(c.wall)
            cpus[i].append(c.cpu)
    return [Timing.of(w, c) for w, c in zip(walls, cpus)], outs


def ratio(baseline: Timing, candidate: Timing, stat: str = "median") -> float:
    """``baseline`` / ``candidate`` in one statistic (``min``, ``median``, ``max`` or ``cpu``): > 1 means the
    candidate is faster."""
    return getattr(baseline, stat) / getattr(candidate, stat)


def ratio_line(label: str, baseline: Timing, candidate: Timing, *, stat: str = "median", spec: str = ".2f",
               unit: str = "x") -> str:
    """``label`` followed by :func:`ratio` formatted by ``spec`` and ``unit``, e.g.
    ``ratio_line("ratio old/new (median) ", old, new)`` = ``"ratio old/new (median) 3.10x"``."""
    return f"{label}{ratio(baseline, candidate, stat):{spec}}{unit}"
