"""Hooks of the toy result's solver (portable source; runs inside the generated module)."""
import sys


def run_cli(args):
    a = parse_list(args.a, "a")
    recs = sweep_curve({"b": finite("b", args.b)}, a)  # noqa: F821 - portable driver
    print(dumps_json(recs) if args.json else format_table(recs))  # noqa: F821
    sys.stdout.flush()
