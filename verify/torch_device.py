"""PyTorch helpers for the Monte Carlo simulators (docs/attention_rmt.md §10).

Device resolution, per-draw seeding, the SymPy → PyTorch printer behind
:func:`attnlimits.verify.rmt.montecarlo.torch_activation`, and the memory budget that sizes draw batches.
Shared by the simulators of both results (:mod:`attnlimits.verify.rmt.montecarlo`, :mod:`attnlimits.verify.slr`), the claims
and the CLI (:func:`resolve_device` is the project's device rule, ``"auto"``).
"""
from __future__ import annotations

import math
import os
from typing import Callable

import numpy as np
import torch

from attnlimits.symbolic.result import InputError

DTYPE = torch.float64

# ---------------------------------------------------------------------------------------------
# devices and seeds
# ---------------------------------------------------------------------------------------------


class DeviceError(InputError, RuntimeError):
    """A device the machine does not have or that cannot compute: one line, exit 2 (an
    :class:`InputError`; also a ``RuntimeError`` for callers that caught that before)."""


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """Turn ``"auto"`` / ``None`` / a name / a :class:`torch.device` into a :class:`torch.device`.

    ``"auto"`` (and ``None``) means CUDA when ``torch.cuda.is_available()``, else CPU. Nothing is
    hard-coded.  The one device-resolution function of every command: anything but ``auto``, ``cpu``,
    ``cuda`` / ``cuda:N`` of an existing GPU (or ``mps`` where available) raises :class:`DeviceError`
    naming the devices this machine has — ``tpu``, ``meta``, ``CPU``, ``''``, ``cuda:99``, ``cuda``
    without a GPU.
    """
    if device is None or (isinstance(device, str) and device.strip().lower() == "auto"):
        return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    have = ["auto", "cpu"] + ([f"cuda (cuda:0..cuda:{torch.cuda.device_count() - 1})"] if torch.cuda.is_available()
                              else [])
    text = str(device)
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError, TypeError):
        raise DeviceError(f"--device {text!r} is not a device; this machine has: {', '.join(have)}") from None
    if dev.type == "cpu" and isinstance(device, str) and device != device.lower():
        raise DeviceError(f"--device {text!r}: write it in lower case ({device.lower()!r})")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError(f"--device {text!r} requested but CUDA is not available; this machine has: "
                              f"{', '.join(have)}")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise DeviceError(f"--device {text!r}: there are {torch.cuda.device_count()} GPU(s)")
    elif dev.type == "mps":
        if not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise DeviceError(f"--device {text!r} is not available; this machine has: {', '.join(have)}")
    elif dev.type != "cpu":
        raise DeviceError(f"--device {text!r} cannot run these computations; this machine has: {', '.join(have)}")
    return dev


def draw_seed(seed: int, index: int) -> int:
    """64-bit seed of draw ``index`` under master ``seed``: a hash of ``(seed, index)``.

    Uses :class:`numpy.random.SeedSequence` (entropy ``[seed, index]``), so the stream of a draw
    depends only on ``(seed, index)`` and never on how draws are batched.
    """
    if int(seed) < 0 or int(index) < 0:
        raise ValueError(f"seed and draw index must be non-negative, got {seed}, {index}")
    state = np.random.SeedSequence([int(seed), int(index)]).generate_state(1, dtype=np.uint64)
    return int(state[0])


def draw_generator(seed: int, index: int) -> torch.Generator:
    """A fresh CPU :class:`torch.Generator` seeded with :func:`draw_seed` ``(seed, index)``.

    Samples are drawn on the CPU and then moved to the compute device, so a given
    ``(seed, index)`` yields the same numbers on every device.
    """
    g = torch.Generator(device="cpu")
    g.manual_seed(draw_seed(seed, index))
    return g


def memory_budget_bytes(device: torch.device) -> int:
    """Bytes the simulators may use for one batch of draws.

    CUDA: half of the free device memory. CPU: a quarter of physical memory, capped at 4 GiB
    (or ``ATTNLIMITS_MC_MEMORY_BYTES`` when set).
    """
    env = os.environ.get("ATTNLIMITS_MC_MEMORY_BYTES")
    if env:
        return int(float(env))
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(0.5 * free)
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        phys = 8 * 2**30
    return int(min(phys // 4, 4 * 2**30))


def bytes_per_draw(n: int, p: int) -> int:
    """Rough peak float64 footprint of one draw: X, WX, Φ (p×n each), S/K, G, eigenvectors and
    LAPACK workspace (≈ 6 n×n)."""
    return 8 * (4 * p * n + 6 * n * n)


# ---------------------------------------------------------------------------------------------
# SymPy -> torch printing
# ---------------------------------------------------------------------------------------------


def _unary(torch_fn: Callable, math_fn: Callable) -> Callable:
    def fn(x):
        if isinstance(x, torch.Tensor):
            return torch_fn(x)
        return math_fn(x)

    fn.__name__ = getattr(torch_fn, "__name__", "fn")
    return fn


def _like(ref, value):
    """``value`` as a tensor with ``ref``'s dtype and device (ref: the first tensor argument)."""
    if isinstance(value, torch.Tensor):
        return value
    return torch.as_tensor(value, dtype=ref.dtype, device=ref.device)


def _first_tensor(args):
    for a in args:
        if isinstance(a, torch.Tensor):
            return a
    return None


def _reduce(torch_fn, py_fn):
    def fn(*args):
        ref = _first_tensor(args)
        if ref is None:
            return py_fn(*args)
        out = _like(ref, args[0])
        for a in args[1:]:
            out = torch_fn(out, _like(ref, a))
        return out

    return fn


def _sign(x):
    if isinstance(x, torch.Tensor):
        return torch.sign(x)
    return float(np.sign(x))


def _heaviside(x, h0=0.5):
    if isinstance(x, torch.Tensor):
        if h0 is None:  # SymPy's Heaviside(x, nan)
            h0 = math.nan
        return torch.heaviside(x, torch.full_like(x, float(h0)))
    if x > 0:
        return 1.0
    if x < 0:
        return 0.0
    return float(h0)


def _piecewise(*pairs):
    """``pairs`` = ((expr, cond), ...), first true condition wins (SymPy semantics)."""
    ref = _first_tensor([e for pair in pairs for e in pair])
    result = None
    for expr, cond in reversed(pairs):
        if ref is None:  # all scalar
            if result is None or bool(cond):
                result = expr if bool(cond) else result
            continue
        e = _like(ref, expr)
        if result is None:
            result = torch.where(_like(ref, cond).bool(), e, torch.full_like(e, math.nan))
        else:
            c = _like(ref, cond).bool()
            result = torch.where(c, e, result)
    return result


def _logic(torch_fn, py_fn):
    def fn(*args):
        ref = _first_tensor(args)
        if ref is None:
            return py_fn(*args)
        out = _like(ref, args[0]).bool()
        for a in args[1:]:
            out = torch_fn(out, _like(ref, a).bool())
        return out

    return fn


def _not(x):
    if isinstance(x, torch.Tensor):
        return torch.logical_not(x.bool())
    return not x


TORCH_NAMESPACE: dict = {
    "sin": _unary(torch.sin, math.sin),
    "cos": _unary(torch.cos, math.cos),
    "tan": _unary(torch.tan, math.tan),
    "asin": _unary(torch.asin, math.asin),
    "acos": _unary(torch.acos, math.acos),
    "atan": _unary(torch.atan, math.atan),
    "sinh": _unary(torch.sinh, math.sinh),
    "cosh": _unary(torch.cosh, math.cosh),
    "tanh": _unary(torch.tanh, math.tanh),
    "asinh": _unary(torch.asinh, math.asinh),
    "acosh": _unary(torch.acosh, math.acosh),
    "atanh": _unary(torch.atanh, math.atanh),
    "exp": _unary(torch.exp, math.exp),
    "expm1": _unary(torch.expm1, math.expm1),
    "log": _unary(torch.log, math.log),
    "log1p": _unary(torch.log1p, math.log1p),
    "sqrt": _unary(torch.sqrt, math.sqrt),
    "erf": _unary(torch.special.erf, math.erf),
    "erfc": _unary(torch.special.erfc, math.erfc),
    "floor": _unary(torch.floor, math.floor),
    "ceil": _unary(torch.ceil, math.ceil),
    "_abs": _unary(torch.abs, abs),
    "_sign": _sign,
    "_heaviside": _heaviside,
    "_max": _reduce(torch.maximum, max),
    "_min": _reduce(torch.minimum, min),
    "_piecewise": _piecewise,
    "_and": _logic(torch.logical_and, lambda *a: all(a)),
    "_or": _logic(torch.logical_or, lambda *a: any(a)),
    "_not": _not,
    "pi": math.pi,
    "e": math.e,
    "E": math.e,
    "inf": math.inf,
    "nan": math.nan,
}


def make_torch_printer():
    """A :class:`~sympy.printing.pycode.PythonCodePrinter` that prints the non-elementwise
    constructs (Max, Min, Abs, sign, Heaviside, Piecewise, And/Or/Not) as calls into
    :data:`TORCH_NAMESPACE`, and refuses functions it does not know."""
    from sympy.printing.pycode import PythonCodePrinter

    class _TorchExprPrinter(PythonCodePrinter):
        def _call(self, name, args):
            return "%s(%s)" % (name, ", ".join(self._print(a) for a in args))

        def _print_Max(self, expr):
            return self._call("_max", expr.args)

        def _print_Min(self, expr):
            return self._call("_min", expr.args)

        def _print_Abs(self, expr):
            return self._call("_abs", expr.args)

        def _print_sign(self, expr):
            return self._call("_sign", expr.args)

        def _print_Heaviside(self, expr):
            import sympy

            args = list(expr.args)
            if len(args) == 2 and args[1] is sympy.nan:
                return "_heaviside(%s, None)" % self._print(args[0])
            return self._call("_heaviside", args)

        def _print_Piecewise(self, expr):
            pairs = ", ".join(
                "(%s, %s)" % (self._print(e), self._print(c)) for e, c in expr.args
            )
            return "_piecewise(%s)" % pairs

        def _print_And(self, expr):
            return self._call("_and", expr.args)

        def _print_Or(self, expr):
            return self._call("_or", expr.args)

        def _print_Not(self, expr):
            return self._call("_not", expr.args)

        def _print_BooleanTrue(self, expr):
            return "True"

        def _print_BooleanFalse(self, expr):
            return "False"

    user_functions = {k: k for k in TORCH_NAMESPACE if not k.startswith("_")}
    return _TorchExprPrinter(
        {
            "fully_qualified_modules": False,
            "inline": True,
            "allow_unknown_functions": False,
            "user_functions": user_functions,
        }
    )
