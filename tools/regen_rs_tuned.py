"""Regenerate ``attnlimits.verify.claims.slr_finite.RS_TUNED`` (the stored RS side of ``--quick`` C15b/C18).

Per key (activation, model, ν, L, α): the 9-point λ grid 10⁻³…10 at Sobol 4×1024 (continuation from
large to small λ, no refinement: the rule of ``TUNE_RULE``), λ* by RS E_test.  Prints the dict
literal to paste into ``verify/claims/slr_finite.py`` (one line per key) and the time per key.

    PYTHONPATH=$PWD OMP_NUM_THREADS=1 python tools/regen_rs_tuned.py [activation ...] > rs_tuned.txt
"""
import sys
import time

from attnlimits.numeric.threads import apply_threads


def main():
    apply_threads(1)
    from attnlimits.verify.claims.slr_finite import RS_TUNED, TUNE_RULE
    from attnlimits.verify.slr.replica import rs_tune_lambda

    only = sys.argv[1:]  # optional activation names
    for key in sorted(RS_TUNED):
        act, model, nu, L, alpha = key
        if only and act not in only:
            continue
        t0 = time.perf_counter()
        best, grid = rs_tune_lambda(act, model, nu, L, alpha, 0.1, refine=False, **TUNE_RULE)
        entry = {"lam": best.lam, "E_test": round(best.E_test, 6), "E_test_error": round(best.E_test_error, 6),
                 "values": {k: round(v, 6) for k, v in best.values.items()},
                 "errors": {k: round(v, 6) for k, v in best.errors.items()},
                 "grid": [(round(g.lam, 6), round(g.E_test, 6), round(g.E_test_error, 6)) for g in grid]}
        print(f"    {key!r}: {entry!r},", flush=True)
        print(f"# {key}: {time.perf_counter() - t0:.1f} s wall, {time.process_time():.1f} s CPU so far",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
