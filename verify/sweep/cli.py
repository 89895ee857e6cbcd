"""``attnlimits sweep``: run a grid file on Dask, or plot its results table.

Two forms share one parser (so a plain ``parse_args`` handles both)::

    attnlimits sweep GRID.toml --out DIR [--scheduler ADDR] [--workers N] [--force] [--csv]
    attnlimits sweep plot DIR --x alpha --y E_test [--hue activation] [--where nu=1] [-o FILE]

The command line (:mod:`attnlimits.verify.cli.parser`) calls :func:`add_subparser` on its subparsers and dispatches to
:func:`run`; ``python -m attnlimits.verify.sweep ...`` runs the same through :func:`main`.
Exit status: 0 all points ok, 1 some points failed (recorded in the table), 2 bad input,
130 interrupted (finished points are kept; rerun the same command to complete the rest).
"""
from __future__ import annotations

import argparse
import signal
import sys
import textwrap

from attnlimits.symbolic.result import InputError

__all__ = ["add_subparser", "run", "main", "build_parser"]

EXAMPLE_GRID = textwrap.dedent("""\
    # grid.toml
    command = "slr population"
    [fixed]
    model = "spiked"
    L = 3
    [axes]
    nu = { start = 0.25, stop = 4, num = 5, log = true }
    activation = ["softmax", "linear_uncentred", "erf_learned"]""")

DESCRIPTION = textwrap.dedent("""\
    Run every point of a grid file as a task on Dask and keep the results in a table, or plot it.

    attnlimits sweep GRID.toml --out DIR
        validates the grid (one line with the line number on error, exit 2), then runs the
        points missing from DIR on a local Dask cluster (one single-threaded worker process per
        core) or on --scheduler ADDR.  Each finished point is written at once to DIR/parts/ as
        Parquet, keyed by a hash of command, parameters and code (the package version and a
        fingerprint of its source): rerunning resumes, --force redoes, and points made by other
        code are reported and recomputed (--reuse-stale keeps them).  A failing point records
        its one-line error and the sweep goes on.  Needs the extra: pip install 'attnlimits[sweep]'.

    attnlimits sweep plot DIR --x X --y Y [--hue H]
        draws Y against X, one curve per value of H, with error bars (standard error over
        seeds, or the Y_error column), to DIR/Y_vs_X.png or -o FILE.

    grid file:
    """) + textwrap.indent(EXAMPLE_GRID, "    ") + textwrap.dedent("""

    axes are lists, {start, stop, num} (linear), {start, stop, num, log = true} or
    {start, stop, step}; mode = "zip" zips all axes, zip = [["a", "b"]] zips some;
    together = ["alpha"] keeps points differing only in alpha in one chain on one worker.""")

EPILOG = textwrap.dedent("""\
    examples:
      attnlimits sweep grid.toml --out results/
      attnlimits sweep grid.toml --out results/ --workers 8 --csv
      attnlimits sweep grid.toml --out results/ --scheduler tcp://head-node:8786
      attnlimits sweep plot results/ --x alpha --y E_test --hue nu -o curves.png""")


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="GRID.toml|plot", help="a grid file to run, or 'plot'")
    p.add_argument("directory", nargs="?", metavar="DIR", help="(plot) the output folder of a sweep")
    g = p.add_argument_group("run a grid (attnlimits sweep GRID.toml --out DIR)")
    g.add_argument("--out", metavar="DIR", help="output folder of the results table (required)")
    g.add_argument("--scheduler", metavar="ADDR",
                   help="address (tcp://host:8786) or scheduler file of an existing Dask cluster; "
                        "default: a local cluster")
    g.add_argument("--workers", type=int, metavar="N",
                   help="worker processes of the local cluster (default: the cores available); "
                        "0 runs the points in this process")
    g.add_argument("--force", action="store_true", help="redo points already in the table")
    g.add_argument("--retry-failed", action="store_true", help="redo points whose last attempt failed")
    g.add_argument("--reuse-stale", action="store_true",
                   help="keep points computed by other code (another source fingerprint) instead of "
                        "recomputing them (default: recompute, and report how many)")
    g.add_argument("--csv", action="store_true", help="also write DIR/results.csv")
    g.add_argument("--check", action="store_true", help="validate the grid, print the plan, run nothing")
    g.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    g = p.add_argument_group("plot a table (attnlimits sweep plot DIR --x X --y Y)")
    g.add_argument("--x", metavar="COLUMN", help="column on the horizontal axis")
    g.add_argument("--y", metavar="COLUMN", help="column on the vertical axis")
    g.add_argument("--hue", metavar="COLUMN", help="one curve per value of this column")
    g.add_argument("--where", action="append", default=[], metavar="NAME=VALUE",
                   help="keep only rows with NAME equal to VALUE (repeatable)")
    g.add_argument("-o", "--output", metavar="FILE", help="PNG file (default DIR/Y_vs_X.png)")
    g.add_argument("--logx", action="store_true", default=None,
                   help="logarithmic x axis (default: logarithmic when the x values form a log-spaced grid)")
    g.add_argument("--logy", action="store_true", help="logarithmic y axis")


def add_subparser(subparsers) -> argparse.ArgumentParser:
    """Add ``sweep`` to ``subparsers`` (of the ``attnlimits`` parser); dispatch to :func:`run`."""
    p = subparsers.add_parser("sweep", help="run a parameter grid on Dask into a resumable table; plot it",
                              description=DESCRIPTION, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_arguments(p)
    p.set_defaults(sweep_run=run)
    return p


def build_parser(prog: str = "attnlimits") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog)
    add_subparser(parser.add_subparsers(dest="command"))
    return parser


_RUN_ONLY = ("out", "scheduler", "workers", "force", "retry_failed", "reuse_stale", "csv", "check", "no_progress")
_PLOT_ONLY = ("x", "y", "hue", "where", "output", "logx", "logy")


def _given(args, names) -> list[str]:
    out = []
    for n in names:
        v = getattr(args, n, None)
        if v not in (None, False, []):
            out.append("--" + n.replace("_", "-"))
    return out


def _plot(args) -> int:
    from .plot import plot_table

    if not args.directory:
        raise InputError("sweep plot needs the output folder: attnlimits sweep plot DIR --x X --y Y")
    extra = _given(args, _RUN_ONLY)
    if extra:
        raise InputError(f"{', '.join(extra)} belong to running a grid, not to sweep plot")
    if not args.x or not args.y:
        raise InputError("sweep plot needs --x COLUMN and --y COLUMN")
    path = plot_table(args.directory, args.x, args.y, hue=args.hue, where=args.where, output=args.output,
                      logx=args.logx, logy=args.logy)
    print(path)
    return 0


def _sweep(args) -> int:
    from .grid import load_grid

    if args.directory:
        raise InputError(f"unexpected {args.directory!r} after the grid file; the output folder is --out DIR")
    extra = _given(args, _PLOT_ONLY)
    if extra:
        raise InputError(f"{', '.join(extra)} belong to sweep plot, not to running a grid")
    grid = load_grid(args.target)
    if args.workers is not None and args.workers < 0:
        raise InputError(f"--workers must be >= 0, got {args.workers}")
    if args.out:
        grid.check_outputs(args.out)
    if args.check:
        chains = grid.chains()
        print(f"{args.target}: {grid.command_name}, {len(grid)} points in {len(chains)} chains; axes: "
              + (", ".join(f"{k} ({len(v)})" for k, v in grid.axes.items()) or "(none)")
              + f"; code version {grid.code_version}")
        return 0
    if not args.out:
        raise InputError("give the output folder: attnlimits sweep GRID.toml --out DIR")
    from .runner import run_sweep

    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _sigterm)  # a batch system's kill: clean up, keep points
    except ValueError:  # not the main thread
        pass
    try:
        summary = run_sweep(grid, args.out, scheduler=args.scheduler, workers=args.workers, force=args.force,
                            retry_failed=args.retry_failed, progress=not args.no_progress, csv=args.csv,
                            reuse_stale=args.reuse_stale)
    except KeyboardInterrupt as exc:
        s = getattr(exc, "summary", None)
        if s is not None:
            print(s.line(), file=sys.stderr)
        print("interrupted: every finished point is in the table; run the same command again to "
              "complete the rest", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    print(summary.line())
    for params, err in summary.errors[:5]:
        short = {k: v for k, v in params.items() if k in grid.axes}
        print(f"  failed {short}: {err}", file=sys.stderr)
    if summary.failed > 5:
        print(f"  ... {summary.failed - 5} more failures (status/error columns of the table)", file=sys.stderr)
    return 1 if summary.failed or summary.remaining else 0


def _sigterm(signum, frame):
    raise KeyboardInterrupt


def run(args) -> int:
    """Run ``attnlimits sweep`` from parsed ``args``; bad input prints one line, returns 2."""
    try:
        try:
            if args.target == "plot":
                return _plot(args)
            return _sweep(args)
        except ModuleNotFoundError as exc:
            raise missing_extra(exc) from None
    except InputError as exc:
        print(f"attnlimits sweep: error: {exc}", file=sys.stderr)
        return 2


#: the optional dependencies of sweeps (pyproject.toml's ``sweep`` extra), by import name
SWEEP_MODULES = ("pyarrow", "dask", "distributed", "tomli")


def missing_extra(exc: ModuleNotFoundError) -> Exception:
    """A missing optional dependency as one line naming the extra to install (other missing
    modules are not ours to explain: ``exc`` itself)."""
    name = (exc.name or "").split(".")[0]
    if name in SWEEP_MODULES:
        return InputError(f"sweeps need the optional dependency {name!r}: pip install 'attnlimits[sweep]'")
    return exc


def main(argv=None) -> int:
    """``python -m attnlimits.verify.sweep ARGS`` = ``attnlimits sweep ARGS``."""
    parser = build_parser()
    args = parser.parse_args(["sweep", *(sys.argv[1:] if argv is None else argv)])
    return run(args)
