"""The generated model: kernels from the derivation's system and the portable driver (for the
in-process solver and ``attnlimits export ridge``)."""
from __future__ import annotations

from pathlib import Path

from attnlimits.symbolic.model import GeneratedModel

from . import derivation


def _kernels():
    sysm = derivation.system()
    return sysm.kernels([derivation.gamma])


DRIVER = {
    "system": "ridge", "unknowns": ["kappa"], "parameters": ["gamma", "lamda", "r2", "sigma2"], "invariants": [],
    "observables": ["m", "test_error"], "sweep": "gamma", "order": "ascending", "jump": None,
    "record": None, "columns": ["gamma", "m", "test_error"], "error_columns": [],
    "hooks": {"run": "run_cli"},
    "cli": [{"name": "gamma", "required": True, "help": "comma-separated d/n ratios"},
            {"name": "lam", "default": "0.1", "help": "ridge penalty lambda > 0"},
            {"name": "r2", "default": "1", "help": "signal power ||beta||^2"},
            {"name": "sigma2", "default": "0.25", "help": "noise variance"},
            {"name": "json", "flag": True, "help": "JSON"}],
    "description": "ridge regression test error for d/n -> gamma ({BACKEND})", "example": "--gamma 0.5,1,2 --lam 0.1",
}

model = GeneratedModel(name="ridge", title="Test error of ridge regression on isotropic data (d/n -> gamma)",
                       description=(derivation.__doc__ or "").strip(), build_kernels=_kernels,
                       driver_path=Path(__file__).with_name("driver.py"), constants={"DRIVER": repr(DRIVER)})


def solve(gamma, lam: float, r2: float = 1.0, sigma2: float = 0.25) -> list[dict]:
    """The limiting test error along ``gamma`` (a list), by the generated NumPy solver."""
    from attnlimits.numeric import compile_model

    mod = compile_model(model, "numpy")
    recs = mod.sweep_curve({"lamda": lam, "r2": r2, "sigma2": sigma2}, [float(g) for g in gamma])
    return [{"gamma": float(r["gamma"]), "lam": lam, "r2": r2, "sigma2": sigma2, "m": float(r["m"]),
             "test_error": float(r["test_error"])} for r in recs]
