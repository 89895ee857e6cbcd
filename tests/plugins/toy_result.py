"""A test-only result: the whole plug-in path in one small file.

Equation (written once, in SymPy): the fixed point ``x = a·cos(x) + b`` (Dottie's number at
``a = 1, b = 0``), swept over ``a`` with exact continuation slopes.  Registered from the test
suite with :func:`attnlimits.symbolic.result.register_result`; its claims live in ``toy_claims``.
"""
from __future__ import annotations

from pathlib import Path

from attnlimits.symbolic.result import Command, Param, Result

x_name, a_name, b_name = "x", "a", "b"


def _system():
    import sympy as sp

    from attnlimits.symbolic.system import EquationSystem

    x, a, b = sp.symbols("x a b", real=True)
    return EquationSystem("toy", [x], [a, b], [a * sp.cos(x) + b], {"x": x, "cos_x": sp.cos(x)},
                          initial_guess=[sp.S.Zero], source="test-only toy result")


def _kernels():
    return _system().kernels([_system().parameters[0]])


def _make_model():
    from attnlimits.symbolic.model import GeneratedModel

    sysm = _system()
    driver = {
        "system": "toy", "unknowns": ["x"], "parameters": ["a", "b"], "invariants": [],
        "observables": list(sysm.observables), "sweep": "a", "order": "ascending", "jump": None,
        "record": None, "columns": ["a", "x", "dx_da"], "error_columns": [],
        "hooks": {"run": "run_cli"},
        "cli": [{"name": "a", "required": True, "help": "comma-separated a"},
                {"name": "b", "default": "0", "help": "offset b"},
                {"name": "json", "flag": True, "help": "JSON"}],
        "description": "toy solver ({BACKEND})", "example": "--a 0.5,1",
    }
    return GeneratedModel(name="toy", title="Toy fixed point x = a cos x + b", description="test-only",
                          build_kernels=_kernels, driver_path=Path(__file__).with_name("toy_driver.py"),
                          constants={"DRIVER": repr(driver)})


model = _make_model()


def run_toy(params, *, progress=None):
    from attnlimits.numeric import compile_model

    mod = compile_model(model, "numpy")
    recs = mod.sweep_curve({"b": params["b"]}, params["a"])
    return [{"a": r["a"], "b": params["b"], "x": r["x"], "dx_da": r["dx_da"], "method": r["method"]} for r in recs]


def export_toy(params, path):
    from attnlimits.numeric import export_model

    return f"wrote {export_model(model, path, params['backend'])}"


TOY_COMMAND = Command(
    name="", help="toy fixed point x = a cos x + b", run="toy_result:run_toy",
    parameters=(Param("a", "floats", check="positive", help="comma-separated a > 0"),
                Param("b", "float", default=0.0, help="offset")),
    examples=("attnlimits toy --a 0.5,1",), table=("a", "x", "dx_da"), expensive=("a",),
)

RESULT = Result(name="toy", title="Toy result (tests only)", references=("A test reference.",),
                commands=(TOY_COMMAND,), claims="toy_claims", model="toy_result:model",
                export="toy_result:export_toy",
                export_parameters=(Param("backend", "choice", default="numpy", choices=("numpy", "mpmath")),))
