"""Pin the outputs of the solvers, so that a change of structure that must not move numbers is checked.

``python tests/golden/make_golden.py`` recomputes ``golden.json``; ``tests/golden/test_golden.py``
compares.  Regenerate only when a change is *meant* to move numbers, and say so in the commit.
Each entry is small (seconds) and deterministic: fixed seeds, float64, one thread.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("ATTNLIMITS_THREADS", "1")

HERE = Path(__file__).resolve().parent


def _fp(fp) -> dict:
    return {"E_test": fp.E_test, "E_test_error": fp.E_test_error, "values": dict(fp.values),
            "training_objective": fp.training_objective, "stability": fp.stability, "replicon": fp.replicon,
            "iterations": int(fp.iterations), "evaluations": int(fp.evaluations), "method": fp.method,
            "flags": list(fp.flags)}


def compute() -> dict:
    from attnlimits.symbolic.result import discover_results, resolve
    from attnlimits.verify.slr.bayes_optimal import bo_state_evolution
    from attnlimits.verify.slr.population_command import argmin_of
    from attnlimits.verify.slr.replica import rs_problem

    out = {}
    fp = rs_problem("softmax", "spiked", 2.0, 2, points=512, replicates=2, seed=0).fixed_point(4.0, 0.1, 0.1)
    out["rs_fixed_point softmax a=4 lam=0.1"] = _fp(fp)
    br = rs_problem("linear_uncentred", "spiked", 2.0, 2, points=512, replicates=2, seed=0).all_branches([4.0], 0.1, 0.1)
    out["rs_all_branches linear_uncentred a=4 lam=0.1"] = [
        {"origin": o, "phase": ph, **_fp(f)} for o, f, ph in br[4.0]]
    (bo,) = bo_state_evolution("spiked", 2.0, 2, [4.0], 0.1, points=2 ** 10, replicates=4, seed=0)
    out["bo_state_evolution spiked a=4"] = {"E_BO": bo.E_BO, "E_BO_se": bo.E_BO_se, "q_k": bo.q_k, "q_v": bo.q_v}
    res = discover_results()
    slr_pop = res["slr"].command("population")
    rows = list(resolve(slr_pop.run)(slr_pop.parse({"model": "spiked", "nu": 2.0, "L": [2],
                                                     "activation": ["softmax", "linear_uncentred"]}), progress=None))
    out["slr population spiked nu=2 L=2"] = [{"activation": r["activation"], "risk": r["risk"],
                                              "argmin": argmin_of(r)} for r in rows]
    rmt = res["rmt"].command("")
    rows = list(resolve(rmt.run)(rmt.parse({"activation": "tanh", "c": 0.5, "gamma": [0.1, 1.0], "snr": 1.0,
                                            "wk": [1.0], "wq": [1.0]}), progress=None))
    out["rmt tanh c=0.5 snr=1 w=1"] = [{"gamma": r["gamma"], "E_attention": r["E_attention"],
                                        "E_ridge": r["E_ridge"]} for r in rows]
    return json.loads(json.dumps(out, default=float))


if __name__ == "__main__":
    (HERE / "golden.json").write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
    print("wrote", HERE / "golden.json")
