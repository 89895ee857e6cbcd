"""Points per minute of each ``attnlimits explore`` property at quick size, and the driver's overhead.

Baseline measured in the same run: the property's evaluation function called directly on the same
points.  Ratio = explore's points per minute / the direct calls' (1.0 = no overhead from Hypothesis,
screening, logging and outputs).  Usage (from the checkout root)::

    python benchmarks/bench_explore.py [PROPERTY ...] [--points 5]
"""
from __future__ import annotations

import argparse
import tempfile

from _timing import clock, timed  # benchmarks/_timing.py (this script's folder is on sys.path)


def main(argv=None):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed

    from attnlimits.numeric.threads import apply_threads
    from attnlimits.symbolic.result import resolve
    from attnlimits.verify.explore import explore, properties
    from attnlimits.verify.explore.driver import point_seed, point_strategy

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("properties", nargs="*")
    ap.add_argument("--points", type=int, default=5)
    args = ap.parse_args(argv)
    apply_threads(1)
    props = properties()
    names = args.properties or list(props)
    print(f"{'property':<20} {'direct pts/min':>15} {'explore pts/min':>16} {'ratio':>6}")
    for name in names:
        prop = props[name]
        pts = []

        @settings(max_examples=args.points, database=None, deadline=None, suppress_health_check=list(HealthCheck))
        @hseed(0)
        @given(point_strategy(prop))
        def draw(p):
            pts.append(p)

        draw()
        fn = resolve(prop.evaluate)
        pts = pts[: args.points]
        t, _ = timed(lambda: [fn(dict(p), size=dict(prop.quick), seed=point_seed(0, p)) for p in pts])  # one call
        direct = len(pts) / t.min * 60
        with tempfile.TemporaryDirectory() as out:
            with clock() as c:
                res = explore([name], budget=args.points, seed=0, out=out, progress=None)
            n = sum(r["phase"] == "search" for r in res.rows)
            ex = n / c.wall * 60
        print(f"{name:<20} {direct:>15.1f} {ex:>16.1f} {ex / direct:>6.2f}")


if __name__ == "__main__":
    main()
