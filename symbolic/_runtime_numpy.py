"""NumPy runtime of generated modules (copied verbatim into exported files).

Helpers called by generated kernels: weighted sums over quadrature nodes, small dense matrix
algebra, and the θ-midpoint nodes of a spectral law whose node map and weight are generated
kernels (``law_theta(c, theta)``, ``law_masses(c)``).
"""
from __future__ import annotations

import functools  # noqa: F401  (NumPyPrinter prints Max/Min with functools.reduce)
import math  # noqa: F401

import numpy


def _wsum(w, v):
    """Σ_k w_k v_k over the last axis; a batched v (G, N) gives shape (G, 1)."""
    if isinstance(v, numpy.ndarray) and v.shape == w.shape:
        return w @ v
    v = numpy.asarray(v, dtype=float)
    v = numpy.broadcast_to(v, numpy.broadcast_shapes(v.shape, w.shape))
    # batched: keep a trailing axis so results broadcast like the batched inputs (G, 1)
    return (v @ w)[..., None] if v.ndim > 1 else v @ w


# Small dense matrices; every helper accepts a leading batch shape (…, rows, cols), so one call of
# a generated kernel can evaluate a whole γ grid at once.


def _mm(*mats):
    out = mats[0]
    for m in mats[1:]:
        out = out @ m
    return out


def _msc(s, a):
    s = numpy.asarray(s, dtype=float)
    return (s[..., None, None] if s.ndim else s) * a


def _madd(*mats):
    out = mats[0]
    for m in mats[1:]:
        out = out + m
    return out


def _inv(a):
    return numpy.linalg.inv(a)


def _msolve(a, b):
    """``a⁻¹ b`` by LU solve (batched over leading axes), never an explicit inverse."""
    a, b = numpy.asarray(a, dtype=float), numpy.asarray(b, dtype=float)
    if b.ndim < a.ndim:
        b = numpy.broadcast_to(b, a.shape[:-2] + b.shape)
    elif a.ndim < b.ndim:
        a = numpy.broadcast_to(a, b.shape[:-2] + a.shape[-2:])
    return numpy.linalg.solve(a, b)


def _tr(a):
    return numpy.swapaxes(a, -1, -2)


def _kron(*mats):
    out = mats[0]
    for b in mats[1:]:
        k = numpy.einsum("...ij,...kl->...ikjl", out, b)
        out = k.reshape(k.shape[:-4] + (k.shape[-4] * k.shape[-3], k.shape[-2] * k.shape[-1]))
    return out


def _block(rows):
    batch = numpy.broadcast_shapes(*[numpy.shape(b)[:-2] for row in rows for b in row])
    rows = [[numpy.broadcast_to(b, batch + numpy.shape(b)[-2:]) for b in row] for row in rows]
    return numpy.block(rows)


def _eye(n):
    return numpy.eye(int(n))


def _zeros(n, m):
    return numpy.zeros((int(n), int(m)))


def _mat(rows):
    flat = numpy.broadcast_arrays(*[numpy.asarray(x, dtype=float) for row in rows for x in row])
    arr = numpy.stack(flat, axis=-1).reshape(flat[0].shape + (len(rows), len(rows[0])))
    return arr


def _el(a, i, j):
    return a[..., int(i), int(j)]


def num(x):
    """A number of this backend (float64)."""
    return float(x)


def to_str(x, digits=17):
    """Shortest round-trip text of a float (``digits`` is ignored for float64)."""
    return repr(float(x))


def solve(J, r):
    """Solve the small dense system ``J x = r`` (Gaussian elimination with partial pivoting in
    plain Python for n ≤ 4 — far cheaper than a LAPACK call at this size — else LAPACK)."""
    n = len(r)
    if n == 3:  # Cramer's rule with a conditioning guard; falls through to elimination if singular
        (a, b, c), (d, e, f), (g, h, i) = J
        co0, co1, co2 = e * i - f * h, f * g - d * i, d * h - e * g
        det = a * co0 + b * co1 + c * co2
        norm = max(abs(a), abs(b), abs(c), abs(d), abs(e), abs(f), abs(g), abs(h), abs(i))
        if abs(det) > 1e-8 * norm**3 and math.isfinite(det):
            r0, r1, r2 = r
            return [
                (r0 * co0 + r1 * (c * h - b * i) + r2 * (b * f - c * e)) / det,
                (r0 * co1 + r1 * (a * i - c * g) + r2 * (c * d - a * f)) / det,
                (r0 * co2 + r1 * (b * g - a * h) + r2 * (a * e - b * d)) / det,
            ]
    if n > 4:
        return list(numpy.linalg.solve(numpy.array(J, dtype=float), numpy.array(r, dtype=float)))
    A = [[float(v) for v in row] + [float(b)] for row, b in zip(J, r)]
    scale = max(abs(v) for row in A for v in row[:n]) or 1.0
    for k in range(n):
        p = max(range(k, n), key=lambda i: abs(A[i][k]))
        if not abs(A[p][k]) > 1e-300 * scale or not math.isfinite(A[p][k]):
            raise numpy.linalg.LinAlgError("singular matrix")
        A[k], A[p] = A[p], A[k]
        piv = A[k][k]
        for i in range(k + 1, n):
            f = A[i][k] / piv
            if f:
                row_i, row_k = A[i], A[k]
                for j in range(k, n + 1):
                    row_i[j] -= f * row_k[j]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        x[i] = (A[i][n] - sum(A[i][j] * x[j] for j in range(i + 1, n))) / A[i][i]
    return x


def isfinite(x):
    return math.isfinite(float(x))


def batch(values, size):
    """Outputs of a kernel called on a batch, as arrays of shape (size,)."""
    return [numpy.broadcast_to(numpy.reshape(v, -1) if numpy.ndim(v) else v, (size,)) for v in values]


def _theta_rule(c, n_nodes):
    """θ-nodes and weights on [0, π]: the midpoint rule, or near c = 1 (|1 − √c| < 1/5) Gauss–Legendre
    on panels graded toward θ = 0 from |1 − √c|/2, where the density has poles at θ ≈ ±i|1 − √c| that
    slow the midpoint rule to a crawl (the mpmath runtime's rule, docs/attention_rmt.md §9)."""
    c = float(c)
    eps = abs(1.0 - numpy.sqrt(c))
    if eps >= 0.2 or eps == 0.0:
        theta = (numpy.arange(n_nodes) + 0.5) * (numpy.pi / n_nodes)
        return theta, numpy.full(n_nodes, numpy.pi / n_nodes)
    edges, step = [0.0], eps / 2
    while edges[-1] + step < numpy.pi / 2:
        edges.append(edges[-1] + step)
        step *= 2
    edges.append(numpy.pi)
    edges = numpy.array(edges)
    m = max(8, int(n_nodes) // (len(edges) - 1))
    x, w = numpy.polynomial.legendre.leggauss(m)
    half, mid = numpy.diff(edges)[:, None] / 2, (edges[:-1] + edges[1:])[:, None] / 2
    return (mid + half * x).ravel(), (half * w).ravel()


def law_nodes(c, n_nodes=3000):
    """Quadrature nodes ``(t, w)`` of the spectral law: a θ-rule of about ``n_nodes`` nodes plus the atom at 0.

    The θ-midpoint rule θ_k = (k + ½)π/N on the generated node map ``law_theta`` (near c = 1 graded
    Gauss–Legendre panels, :func:`_theta_rule`); weights renormalised to exactly the continuous
    mass; the atom (if any) is appended as a node at t = 0.  Convergence is spectral for smooth
    θ-integrands (docs/attention_rmt.md §9).
    """
    theta, wq = _theta_rule(c, n_nodes)
    t, w = law_theta(c, theta)  # noqa: F821 - generated kernel in the same module
    t = numpy.broadcast_to(t, theta.shape).astype(float)
    w = numpy.broadcast_to(w, theta.shape).astype(float) * wq
    cont, atom = law_masses(c)  # noqa: F821 - generated kernel in the same module
    w = w * (float(cont) / w.sum())
    if float(atom) > 0:
        t = numpy.append(t, 0.0)
        w = numpy.append(w, float(atom))
    return t, w


def spectral_radius(M):
    """Largest |eigenvalue| of a small square matrix given as nested lists."""
    return float(numpy.max(numpy.abs(numpy.linalg.eigvals(numpy.array(M, dtype=float)))))


def absval(x):
    return abs(float(x))


def default_tol():
    """Residual tolerance of fixed-point solves in float64 (docs/attention_rmt.md §9)."""
    return 1e-13
