"""The ``attnlimits`` command line, built from the result registry.

Results (found through the ``attnlimits.results`` entry-point group, :mod:`attnlimits.symbolic.result`)
contribute their commands: ``attnlimits <result> [<command>] --param ...`` and
``attnlimits export <result> ...``; ``attnlimits verify`` runs the claims of every registered
result.  The tools ``hermite`` and ``weights`` belong to the engine.  Nothing here names a
result: parsers are built from each command's static parameter list, without importing SymPy
or the result's modules, which are imported only when a command runs.

Every subcommand has ``--help`` with an example.  Bad input gives one line on stderr and exit 2.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import textwrap

__all__ = ["main", "build_parser", "CLIError"]


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("attnlimits")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


_THREADS_HELP = "threads for BLAS and torch (default $ATTNLIMITS_THREADS, else 1 on machines with <= 4 cores)"


def _add_common(p, *, json_option=True):
    p.add_argument("--threads", default=None, metavar="N", help=_THREADS_HELP)
    if json_option:
        out = p.add_mutually_exclusive_group()
        out.add_argument("--json", action="store_true", help="print JSON (one object per row)")
        out.add_argument("--csv", action="store_true", help="print CSV (one line per row)")


def _default_text(prm) -> str:
    """`` (default: X)`` for the help line of a parameter with a default the help does not state
    (portable: copied into exported files, so it names no project module)."""
    d = prm.default
    if prm.kind == "flag" or type(d).__name__ == "_Required" or d is None or "default" in (prm.help or "").lower():
        return ""
    if isinstance(d, (list, tuple)):
        d = ",".join(f"{x:g}" if isinstance(x, float) else str(x) for x in d)
    elif isinstance(d, float):
        d = f"{d:g}"
    return f" (default: {d})"


def _add_params(p, params):
    for prm in params:
        kw = {"dest": prm.name, "help": ((prm.help or "") + _default_text(prm)).replace("%", "%%") or None}
        if prm.kind == "flag":
            p.add_argument(prm.option, action="store_true", default=None, **kw)
            continue
        if prm.metavar:
            kw["metavar"] = prm.metavar
        elif prm.kind in ("choice",) and prm.choices:
            kw["metavar"] = "{" + ",".join(prm.choices) + "}"
        p.add_argument(prm.option, default=None, required=prm.required, **kw)


def _add_command(sub, cmd, result, name):
    desc = cmd.description or cmd.help
    p = sub.add_parser(name, help=cmd.help, formatter_class=argparse.RawDescriptionHelpFormatter,
                       description=desc + (f"\n\n{result.title}." if result.title else ""),
                       epilog=(_examples(*cmd.examples) + "\n\n" if cmd.examples else "")
                       + "output columns: docs/output.md explains every key (--json shows them all)")
    _add_params(p, cmd.parameters)
    _add_common(p)
    p.add_argument("--columns", default=None, metavar="A,B,...",
                   help="the table's columns, comma-separated, or 'all' (default: "
                        + (",".join(cmd.table) if cmd.table and not cmd.formatter else "the command's table")
                        + "); with --csv, the CSV's columns")
    p.set_defaults(_handler=_run_command, _result=result.name, _command=cmd.name)
    return p


class _Parser(argparse.ArgumentParser):
    """argparse with a "did you mean" for a mistyped command, choice or option (its subcommands' parsers
    are of the same class)."""

    def error(self, message):
        import difflib
        import re

        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:
            choices = re.findall(r"'([^']*)'", m.group(2))
            near = difflib.get_close_matches(m.group(1), choices, n=1)
            if near:
                message += f"; did you mean '{near[0]}'?"
        super().error(message)


def unknown_option_message(parser, extras) -> str:
    """One line for options a command does not take, with the closest option it does take."""
    import difflib

    known = sorted({o for a in parser._actions for o in a.option_strings if o.startswith("--")})
    parts = []
    for tok in extras:
        if not tok.startswith("-"):
            continue
        name = tok.split("=", 1)[0]
        near = difflib.get_close_matches(name, known, n=1)
        parts.append(f"{name} (did you mean {near[0]}?)" if near else name)
    if not parts:
        return f"unexpected arguments: {' '.join(extras)}"
    return "unknown option" + ("s" if len(parts) > 1 else "") + ": " + ", ".join(parts)


def build_parser(results=None) -> argparse.ArgumentParser:
    """The argument parser; ``results`` (name → :class:`attnlimits.symbolic.result.Result`) defaults to the registry."""
    from attnlimits.symbolic.result import discover_results

    results = discover_results() if results is None else results
    first = []
    for res in results.values():
        cmd = res.commands[0] if res.commands else None
        if cmd is not None and cmd.examples:
            first.append(cmd.examples[0])
    parser = _Parser(
        prog="attnlimits",
        description="Symbolic-numeric derivation and verification of high-dimensional attention theory.\n\n"
                    "results: " + ", ".join(f"{r.name} ({r.title})" for r in results.values()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples(*first, *[r.export_examples[0] for r in results.values() if r.export is not None
                                   and r.export_examples][:1],
                         "attnlimits hermite --activation relu", "attnlimits verify --quick",
                         "attnlimits sweep grid.toml --out results/", "attnlimits figure --list",
                         "attnlimits explore --list", "attnlimits show rmt bulk_system --activation relu",
                         "attnlimits weights path/to/model.safetensors"),
    )
    parser.add_argument("--version", action="version", version=f"attnlimits {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    for res in results.values():
        if res.is_group:
            p = sub.add_parser(res.name, help=res.group_help or res.title,
                               formatter_class=argparse.RawDescriptionHelpFormatter,
                               description=f"{res.title}. {res.description}".strip(),
                               epilog=_examples(*[c.examples[0] for c in res.commands if c.examples]))
            rsub = p.add_subparsers(dest="subcommand", metavar="WHAT")
            for cmd in res.commands:
                _add_command(rsub, cmd, res, cmd.name)
            p.set_defaults(_handler=_need_subcommand, _result=res.name)
        elif res.commands:  # a result may bring only claims or properties
            _add_command(sub, res.command(""), res, res.name)

    # --- export --------------------------------------------------------------------------------
    p = sub.add_parser(
        "export",
        help="write a standalone solver (.py) that needs only numpy or mpmath",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write a standalone, readable Python solver generated from the SymPy equations.",
        epilog=_examples(*[ex for r in results.values() if r.export is not None for ex in r.export_examples[:2]]),
    )
    esub = p.add_subparsers(dest="export_result", metavar="RESULT")
    for res in results.values():
        if res.export is None:
            continue
        ep = esub.add_parser(res.name, help=f"standalone solver of {res.name}: {res.title}",
                             formatter_class=argparse.RawDescriptionHelpFormatter,
                             description=res.export_help or None,
                             epilog=_examples(*res.export_examples) if res.export_examples else None)
        _add_params(ep, res.export_parameters)
        ep.add_argument("-o", "--output", required=True, help="file to write")
        _add_common(ep, json_option=False)
        ep.set_defaults(_handler=_run_export, _result=res.name)
    p.set_defaults(_handler=_need_export_result)

    # --- show (verify/show_command.py) -----------------------------------------------------------
    from attnlimits.verify.show_command import add_parser as _add_show

    _add_show(sub, _examples)

    # --- explore (verify/explore/cli.py) ---------------------------------------------------------
    from attnlimits.verify.explore.cli import add_parser as _add_explore

    _add_explore(sub, _examples, None)

    # --- figure --------------------------------------------------------------------------------
    p = sub.add_parser(
        "figure",
        help="draw a figure panel of the papers: theory live, simulation at quick or paper size",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Draw one panel of the papers' figures (attnlimits.verify.figures): theory on a dense grid, "
                    "simulation or training at quick size (minutes on two cores) or the paper's size "
                    "(--full), residuals in standard errors, the sizes and seeds on the figure; writes "
                    "OUT/NAME.png and a tidy OUT/NAME.csv.",
        epilog=_examples("attnlimits figure --list", "attnlimits figure rmt-1a --out figures/",
                         "attnlimits figure slr-risk-nu --out figures/",
                         "attnlimits figure slr-finite-alpha --full --device cuda --out figures/",
                         "attnlimits figure slr-finite-alpha --full --seeds 4 --alpha 2,4,10 --workers 1 --out run/  "
                         "# rerun the same line to resume"),
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="figure panels (see --list)")
    p.add_argument("--list", action="store_true", help="list the panels with their sources and quick-mode times")
    p.add_argument("--full", action="store_true", help="the paper's sizes (much longer; a GPU helps)")
    p.add_argument("--out", default="attnlimits-figures", help="output folder (default ./attnlimits-figures)")
    p.add_argument("--seed", type=int, default=0, help="master seed of the simulations (default 0)")
    p.add_argument("--device", default="auto", help="torch device: auto (CUDA when available), cpu, cuda")
    p.add_argument("--seeds", type=int, default=None,
                   help="finite-sample panels: ERM seeds per (activation, α) (default 2 quick, 8 full)")
    p.add_argument("--alpha", default=None, help="finite-sample panels: comma list of the ERM α (default 1,2,4,10,20)")
    p.add_argument("--workers", type=int, default=None,
                   help="finite-sample panels with --full: Dask worker processes (default: one per core; 0: in "
                        "this process); finished tasks are kept in OUT/NAME-erm/ and skipped by a rerun")
    _add_common(p, json_option=False)
    p.set_defaults(_handler=_cmd_figure)

    # --- sweep ---------------------------------------------------------------------------------
    from attnlimits.verify.sweep.cli import add_subparser as _add_sweep

    p = _add_sweep(sub)
    _add_common(p, json_option=False)
    p.set_defaults(_handler=lambda args: args.sweep_run(args))

    # --- verify --------------------------------------------------------------------------------
    p = sub.add_parser(
        "verify",
        help="check every registered claim against Monte Carlo; write a report",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.dedent(
            """\
            Run the registered claims (theory vs Monte Carlo), print a table (claim, theory,
            MC +- SE, z or t, p-value, verdict), and write a report folder: report.md,
            results.json, results.csv and plots/*.png.  Every check with a Monte Carlo SE gets a
            p-value (Student t where the SE comes from few replicates); the run fails checks by
            Holm's procedure at the family-wise level --level (default 1%).  Exit status 1 when
            any claim fails; a 'discrepancy' (a quoted statement the derivation contradicts) is
            reported, not a failure.  The table fits the terminal ($COLUMNS): at 80 columns it
            leaves out the threshold, MDD and Holm-threshold columns (results.csv has them)."""
        ),
        epilog=_examples(
            "attnlimits verify --quick",
            "attnlimits verify --list",
            "attnlimits verify V4 V9 --out my-report",
            "attnlimits verify --quick --seed 3 --level 0.05",
            "attnlimits verify --quick --workers 1 --threads 2",
            "attnlimits verify --tag alignment --full --device cuda",
            "attnlimits verify --tag finite-sample --full --cache ~/.cache/attnlimits-full",
        ),
    )
    p.add_argument("claims", nargs="*", metavar="CLAIM", help="claim names (default: all)")
    p.add_argument("--tag", action="append", default=[], help="select claims with this tag (repeatable)")
    p.add_argument("--list", action="store_true", help="list the claims with their tags and sources")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small sizes (default): minutes on 2 CPU cores")
    mode.add_argument("--full", action="store_true", help="the paper's sizes (n up to 4000)")
    p.add_argument("--device", default="auto", help="torch device: auto (CUDA when available), cpu, cuda")
    p.add_argument("--seed", type=int, default=0, help="master seed of all Monte Carlo draws (default 0)")
    p.add_argument("--level", type=float, default=None, metavar="ALPHA",
                   help="family-wise error level of the run (Holm; default 0.01)")
    p.add_argument("--out", default="attnlimits-report", help="report folder (default ./attnlimits-report)")
    p.add_argument("--no-report", action="store_true", help="print the table only")
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="keep the results of expensive runs (training, RS λ tunings) in DIR and reuse them: "
                        "a long --full run that is stopped resumes where it was (delete DIR to recompute)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes for the claims (default: cores / threads; 1: in this process); "
                        "claims that share computations run in one worker, and the results are those of a "
                        "serial run")
    _add_common(p, json_option=False)
    p.set_defaults(_handler=_cmd_verify)

    # --- weights -------------------------------------------------------------------------------
    p = sub.add_parser(
        "weights",
        help="how close W_K^T W_Q of a local checkpoint is to scaled identity + low rank",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.dedent(
            """\
            Diagnostics of Assumption 1 (docs/attention_rmt.md §13) on a local checkpoint
            (safetensors or a torch state dict; BERT- or GPT-2-style names; nothing is downloaded):
            per layer and head, B_h = sqrt(p/d_h) W_K^hT W_Q^h and the layer sum; singular values,
            symmetric part, and the best identity-plus-rank-r fit residual rho_r."""
        ),
        epilog=_examples(
            "attnlimits weights path/to/model.safetensors",
            "attnlimits weights path/to/gpt2/ --layers 0,11 --fold-layernorm --out gpt2-weights",
        ),
    )
    p.add_argument("checkpoint", metavar="FILE", help="checkpoint file or folder")
    p.add_argument("--ranks", default=None, help="comma-separated ranks r of the fits (default 0,1,2,4,8,16,d_h,64)")
    p.add_argument("--layers", default=None, help="comma-separated layer indices (default: all)")
    p.add_argument("--heads", type=int, default=None, help="number of heads when there is no config.json")
    p.add_argument("--layout", choices=["auto", "bert", "gpt2"], default="auto")
    p.add_argument("--fold-layernorm", action="store_true", help="fold the LayerNorm gain into B")
    p.add_argument("--no-per-head", action="store_true", help="layer sums only (faster)")
    p.add_argument("--out", default="attnlimits-weights", help="output folder for CSV/JSON/PNG (default ./attnlimits-weights)")
    _add_common(p, json_option=False)
    p.set_defaults(_handler=_cmd_weights)

    # --- hermite -------------------------------------------------------------------------------
    p = sub.add_parser(
        "hermite",
        help="Hermite coefficients of an activation",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Hermite data of a centred activation (docs/attention_rmt.md §4.1): a0 (removed), "
        "a1 = E[xi f], a2, nu = E f^2, b^2 = nu - a1^2, and the Parseval residual.",
        epilog=_examples("attnlimits hermite --activation relu", "attnlimits hermite --activation 'sin(t)' --dps 50 --json"),
    )
    p.add_argument("--activation", required=True, help="built-in name or SymPy expression in t")
    p.add_argument("--dps", type=int, default=30, help="decimal digits (default 30)")
    p.add_argument("--json", action="store_true")
    _add_common(p, json_option=False)
    p.set_defaults(_handler=_cmd_hermite)
    for leaf in leaf_parsers(parser).values():  # every command takes --threads, as the README says
        if not any("--threads" in a.option_strings for a in leaf._actions):
            leaf.add_argument("--threads", default=None, metavar="N", help=_THREADS_HELP)
    return parser


def leaf_parsers(parser) -> dict:
    """Every command of ``parser`` by its full name (``rmt``, ``slr population``, ``export rmt``…) → its
    parser: the commands a user can run, for the docs' command table and the common options."""
    out = {}

    def walk(p, prefix):
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out[prefix] = p
            return
        for name, child in subs[0].choices.items():
            walk(child, f"{prefix} {name}".strip())

    walk(parser, "")
    return out


# ------------------------------------------------------------------------------------------------
# results' commands


def _results():
    from attnlimits.symbolic.result import discover_results

    return discover_results()


def _need_subcommand(args) -> int:
    raise CLIError(f"choose a command: attnlimits {args._result} --help")


def _need_export_result(args) -> int:
    raise CLIError("choose a result: attnlimits export --help")


def _collect(args, params) -> dict:
    return {p.name: getattr(args, p.name, None) for p in params}


def _progress(msg):
    print(msg, file=sys.stderr, flush=True)


def _json_default(v):
    try:
        import numpy as np

        if isinstance(v, np.generic):
            return v.item()
        if isinstance(v, np.ndarray):
            return v.tolist()
    except ImportError:  # pragma: no cover
        pass
    return str(v)


def _finite_json(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite_json(x) for x in v]
    return v


def format_rows(rows, columns=(), fmt="table", width=None, left_out=None) -> str:
    """Generic printing of tidy rows: JSON (valid: non-finite numbers become null), CSV, or a table.

    The table shows ``columns`` (default: all), numbers at 4 significant digits (``--json``/``--csv``
    carry them all), never clipped; with ``width``, trailing columns that would make a line longer
    are left out and their names appended to the list ``left_out``."""
    if fmt == "json":
        return json.dumps(_finite_json(rows), indent=2, default=_json_default, allow_nan=False)
    cols = list(columns) or list(dict.fromkeys(k for r in rows for k in r))
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(dict.fromkeys(k for r in rows for k in r)), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (json.dumps(v, default=_json_default) if isinstance(v, (dict, list)) else v)
                        for k, v in r.items()})
        return buf.getvalue().rstrip("\n")

    def cell(v):
        if v is None:
            return "-"
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, float):
            return f"{v:.4g}"
        if isinstance(v, dict):
            return ", ".join(f"{k}={cell(x)}" for k, x in v.items())
        return str(v)

    body = [[cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(b[i]) for b in body)) if body else len(c) for i, c in enumerate(cols)]
    if width:
        keep = len(cols)
        while keep > 1 and sum(widths[:keep]) + 2 * (keep - 1) > width:
            keep -= 1
        if left_out is not None:
            left_out.extend(cols[keep:])
        cols, widths, body = cols[:keep], widths[:keep], [b[:keep] for b in body]
    lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(b, widths)) for b in body]
    return "\n".join(lines)


def _run_command(args) -> int:
    res = _results()[args._result]
    cmd = res.command(args._command)
    params = cmd.parse(_collect(args, cmd.parameters))
    if any(p.name == "device" for p in cmd.parameters):  # one device resolution, before any work
        from attnlimits.verify._torchutil import resolve_device

        resolve_device(params.get("device"))
    fmt = "json" if getattr(args, "json", False) else "csv" if getattr(args, "csv", False) else "table"
    rows: list = []
    try:
        for row in cmd.function()(params, progress=_progress):  # a list, or rows yielded as they finish
            rows.append(row)
    except KeyboardInterrupt:
        # the finished rows are printed before the stop is reported (exit 130)
        if rows:
            _print_rows(rows, cmd, params, fmt, args._threads, args.columns)
        label = f"{args._result} {args._command}".strip()
        print(f"attnlimits {label}: interrupted after {len(rows)} finished row(s)"
              + (" (printed above)" if rows else ""), file=sys.stderr)
        return 130
    if not rows:
        raise CLIError("nothing computed")
    _print_rows(rows, cmd, params, fmt, args._threads, args.columns)
    return 0


def _print_rows(rows, cmd, params, fmt, threads, columns=None) -> None:
    """Print the rows: ``--json``/``--csv`` in full (``--columns`` picks the CSV's columns), else the
    command's table — its default columns, or ``--columns`` — fitted to the terminal's width (columns
    that do not fit are named on stderr)."""
    from attnlimits.symbolic.result import resolve
    from attnlimits.verify.report import terminal_width

    if fmt != "table":
        rows = [{**r, "threads": threads} for r in rows]
    if columns is not None:
        columns = _chosen_columns(columns, rows)
    if fmt == "json" or (cmd.formatter and fmt == "table" and columns is None):
        text = resolve(cmd.formatter)(rows, params, fmt) if cmd.formatter else format_rows(rows, (), fmt)
    elif fmt == "csv":
        text = format_rows([{k: r.get(k) for k in columns} for r in rows] if columns else rows, (), "csv")
    else:
        left_out = []
        text = format_rows(rows, columns or cmd.table, "table", width=terminal_width(default=None),
                           left_out=left_out)
        if left_out:
            print(f"note: {len(left_out)} column(s) left out at this width ({', '.join(left_out)}); "
                  "--columns NAME,... picks the table's columns, --json shows them all", file=sys.stderr)
    print(text)
    sys.stdout.flush()


def _chosen_columns(text, rows):
    """The columns named by ``--columns`` (``all``: every column) that the rows have.  A name they lack
    is reported in one line on stderr, with a "did you mean", and skipped — the rows were computed
    already and are printed all the same (``None`` when no name is left: the default table)."""
    import difflib

    present = list(dict.fromkeys(k for r in rows for k in r))
    names = [c.strip() for c in str(text).split(",") if c.strip()]
    if names == ["all"]:
        return present
    for n in [n for n in names if n not in present]:
        close = difflib.get_close_matches(n, present, n=1)
        print(f"warning: --columns: no column {n!r} in these rows" + (f"; did you mean {close[0]!r}?" if close else "")
              + " (--json lists every column; docs/output.md explains them)", file=sys.stderr)
    return [n for n in names if n in present] or None


def _run_export(args) -> int:
    from attnlimits.symbolic.result import InputError, resolve

    res = _results()[args._result]
    values = _collect(args, res.export_parameters)
    params = {p.name: p.parse(values.get(p.name)) for p in res.export_parameters}
    if not str(args.output).strip():
        raise InputError("-o/--output must name a file")
    from attnlimits.verify._io import check_output_file

    check_output_file(args.output, option="-o/--output", suffixes=())  # before the solver is generated
    print(resolve(res.export)(params, args.output))
    return 0


# ------------------------------------------------------------------------------------------------
# tools


def _cmd_hermite(args) -> int:
    import mpmath

    if not 5 <= args.dps <= 500:
        raise CLIError("--dps must be between 5 and 500")
    if len(args.activation) > 500:
        raise CLIError(f"--activation is too long ({len(args.activation)} characters; at most 500)")
    from attnlimits.symbolic.hermite import hermite_data_bounded

    h = hermite_data_bounded(args.activation, dps=args.dps)  # a user formula: in a process with a deadline
    with mpmath.workdps(args.dps):
        rec = {
            "activation": args.activation,
            "centred": str(h.centred),
            "a0": mpmath.nstr(h.a0, args.dps),
            "a1": mpmath.nstr(h.a1, args.dps),
            "a2": mpmath.nstr(h.a2, args.dps),
            "nu": mpmath.nstr(h.nu, args.dps),
            "b2": mpmath.nstr(h.b2, args.dps),
            "method": h.method,
            "parseval_residual": float(h.parseval_residual),
            # closed forms, one column each (exact_a0, exact_a1, …): rows are flat
            **{f"exact_{k}": str(v) for k, v in (h.exact or {}).items()},
        }
    if args.json:
        print(json.dumps(rec, indent=2))
    else:
        for k, v in rec.items():
            print(f"{k:>18}: {v}")
    return 0


def _check_device(text: str) -> str:
    """The one device resolution (:func:`attnlimits.verify._torchutil.resolve_device`), before any work."""
    from attnlimits.verify._torchutil import resolve_device

    resolve_device(text)
    return str(text)


def _check_out_dir(path, option="--out", *, subdirs=(), files=()):
    """Refuse an output folder that cannot be written before any work is done (creating it):
    :func:`attnlimits.verify._io.check_output_folder` (a real write probed; ``subdirs`` that are links
    out of the folder and planned ``files`` that are folders refused), as a :class:`CLIError`."""
    from attnlimits.symbolic.result import InputError
    from attnlimits.verify._io import check_output_folder

    try:
        return check_output_folder(path, option=option, subdirs=subdirs, files=files)
    except InputError as exc:
        raise CLIError(str(exc)) from None


def _cmd_verify(args) -> int:
    from attnlimits.verify.claims import select

    try:
        claims = select(args.claims, args.tag)
    except KeyError as exc:
        raise CLIError(exc.args[0]) from None
    if args.list:
        for c in claims:
            print(f"{c.name:<14} [{', '.join(c.tags)}] {c.title}\n{'':<14} {c.source}")
        return 0
    mode = "full" if args.full else "quick"
    from attnlimits.verify.comparison import LEVEL

    level = LEVEL if args.level is None else args.level
    if not 0 < level < 1:
        raise CLIError(f"--level must lie strictly between 0 and 1, got {args.level}")
    if args.workers is not None and args.workers < 1:
        raise CLIError(f"--workers must be >= 1, got {args.workers}")
    _check_device(args.device)
    lock = None
    if not args.no_report:  # the report's folder checked and locked before any claim runs
        from attnlimits.verify._io import OutputLock

        _check_out_dir(args.out, subdirs=("plots",), files=("report.md", "results.json", "results.csv"))
        lock = OutputLock(args.out, " ".join(["attnlimits verify", *args.claims]))
    if lock is None:
        return _verify_run(args, claims, mode, level)
    with lock:
        return _verify_run(args, claims, mode, level)


def _verify_run(args, claims, mode, level) -> int:
    import time

    from attnlimits.verify.claims import Context, citation, run_claims
    from attnlimits.verify.report import format_table, terminal_width, write_report
    from attnlimits.verify._torchutil import resolve_device

    try:
        device = str(resolve_device(args.device))
    except (RuntimeError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    t0 = time.perf_counter()

    def progress(msg):
        print(f"{time.perf_counter() - t0:7.1f}s {msg}", file=sys.stderr, flush=True)

    try:
        ctx = Context(mode, device=device, seed=args.seed, progress=progress, cache_dir=args.cache)
    except ValueError as exc:
        raise CLIError(f"--cache: {exc}") from None

    def meta_now(**extra):
        meta = {"mode": mode, "device": device, "seed": args.seed, "level": level, "threads": args._threads,
                "workers": workers,
                "elapsed_s": round(time.perf_counter() - t0, 1),
                "command": "attnlimits " + " ".join(sys.argv[1:]) if sys.argv else "attnlimits verify",
                "references": citation(claims), **extra}
        if ctx.disk is not None:
            meta["cache"] = ctx.disk.summary()
        return meta

    told: set = set()

    def on_claim(done, not_run):
        """Each verdict as it comes (provisional: the final family is larger), and the report rewritten,
        so that a stop leaves a valid partial report."""
        for r in done:
            if r.claim not in told:
                told.add(r.claim)
                progress(f"  {r.claim}: {r.verdict} (provisional; {len(not_run)} claim(s) to go)")
        if not args.no_report:
            write_report(done, args.out, meta=meta_now(status="partial", not_run=not_run))

    from attnlimits.verify.claims.base import RunInterrupted
    from attnlimits.verify.claims.parallel import groups_of, run_claims_parallel

    workers = args.workers if args.workers is not None else max(1, (os.cpu_count() or 1) // max(1, args._threads))
    try:
        if workers > 1 and len(groups_of(claims)) > 1:
            results, disks = run_claims_parallel(claims, ctx, workers=workers, threads=args._threads, level=level,
                                                 on_claim=on_claim)
            if ctx.disk is not None:
                ctx.disk.absorb(disks)
        else:
            results = run_claims(claims, ctx, level=level, on_claim=on_claim)
    except RunInterrupted as stop:
        if stop.results:
            print(format_table(stop.results, color=sys.stdout.isatty(), width=terminal_width()))
        if not args.no_report:
            path = write_report(stop.results, args.out, meta=meta_now(status="interrupted", not_run=stop.not_run))
            print(f"partial report: {path} ({len(stop.results)} claim(s) ran; not run: {', '.join(stop.not_run)})")
        raise KeyboardInterrupt from None
    print(format_table(results, color=sys.stdout.isatty(), width=terminal_width()))
    if not args.no_report:
        path = write_report(results, args.out, meta=meta_now(status="complete"))
        print(f"report: {path}")
    if ctx.disk is not None and ctx.disk.rejected:
        print(f"note: {len(ctx.disk.rejected)} file(s) in the cache {ctx.disk.folder} were not data entries of this "
              f"cache (first: {ctx.disk.rejected[0][0]}: {ctx.disk.rejected[0][1]}); they were not loaded and the "
              "results were recomputed", file=sys.stderr)
    if ctx.disk is not None and ctx.disk.stale:
        print(f"note: {len(ctx.disk.stale)} result(s) came from the cache {ctx.disk.folder} but were made by other "
              f"code (fingerprints {', '.join(ctx.disk.summary()['stale_fingerprints'])}; this code "
              f"{ctx.disk.fingerprint}); delete the folder to recompute them", file=sys.stderr)
    return 1 if any(r.verdict == "fail" for r in results) else 0


def _cmd_figure(args) -> int:
    from attnlimits.verify.figures import all_figures, make_figure

    FIGURES = all_figures()
    if args.list or not args.names:
        w = max(18, *(len(f.name) for f in FIGURES.values()))
        for f in FIGURES.values():
            print(f"{f.name:<{w}} {f.title}\n{'':<{w}} {f.source}; quick: about {f.quick_minutes:g} min on 2 cores")
        return 0 if args.list else 2
    unknown = [n for n in args.names if n not in FIGURES]
    if unknown:
        raise CLIError(f"no figure {unknown[0]!r}; figures: {', '.join(FIGURES)}")
    _check_device(args.device)
    _check_out_dir(args.out, files=[f"{n}{ext}" for n in args.names for ext in (".png", ".csv")])
    from attnlimits.verify._torchutil import resolve_device

    try:
        device = str(resolve_device(args.device))
    except (RuntimeError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    alphas = None
    if args.alpha is not None:
        try:
            alphas = [float(v) for v in args.alpha.split(",") if v.strip()]
        except ValueError:
            raise CLIError(f"--alpha must be comma-separated numbers, got {args.alpha!r}") from None
    if args.workers is not None and args.workers < 0:
        raise CLIError(f"--workers must be >= 0, got {args.workers}")
    for name in args.names:
        png, rows = make_figure(name, args.out, mode="full" if args.full else "quick", seed=args.seed, device=device,
                                progress=_progress, seeds=args.seeds, alphas=alphas, workers=args.workers)
        print(f"{name}: {png} ({len(rows)} rows in {png.with_suffix('.csv')})")
    return 0


def _int_list(text, name):
    if text is None:
        return None
    try:
        return [int(v) if v.strip() != "d_h" else "d_h" for v in text.split(",") if v.strip()]
    except ValueError:
        raise CLIError(f"{name} must be comma-separated integers, got {text!r}") from None


def _cmd_weights(args) -> int:
    from attnlimits.verify.weights import DEFAULT_RANKS, CheckpointError, analyze_checkpoint

    ranks = _int_list(args.ranks, "--ranks") or DEFAULT_RANKS
    layers = _int_list(args.layers, "--layers")
    if args.heads is not None and args.heads < 1:
        raise CLIError(f"--heads must be a positive integer, got {args.heads}")
    _check_out_dir(args.out, files=("weights.csv", "weights.json", "weights.png"))
    try:
        rep = analyze_checkpoint(
            args.checkpoint, ranks=ranks, fold_layernorm=args.fold_layernorm, per_head=not args.no_per_head,
            layout=args.layout, n_heads=args.heads, layers=layers,
            progress=lambda m: print(m, file=sys.stderr, flush=True),
        )
    except CheckpointError as exc:
        raise CLIError(str(exc)) from None
    print(rep.format_table())
    paths = rep.write(args.out)
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0



def _join_negative_values(argv: list[str]) -> list[str]:
    """``--wk -0.5,0.5`` → ``--wk=-0.5,0.5``: argparse would take ``-0.5,0.5`` for an option.

    The same rule as exported solvers (one definition, in the portable driver)."""
    from attnlimits.numeric._portable_driver import _join_negative_values as join

    return join(argv)


def _leaf_of(parser, args):
    """The parser of the command ``args`` were parsed for (the top-level one when none was chosen)."""
    words = [getattr(args, k, None) for k in ("command", "subcommand", "export_result")]
    name = " ".join(w for w in words if w)
    leaves = leaf_parsers(parser)
    while name and name not in leaves:
        name = name.rsplit(" ", 1)[0] if " " in name else ""
    return leaves.get(name, parser)


def main(argv=None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("attnlimits: interrupted", file=sys.stderr)
        return 130


def _leave_no_empty_folder() -> None:
    """An output folder this run created and left empty (it stopped before writing) is removed."""
    if "attnlimits.verify._io" in sys.modules:
        from attnlimits.verify._io import remove_empty_created

        remove_empty_created()


def _main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args, extras = parser.parse_known_args(_join_negative_values(argv))
    if extras:
        leaf = _leaf_of(parser, args)
        print(leaf.format_usage().rstrip(), file=sys.stderr)
        print(f"{leaf.prog}: error: {unknown_option_message(leaf, extras)}", file=sys.stderr)
        return 2
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    from attnlimits.numeric import ConvergenceError
    from attnlimits.numeric.allocator import tune_allocator
    from attnlimits.numeric.threads import apply_threads, resolve_threads
    from attnlimits.symbolic.result import InputError

    tune_allocator()  # freed temporaries reused: the generated kernels 1.5-3x faster (numeric/allocator.py)
    name = args.command + (f" {args.subcommand}" if getattr(args, "subcommand", None) else "")
    try:
        args._threads = apply_threads(resolve_threads(getattr(args, "threads", None)))
        rc = args._handler(args)
        _leave_no_empty_folder()
        return rc
    except KeyboardInterrupt:
        _leave_no_empty_folder()
        print(f"attnlimits {name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (| head): nothing to say, the conventional status
        try:
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141
    except Exception as exc:  # noqa: BLE001 - user-facing errors are one line; others re-raised below
        expected = (CLIError, InputError, ConvergenceError, ValueError, ArithmeticError, OSError, MemoryError)
        try:
            from attnlimits.symbolic.hermite import ActivationError

            expected += (ActivationError,)
        except ImportError:  # pragma: no cover
            pass
        _leave_no_empty_folder()
        if not isinstance(exc, expected):
            raise
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if len(msg) > 300:
            msg = msg[:297] + "..."
        print(f"attnlimits {name}: error: {msg}", file=sys.stderr)
        return 2


def _sigint_outside_imports(signum, frame):  # pragma: no cover - exercised by a subprocess test
    """SIGINT handler: KeyboardInterrupt as usual, except while a module is being imported.

    A KeyboardInterrupt raised inside an import can escape an extension module's C++ initialiser
    (pybind11: ``terminate called after throwing … error_already_set``, exit −6) or leave a module
    half-initialised; there the interrupt is re-sent 50 ms later, until the import is done."""
    f = frame
    while f is not None:
        if f.f_code.co_filename.startswith("<frozen importlib"):
            import os
            import threading

            t = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
            t.daemon = True
            t.start()
            return
        f = f.f_back
    raise KeyboardInterrupt


def console_main() -> None:  # pragma: no cover - the `attnlimits` entry point and ``python -m attnlimits``
    """Run :func:`main` and exit with its status.  Ctrl-C during an import is deferred to its end
    (:func:`_sigint_outside_imports`), and after a Ctrl-C the process ends at once with 130
    (``os._exit`` after flushing): the interpreter's shutdown could otherwise re-raise SIGINT."""
    try:
        signal.signal(signal.SIGINT, _sigint_outside_imports)
    except ValueError:  # not the main thread
        pass
    rc = main()
    if rc == 130:
        import os

        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed pipe must not hide the exit status
                pass
        os._exit(130)
    sys.exit(rc)


if __name__ == "__main__":  # pragma: no cover
    console_main()
