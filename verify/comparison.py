r"""The comparison rule of ``attnlimits verify`` and ``attnlimits explore``, stated once.

How a verdict is decided
------------------------
Every comparison is a :class:`Comparison`: a measured ``value`` against a ``reference`` (the
theory, a quoted number, a bound or an interval), with

- ``se``: the standard error of ``value`` (``None`` for a deterministic number: then only the
  tolerance decides);
- ``dof``: the degrees of freedom of that SE. ``None`` means *large sample*: the standardised
  deviation is compared with the normal law (:math:`z`). A finite ``dof`` — an SE from ``R``
  replicates or seeds has ``R − 1`` — uses Student's :math:`t_{\text{dof}}`: with 4 replicates
  :math:`P(|t_3|>3)\approx 0.058`, twenty times the normal :math:`0.0027`;
- ``tolerance``: the precision of a *quoted* number (a paper or spec that gives four decimals is
  known to ±5e-5 at best), or a deterministic numerical precision for checks without SE. It is
  never a way to absorb a Monte Carlo offset;
- ``allowance``: a documented finite-size allowance (0 unless a claim says why; prefer measuring
  the correction with :func:`extrapolate`).

The **statistic** is the deviation beyond ``tolerance + allowance`` in units of the SE,

.. math::  s = \operatorname{sign}(\Delta)\,\max(|\Delta| - \text{tol} - \text{allow},\ 0)/\mathrm{SE},
           \qquad \Delta = \text{value} - \text{reference},

(for ``kind="rel"`` the tolerance is relative to ``|reference|``). Its **p-value** is two-sided,
:math:`p = P(|T| \ge |s|)`, with :math:`T\sim N(0,1)` or :math:`t_{\text{dof}}`. One-sided kinds
(``"upper"``: value ≤ reference, ``"lower"``: value ≥ reference, ``"interval"``: lo ≤ value ≤ hi)
use the signed excess over the bound (positive on the failing side) and :math:`p = P(T \ge s)`.

A run's comparisons with an SE form **one family**; :func:`holm` controls its family-wise error
rate — the probability that a correct theory fails *any* check of the run — at ``level``
(default :data:`LEVEL` = 1 %), by Holm's step-down procedure: sort the :math:`m` p-values,
compare the :math:`i`-th smallest (:math:`i = 1..m`) with the *adjusted threshold*
:math:`\text{level}/(m-i+1)`, and fail checks in that order until the first one that passes;
every later check passes. Equivalently a check fails iff its Holm-adjusted p-value is ≤ level.
Holm is valid under any dependence between the checks (paired runs, shared draws). Checks without
SE are deterministic: they pass iff the deviation lies within the tolerance, and do not enter the
family.

**Power.** A check detects a deviation only if it is larger than its *minimum detectable
deviation* (MDD): the deviation at which the statistic reaches its critical value, so that a check
whose true deviation equals the MDD fails with probability about ½,

.. math::  \text{MDD} = t_{1-a/s,\,\text{dof}}\,\mathrm{SE} + \text{tol} + \text{allow}

(:func:`minimum_detectable_deviation`; :math:`s` = 2 for two-sided kinds, 1 for bounds). In a run
:math:`a` is the level a single deviating check needs to fail Holm's procedure — the first
adjusted threshold, level/m for a family of m checks —, so the MDD grows with the family size
and, through the t quantile, sharply as the degrees of freedom fall (at level/m = 4·10⁻⁵:
t = 4.1 with many draws, 6.9 with 11 draws, 38 with 4, 158 with 3). A claim states its MDD relative to its
headline quantity.

**Calibration.** Over many checks (one run, or several master seeds) the statistics of a correct
theory follow their laws: each two-sided statistic without tolerance or allowance, mapped through
its own law to a normal-equivalent :math:`z` (probability integral transform), is a draw of
:math:`N(0,1)`. :func:`calibration` tests the pooled :math:`z`'s by Kolmogorov–Smirnov and
Anderson–Darling against :math:`N(0,1)`, counts them beyond :math:`|z| = 3` against the expected
:math:`0.27\,\%`, and runs a sign test per group (claim): a small systematic offset — too small for
any one check — shows as one sign in most of a claim's checks.

**Rates.** A claimed asymptotic rate (error ∝ ν^−1, ∝ γ^1/2, ∝ e^−ν/4) is checked on measured
points with their SEs: :func:`fit_rate` fits :math:`\log y = a + b\,g(x) + \sum_j c_j x^{p_j}`
(:math:`g = \log` for a power law, the identity for an exponential; optional correction terms
:math:`x^{p_j}` absorb the leading correction to the asymptotic form without presuming its size)
by weighted least squares, the slope :math:`b` a linear combination of the :math:`\log y_i`, so its
SE is propagated exactly and its degrees of freedom follow Welch–Satterthwaite; :func:`rate_band`
then states the verdict: the predicted rate must lie in the band — an ordinary comparison, a member
of the run's Holm family — *and* the nearest wrong rate(s) (no decay, the next power, a quoted
rate) must lie outside the two-sided band :math:`b \pm t_{1-\text{level}/2,\,\text{dof}}\,\mathrm{SE}`,
so that a fit too noisy to tell the rates apart fails instead of passing.

**Finite size.** A claim about a limit (n, D → ∞) checked at finite size measures its correction
instead of absorbing it: run at two or more sizes, fit :math:`y(n) = y_\infty + a\,n^{-r}` with a
known rate ``r`` by weighted least squares (:func:`extrapolate`), and compare the extrapolated
:math:`y_\infty` with theory within its propagated SE (degrees of freedom by Welch–Satterthwaite,
:func:`combine`).

Public API
----------
:class:`Comparison`, :func:`statistic`, :func:`p_value`, :func:`critical_value`,
:func:`z_equivalent`, :func:`minimum_detectable_deviation`, :func:`holm` (→ :class:`HolmResult`),
:func:`combine`,
:func:`extrapolate` (→ :class:`Extrapolation`), :func:`fit_rate` (→ :class:`RateFit`),
:func:`rate_band` (→ :class:`RateBand`), :func:`calibration` (→ :class:`Calibration`), :data:`LEVEL`. NumPy and ``scipy.special`` only;
no torch.

Example
-------
>>> from attnlimits.verify.comparison import Comparison, holm
>>> c = Comparison(value=0.512, reference=0.5, se=0.004, dof=3)
>>> round(c.statistic, 3), round(c.p_value, 4)
(3.0, 0.0577)
>>> h = holm([c.p_value, 1e-6, 0.4], level=0.01)
>>> h.failed.tolist(), [round(float(t), 5) for t in h.thresholds]
([False, True, False], [0.005, 0.00333, 0.01])

References
----------
S. Holm, *A simple sequentially rejective multiple test procedure*, Scand. J. Statist. 6 (1979).
B. L. Welch, *The generalization of Student's problem when several different population variances
are involved*, Biometrika 34 (1947); F. E. Satterthwaite, Biometrics Bull. 2 (1946).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "COMPARISON_COLUMNS",
    "KINDS",
    "LEVEL",
    "Calibration",
    "Comparison",
    "Extrapolation",
    "HolmResult",
    "RateBand",
    "RateFit",
    "calibration",
    "combine",
    "comparison_columns",
    "critical_value",
    "extrapolate",
    "fit_rate",
    "holm",
    "minimum_detectable_deviation",
    "p_value",
    "rate_band",
    "statistic",
    "z_equivalent",
]

#: Default family-wise error level of a run (1 %).
LEVEL = 0.01
#: Comparison kinds: two-sided ``abs``/``rel``; one-sided ``upper``, ``lower``, ``interval``.
KINDS = ("abs", "rel", "upper", "lower", "interval")


def _check_dof(dof) -> float | None:
    if dof is None or not math.isfinite(dof):
        return None
    if dof <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {dof}")
    return float(dof)


def _sf(x: float, dof) -> float:
    """Upper tail P(T ≥ x) of N(0, 1) (``dof`` None) or Student t (scipy.special: microseconds)."""
    dof = _check_dof(dof)
    if dof is None:
        return 0.5 * math.erfc(x / math.sqrt(2.0))
    from scipy.special import stdtr

    return float(stdtr(dof, -x))


def _isf(q: float, dof) -> float:
    """Inverse of :func:`_sf`."""
    dof = _check_dof(dof)
    from scipy.special import ndtri, stdtrit

    return float(-ndtri(q)) if dof is None else float(-stdtrit(dof, q))


def _has_se(se) -> bool:
    return se is not None and math.isfinite(float(se)) and float(se) > 0


def _excess(value: float, reference, tolerance: float, allowance: float, kind: str) -> float:
    """Signed deviation beyond the margin ``tolerance + allowance``.

    Two-sided kinds: sign(Δ)·max(|Δ| − margin, 0). One-sided kinds: distance past the bound,
    positive on the failing side (negative inside)."""
    if kind not in KINDS:
        raise ValueError(f"unknown comparison kind {kind!r}; expected one of {', '.join(KINDS)}")
    v = float(value)
    if kind == "interval":
        lo, hi = (float(x) for x in reference)
        return max(lo - tolerance - allowance - v, v - hi - tolerance - allowance)
    ref = float(reference)
    margin = (tolerance * abs(ref) if kind == "rel" else tolerance) + allowance
    if kind == "upper":
        return v - ref - margin
    if kind == "lower":
        return ref - margin - v
    d = v - ref
    return math.copysign(max(abs(d) - margin, 0.0), d)


def statistic(value, reference, se, dof=None, *, tolerance: float = 0.0, allowance: float = 0.0,
              kind: str = "abs") -> float | None:
    """Standardised deviation (z, or t with ``dof``) beyond ``tolerance + allowance``; ``None`` without SE.

    See the module docstring for the rule; ``dof`` does not change the statistic, only its law."""
    if not _has_se(se):
        return None
    return _excess(value, reference, float(tolerance), float(allowance), kind) / float(se)


def p_value(value, reference, se, dof=None, *, tolerance: float = 0.0, allowance: float = 0.0,
            kind: str = "abs") -> float | None:
    """p-value of a comparison: two-sided for ``abs``/``rel``, one-sided for bounds and intervals.

    Normal law when ``dof`` is ``None``, Student t with ``dof`` degrees of freedom otherwise.
    ``None`` when there is no finite positive SE (a deterministic comparison).

    >>> round(p_value(3.0, 0.0, 1.0), 5)          # |z| = 3, two-sided
    0.0027
    >>> round(p_value(3.0, 0.0, 1.0, dof=3), 4)   # t with 3 degrees of freedom
    0.0577
    >>> p_value(0.505, 0.5, 0.001, tolerance=0.01)  # within a quoted precision: no evidence
    1.0
    """
    s = statistic(value, reference, se, dof, tolerance=tolerance, allowance=allowance, kind=kind)
    if s is None:
        return None
    if not math.isfinite(s):
        return 0.0 if not math.isnan(s) else float("nan")
    if kind in ("abs", "rel"):
        return float(min(1.0, 2.0 * _sf(abs(s), dof)))
    return _sf(s, dof)


def critical_value(alpha: float, dof=None, *, sided: int = 2) -> float:
    """The statistic at which a comparison has p-value ``alpha`` (``sided`` = 2 or 1).

    >>> round(critical_value(0.0027), 3), round(critical_value(0.01 / 200), 2)
    (3.0, 4.06)
    """
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must lie in (0, 1], got {alpha}")
    return _isf(alpha / sided, dof)


def minimum_detectable_deviation(se, dof=None, alpha: float = LEVEL, *, sided: int = 2,
                                 margin: float = 0.0) -> float:
    """The smallest deviation a comparison detects with probability about ½ at level ``alpha``:
    ``critical_value(alpha, dof, sided)·se + margin`` (``margin`` = tolerance + allowance, in the
    value's units); ``margin`` alone without SE (a deterministic comparison), ``inf`` for an
    infinite SE (one draw: no error bar, nothing is detected).

    >>> round(minimum_detectable_deviation(0.01, None, 0.0027), 4)      # 3 SE
    0.03
    >>> round(minimum_detectable_deviation(0.01, 2, 0.01 / 250), 2)     # 3 seeds in a family of 250
    1.58
    """
    if se is None:
        return float(margin)
    se = float(se)
    if not math.isfinite(se):
        return math.inf
    if se <= 0:
        return float(margin)
    return critical_value(alpha, dof, sided=sided) * se + float(margin)


def z_equivalent(p: float | None, *, sided: int = 2) -> float | None:
    """The normal |z| with the same p-value: a t statistic in units of large-sample SEs.

    >>> round(z_equivalent(0.0577), 2)
    1.9
    """
    if p is None or math.isnan(p):
        return None
    return _isf(max(p, 1e-300) / sided, None) if p < 1 else 0.0


@dataclass(frozen=True)
class Comparison:
    """One comparison: value vs reference with SE, degrees of freedom, tolerance and allowance.

    ``reference`` is a number, or ``(lo, hi)`` for ``kind="interval"``. Derived: ``statistic``
    (z or t), ``p_value``, ``law`` (``"z"`` or ``"t(dof)"``); :meth:`passes` decides at a per-check
    level (a family's level comes from :func:`holm`)."""

    value: float
    reference: float | tuple
    se: float | None = None
    dof: float | None = None
    tolerance: float = 0.0
    allowance: float = 0.0
    kind: str = "abs"

    @property
    def excess(self) -> float:
        """Signed deviation beyond the margin (see :func:`statistic`)."""
        return _excess(self.value, self.reference, float(self.tolerance), float(self.allowance), self.kind)

    @property
    def within_margin(self) -> bool:
        """Deterministic verdict: no deviation beyond the margin.  The excess of a two-sided kind is
        signed (negative below the reference), so it is its size that must be zero."""
        ex = self.excess
        if self.kind in ("abs", "rel"):
            return abs(ex) <= 0
        return ex <= 0

    @property
    def stochastic(self) -> bool:
        """Whether the comparison has a finite positive SE (and so a p-value)."""
        return _has_se(self.se)

    @property
    def statistic(self) -> float | None:
        return statistic(self.value, self.reference, self.se, self.dof, tolerance=self.tolerance,
                         allowance=self.allowance, kind=self.kind)

    @property
    def p_value(self) -> float | None:
        return p_value(self.value, self.reference, self.se, self.dof, tolerance=self.tolerance,
                       allowance=self.allowance, kind=self.kind)

    @property
    def sided(self) -> int:
        return 2 if self.kind in ("abs", "rel") else 1

    @property
    def law(self) -> str:
        return "z" if self.dof is None or not math.isfinite(self.dof) else f"t({self.dof:.3g})"

    def to_dict(self) -> dict:
        """JSON-friendly: inputs, statistic, law and p-value."""
        ref = list(self.reference) if isinstance(self.reference, tuple) else self.reference
        return {"value": self.value, "reference": ref, "se": self.se, "dof": self.dof, "tolerance": self.tolerance,
                "allowance": self.allowance, "kind": self.kind, "statistic": self.statistic, "law": self.law,
                "p_value": self.p_value}

    def columns(self) -> dict:
        """The comparison as the table columns :data:`COMPARISON_COLUMNS` (:func:`comparison_columns`)."""
        return comparison_columns(self)

    def passes(self, alpha: float) -> bool:
        """Verdict at per-check level ``alpha``: p > alpha; without SE, excess ≤ 0."""
        v = self.value
        if v is None or not math.isfinite(float(v)):
            return False
        if self.se is not None and not math.isfinite(float(self.se)):
            return False  # one draw: no error bar, no verdict
        p = self.p_value
        if p is None:
            return self.within_margin
        return p > alpha


#: The columns of one comparison in every table that prints one — ``verify``'s ``results.csv``,
#: ``explore``'s points table (``docs/output.md``, "Comparison columns"): the same names, the same values.
#: (The comparison's ``kind`` is not among them: a property may have a parameter of that name.)
#: The p-value is ``p_value``, not ``p``: ``p`` is a dimension in the rmt result's rows.
COMPARISON_COLUMNS = ("value", "theory", "se", "dof", "tolerance", "allowance", "z", "law", "p_value")


def _column_number(x):
    if x is None:
        return None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f


def comparison_columns(c) -> dict:
    """``{column: value}`` for :data:`COMPARISON_COLUMNS` of a :class:`Comparison` (or ``None``: every
    column empty).

    ``theory`` is the reference (an interval ``(lo, hi)`` as the text ``"lo;hi"``); ``z`` the
    :func:`statistic` — the deviation beyond ``tolerance + allowance`` in SEs, signed for two-sided
    kinds, 0 inside the margin —, ``law`` ``z`` or ``t(dof)``, ``p_value`` its p-value; ``z``, ``law``
    and ``p_value`` are empty for a deterministic comparison (no SE: the margin alone decides).

    >>> cols = comparison_columns(Comparison(0.52, 0.5, se=0.01, allowance=0.005))
    >>> round(cols["z"], 6), cols["law"], round(cols["p_value"], 4)
    (1.5, 'z', 0.1336)
    """
    if c is None:
        return {k: None for k in COMPARISON_COLUMNS}
    ref = c.reference
    theory = (";".join(repr(float(x)) for x in ref) if isinstance(ref, (tuple, list)) else _column_number(ref))
    stochastic = c.stochastic
    return {"value": _column_number(c.value), "theory": theory, "se": _column_number(c.se),
            "dof": _column_number(c.dof), "tolerance": float(c.tolerance), "allowance": float(c.allowance),
            "z": c.statistic if stochastic else None, "law": c.law if stochastic else "",
            "p_value": c.p_value if stochastic else None}


# --------------------------------------------------------------------------------------------------
# family-wise error: Holm
# --------------------------------------------------------------------------------------------------
@dataclass
class HolmResult:
    """Holm's step-down procedure over one family of p-values.

    Arrays are in the order of the input; entries whose p-value was ``None`` (deterministic
    comparisons) are NaN in the float arrays and ``False`` in ``failed``.

    Attributes
    ----------
    level : float
        Family-wise error level.
    m : int
        Family size (number of p-values that are not ``None``).
    p_values, thresholds, adjusted : numpy.ndarray
        Raw p-values; the adjusted threshold ``level/(m − i + 1)`` each p-value is compared with
        at its rank ``i`` (1 = smallest); Holm-adjusted p-values (monotone in rank, ≤ 1).
    failed : numpy.ndarray of bool
        Rejected nulls, i.e. failed checks: ``adjusted ≤ level``.
    """

    level: float
    m: int
    p_values: np.ndarray
    thresholds: np.ndarray
    adjusted: np.ndarray
    failed: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    @property
    def any_failed(self) -> bool:
        return bool(self.failed.any())


def holm(p_values: Sequence[float | None], level: float = LEVEL) -> HolmResult:
    """Holm's procedure at family-wise level ``level`` over ``p_values`` (``None`` = not a member).

    >>> r = holm([0.001, 0.02, None, 0.004], level=0.01)
    >>> r.m, r.failed.tolist()
    (3, [True, False, False, True])
    >>> [round(float(x), 4) for x in r.adjusted[[0, 1, 3]]]
    [0.003, 0.02, 0.008]
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    p = np.array([np.nan if x is None else float(x) for x in p_values], dtype=float)
    member = ~np.isnan(p)
    idx = np.flatnonzero(member)
    m = int(idx.size)
    thresholds = np.full(p.shape, np.nan)
    adjusted = np.full(p.shape, np.nan)
    failed = np.zeros(p.shape, dtype=bool)
    if m:
        order = idx[np.argsort(p[idx], kind="stable")]
        ranks = np.arange(m)
        thr = level / (m - ranks)
        thresholds[order] = thr
        adj = np.minimum(1.0, np.maximum.accumulate((m - ranks) * p[order]))
        adjusted[order] = adj
        failed[order] = adj <= level
    return HolmResult(level=float(level), m=m, p_values=p, thresholds=thresholds, adjusted=adjusted,
                      failed=failed)


# --------------------------------------------------------------------------------------------------
# propagated errors and finite-size extrapolation
# --------------------------------------------------------------------------------------------------
def combine(ses: Sequence[float], dofs: Sequence[float | None] | None = None,
            coefficients: Sequence[float] | None = None) -> tuple[float, float | None]:
    r"""SE and Welch–Satterthwaite degrees of freedom of :math:`\sum_i c_i X_i` (independent :math:`X_i`).

    ``se = sqrt(Σ c_i² se_i²)``; ``dof = se⁴ / Σ (c_i² se_i²)²/dof_i`` — ``None`` (large sample)
    when every term is large-sample; a large-sample term contributes nothing to the denominator.

    >>> se, dof = combine([0.01, 0.01], [3, None])
    >>> round(se, 5), round(dof, 2)
    (0.01414, 12.0)
    """
    ses = [float(s) for s in ses]
    c = [1.0] * len(ses) if coefficients is None else [float(x) for x in coefficients]
    dofs = [None] * len(ses) if dofs is None else list(dofs)
    if not (len(c) == len(ses) == len(dofs)):
        raise ValueError("ses, dofs and coefficients must have the same length")
    terms = [(ci * si) ** 2 for ci, si in zip(c, ses)]
    var = sum(terms)
    se = math.sqrt(var)
    denom = sum(t * t / d for t, d in zip(terms, dofs) if d is not None and math.isfinite(d) and t > 0)
    if denom == 0:
        return se, None
    return se, var * var / denom


@dataclass
class Extrapolation:
    r"""Weighted least-squares fit of :math:`y(n) = y_\infty + a\,n^{-r}` at a known rate :math:`r`.

    Attributes
    ----------
    limit, se, dof :
        :math:`y_\infty`, its propagated SE and Welch–Satterthwaite degrees of freedom (``None``:
        large sample).
    slope, slope_se :
        The fitted correction :math:`a` (so the value at size n is :math:`y_\infty + a n^{-r}`).
    rate :
        :math:`r`.
    sizes, values, ses :
        The inputs.
    chi2, chi2_dof :
        Weighted residual sum of squares and its degrees of freedom (``len(sizes) − 2``; 0 with two
        sizes, where the fit is exact).
    """

    limit: float
    se: float
    dof: float | None
    slope: float
    slope_se: float
    rate: float
    sizes: list
    values: list
    ses: list
    chi2: float
    chi2_dof: int

    def correction(self, n: float) -> float:
        """The fitted finite-size correction :math:`a n^{-r}` at size ``n``."""
        return self.slope * float(n) ** (-self.rate)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("limit", "se", "dof", "slope", "slope_se", "rate", "sizes",
                                              "values", "ses", "chi2", "chi2_dof")}


def extrapolate(sizes: Sequence[float], values: Sequence[float], ses: Sequence[float], *, rate: float = 1.0,
                dofs: Sequence[float | None] | None = None) -> Extrapolation:
    r"""Extrapolate measurements at finite sizes to :math:`n\to\infty` at a known rate.

    Fits :math:`y(n) = y_\infty + a n^{-r}` to independent measurements ``values ± ses`` at ``sizes``
    (two or more distinct sizes) by weighted least squares; :math:`y_\infty` is a linear combination
    :math:`\sum_i w_i y_i` of the measurements, so its SE is propagated exactly and its degrees of
    freedom follow Welch–Satterthwaite (:func:`combine`) from ``dofs``.

    With two sizes :math:`y_\infty = (n_2^r y_2 - n_1^r y_1)/(n_2^r - n_1^r)` (Richardson).

    >>> e = extrapolate([500, 1000], [0.52, 0.51], [0.001, 0.001])
    >>> round(e.limit, 4), round(e.slope, 2), round(e.se, 5)
    (0.5, 10.0, 0.00224)
    """
    n = np.asarray(sizes, dtype=float)
    y = np.asarray(values, dtype=float)
    s = np.asarray(ses, dtype=float)
    if not (n.shape == y.shape == s.shape) or n.ndim != 1:
        raise ValueError("sizes, values and ses must be 1-D sequences of one length")
    if np.unique(n).size < 2:
        raise ValueError("extrapolation needs at least two distinct sizes")
    if not np.all(s > 0) or not np.all(np.isfinite(s)):
        raise ValueError("extrapolation needs finite positive standard errors")
    X = np.column_stack([np.ones_like(n), n ** (-float(rate))])
    W = 1.0 / s ** 2
    A = X.T @ (W[:, None] * X)
    Ainv = np.linalg.inv(A)
    coef_map = Ainv @ (X.T * W)  # 2 × k: coefficients of y in (y∞, a)
    beta = coef_map @ y
    cov = Ainv
    resid = y - X @ beta
    chi2 = float(np.sum(W * resid ** 2))
    se_lim, dof = combine(s, dofs, coef_map[0])
    return Extrapolation(limit=float(beta[0]), se=float(math.sqrt(cov[0, 0])) if se_lim == 0 else se_lim,
                         dof=dof, slope=float(beta[1]), slope_se=float(math.sqrt(cov[1, 1])), rate=float(rate),
                         sizes=n.tolist(), values=y.tolist(), ses=s.tolist(), chi2=chi2, chi2_dof=int(n.size - 2))


# --------------------------------------------------------------------------------------------------
# asymptotic rates: weighted log-log (or log-linear) slope with SE, and the band verdict
# --------------------------------------------------------------------------------------------------
@dataclass
class RateFit:
    r"""Weighted least-squares fit of :math:`\log y = a + b\,g(x) + \sum_j c_j x^{p_j}` (see :func:`fit_rate`).

    Attributes
    ----------
    slope, se, dof :
        :math:`b`, its SE and degrees of freedom (``None``: large sample, normal law).
    intercept :
        :math:`a`.
    corrections :
        The fitted :math:`c_j` of the correction terms, with their powers ``powers``.
    log_x :
        ``True`` for a power law (:math:`g = \log`), ``False`` for an exponential (:math:`g(x) = x`).
    x, values, ses :
        The inputs.
    chi2, chi2_dof :
        Weighted residual sum of squares (with SEs) and its degrees of freedom (points − parameters).
    """

    slope: float
    se: float
    dof: float | None
    intercept: float
    corrections: list
    powers: list
    log_x: bool
    x: list
    values: list
    ses: list | None
    chi2: float
    chi2_dof: int

    def predict(self, x) -> np.ndarray:
        """The fitted curve :math:`y(x)` (exponentiated)."""
        x = np.asarray(x, dtype=float)
        g = np.log(x) if self.log_x else x
        out = self.intercept + self.slope * g
        for c, p in zip(self.corrections, self.powers):
            out = out + c * x ** p
        return np.exp(out)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("slope", "se", "dof", "intercept", "corrections", "powers", "log_x",
                                              "x", "values", "ses", "chi2", "chi2_dof")}


def fit_rate(x: Sequence[float], values: Sequence[float], ses: Sequence[float] | None = None, *,
             dofs: Sequence[float | None] | None = None, log_x: bool = True,
             corrections: Sequence[float] = ()) -> RateFit:
    r"""Fit the rate :math:`b` of :math:`y \propto x^{b}` (``log_x``) or :math:`y \propto e^{b x}` to points with SEs.

    Model :math:`\log y_i = a + b\,g(x_i) + \sum_j c_j x_i^{p_j}` with :math:`g=\log` (power law) or
    :math:`g(x)=x` (exponential) and correction powers ``corrections`` :math:`p_j` (e.g. ``(-1,)`` for a
    relative :math:`O(1/\nu)` correction of a :math:`1/\nu` law, ``(0.5,)`` for :math:`\sqrt\gamma`
    on top of :math:`\sqrt\gamma`). With ``ses`` (SEs of the :math:`y_i`, independent points) the
    fit is weighted by :math:`1/\mathrm{SE}(\log y_i)^2`, :math:`\mathrm{SE}(\log y_i)=\mathrm{SE}_i/y_i`
    (delta method); the slope is :math:`\sum_i w_i\log y_i`, so its SE is exact given the point SEs
    and its degrees of freedom follow Welch–Satterthwaite (:func:`combine`) from ``dofs`` (per point;
    ``None`` entries are large-sample). Without ``ses`` (deterministic or unweighted points) the SE
    comes from the residual scatter with ``points − parameters`` degrees of freedom.

    Points on the same draws are *not* independent: fit each draw (``ses=None``) and average the
    slopes over draws instead.

    >>> f = fit_rate([10, 20, 40, 80], [0.1, 0.05, 0.025, 0.0125], [1e-3, 5e-4, 2.5e-4, 1.25e-4])
    >>> round(f.slope, 6), round(f.se, 4), f.dof
    (-1.0, 0.0065, None)
    """
    xv = np.asarray(x, dtype=float)
    y = np.asarray(values, dtype=float)
    if xv.ndim != 1 or xv.shape != y.shape:
        raise ValueError("x and values must be 1-D sequences of one length")
    if not (np.all(y > 0) and np.all(np.isfinite(y))):
        raise ValueError("a rate fit needs finite positive values")
    if log_x and not np.all(xv > 0):
        raise ValueError("a power-law fit needs positive x")
    powers = [float(p) for p in corrections]
    X = np.column_stack([np.ones_like(xv), np.log(xv) if log_x else xv] + [xv ** p for p in powers])
    k = X.shape[1]
    if np.unique(xv).size < k:
        raise ValueError(f"a rate fit with {len(powers)} correction term(s) needs at least {k} distinct x")
    ly = np.log(y)
    if ses is not None:
        s = np.asarray(ses, dtype=float)
        if s.shape != y.shape or not np.all(s > 0) or not np.all(np.isfinite(s)):
            raise ValueError("ses must be finite, positive and as long as values")
        sl = s / y
        W = 1.0 / sl ** 2
        Ainv = np.linalg.inv(X.T @ (W[:, None] * X))
        coef_map = Ainv @ (X.T * W)
        beta = coef_map @ ly
        resid = ly - X @ beta
        chi2 = float(np.sum(W * resid ** 2))
        se, dof = combine(sl, dofs, coef_map[1])
        ses_out = s.tolist()
    else:
        if y.size <= k:
            raise ValueError(f"an unweighted rate fit needs more than {k} points for an error estimate")
        Ainv = np.linalg.inv(X.T @ X)
        beta = Ainv @ X.T @ ly
        resid = ly - X @ beta
        chi2 = float(np.sum(resid ** 2))
        sigma2 = chi2 / (y.size - k)
        se, dof = float(math.sqrt(sigma2 * Ainv[1, 1])), float(y.size - k)
        ses_out = None
    return RateFit(slope=float(beta[1]), se=float(se), dof=dof, intercept=float(beta[0]),
                   corrections=[float(b) for b in beta[2:]], powers=powers, log_x=bool(log_x), x=xv.tolist(),
                   values=y.tolist(), ses=ses_out, chi2=chi2, chi2_dof=int(y.size - k))


@dataclass
class RateBand:
    """The verdict on a fitted rate: the band ``slope ± crit·SE`` at ``level`` must contain
    ``predicted`` and exclude every rate in ``wrong`` (see :func:`rate_band`)."""

    slope: float
    se: float
    dof: float | None
    predicted: float
    wrong: tuple
    level: float
    crit: float
    lo: float
    hi: float
    p_predicted: float
    #: |slope − wrong| / SE for each excluded rate (must be ≥ ``crit``)
    distances: tuple

    @property
    def contains_predicted(self) -> bool:
        return self.lo <= self.predicted <= self.hi

    @property
    def excludes(self) -> tuple:
        """One bool per rate of ``wrong``: outside the band."""
        return tuple(not (self.lo <= w <= self.hi) for w in self.wrong)

    @property
    def passed(self) -> bool:
        return self.contains_predicted and all(self.excludes)

    def describe(self) -> str:
        ex = ", ".join(f"{w:+.3g} ({'excluded' if e else 'NOT excluded'})" for w, e in zip(self.wrong, self.excludes))
        law = "z" if self.dof is None else f"t({self.dof:.3g})"
        return (f"slope {self.slope:+.4f} ± {self.se:.4f} ({law}); {100 * (1 - self.level):g}% band "
                f"[{self.lo:+.4f}, {self.hi:+.4f}]; predicted {self.predicted:+.4g} "
                f"({'inside' if self.contains_predicted else 'OUTSIDE'}); wrong rate(s) {ex}")

    def to_dict(self) -> dict:
        return {"slope": self.slope, "se": self.se, "dof": self.dof, "predicted": self.predicted,
                "wrong": list(self.wrong), "level": self.level, "crit": self.crit, "lo": self.lo, "hi": self.hi,
                "p_predicted": self.p_predicted, "distances": list(self.distances),
                "contains_predicted": self.contains_predicted, "excludes": list(self.excludes),
                "passed": self.passed}


def rate_band(slope: float, se: float, predicted: float, wrong, *, dof: float | None = None,
              level: float = LEVEL) -> RateBand:
    r"""Band verdict on a fitted rate: contains ``predicted`` and excludes the ``wrong`` rate(s).

    The band is :math:`b \pm c\,\mathrm{SE}` with :math:`c` the two-sided critical value at ``level``
    (normal, or Student t with ``dof``). Inside a run, the *containment* is an ordinary comparison
    (``Comparison(slope, predicted, se, dof)``, p-value :attr:`RateBand.p_predicted`) decided by the
    run's Holm family; the *exclusion* is deterministic given the fit: each wrong rate must lie at
    least :math:`c` SEs from the slope. A fit too noisy to separate the predicted rate from the wrong
    one fails the exclusion.

    >>> b = rate_band(-0.98, 0.02, -1.0, (0.0, -2.0))
    >>> b.passed, round(b.crit, 3), [round(d, 1) for d in b.distances]
    (True, 2.576, [49.0, 51.0])
    >>> rate_band(-0.5, 0.70, -0.5, 0.0, dof=20).passed   # C16's old quick band: no decay not excluded
    False
    """
    if not (_has_se(se)):
        raise ValueError("a rate band needs a finite positive SE")
    wrong_t = tuple(float(w) for w in (wrong if isinstance(wrong, (list, tuple)) else (wrong,)))
    crit = critical_value(level, dof, sided=2)
    se = float(se)
    return RateBand(slope=float(slope), se=se, dof=_check_dof(dof), predicted=float(predicted), wrong=wrong_t,
                    level=float(level), crit=float(crit), lo=float(slope) - crit * se, hi=float(slope) + crit * se,
                    p_predicted=float(p_value(slope, predicted, se, dof)),
                    distances=tuple(abs(float(slope) - w) / se for w in wrong_t))


# --------------------------------------------------------------------------------------------------
# calibration: do the statistics of a run (or of several seeds) look like their laws?
# --------------------------------------------------------------------------------------------------
@dataclass
class Calibration:
    """Result of :func:`calibration`.

    Attributes
    ----------
    n : int
        Number of statistics tested.
    z : numpy.ndarray
        Their normal-equivalent values (probability integral transform through each law).
    ks_statistic, ks_p, ad_statistic, ad_p :
        Kolmogorov–Smirnov and Anderson–Darling (case 0: fully specified N(0, 1); p by Marsaglia &
        Marsaglia's approximation) of ``z`` against N(0, 1).
    beyond_3, expected_beyond_3, beyond_3_p :
        Count of ``|z| > 3``, its expectation ``n·0.0027`` and the binomial upper-tail p-value.
    mean_z, mean_z_se :
        Mean of ``z`` and its SE ``1/√n`` under the null (an overall bias shows here).
    signs :
        Per group: ``{"n", "positive", "p"}`` — the two-sided binomial sign-test p of the count of
        positive statistics among the nonzero ones.
    """

    n: int
    z: np.ndarray
    ks_statistic: float
    ks_p: float
    ad_statistic: float
    ad_p: float
    beyond_3: int
    expected_beyond_3: float
    beyond_3_p: float
    mean_z: float
    mean_z_se: float
    signs: dict

    def flagged(self, level: float = LEVEL) -> dict:
        """The groups whose sign test has p ≤ ``level``/(number of groups) (Bonferroni over groups)."""
        g = max(len(self.signs), 1)
        return {k: v for k, v in self.signs.items() if v["p"] <= level / g}

    def to_dict(self) -> dict:
        return {"n": self.n, "ks_statistic": self.ks_statistic, "ks_p": self.ks_p, "ad_statistic": self.ad_statistic,
                "ad_p": self.ad_p, "beyond_3": self.beyond_3, "expected_beyond_3": self.expected_beyond_3,
                "beyond_3_p": self.beyond_3_p, "mean_z": self.mean_z, "mean_z_se": self.mean_z_se,
                "signs": self.signs}


def _ad_p(a2: float) -> float:
    """Upper-tail p of the Anderson–Darling statistic of a fully specified law (Marsaglia & Marsaglia
    2004, *Evaluating the Anderson–Darling distribution*, the large-n limit ADinf)."""
    if a2 <= 0:
        return 1.0
    if a2 < 2:
        cdf = a2 ** -0.5 * math.exp(-1.2337141 / a2) * (2.00012 + (0.247105 - (0.0649821 - (0.0347962 - (
            0.011672 - 0.00168691 * a2) * a2) * a2) * a2) * a2)
    else:
        cdf = math.exp(-math.exp(1.0776 - (2.30695 - (0.43424 - (0.082433 - (0.008056 - 0.0003146 * a2) * a2) * a2)
                                         * a2) * a2))
    return float(min(1.0, max(0.0, 1.0 - cdf)))


def calibration(statistics: Sequence[float], dofs: Sequence[float | None] | None = None,
                groups: Sequence | None = None) -> Calibration:
    r"""Test that two-sided statistics (z, or t with ``dofs``) of a correct theory look like their laws.

    Each statistic is mapped to a normal-equivalent :math:`z = \Phi^{-1}(F(s))` through its own law
    :math:`F` (normal, or Student t with its dof); the pooled :math:`z`'s are tested against
    :math:`N(0,1)` (KS, Anderson–Darling, the count beyond 3, the mean), and within each group
    (``groups``: a label per statistic, e.g. its claim) the signs by a two-sided binomial test.
    Pass only statistics without tolerance or allowance (their law is then exact under the null).

    >>> import numpy as np
    >>> c = calibration(np.random.default_rng(0).standard_normal(400))
    >>> c.ks_p > 0.01, c.ad_p > 0.01, c.beyond_3 <= 4
    (True, True, True)
    >>> c = calibration([0.8] * 17 + [-0.3], groups=["C7"] * 18)
    >>> c.signs["C7"]["positive"], round(c.signs["C7"]["p"], 5)
    (17, 0.00014)
    """
    from scipy import stats as st

    s = np.asarray(statistics, dtype=float)
    dofs = [None] * s.size if dofs is None else list(dofs)
    groups = [""] * s.size if groups is None else list(groups)
    if not (len(dofs) == len(groups) == s.size):
        raise ValueError("statistics, dofs and groups must have the same length")
    keep = np.isfinite(s)
    if not keep.any():
        raise ValueError("calibration needs at least one finite statistic")
    z = []
    for x, d in zip(s[keep], [d for d, k in zip(dofs, keep) if k]):
        d = _check_dof(d)
        if d is None:
            z.append(float(x))
        else:  # PIT through t_d, back through the normal law; symmetric, so work on the lower tail
            lower = float(st.t.cdf(-abs(x), d))
            z.append(math.copysign(float(-st.norm.ppf(lower)), x))
    z = np.asarray(z)
    n = int(z.size)
    ks = st.kstest(z, "norm")
    zs = np.sort(z)
    cdf = np.clip(st.norm.cdf(zs), 1e-300, 1 - 1e-16)
    i = np.arange(1, n + 1)
    a2 = float(-n - np.sum((2 * i - 1) * (np.log(cdf) + np.log1p(-cdf[::-1]))) / n)
    p3 = 2 * st.norm.sf(3.0)
    b3 = int(np.sum(np.abs(z) > 3))
    signs: dict = {}
    for g in dict.fromkeys(gr for gr, k in zip(groups, keep) if k):
        zg = np.array([zz for zz, gr in zip(z, [gr for gr, k in zip(groups, keep) if k]) if gr == g])
        nz = zg[zg != 0]
        pos = int(np.sum(nz > 0))
        p = float(st.binomtest(pos, nz.size, 0.5).pvalue) if nz.size else 1.0
        signs[g] = {"n": int(nz.size), "positive": pos, "p": p}
    return Calibration(n=n, z=z, ks_statistic=float(ks.statistic), ks_p=float(ks.pvalue), ad_statistic=a2,
                       ad_p=_ad_p(a2), beyond_3=b3, expected_beyond_3=n * p3,
                       beyond_3_p=float(st.binom.sf(b3 - 1, n, p3)), mean_z=float(z.mean()),
                       mean_z_se=1.0 / math.sqrt(n), signs=signs)
