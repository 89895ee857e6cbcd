"""The run options of ``explore`` checked once, for every path that takes them: the search
(``attnlimits explore``, :func:`attnlimits.verify.explore.explore`, ``al.explore``) and the one-point
evaluation (``--at``).  Each check raises :class:`~attnlimits.symbolic.result.InputError` with the
command line's one-line message before any work starts."""
from __future__ import annotations

import math

from attnlimits.symbolic.result import InputError

__all__ = ["check_level", "check_budget", "check_time", "check_seed", "check_run_options"]


def _number(name: str, value) -> float:
    if isinstance(value, bool):
        raise InputError(f"{name} must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {value!r}") from None


def check_level(level) -> float:
    """The family-wise false-alarm level: a number strictly between 0 and 1 (``nan`` and 5 refused:
    a level of 5 fails every point with p = 1, ``nan`` passes every point)."""
    x = _number("--level", level)
    if not 0 < x < 1:  # also False for nan
        raise InputError(f"--level must lie in (0, 1), got {level}")
    return x


def check_budget(budget) -> int:
    if isinstance(budget, bool):
        raise InputError(f"--budget must be an integer, got {budget!r}")
    try:
        n = int(budget)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"--budget must be an integer, got {budget!r}") from None
    if isinstance(budget, float) and n != budget:
        raise InputError(f"--budget must be an integer, got {budget!r}")
    if n < 1:
        raise InputError(f"--budget must be >= 1, got {budget!r}")
    return n


def check_time(time_limit) -> float | None:
    if time_limit is None:
        return None
    x = _number("--time", time_limit)
    if not x > 0:  # also False for nan
        raise InputError(f"--time must be > 0 seconds, got {time_limit}")
    return x


def check_seed(seed) -> int:
    if isinstance(seed, bool):
        raise InputError(f"--seed must be an integer, got {seed!r}")
    try:
        n = int(seed)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"--seed must be an integer, got {seed!r}") from None
    if (isinstance(seed, float) and n != seed) or not abs(n) < 2 ** 63:
        raise InputError(f"--seed must be an integer of at most 63 bits, got {seed!r}")
    return n


def check_run_options(*, level, budget=1, time_limit=None, seed=0) -> tuple[float, int, float | None, int]:
    """All run options at once: ``(level, budget, time_limit, seed)`` as checked numbers."""
    return check_level(level), check_budget(budget), check_time(time_limit), check_seed(seed)
