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


def law_nodes(c, degree=6):
    """Nodes ``(t, w)`` of the spectral law: θ-midpoint rule with 3·2^(d−1) nodes plus the atom.

    The θ-integrands are smooth and even-periodic, so the midpoint rule converges geometrically
    (faster per node than Gauss–Legendre, and its nodes cost nothing to compute).  The weights
    are renormalised to the continuous mass.  Callers check convergence by comparing degree d
    and d + 1 (twice the nodes).
    """
    key = (str(c), degree, mpmath.mp.prec)
    if key in _NODE_CACHE:
        return _NODE_CACHE[key]
    n = 3 * 2 ** (degree - 1)
    h = mpmath.pi / n
    nodes = [((k + mpmath.mpf(1) / 2) * h, h) for k in range(n)]
    ts, ws = [], []
    for theta, wq in nodes:
        t, w = law_theta(c, theta)  # noqa: F821 - generated kernel in the same module
        ts.append(t)
        ws.append(w * wq)
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
