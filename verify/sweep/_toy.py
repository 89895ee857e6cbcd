"""A cheap deterministic command for the sweep tests and benchmark (not registered by default).

``toy`` returns ``f = x*y + seed`` with ``f_error = |x|/10``; options make it slow (``sleep``),
CPU-bound (``work``), fail (``fail_above``), log each finished point to a file (``log``) or kill
its own process once (``die_at`` with the flag file ``die_flag``), which is how the fault tests
simulate a worker killed mid-sweep.  ``toy chain`` is the same function with ``expensive=("x",)``,
``toy merge`` with ``expensive=("z",)`` (a list parameter: its chains are merged into one call).

Register it in a process with :func:`register` (tests, benchmarks); workers need no
registration, since a sweep ships the :class:`attnlimits.symbolic.result.Command` itself.
"""
from __future__ import annotations

from attnlimits.symbolic.result import Command, Param, Result, register_result

__all__ = ["TOY_RESULT", "register"]

_PARAMS = (
    Param("x", "float", help="first input"),
    Param("y", "float", default=1.0, help="second input"),
    Param("seed", "int", default=0, check="nonnegative", help="added to f"),
    Param("rows", "int", default=1, check=">=1", help="rows returned per point"),
    Param("sleep", "float", default=0.0, check="nonnegative", help="seconds to sleep"),
    Param("work", "int", default=0, check="nonnegative", help="CPU work units (about 1 ms each)"),
    Param("fail_above", "float", default=float("inf"), check="inf", help="raise for x > this"),
    Param("input_error_below", "float", default=float("-inf"), check="inf", help="InputError for x < this"),
    Param("log", "str", default="", help="append one JSON line per finished point to this file", writes=True),
    Param("die_at", "float", default=float("inf"), check="inf", help="x at which the process kills itself once"),
    Param("die_flag", "str", default="", help="flag file: the kill happens only while it is absent"),
    Param("kind", "choice", default="a", choices=("a", "b"), help="a label"),
    Param("z", "floats", default=(0.0,), help="added to f; one row per value (a list parameter)"),
    Param("unnamed", "flag", default=False, help="rows omit z (they do not say which z made them)"),
)


TOY_RESULT = Result(
    name="toy",
    title="toy command for sweep tests",
    commands=(
        Command(name="", help="f = x*y + seed", run="attnlimits.verify.sweep._toyrun:toy", parameters=_PARAMS,
                table=("x", "y", "f")),
        Command(name="chain", help="f = x*y + seed, chained along x", run="attnlimits.verify.sweep._toyrun:toy",
                parameters=_PARAMS, expensive=("x",)),
        Command(name="merge", help="f = x*y + seed + z, one call along the list parameter z",
                run="attnlimits.verify.sweep._toyrun:toy", parameters=_PARAMS, expensive=("z",)),
    ),
)


def register() -> Result:
    """Register :data:`TOY_RESULT` in this process and return it."""
    return register_result(TOY_RESULT)
