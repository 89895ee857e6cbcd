"""What every part of the command line shares: the one-line error, the examples block of a ``--help``,
the common options, the registry lookup, progress lines, and the checks of a device and an output folder
made before any work."""
from __future__ import annotations

import sys

__all__ = ["CLIError", "THREADS_HELP", "add_common", "check_device", "check_out_dir", "collect_params", "examples",
           "print_progress", "registered_results"]


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 2."""



def examples(*lines: str) -> str:
    """The ``examples:`` block of a ``--help`` epilog, one command line per line."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


THREADS_HELP = "threads for BLAS and torch (default $ATTNLIMITS_THREADS, else 1 on machines with <= 4 cores)"


def add_common(p, *, json_option=True):
    """Add ``--threads`` (and ``--json``/``--csv`` unless ``json_option`` is false) to parser ``p``."""
    p.add_argument("--threads", default=None, metavar="N", help=THREADS_HELP)
    if json_option:
        out = p.add_mutually_exclusive_group()
        out.add_argument("--json", action="store_true", help="print JSON (one object per row)")
        out.add_argument("--csv", action="store_true", help="print CSV (one line per row)")


def registered_results():
    """The result registry, name → :class:`attnlimits.symbolic.result.Result`."""
    from attnlimits.symbolic.result import discover_results

    return discover_results()


def collect_params(args, params) -> dict:
    """The parsed command-line values of ``params`` (a command's :class:`Param` list), by name."""
    return {p.name: getattr(args, p.name, None) for p in params}


def print_progress(msg):
    """One progress line on stderr."""
    print(msg, file=sys.stderr, flush=True)


def check_device(text: str) -> str:
    """The one device resolution (:func:`attnlimits.verify.torch_device.resolve_device`), before any work."""
    from attnlimits.verify.torch_device import resolve_device

    resolve_device(text)
    return str(text)


def check_out_dir(path, option="--out", *, subdirs=(), files=()):
    """Refuse an output folder that cannot be written before any work is done (creating it):
    :func:`attnlimits.verify.outputs.check_output_folder` (a real write probed; ``subdirs`` that are links
    out of the folder and planned ``files`` that are folders refused), as a :class:`CLIError`."""
    from attnlimits.symbolic.result import InputError
    from attnlimits.verify.outputs import check_output_folder

    try:
        return check_output_folder(path, option=option, subdirs=subdirs, files=files)
    except InputError as exc:
        raise CLIError(str(exc)) from None
