"""The declaration of the result: plain data that attnlimits reads through the ``attnlimits.results``
entry point (``pyproject.toml``); nothing here imports SymPy or the result's modules."""
from attnlimits.symbolic.properties import Property, Range
from attnlimits.symbolic.result import Command, Item, Panel, Param, Result

RIDGE = Command(
    name="", help="limiting test error of ridge regression on isotropic data for d/n -> gamma",
    run="attnlimits_ridge.commands:run",
    parameters=(Param("gamma", "floats", check="positive", help="comma-separated d/n ratios gamma > 0"),
                Param("lam", "float", default=0.1, check="positive", help="ridge penalty lambda > 0"),
                Param("r2", "float", default=1.0, check="nonnegative", help="signal power ||beta||^2"),
                Param("sigma2", "float", default=0.25, check="nonnegative", help="noise variance")),
    examples=("attnlimits ridge --gamma 0.5,1,2 --lam 0.1",), table=("gamma", "lam", "m", "test_error"),
)

RESULT = Result(
    name="ridge", title="Ridge regression on isotropic Gaussian data (d/n -> gamma): an example plug-in",
    references=("Hastie, Montanari, Rosset, Tibshirani, Surprises in high-dimensional ridgeless least squares "
                "interpolation, Ann. Statist. 50 (2022)",),
    commands=(RIDGE,), claims="attnlimits_ridge.claims", model="attnlimits_ridge.model:model",
    export="attnlimits_ridge.commands:export",
    export_parameters=(Param("backend", "choice", default="numpy", choices=("numpy", "mpmath")),),
    export_examples=("attnlimits export ridge --backend numpy -o ridge_solver.py",),
    properties=(
        Property("ridge-vs-simulation", "ridge", "the limiting ridge test error matches ridge trained on generated data",
                 {"gamma": Range(0.2, 5.0, scale="log"), "lam": Range(0.05, 5.0, scale="log")},
                 evaluate="attnlimits_ridge.properties:vs_simulation", kind="simulation",
                 quick={"d": 100, "seeds": 30}, confirm={"d": 200, "seeds": 60}, seconds=30.0),
    ),
    items=(Item("system", "system", "the Marchenko–Pastur fixed point and the test error",
                "attnlimits_ridge.show:system_formula"),),
    figures=(Panel("ridge-risk-gamma", "ridge test error vs γ = d/n: theory and simulation (λ = 0.1)",
                   "Hastie et al. (2022) Fig. 2 (isotropic case)", "attnlimits_ridge.figures:risk_vs_gamma", 0.2),),
)
