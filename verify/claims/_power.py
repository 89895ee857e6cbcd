"""The power each claim is held to: its minimum detectable deviation (MDD) against a target per mode.

A claim's MDD (:attr:`attnlimits.verify.claims.base.ClaimResult.mdd`) is the largest relative MDD of its
quantitative checks at the run's Holm level (:attr:`attnlimits.verify.claims.base.Check.mdd_relative`).
Its sizes are chosen so that the MDD is at most :data:`TARGET` of the mode — 5 % in ``--quick``, 1 % in
``--full``.  A claim that cannot reach the target within the run's time budget is listed in
:data:`EXCEPTIONS` with the reason; the report shows every claim's MDD and its status
(:func:`mdd_status`), so a weak claim is never hidden.
"""
from __future__ import annotations

__all__ = ["TARGET", "EXCEPTIONS", "mdd_status", "above_target"]

#: Largest relative MDD of a claim, per mode.
TARGET = {"quick": 0.05, "full": 0.01}

#: Claims whose ``--quick`` (or ``--full``) MDD stays above :data:`TARGET`, and why.  Keys: (claim, mode).
EXCEPTIONS: dict = {}


def above_target(result, mode: str | None = None) -> bool:
    """Whether ``result``'s MDD exceeds the target of ``mode`` (default: the run's mode)."""
    mode = mode or getattr(result, "mode", "") or "quick"
    m = result.mdd
    return m is not None and m > TARGET.get(mode, TARGET["quick"])


def mdd_status(result, mode: str | None = None) -> str:
    """``"ok"`` (MDD within the target or no quantitative check), ``"exception: <reason>"`` (above the
    target, listed in :data:`EXCEPTIONS`) or ``"above target"`` (above it and not explained)."""
    mode = mode or getattr(result, "mode", "") or "quick"
    if not above_target(result, mode):
        return "ok"
    why = EXCEPTIONS.get((result.claim, mode))
    return f"exception: {why}" if why else "above target"
