"""The ``attnlimits explore`` command: its parser and handler (hooked into :mod:`attnlimits.verify.cli`)."""
from __future__ import annotations

import argparse
import re
import sys

__all__ = ["add_parser"]

EXAMPLES = (
    "attnlimits explore --list",
    "attnlimits explore slr-bo-monotone --budget 20 --out explore-out",
    "attnlimits explore rmt-vs-simulation grammar-answers --budget 50 --seed 1 --time 600 --csv",
    "attnlimits explore slr-bayes-bound --at 'model=spiked,nu=2,L=3,activation=softmax'",
    "attnlimits explore rmt-vs-simulation --budget 200 --workers 8",
)


def add_parser(sub, examples, handler_errors):
    p = sub.add_parser(
        "explore", help="property-based verification: search each result's parameter space for where its theory fails",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A scrambled Sobol design (half the budget), then Hypothesis, draw points from each property's\n"
                    "declared domain (Hypothesis steers toward the largest discrepancy and shrinks a failure); the\n"
                    "strongest screened points are confirmed on fresh draws at a larger size (family-wise false-\n"
                    "alarm rate <= --level for a correct theory; the rule is in report.md).\n"
                    "Writes points.parquet (points.csv with --csv), map-<property>.png and report.md to --out;\n"
                    "a rerun into the same --out adds its points to the table there (--fresh: a new table);\n"
                    "known failures are kept in --out/hypothesis-db and replayed first on a rerun. Exit 1 when a\n"
                    "failure is confirmed, 130 on Ctrl-C (finished points kept). Docs: docs/explore.md.",
        epilog=examples(*EXAMPLES))
    p.add_argument("properties", nargs="*", metavar="PROPERTY", help="properties to explore (default: all)")
    p.add_argument("--list", action="store_true", help="name the properties with their domains and exit")
    p.add_argument("--budget", type=int, default=100, metavar="N", help="points drawn per property (default: 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the search and of every draw (default: 0)")
    p.add_argument("--out", default="attnlimits-explore", metavar="DIR", help="output folder (default: attnlimits-explore)")
    p.add_argument("--time", type=float, default=None, metavar="SECONDS", help="stop the whole run after this long")
    p.add_argument("--level", type=float, default=None, help="family-wise false-alarm level (default: 0.01)")
    p.add_argument("--csv", action="store_true", help="write points.csv instead of points.parquet")
    p.add_argument("--fresh", action="store_true",
                   help="start a new points table in --out (default: add this run's points to the one there)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="evaluate the space-filling points and the confirmations on a local Dask cluster of N "
                        "processes (default: in this process; the same points, draws and verdicts either way)")
    p.add_argument("--scheduler", default=None, metavar="ADDR",
                   help="... or on an existing Dask cluster: address (tcp://host:8786) or scheduler file")
    p.add_argument("--at", default=None, metavar="K=V,...",
                   help="evaluate one property at one point (the reproduce command of report.md) and print the row")
    p.set_defaults(_handler=_run)
    return p


def _parse_at(prop, text):
    from attnlimits.symbolic.properties import Choice, Expression, IntRange, Range
    from attnlimits.symbolic.result import InputError

    point = {}
    # a comma starts a new item only before NAME=: values may hold commas themselves (a length list
    # ``L=1,2,3``, a formula ``Max(t, 2)``), as the reproduce lines of report.md write them
    for item in filter(None, (x.strip() for x in re.split(r",(?=\s*[A-Za-z_]\w*=(?!=))", text))):
        k, sep, v = item.partition("=")
        if not sep or k not in prop.domain:
            raise InputError(f"--at: {item!r} is not NAME=VALUE of {prop.name}'s parameters ({', '.join(prop.domain)})")
        spec = prop.domain[k]
        try:
            val = int(v) if isinstance(spec, IntRange) else float(v) if isinstance(spec, Range) else v
        except ValueError:
            raise InputError(f"--at {k}={v}: not a number") from None
        if isinstance(spec, Choice):
            val = next((c for c in spec.values if str(c) == v), v)
        if not (isinstance(spec, Expression) or spec.contains(val)):
            raise InputError(f"--at {k}={v} is outside the domain {spec.text()}")
        point[k] = val
    missing = [k for k in prop.domain if k not in point]
    if missing:
        raise InputError(f"--at needs every parameter of {prop.name}; missing {', '.join(missing)}")
    return point


def _run(args) -> int:
    from attnlimits.symbolic.properties import domain_text
    from attnlimits.symbolic.result import InputError
    from attnlimits.verify.comparison import LEVEL

    from . import ExploreInterrupted, explore, properties
    from .driver import coverage_text

    known = properties()
    if args.list:
        for prop in known.values():
            print(f"{prop.name:<20} [{prop.result}, {prop.kind}] {prop.title}\n{'':<20} {domain_text(prop)}")
        return 0
    from ._options import check_run_options

    # one check of every run option, for the search and the --at path alike, before any work
    level, _, _, _ = check_run_options(level=LEVEL if args.level is None else args.level, budget=args.budget,
                                       time_limit=args.time, seed=args.seed)
    if args.at is not None:
        from .driver import evaluate_point, point_seed

        if len(args.properties) != 1 or args.properties[0] not in known:
            raise InputError("--at evaluates one property: name exactly one (attnlimits explore --list)")
        prop = known[args.properties[0]]
        point = _parse_at(prop, args.at)
        row = evaluate_point(prop, point, size=dict(prop.quick), seed=point_seed(args.seed, point), level=level)
        for k, v in row.items():
            print(f"{k:<12} {v}")
        return 0 if row["verdict"] == "pass" else 1
    from pathlib import Path

    out = Path(args.out)
    try:  # explore() checks and locks --out before the first point
        res = explore(args.properties, budget=args.budget, seed=args.seed, out=out, time_limit=args.time,
                      level=level, csv=args.csv, fresh=args.fresh,
                      progress=lambda m: print(m, file=sys.stderr, flush=True),
                      workers=args.workers, scheduler=args.scheduler)
    except ExploreInterrupted as stop:
        print(f"attnlimits explore: interrupted; {len(stop.result.rows)} finished points written to {out}",
              file=sys.stderr)
        return 130
    for run in res.runs:
        ce = "" if run.counterexample is None else " at " + ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in run.counterexample.items())
        print(f"{run.prop.name:<20} {run.status:<12} {len(run.rows):>4} points {run.seconds:7.1f} s{ce}")
        print(f"{'':<20} {coverage_text(run)}")
    if res.previous:
        print(f"kept {len(res.previous)} point(s) of earlier runs in the table (--fresh starts a new one)")
    print(f"report: {out / 'report.md'}")
    return 1 if res.failed else 0
