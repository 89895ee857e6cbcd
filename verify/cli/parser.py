"""The argument parser of ``attnlimits``, built from the result registry: each result's commands and
export, and the engine's tools (show, explore, figure, sweep, verify, weights, hermite).  Building it
imports no SymPy and none of the results' modules."""
from __future__ import annotations

import argparse
import textwrap

from .commands import (figure_command, hermite_command, need_export_result, need_subcommand, run_command,
                       run_export, verify_command, weights_command)
from .common import THREADS_HELP, add_common, examples

__all__ = ["build_parser", "join_negative_values", "leaf_of", "leaf_parsers", "unknown_option_message"]


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("attnlimits")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


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
                       epilog=(examples(*cmd.examples) + "\n\n" if cmd.examples else "")
                       + "output columns: docs/output.md explains every key (--json shows them all)")
    _add_params(p, cmd.parameters)
    add_common(p)
    p.add_argument("--columns", default=None, metavar="A,B,...",
                   help="the table's columns, comma-separated, or 'all' (default: "
                        + (",".join(cmd.table) if cmd.table and not cmd.formatter else "the command's table")
                        + "); with --csv, the CSV's columns")
    p.set_defaults(_handler=run_command, _result=result.name, _command=cmd.name)
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
        epilog=examples(*first, *[r.export_examples[0] for r in results.values() if r.export is not None
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
                               epilog=examples(*[c.examples[0] for c in res.commands if c.examples]))
            rsub = p.add_subparsers(dest="subcommand", metavar="WHAT")
            for cmd in res.commands:
                _add_command(rsub, cmd, res, cmd.name)
            p.set_defaults(_handler=need_subcommand, _result=res.name)
        elif res.commands:  # a result may bring only claims or properties
            _add_command(sub, res.command(""), res, res.name)

    # --- export --------------------------------------------------------------------------------
    p = sub.add_parser(
        "export",
        help="write a standalone solver (.py) that needs only numpy or mpmath",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write a standalone, readable Python solver generated from the SymPy equations.",
        epilog=examples(*[ex for r in results.values() if r.export is not None for ex in r.export_examples[:2]]),
    )
    esub = p.add_subparsers(dest="export_result", metavar="RESULT")
    for res in results.values():
        if res.export is None:
            continue
        ep = esub.add_parser(res.name, help=f"standalone solver of {res.name}: {res.title}",
                             formatter_class=argparse.RawDescriptionHelpFormatter,
                             description=res.export_help or None,
                             epilog=examples(*res.export_examples) if res.export_examples else None)
        _add_params(ep, res.export_parameters)
        ep.add_argument("-o", "--output", required=True, help="file to write")
        add_common(ep, json_option=False)
        ep.set_defaults(_handler=run_export, _result=res.name)
    p.set_defaults(_handler=need_export_result)

    # --- show (verify/cli/show.py) -----------------------------------------------------------
    from attnlimits.verify.cli.show import add_parser as _add_show

    _add_show(sub, examples)

    # --- explore (verify/explore/cli.py) ---------------------------------------------------------
    from attnlimits.verify.explore.cli import add_parser as _add_explore

    _add_explore(sub, examples, None)

    # --- figure --------------------------------------------------------------------------------
    p = sub.add_parser(
        "figure",
        help="draw a figure panel of the papers: theory live, simulation at quick or paper size",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Draw one panel of the papers' figures (attnlimits.verify.figures): theory on a dense grid, "
                    "simulation or training at quick size (minutes on two cores) or the paper's size "
                    "(--full), residuals in standard errors, the sizes and seeds on the figure; writes "
                    "OUT/NAME.png and a tidy OUT/NAME.csv.",
        epilog=examples("attnlimits figure --list",
                        *[ex for r in results.values() for panel in r.figures for ex in panel.examples]),
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
    add_common(p, json_option=False)
    p.set_defaults(_handler=figure_command)

    # --- sweep ---------------------------------------------------------------------------------
    from attnlimits.verify.sweep.cli import add_subparser as _add_sweep

    p = _add_sweep(sub)
    add_common(p, json_option=False)
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
        epilog=examples(
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
    add_common(p, json_option=False)
    p.set_defaults(_handler=verify_command)

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
        epilog=examples(
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
    add_common(p, json_option=False)
    p.set_defaults(_handler=weights_command)

    # --- hermite -------------------------------------------------------------------------------
    p = sub.add_parser(
        "hermite",
        help="Hermite coefficients of an activation",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Hermite data of a centred activation (docs/attention_rmt.md §4.1): a0 (removed), "
        "a1 = E[xi f], a2, nu = E f^2, b^2 = nu - a1^2, and the Parseval residual.",
        epilog=examples("attnlimits hermite --activation relu", "attnlimits hermite --activation 'sin(t)' --dps 50 --json"),
    )
    p.add_argument("--activation", required=True, help="built-in name or SymPy expression in t")
    p.add_argument("--dps", type=int, default=30, help="decimal digits (default 30)")
    p.add_argument("--json", action="store_true")
    add_common(p, json_option=False)
    p.set_defaults(_handler=hermite_command)
    for leaf in leaf_parsers(parser).values():  # every command takes --threads, as the README says
        if not any("--threads" in a.option_strings for a in leaf._actions):
            leaf.add_argument("--threads", default=None, metavar="N", help=THREADS_HELP)
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



def join_negative_values(argv: list[str]) -> list[str]:
    """``--wk -0.5,0.5`` → ``--wk=-0.5,0.5``: argparse would take ``-0.5,0.5`` for an option.

    The same rule as exported solvers (one definition, in the portable driver)."""
    from attnlimits.numeric.portable_driver import join_negative_values as join

    return join(argv)


def leaf_of(parser, args):
    """The parser of the command ``args`` were parsed for (the top-level one when none was chosen)."""
    words = [getattr(args, k, None) for k in ("command", "subcommand", "export_result")]
    name = " ".join(w for w in words if w)
    leaves = leaf_parsers(parser)
    while name and name not in leaves:
        name = name.rsplit(" ", 1)[0] if " " in name else ""
    return leaves.get(name, parser)
