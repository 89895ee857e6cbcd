"""Claims of the toy result: the generated fixed point vs plain iteration from random starts."""
import numpy as np

from attnlimits.verify.claims.base import Check, Claim, register


def _run(ctx, size):
    from toy_result import run_toy

    theory = run_toy({"a": [1.0], "b": 0.0})[0]["x"]
    rng = np.random.default_rng(ctx.seed)
    x = rng.uniform(-3, 3, size["n"])
    for _ in range(200):
        x = np.cos(x)
    se = x.std(ddof=1) / np.sqrt(len(x))
    return [Check("Dottie number", theory, float(x.mean()), se=se, tolerance=1e-9)], [], {"n": size["n"]}


if "TOY-1" not in __import__("attnlimits.verify.claims.base", fromlist=["REGISTRY"]).REGISTRY:
    register(Claim("TOY-1", "toy fixed point equals plain iteration", "x = cos x at a = 1", "tests only",
                   _run, quick={"n": 100}, full={"n": 1000}, tags=("toy",), references=("A test reference.",)))
