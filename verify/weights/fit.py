r"""Identity-plus-low-rank fit and the per-matrix diagnostics of docs/attention_rmt.md §13 (items 1–4).

For a square matrix :math:`B` (a head's :math:`B_h` or a layer sum) the fit is

.. math::

    \rho_r=\min_{s\in\mathbb R,\ \operatorname{rank}L\le r}\frac{\|B-sI-L\|_F}{\|B\|_F}
          =\min_s\frac{\sqrt{\phi_r(s)}}{\|B\|_F},\qquad
    \phi_r(s)=\sum_{k>r}\sigma_k(B-sI)^2

(Eckart–Young–Mirsky for :math:`L` at fixed :math:`s`).

The profile objective as an eigenvalue problem
----------------------------------------------
With :math:`G=B^\top B` and :math:`S=(B+B^\top)/2`, the squared singular values of :math:`B-sI` are the
eigenvalues :math:`\lambda_k(s)` of :math:`M(s)=(B-sI)^\top(B-sI)=G-2sS+s^2I`, so

.. math::

    \phi_r(s)=\sum_{k>r}\lambda_k(s)
             =\|B\|_F^2-2s\operatorname{tr}B+(p-r)s^2-E_r(s),\qquad
    E_r(s)=\sum_{k\le r}\lambda_k(G-2sS),

where :math:`E_r` (a sum of top eigenvalues of an affine matrix function) is convex. Hence
:math:`\phi_r(s)-(p-r)s^2` is concave, :math:`\phi_r''\le2(p-r)`, and with eigenvectors :math:`w_k` of
:math:`M(s)` (Hellmann–Feynman and second-order perturbation theory)

.. math::

    \phi_r'(s)=\sum_{j>r}\bigl(2s-2\,w_j^\top Sw_j\bigr),\qquad
    \phi_r''(s)=2(p-r)-8\sum_{k\le r<j}\frac{(w_j^\top Sw_k)^2}{\lambda_k-\lambda_j}.

One symmetric eigendecomposition at a shift thus gives :math:`\phi_r,\phi_r',\phi_r''` for every rank,
at about half the cost of an SVD, and the singular values alone (``eigvalsh``, a quarter of the cost)
serve the guard scan. The step :math:`s-\phi_r'/(2(p-r))` minimises the quadratic majoriser implied by
:math:`\phi_r''\le2(p-r)` (the classical alternation *L* ← truncated SVD, *s* ← tr(B−L)/p is the same
step with :math:`p` in place of :math:`p-r`), so a Newton step safeguarded by it always descends and
converges quadratically where the old alternation converged linearly.

Cheap cases: :math:`r=0` is a closed form; :math:`r\ge\operatorname{rank}B` is exact with :math:`s=0`;
a matrix of rank :math:`k` with :math:`2k<p` (a single head) is reduced to a problem of size
:math:`m\le2k` (see :class:`_ShiftedSpectrum`), and its SVD is taken from thin factors when given.

References
----------
Eckart–Young–Mirsky theorem; Weyl's inequalities for singular values (the scan interval); Liao et al.,
arXiv:2506.18656 (Assumption 1).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["DEFAULT_RANKS", "FitResult", "fit_identity_plus_low_rank", "head_diagnostics", "resolve_ranks"]

#: Default ranks of the identity-plus-rank-r fit (docs/attention_rmt.md §13 item 3); ``"d_h"`` is the head dimension.
DEFAULT_RANKS: tuple[int | str, ...] = (0, 1, 2, 4, 8, 16, "d_h", 64)

_EPS = np.finfo(np.float64).eps
# Guard scan: at most 201 points when the (reduced) problem has size m <= 64, else 41 (the previous
# implementation's grids on |s| <= 2||B||_F/sqrt(p - r)); on the narrower Weyl interval the default uses
# just enough points for the same spacing, and at least _N_GRID_MIN.
_N_GRID_SMALL = 201
_N_GRID_LARGE = 41
_N_GRID_MIN = 25
_EXACT_FINAL_M = 128  # below this size the final phi and L come from an SVD of B - s*I (cheap, most accurate)
_CHUNK_BYTES = 64 * 2**20  # memory of one stacked eigvalsh batch of the scan
_CACHE = 4  # eigendecompositions kept per matrix (the start s0 = tr B/p is shared by all ranks)


@dataclass
class FitResult:
    r"""Best identity-plus-rank-r fit :math:`B\approx s^\star I+L` (docs/attention_rmt.md §13 item 3).

    Attributes
    ----------
    s : float
        :math:`s^\star`.
    rho : float
        :math:`\rho_r=\|B-s^\star I-L\|_F/\|B\|_F` (0 for :math:`B=0`).
    identity_share : float
        :math:`|s^\star|\sqrt p/\|B\|_F` (the share of :math:`\|B\|_F` carried by the identity part).
    L_u, L_s, L_v : ndarray, shapes (p, k), (k,), (p, k)
        :math:`L=L_u\operatorname{diag}(L_s)L_v^\top`, :math:`k=\min(r,p)`; columns are the singular pairs
        :math:`(u_k,v_k)` of :math:`L` ordered by decreasing :math:`\sigma_k`.
    iterations : int
        Descent steps (eigendecompositions) of the run that produced the result (0 for closed forms).
    r : int
        The rank constraint.
    method : str
        ``"closed-form"`` (:math:`r=0`: :math:`s^\star=\operatorname{tr}B/p`), ``"exact-rank"``
        (:math:`r\ge\operatorname{rank}B`: :math:`s^\star=0`, :math:`\rho_r=0`), ``"descent"`` (safeguarded
        Newton from :math:`\operatorname{tr}B/p`), ``"scan"`` (the guard scan found a better basin),
        ``"warm-start"`` (started from the fit at a lower rank), ``"zero"`` (:math:`s=0` ties the optimum).
    converged : bool
        The descent stopped on its tolerance before ``max_iter``.
    phi : float
        :math:`\phi_r(s^\star)=\|B-s^\star I-L\|_F^2`.
    """

    s: float
    rho: float
    identity_share: float
    L_u: np.ndarray
    L_s: np.ndarray
    L_v: np.ndarray
    iterations: int
    r: int = 0
    method: str = "descent"
    converged: bool = True
    phi: float = 0.0

    @property
    def L(self) -> np.ndarray:
        """The low-rank part :math:`L` as a dense matrix."""
        return (self.L_u * self.L_s) @ self.L_v.T


@dataclass
class _Point:
    """Eigendecomposition of the reduced :math:`M(s)`: values descending, vectors, :math:`S_CW`, and
    :math:`\\operatorname{diag}(W^\\top S_CW)`."""

    s: float
    lam: np.ndarray
    W: np.ndarray
    SW: np.ndarray  # S_C W
    d: np.ndarray  # diag(W^T S_C W)


class _ShiftedSpectrum:
    r"""Singular values of :math:`B-sI` for many shifts :math:`s`, cheaply when :math:`B` is low rank.

    If :math:`\operatorname{rank}B=k` and :math:`\mathcal V=\operatorname{span}(U_k,V_k)` has dimension
    :math:`m<p`, then :math:`\mathcal V` and :math:`\mathcal V^\perp` are invariant under :math:`B-sI`,
    which acts as :math:`-sI` on :math:`\mathcal V^\perp`. In a basis :math:`Q=[Q_m,Q_\perp]`,
    :math:`Q^\top(B-sI)Q=\operatorname{diag}(C-sI_m,\,-sI_{p-m})` with :math:`C=Q_m^\top BQ_m`, so the
    singular values are those of :math:`C-sI_m` plus :math:`|s|` with multiplicity :math:`p-m`.
    A single head (:math:`m\le2d_h`) then costs :math:`O(d_h^3)` per shift instead of :math:`O(p^3)`.

    ``factors=(F1, F2)`` with :math:`B=F_1F_2^\top` (thin, :math:`p\times d`) gives the SVD of :math:`B`
    from two QR factorisations and a :math:`d\times d` SVD.
    """

    def __init__(self, B: np.ndarray, factors: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        B = np.asarray(B, dtype=np.float64)
        if B.ndim != 2 or B.shape[0] != B.shape[1] or B.shape[0] == 0:
            raise ValueError(f"B must be a non-empty square matrix, got shape {B.shape}")
        if not np.all(np.isfinite(B)):
            raise ValueError("B has non-finite entries")
        self.B = B
        self.p = p = B.shape[0]
        U = Vt = None
        if factors is not None:
            F1, F2 = (np.asarray(f, dtype=np.float64) for f in factors)
            if F1.ndim != 2 or F1.shape != F2.shape or F1.shape[0] != p:
                raise ValueError(f"factors must both have shape ({p}, d), got {F1.shape} and {F2.shape}")
            if F1.shape[1] < p:
                Q1, R1 = np.linalg.qr(F1)
                Q2, R2 = np.linalg.qr(F2)
                Uc, sc, Vct = np.linalg.svd(R1 @ R2.T)
                U, Vt = Q1 @ Uc, Vct @ Q2.T
                sv = np.concatenate([sc, np.zeros(p - len(sc))])
        if U is None:
            U, sv, Vt = np.linalg.svd(B)
        self.singular_values = sv
        self.norm = float(np.sqrt(np.sum(sv * sv)))
        self.trace = float(np.trace(B))
        tol = sv[0] * p * _EPS if sv[0] > 0 else 0.0
        self.rank = k = int(np.sum(sv > tol))
        self.Qm: np.ndarray | None = None
        self._perp: np.ndarray | None = None
        self.m = p
        self.C = B
        if 0 < k and 2 * k < p:
            basis = np.concatenate([U[:, :k], Vt[:k].T], axis=1)
            Ub, sb, _ = np.linalg.svd(basis, full_matrices=False)
            m = int(np.sum(sb > 1e-8 * sb[0]))
            if m < p:
                self.Qm, self.m = Ub[:, :m], m
                self.C = self.Qm.T @ B @ self.Qm
        self.S_C = 0.5 * (self.C + self.C.T)
        self.G_C = self.C.T @ self.C
        self._cache: dict[float, _Point] = {}

    # ---- accurate (SVD) evaluations -------------------------------------------------------------
    def perp(self) -> np.ndarray:
        """Orthonormal basis :math:`Q_\\perp` of :math:`\\mathcal V^\\perp` (computed on first use)."""
        if self._perp is None:
            self._perp = np.linalg.qr(self.Qm, mode="complete")[0][:, self.m :]
        return self._perp

    def svals(self, s: float) -> np.ndarray:
        """All :math:`p` singular values of :math:`B-sI`, descending (one SVD of size :math:`m`)."""
        c = np.linalg.svd(self.C - s * np.eye(self.m), compute_uv=False)
        if self.Qm is None:
            return c
        return np.sort(np.concatenate([c, np.full(self.p - self.m, abs(s))]))[::-1]

    def phi(self, s: float, r: int) -> float:
        r"""Profile objective :math:`\phi_r(s)=\sum_{k>r}\sigma_k(B-sI)^2` from singular values."""
        sv = self.svals(s)
        return float(np.sum(sv[r:] ** 2))

    def top(self, s: float, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """Top-``r`` singular triplets ``(U, sigma, V)`` of :math:`B-sI` and :math:`\\phi_r(s)`, by SVD."""
        Uc, c, Vtc = np.linalg.svd(self.C - s * np.eye(self.m))
        if self.Qm is None:
            return Uc[:, :r], c[:r], Vtc[:r].T, float(np.sum(c[r:] ** 2))
        values = np.concatenate([c, np.full(self.p - self.m, abs(s))])
        order = np.argsort(-values, kind="stable")
        sel = order[:r]
        U, V = self._lift(sel, Uc, Vtc.T, s)
        return U, values[sel], V, float(np.sum(values[order[r:]] ** 2))

    def _lift(self, sel: np.ndarray, Uc: np.ndarray, Vc: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
        """Singular vectors in :math:`\\mathbb R^p` for merged indices ``sel`` (< m: reduced block)."""
        U = np.empty((self.p, len(sel)))
        V = np.empty((self.p, len(sel)))
        inner = sel < self.m
        if np.any(inner):
            U[:, inner] = self.Qm @ Uc[:, sel[inner]]
            V[:, inner] = self.Qm @ Vc[:, sel[inner]]
        if not np.all(inner):  # (B - sI) w = -s w on the complement
            w = self.perp()[:, sel[~inner] - self.m]
            U[:, ~inner] = (-1.0 if s > 0 else 1.0) * w
            V[:, ~inner] = w
        return U, V

    # ---- the eigenvalue route ---------------------------------------------------------------------
    def lam(self, shifts: Sequence[float]) -> np.ndarray:
        r"""Squared singular values :math:`\lambda_k(s)` of :math:`B-sI` for each shift, shape ``(n, p)``,
        descending (stacked ``eigvalsh`` of :math:`G_C-2sS_C+s^2I`, in batches)."""
        shifts = np.asarray(shifts, dtype=np.float64).reshape(-1)
        m, p = self.m, self.p
        out = np.empty((len(shifts), p))
        chunk = max(1, int(_CHUNK_BYTES // (8 * m * m)))
        eye = np.eye(m)
        for i in range(0, len(shifts), chunk):
            g = shifts[i : i + chunk]
            M = self.G_C[None] - (2 * g)[:, None, None] * self.S_C[None] + (g * g)[:, None, None] * eye
            ev = np.maximum(np.linalg.eigvalsh(M), 0.0)
            if m < p:
                ev = np.concatenate([ev, np.repeat((g * g)[:, None], p - m, axis=1)], axis=1)
                ev.sort(axis=1)
            out[i : i + chunk] = ev[:, ::-1]
        return out

    def point(self, s: float) -> _Point:
        """Eigendecomposition of :math:`M(s)` on the reduced block (kept in a small cache)."""
        s = float(s)
        pt = self._cache.get(s)
        if pt is None:
            M = self.G_C - 2 * s * self.S_C + (s * s) * np.eye(self.m)
            lam, W = np.linalg.eigh(M)
            lam, W = np.maximum(lam[::-1], 0.0), np.ascontiguousarray(W[:, ::-1])
            SW = self.S_C @ W
            pt = _Point(s, lam, W, SW, np.einsum("ij,ij->j", W, SW))
            if len(self._cache) >= _CACHE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[s] = pt
        return pt

    def _split(self, pt: _Point, r: int) -> tuple[np.ndarray, np.ndarray, int]:
        """Merged order at ``pt``: reduced-block indices in the top ``r`` and in the tail, and how many of the
        :math:`p-m` complement values :math:`s^2` are in the top."""
        n_x = self.p - self.m
        if n_x == 0:
            idx = np.arange(self.m)
            return idx[:r], idx[r:], 0
        values = np.concatenate([pt.lam, np.full(n_x, pt.s * pt.s)])
        order = np.argsort(-values, kind="stable")
        top = order[:r]
        top_c = np.sort(top[top < self.m])
        mask = np.ones(self.m, dtype=bool)
        mask[top_c] = False
        return top_c, np.flatnonzero(mask), int(np.sum(top >= self.m))

    def derivatives(self, pt: _Point, r: int) -> tuple[float, float, float]:
        r""":math:`(\phi_r,\phi_r',\phi_r'')` at ``pt.s`` (module docstring); :math:`\phi_r''=-\infty` at a
        (concave) kink where a top and a tail eigenvalue coincide."""
        s = pt.s
        top_c, tail_c, t_x = self._split(pt, r)
        n_tail = self.p - r
        n_x_tail = self.p - self.m - t_x
        phi = float(np.sum(pt.lam[tail_c]) + n_x_tail * s * s)
        d1 = 2.0 * s * n_tail - 2.0 * float(np.sum(pt.d[tail_c]))
        if len(top_c) and len(tail_c):
            gap = pt.lam[top_c][:, None] - pt.lam[tail_c][None, :]
            coupling = (pt.W[:, top_c].T @ pt.SW[:, tail_c]) ** 2
            tiny = 1e3 * self.m * _EPS * max(float(pt.lam[0]), 1e-300)
            if np.any((gap <= tiny) & (coupling > 0)):
                return phi, d1, -math.inf
            d2 = 2.0 * n_tail - 8.0 * float(np.sum(coupling / np.maximum(gap, tiny)))
        else:
            d2 = 2.0 * n_tail
        return phi, d1, d2

    def top_eig(self, pt: _Point, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """Top-``r`` singular triplets of :math:`B-sI` and :math:`\\phi_r` from the eigendecomposition ``pt``
        (:math:`v_k=w_k`, :math:`u_k=(B-sI)w_k/\\sigma_k`)."""
        s = pt.s
        n_x = self.p - self.m
        values = np.concatenate([pt.lam, np.full(n_x, s * s)])
        order = np.argsort(-values, kind="stable")
        sel = order[:r]
        sig = np.sqrt(values[sel])
        inner = sel < self.m
        Vc = pt.W[:, sel[inner]]
        Uc = (self.C @ Vc - s * Vc) / np.where(sig[inner] > 0, sig[inner], 1.0)
        if self.Qm is None:
            return Uc, sig, Vc, float(np.sum(values[order[r:]]))
        U = np.empty((self.p, len(sel)))
        V = np.empty((self.p, len(sel)))
        U[:, inner] = self.Qm @ Uc
        V[:, inner] = self.Qm @ Vc
        if not np.all(inner):  # (B - sI) w = -s w on the complement
            w = self.perp()[:, sel[~inner] - self.m]
            U[:, ~inner] = (-1.0 if s > 0 else 1.0) * w
            V[:, ~inner] = w
        return U, sig, V, float(np.sum(values[order[r:]]))

    def noise(self, s: float) -> float:
        """Rounding level of :math:`\\phi_r` on the eigenvalue route."""
        return 4.0 * self.p * _EPS * (float(self.singular_values[0]) + abs(s)) ** 2


def _descend(prob: _ShiftedSpectrum, r: int, s: float, tol: float, max_iter: int,
             bounds: tuple[float, float] | None = None):
    r"""Safeguarded Newton descent on :math:`\phi_r` from ``s``; returns ``(phi, s, point, iterations, converged)``.

    Each step tries Newton :math:`s-\phi_r'/\phi_r''` (when :math:`\phi_r''>0`) and falls back to the
    majoriser step :math:`s-\phi_r'/(2(p-r))`, which cannot increase :math:`\phi_r`. With ``bounds`` the
    steps are clipped to that bracket (the guard's descents stay in the basin they were started in). Stops when the step is
    at rounding level or the decrease the local model still promises is below ``1e-3 * tol`` relative
    (or at rounding level).
    """
    n_tail = prob.p - r
    scale = prob.norm / math.sqrt(prob.p) + abs(s)
    pt = prob.point(s)
    phi, d1, d2 = prob.derivatives(pt, r)
    it = 0
    converged = False
    while it < max_iter:
        it += 1
        # at rounding level (an exact fit) phi cannot rank steps; the derivative still can, if no kink
        loud = phi > 1e3 * prob.noise(pt.s)
        if not loud and d2 == -math.inf:
            converged = True
            break
        mm = pt.s - d1 / (2.0 * n_tail)
        if abs(mm - pt.s) <= 8 * _EPS * (abs(pt.s) + scale):
            converged = True
            break
        trial = [pt.s - d1 / d2, mm] if (d2 > 0 and math.isfinite(d2)) else [mm]
        if bounds is not None:
            trial = [min(max(x, bounds[0]), bounds[1]) for x in trial]
        accepted = None
        for x in trial:
            if not math.isfinite(x):
                continue
            q = prob.point(x)
            f, g, h = prob.derivatives(q, r)
            if f <= phi or (not loud and abs(g) < abs(d1)):
                accepted = (q, f, g, h)
                break
        if accepted is None:  # no decrease beyond rounding: at the minimum
            converged = True
            break
        step = abs(accepted[0].s - pt.s)
        pt, phi, d1, d2 = accepted
        # decrease still available from the local model (Newton where convex, else the majoriser)
        curv = d2 if (d2 > 0 and math.isfinite(d2)) else 2.0 * n_tail
        predicted = d1 * d1 / (2.0 * curv)
        loud = phi > 1e3 * prob.noise(pt.s)
        if step <= 8 * _EPS * (abs(pt.s) + scale) or (loud and predicted <= 1e-3 * tol * phi + prob.noise(pt.s)):
            converged = True
            break
    return phi, pt.s, pt, it, converged


def _shift_bound(prob: _ShiftedSpectrum, r: int) -> float:
    r"""Largest :math:`|s|` a minimiser of :math:`\phi_r` can have.

    Weyl: :math:`\sigma_{j}(B-sI)\ge|s|-\sigma_{p+1-j}(B)`, so
    :math:`\phi_r(s)\ge\sum_{i\le p-r}(|s|-\sigma_i(B))_+^2`, while a minimiser has
    :math:`\phi_r(s^\star)\le\phi_r(0)=\sum_{k>r}\sigma_k(B)^2`; the bound solves equality (a piecewise
    quadratic, solved in closed form piece by piece).
    """
    sv = prob.singular_values
    phi0 = float(np.sum(sv[r:] ** 2))
    x = np.sort(sv[: max(prob.p - r, 1)])  # ascending
    # on [x_j, x_{j+1}] the left side is q_j(b) = (j+1) b^2 - 2 b S1_j + S2_j (partial sums of x_0..x_j)
    j = np.arange(1, len(x) + 1)
    s1, s2 = np.cumsum(x), np.cumsum(x * x)
    disc = np.maximum(s1 * s1 - j * (s2 - phi0), 0.0)
    roots = (s1 + np.sqrt(disc)) / j
    upper = np.append(x[1:], np.inf)
    ok = (roots >= x - 1e-12 * (abs(x) + 1)) & (roots <= upper * (1 + 1e-12))
    b = float(roots[np.argmax(ok)]) if np.any(ok) else float(x[-1] + math.sqrt(phi0))
    return b * (1 + 1e-9) + 1e-300


def _grid(prob: _ShiftedSpectrum, ranks: int | Iterable[int], n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Shifts and squared singular values ``(grid, lam)`` for the guard scan (shared by all ranks).

    The grid spans :math:`|s|\le\max_r b_r` (:func:`_shift_bound`, an interval containing every minimiser
    of every :math:`\phi_r` scanned).
    """
    ranks = [int(ranks)] if isinstance(ranks, (int, np.integer)) else [int(r) for r in ranks]
    b = max(_shift_bound(prob, r) for r in ranks)
    if n is None:  # the spacing of the previous, wider grid (see _N_GRID_SMALL)
        n_old = _N_GRID_SMALL if prob.m <= 64 else _N_GRID_LARGE
        b_old = 2.0 * prob.norm / math.sqrt(max(prob.p - max(ranks), 1))
        n = min(n_old, max(_N_GRID_MIN, math.ceil(1 + (n_old - 1) * b / b_old)))
        n += 1 - n % 2  # odd: s = 0 is a grid point
    if n < 3:
        raise ValueError(f"scan_points must be >= 3, got {n}")
    grid = np.linspace(-b, b, int(n))
    return grid, prob.lam(grid)


def _make_fit(prob: _ShiftedSpectrum, r: int, phi, s, U, sig, V, it, conv, method) -> FitResult:
    nb = prob.norm
    phi = max(float(phi), 0.0)
    return FitResult(
        s=float(s),
        rho=math.sqrt(phi) / nb if nb > 0 else 0.0,
        identity_share=abs(s) * math.sqrt(prob.p) / nb if nb > 0 else 0.0,
        L_u=U,
        L_s=np.asarray(sig, dtype=np.float64),
        L_v=V,
        iterations=int(it),
        r=int(r),
        method=method,
        converged=bool(conv),
        phi=phi,
    )


def _fit(
    prob: _ShiftedSpectrum,
    r: int,
    tol: float,
    max_iter: int,
    scan: tuple[np.ndarray, np.ndarray] | None = None,
    warm: float | None = None,
    scan_points: int | None = None,
) -> FitResult:
    p = prob.p
    if r < 0:
        raise ValueError(f"rank r must be >= 0, got {r}")
    r = min(int(r), p)
    if r == 0:  # phi_0(s) = ||B||^2 - 2 s tr B + p s^2: closed form
        s = prob.trace / p
        phi = prob.norm**2 - p * s * s
        e = np.empty((p, 0))
        return _make_fit(prob, 0, phi, s, e, np.empty(0), e, 0, True, "closed-form")
    if r >= prob.rank:  # s = 0 and L = truncation of B is exact
        U, sig, V, phi = prob.top(0.0, r)
        return _make_fit(prob, r, phi, 0.0, U, sig, V, 0, True, "exact-rank")

    floor = (p * _EPS * prob.norm) ** 2
    res = _descend(prob, r, prob.trace / p, tol, max_iter)
    cands = [(res, "descent")]
    best_phi = res[0]

    # guard: a scan of phi_r on an interval holding every minimiser; descend from the best other basins
    if scan is None:
        scan = _grid(prob, r, scan_points)
    grid, glam = scan
    gphi = np.sum(glam[:, r:], axis=1)
    n = len(grid)
    local = [i for i in range(n) if (i == 0 or gphi[i] <= gphi[i - 1]) and (i == n - 1 or gphi[i] <= gphi[i + 1])]
    local.sort(key=lambda i: gphi[i])
    tried = 0
    for i in local:
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, n - 1)]
        if lo <= res[1] <= hi:
            continue  # the descent already sits in this basin
        if gphi[i] > 1.1 * best_phi + floor + prob.noise(grid[i]) or tried >= 3:
            break
        tried += 1
        r2 = _descend(prob, r, float(grid[i]), tol, max_iter, bounds=(float(lo), float(hi)))
        cands.append((r2, "scan"))
        best_phi = min(best_phi, r2[0])

    if warm is not None:
        w = prob.point(warm)
        if prob.derivatives(w, r)[0] < best_phi:
            cands.append((_descend(prob, r, float(warm), tol, max_iter), "warm-start"))

    (phi, s, pt, it, conv), method = min(cands, key=lambda c: c[0][0])
    if prob.m <= _EXACT_FINAL_M or phi <= 1e-6 * prob.norm**2:
        U, sig, V, phi = prob.top(s, r)  # accurate tail and triplets
        if phi <= 1e-6 * prob.norm**2:  # near-exact fit: rank the starts by the accurate phi
            for (_, s2, _, it2, conv2), method2 in cands:
                if s2 != s:
                    top2 = prob.top(s2, r)
                    if top2[3] < phi:
                        (U, sig, V, phi), s, it, conv, method = top2, s2, it2, conv2, method2
    else:
        U, sig, V, phi = prob.top_eig(pt, r)
    phi0 = float(np.sum(prob.singular_values[r:] ** 2))
    if s != 0.0 and phi0 <= phi + floor:  # ties go to s = 0
        U, sig, V, phi = prob.top(0.0, r)
        s, method = 0.0, "zero"
    return _make_fit(prob, r, phi, s, U, sig, V, it, conv, method)


def fit_identity_plus_low_rank(
    B: np.ndarray, r: int, *, tol: float = 1e-10, max_iter: int = 500, scan_points: int | None = None
) -> FitResult:
    r"""Best fit :math:`B\approx sI+L`, :math:`\operatorname{rank}L\le r`, in Frobenius norm (docs/attention_rmt.md §13 item 3).

    .. math::

        \rho_r=\min_{s,\ \operatorname{rank}L\le r}\frac{\|B-sI-L\|_F}{\|B\|_F}
              =\frac{\min_s\sqrt{\phi_r(s)}}{\|B\|_F},\qquad
        \phi_r(s)=\sum_{k>r}\sigma_k(B-sI)^2 .

    Parameters
    ----------
    B : ndarray, shape (p, p)
    r : int
        Rank of :math:`L` (values :math:`\ge p` are treated as :math:`p`).
    tol : float
        Relative-decrease tolerance of the descent.
    max_iter : int
        Maximal descent steps per start.
    scan_points : int, optional
        Points of the guard scan; by default as many as give the spacing of a 201-point (problem size
        :math:`m\le64`) or 41-point (larger) grid on :math:`|s|\le2\|B\|_F/\sqrt{p-r}`, at least 25.

    Returns
    -------
    FitResult

    Notes
    -----
    Algorithm (docs/attention_rmt.md §13 item 3; formulas in the module docstring):

    1. From :math:`s=\operatorname{tr}B/p`, a Newton descent on :math:`\phi_r(s)` safeguarded by the
       majoriser step :math:`s-\phi_r'/(2(p-r))` (monotone; one eigendecomposition of
       :math:`(B-sI)^\top(B-sI)` per step). A stationary point has
       :math:`\phi_r'(s)=-2\sum_{k>r}\sigma_k u_k^\top v_k=0`, i.e. :math:`s=\operatorname{tr}(B-L)/p`.
    2. Guard against local minima: a uniform scan of :math:`\phi_r` (eigenvalues only) on
       :math:`|s|\le b_r`, where :math:`b_r` solves
       :math:`\sum_{i\le p-r}(b-\sigma_i(B))_+^2=\phi_r(0)` (Weyl; every minimiser lies inside), then a
       descent from the best grid minima outside the first basin (at most 3, within 10 % of its value).
    3. Keep the best; :math:`s=0` is preferred when it ties (to rounding). For problems of size
       :math:`\le128`, or when :math:`\rho_r` is tiny, the final :math:`\phi_r` and :math:`L` come from an SVD of
       :math:`B-s^\star I` (relative accuracy of small singular values).

    Special cases are exact: :math:`r=0` gives :math:`s^\star=\operatorname{tr}B/p`;
    :math:`r\ge\operatorname{rank}B` gives :math:`s^\star=0,\ \rho_r=0` (e.g. a single head and
    :math:`r\ge d_h`).

    The scan is a guard, not a proof of global optimality: two basins of :math:`\phi_r` closer than the
    grid spacing can be confused (this happens for nearly symmetric matrices with clustered eigenvalues).

    Cost: one SVD of :math:`B`, the scan (``eigvalsh`` only) and a few eigendecompositions per start; for a
    rank-:math:`k` matrix with :math:`2k<p` every decomposition is of size :math:`m\le2k`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); u, v = rng.standard_normal((2, 30))
    >>> fit = fit_identity_plus_low_rank(0.7 * np.eye(30) + np.outer(u, v), 1)
    >>> round(fit.s, 8), fit.rho < 1e-8
    (0.7, True)
    """
    return _fit(_ShiftedSpectrum(B), int(r), tol, max_iter, scan_points=scan_points)


def resolve_ranks(ranks: Iterable[int | str], d_head: int | None, p: int | None = None) -> list[int]:
    """Sorted distinct ranks; ``"d_h"`` becomes ``d_head`` (dropped when ``None``).

    Raises
    ------
    ValueError
        A negative rank, an entry that is neither an integer nor ``"d_h"``, or (when ``p`` is given) a rank
        above :math:`p` (the fit at :math:`r=p` is already exact).
    """
    out = set()
    for r in ranks:
        if isinstance(r, str):
            if r != "d_h":
                raise ValueError(f"rank entries must be integers or 'd_h', not {r!r}")
            if d_head is not None:
                out.add(int(d_head))
        else:
            if isinstance(r, bool) or int(r) != r:
                raise ValueError(f"ranks must be integers, got {r!r}")
            if int(r) < 0:
                raise ValueError(f"ranks must be >= 0, got {r}")
            if p is not None and int(r) > p:
                raise ValueError(f"rank {int(r)} exceeds the embedding dimension p = {p} (ranks must be 0..{p})")
            out.add(int(r))
    return sorted(out)



def _unit(mu: Any, p: int) -> np.ndarray:
    mu = np.asarray(mu, dtype=np.float64).reshape(-1)
    if mu.shape != (p,):
        raise ValueError(f"mu_hat must have shape ({p},), got {mu.shape}")
    n = np.linalg.norm(mu)
    if not n > 0:
        raise ValueError("mu_hat must be non-zero")
    return mu / n


def head_diagnostics(
    B: np.ndarray,
    ranks: Iterable[int | str] = DEFAULT_RANKS,
    *,
    d_head: int | None = None,
    mu_hat: np.ndarray | None = None,
    tol: float = 1e-10,
    max_iter: int = 500,
    scan_points: int | None = None,
    factors: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict:
    r"""docs/attention_rmt.md §13 diagnostics 1–4 of one matrix (a head's :math:`B_h` or a layer sum :math:`B`).

    Parameters
    ----------
    B : ndarray, shape (p, p)
    ranks : iterable of int or "d_h"
        Ranks of the identity-plus-rank-r fit; ``"d_h"`` becomes ``d_head`` (dropped when ``d_head`` is
        ``None``). Deduplicated and sorted; each fit is warm-started from the previous rank's
        :math:`s^\star` when that is better, so :math:`\rho_r` is non-increasing in :math:`r` by construction.
    d_head : int, optional
    mu_hat : ndarray, shape (p,), optional
        Data direction :math:`\hat\mu` (normalised here) for item 4.
    tol, max_iter, scan_points
        Passed to :func:`fit_identity_plus_low_rank` (the scan is computed once and shared by all ranks).
    factors : (ndarray, ndarray), optional
        Thin factors with ``B == F1 @ F2.T`` (e.g. :meth:`AttentionHeads.head_factors`): the SVD of
        :math:`B` then costs :math:`O(pd^2)`.

    Returns
    -------
    dict
        ``p``, ``fro_norm`` :math:`\|B\|_F`, ``spectral_norm``, ``singular_values`` (all :math:`p`, descending),
        ``numerical_rank`` (:math:`\sigma_k>p\,\varepsilon\,\sigma_1`), ``participation_ratio``
        :math:`(\sum\sigma)^2/\sum\sigma^2`, ``trace_over_p`` :math:`\operatorname{tr}B/p`,
        ``sym_fro_ratio`` :math:`\|S\|_F/\|B\|_F` with :math:`S=(B+B^\top)/2`, ``sym_eig_min``,
        ``sym_eig_max``, ``sym_frac_negative`` (eigenvalues of :math:`S`), and ``fits``: a list of dicts,
        one per rank, with ``r``, ``s_star``, ``rho``, ``identity_share``, ``L_singular_values``,
        ``iterations``, ``method``, ``fit`` (the :class:`FitResult`) and, with ``mu_hat``, ``alignment``
        :math:`[(\hat\mu^\top u_k)(\hat\mu^\top v_k)]_k` (the analogue of :math:`\rho_K\rho_Q`) and
        ``mu_L_mu`` :math:`\hat\mu^\top L\hat\mu=\sum_k\sigma_k(\hat\mu^\top u_k)(\hat\mu^\top v_k)`.
    """
    prob = _ShiftedSpectrum(B, factors)
    p = prob.p
    sv = prob.singular_values
    nb = prob.norm
    S = 0.5 * (prob.B + prob.B.T)
    if prob.Qm is None:
        eig = np.linalg.eigvalsh(S)
    else:  # S = Q_m S_C Q_m^T: its eigenvalues are those of S_C and p - m zeros
        eig = np.sort(np.concatenate([np.linalg.eigvalsh(prob.S_C), np.zeros(p - prob.m)]))
    rs = resolve_ranks(ranks, d_head)
    mu = None if mu_hat is None else _unit(mu_hat, p)
    out: dict[str, Any] = {
        "p": p,
        "fro_norm": nb,
        "spectral_norm": float(sv[0]),
        "singular_values": sv.tolist(),
        "numerical_rank": prob.rank,
        "participation_ratio": float(np.sum(sv) ** 2 / np.sum(sv**2)) if nb > 0 else 0.0,
        "trace_over_p": prob.trace / p,
        "sym_fro_ratio": float(np.linalg.norm(S) / nb) if nb > 0 else float("nan"),
        "sym_eig_min": float(eig[0]),
        "sym_eig_max": float(eig[-1]),
        "sym_frac_negative": float(np.mean(eig < 0)),
        "fits": [],
    }
    need_scan = [r for r in rs if 0 < min(r, p) < prob.rank]
    scan = _grid(prob, need_scan, scan_points) if need_scan else None
    warm = None
    for r in rs:
        fit = _fit(prob, r, tol, max_iter, scan=scan, warm=warm, scan_points=scan_points)
        warm = fit.s
        entry = {
            "r": r,
            "s_star": fit.s,
            "rho": fit.rho,
            "identity_share": fit.identity_share,
            "L_singular_values": fit.L_s.tolist(),
            "iterations": fit.iterations,
            "method": fit.method,
            "fit": fit,
        }
        if mu is not None:
            a = (mu @ fit.L_u) * (mu @ fit.L_v)
            entry["alignment"] = a.tolist()
            entry["mu_L_mu"] = float(np.sum(fit.L_s * a))
        out["fits"].append(entry)
    return out
