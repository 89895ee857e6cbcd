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
    return numpy.dot(w, numpy.broadcast_to(v, w.shape))


def _mm(*mats):
    out = mats[0]
    for m in mats[1:]:
        out = out @ m
    return out


def _msc(s, a):
    return s * a


def _madd(*mats):
    out = mats[0]
    for m in mats[1:]:
        out = out + m
    return out


def _inv(a):
    return numpy.linalg.inv(a)


def _tr(a):
    return a.T


def _kron(*mats):
    out = mats[0]
    for m in mats[1:]:
        out = numpy.kron(out, m)
    return out


def _block(rows):
    return numpy.block(rows)


def _eye(n):
    return numpy.eye(int(n))


def _zeros(n, m):
    return numpy.zeros((int(n), int(m)))


def _mat(rows):
    return numpy.array(rows, dtype=float)


def _el(a, i, j):
    return a[int(i), int(j)]


def num(x):
    """A number of this backend (float64)."""
    return float(x)


def to_str(x, digits=17):
    """Shortest round-trip text of a float (``digits`` is ignored for float64)."""
    return repr(float(x))


def solve(J, r):
    """Solve the small dense system ``J x = r``."""
    return list(numpy.linalg.solve(numpy.array(J, dtype=float), numpy.array(r, dtype=float)))


def isfinite(x):
    return math.isfinite(float(x))


def law_nodes(c, n_nodes=3000):
    """Quadrature nodes ``(t, w)`` of the spectral law: θ-midpoint rule plus the atom at 0.

    Midpoint rule θ_k = (k + ½)π/N on the generated node map ``law_theta``; weights renormalised
    to exactly the continuous mass; the atom (if any) is appended as a node at t = 0.
    Convergence is spectral for smooth θ-integrands (attention_rmt.md §9).
    """
    theta = (numpy.arange(n_nodes) + 0.5) * (numpy.pi / n_nodes)
    t, w = law_theta(c, theta)  # noqa: F821 - generated kernel in the same module
    t = numpy.broadcast_to(t, theta.shape).astype(float)
    w = numpy.broadcast_to(w, theta.shape).astype(float) * (numpy.pi / n_nodes)
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
    """Residual tolerance of fixed-point solves in float64 (attention_rmt.md §9)."""
    return 1e-13
