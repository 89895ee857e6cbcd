"""Output files of the commands: checked before any work, written atomically.

A command that writes a file (a figure, a report) checks the path *before* it computes — its
folder exists and is writable, its suffix is one it can write — so that a bad path is one line
and exit 2 instead of a finished computation thrown away; and it writes the file to a temporary
name in the same folder, then replaces the target (``os.replace``), so that a write failing
partway leaves the previous file intact.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from attnlimits.symbolic.result import InputError

__all__ = ["check_output_file", "save_figure", "write_text"]


def check_output_file(path, *, option: str = "--plot", suffixes=(".png",)) -> Path:
    """Refuse (:class:`InputError`, one line) a file path that cannot be written: a folder that
    does not exist or is not writable, an existing folder in its place, or a suffix not in
    ``suffixes``."""
    text = str(path).strip()
    if not text:
        raise InputError(f"{option} must name a file")
    p = Path(text)
    if suffixes and p.suffix.lower() not in suffixes:
        raise InputError(f"{option} {text}: the file must end in {' or '.join(suffixes)}")
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise InputError(f"{option} {text} is a folder")
    if not parent.is_dir():
        raise InputError(f"{option} {text}: the folder {parent} does not exist")
    try:  # the only reliable test (root passes os.access everywhere, /proc refuses new files)
        fd, probe = tempfile.mkstemp(prefix=".tmp-probe-", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{option} {text}: cannot write in {parent} ({exc.strerror or exc})") from None
    return p


def _atomic(path: Path, write) -> Path:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".tmp-{path.stem}-", suffix=path.suffix, dir=path.parent or ".")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def save_figure(fig, path, **kw) -> Path:
    """``fig.savefig`` to a temporary file beside ``path``, then replace ``path``."""
    return _atomic(Path(path), lambda tmp: fig.savefig(tmp, **kw))


def write_text(path, text: str) -> Path:
    """Write ``text`` to a temporary file beside ``path``, then replace ``path``."""
    return _atomic(Path(path), lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def plain_log_ticks(fig) -> None:
    """Plain tick labels on every log axis of ``fig``: 0.1, 0.2, 0.5, 1 (one per decade when wide),
    no minor labels — instead of matplotlib's overlapping 10^k mathtext."""
    import math

    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for a in fig.axes:
        for axis, scale, lim in ((a.xaxis, a.get_xscale(), a.get_xlim()), (a.yaxis, a.get_yscale(), a.get_ylim())):
            if scale == "log" and lim[0] > 0:
                subs = (1.0,) if math.log10(lim[1] / lim[0]) > 3 else (1.0, 2.0, 5.0)
                axis.set_major_locator(LogLocator(base=10, subs=subs))
                axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
                axis.set_minor_formatter(NullFormatter())

