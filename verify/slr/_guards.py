"""Size guards of the SLR commands: every size-like input is checked against an estimate of the time
and memory it needs *before* any work starts, and the estimate is in the one-line refusal.

The time models are fitted on measurements on the development machine (two cores, one thread):

- RS kernels of L tokens (``slr replica``, generated once then cached): 1.8, 3.2, 8.5, 18.4, 34.6 s for
  L = 2..6, about ×2.05 per token — :func:`replica_seconds`;
- BO state evolution (``slr bayes-optimal``): 6.0, 10.0, 23.2 s for L = 4, 8, 16 at 2^13 points and one
  α — about 1.45 s per token per α per 2^13 points — :func:`bayes_optimal_seconds`;
- posterior sampling (``slr posterior``): a Gibbs sweep costs O(α D³ L) per chain; 0.08–0.25 µs per
  unit of sweeps·chains·α·D³·L measured at α = 4–64, D = 30–60, L = 2 — :func:`posterior_seconds` takes
  0.2 µs;
- memory of generated data: N·L·D float64 values (N = αD) for GAMP (twice: data and test set) and for
  posterior sampling (one copy per chain) — :func:`data_bytes`.

``ATTNLIMITS_MAX_SECONDS`` (default 3600) sets the longest estimated run that starts; the memory limit is
80 % of the memory available now.
"""
from __future__ import annotations

import math
import os

from attnlimits.symbolic.result import InputError

__all__ = ["available_bytes", "max_seconds", "replica_seconds", "bayes_optimal_seconds", "posterior_seconds",
           "data_bytes", "check_work"]


def max_seconds() -> float:
    try:
        return float(os.environ.get("ATTNLIMITS_MAX_SECONDS", 3600))
    except ValueError:
        return 3600.0


def available_bytes() -> int:
    """Memory available now (``MemAvailable`` of /proc/meminfo; 8 GiB where it cannot be read)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover - non-Linux
        pass
    return 8 * 2 ** 30  # pragma: no cover


def replica_seconds(L_max: int) -> float:
    """First-time generation of the RS kernels for lengths up to ``L_max`` (then cached)."""
    return 1.8 * 2.05 ** max(0, int(L_max) - 2)


def bayes_optimal_seconds(L_max: int, n_alpha: int, points: int) -> float:
    return 1.45 * max(int(L_max), 1) * max(int(n_alpha), 1) * max(points / 2 ** 13, 0.1) + 2.0


def posterior_seconds(alpha: float, D: int, L: float, chains: int, sweeps: int) -> float:
    """Gibbs sampling of ``chains`` chains for ``sweeps`` sweeps at N = αD (the state evolution excluded)."""
    return 2e-7 * float(sweeps) * float(chains) * float(alpha) * float(D) ** 3 * float(L)


def data_bytes(alpha: float, D: int, L: float, copies: float = 1.0) -> float:
    return float(alpha) * float(D) * float(L) * float(D) * 8.0 * copies


def _human_s(s: float) -> str:
    if not math.isfinite(s):
        return "forever"
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h" if s < 1e6 \
        else f"{s:.2g} s"


def check_work(what: str, *, seconds: float = 0.0, nbytes: float = 0.0, progress=None) -> None:
    """Refuse (:class:`InputError`, one line with the estimate) work above the limits; announce long work."""
    avail = 0.8 * available_bytes()
    if nbytes > avail:
        raise InputError(f"{what} needs about {nbytes / 2 ** 30:.3g} GiB of memory, more than the "
                         f"{avail / 2 ** 30:.3g} GiB available; reduce the size (alpha, D, L, seeds)")
    limit = max_seconds()
    if seconds > limit:
        raise InputError(f"{what} would take about {_human_s(seconds)} (estimate), more than the limit of "
                         f"{_human_s(limit)}; reduce the size, or set ATTNLIMITS_MAX_SECONDS to allow it")
    if seconds > 30 and progress is not None:
        progress(f"{what}: about {_human_s(seconds)} (estimate)")
