"""Regenerate the stored RS tunings (the RS side of ``--quick`` C15b/C18): ``verify/slr/data/rs_tuned.json``.

Per key (activation, model, ν, L, α): the 9-point λ grid 10⁻³…10 at Sobol 4×1024 (continuation from
large to small λ, no refinement: the rule of ``TUNE_RULE``), λ* by RS E_test.  Writes the package data
file that ``attnlimits.verify.slr.claims.finite.RS_TUNED`` loads (one line per key, so a regeneration
reads as a diff; nothing is pasted into code) and prints the time per key.

    OMP_NUM_THREADS=1 python tools/regen_rs_tuned.py [activation ...]
    OMP_NUM_THREADS=1 python tools/regen_rs_tuned.py --out /tmp/rs_tuned.json   # elsewhere

With activation names, only those keys are recomputed; the others keep their stored entries.
``--add MODEL:NU:L --alpha A,B --activation-list X,Y`` adds (and computes) the keys of a new setting:

    OMP_NUM_THREADS=1 python tools/regen_rs_tuned.py --add max:inf:3 --alpha 1,2,4,10,20 \
        --activation-list softmax,linear_uncentred
"""
import argparse
import time
from pathlib import Path

from attnlimits.numeric.threads import apply_threads

DATA = Path(__file__).resolve().parents[1] / "verify" / "slr" / "data" / "rs_tuned.json"


def _write(path: Path, text: str) -> None:
    """Write atomically: a claim run reading the table meanwhile sees the old file or the new one."""
    from attnlimits.symbolic.files import atomic_write

    def write(tmp):
        Path(tmp).write_text(text, encoding="utf-8")
    atomic_write(path, write)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("activation", nargs="*", help="recompute only these activations (default: every key)")
    ap.add_argument("--out", type=Path, default=DATA, help=f"file to write (default {DATA})")
    ap.add_argument("--add", default="", help="a new setting MODEL:NU:L whose keys are added and computed")
    ap.add_argument("--alpha", default="1,2,4,10,20", help="sample ratios of --add (comma list)")
    ap.add_argument("--activation-list", default="softmax,linear_uncentred", help="activations of --add")
    args = ap.parse_args(argv)
    apply_threads(1)
    from attnlimits.verify.slr.claims.finite import RS_TUNED, TUNE_RULE, rs_tuned_json
    from attnlimits.verify.slr.replica import rs_problem

    table = dict(RS_TUNED)
    keys = sorted(RS_TUNED)
    if args.add:
        model, nu, L = args.add.split(":")
        keys = [(a, model, float(nu), int(L), float(x)) for a in args.activation_list.split(",")
                for x in args.alpha.split(",")]
    for key in keys:
        act, model, nu, L, alpha = key
        if args.activation and act not in args.activation:
            continue
        t0 = time.perf_counter()
        best, grid = rs_problem(act, model, nu, L, **TUNE_RULE).tune_lambda(alpha, 0.1, refine=False)
        table[key] = {"lam": best.lam, "E_test": round(best.E_test, 6), "E_test_error": round(best.E_test_error, 6),
                      "values": {k: round(v, 6) for k, v in best.values.items()},
                      "errors": {k: round(v, 6) for k, v in best.errors.items()},
                      "grid": [(round(g.lam, 6), round(g.E_test, 6), round(g.E_test_error, 6)) for g in grid]}
        print(f"# {key}: λ*={best.lam:.4g} E_test={best.E_test:.4f}; {time.perf_counter() - t0:.1f} s wall, "
              f"{time.process_time():.1f} s CPU so far", flush=True)
        _write(args.out, rs_tuned_json(table))  # each key kept as soon as it is done
    _write(args.out, rs_tuned_json(table))
    print(f"written {args.out} ({len(table)} keys)")


if __name__ == "__main__":
    main()
