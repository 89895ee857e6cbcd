"""mpmath runtime of generated modules (copied verbatim into exported files).

The same helpers as the NumPy runtime, on ``mpmath.matrix`` and ``mpf`` at the working precision
(callers run under ``mpmath.workdps``).  Spectral laws are integrated by the θ-midpoint rule.
"""
from __future__ import annotations

import math  # noqa: F401

import mpmath


def _wsum(w, v):  # pragma: no cover - the mpmath kernels accumulate in a loop
    return mpmath.fsum(wi * vi for wi, vi in zip(w, v))


def _mm(*mats):
    out = mats[0]
    for m in mats[1:]:
        out = out * m
    return out


def _msc(s, a):
    return a * s


def _madd(*mats):
    out = mats[0]
    for m in mats[1:]:
        out = out + m
    return out


def _inv(a):
    return mpmath.inverse(a)


def _msolve(a, b):
    """``a⁻¹ b`` by LU solve, column by column (never an explicit inverse)."""
    out = mpmath.matrix(b.rows, b.cols)
    for j in range(b.cols):
        col = mpmath.lu_solve(a, b.column(j))
        for i in range(b.rows):
            out[i, j] = col[i]
    return out


def _tr(a):
    return a.T


def _kron(*mats):
    out = mats[0]
    for b in mats[1:]:
        a = out
        out = mpmath.matrix(a.rows * b.rows, a.cols * b.cols)
        for i in range(a.rows):
            for j in range(a.cols):
                for k in range(b.rows):
                    for l in range(b.cols):
                        out[i * b.rows + k, j * b.cols + l] = a[i, j] * b[k, l]
    return out


def _block(rows):
    heights = [row[0].rows for row in rows]
    widths = [b.cols for b in rows[0]]
    out = mpmath.matrix(sum(heights), sum(widths))
    r0 = 0
    for row, h in zip(rows, heights):
        c0 = 0
        for b, w in zip(row, widths):
            for i in range(h):
                for j in range(w):
                    out[r0 + i, c0 + j] = b[i, j]
            c0 += w
        r0 += h
    return out


def _eye(n):
    return mpmath.eye(int(n))


def _zeros(n, m):
    return mpmath.zeros(int(n), int(m))


def _mat(rows):
    return mpmath.matrix(rows)


def _el(a, i, j):
    return a[int(i), int(j)]


def num(x):
    """A number of this backend (``mpf`` at the working precision; strings are exact)."""
    return mpmath.mpf(x)


def to_str(x, digits=17):
    """``x`` with ``digits`` significant digits."""
    return mpmath.nstr(x, digits, min_fixed=-5, max_fixed=8)


def solve(J, r):
    """Solve the small dense system ``J x = r`` (LU at the working precision)."""
    x = mpmath.lu_solve(mpmath.matrix(J), mpmath.matrix(r))
    return [x[i] for i in range(len(r))]


def isfinite(x):
    return mpmath.isfinite(x)


_NODE_CACHE = {}


def _theta_rule(c, degree):
    """The θ-rule ``[(θ, weight)]`` on [0, π] at ``degree`` (module docstring of :func:`law_nodes`)."""
    eps = abs(1 - mpmath.sqrt(c))
    if eps >= mpmath.mpf(1) / 5 or eps == 0:  # at c = 1 exactly the poles cancel: the midpoint rule converges
        n = 3 * 2 ** (degree - 1)
        h = mpmath.pi / n
        return [((k + mpmath.mpf(1) / 2) * h, h) for k in range(n)]
    # near c = 1: the θ-density sin²θ/x(θ) has poles at θ ≈ ±i|1 − √c|, so the midpoint rule's
    # geometric rate collapses (c = 1.004 at γ = 1e-3 missed 30 digits with 24 576 nodes).  Panels
    # graded geometrically toward θ = 0 from eps/2 resolve every scale down to the pole distance;
    # Gauss–Legendre on each (3·2^(d−4) nodes) converges geometrically again.
    edges = [mpmath.mpf(0)]
    step = eps / 2
    while edges[-1] + step < mpmath.pi / 2:
        edges.append(edges[-1] + step)
        step *= 2
    edges.append(mpmath.pi)
    gl = _gauss_legendre(max(1, degree - 3))
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        half, mid = (b - a) / 2, (a + b) / 2
        out += [(mid + half * x, half * w) for x, w in gl]
    return out


def _gauss_legendre(degree):
    key = ("gl", degree, mpmath.mp.prec)
    if key not in _NODE_CACHE:
        from mpmath.calculus.quadrature import GaussLegendre

        _NODE_CACHE[key] = GaussLegendre(mpmath.mp).calc_nodes(degree, mpmath.mp.prec)
    return _NODE_CACHE[key]


def law_nodes(c, degree=6):
    """Nodes ``(t, w)`` of the spectral law: a θ-rule of about 3·2^(d−1) nodes plus the atom.

    Away from c = 1 the rule is the θ-midpoint rule: the θ-integrands are smooth and even-periodic,
    so it converges geometrically (faster per node than Gauss–Legendre, and its nodes cost nothing to
    compute).  Within |1 − √c| < 1/5 the density has poles at distance |1 − √c| from θ = 0, and the
    rule is Gauss–Legendre on panels graded toward θ = 0 (:func:`_theta_rule`).  The weights are
    renormalised to the continuous mass.  Callers check convergence by comparing degree d and d + 1
    (about twice the nodes).
    """
    key = (str(c), degree, mpmath.mp.prec)
    if key in _NODE_CACHE:
        return _NODE_CACHE[key]
    ts, ws = [], []
    rule = _theta_rule(c, degree)
    # a margin of 2·log2(1/θ_min) bits at the smallest θ of a graded rule (x(θ) is generated without
    # cancellation, as sin²(θ/2), so this is insurance against the kernels' own rounding near θ = 0)
    extra = 10 + 2 * max(0, int(-mpmath.log(rule[0][0], 2))) if rule[0][0] > 0 else 10
    with mpmath.extraprec(extra):
        for theta, wq in rule:
            t, w = law_theta(c, theta)  # noqa: F821 - generated kernel in the same module
            ts.append(t)
            ws.append(w * wq)
    ts, ws = [+t for t in ts], [+w for w in ws]  # rounded to the working precision
    cont, atom = law_masses(c)  # noqa: F821 - generated kernel in the same module
    scale = cont / mpmath.fsum(ws)
    ws = [w * scale for w in ws]
    if atom > 0:
        ts.append(mpmath.mpf(0))
        ws.append(mpmath.mpf(atom))
    _NODE_CACHE[key] = (ts, ws)
    return ts, ws


def spectral_radius(M):
    """Largest |eigenvalue| of a small square matrix given as nested lists."""
    A = mpmath.matrix(M)
    if A.rows == 1:  # mpmath.eig ignores left/right=False for 1×1 matrices
        return abs(A[0, 0])
    ev = mpmath.eig(A, left=False, right=False)
    return max(abs(e) for e in ev)


def absval(x):
    return abs(x)


def default_tol():
    """Residual tolerance of fixed-point solves at the working precision: 10^-(dps-3)."""
    return mpmath.mpf(10) ** (-(mpmath.mp.dps - 3))
