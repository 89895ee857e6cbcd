"""Seconds per point and minimum detectable deviation (MDD) of the level properties at fixed points.

For each (property, point) the evaluation runs at the property's screening size (``--confirm``: its
confirmation size); per check it prints the wall time of the point, the SE, degrees of freedom and the
MDD at a per-check level of 1 % (``minimum_detectable_deviation``: t(1 − a/2, dof)·SE + tolerance +
allowance), absolute and relative to the headline quantity (the reference; for the paired
E_attention − E_ridge check of ``rmt-vs-simulation-weights``, relative to E_attention).  Usage (from
the checkout root)::

    python benchmarks/bench_property_power.py [PROPERTY ...] [--confirm]
"""
from __future__ import annotations

import argparse
import time

POINTS = {
    "slr-population-vs-mc": [
        {"model": "spiked", "nu": 2.0, "L": "2", "activation": "softmax"},
        {"model": "max", "nu": 8.0, "L": "3", "activation": "erf_learned"},
        {"model": "spiked", "nu": 2.0, "L": "1,2,3", "activation": "linear_uncentred"},
    ],
    "rmt-vs-simulation-weights": [
        {"activation": "tanh", "c": 0.5, "gamma": 0.1, "snr": 1.0, "wk": 1.0, "wq": 1.0, "diagonal": "zero"},
        {"activation": "tanh", "c": 0.5, "gamma": 1.0, "snr": 1.0, "wk": 1.0, "wq": 1.0, "diagonal": "zero"},
        {"activation": "relu", "c": 2.0, "gamma": 0.3, "snr": 1.0, "wk": 1.0, "wq": -0.5, "diagonal": "keep"},
    ],
    "rmt-frobenius-vs-m1": [
        {"activation": "relu", "c": 2.0, "wk": 1.0, "wq": -1.0, "diagonal": "zero"},
        {"activation": "tanh", "c": 0.25, "wk": 0.0, "wq": 0.0, "diagonal": "keep"},
    ],
    "rmt-bulk-traces": [
        {"activation": "tanh", "c": 0.5, "gamma": 0.1},
        {"activation": "relu", "c": 2.0, "gamma": 1.0},
    ],
    "slr-replica-vs-erm-models": [
        {"model": "spiked", "nu": 2.0, "L": 2, "alpha": 4.0, "lam": 0.1, "activation": "softmax"},
        {"model": "max", "nu": 4.0, "L": 3, "alpha": 8.0, "lam": 0.3, "activation": "linear_uncentred"},
    ],
}


def main(argv=None):
    from attnlimits.numeric.threads import apply_threads
    from attnlimits.symbolic.result import resolve
    from attnlimits.verify.claims.property_claims import find_property
    from attnlimits.verify.slr.properties import minimum_detectable_deviation

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("properties", nargs="*")
    ap.add_argument("--confirm", action="store_true", help="at the confirmation size")
    args = ap.parse_args(argv)
    apply_threads(1)
    for name in args.properties or list(POINTS):
        prop = find_property(name)
        size = dict(prop.confirm if args.confirm else prop.quick)
        for point in POINTS[name]:
            t0 = time.perf_counter()
            pairs = list(resolve(prop.evaluate)(dict(point), size=dict(size), seed=11))
            dt = time.perf_counter() - t0
            refs = {lab: c.reference for lab, c in pairs}
            for lab, c in pairs:
                mdd = minimum_detectable_deviation(c)
                head = abs(float(c.reference))
                if lab.startswith("E_attention - E_ridge"):
                    head = abs(float(c.reference) + float(next(v for k, v in refs.items() if k.startswith("E_ridge"))))
                dof = "inf" if c.dof is None else f"{c.dof:.0f}"
                print(f"{name} {point} | {lab} | {dt:.1f} s | se {c.se or 0:.3g} dof {dof} p {c.p_value} | "
                      f"MDD {mdd:.3g} = {100 * mdd / max(head, 1e-300):.2f} % of the headline", flush=True)


if __name__ == "__main__":
    main()
