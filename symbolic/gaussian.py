r"""Expectations over low-dimensional Gaussians: exact (Wick/Isserlis), quadrature and QMC.

For :math:`x\sim\mathcal N(\mu,\Sigma)` in :math:`d` dimensions this module computes
:math:`\mathbb E[f(x)]` by the cheapest method that is exact or carries an honest error
estimate (GUIDE §2, docs/slr.md §6–§8).

Public API
----------
Exact, symbolic
    :func:`wick_expectation` (in :mod:`attnlimits.symbolic.wick`, re-exported here; polynomial integrands, exact rational arithmetic; raises
    :class:`NotPolynomialError` otherwise) and the unevaluated node :class:`GaussianExpectation`
    (a SymPy expression: ``.doit()`` gives the closed form when there is one, ``.numeric()`` a
    :class:`GaussianIntegral`).
Numeric, float64
    :func:`gaussian_expectation` (Gauss–Hermite with a convergence check for ``dim <= 3``,
    scrambled Sobol QMC with a replicate standard error above), :func:`expectation_1d`
    (adaptive ``scipy.integrate.quad`` split at kinks), the rules :func:`gauss_hermite_rule` and
    :func:`sobol_normal`, the result type :class:`GaussianIntegral` and
    :class:`IntegrationError`.
Numeric, arbitrary precision
    :func:`expectation_1d_mp` (``mpmath.quad`` split at kinks, at a chosen ``dps``).

Which method to use
-------------------
============================  ==========================================================
integrand                     method
============================  ==========================================================
polynomial (any dim)          :func:`wick_expectation` — exact
smooth, dim 1–3               Gauss–Hermite, n = 8, 12, 16, … until two rules agree to tol
kinked (Abs, Max, ReLU), 1-D  :func:`expectation_1d` / :func:`expectation_1d_mp` with splits
kinked 2–3-D, or dim > 3      QMC, error = standard error over scrambled replicates
============================  ==========================================================

Gauss–Hermite converges badly on kinked integrands (GUIDE §5): it is never used for them by
``GaussianExpectation.numeric(method="auto")``.

References
----------
.. [1] L. Isserlis, "On a formula for the product-moment coefficient of any order of a normal
   frequency distribution in any number of variables", Biometrika 12 (1918) 134–139.
.. [2] A. B. Owen, "Scrambling Sobol' and Niederreiter–Xing points", J. Complexity 14 (1998)
   466–489 (the scrambling used by ``scipy.stats.qmc.Sobol``).
.. [3] G. H. Golub and J. H. Welsch, "Calculation of Gauss quadrature rules", Math. Comp. 23
   (1969) 221–230 (``numpy.polynomial.hermite_e.hermegauss``).
"""
from __future__ import annotations

import functools
import inspect
import math
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import mpmath
import numpy as np
import scipy.integrate
import scipy.special
import sympy
from scipy.stats import qmc
from sympy import Rational, S

from attnlimits.symbolic.wick import (NotPolynomialError, normalise_gaussian, short_text, sympify_exact,
                                      wick_expectation)

__all__ = [
    "NotPolynomialError",
    "IntegrationError",
    "GaussianIntegral",
    "GaussianExpectation",
    "wick_expectation",
    "gauss_hermite_rule",
    "sobol_normal",
    "gaussian_expectation",
    "expectation_1d",
    "expectation_1d_mp",
]


# --------------------------------------------------------------------------------------------
# errors and the result type
# --------------------------------------------------------------------------------------------


class IntegrationError(ArithmeticError):
    """A numeric expectation failed; the message says what failed and what to try."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


@dataclass
class GaussianIntegral:
    """A numeric Gaussian expectation with its error estimate.

    Attributes
    ----------
    value : float or numpy.ndarray
        The estimate; an array (shape ``(k,)`` or the integrand's trailing shape) when the
        integrand returns several outputs.
    error : float or numpy.ndarray
        Estimated absolute error, same shape as ``value`` (Gauss–Hermite: difference between the
        last two rules, floored at the rounding level; QMC: standard error across scrambled
        replicates; quadrature: the quadrature's own estimate).
    method : str
        ``"wick"``, ``"gauss-hermite"``, ``"qmc"`` or ``"scipy-quad"``.
    n_evals : int
        Number of integrand evaluations (points), all rules tried included.
    """

    value: float | np.ndarray
    error: float | np.ndarray
    method: str
    n_evals: int

    def __float__(self) -> float:
        if np.ndim(self.value) != 0:
            raise TypeError(
                f"vector-valued GaussianIntegral (shape {np.shape(self.value)}) has no float value; "
                "use .value"
            )
        return float(self.value)


# --------------------------------------------------------------------------------------------
# numeric rules
# --------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def gauss_hermite_rule(dim: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Tensor-product Gauss–Hermite rule for :math:`\mathbb E` over :math:`\mathcal N(0,I_{dim})`.

    .. math::

        \mathbb E[f(g)]\approx\sum_{k}w_k f(x_k),\qquad x_k\in\{t_1..t_n\}^{dim},\quad
        w_k=\prod_{a}\frac{\omega_{k_a}}{\sqrt{2\pi}},

    with :math:`(t_i,\omega_i)` the probabilists' Gauss–Hermite rule
    (``numpy.polynomial.hermite_e.hermegauss``, [3]_). Exact for polynomials of degree
    :math:`\le 2n-1` in each variable.

    Parameters
    ----------
    dim : int
        Dimension, >= 1.
    n : int
        Nodes per dimension, >= 1.

    Returns
    -------
    nodes : numpy.ndarray, shape (n**dim, dim), read-only
    weights : numpy.ndarray, shape (n**dim,), read-only, summing to 1

    Notes
    -----
    Cached (``functools.lru_cache``): repeated calls return the same read-only arrays.
    Memory and cost :math:`O(n^{dim}\,dim)`.
    """
    dim, n = int(dim), int(n)
    if dim < 1 or n < 1:
        raise ValueError(f"gauss_hermite_rule needs dim >= 1 and n >= 1; got dim={dim}, n={n}")
    t, w = np.polynomial.hermite_e.hermegauss(n)
    w = w / math.sqrt(2.0 * math.pi)
    w = w / w.sum()  # remove the O(eps) drift so that E[1] = 1 to rounding
    grids = np.meshgrid(*([t] * dim), indexing="ij")
    nodes = np.stack([g.ravel() for g in grids], axis=1)
    weights = functools.reduce(np.multiply.outer, [w] * dim).ravel() if dim > 1 else w.copy()
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return nodes, weights


_SOBOL_RNG_KEYWORD = "rng" if "rng" in inspect.signature(qmc.Sobol).parameters else "seed"


def sobol_normal(n: int, dim: int, *, seed: int, replicates: int = 1) -> np.ndarray:
    r"""Scrambled Sobol points mapped to :math:`\mathcal N(0, I_{dim})`.

    Replicate :math:`r` is ``scipy.stats.qmc.Sobol(d=dim, scramble=True)`` (Owen scrambling
    with a random digital shift, [2]_) seeded by the :math:`r`-th child of
    ``numpy.random.SeedSequence(seed)``, so replicates are independent randomisations and the
    whole array is a deterministic function of ``seed``. Uniforms are clipped to
    :math:`(\epsilon, 1-\epsilon)`, :math:`\epsilon=2^{-53}`, and mapped by the inverse normal
    CDF (``scipy.special.ndtri``), so every point is finite (:math:`|x|\le 8.3`).

    Parameters
    ----------
    n : int
        Points per replicate; a power of 2 (the balance properties of Sobol need it).
    dim : int
        Dimension, >= 1.
    seed : int
        Seed of the scramblings (keyword only: results must be reproducible).
    replicates : int, optional
        Number of independent scramblings (default 1).

    Returns
    -------
    numpy.ndarray, shape (replicates, n, dim)

    Notes
    -----
    Cost :math:`O(\text{replicates}\cdot n\cdot dim)`.
    """
    n, dim, replicates = int(n), int(dim), int(replicates)
    if n < 1 or n & (n - 1):
        raise ValueError(f"sobol_normal needs n to be a power of 2 (Sobol balance); got n={n}")
    if dim < 1 or replicates < 1:
        raise ValueError(f"sobol_normal needs dim >= 1 and replicates >= 1; got dim={dim}, "
                         f"replicates={replicates}")
    m = n.bit_length() - 1
    eps = 2.0 ** -53
    out = np.empty((replicates, n, dim))
    for r, child in enumerate(np.random.SeedSequence(int(seed)).spawn(replicates)):
        engine = qmc.Sobol(d=dim, scramble=True, **{_SOBOL_RNG_KEYWORD: np.random.default_rng(child)})
        u = engine.random_base2(m)
        out[r] = scipy.special.ndtri(np.clip(u, eps, 1.0 - eps))
    return out


# --------------------------------------------------------------------------------------------
# float64 expectations
# --------------------------------------------------------------------------------------------

_GH_SEQUENCE = (8, 12, 16, 24, 32, 48, 64, 96, 128)
_GH_DEFAULT_MAX = {1: 128, 2: 96, 3: 48}
_GH_MAX_POINTS = 2 ** 20


def _default_n_max(dim: int) -> int:
    if dim in _GH_DEFAULT_MAX:
        return _GH_DEFAULT_MAX[dim]
    fitting = [n for n in _GH_SEQUENCE if n ** dim <= _GH_MAX_POINTS]
    return fitting[-1] if fitting else _GH_SEQUENCE[0]


def _affine_map(dim: int, mean, cov) -> tuple[np.ndarray, np.ndarray]:
    """(mu, A) with x = mu + g @ A.T ~ N(mean, cov) for g ~ N(0, I)."""
    mu = np.zeros(dim) if mean is None else np.asarray(mean, dtype=float).reshape(-1)
    if mu.shape != (dim,):
        raise ValueError(f"mean has shape {mu.shape}; expected ({dim},)")
    if cov is None:
        return mu, np.eye(dim)
    c = np.atleast_2d(np.asarray(cov, dtype=float))
    if c.shape != (dim, dim):
        raise ValueError(f"cov has shape {c.shape}; expected ({dim}, {dim})")
    if not np.all(np.isfinite(c)):
        raise ValueError("cov has non-finite entries")
    scale = max(1.0, float(np.max(np.abs(c))))
    if np.max(np.abs(c - c.T)) > 1e-12 * scale:
        raise ValueError("cov is not symmetric")
    c = 0.5 * (c + c.T)
    try:
        return mu, np.linalg.cholesky(c)
    except np.linalg.LinAlgError:
        lam, vec = np.linalg.eigh(c)
        if lam[0] < -1e-10 * max(scale, float(np.max(np.abs(lam)))):
            raise ValueError(f"cov is not positive semi-definite (smallest eigenvalue {lam[0]:.3g})") from None
        return mu, vec * np.sqrt(np.clip(lam, 0.0, None))


def _evaluate(f: Callable, x: np.ndarray) -> np.ndarray:
    """One vectorised call f(x), x of shape (N, dim); returns a float array of shape (N, ...)."""
    y = np.asarray(f(x))
    if np.iscomplexobj(y):
        raise ValueError("the integrand returned complex values; Gaussian expectations here are real")
    y = y.astype(float, copy=False)
    n = x.shape[0]
    if y.ndim == 0:
        y = np.broadcast_to(y, (n,))
    if y.shape[0] != n:
        raise ValueError(
            f"the integrand must be vectorised: f(x) with x of shape {x.shape} must return shape "
            f"({n},) or ({n}, k); got {y.shape}"
        )
    if not np.all(np.isfinite(y)):
        raise IntegrationError(
            "the integrand returned non-finite values (overflow or a singularity at a quadrature "
            "node); rescale it, check that its Gaussian expectation exists, or use expectation_1d "
            "with splits at the singular points"
        )
    return y


def _rounding_floor(weights: np.ndarray, y: np.ndarray) -> np.ndarray | float:
    """Rounding level of a weighted sum: 8 eps sum_k w_k |y_k|."""
    return 8.0 * np.finfo(float).eps * np.dot(weights, np.abs(y))


def _as_result(x: np.ndarray) -> float | np.ndarray:
    return float(x) if np.ndim(x) == 0 else np.asarray(x, dtype=float)


def gaussian_expectation(f, dim: int, *, mean=None, cov=None, tol: float = 1e-10,
                         method: str = "auto", n_start: int = 8, n_max: int | None = None,
                         qmc_points: int = 2 ** 14, replicates: int = 16,
                         seed: int = 0) -> GaussianIntegral:
    r"""Numeric :math:`\mathbb E[f(x)]`, :math:`x\sim\mathcal N(\mu,\Sigma)` in ``dim`` dimensions.

    With :math:`x=\mu+Ag`, :math:`AA^\top=\Sigma` (Cholesky; eigen-decomposition for a singular
    positive semi-definite :math:`\Sigma`) and :math:`g\sim\mathcal N(0,I)`:

    - **Gauss–Hermite** (``dim <= 3`` under ``"auto"``): tensor rules with
      :math:`n = 8, 12, 16, 24, 32, 48, 64, 96, 128` nodes per dimension (from ``n_start``) until
      :math:`\max|Q_n-Q_{prev}|\le` ``tol``; the error estimate is :math:`|Q_n-Q_{prev}|`
      (floored at the rounding level :math:`8\epsilon\sum_k w_k|f(x_k)|`), which for smooth
      integrands overestimates the true error of :math:`Q_n`. Exact for polynomials of degree
      :math:`<2n`.
    - **QMC** (``dim > 3`` under ``"auto"``): ``replicates`` independent Owen-scrambled Sobol
      sets of ``qmc_points`` points (:func:`sobol_normal`); value = mean of the replicate means,
      error = their standard error. ``tol`` is not enforced (the estimate is returned with its
      error); increase ``qmc_points`` for accuracy (error :math:`\approx O(n^{-1})` for smooth
      integrands, :math:`O(n^{-1/2})` at worst).

    Parameters
    ----------
    f : callable
        Vectorised integrand: ``f(x)`` with ``x`` of shape ``(N, dim)`` returns shape ``(N,)``
        or ``(N, k)`` (several outputs integrated at once). Called once per rule.
    dim : int
        Dimension.
    mean, cov : array_like, optional
        Mean (default 0) and covariance (default identity; symmetric positive semi-definite).
    tol : float, optional
        Absolute tolerance of the Gauss–Hermite convergence check.
    method : {"auto", "gauss-hermite", "qmc"}
        ``"auto"`` picks as above; the others force a rule.
    n_start, n_max : int, optional
        First and largest Gauss–Hermite order per dimension; ``n_max`` defaults to 128 (dim 1),
        96 (dim 2), 48 (dim 3), and otherwise the largest order with :math:`n^{dim}\le2^{20}`.
    qmc_points : int, optional
        Points per QMC replicate, a power of 2.
    replicates : int, optional
        Number of QMC replicates (>= 2: the error is their standard error).
    seed : int, optional
        Seed of the Sobol scramblings.

    Returns
    -------
    GaussianIntegral

    Raises
    ------
    IntegrationError
        Gauss–Hermite did not converge by ``n_max`` (message gives dim, tol and the reached
        difference), or the integrand returned non-finite values.

    Notes
    -----
    Cost: Gauss–Hermite :math:`\sum n^{dim}` evaluations over the rules tried (at most about
    :math:`3\cdot 10^5` with the defaults); QMC ``replicates * qmc_points`` evaluations in one
    call.

    Examples
    --------
    >>> r = gaussian_expectation(lambda x: np.exp(x[:, 0]), 1)
    >>> bool(abs(r.value - np.exp(0.5)) < 1e-10)
    True
    """
    dim = int(dim)
    if dim < 1:
        raise ValueError(f"dim must be >= 1; got {dim}")
    if not tol > 0:
        raise ValueError(f"tol must be positive; got {tol}")
    if method not in ("auto", "gauss-hermite", "qmc"):
        raise ValueError(f"method must be 'auto', 'gauss-hermite' or 'qmc'; got {method!r}")
    mu, amap = _affine_map(dim, mean, cov)
    if method == "qmc" or (method == "auto" and dim > 3):
        if int(replicates) < 2:
            raise ValueError("QMC needs replicates >= 2 for its standard error")
        g = sobol_normal(qmc_points, dim, seed=seed, replicates=replicates)
        r, n = g.shape[0], g.shape[1]
        y = _evaluate(f, mu + g.reshape(r * n, dim) @ amap.T)
        means = y.reshape((r, n) + y.shape[1:]).mean(axis=1)
        value = means.mean(axis=0)
        error = means.std(axis=0, ddof=1) / math.sqrt(r)
        return GaussianIntegral(_as_result(value), _as_result(error), "qmc", r * n)

    n_max = _default_n_max(dim) if n_max is None else int(n_max)
    orders = [int(n_start)] + [n for n in _GH_SEQUENCE if n > int(n_start)]
    orders = [n for n in orders if n <= n_max]
    if len(orders) < 2:
        raise ValueError(
            f"Gauss–Hermite needs two orders to check convergence; n_start={n_start}, n_max={n_max} "
            f"leave {orders}. Raise n_max or use method='qmc'"
        )
    previous, n_evals, diff = None, 0, None
    for n in orders:
        nodes, weights = gauss_hermite_rule(dim, n)
        y = _evaluate(f, mu + nodes @ amap.T)
        n_evals += nodes.shape[0]
        q = np.dot(weights, y)  # np.dot: matmul/tensordot were 1000x slower here (threaded BLAS)
        if previous is not None:
            diff = np.abs(q - previous)
            if np.max(diff) <= tol:
                error = np.maximum(diff, _rounding_floor(weights, y))
                return GaussianIntegral(_as_result(q), _as_result(error), "gauss-hermite", n_evals)
        previous = q
    raise IntegrationError(
        f"Gauss–Hermite did not converge in dim={dim}: |Q_{orders[-1]} - Q_{orders[-2]}| = "
        f"{float(np.max(diff)):.3g} > tol={tol:.3g} at n_max={orders[-1]} nodes per dimension. "
        "The integrand is probably not smooth (a kink or step) or grows fast. Try method='qmc', a "
        "smoother integrand, a looser tol, or in one dimension expectation_1d(..., splits=kinks)"
    )


def expectation_1d(f, *, mean=0.0, sd=1.0, splits=(), epsabs: float = 1e-13,
                   epsrel: float = 1e-12) -> GaussianIntegral:
    r"""Float64 :math:`\mathbb E[f(x)]`, :math:`x\sim\mathcal N(\text{mean},\text{sd}^2)`, by adaptive quadrature.

    .. math::

        \mathbb E[f(x)]=\sum_{\text{pieces}}\int_{a}^{b}f(\text{mean}+\text{sd}\,u)\,
        \frac{e^{-u^2/2}}{\sqrt{2\pi}}\,du

    with ``scipy.integrate.quad`` (QUADPACK QAGS on finite pieces, QAGI on the two infinite end
    pieces) on :math:`(-\infty, s_1, \dots, s_k, \infty)`, :math:`s` the standardised
    ``splits`` together with the mean.

    Parameters
    ----------
    f : callable
        Scalar function of one float (vectorised functions work too); must return a real scalar.
    mean, sd : float, optional
        Mean and standard deviation (``sd = 0`` returns ``f(mean)``).
    splits : sequence of float, optional
        Points (in ``x``) where ``f`` has a kink or a step; splitting there restores the
        quadrature's accuracy.
    epsabs, epsrel : float, optional
        Tolerances passed to every ``quad`` call.

    Returns
    -------
    GaussianIntegral
        ``method="scipy-quad"``; ``error`` is the sum of ``quad``'s error estimates, ``n_evals``
        the total number of evaluations.

    Raises
    ------
    IntegrationError
        ``quad`` reported a problem (the case of an ``IntegrationWarning``: roundoff, subdivision
        limit, divergence) or the integrand times the density is not finite somewhere.

    Notes
    -----
    Accuracy about ``max(epsabs, epsrel * |E|)`` per piece; cost typically a few hundred
    evaluations per piece.
    """
    mean, sd = float(mean), float(sd)
    if not (math.isfinite(mean) and math.isfinite(sd)) or sd < 0:
        raise ValueError(f"expectation_1d needs a finite mean and sd >= 0; got mean={mean}, sd={sd}")
    if sd == 0:
        return GaussianIntegral(float(np.asarray(f(mean), dtype=float)), 0.0, "scipy-quad", 1)
    norm = 1.0 / math.sqrt(2.0 * math.pi)

    def integrand(u: float) -> float:
        y = np.asarray(f(mean + sd * u), dtype=float)
        if y.size != 1:
            raise ValueError(f"expectation_1d needs a scalar-valued f; got shape {y.shape}")
        value = float(y.reshape(())) * math.exp(-0.5 * u * u) * norm
        if not math.isfinite(value):
            raise IntegrationError(
                f"expectation_1d: the integrand is not finite at x = {mean + sd * u:.6g} (overflow, "
                "a singularity, or an expectation that does not exist); check that E[f] exists, "
                "split at singular points, or use expectation_1d_mp"
            )
        return value

    cuts = sorted({0.0} | {(float(s) - mean) / sd for s in splits})
    edges = [-math.inf] + cuts + [math.inf]
    value, error, n_evals = 0.0, 0.0, 0
    for a, b in zip(edges[:-1], edges[1:]):
        if a == b:
            continue
        out = scipy.integrate.quad(integrand, a, b, epsabs=epsabs, epsrel=epsrel, limit=200,
                                   full_output=1)
        if len(out) > 3:
            raise IntegrationError(
                f"scipy quad failed on the piece ({mean + sd * a:.6g}, {mean + sd * b:.6g}): "
                f"{' '.join(str(out[3]).split())[:300]} -- add splits at kinks or steps of f, "
                "loosen epsabs/epsrel, or use expectation_1d_mp"
            )
        value += out[0]
        error += out[1]
        n_evals += int(out[2]["neval"])
    if not (math.isfinite(value) and math.isfinite(error)):
        raise IntegrationError("expectation_1d: the integral is not finite; check that E[f] exists")
    return GaussianIntegral(value, error, "scipy-quad", n_evals)


# --------------------------------------------------------------------------------------------
# arbitrary precision
# --------------------------------------------------------------------------------------------

def _to_mpf(value: Any, dps: int) -> mpmath.mpf:
    """Convert a number, string, mpf or SymPy expression to mpf at the current precision."""
    if isinstance(value, sympy.Basic):
        return mpmath.mpf(sympy.N(value, dps + 10))
    return mpmath.mpf(value)


def expectation_1d_mp(f, *, dps: int = 30, mean=0, sd=1, splits=(),
                      error: bool = True) -> tuple[mpmath.mpf, mpmath.mpf]:
    r"""Arbitrary-precision :math:`\mathbb E[f(x)]`, :math:`x\sim\mathcal N(\text{mean},\text{sd}^2)`.

    .. math::

        \mathbb E[f(x)]=\int_{-\infty}^{\infty}f(\text{mean}+\text{sd}\,u)\,
        \frac{e^{-u^2/2}}{\sqrt{2\pi}}\,du

    by ``mpmath.quad`` (tanh–sinh) over :math:`(-\infty, s_1,\dots,s_k,\infty)`, :math:`s` the
    standardised ``splits`` together with the mean, all under ``mpmath.workdps(dps)`` (the
    global precision is never changed). Use it for the spec's one-dimensional representations,
    e.g. the spiked :math:`L=2` Bayes error
    :math:`E_B=\mathbb E_n[\mathrm{sigmoid}(-\nu-\sqrt{2\nu}\,n)]` (docs/slr.md §7).

    Parameters
    ----------
    f : callable
        Takes an mpf, returns an mpf (use ``mpmath`` functions inside).
    dps : int, optional
        Working decimal digits.
    mean, sd : number, str, mpf or SymPy expression
        Converted at ``dps`` digits (pass strings or SymPy numbers for exact decimals).
    splits : sequence, optional
        Points (in ``x``) where ``f`` has a kink or a sharp step.
    error : bool, optional
        If False the error estimate is skipped and ``nan`` is returned in its place.

    Returns
    -------
    (value, error) : tuple of mpmath.mpf
        ``error`` is mpmath's own estimate; for analytic ``f`` it is about :math:`10^{-dps}`.

    Notes
    -----
    Cost: a few hundred evaluations of ``f`` per piece at 30 digits, growing roughly linearly
    with ``dps``.
    """
    dps = int(dps)
    if dps < 5:
        raise ValueError(f"dps must be >= 5; got {dps}")
    with mpmath.workdps(dps):
        mu, s = _to_mpf(mean, dps), _to_mpf(sd, dps)
        if s < 0:
            raise ValueError(f"sd must be >= 0; got {s}")
        if s == 0:
            return mpmath.mpf(f(mu)), mpmath.mpf(0)
        norm = 1 / mpmath.sqrt(2 * mpmath.pi)

        def integrand(u):
            return f(mu + s * u) * mpmath.exp(-u * u / 2) * norm

        cuts = sorted({mpmath.mpf(0)} | {(_to_mpf(p, dps) - mu) / s for p in splits})
        points = [mpmath.ninf] + cuts + [mpmath.inf]
        if error:
            value, err = mpmath.quad(integrand, points, error=True)
            return value, err
        return mpmath.quad(integrand, points), mpmath.mpf("nan")


# --------------------------------------------------------------------------------------------
# the expression node
# --------------------------------------------------------------------------------------------

class _Timeout(BaseException):
    """Internal: a guarded SymPy call ran past its budget (BaseException: SymPy must not swallow it)."""


def _within(fn: Callable[[], Any], seconds: float) -> tuple[bool, Any]:
    """Run ``fn()`` under a SIGALRM limit; ``(False, None)`` on timeout or when no alarm can be set.

    Only the main thread can receive signals; elsewhere, or when an outer alarm is pending, the
    call is skipped (it is a best-effort closed form, never required).
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return False, None
    if signal.getitimer(signal.ITIMER_REAL)[0]:
        return False, None

    def _handler(signum, frame):  # pragma: no cover - only runs on timeout
        raise _Timeout()

    old = signal.signal(signal.SIGALRM, _handler)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            return True, fn()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Timeout:
        return False, None
    finally:
        signal.signal(signal.SIGALRM, old)


_NON_SMOOTH = (sympy.Abs, sympy.Max, sympy.Min, sympy.Heaviside, sympy.sign, sympy.Piecewise,
               sympy.floor, sympy.ceiling, sympy.DiracDelta)


class GaussianExpectation(sympy.Expr):
    r"""Unevaluated :math:`\mathbb E_{x\sim\mathcal N(\mu,\Sigma)}[f(x)]` as a SymPy expression.

    ``GaussianExpectation(expr, variables, mean=None, cov=None)``; the variables are bound
    (they are not free symbols of the node), the coefficients, mean and covariance entries are
    free. It combines with other SymPy expressions, substitutes parameters (``subs``), and
    differentiates with respect to parameters by Price's theorem:

    .. math::

        \partial_a\mathbb E[f]=\mathbb E\Big[\partial_a f+\sum_i\partial_a\mu_i\,\partial_i f+
        \tfrac12\sum_{ij}\partial_a\Sigma_{ij}\,\partial_i\partial_j f\Big]

    (valid for smooth :math:`f`; for kinked ones the derivative holds in the distributional
    sense and contains ``DiracDelta``).

    Methods
    -------
    doit()
        Exact: :func:`wick_expectation` for polynomials; in one dimension ``sympy.integrate``
        (under a time limit, hint ``time_limit`` in seconds, default 5) when it returns a closed
        form without an unevaluated ``Integral``; otherwise the node itself.
    numeric(params, tol, method, seed)
        A :class:`GaussianIntegral` (value and error).

    Examples
    --------
    >>> x, a = sympy.symbols("x a")
    >>> GaussianExpectation((a + x)**2, [x]).doit()
    a**2 + 1
    """

    is_commutative = True

    def __new__(cls, expr, variables, mean=None, cov=None, **options):
        # ``options`` (e.g. ``evaluate``, passed by some SymPy rebuilds) are accepted and ignored:
        # the node is never evaluated on construction.
        variables, mu, rows = normalise_gaussian(variables, mean, cov)
        expr = sympify_exact(expr)
        if not isinstance(expr, sympy.Expr) or isinstance(expr, sympy.MatrixBase):
            raise ValueError(f"GaussianExpectation needs a scalar expression; got {short_text(expr)}")
        return sympy.Expr.__new__(cls, expr, sympy.Tuple(*variables), sympy.Tuple(*mu),
                                  sympy.ImmutableMatrix(rows))

    # -- structure -----------------------------------------------------------------------
    @property
    def expr(self) -> sympy.Expr:
        """The integrand."""
        return self.args[0]

    @property
    def variables(self) -> tuple:
        """The Gaussian (bound) variables."""
        return tuple(self.args[1])

    @property
    def mean(self) -> tuple:
        """The mean vector."""
        return tuple(self.args[2])

    @property
    def cov(self) -> sympy.ImmutableMatrix:
        """The covariance matrix."""
        return self.args[3]

    @property
    def dim(self) -> int:
        """Number of Gaussian variables."""
        return len(self.args[1])

    @property
    def free_symbols(self) -> set:
        return ((self.expr.free_symbols - set(self.variables)) | self.args[2].free_symbols
                | self.args[3].free_symbols)

    def _sympystr(self, printer) -> str:
        d = self.dim
        mean = "0" if all(m == 0 for m in self.mean) else printer.doprint(self.args[2])
        cov = "I" if self.cov == sympy.eye(d) else printer.doprint(self.cov.tolist())
        names = ", ".join(printer.doprint(v) for v in self.variables)
        return f"E[{printer.doprint(self.expr)}; ({names}) ~ N({mean}, {cov})]"

    def _latex(self, printer) -> str:
        names = ", ".join(printer.doprint(v) for v in self.variables)
        return rf"\mathbb{{E}}_{{{names}}}\left[{printer.doprint(self.expr)}\right]"

    # -- calculus ------------------------------------------------------------------------
    def _eval_subs(self, old, new):
        if old.free_symbols & set(self.variables):
            return self  # bound variables are not substituted
        return None

    def _eval_derivative(self, s):
        f = self.expr
        vs = self.variables
        g = sympy.diff(f, s)
        for i, v in enumerate(vs):
            dm = sympy.diff(self.mean[i], s)
            if dm != 0:
                g += dm * sympy.diff(f, v)
        dcov = self.cov.diff(s)
        for i, vi in enumerate(vs):
            for j, vj in enumerate(vs):
                if dcov[i, j] != 0:
                    g += Rational(1, 2) * dcov[i, j] * sympy.diff(f, vi, vj)
        if g == 0:
            return S.Zero
        return GaussianExpectation(g, vs, self.mean, self.cov)

    # -- exact evaluation ----------------------------------------------------------------
    def doit(self, **hints):
        deep = hints.get("deep", True)
        node = self
        if deep:
            node = GaussianExpectation(self.expr.doit(**hints), self.variables,
                                       [m.doit(**hints) for m in self.mean], self.cov.doit(**hints))
        try:
            return wick_expectation(node.expr, node.variables, node.mean, node.cov)
        except NotPolynomialError:
            pass
        if node.dim == 1:
            closed = node._integrate_1d(float(hints.get("time_limit", 5.0)))
            if closed is not None:
                return closed
        return node

    def _integrate_1d(self, seconds: float):
        """Closed form by sympy.integrate in the standardised variable, or None."""
        (x,), mu, var = self.variables, self.mean[0], self.cov[0, 0]
        u = sympy.Dummy("u", real=True)
        integrand = (self.expr.xreplace({x: mu + sympy.sqrt(var) * u})
                     * sympy.exp(-u ** 2 / 2) / sympy.sqrt(2 * sympy.pi))
        start = time.monotonic()
        ok, result = _within(lambda: sympy.integrate(integrand, (u, -sympy.oo, sympy.oo),
                                                     conds="none"), seconds)
        if not ok or result is None or result.has(sympy.Integral) or result.has(
                sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
            return None
        left = max(seconds - (time.monotonic() - start), 0.5)
        ok, simple = _within(lambda: sympy.simplify(result), left)
        return simple if ok else result

    # -- numeric evaluation --------------------------------------------------------------
    def _substituted(self, params: Mapping) -> GaussianExpectation:
        by_name = {s.name: s for s in self.free_symbols if isinstance(s, sympy.Symbol)}
        mapping = {}
        for key, value in params.items():
            if isinstance(key, str):
                if key not in by_name:
                    continue  # a parameter this node does not use
                key = by_name[key]
            if key in self.variables:
                raise ValueError(f"{key} is a Gaussian variable of this expectation, not a parameter")
            mapping[key] = sympify_exact(value)
        node = self.xreplace(mapping) if mapping else self
        missing = node.free_symbols
        if missing:
            raise ValueError(
                "GaussianExpectation.numeric needs values for "
                + ", ".join(sorted(str(s) for s in missing)) + " (pass them in params)"
            )
        return node

    def numeric(self, params: Mapping | None = None, tol: float = 1e-10, method: str = "auto",
                seed: int = 0) -> GaussianIntegral:
        r"""Numeric value with an error estimate, after substituting ``params``.

        Parameters
        ----------
        params : dict, optional
            Values of the free symbols (keys: Symbols or their names).
        tol : float, optional
            Absolute tolerance (Gauss–Hermite convergence check; ``epsabs`` of the 1-D
            quadrature; not enforced for QMC).
        method : {"auto", "wick", "gauss-hermite", "qmc", "quad"}
            ``"auto"``: exact Wick value for polynomials; otherwise, if the integrand contains
            Abs/Max/Min/Heaviside/sign/Piecewise, adaptive quadrature split at the kinks in one
            dimension (``"quad"``, :func:`expectation_1d`) and QMC in more; smooth integrands
            use Gauss–Hermite for dim <= 3 and QMC above.
        seed : int, optional
            Seed of the QMC scramblings.

        Returns
        -------
        GaussianIntegral

        Notes
        -----
        The integrand is compiled with ``sympy.lambdify`` (modules scipy, numpy) from the
        expression itself; no user string is evaluated.
        """
        node = self._substituted(params or {})
        methods = ("auto", "wick", "gauss-hermite", "qmc", "quad")
        if method not in methods:
            raise ValueError(f"method must be one of {methods}; got {method!r}")
        if method in ("auto", "wick"):
            try:
                exact = wick_expectation(node.expr, node.variables, node.mean, node.cov)
            except NotPolynomialError:
                if method == "wick":
                    raise
            else:
                value = float(sympy.N(exact, 20))
                return GaussianIntegral(value, abs(value) * np.finfo(float).eps, "wick", 0)
        expr, variables = node.expr, node.variables
        mean = np.array([float(m) for m in node.mean])
        cov = np.array(node.cov.tolist(), dtype=float)
        kinked = expr.has(*_NON_SMOOTH)
        if method == "quad" or (method == "auto" and kinked and node.dim == 1):
            if node.dim != 1:
                raise ValueError(f"method='quad' is one-dimensional; this expectation has dim={node.dim}")
            return node._quad_1d(mean[0], math.sqrt(max(cov[0, 0], 0.0)), tol)
        fn = sympy.lambdify(variables, expr, modules=["scipy", "numpy"])

        def f(x: np.ndarray) -> np.ndarray:
            return np.broadcast_to(np.asarray(fn(*x.T)), x.shape[:1])

        if method == "auto":
            method = "qmc" if (kinked or node.dim > 3) else "gauss-hermite"
        return gaussian_expectation(f, node.dim, mean=mean, cov=cov, tol=tol, method=method, seed=seed)

    def _quad_1d(self, mean: float, sd: float, tol: float) -> GaussianIntegral:
        from .hermite import ActivationError, kinks, t

        (x,) = self.variables
        try:
            points = [float(p) for p in kinks(self.expr.xreplace({x: t}))]
        except ActivationError:
            points = []
        fn = sympy.lambdify(x, self.expr, modules=["scipy", "numpy"])
        return expectation_1d(fn, mean=mean, sd=sd, splits=points, epsabs=tol,
                              epsrel=min(1e-12, tol))
