r"""Phase diagram of the spiked- or max-SLR BO state evolution (claims C19-phase, C19-phase-max): table + PNG.

Runs :func:`attnlimits.verify.slr.bayes_optimal.phase_scan` (informed and uninformed starts, continuation in α) on the
grid of :data:`attnlimits.verify.slr.phase.PHASE_COMMAND` (or the one given) and writes ``phase.csv`` and
``phase.png`` (:func:`attnlimits.verify.slr.phase.plot_phase_diagram`) into ``--out``.

    OMP_NUM_THREADS=1 python studies/study_bo_phase.py --out /tmp/bo_phase
    OMP_NUM_THREADS=1 python studies/study_bo_phase.py --model max --L 2 --nu 0.5,1,2,5,inf --out /tmp/bo_phase_max
"""
from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path


def main(argv=None):
    from attnlimits.verify.slr.phase import PHASE_COMMAND, phase_summary, run_phase

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for p in PHASE_COMMAND.parameters:
        if p.name != "plot":
            ap.add_argument(p.option, default=None, help=p.help)
    ap.add_argument("--out", default="/tmp/attnlimits_bo_phase")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    vals = {p.name: getattr(a, p.name) for p in PHASE_COMMAND.parameters if p.name != "plot"}
    params = PHASE_COMMAND.parse({**vals, "plot": str(out / "phase.png")})
    t0 = time.perf_counter()
    rows = list(run_phase(params, progress=lambda m: print(m, flush=True)))
    with open(out / "phase.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    for L, s in phase_summary(rows).items():
        print(f"L={L}: {s}")
    print(f"{len(rows)} points in {time.perf_counter() - t0:.0f} s; written to {out}")


if __name__ == "__main__":
    main()
