"""Rate claims as checks: a fitted slope with SE against the predicted rate and the nearest wrong one.

The rule is :func:`attnlimits.verify.comparison.rate_band`; this module only turns a band into
:class:`~attnlimits.verify.claims.base.Check` objects so that every rate claim reports the same way:

- ``"<label>: slope vs predicted"`` — the fitted slope ± SE (t with its degrees of freedom) against
  the predicted rate, an ordinary stochastic check, a member of the run's Holm family;
- ``"<label>: band excludes <wrong>"`` (one per wrong rate) — deterministic: the wrong rate lies
  at least ``crit`` SEs from the slope (``crit`` = the two-sided critical value at the run's
  default level, 1 %), so a fit too noisy to tell the rates apart fails.

Both checks carry the band, the predicted and the excluded rates in their note, so the report
prints both.
"""
from __future__ import annotations

from .base import Check

__all__ = ["rate_checks", "slope_stats"]


def rate_checks(label: str, slope: float, se: float, predicted: float, wrong, *, dof=None, note: str = "",
                level: float | None = None) -> list:
    """The two (or more) checks of one rate claim; see the module docstring."""
    from attnlimits.verify.comparison import LEVEL, rate_band

    b = rate_band(slope, se, predicted, wrong, dof=dof, level=LEVEL if level is None else level)
    text = b.describe() + (f"; {note}" if note else "")
    out = [Check(f"{label}: slope vs predicted {predicted:+.4g} (excluded: "
                 f"{', '.join(f'{w:+.4g}' for w in b.wrong)})", float(predicted), float(slope), se=float(se),
                 dof=dof, note=text)]
    for w, d in zip(b.wrong, b.distances):
        out.append(Check(f"{label}: band excludes rate {w:+.4g} (|slope − ({w:+.4g})|/SE ≥ t crit)", float(b.crit),
                         float(d), se=None, kind="lower",
                         note=f"slope {b.slope:+.4f} ± {b.se:.4f}, {100 * (1 - b.level):g}% band "
                              f"[{b.lo:+.4f}, {b.hi:+.4f}] vs excluded {w:+.4g}; predicted {predicted:+.4g}"))
    return out


def slope_stats(slopes) -> tuple[float, float, float | None]:
    """Mean, SE and degrees of freedom (R − 1) of per-draw slopes (points on one draw are correlated,
    so a rate measured on shared draws is fitted per draw and averaged)."""
    import math

    import numpy as np

    s = np.asarray(slopes, dtype=float)
    if s.size < 2:
        raise ValueError("need at least two draws for an SE of the slope")
    return float(s.mean()), float(s.std(ddof=1) / math.sqrt(s.size)), float(s.size - 1)
