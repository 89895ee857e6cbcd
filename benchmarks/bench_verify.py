"""The main job, ``attnlimits verify --quick``: before the power work, serial, and ``--workers N``, in one run.

Runs the command three times, each in a fresh process with one thread per process: the code of git commit
``--baseline`` (default :data:`BASELINE_COMMIT`, the tree before the claims were sized for power; extracted with
``git archive`` into a temporary folder and imported from there, as that tree's path extension allows; ``none``
skips it), then this checkout with ``--workers 1`` and with ``--workers N`` (default N = 2, the CI machine's
cores).  Prints the wall times, the ratios (N workers against the baseline is the main job's speed before and
after; N workers against one is the parallel speed-up), the longest claims, and whether the serial and parallel
reports agree field by field (every claim's verdict and every check's value, SE and p-value): claims that share
computations run in one worker, so they must.  ``--write-costs`` rewrites ``verify/claims/costs.py`` (the
weights by which workers are handed claims) from the serial run.

    python benchmarks/bench_verify.py                  # three runs, seed 0 (about 3.5 + 8 + 3 min on two cores)
    python benchmarks/bench_verify.py --baseline none --workers 2 --seed 3 --claims C15 C16 V8 C5
    python benchmarks/bench_verify.py --write-costs
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import Timing, clock, ratio_line

ROOT = Path(__file__).resolve().parents[1]
COSTS = ROOT / "verify" / "claims" / "costs.py"
#: ``verify --quick`` before the claims were sized for power (more seeds and draws, no stored theory tables)
BASELINE_COMMIT = "bd8131b"


def run_baseline(commit: str, seed: int, tmp: Path) -> tuple[float, dict]:
    """``verify --quick`` of the tree at ``commit`` (serial: it predates ``--workers``), imported from a copy."""
    src = tmp / "baseline-src"
    src.mkdir()
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.exit(f"cannot extract the baseline commit {commit}: {exc}")
    out = tmp / "baseline"
    cmd = [sys.executable, "-m", "attnlimits", "verify", "--quick", "--seed", str(seed), "--threads", "1",
           "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(src)}
    with clock() as c:
        proc = subprocess.run(cmd, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"baseline {commit}: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return c.wall, json.loads((out / "results.json").read_text())


def run(workers: int, seed: int, claims, out: Path) -> tuple[float, dict]:
    cmd = [sys.executable, "-m", "attnlimits", "verify", *claims, "--quick", "--seed", str(seed),
           "--workers", str(workers), "--threads", "1", "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with clock() as c:
        proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return c.wall, json.loads((out / "results.json").read_text())


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def differences(ra: dict, rb: dict) -> list[str]:
    """Verdicts and check fields that differ between two results.json (claims matched by name)."""
    out = []
    by = {c["claim"]: c for c in rb["claims"]}
    for ca in ra["claims"]:
        cb = by.get(ca["claim"])
        if cb is None:
            out.append(f"{ca['claim']}: missing")
            continue
        if ca["verdict"] != cb["verdict"]:
            out.append(f"{ca['claim']}: verdict {ca['verdict']} vs {cb['verdict']}")
        for xa, xb in zip(ca["checks"], cb["checks"]):
            for key in ("label", "theory", "value", "se", "dof", "p_value", "p_adjusted", "passed"):
                if not _same(xa.get(key), xb.get(key)):
                    out.append(f"{ca['claim']}: {xa.get('label', '')[:50]}: {key} {xa.get(key)} vs {xb.get(key)}")
        if len(ca["checks"]) != len(cb["checks"]):
            out.append(f"{ca['claim']}: {len(ca['checks'])} vs {len(cb['checks'])} checks")
    return out


def write_costs(results: dict) -> None:
    items = sorted(((c["claim"], round(c["elapsed_s"], 1)) for c in results["claims"]), key=lambda x: -x[1])
    head = COSTS.read_text().split("QUICK_SECONDS")[0]
    COSTS.write_text(head + "QUICK_SECONDS: dict[str, float] = {\n" +
                     "".join(f'    "{n}": {t},\n' for n, t in items) + "}\n")
    print(f"wrote {COSTS.relative_to(ROOT)} ({len(items)} claims)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--claims", nargs="*", default=[])
    ap.add_argument("--baseline", default=BASELINE_COMMIT,
                    help=f"git commit of the run to compare with (default {BASELINE_COMMIT}; none: skip)")
    ap.add_argument("--write-costs", action="store_true", help="rewrite verify/claims/costs.py from the serial run")
    args = ap.parse_args()
    tb = None
    with tempfile.TemporaryDirectory() as tmp:
        if args.baseline != "none" and not args.claims:
            tb, rb = run_baseline(args.baseline, args.seed, Path(tmp))
            print(f"verify --quick at {args.baseline}: {tb:.0f} s wall ({len(rb['claims'])} claims, serial)",
                  flush=True)
        t1, r1 = run(1, args.seed, args.claims, Path(tmp) / "serial")
        print(f"verify --quick --workers 1: {t1:.0f} s wall ({len(r1['claims'])} claims)", flush=True)
        if args.write_costs:
            write_costs(r1)
        tn, rn = run(args.workers, args.seed, args.claims, Path(tmp) / "parallel")
        print(f"verify --quick --workers {args.workers}: {tn:.0f} s wall", flush=True)
    print(ratio_line(f"speed-up of --workers {args.workers} over --workers 1: ", Timing.of([t1]), Timing.of([tn])))
    if tb is not None:
        print(ratio_line(f"speed-up of --workers {args.workers} over the baseline {args.baseline}: ", Timing.of([tb]),
                         Timing.of([tn])))
    longest = sorted(r1["claims"], key=lambda c: -c["elapsed_s"])[:8]
    print("longest claims (serial): " + ", ".join(f"{c['claim']} {c['elapsed_s']:.0f} s" for c in longest))
    repeated = rn.get("meta", {}).get("repeated_computations", [])
    if repeated:
        print(f"{len(repeated)} cached computation(s) ran in two workers: " + "; ".join(
            f"{', '.join(r['claims'])} ({r['seconds']:.1f} s)" for r in repeated[:8]))
    diff = differences(r1, rn)
    print("reports agree field by field" if not diff else f"{len(diff)} difference(s):\n  " + "\n  ".join(diff[:30]))
    sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
