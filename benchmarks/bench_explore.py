"""Points per minute, distinct points and coverage of ``attnlimits explore`` per property, against the
former driver in the same run; with ``--power``, the planted-error detection and the null false alarms.

Baseline measured in the same run: ``verify/explore/driver.py`` at git commit :data:`BASELINE_COMMIT`
(screen at level/(K·budget·m), Hypothesis only, a point drawn twice evaluated twice), read with
``git show`` and run in this process on the same property declarations (same sizes) and seeds.
Both drivers search in this process, without writing outputs.  Columns per property and driver:
wall seconds, searched points per minute (the budget's points; confirmations, shrinking and
refinement cost time but are not counted), distinct points / searched, the coverage of each
parameter (equal-width bins of its scale hit, or counts per choice), the status, and the ratio new/old
of points per minute.

``--power``: ``toy-small-error`` (tests/plugins/toy_power.py: a 1.25 % error, 2.5 SE, on x > 0.7) at
budgets 20 and 50 over ``--seeds`` seeds, both drivers: how many runs find it; and ``toy-null`` (no
error) at budget 50: how many runs report a false failure, with the binomial bound at level 1 %.

Usage (from the checkout root)::

    python benchmarks/bench_explore.py [PROPERTY ...] [--budget 20] [--seed 0] [--power] [--seeds 20]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import types
from pathlib import Path

from _timing import clock  # benchmarks/_timing.py (this script's folder is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
#: the driver before the per-point screen, the space-filling phase and the memo
BASELINE_COMMIT = "bd8131b"


def load_baseline() -> types.ModuleType:
    try:
        src = subprocess.run(["git", "-C", str(ROOT), "show", f"{BASELINE_COMMIT}:verify/explore/driver.py"],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"cannot read the baseline from git commit {BASELINE_COMMIT}: {exc}") from None
    mod = types.ModuleType("_explore_driver_baseline")
    mod.__file__ = f"<git {BASELINE_COMMIT}:verify/explore/driver.py>"
    sys.modules[mod.__name__] = mod
    exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    return mod


def _cov(prop, rows) -> str:
    from attnlimits.verify.explore.driver import coverage

    parts = []
    for name, c in coverage(prop, rows).items():
        if "fraction" in c:
            parts.append(f"{name} {c['hit']}/{c['bins']}")
        elif "distinct" in c:
            parts.append(f"{name} {c['distinct']} distinct")
        else:
            parts.append(f"{name} " + ":".join(str(v) for v in c.values()))
    return "; ".join(parts)


def _distinct(prop, rows) -> int:
    return len({tuple((k, repr(r.get(k))) for k in prop.domain) for r in rows})


def speed(names, props, budget, seed, old):
    from attnlimits.verify.explore import driver as new

    print(f"budget {budget}, seed {seed}; baseline = verify/explore/driver.py at {BASELINE_COMMIT}, same property "
          f"sizes\n{'property':<30} {'driver':<6} {'s':>7} {'pts/min':>8} {'distinct':>9}  {'status':<11} coverage")
    for name in names:
        prop = props[name]
        ppm = {}
        for label, mod in (("old", old), ("new", new)):
            with clock() as c:
                run = mod.explore_property(prop, budget=budget, seed=seed)
            rows = [r for r in run.rows if r.get("phase") in ("search", "sobol") and r.get("check") != "hypothesis"]
            ppm[label] = len(rows) / c.wall * 60
            d = _distinct(prop, rows)
            print(f"{name:<30} {label:<6} {c.wall:7.1f} {ppm[label]:8.1f} {d:>4}/{len(rows):<4}  {run.status:<11} "
                  f"{_cov(prop, rows)}", flush=True)
        print(f"{'':<30} ratio new/old points per minute {ppm['new'] / ppm['old']:.2f}", flush=True)


def power(props, seeds, old):
    from attnlimits.verify.explore import driver as new

    for name, budget in (("toy-small-error", 20), ("toy-small-error", 50), ("toy-null", 50)):
        line = []
        for label, mod in (("old", old), ("new", new)):
            with clock() as c:
                fails = sum(mod.explore_property(props[name], budget=budget, seed=s).status == "fail"
                            for s in range(seeds))
            line.append(f"{label} {fails}/{seeds} ({c.wall:.0f} s)")
        extra = ""
        if name == "toy-null":
            # P(at least k false failures in `seeds` runs) at the guaranteed rate 1 %: the largest k with P > 1 %
            from scipy.stats import binom

            k = next(k for k in range(seeds + 1) if binom.sf(k - 1, seeds, 0.01) <= 0.01) - 1
            extra = f"  (at rate <= 1 %: P(> {k} failing runs) <= 1 %)"
        print(f"{name:<16} budget {budget:>3}: runs failing: " + ", ".join(line) + extra, flush=True)


def main(argv=None):
    from attnlimits.numeric.threads import apply_threads
    from attnlimits.symbolic import result as R
    from attnlimits.verify.explore import properties

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("properties", nargs="*")
    ap.add_argument("--budget", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--power", action="store_true", help="only the planted-error and null experiment")
    ap.add_argument("--seeds", type=int, default=20)
    args = ap.parse_args(argv)
    apply_threads(1)
    old = load_baseline()
    if args.power:
        sys.path.insert(0, str(ROOT / "tests" / "plugins"))
        import toy_power

        R._EXTRA["toypower"] = toy_power.RESULT
        power(properties(), args.seeds, old)
        return
    props = properties()
    speed(args.properties or list(props), props, args.budget, args.seed, old)


if __name__ == "__main__":
    main()
