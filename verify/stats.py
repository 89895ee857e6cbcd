r"""Monte Carlo estimates: mean and standard error over independent draws (docs/attention_rmt.md §10).

Shared by the Monte Carlo simulators of both results (:mod:`attnlimits.verify.rmt.montecarlo`,
:mod:`attnlimits.verify.slr`) and by the claims. NumPy only.

With :math:`N` draws :math:`x_1,\dots,x_N`, the estimate is :math:`\bar x` with standard error
:math:`s/\sqrt N` (:math:`s` the ``ddof=1`` standard deviation), whose degrees of freedom are
:math:`N-1` (:attr:`MCEstimate.dof`).  Verdicts follow the one comparison rule of
:mod:`attnlimits.verify.comparison` (Student t with these degrees of freedom, Holm over a run):
:meth:`MCEstimate.p_value` applies it to one estimate.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["MCEstimate", "mean_se"]


@dataclass
class MCEstimate:
    """Mean and standard error over independent draws.

    Attributes
    ----------
    mean, se : numpy.ndarray
        Sample mean and standard error :math:`s/\\sqrt{N}` (``ddof=1``) over the draw axis.
        With a single draw the SE is ``inf`` (no error estimate is available).
    samples : numpy.ndarray
        The per-draw values, draws on axis 0 (``draws × ...``).
    n_draws : int
        Number of draws :math:`N`.
    """

    mean: np.ndarray
    se: np.ndarray
    samples: np.ndarray
    n_draws: int

    @property
    def dof(self) -> int | None:
        """Degrees of freedom of the SE: ``n_draws − 1`` (``None`` with one draw)."""
        return self.n_draws - 1 if self.n_draws >= 2 else None

    def p_value(self, theory, *, tolerance: float = 0.0, allowance: float = 0.0) -> np.ndarray:
        """Two-sided p-values of ``mean`` vs ``theory`` by :func:`attnlimits.verify.comparison.p_value`
        (Student t with :attr:`dof`); NaN where there is no SE."""
        from attnlimits.verify.comparison import p_value

        m, se = np.broadcast_arrays(np.asarray(self.mean, float), np.asarray(self.se, float))
        th = np.broadcast_to(np.asarray(theory, float), m.shape)
        out = [p_value(a, b, c, self.dof, tolerance=tolerance, allowance=allowance)
               for a, b, c in zip(m.ravel(), th.ravel(), se.ravel())]
        return np.array([np.nan if x is None else x for x in out]).reshape(m.shape)

    def interval(self, k: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
        """``(mean − k·se, mean + k·se)``."""
        return self.mean - k * self.se, self.mean + k * self.se

    def zscore(self, theory) -> np.ndarray:
        """``(mean − theory)/se`` (``0`` where both the deviation and the SE vanish)."""
        dev = self.mean - np.asarray(theory, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = dev / self.se
        return np.where((dev == 0) & (self.se == 0), 0.0, z)

    def agrees(self, theory, k: float = 3.0, allowance: float = 0.0, tol: float = 0.0) -> bool:
        """A per-estimate band ``|mean − theory| ≤ max(k·se, tol) + allowance`` everywhere (normal
        quantile, no multiplicity: for tests of the simulators; claims use
        :mod:`attnlimits.verify.comparison`).

        ``tol`` is a claim's absolute tolerance (§12), ``allowance`` the documented finite-size
        allowance. Infinite SE (one draw) makes the ``k·se`` term vacuous, so pass ``tol``.
        """
        dev = np.abs(self.mean - np.asarray(theory, dtype=float))
        if self.n_draws < 2:
            bound = np.asarray(tol, dtype=float) + allowance
        else:
            bound = np.maximum(k * self.se, tol) + allowance
        return bool(np.all(dev <= bound))

    def __getitem__(self, idx) -> "MCEstimate":
        return MCEstimate(
            mean=np.asarray(self.mean[idx]),
            se=np.asarray(self.se[idx]),
            samples=self.samples[(slice(None),) + (idx if isinstance(idx, tuple) else (idx,))],
            n_draws=self.n_draws,
        )

    def to_dict(self) -> dict:
        """JSON-friendly dict (lists) of mean, se and n_draws."""
        return {
            "mean": np.asarray(self.mean).tolist(),
            "se": np.asarray(self.se).tolist(),
            "n_draws": self.n_draws,
        }

    def __str__(self) -> str:
        m = np.atleast_1d(self.mean)
        s = np.atleast_1d(self.se)
        body = ", ".join(f"{a:.4f}±{b:.4f}" for a, b in zip(m.ravel(), s.ravel()))
        return f"MCEstimate([{body}], n_draws={self.n_draws})"


def mean_se(samples, axis: int = 0) -> MCEstimate:
    """Mean and standard error of ``samples`` along ``axis`` (the draw axis).

    Parameters
    ----------
    samples : array_like
        Per-draw values.
    axis : int
        Draw axis; it is moved to axis 0 in the returned ``samples``.

    Returns
    -------
    MCEstimate
        ``mean = x̄``, ``se = s/√N`` with ``s`` the ``ddof=1`` standard deviation. For ``N = 1``
        the SE is ``inf`` (documented convention: one draw carries no error estimate).
    """
    x = np.moveaxis(np.asarray(samples, dtype=float), axis, 0)
    n = x.shape[0]
    if n == 0:
        raise ValueError("mean_se needs at least one draw")
    mean = x.mean(axis=0)
    if n == 1:
        se = np.full_like(mean, np.inf, dtype=float)
    else:
        se = x.std(axis=0, ddof=1) / math.sqrt(n)
    return MCEstimate(mean=np.asarray(mean), se=np.asarray(se), samples=x, n_draws=n)
