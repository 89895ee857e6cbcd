"""Hooks of the ridge result's solver: portable source that runs inside the generated module (read
as text by attnlimits.numeric, never imported)."""
import sys


def run_cli(args):
    gammas = parse_list(args.gamma, "gamma")  # noqa: F821 - portable driver helpers
    base = {"lamda": finite("lam", args.lam), "r2": finite("r2", args.r2), "sigma2": finite("sigma2", args.sigma2)}  # noqa: F821
    recs = sweep_curve(base, gammas)  # noqa: F821
    print(dumps_json(recs) if args.json else format_table(recs))  # noqa: F821
    sys.stdout.flush()
