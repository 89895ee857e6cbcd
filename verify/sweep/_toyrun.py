"""The function behind the toy sweep command (:mod:`attnlimits.verify.sweep._toy`); imports nothing heavy."""
from __future__ import annotations

import json
import os
import signal
import time

__all__ = ["toy"]


def _burn(units: int) -> float:
    acc = 0.0
    for _ in range(units):
        s = 0.0
        for i in range(2000):
            s += i * 1e-9
        acc += s
    return acc


def toy(params: dict, *, progress=None) -> list[dict]:
    """Rows ``{x, y, seed, kind, row, z, f = x*y + seed + row + z, f_error = |x|/10, g = x + y}``, per z."""
    x, y, seed = params["x"], params["y"], params["seed"]
    if x < params["input_error_below"]:
        from attnlimits.symbolic.result import InputError  # only on this path: workers skip SymPy

        raise InputError(f"--x must be >= {params['input_error_below']:g}, got {x:g}")
    if x == params["die_at"] and params["die_flag"] and not os.path.exists(params["die_flag"]):
        with open(params["die_flag"], "w") as fh:
            fh.write(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    if params["sleep"]:
        time.sleep(params["sleep"])
    if params["work"]:
        _burn(params["work"])
    zs = list(params.get("z", (0.0,)))
    if x > params["fail_above"] or any(z > params["fail_above"] for z in zs):
        raise ValueError(f"toy diverges for x = {x:g} > {params['fail_above']:g}\nsecond line")
    if progress is not None:
        progress(f"toy x={x:g}")
    rows = [{"x": x, "y": y, "seed": seed, "kind": params["kind"], "row": r, "f": x * y + seed + r + z,
             "f_error": abs(x) / 10, "g": x + y, "calls_z": len(zs), **({} if params.get("unnamed") else {"z": z})}
            for z in zs for r in range(params["rows"])]
    if params["log"]:
        with open(params["log"], "a") as fh:
            fh.write(json.dumps({"x": x, "y": y, "seed": seed, "pid": os.getpid()}) + "\n")
    return rows
