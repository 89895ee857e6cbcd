"""Claim C18, theory side (docs/slr.md §15): RS test error at tuned λ, softmax vs every linear variant.

Settings: spiked ν ∈ {1, 2}, L = 3 and max-SLR ν = ∞, L = 3; α ∈ {1, 2, 4, 10, 20}; λ tuned per
(activation, α) on the 9-point log grid 1e-3..10 then a bounded 1-D refinement in log λ (§12;
scipy's bounded Brent).  Writes one JSON line per point to the output
file (resumable: finished points are skipped) and prints the table.  ``C18_POINTS`` (Sobol points per
replicate, default 256) and ``C18_REFINE=0`` (grid only: the grid minimum is an upper bound of the
tuned error) trade accuracy for time.

    OMP_NUM_THREADS=1 python tools/c18_replica_table.py OUT.jsonl [activation ...]
"""
import json
import os
import math
import sys
import time

from attnlimits.verify.slr.replica import rs_problem

SETTINGS = [("spiked", 1.0), ("spiked", 2.0), ("max", math.inf)]
ALPHAS = [1.0, 2.0, 4.0, 10.0, 20.0]
ACTS = ["linear_centred", "linear_uncentred", "linear_pure", "softmax"]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "c18_replica.jsonl"
    acts = sys.argv[2:] or ACTS
    done = set()
    try:
        for line in open(out):
            r = json.loads(line)
            done.add((r["activation"], r["model"], r["nu"], r["alpha"]))
    except FileNotFoundError:
        pass
    for act in acts:
        pts = int(os.environ.get("C18_POINTS", "256"))
        refine = os.environ.get("C18_REFINE", "1") == "1"
        # α outer, settings inner: a partial run still covers every setting
        for a in sorted(ALPHAS, key=lambda v: [4.0, 20.0, 1.0, 10.0, 2.0].index(v)):
            for model, nu in SETTINGS:
                key = (act, model, nu if math.isfinite(nu) else "inf", a)
                if key in done:
                    continue
                t0 = time.time()
                try:
                    best, grid = rs_problem(act, model, nu, 3, points=pts, replicates=4).tune_lambda(
                        a, 0.1, tol=1e-6, xatol=0.3, refine=refine)
                    row = {"activation": act, "model": model, "nu": key[2], "alpha": a, "lam_star": best.lam,
                           "E_test": best.E_test, "E_test_error": best.E_test_error, "flags": list(best.flags),
                           "stability": best.stability, "pd_fail": best.pd_fail_fraction,
                           "grid": [[g.lam, g.E_test] for g in grid], "seconds": time.time() - t0,
                           "values": best.values, "points": pts, "refined": refine}
                except Exception as exc:  # noqa: BLE001 - recorded in the table
                    row = {"activation": act, "model": model, "nu": key[2], "alpha": a, "error": str(exc)[:300],
                           "seconds": time.time() - t0}
                with open(out, "a") as f:
                    f.write(json.dumps(row) + "\n")
                print(json.dumps({k: row.get(k) for k in ("activation", "model", "nu", "alpha", "lam_star", "E_test",
                                                          "E_test_error", "seconds", "error")}), flush=True)


if __name__ == "__main__":
    main()
