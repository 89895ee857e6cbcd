r"""Replica-symmetric fixed point of ridge ERM for single-location regression (docs/slr.md §10), generated.

The equations come from :mod:`attnlimits.derivations.slr.replica` as generated kernels (this module never
imports ``derivations``): the caller passes, per sequence length, the dict of
:class:`attnlimits.symbolic.codegen.Kernel` objects returned by ``attnlimits.derivations.slr.replica.replica_kernels``;
:func:`compile_rs_kernels` prints and loads them.  ``attnlimits.verify.slr.replica`` has the wrappers that
take activation names.

Method (§10.6, with the two qualifications listed there)
--------------------------------------------------------
- **Frozen rule.** The channel expectations run over one common-random-number sample of
  :math:`(\varepsilon^*,\chi^*,z^*,\xi,\xi',\xi_0)`: ``replicates`` independent scrambled Sobol
  blocks of ``points`` points each in dimension :math:`4L+1` (+1 for the location draw on max-SLR
  at finite ν).  Tensor Gauss–Hermite is not used: the smallest channel integral is
  5-dimensional (:math:`L=2`) and its integrand is only piecewise smooth (prox minima switching),
  where Gauss–Hermite loses its rate.  The spread of the replicates is the error estimate.
- **Prox.** Per sample, the reduced objective :math:`F(\chi)` (§10.3) is minimised from the
  multistart of §10.6 (:math:`\omega^\chi` and :math:`\omega^\chi+t\sqrt{V_k}e_\ell`,
  :math:`t\in\{\pm2,\pm5,\pm10\}`) by a safeguarded Newton method (Newton step when it is a descent
  direction, else a scaled gradient step; steps clipped to length 1; backtracking until
  :math:`F` decreases), vectorised over samples × starts, keeping the lowest :math:`F`.  The starts
  are recomputed from the cavity fields at every call — **no warm start across outer
  iterations** — so the frozen map is a deterministic function of the order parameters.  A start
  whose iterate meets another start's of the same sample (within 1e-4, Hessian positive definite)
  is merged into it, which saves about half the Newton work and changes no minimum.
  Affine (linear) activations use the exact prox: all real roots of the residual polynomial,
  lowest objective kept.  At the solution :math:`\mathcal V^{-1}+H\succ0` is checked and the failing
  fraction reported; the fraction of samples whose best two starts end in different minima within
  ``1e-6`` of each other in :math:`F` (ambiguous selection) is reported too.
- **Outer fixed point.**  :math:`x=(m_k,q_k,V_k,m_v,q_v,V_v)\mapsto` channel :math:`\mapsto`
  conjugates :math:`\mapsto` prior.  Ladder: damped iteration then Anderson on one replicate (to
  ``coarse_tol``); Anderson on the full rule down to ``walk_at`` (1e-3); then the **piece walk**:
  the frozen map is smooth except where a sample's selected prox minimum switches, so Newton
  (finite-difference Jacobian, chord steps) runs on the *selection-frozen surrogate* (each sample's
  prox started only from the minimum selected at the current point — smooth, and equal to the
  frozen map on that piece; cheap, no screening) and every candidate is checked on the frozen map
  itself, until its residual is below ``tol``.  If that stalls, the slower damped → Anderson →
  Newton ladder is retried from the best point.  Converged when :math:`\|G(x)-x\|_\infty\le`
  ``tol`` (default :math:`10^{-9}`, relative, far below the integration error).  Failure raises
  :class:`attnlimits.numeric.ConvergenceError`.
- **Error and stability.** The Jacobian :math:`J=\partial G/\partial x` at the solution gives the
  stability (spectral radius) and the replicate error by the delta method:
  :math:`\delta x_r=(I-J)^{-1}(G_r(x^*)-x^*)`; an observable of replicate r is evaluated at
  :math:`x_r=x^*+\delta x_r` with that replicate's channel averages carried to :math:`x_r` to first
  order (:math:`\partial\bar a/\partial x` from the same finite differences as :math:`J`); the
  standard error of every reported quantity is the replicate standard deviation over :math:`\sqrt R`
  (checked against the per-replicate nonlinear fixed points, ``tests/numeric/test_replica_error.py``).
  J is taken by finite differences of the selection-frozen surrogate anchored at the solution
  (equal to the frozen map's on its piece), whose prox is then one Newton step from the anchored
  minima (the implicit-function linearisation: more accurate than differencing a converged prox, and
  a seven-evaluation Jacobian costs about half a multistart map at 4 × 8192).

Cost: one map evaluation is one vectorised prox over ``replicates × points`` samples (about 90 % of
the time); a fixed point takes two multistart maps and about ten cheaper surrogate evaluations along a
curve (softmax, spiked, L = 2, 2026-12-02: 0.33–0.38 s CPU at 4 × 1024 points from the informed start,
error included; 0.24 s per point along a learning curve; 0.7–1 s per smooth point at 4 × 8192).
See ``benchmarks/bench_slr_replica.py``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._portable_solver import ConvergenceError

__all__ = ["RSKernels", "RSRule", "RSFixedPoint", "compile_rs_kernels", "make_rule", "rs_map", "rs_fixed_point",
           "rs_learning_curve", "rs_tune_lambda", "rs_branches", "rs_branch_search", "rs_select_equilibrium",
           "rs_replicon", "informed_start", "small_overlap_start",
           "UNKNOWNS"]

UNKNOWNS = ("m_k", "q_k", "V_k", "m_v", "q_v", "V_v")
_SYSTEM = "slr RS fixed point (docs/slr.md §10)"


# =============================================================================================
# kernels
# =============================================================================================

@dataclass
class RSKernels:
    """Loaded generated kernels of one activation: ``modules[L]`` holds the functions of
    ``attnlimits.derivations.slr.replica.replica_kernels`` for length ``L``; ``affine`` says whether the exact
    polynomial prox is available; ``shift_invariant`` whether σ(χ + c1) = σ(χ) was proved (the
    ``shift_invariant`` kernel is present), so that the multistart screens rays in 1⊥ only."""

    name: str
    modules: dict
    affine: bool
    sources: dict = field(default_factory=dict, repr=False)
    shift_invariant: bool = False


_LOADED: dict = {}


def compile_rs_kernels(name: str, kernel_sets: dict) -> RSKernels:
    """Print and load the kernels ``kernel_sets[L] = {kernel name: Kernel}`` (cached by source hash)."""
    from attnlimits.symbolic.codegen import ModuleBuilder, expression_hash, load_module

    mods, srcs, affine = {}, {}, True
    for L, ks in sorted(kernel_sets.items()):
        ks = dict(ks)
        h = expression_hash(*[o for k in ks.values() for o in k.outputs])
        key = (name, int(L), h)
        if key not in _LOADED:
            mb = ModuleBuilder(f"RS kernels of {name}, L={L}", "numpy", h,
                               description="Generated from attnlimits.derivations.slr.replica (docs/slr.md §10).")
            for k in ks.values():
                mb.add_kernel(k)
            mb.add_source("import scipy.special  # noqa: E402")
            src = mb.source()
            _LOADED[key] = (load_module(src, f"attnlimits_slr_rs_{abs(hash(key))}"), src)
        mods[int(L)], srcs[int(L)] = _LOADED[key]
        affine = affine and hasattr(mods[int(L)], "affine_poly")
    shift = all(hasattr(m_, "shift_invariant") for m_ in mods.values())
    return RSKernels(name, mods, affine, srcs, shift_invariant=shift)


# =============================================================================================
# frozen integration rule
# =============================================================================================

@dataclass
class RSRule:
    """Frozen samples for one length: teacher fields, Gaussian parts, replicate blocks."""

    L: int
    weight: float  # P(L)
    eps: np.ndarray  # (n,) location index
    chistar: np.ndarray  # (n, L)
    zstar: np.ndarray
    xi: np.ndarray
    xip: np.ndarray
    xi0: np.ndarray  # (n,)
    replicates: int
    points: int
    method: str

    @property
    def n(self) -> int:
        return self.eps.shape[0]


def make_rule(model: str, nu: float, lengths, *, points: int = 4096, replicates: int = 4, seed: int = 0) -> list:
    """Frozen rules, one per length of ``lengths`` (a sequence of ``(L, P(L))``).

    Spiked (ε* = 1 by permutation equivariance): χ* = g + √ν e₁.  Max-SLR: χ* = g, ε* the argmax
    (ν = ∞) or drawn from softmax(νχ*) by an extra Sobol coordinate (finite ν).
    """
    from attnlimits.symbolic.gaussian import sobol_normal
    from scipy.special import ndtr

    rules = []
    for L, p in lengths:
        L = int(L)
        extra = 1 if (model == "max" and not math.isinf(nu)) else 0
        dim = 4 * L + 1 + extra
        pts = sobol_normal(points, dim, seed=seed + 1009 * L, replicates=replicates).reshape(-1, dim)
        g, zs, xi, xip, xi0 = (pts[:, :L], pts[:, L:2 * L], pts[:, 2 * L:3 * L], pts[:, 3 * L:4 * L], pts[:, 4 * L])
        n = pts.shape[0]
        if model == "spiked":
            chistar = g.copy()
            chistar[:, 0] += math.sqrt(nu)
            eps = np.zeros(n, dtype=int)
        elif math.isinf(nu):
            chistar, eps = g, g.argmax(axis=1)
        else:
            u = ndtr(pts[:, 4 * L + 1])
            z = nu * g
            z = z - z.max(axis=1, keepdims=True)
            w = np.exp(z)
            c = np.cumsum(w / w.sum(axis=1, keepdims=True), axis=1)
            eps = np.minimum((u[:, None] > c).sum(axis=1), L - 1)
            chistar = g
        rules.append(RSRule(L, float(p), eps, np.ascontiguousarray(chistar), np.ascontiguousarray(zs),
                            np.ascontiguousarray(xi), np.ascontiguousarray(xip), np.ascontiguousarray(xi0),
                            replicates, points, f"sobol {replicates}x{points} (dim {dim})"))
    return rules


# =============================================================================================
# the per-sample prox
# =============================================================================================

_START_T = (0.25, -0.25, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0, 3.0, -3.0, 4.0, -4.0, 5.0, -5.0, 7.0, -7.0,
            10.0, -10.0)


def _cols(a):
    return [a[:, i] for i in range(a.shape[1])]


def _unpack_sym(flat, L):
    """Upper-triangle row-major list → (n, L, L) symmetric array."""
    n = np.broadcast_shapes(*[np.shape(f) for f in flat])[0]
    H = np.empty((n, L, L))
    k = 0
    for i in range(L):
        for j in range(i, L):
            H[:, i, j] = flat[k]
            H[:, j, i] = flat[k]
            k += 1
    return H


def _pd_and_inverse_diagonal(P, shift=None):
    """For a batch of symmetric matrices ``P`` (n, m, m): whether each is positive definite and the
    diagonal of its inverse, (n,) bool and (n, m).  With ``shift`` (m,), ``P`` is instead the upper
    triangle (row-major list of (n,) arrays, as the generated kernels return it) of
    P − diag(``shift``).

    LDLᵀ without pivoting, vectorised over the batch on (n,) arrays (the entries of L and D one by
    one; m ≤ 10 here): P ≻ 0 iff every pivot D_j > 0 (the pivots are the ratios of consecutive
    leading principal minors: Sylvester) — the same test as a positive smallest eigenvalue, at a
    fraction of ``eigvalsh``'s cost — and for P ≻ 0 the factorisation is stable.  With M = L⁻¹ (unit
    lower triangular), diag(P⁻¹)_i = Σ_k M_ki² / D_k.  About 1/m of a Gauss–Jordan inverse's work
    (m = 4: 6.7 → 1.5 ms on 32 768 matrices).  Matrices that are not positive definite (or give a
    non-finite result) are inverted again by LU with pivoting (``numpy.linalg.inv``).
    """
    if shift is None:
        n, m, _ = P.shape
        low = {(i, j): P[:, i, j] for i in range(m) for j in range(i + 1)}
    else:
        m = len(shift)
        n = np.broadcast_shapes(*[np.shape(f) for f in P])[0]
        low, k = {}, 0
        for i in range(m):
            for j in range(i, m):
                low[j, i] = np.broadcast_to(np.asarray(P[k], float), (n,)) + shift[i] if i == j else P[k]
                k += 1
    Lf, D = {}, []
    pd = np.ones(n, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for j in range(m):
            dj = np.array(low[j, j], float)
            for k in range(j):
                dj -= Lf[j, k] * Lf[j, k] * D[k]
            pd &= dj > 0
            D.append(dj)
            for i in range(j + 1, m):
                v = np.array(low[i, j], float)
                for k in range(j):
                    v -= Lf[i, k] * Lf[j, k] * D[k]
                Lf[i, j] = v / dj
        Mi = {}
        for j in range(m):
            for i in range(j + 1, m):
                v = -Lf[i, j]
                for k in range(j + 1, i):
                    v = v - Lf[i, k] * Mi[k, j]
                Mi[i, j] = v
        Dinv = [1.0 / d for d in D]
        diag = np.empty((n, m))
        tot = np.zeros(n)
        for i in range(m):
            acc = Dinv[i].copy()
            for k in range(i + 1, m):
                acc += Mi[k, i] * Mi[k, i] * Dinv[k]
            diag[:, i] = acc
            tot += acc
    redo = ~pd | ~np.isfinite(tot)  # a NaN or ±inf entry makes the sum one
    if redo.any():
        Pr = P[redo] if shift is None else _unpack_sym([np.broadcast_to(f, (n,))[redo] for f in P], m) + np.diag(shift)
        with np.errstate(all="ignore"):
            diag[redo] = np.diagonal(np.linalg.inv(Pr), axis1=1, axis2=2)
    return pd, diag


def _newton_direction(g, Hup, L):
    """-H⁻¹g for a batch: g (L, m), Hup the upper triangle (row-major) of H as a list of (m,) arrays.
    Closed form (adjugate) for L ≤ 3, batched LU beyond; a singular H gives a non-finite direction."""
    if L == 1:
        return -g / Hup[0]
    if L == 2:
        a, b, c = Hup
        det = a * c - b * b
        return np.stack([-(c * g[0] - b * g[1]) / det, -(a * g[1] - b * g[0]) / det])
    if L == 3:
        a, b, c, d, e, f = Hup  # [[a b c] [b d e] [c e f]]
        A00, A01, A02 = d * f - e * e, c * e - b * f, b * e - c * d
        A11, A12, A22 = a * f - c * c, b * c - a * e, a * d - b * b
        det = a * A00 + b * A01 + c * A02
        return np.stack([-(A00 * g[0] + A01 * g[1] + A02 * g[2]) / det,
                         -(A01 * g[0] + A11 * g[1] + A12 * g[2]) / det,
                         -(A02 * g[0] + A12 * g[1] + A22 * g[2]) / det])
    H = _unpack_sym(Hup, L)
    try:
        return -np.linalg.solve(H, g.T[..., None])[..., 0].T
    except np.linalg.LinAlgError:
        out = np.full((L, g.shape[1]), np.nan)
        det = np.linalg.det(H)
        ok = np.isfinite(det) & (det != 0)
        if ok.any():
            out[:, ok] = -np.linalg.solve(H[ok], g.T[ok][..., None])[..., 0].T
        return out


def _uphill_ray_starts(Fc, blocks, pick, off):
    """The ray starts (n, S) that a one-dimensional screened profile puts in ω^χ's basin: the profile
    rises from ω^χ to the ray's first point and that point is the ray's best (so, as far as the grid
    sees, F rises from ω^χ along that half-line).  In one dimension Newton from such a start and from
    ω^χ (always kept) end in the same minimum unless a basin narrower than the grid's first step lies
    between them — one the ray start alone would not find reliably either."""
    n, S = pick.shape
    up = np.zeros((n, S), bool)
    for j, (a, b) in enumerate(blocks[1:], start=1):
        first = a + int(np.argmin(np.abs(off[a:b]).max(axis=1)))  # the ray's point nearest ω^χ
        up[:, j] = (pick[:, j] == first) & ~(Fc[first] < Fc[0])
    return up


def _posdef(Hup, L):
    """Positive definiteness of each H of a batch (leading principal minors for L ≤ 3)."""
    if L == 2:
        a, b, c = Hup
        return (a > 0) & (a * c - b * b > 0)
    if L == 3:
        a, b, c, d, e, f = Hup
        A00, A01, A02 = d * f - e * e, c * e - b * f, b * e - c * d
        return (a > 0) & (a * d - b * b > 0) & (a * A00 + b * A01 + c * A02 > 0)
    H = _unpack_sym(Hup, L)
    with np.errstate(invalid="ignore"):
        ev = np.linalg.eigvalsh(np.where(np.isfinite(H), H, 0.0))
    return (ev[:, 0] > 0) & np.isfinite(H).all(axis=(1, 2))


#: samples per call of a generated kernel: the CSE'd kernels keep every intermediate alive until they
#: return (about 55 temporaries for F_newton at L = 2), so on long arrays they run from memory rather
#: than cache; in blocks of this many samples they are 1.5-1.8x faster (measured, softmax L = 2: F_newton
#: on 98304 starts 27 → 18 ms, the screening F_value on 41 × 32768 candidates 71 → 39 ms at 2048
#: columns), with bit-identical results (the kernels are elementwise)
_CHUNK = 4096


def _chunked(fn, cols, scalars, m, chunk=_CHUNK):
    """``fn(*cols, *scalars)`` for elementwise kernels, in blocks of ``chunk`` along the last axis of
    the (…, m) arrays ``cols``; returns the outputs as arrays of shape (…, m)."""
    if m <= chunk:
        out = fn(*cols, *scalars)
        shape = np.broadcast_shapes(*[np.shape(c) for c in cols])
        return [np.broadcast_to(np.asarray(o, float), shape) for o in out]
    shape = np.broadcast_shapes(*[np.shape(c) for c in cols])
    outs = None
    for a in range(0, m, chunk):
        b = min(m, a + chunk)
        res = fn(*[c[..., a:b] if np.shape(c)[-1] == m else c for c in cols], *scalars)
        if outs is None:
            outs = [np.empty(shape) for _ in res]
        for o, r in zip(outs, res):
            o[..., a:b] = r
    return outs


def _prox_newton(mod, wchi, wz, y, V_k, V_v, *, max_iter=60, gtol=1e-9, keep_starts=None, trace=None,
                 dedup_tol=1e-4, dedup_min=32, starts=None, stats=None, shift_invariant=False, prune=True,
                 newton_steps=0):
    """Minimise F over χ for every sample; returns χ̂ (n, L) and diagnostics.

    Multistart (§10.6, screened): F is evaluated at ω^χ and at ω^χ + t√V_k d for the directions
    d ∈ {e_ℓ} ∪ {(e_ℓ − e_ℓ')/√2} (the differences matter for normalised activations, whose
    non-trivial directions are orthogonal to 1) and t ∈ ±{0.25, …, 10}; safeguarded Newton runs from
    ω^χ and from the best candidate of each ray (1 + L(L+1) starts; ``keep_starts`` keeps only the
    lowest few, ``"all"`` every candidate), and the lowest minimum is kept.
    ``shift_invariant`` (σ(χ + c1) = σ(χ), proved by SymPy: softmax): the minimiser's offset lies in
    1⊥ and an e_ℓ ray screens the points of the difference rays at t/√2 plus a penalty along 1, so
    only the difference rays are screened, on the union of both grids: 1 + L(L−1) starts (3 instead
    of 7 at L = 2).  Measured on 4×8192 softmax samples at three overlaps: the prox 1.6–2.3× faster,
    the same minimum on all samples but one, where it is lower.

    Cost (none of it changes which minimum is found beyond the Newton tolerance): the arrays are
    laid out coordinate-major and compacted to the active starts; the kernels run in blocks of
    :data:`_CHUNK` samples (cache-resident temporaries); the Newton direction is the
    closed-form (adjugate) solve for L ≤ 3; and a start whose iterate comes within ``dedup_tol``
    (relative, ∞-norm) of another live start of the same sample while its Hessian is positive
    definite is merged into it (it would follow it into the same minimum): it stops iterating and
    receives the other start's final point, so the selection and the multi-minimum diagnostics see
    every start.  ``dedup_tol=0`` disables the merging.  Starts are never carried over between
    calls (no warm start), so the result is a deterministic function of the inputs.

    ``prune`` (softmax-like at L = 2: shift-invariant, so the prox is one-dimensional — F splits into
    a function of χ₁ − χ₂ plus a penalty along 1 minimised at ω^χ's component, and Newton stays on
    that line): a ray start is not run when the screened profile rises from ω^χ to the ray's first
    point and that point is the ray's best; it lies in ω^χ's basin as far as the grid sees, and
    receives the final point of ω^χ's start (always run).  About half the Newton starts, 1.5× faster
    prox.  Measured (prune against ``prune=False``): the same minimum on every one of 425 984
    samples (13 overlaps along the benchmark curve and the tests' points, 4×8192); the
    multi-minimum fraction falls slightly (1.62e-2 → 1.47e-2 at α = 1), as the pruned starts' own
    higher minima are no longer seen.  Not applied in more dimensions, where rising along one line
    says nothing of the basin (erf_fixed, L = 2: 35 of 212 992 samples would end higher).

    ``starts`` (n, L), if given, replaces the multistart by one given start per sample: that is the
    selection-frozen surrogate used by the outer solver's piece walk (:func:`rs_map` ``anchor``),
    never the map itself.  With ``starts``, ``newton_steps`` k > 0 takes k plain Newton steps from
    them instead of the safeguarded iteration to ``gtol`` (for starts that are minima at a nearby
    point: finite differences, k = 1, and the walk's loosely solved first round, k = 2); a sample
    whose step is not finite (k ≥ 2: or whose H is not positive definite, or whose step exceeds the
    clip) gets the safeguarded iteration.  The diagnostics of such a call are not measured (zeros).
    """
    n, L = wchi.shape
    wcT = np.ascontiguousarray(wchi.T)  # (L, n)
    wzT = np.ascontiguousarray(wz.T)
    y = np.ascontiguousarray(y, dtype=float)
    dirs = [] if shift_invariant else [np.eye(L)[ell] for ell in range(L)]
    for i in range(L):
        for j in range(i + 1, L):
            dirs.append((np.eye(L)[i] - np.eye(L)[j]) / math.sqrt(2))
    # candidates ordered ω^χ, then per direction the positive t's and the negative t's (ascending |t|),
    # so that every ray is one contiguous block of rows
    ts = np.array(_START_T)
    if shift_invariant:
        # σ(χ + c1) = σ(χ): the prox offset is orthogonal to 1, and a ray along e_ℓ screens the
        # points of the difference rays at t/√2 (its component along 1 only adds penalty): those
        # points join the difference rays' grids instead of making rays of their own
        ts = np.unique(np.concatenate([ts, ts / math.sqrt(2)]))
    tpos, tneg = ts[ts > 0], ts[ts < 0]
    tord = np.concatenate([tpos, tneg])
    nt, npos = tord.size, tpos.size
    off = np.concatenate([np.zeros((1, L))] + [np.outer(tord, d_) * math.sqrt(V_k) for d_ in dirs])  # (S0, L)
    S0 = off.shape[0]
    wcT = np.ascontiguousarray(wchi.T)  # (L, n)
    wzT = np.ascontiguousarray(wz.T)
    y = np.ascontiguousarray(y, dtype=float)
    if starts is not None:
        # one given start per sample (the selection-frozen surrogate of the piece walk): no screening
        S, M = 1, n
        samp = np.arange(n)
        X = np.array(starts, float).T.copy()
        if newton_steps:
            # plain Newton steps from starts near their minima, no line search: one from minima at a
            # point O(h) away (finite differences of the surrogate: the step's error is O(h²), so the
            # quotient's is O(h)); two from minima a few 1e-2 away (error O(Δ⁴): the walk's first,
            # loosely solved round).  Beyond one step a sample keeps them only while H ≻ 0 and the
            # step is within the clip; the others, and any non-finite step, get the full iteration.
            Xk = X.copy()
            ok = np.ones(n, bool)
            clip = max(1.0, math.sqrt(V_k))
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                for _ in range(int(newton_steps)):
                    out = _chunked(mod.F_newton, [*Xk, *wcT, *wzT, y], (V_k, V_v), n)
                    d = _newton_direction(np.stack(out[1:1 + L]), out[1 + L:], L)
                    ok &= np.isfinite(d).all(axis=0)
                    if newton_steps > 1:
                        ok &= _posdef(out[1 + L:], L) & (np.sqrt((d * d).sum(axis=0)) <= clip)
                    Xk += np.where(ok, d, 0.0)
            if not ok.all():
                bad = np.flatnonzero(~ok)
                sub, _ = _prox_newton(mod, wchi[bad], wz[bad], y[bad], V_k, V_v, max_iter=max_iter, gtol=gtol,
                                      starts=X[:, bad].T, shift_invariant=shift_invariant)
                Xk[:, bad] = sub.T
            return Xk.T, {"prox_iterations": int(newton_steps), "unconverged_fraction": 0.0,
                          "ambiguous_fraction": 0.0, "multi_minima_fraction": 0.0}
    else:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            # screening: every candidate ω^χ + off_s, broadcast (S0, n) without copies of ω^χ, ω^z, y
            Fc = np.empty((S0, n))
            cs = max(256, (8 * _CHUNK) // S0)  # about 8·_CHUNK candidates per block
            for a in range(0, n, cs):
                b = min(n, a + cs)
                Fc[:, a:b] = mod.F_value(*[wcT[l][None, a:b] + off[:, l][:, None] for l in range(L)],
                                         *[w[None, a:b] for w in wcT], *[w[None, a:b] for w in wzT], y[None, a:b],
                                         V_k, V_v)[0]
        Fc = np.where(np.isfinite(Fc), Fc, np.inf)
        # the best candidate of ω^χ itself and of each ray (direction, sign): one start per region, so a
        # distant basin is never screened out by nearer candidates of the same basin
        blocks = [(0, 1)]
        for k in range(len(dirs)):
            blocks += [(1 + k * nt, 1 + k * nt + npos), (1 + k * nt + npos, 1 + (k + 1) * nt)]
        pick = np.stack([a + np.argmin(Fc[a:b], axis=0) if b - a > 1 else np.zeros(n, int) for a, b in blocks], axis=1)
        if keep_starts == "all":
            pick = np.broadcast_to(np.arange(S0), (n, S0))
        elif keep_starts is not None and keep_starts < pick.shape[1]:
            Fp = np.take_along_axis(Fc.T, pick, axis=1)
            order0 = np.argsort(Fp, axis=1, kind="stable")[:, :keep_starts]
            pick = np.take_along_axis(pick, order0, axis=1)
        S = pick.shape[1]
        M = n * S
        samp = np.repeat(np.arange(n), S)  # sample of each start (sample-major, like the selection below)
        pf = pick.reshape(-1)
        X = np.stack([wcT[l][samp] + off[pf, l] for l in range(L)])  # (L, M)
    Fcur = np.full(M, np.inf)
    gnorm = np.full(M, np.inf)
    alias = np.arange(M)
    dropped = np.zeros(M, bool)
    if starts is None and keep_starts is None and prune and shift_invariant and L == 2:
        # a one-dimensional prox (see the docstring): an uphill ray start is not run, it receives the
        # final point of ω^χ's start (column 0)
        pr = np.flatnonzero(_uphill_ray_starts(Fc, blocks, pick, off).reshape(-1))
        alias[pr] = (pr // S) * S
        dropped[pr] = True
    act = np.flatnonzero(~dropped)
    xa = X[:, act]
    wc = wcT[:, samp[act]]
    wzz = wzT[:, samp[act]]
    yy = y[samp[act]]
    thr = gtol * (1.0 + 1.0 / V_k)
    clip = max(1.0, math.sqrt(V_k))
    it = 0
    ndup = 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        while act.size and it < max_iter:
            it += 1
            m = act.size
            out = _chunked(mod.F_newton, [*xa, *wc, *wzz, yy], (V_k, V_v), m)
            Fa = out[0]
            g = np.stack(out[1:1 + L])
            Hup = out[1 + L:]
            Fcur[act] = Fa
            gn = np.sqrt((g * g).sum(axis=0))
            gnorm[act] = gn
            keep = gn > thr
            if dedup_tol and S > 1 and it >= 2 and keep.sum() >= dedup_min:
                # a start whose iterate coincides with another start's of the same sample (in a convex
                # region) follows that start into the same minimum: drop it, and copy the other's result
                cand = np.zeros(M, bool)
                cand[act[keep]] = _posdef([h[keep] for h in Hup], L)
                has = np.zeros(n, bool)
                has[samp[act[keep]]] = True
                rows = np.flatnonzero(has)
                base = (rows * S)[:, None]
                lv = ~dropped.reshape(n, S)[rows]
                o = np.argsort(np.where(lv, X[0].reshape(n, S)[rows], np.inf), axis=1, kind="stable")
                pair = np.take_along_axis(lv, o[:, :-1], axis=1) & np.take_along_axis(lv, o[:, 1:], axis=1)
                a_, b_ = (base + o[:, :-1])[pair], (base + o[:, 1:])[pair]
                close = np.abs(X[:, a_] - X[:, b_]).max(axis=0) <= dedup_tol * (1.0 + np.abs(X[:, a_]).max(axis=0))
                close &= cand[a_] | cand[b_]
                if close.any():
                    a_, b_ = a_[close], b_[close]
                    # drop the candidate; if both are, the one with the larger F (then the later start)
                    drop_b = cand[b_] & (~cand[a_] | (Fcur[b_] > Fcur[a_]) | ((Fcur[b_] == Fcur[a_]) & (b_ > a_)))
                    dr = np.where(drop_b, b_, a_)
                    sv = np.where(drop_b, a_, b_)
                    alias[dr] = sv
                    dropped[dr] = True
                    keep &= ~dropped[act]
                    ndup += dr.size
            if trace is not None:
                trace.append(int(keep.sum()))
            if not keep.any():
                break
            if not keep.all():
                act, xa, Fa, g = act[keep], xa[:, keep], Fa[keep], g[:, keep]
                Hup = [h[keep] for h in Hup]
                wc, wzz, yy = wc[:, keep], wzz[:, keep], yy[keep]
            m = act.size
            d = _newton_direction(g, Hup, L)
            dg = (d * g).sum(axis=0)
            bad = ~np.isfinite(d).all(axis=0) | (dg >= 0)
            if bad.any():
                d[:, bad] = -V_k * g[:, bad]
                dg = (d * g).sum(axis=0)
            dn = np.sqrt((d * d).sum(axis=0))
            scale = np.minimum(1.0, clip / np.maximum(dn, 1e-300))
            d *= scale
            dg *= scale
            adg = np.abs(dg)
            step = np.ones(m)
            accepted = np.zeros(m, bool)
            xnew = xa.copy()
            todo = None
            flat = (adg <= 1e-15 * (1.0 + np.abs(Fa))) & ~bad & (dn * scale <= 1e-7 * (1 + np.abs(xa).max(axis=0)))
            if flat.any():
                # the predicted decrease is below the rounding of F, so no decrease can be measured
                # (the search below would halve the step 12 times and fail): a Newton step below
                # 1e-7 is taken in full there (the iterate is in the quadratic range), and the next
                # iteration's gradient test decides
                accepted[flat] = True
                xnew[:, flat] = xa[:, flat] + d[:, flat]
                todo = np.flatnonzero(~flat)
            for _ in range(12 if todo is None or todo.size else 0):
                if todo is None:
                    xt = xa + d
                    Ft = _chunked(mod.F_value, [*xt, *wc, *wzz, yy], (V_k, V_v), m)[0]
                    st, Fo, ad = step, Fa, adg
                else:
                    st = step[todo]
                    xt = xa[:, todo] + st * d[:, todo]
                    Ft = np.broadcast_to(mod.F_value(*xt, *wc[:, todo], *wzz[:, todo], yy[todo], V_k, V_v)[0],
                                         (todo.size,))
                    Fo, ad = Fa[todo], adg[todo]
                fin = np.isfinite(Ft)
                ok = fin & (Ft <= Fo - 1e-4 * st * ad)
                ok |= fin & (Ft < Fo) & (st < 1e-3)
                idx = np.flatnonzero(ok) if todo is None else todo[ok]
                xnew[:, idx] = xt[:, ok]
                Fcur[act[idx]] = Ft[ok]
                accepted[idx] = True
                todo = np.flatnonzero(~ok) if todo is None else todo[~ok]
                if not todo.size:
                    break
                step[todo] *= 0.5
            X[:, act[accepted]] = xnew[:, accepted]
            small = dn * scale < 1e-13 * (1 + np.abs(xa).max(axis=0))
            nxt = accepted & ~small
            if not nxt.all():
                act, xnew, wc, wzz, yy = act[nxt], xnew[:, nxt], wc[:, nxt], wzz[:, nxt], yy[nxt]
            xa = xnew
    # resolve aliases (chains end at a start that was never dropped)
    root = alias.copy()
    while True:
        nr = root[root]
        if np.array_equal(nr, root):
            break
        root = nr
    assert not dropped[root].any()
    X = X[:, root]
    Fend = np.where(np.isfinite(Fcur[root]), Fcur[root], np.inf).reshape(n, S)
    gnorm = gnorm[root]
    order = np.argsort(Fend, axis=1, kind="stable")
    best = order[:, 0]
    Xr = X.T.reshape(n, S, L)
    ar = np.arange(n)
    chi_hat = Xr[ar, best]
    if S > 1:
        second = order[:, 1]
        dist = np.abs(Xr[ar, second] - chi_hat).max(axis=1)
        dF = Fend[ar, second] - Fend[ar, best]
        ambiguous = (dist > 1e-3) & (dF < 1e-6 * (1 + np.abs(Fend[ar, best])))
        distinct_minima = ((np.abs(Xr - chi_hat[:, None, :]).max(axis=2) > 1e-3) & np.isfinite(Fend)).any(axis=1)
    else:  # one start per sample (the surrogate): nothing to compare
        ambiguous = distinct_minima = np.zeros(n, bool)
    if not np.isfinite(Fend[ar, best]).all():
        raise ConvergenceError(_SYSTEM, {"V_k": V_k, "V_v": V_v}, float("nan"),
                               "the prox objective is not finite for some samples",
                               "smaller overlaps, a larger λ, or check the activation for overflow")
    if stats is not None:
        stats["dedup"] = stats.get("dedup", 0) + ndup
    diag = {"prox_iterations": it, "unconverged_fraction": float((gnorm.reshape(n, S)[ar, best] > 1e-6).mean()),
            "ambiguous_fraction": float(ambiguous.mean()), "multi_minima_fraction": float(distinct_minima.mean()),
            "distinct": distinct_minima}
    return chi_hat, diag


def _prox_affine(mod, wchi, wz, y, V_k, V_v):
    """Exact prox of an affine activation: real roots of the residual polynomial, lowest objective."""
    n, L = wchi.shape
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        co = mod.affine_poly(*_cols(wchi), *_cols(wz), y, V_k, V_v)
        co = np.stack([np.broadcast_to(np.asarray(c, float), (n,)) for c in co], axis=1)
        deg = co.shape[1] - 1
        lead = co[:, 0]
        comp = np.zeros((n, deg, deg))
        comp[:, 0, :] = -co[:, 1:] / lead[:, None]
        comp[:, np.arange(1, deg), np.arange(deg - 1)] = 1.0
        roots = np.linalg.eigvals(comp)
        re = roots.real
        # polish by two Newton steps on the polynomial
        for _ in range(2):
            p = np.zeros_like(re)
            dp = np.zeros_like(re)
            for k in range(deg + 1):
                dp = dp * re + p
                p = p * re + co[:, k:k + 1]
            re = re - np.where(dp != 0, p / dp, 0.0)
        real = np.abs(roots.imag) <= 1e-7 * (1 + np.abs(roots.real))
        best_obj = np.full(n, np.inf)
        chi_hat = np.full((n, L), np.nan)
        for k in range(deg):
            out = mod.affine_fields(re[:, k], *_cols(wchi), *_cols(wz), y, V_k, V_v)
            obj = np.where(real[:, k] & np.isfinite(out[-1]), out[-1], np.inf)
            better = obj < best_obj
            best_obj = np.where(better, obj, best_obj)
            chi_k = np.stack([np.broadcast_to(o, (n,)) for o in out[:L]], axis=1)
            chi_hat[better] = chi_k[better]
    if not np.isfinite(best_obj).all():
        raise ConvergenceError(_SYSTEM, {"V_k": V_k, "V_v": V_v}, float("nan"),
                               "no real root of the residual polynomial for some samples",
                               "report this setting (the polynomial always has a real root in exact arithmetic)")
    return chi_hat, {"prox_iterations": 0, "unconverged_fraction": 0.0, "ambiguous_fraction": 0.0,
                     "multi_minima_fraction": float((real.sum(axis=1) > 1).mean())}


# =============================================================================================
# the frozen RS map
# =============================================================================================

_INTEGRANDS = ("gg_k", "gg_v", "dg_k", "dg_v", "gx_k", "gx_v", "gxi_k", "gxi_v")


def _channel(kern: RSKernels, rule: RSRule, x, Delta, timing=None, anchor=None, newton_steps=0, rescreen=None,
             replicon=False):
    r"""Per-replicate averages of the channel integrands and observables at order parameters x.

    ``replicon``: also the per-replicate averages of the 9 entries of the replicon operator's
    channel part (kernel ``replicon_integrand``, docs/slr.md §10.8), appended after :data:`_NAMES`;
    they need the full :math:`W=(\mathcal V^{-1}+H)^{-1}` per sample (a batched LU inverse)."""
    m_k, q_k, V_k, m_v, q_v, V_v = (float(v) for v in x)
    mod = kern.modules[rule.L]
    L = rule.L
    s_k = math.sqrt(max(q_k - m_k * m_k, 0.0))
    s_v = math.sqrt(max(q_v - m_v * m_v, 0.0))
    wchi = m_k * rule.chistar + s_k * rule.xi
    wz = m_v * rule.zstar + s_v * rule.xip
    n = rule.n
    y = rule.zstar[np.arange(n), rule.eps] + Delta * rule.xi0
    t0 = time.perf_counter()
    if kern.affine:
        chi_hat, diag = _prox_affine(mod, wchi, wz, y, V_k, V_v)
    else:
        chi_hat, diag = _prox_newton(mod, wchi, wz, y, V_k, V_v, starts=None if anchor is None else wchi + anchor,
                                     shift_invariant=kern.shift_invariant,
                                     newton_steps=newton_steps if anchor is not None else 0)
        if rescreen is not None and anchor is not None and rescreen.any():
            # the partial map: the multistart again on the samples known to have several minima, the
            # anchored selection elsewhere
            idx = np.flatnonzero(rescreen)
            chi_r, diag_r = _prox_newton(mod, wchi[idx], wz[idx], y[idx], V_k, V_v, shift_invariant=kern.shift_invariant)
            chi_hat[idx] = chi_r
            diag["distinct"] = np.zeros(n, bool)
            diag["distinct"][idx] = diag_r["distinct"]
    diag["offset"] = chi_hat - wchi
    t1 = time.perf_counter()
    if timing is not None:
        timing["prox"] = timing.get("prox", 0.0) + (t1 - t0)
    with np.errstate(over="ignore", invalid="ignore"):
        out = _chunked(mod.post, [*_cols(chi_hat), *_cols(wz), y], (V_v,), n)
    z_hat = np.stack(out[L:2 * L], axis=1)
    resid = out[2 * L]
    vdiag = np.array([V_k] * L + [V_v] * L)
    # (I + 𝒱H)⁻¹ = (𝒱⁻¹ + H)⁻¹ 𝒱⁻¹: its block traces need only the diagonal of (𝒱⁻¹ + H)⁻¹, and
    # the prox check 𝒱⁻¹ + H ≻ 0 comes from the same elimination (H as its upper triangle)
    pd_ok, dinv = _pd_and_inverse_diagonal(out[2 * L + 1:], 1.0 / vdiag)
    trK = sum(dinv[:, i] for i in range(L)) / V_k
    trZ = sum(dinv[:, L + i] for i in range(L)) / V_v
    pd_fail = ~pd_ok
    ints = mod.integrands(*_cols(chi_hat), *_cols(z_hat), *_cols(wchi), *_cols(wz), *_cols(rule.chistar),
                          *_cols(rule.zstar), *_cols(rule.xi), *_cols(rule.xip), trK, trZ, V_k, V_v)
    sig = mod.sigma(*_cols(wchi))
    sig_loc = np.array(np.broadcast_to(sig[0], (n,)), float)  # σ_ε(ω^χ) at each sample's location ε
    for ell in range(1, L):
        np.copyto(sig_loc, sig[ell], where=rule.eps == ell)
    cols = list(ints) + [sig_loc, sig[L], 0.5 * resid ** 2, pd_fail.astype(float), diag["multi_minima_fraction"]]
    if replicon:
        Hfull = _unpack_sym([np.broadcast_to(np.asarray(h_, float), (n,)) for h_ in out[2 * L + 1:]], 2 * L)
        with np.errstate(all="ignore"):
            W = np.linalg.inv(Hfull + np.diag(1.0 / vdiag))
        w_up = [W[:, i, j] for i in range(2 * L) for j in range(i, 2 * L)]
        cols += list(mod.replicon_integrand(*w_up, V_k, V_v))
    R, P = rule.replicates, rule.points
    # per-replicate means column by column (contiguous, pairwise sums); a non-finite sample makes its mean one
    per_rep = np.stack([np.broadcast_to(np.asarray(c, float), (n,)).reshape(R, P).mean(axis=1) for c in cols], axis=1)
    if not np.isfinite(per_rep).all():
        raise ConvergenceError(_SYSTEM, dict(zip(UNKNOWNS, x)), float("nan"), "non-finite channel integrands",
                               "a larger λ, or check the activation for overflow at these overlaps")
    timing_post = time.perf_counter() - t1
    if timing is not None:
        timing["post"] = timing.get("post", 0.0) + timing_post
    return per_rep, diag


_NAMES = _INTEGRANDS + ("A", "B", "train_half_sq", "pd_fail", "multi_minima")


def _averages(kern, rules, x, Delta, reps=None, timing=None, anchor=None, newton_steps=0, rescreen=None,
              replicon=False):
    """P(L)-weighted per-replicate averages (R, n_quantities), with the prox diagnostics."""
    tot = None
    diags = []
    for rule in rules:
        per_rep, diag = _channel(kern, rule if reps is None else _subrule(rule, reps), x, Delta, timing,
                                 None if anchor is None else anchor[len(diags)], newton_steps,
                                 None if rescreen is None else rescreen[len(diags)], replicon)
        tot = rule.weight * per_rep if tot is None else tot + rule.weight * per_rep
        diags.append(diag)
    return tot, diags


def _prefix_rule(rule: RSRule, points: int) -> RSRule:
    """The nested rule of the first ``points`` points of every replicate of ``rule``."""
    sl = (np.arange(rule.replicates)[:, None] * rule.points + np.arange(points)[None, :]).ravel()
    return RSRule(rule.L, rule.weight, rule.eps[sl], rule.chistar[sl], rule.zstar[sl], rule.xi[sl], rule.xip[sl],
                  rule.xi0[sl], rule.replicates, int(points),
                  rule.method.replace(f"x{rule.points} ", f"x{int(points)} ", 1) + " (pilot prefix)")


def _subrule(rule: RSRule, reps):
    sl = np.concatenate([np.arange(r * rule.points, (r + 1) * rule.points) for r in reps])
    return RSRule(rule.L, rule.weight, rule.eps[sl], rule.chistar[sl], rule.zstar[sl], rule.xi[sl], rule.xip[sl],
                  rule.xi0[sl], len(reps), rule.points, rule.method)


def _update_from_averages(kern, av, x, alpha, lam, form="stein"):
    """Conjugates then prior from averaged integrands (one vector ``av`` of :data:`_NAMES`)."""
    mod = next(iter(kern.modules.values()))
    m_k, q_k, _, m_v, q_v, _ = x
    d = dict(zip(_NAMES, av))
    s_k = math.sqrt(max(q_k - m_k ** 2, 1e-300))
    s_v = math.sqrt(max(q_v - m_v ** 2, 1e-300))
    conj = getattr(mod, f"conjugates_{form}")
    mh_k, qh_k, Vh_k = conj(d["gg_k"], d["dg_k"], d["gx_k"], d["gxi_k"], m_k, s_k, alpha)
    mh_v, qh_v, Vh_v = conj(d["gg_v"], d["dg_v"], d["gx_v"], d["gxi_v"], m_v, s_v, alpha)
    mk, qk, Vk = mod.prior(mh_k, qh_k, Vh_k, lam)
    mv, qv, Vv = mod.prior(mh_v, qh_v, Vh_v, lam)
    hats = {"m_hat_k": mh_k, "q_hat_k": qh_k, "V_hat_k": Vh_k, "m_hat_v": mh_v, "q_hat_v": qh_v, "V_hat_v": Vh_v}
    return np.array([mk, qk, Vk, mv, qv, Vv], float), hats


def rs_map(kern: RSKernels, rules, x, alpha, lam, Delta, *, form="stein", reps=None, timing=None, anchor=None,
           newton_steps=0, rescreen=None):
    r"""One application of the frozen RS map G(x) (pooled over the replicates ``reps``, all by default).

    Returns ``(G(x), info)`` with ``info`` holding the conjugates, the per-replicate averages and
    the prox diagnostics (``diags[i]["offset"]`` = χ̂ − ω^χ per sample of rule ``i``).

    ``anchor`` (a list of such offsets, one per rule) evaluates instead the *selection-frozen
    surrogate* :math:`G_P`: the prox of each sample runs from :math:`\omega^\chi+` its anchor offset
    only, so it follows the minimum selected at the anchor point.  :math:`G_P` is smooth and equals
    :math:`G` on the piece P of the frozen map (the points where no sample's selected minimum
    switches); the outer solver uses it for Newton steps and checks every candidate on :math:`G`.
    ``newton_steps`` (with ``anchor``): the surrogate's prox is that many plain Newton steps from the
    anchored minima instead of the safeguarded iteration to its tolerance (1: the finite-difference
    Jacobian about the anchor point; 2: the walk's first, loosely solved round; see :func:`_prox_newton`).
    ``rescreen`` (with ``anchor``; one boolean mask per rule): the *partial map* — the multistart prox
    again on the masked samples (those with several minima at the anchor's map), the anchored one on
    the rest; the piece walk's re-anchoring rounds on a rough map, never an answer.
    """
    av, diags = _averages(kern, rules, x, Delta, reps, timing, anchor, newton_steps, rescreen)
    gx, hats = _update_from_averages(kern, av.mean(axis=0), x, alpha, lam, form)
    return gx, {"hats": hats, "averages": av, "diags": diags}


# =============================================================================================
# the fixed point
# =============================================================================================

@dataclass
class RSFixedPoint:
    """An RS fixed point with its integration error (every ``*_error`` is one standard error)."""

    values: dict
    errors: dict
    E_test: float
    E_test_error: float
    training_loss: float
    training_loss_error: float
    training_objective: float
    hats: dict
    stability: float
    pd_fail_fraction: float
    multi_minima_fraction: float
    ambiguous_fraction: float
    residual: float
    iterations: int
    evaluations: int
    method: str
    rule: str
    seconds: float
    prox_seconds: float
    alpha: float
    lam: float
    Delta: float
    flags: tuple = ()
    #: The RS training objective per sample, the zero-temperature free energy over α, evaluated from
    #: its derived functional (kernel ``rs_energy``, docs/slr.md §10.7); equal to
    #: ``training_objective`` at an exact fixed point (they differ by the residual).
    free_energy: float = float("nan")
    #: Standard error of ``training_objective`` (and so of ``free_energy``), delta method.
    training_objective_error: float = float("nan")
    #: Largest real part of the eigenvalues of ∂G/∂x: below 1 the fixed point attracts the damped
    #: iteration x ← (1 − ε)x + εG(x) for small ε (``stability``, the spectral radius, is the undamped one).
    stability_damped: float = float("nan")
    #: Replicon (de Almeida–Thouless) eigenvalue, docs/slr.md §10.8: RS is locally stable iff < 1.
    replicon: float = float("nan")
    replicon_error: float = float("nan")
    #: ∂G/∂x at the fixed point (6×6, forward differences; ``stability`` is its spectral radius).
    jacobian: Any = field(default=None, repr=False, compare=False)
    #: The prox selection at the fixed point (χ̂ − ω^χ per sample, one array per rule): the handle
    #: by which a neighbouring solve on the same rule starts (``rs_fixed_point(warm=…)``).  Not
    #: pickled (it is as large as the rule).
    anchor: Any = field(default=None, repr=False, compare=False)
    #: The pooled channel averages at the fixed point (they do not depend on α or λ, so with the
    #: Jacobian they give a first-order predictor at a neighbouring (α, λ) without a prox call).
    averages: Any = field(default=None, repr=False, compare=False)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["anchor"] = None
        return state

    def as_row(self) -> dict:
        row = {"alpha": self.alpha, "lam": self.lam, "Delta": self.Delta, "E_test": self.E_test,
               "E_test_error": self.E_test_error, "training_loss": self.training_loss,
               "training_loss_error": self.training_loss_error, "training_objective": self.training_objective,
               "training_objective_error": self.training_objective_error, "free_energy": self.free_energy,
               "replicon": self.replicon, "replicon_error": self.replicon_error,
               "rsb": bool(self.replicon >= 1), "stability_damped": self.stability_damped}
        for k in UNKNOWNS:
            row[k] = self.values[k]
            row[k + "_error"] = self.errors[k]
        row.update({k: float(v) for k, v in self.hats.items()})
        row.update({"stability": self.stability, "pd_fail_fraction": self.pd_fail_fraction,
                    "multi_minima_fraction": self.multi_minima_fraction, "ambiguous_fraction": self.ambiguous_fraction,
                    "residual": self.residual, "iterations": self.iterations, "evaluations": self.evaluations,
                    "method": self.method, "rule": self.rule, "seconds": self.seconds, "prox_seconds": self.prox_seconds,
                    "flags": ",".join(self.flags)})
        return row


def informed_start(model: str, nu: float):
    """Informed initialisation of §10.6: m_k = 0.8c_ν, q_k = 0.8c_ν², m_v = q_v = 0.8, V = 0.5
    (c_ν = √ν spiked, ν max; ν = ∞ uses c = 2.5, i.e. m_k = 2, q_k = 5)."""
    c = math.sqrt(nu) if model == "spiked" else (2.5 if math.isinf(nu) else nu)
    return np.array([0.8 * c, 0.8 * c * c, 0.5, 0.8, 0.8, 0.5])


def small_overlap_start(model: str, nu: float):
    """Small-overlap start (§10.6): m = 0.05, q = 0.01, V = 0.5 on both blocks."""
    return np.array([0.05, 0.01, 0.5, 0.05, 0.01, 0.5])


def _project(x):
    """Keep iterates inside the domain q ≥ m², V > 0."""
    x = np.array(x, float)
    for i in (0, 3):
        x[i + 1] = max(x[i + 1], x[i] ** 2 * (1 + 1e-12) + 1e-14)
        x[i + 2] = max(x[i + 2], 1e-10)
    return x


def _residual(g, x):
    """Relative ∞-distance of g from x (max |g − x| / max(1, |x|)): the residual of G(x) = x, and the
    distance between two points."""
    return float(np.max(np.abs(g - x) / np.maximum(1.0, np.abs(x))))


def _fd_jacobian_with_averages(Gi, x, gx, av0, h=1e-6):
    """Forward-difference Jacobians of the map, ``∂G/∂x``, and of the pooled channel averages,
    ``∂ā/∂x`` (shape (n_quantities, 6)), from the same evaluations; ``Gi(v)`` returns ``rs_map``'s pair
    and ``gx``, ``av0`` must be its own value at ``x``.

    On the surrogate, ``Gi`` is ``rs_map(anchor=…, newton_steps=1)``: its prox is one Newton step from
    the anchored minima.  At the anchor point that step is the implicit-function linearisation
    (where ∇F = 0 the derivative of χ₀ − H⁻¹∇F is −H⁻¹∂∇F/∂x, the prox's own), so the quotient
    is the surrogate's derivative to O(h) plus O(‖∇F‖) from samples not fully converged there —
    hence the base value from the same one-step map, not from the full prox, whose difference from
    it is the last Newton step's size, not O(h).  Half the cost of a full surrogate evaluation.
    """
    n = x.size
    J = np.empty((n, n))
    Jav = np.empty((av0.size, n))
    for j in range(n):
        xp = x.copy()
        hj = h * max(1.0, abs(x[j]))
        xp[j] += hj
        gp, info = Gi(xp)
        J[:, j] = (gp - gx) / hj
        Jav[:, j] = (info["averages"].mean(axis=0) - av0) / hj
    return J, Jav


def _fd_jacobian(G, x, gx, h=1e-6):
    n = x.size
    J = np.empty((n, n))
    for j in range(n):
        xp = x.copy()
        hj = h * max(1.0, abs(x[j]))
        xp[j] += hj
        J[:, j] = (G(xp) - gx) / hj
    return J


def _piece_walk(G_info, G_anchor, x, tol, *, rounds=4, extra_rounds=4, newton_tol=None, J0=None, anchor0=None,
                tol_of=None, anchor0_tol=3e-3, anchor0_steps=2, jacobian=None, jacobian_at=3e-2,
                jac_out=None, G_partial=None, tol_partial=None):
    """Fixed point of a piecewise-smooth frozen map by Newton on its smooth pieces.

    The frozen map G is smooth except where a sample's selected prox minimum switches (§10.6: the
    map is rough at about the integration error there, and Anderson or Newton on G can stall).  A
    round evaluates G at x (``G_info(x) -> (G(x), offsets)``), freezes the selection there
    (``G_anchor(v, offsets)``: the smooth surrogate G_P, equal to G on the piece P containing x)
    and solves x = G_P(x) by Newton with a finite-difference Jacobian (chord steps); the next
    round checks that point on G.  It ends when G itself has residual ≤ ``tol`` (or ≤
    ``tol_of(x)``, evaluated right after G at x, when that is larger): the point then lies in a
    piece that contains its own fixed point, i.e. it is a fixed point of G.  The surrogate's prox
    runs from one start per sample (no screening), so its evaluations cost a fraction of G's.

    ``J0`` (e.g. the Jacobian of the same map on a smaller rule, or at a neighbouring α) starts the
    chord steps of the first round; each later round starts from the previous round's Jacobian.
    ``anchor0`` (offsets, e.g. the selection at a neighbouring fixed point on the same rule) is the
    first round's selection: that round then starts with Newton on its surrogate and skips G at x.
    That surrogate is solved only to ``anchor0_tol``, its prox ``anchor0_steps`` plain Newton steps
    from the anchored minima (``rs_map(newton_steps=…)``; 2: 1e-5 – 1e-4 from the converged surrogate a
    relative 1e-2 from the anchor, 1e-4 – 1e-3 at 3e-2, at under half the cost; the curve at 4×8192
    13.2 → 10.9 s, the same fixed points; 0: the full prox): it is smooth near its anchor only, and the
    selection at the new point differs from the neighbour's in a few samples, whose switches move
    the fixed point by about the integration error anyway; the next round re-anchors on G there.
    With ``tol_of``, a round anchored on G at x solves its surrogate to 0.1·``tol_of(x)`` (if that
    is above ``newton_tol``): the check on G then accepts it unless a sample switched.

    After ``rounds`` rounds, up to ``extra_rounds`` more run while each round still divides G's
    residual by at least 2: the walk converges linearly where a few samples switch their selection
    in every round (measured: factor 0.15–0.25 per round at α = 1.4 on 4×8192), and stopping it
    there sends the caller to a path that costs ten times more.

    ``jacobian(x, G(x), offsets) -> (J, extra)`` (finite differences of the surrogate anchored at x,
    with whatever else the caller needs from the same evaluations): called once, in the first round
    anchored on G at a point whose residual is ≤ ``jacobian_at``; that round's Newton then runs
    with the exact Jacobian of its piece (two steps from a residual of 1e-3, against five or six
    with a neighbour's Jacobian, whose sampling noise at 4×8192 is 10–20 %), and ``jac_out`` (a
    dict) receives ``J``, ``extra``, ``x_J`` and ``evaluations`` so that the caller can reuse them at
    the returned point instead of differencing again.  The evaluations are counted as surrogate ones.

    ``G_partial(x, offsets) -> (G̃(x), offsets)`` (the partial map: the multistart only on the samples
    with several minima at the last map, the selection ``offsets`` elsewhere): once a round shows that
    samples switch (G's residual at a surrogate's fixed point ≥ 100× the surrogate's own), later
    rounds re-anchor on it instead of G — within a rough walk 70–100 % of the switches between rounds
    are among those samples (measured at α = 1, 1.4 on 4×8192: 13 of 19, 6 of 6, 1 of 1; 48 of 57,
    28 of 29, 1, 3, 1).  Every decision is taken on G: a round whose partial residual passes
    ``tol`` or ``tol_partial(x)`` (the noise tolerance at the last point of G), or would end the walk,
    evaluates G at x, and only G's values are returned.  Partial maps count as surrogate evaluations.

    Returns ``(x, G(x), residual, true evaluations, surrogate evaluations, J, x_J)``; ``J`` is the
    surrogate's last Jacobian, which equals G's within the piece.
    """
    best = None
    ev_true = ev_sur = 0
    J = xJ = None
    newton_tol = tol if newton_tol is None else newton_tol
    rounds = rounds + (anchor0 is not None)
    prev_res = np.inf
    rough = False  # a round has shown samples switching their selection: re-anchor on G_partial
    rs_prev = None  # the residual of the last round's surrogate solve (rounds anchored on G)
    for k in range(rounds + extra_rounds):
        x = _project(x)
        if k == 0 and anchor0 is not None:
            offsets, res = anchor0, np.inf
        else:
            full = True
            if rough and G_partial is not None:
                gx, offs_p = G_partial(x, offsets)
                ev_sur += 1
                res = _residual(gx, x)
                tp = tol_partial(x) if tol_partial is not None else 0.0
                full = (res <= tol or res <= tp or k == rounds + extra_rounds - 1
                        or k >= rounds and not res <= 0.5 * prev_res)
                if not full:
                    offsets = offs_p
            if full:
                gx, offsets = G_info(x)
                ev_true += 1
                res = _residual(gx, x)
                if best is None or res < best[0]:
                    best = (res, x, gx, J, xJ)
                if res <= tol or tol_of is not None and res <= tol_of(x):
                    break
                if k >= rounds and not res <= 0.5 * prev_res:
                    break
            if rs_prev is not None and res >= 100 * max(rs_prev, 1e-300):
                rough = True
            prev_res = res
        if k == rounds + extra_rounds - 1:
            break  # no round left to check a new point on G

        first_anchor0 = k == 0 and anchor0 is not None

        def Gp(v, offsets=offsets, steps=anchor0_steps if first_anchor0 else 0):
            return G_anchor(v, offsets, steps) if steps else G_anchor(v, offsets)

        if k == 0 and anchor0 is not None:
            ntol = max(newton_tol, anchor0_tol)
        else:
            if tol_of is None:
                ntol = newton_tol
            else:  # after a partial map, the noise tolerance of the last point of G (tol_of(x) would need G at x)
                ntol = max(newton_tol, 0.1 * (tol_of(x) if full or tol_partial is None else tol_partial(x)))
            if jacobian is not None and jac_out is not None and res <= jacobian_at and (
                    jac_out.get("x_J") is None or _residual(x, jac_out["x_J"]) > jac_out.get("reuse", 2e-2)):
                Jx, extra, nev = jacobian(x, gx, offsets)
                J, xJ = Jx, x.copy()
                jac_out.update(J=Jx, extra=extra, x_J=x.copy(), evaluations=nev)
                ev_sur += nev
        # a round anchored on G at x: the surrogate equals G there (same selection, its prox starts
        # at the minima G found), so G(x) is its value at the start
        xs, _, rs, _, evs, _, Jn, xJn = _solve(Gp, x, ntol, damped_exit=np.inf, newton_at=np.inf,
                                                 max_newton=8, J0=J if J is not None else J0,
                                                 g0=None if (k == 0 and anchor0 is not None) else gx)
        if Jn is not None:
            J, xJ = Jn, xJn
        ev_sur += evs
        if not (rs < res) or not np.isfinite(xs).all():
            break  # Newton on the surrogate made no progress: leave it to the caller
        rs_prev = None if first_anchor0 else rs
        x = xs
    if best is None:  # the anchored first round failed: G at the start
        x = _project(x)
        gx, _ = G_info(x)
        ev_true += 1
        best = (_residual(gx, x), x, gx, J, xJ)
    res, x, gx, J, xJ = best
    return x, gx, res, ev_true, ev_sur, J, xJ


def _solve(G, x0, tol, *, max_damped=40, damping=0.5, damped_exit=1e-1, max_anderson=60, memory=5,
           newton_at=1e-4, max_newton=8, label="", J0=None, broyden=True, g0=None):
    """Damped → Anderson → Newton ladder on a deterministic map G.

    Damped iteration until the relative residual is below ``damped_exit``; Anderson (type II,
    memory ``memory``) until it is below ``newton_at`` (or stalls); then Newton with one
    finite-difference Jacobian of the frozen map, reused for the following (chord) steps and
    recomputed only when a chord step contracts the residual by less than a factor 10.  Near the
    solution a chord step gains about ``newton_at``·‖J′‖ per step, so two or three steps reach
    ``tol``.  ``J0``: a Jacobian to start the chord steps with (e.g. from a smaller rule), replaced
    by a finite-difference one as soon as a step with it fails to reduce the residual.  ``broyden``:
    every accepted step updates the chord Jacobian by the secant (Broyden) rank-one formula.  Returns
    ``(x, G(x), residual, iterations, evaluations, method, J, x_J)`` with the last Jacobian and the
    point where it was computed (``None`` if Newton did not run).  ``g0``: G(x0) if already known
    (x0 must then be inside the domain, :func:`_project`).
    """
    x = _project(x0)
    evals = [0]

    def Gc(v):
        evals[0] += 1
        return G(_project(v))

    methods = []
    gx = Gc(x) if g0 is None else np.asarray(g0, float)
    res = _residual(gx, x)
    it = 0
    # damped
    if res > max(damped_exit, tol):
        methods.append("damped")
        for _ in range(max_damped):
            x = _project((1 - damping) * gx + damping * x)
            gx = Gc(x)
            it += 1
            res = _residual(gx, x)
            if res < max(damped_exit, tol):
                break
    # Anderson (type II, on f = G(x) − x)
    if res > max(newton_at, tol):
        methods.append("anderson")
        X, F = [x.copy()], [gx - x]
        best = (res, x.copy(), gx.copy())
        stall = 0
        for _ in range(max_anderson):
            f = F[-1]
            if len(X) > 1:
                dX = np.stack([X[i + 1] - X[i] for i in range(len(X) - 1)], axis=1)
                dF = np.stack([F[i + 1] - F[i] for i in range(len(F) - 1)], axis=1)
                gam, *_ = np.linalg.lstsq(dF, f, rcond=None)
                xn = x + f - (dX + dF) @ gam
            else:
                xn = x + f
            xn = _project(xn)
            if not np.isfinite(xn).all():
                break
            x = xn
            gx = Gc(x)
            it += 1
            res = _residual(gx, x)
            X.append(x.copy())
            F.append(gx - x)
            X, F = X[-(memory + 1):], F[-(memory + 1):]
            if res < best[0] * 0.9:
                best, stall = (res, x.copy(), gx.copy()), 0
            else:
                stall += 1
            if res <= max(newton_at, tol) or stall >= 8:
                break
        res, x, gx = best
    # Newton with a finite-difference Jacobian of the frozen map (chord steps while they contract)
    J = xJ = None
    if res > tol and max_newton > 0:
        methods.append("newton")
        best = (res, x, gx)
        fresh = False
        rn_ratio = 1.0
        refresh_at = 0.1
        if J0 is not None:
            # a borrowed Jacobian is kept while it contracts at all well: near the fixed point its
            # steps gain ‖(I−J0)⁻¹(J−J0)‖ each (≈ 0.06 for a 4×1024 pilot of a 4×16384 rule), but the
            # first step from the pilot point is still in the nonlinear range
            J, xJ, rn_ratio, refresh_at = np.asarray(J0, float), x.copy(), 0.0, 0.7
        for _ in range(max_newton):
            if J is None or not fresh and rn_ratio > refresh_at:
                J, xJ, fresh = _fd_jacobian(Gc, x, gx), x.copy(), True
            try:
                step = np.linalg.solve(np.eye(x.size) - J, gx - x)
            except np.linalg.LinAlgError:
                break
            it += 1
            t = 1.0
            for _ in range(6):
                xn = _project(x + t * step)
                gn = Gc(xn)
                rn = _residual(gn, xn)
                if rn < res:
                    break
                t *= 0.5
            if rn >= res:
                if fresh:
                    break
                J = None  # the reused Jacobian is stale: recompute it at x
                continue
            rn_ratio = rn / res
            if broyden:
                # secant (Broyden) update of the chord Jacobian from the accepted step: free, and it
                # turns the linear convergence of a borrowed or aged Jacobian into a superlinear one
                s_ = xn - x
                ss = float(s_ @ s_)
                if ss > 0:
                    J = J + np.outer(gn - gx - J @ s_, s_) / ss
            x, gx, res = xn, gn, rn
            best = (res, x, gx)
            fresh = False
            if res <= tol:
                break
        res, x, gx = best
    return x, gx, res, it, evals[0], "+".join(methods) or "start", J, xJ


def rs_replicon(kern: RSKernels, rules, x, alpha, lam, Delta, hats, *, offsets=None):
    r"""The replicon (de Almeida–Thouless) eigenvalue of the RS solution at x (docs/slr.md §10.8).

    :math:`\mathcal T(\Sigma)_{cd}=\alpha P_cP_d\,\mathbb E[K]\,\Sigma` on symmetric 2 × 2 perturbations
    :math:`\Sigma` of the (k, v) overlaps, with the per-sample channel part :math:`K` (kernel
    ``replicon_integrand``, from the prox Jacobian) averaged on the frozen rule and the prior factor
    :math:`P_c^2=\mathbb E(\partial\hat w_c/\partial b)^2` (kernel ``replicon_prior``); the replicon is the
    spectral radius of :math:`\mathcal T` (a positive map, so its Perron root, real and ≥ 0).  RS is
    locally stable iff it is below 1.  ``offsets`` (the prox selection at x) avoids the multistart:
    one Newton step from the selected minima.  Cost: one surrogate map plus a batched 2L × 2L inverse.

    Returns ``(replicon, standard error over the replicates, T as a 3 × 3 array on (kk, kv, vv))``.
    """
    av, _ = _averages(kern, rules, np.asarray(x, float), Delta, anchor=offsets,
                      newton_steps=1 if offsets is not None else 0, replicon=True)
    K = av[:, len(_NAMES):]
    mod = next(iter(kern.modules.values()))
    (P2k,) = np.atleast_1d(mod.replicon_prior(hats["m_hat_k"], hats["q_hat_k"], hats["V_hat_k"], lam))
    (P2v,) = np.atleast_1d(mod.replicon_prior(hats["m_hat_v"], hats["q_hat_v"], hats["V_hat_v"], lam))
    Pk, Pv = math.sqrt(float(P2k)), math.sqrt(float(P2v))
    w = np.array([Pk * Pk, Pk * Pv, Pv * Pv])

    def rho(k9):
        T = alpha * w[:, None] * np.asarray(k9, float).reshape(3, 3)
        return float(np.max(np.abs(np.linalg.eigvals(T)))), T

    val, T = rho(K.mean(axis=0))
    R = K.shape[0]
    err = float(np.std([rho(K[r])[0] for r in range(R)], ddof=1) / math.sqrt(R)) if R > 1 else float("nan")
    return val, err, T


def rs_fixed_point(kern: RSKernels, rules, alpha: float, lam: float, Delta: float, *, x0=None, model="spiked",
                   nu=2.0, tol: float = 1e-9, accept: float = 1e-6, accept_noise: float = 0.25,
                   form: str = "stein",
                   compute_error: bool = True, coarse: bool = True, coarse_tol: float = 1e-3,
                   walk_at: float = 1e-3, surrogate_jacobian: bool = True, pilot: int | None = 1024,
                   tol_noise: float = 1e-3, warm: "RSFixedPoint | None" = None, warm_reach: float = 1.5,
                   partial_maps: bool = True, progress=None) -> RSFixedPoint:
    r"""The RS fixed point at (α, λ, Δ) on the frozen rule ``rules`` (see :func:`make_rule`).

    Parameters
    ----------
    kern : RSKernels
        From :func:`compile_rs_kernels` (``attnlimits.verify.slr.replica.rs_kernels`` builds it from a name).
    rules : list of RSRule
        The frozen integration rule (one per length of the length law).
    alpha, lam, Delta : float
        Sample ratio α = N/D > 0, ridge λ > 0, label noise Δ ≥ 0.
    x0 : array-like, optional
        Start (m_k, q_k, V_k, m_v, q_v, V_v); default :func:`informed_start` of ``model``, ``nu``.
        A warm start from a neighbouring (α, λ) point is continuation.
    warm : RSFixedPoint, optional
        A neighbouring fixed point solved on the **same** rule (continuation; ``rs_learning_curve``
        and ``rs_tune_lambda`` pass the previous one): ``x0`` defaults to its point, its Jacobian
        starts the chord steps and its prox selection (``warm.anchor``) anchors the first piece-walk
        round, so neither the pilot nor a first multistart map is needed.  Where the frozen map has a
        fixed point the answer is the same (every candidate is still checked on the map itself; only
        the path changes).  Where the walk stalls it is retried once from the damped point; if the best
        point is then within ``accept_noise`` of the noise it is returned as ``rough_map`` without the
        regular path, so on a rough map a warm and a cold solve may end at different points, each
        within its (residual-inflated) error bar.  Ignored when its anchor does not fit the rule, and
        the regular path taken from its point when the predictor's step exceeds ``warm_reach``
        (relative, ∞-norm; measured along the benchmark's α grid, ratio 1.4: 0.3–1.0; α 20 → 4: 7.4).
    tol_noise : float
        The solve also stops when the residual is below ``tol_noise`` times the map's integration
        noise at the point (see ``accept_noise``), if that is larger than ``tol``: the residual's
        effect on the answer is then about ``tol_noise`` of its error bar (both pass through
        (I − J)⁻¹; the shift is added to the reported errors in quadrature).  ``0``: ``tol`` only.
    tol, accept : float
        Target residual ‖G(x) − x‖∞ (relative to max(1, |x|)); a solve whose residual stays above
        ``accept`` raises :class:`ConvergenceError`; between the two it is returned with the flag
        ``residual_above_tol``.
    accept_noise : float
        A rough frozen map (§10.6: at small λ the selected prox minimum of some samples switches, so
        the map is piecewise smooth and may have no exact fixed point) is also accepted when the
        residual is below ``accept_noise`` times the map's own integration noise at that point
        (relative spread of the replicate maps over √R): the point is then a fixed point to well
        within its error bar.  The residual's own effect, (I − J)⁻¹(G(x) − x), is added to every
        reported error in quadrature, and the flags say ``residual_above_tol`` and ``rough_map``.
        ``0`` restores the absolute ``accept`` only.  Default 0.25 (0.01, then 0.05 until 2026-12-01:
        softmax spiked L = 2, λ = 0.1 on 4×16384, seed 0, has no fixed point below 3.4 % of its noise
        at α = 1.946 and below 8 % at α = 7.368).  What such a point is: the map jumps there (a
        sample with a heavy integrand switches its minimum — the replicate spread jumps by 30 %, the
        mark of one or a few samples — moving the update by about 7e-4 relative; the walk cycles
        across the jump), so it may have
        no fixed point; the map with that sample's selection smoothed (a fractional weight on its
        two minima) is continuous and has one within about the residual (a generalised fixed
        point: reasoned, not computed); at 0.25 of the noise the added term grows the error bar by
        ≤ 3 % before (I − J)⁻¹.  The bound is
        on the residual of the map, not on its effect on the answer: (I − J)⁻¹ can amplify the
        residual far more than the replicate spread where the map is nearly unstable (that point:
        spectral radius 0.98, E_test error 0.051 once the shift is added, against 7e-4 at its
        neighbours), so a ``rough_map`` result's error bar must be read before its value.
    form : {"stein", "jacobian"}
        Form of the V̂ and m̂ updates (§10.4).  ``stein`` (default) is the derivative of the channel
        free energy and right where the selected prox minimum jumps; ``jacobian`` (Stein's lemma with
        the prox Jacobian) misses those jumps and is biased there (docs/slr.md §10.6).
    coarse : bool
        Run the damped stage on the first replicate only (cheaper; the full rule refines).
    coarse_tol : float
        Residual at which the coarse stage hands over to the full rule (the replicates' own fixed
        points differ by about the integration error, so a tighter coarse solve is wasted).
    walk_at : float
        Residual at which Anderson on the full rule hands over to the piece walk
        (:func:`_piece_walk`: Newton on the selection-frozen surrogate, every candidate checked on
        the frozen map itself); ``0`` uses plain Newton on the frozen map instead.
    surrogate_jacobian : bool
        Take ∂G/∂x at the returned point (stability and error estimate) by finite differences of
        the selection-frozen surrogate anchored there (see :func:`rs_map` ``anchor``): equal to
        the frozen map's within the piece (measured: eigenvalues agree to 1e-3), its prox one
        Newton step from the anchored minima (:func:`_fd_jacobian_with_averages`); seven such
        evaluations cost about half a multistart map.  A piece walk takes this Jacobian once near the fixed point (residual ≤ 3e-2) for its
        own Newton steps; it is reused at the returned point when that lies within 2e-2 (relative)
        of where it was taken (measured on the benchmark curve: stability within 1.1 % and every
        error within 2.1 % of a fresh one, below the Jacobian's own sampling noise).  ``False``: finite
        differences of the frozen map itself, at the returned point.
    partial_maps : bool
        In a piece walk that has shown samples switching their selection (a rough map), re-anchor
        the later rounds on the *partial map* (the multistart only on the samples with several prox
        minima at the last map, :func:`rs_map` ``rescreen``) instead of the map itself, about a
        quarter of its cost; every acceptance and every returned value is still the map's own
        (:func:`_piece_walk` ``G_partial``).  ``False``: every round on the map.
    pilot : int or None
        Multilevel start for large rules: when the rule has more than ``2·pilot`` points per
        replicate, the fixed point is first solved on the nested rule made of the first ``pilot``
        points of every replicate (a Sobol prefix of size 2^k is itself a scrambled net), and the
        full rule starts from it with the pilot's Jacobian for its chord steps (the piece walk).
        The pilot point differs from the full one by about the pilot's integration error, and its
        Jacobian from the full one by as little, so a few chord steps reach ``tol`` on the full
        rule instead of the whole ladder.  The answer is the full rule's fixed point either way
        (same ``tol``); a pilot that fails is skipped.  ``None``: no pilot.
    Returns
    -------
    RSFixedPoint
        Order parameters, conjugates, E_test and training loss with standard errors (replicate
        spread through the delta method), stability (spectral radius of ∂G/∂x), PD-failure and
        multi-minimum fractions, residual, iterations, method and timings.
    """
    if not (alpha > 0 and math.isfinite(alpha)):
        raise ValueError(f"alpha must be > 0, got {alpha}")
    if not (lam > 0 and math.isfinite(lam)):
        raise ValueError(f"lam must be > 0, got {lam}")
    if not (Delta >= 0 and math.isfinite(Delta)):
        raise ValueError(f"Delta must be >= 0, got {Delta}")
    t_start = time.perf_counter()
    timing: dict = {}
    if warm is not None and x0 is None:
        x0 = np.array([warm.values[k] for k in UNKNOWNS])
    anchor0 = None
    if warm is not None and warm.anchor is not None and len(warm.anchor) == len(rules) and all(
            np.shape(a_) == (r_.n, r_.L) for a_, r_ in zip(warm.anchor, rules)):
        anchor0 = warm.anchor
    x0 = informed_start(model, nu) if x0 is None else np.asarray(x0, float)
    if anchor0 is not None and warm.jacobian is not None and warm.averages is not None:
        xw = np.array([warm.values[k] for k in UNKNOWNS])
        if np.array_equal(x0, xw):
            # predictor: one Newton step at the new (α, λ) from the neighbour, with its Jacobian and
            # its averages (the channel averages do not depend on α, λ; only the update does)
            try:
                g_new, _ = _update_from_averages(kern, warm.averages, xw, alpha, lam, form)
                xp_ = _project(xw + np.linalg.solve(np.eye(xw.size) - warm.jacobian, g_new - xw))
                step_ = float(np.max(np.abs(xp_ - xw) / np.maximum(1.0, np.abs(xw))))
                if np.isfinite(xp_).all() and step_ <= warm_reach:
                    x0 = xp_
                else:
                    # too far for the neighbour's selection and Jacobian (e.g. α 20 → 4): the
                    # regular path (pilot, ladder) from the neighbour's point
                    anchor0 = None
            except (np.linalg.LinAlgError, ValueError, ZeroDivisionError):
                pass
    params = {"alpha": alpha, "lam": lam, "Delta": Delta}
    R = rules[0].replicates
    evals = 0
    iters = 0
    methods = []

    last = {}

    multi: dict = {}  # the samples with several prox minima at the last map (per rule), for G_partial

    def G_full(v):
        if "x" in last and np.array_equal(last["x"], v):
            return last["g"]  # the map is a deterministic function of v (no warm-started prox)
        g, inf = rs_map(kern, rules, v, alpha, lam, Delta, form=form, timing=timing)
        last.update(x=np.array(v, float), g=g, info=inf)
        if all("distinct" in d_ for d_ in inf["diags"]):
            multi["masks"] = [d_["distinct"] for d_ in inf["diags"]]
        return g

    def G_one(v):
        return rs_map(kern, rules, v, alpha, lam, Delta, form=form, reps=[0], timing=timing)[0]

    def G_info(v):
        g = G_full(v)
        return g, [d["offset"] for d in last["info"]["diags"]]

    def G_anchor(v, offsets, newton_steps=0):
        return rs_map(kern, rules, v, alpha, lam, Delta, form=form, timing=timing, anchor=offsets,
                      newton_steps=newton_steps)[0]

    noise_cache: dict = {}

    def noise(v):
        """Integration noise of the map at v: relative spread of the replicate maps over √R (∞-norm)."""
        if R < 2:
            return 0.0
        if noise_cache.get("x") is not None and np.array_equal(noise_cache["x"], v):
            return noise_cache["value"]
        if "x" in last and np.array_equal(last["x"], v):
            info_v = last["info"]
        else:
            G_full(v)
            info_v = last["info"]
        gr = np.array([_update_from_averages(kern, a_r, v, alpha, lam, form)[0] for a_r in info_v["averages"]])
        eta = float(np.max(gr.std(axis=0, ddof=1) / math.sqrt(R) / np.maximum(1.0, np.abs(v))))
        noise_cache.update(x=np.array(v, float), value=eta)
        return eta

    def tol_of(v):
        """The noise-relative tolerance at v (free right after the full map at v)."""
        return tol_noise * noise(v) if tol_noise > 0 else 0.0

    def tol_last(v):
        """The noise-relative tolerance at the last point where it was taken (the noise varies slowly)."""
        return tol_noise * noise_cache["value"] if tol_noise > 0 and "value" in noise_cache else 0.0

    def G_partial(v, offsets):
        """The partial map (rs_map ``rescreen``): the multistart on the samples with several minima at
        the last map, the selection ``offsets`` elsewhere."""
        masks = multi.get("masks")
        if masks is None:
            return G_info(v)
        g, inf = rs_map(kern, rules, v, alpha, lam, Delta, form=form, timing=timing, anchor=offsets, rescreen=masks)
        multi["masks"] = [m_ | d_["distinct"] for m_, d_ in zip(masks, inf["diags"])]
        return g, [d_["offset"] for d_ in inf["diags"]]

    def converged(v, r):
        return r <= tol or (tol_noise > 0 and r <= tol_of(v))

    counts = {"evals": 0, "iters": 0}
    # the Jacobian of the surrogate taken inside a piece walk near the fixed point (its Newton steps
    # use it; a later walk takes a new one only beyond ``reuse``), reused for the stability and the
    # error at the returned point when that lies within ``reuse_final`` (relative) of where it was
    # taken (measured along the benchmark curve: within 1.1 % in stability and 2.1 % in every error
    # of a fresh Jacobian; at 5e-2, α = 1, 4 % and 6 %, and 18 % in q_k's error)
    jac_out: dict = {"reuse": 5e-2, "reuse_final": 2e-2}

    def jac_at(v, gv, offsets):
        def Gi(u):
            return rs_map(kern, rules, u, alpha, lam, Delta, form=form, timing=timing, anchor=offsets, newton_steps=1)

        g1, inf1 = Gi(v)  # the one-step surrogate's own value at v (see _fd_jacobian_with_averages)
        Jv, Jav_v = _fd_jacobian_with_averages(Gi, v, g1, inf1["averages"].mean(axis=0))
        return Jv, Jav_v, v.size + 1

    wkw = {"jacobian": jac_at, "jac_out": jac_out} if surrogate_jacobian else {}
    if partial_maps and not kern.affine:
        wkw.update(G_partial=G_partial, tol_partial=tol_last if tol_noise > 0 else None)

    def walk(xs, **kw):
        """A piece walk from xs, counted and labelled in ``methods``: (x, G(x), residual)."""
        xw, gw, rw, evt, evs, _, _ = _piece_walk(G_info, G_anchor, xs, tol, tol_of=tol_of if tol_noise > 0 else None,
                                                 **wkw, **kw)
        counts["evals"] += evt + evs
        counts["iters"] += evt
        methods.append(f"walk[{evt}+{evs}s]")
        return xw, gw, rw

    rough = False
    try:
        x_start = x0
        x = None
        kept = None
        pilot_ok = False
        if anchor0 is not None and walk_at:
            # continuation: Newton on the surrogate anchored at the neighbouring point's selection,
            # with its Jacobian, then checks on the map itself
            x, gx, res, evt, evs, _, _ = _piece_walk(G_info, G_anchor, x0, tol, J0=warm.jacobian, anchor0=anchor0,
                                                     rounds=2, extra_rounds=6,
                                                     tol_of=tol_of if tol_noise > 0 else None, **wkw)
            evals += evt + evs
            iters += evt
            methods.append(f"warm-walk[{evt}+{evs}s]")
            pilot_ok = converged(x, res)
            if not pilot_ok and np.isfinite(gx).all():
                # the walk stalled between two pieces of a rough map (the fixed point of each piece lies
                # in the other): once more from the damped point between x and G(x), whose selection
                # differs — far cheaper than the regular path below (measured at α = 1 on 4×8192)
                x2, gx2, res2 = walk(_project(0.5 * (x + gx)), J0=jac_out.get("J", warm.jacobian), rounds=2,
                                     extra_rounds=6)
                if res2 < res:
                    x, gx, res = x2, gx2, res2
                pilot_ok = converged(x, res)
            if not pilot_ok and res <= accept_noise * noise(x):
                rough, pilot_ok = True, True  # a generalised fixed point of a map that jumps here
            if not pilot_ok:
                # the neighbour's selection and Jacobian did not carry (a rough map near the new
                # point): the regular path from the neighbour's point, keeping the better result
                kept, x0 = (x, gx, res), np.array([warm.values[k] for k in UNKNOWNS])
                methods.append("then")
        if not pilot_ok and pilot and walk_at and rules[0].points > 2 * int(pilot):
            # multilevel: the fixed point and its Jacobian on the nested pilot rule, then chord steps
            # on the full rule's selection-frozen surrogate (the piece walk) from there
            prules = [_prefix_rule(r, int(pilot)) for r in rules]
            try:
                fpp = rs_fixed_point(kern, prules, alpha, lam, Delta, x0=x0, model=model, nu=nu, tol=tol,
                                     accept=accept, form=form, compute_error=False, coarse=coarse,
                                     coarse_tol=coarse_tol, walk_at=walk_at, surrogate_jacobian=True, pilot=None,
                                     tol_noise=tol_noise)
            except (ConvergenceError, np.linalg.LinAlgError):
                methods.append("pilot_failed")
            else:
                xp = np.array([fpp.values[k] for k in UNKNOWNS])
                timing["prox"] = timing.get("prox", 0.0) + fpp.prox_seconds
                timing["pilot"] = fpp.seconds
                methods.append(f"pilot[{R}x{int(pilot)}: {fpp.evaluations} maps]")
                x, gx, res, evt, evs, _, _ = _piece_walk(G_info, G_anchor, xp, tol, J0=fpp.jacobian,
                                                         tol_of=tol_of if tol_noise > 0 else None, **wkw)
                evals += evt + evs
                iters += evt
                methods.append(f"walk[{evt}+{evs}s]")
                pilot_ok = True
        if not pilot_ok:
            if coarse and R > 1:
                x0, _, _, it1, ev1, m1, _, _ = _solve(G_one, x0, coarse_tol, newton_at=coarse_tol, max_newton=2)
                evals += ev1
                iters += it1
                methods.append(f"coarse[{m1}]")
            x, gx, res, it2, ev2, m2, _, _ = _solve(G_full, x0, tol, newton_at=walk_at,
                                                    max_newton=0 if walk_at else 8)
            evals += ev2
            iters += it2
            methods.append(m2)
        if kept is not None and kept[2] < res:
            x, gx, res = kept
        if not converged(x, res) and walk_at and not rough:
            # end game: Newton on the smooth pieces of the frozen map (selection-frozen surrogate)
            xw, gw, rw = walk(x)
            if rw < res:
                x, gx, res = xw, gw, rw
        if not converged(x, res) and res <= accept_noise * noise(x):
            rough = True  # fixed point to well within the integration noise: no more ladders
        if not converged(x, res) and not rough:
            # rough frozen map (prox minima switching, §10.6): the slow ladder from the best point —
            # damped to 1e-3, Anderson to tol, Newton — which wanders over more pieces of the map
            x3, gx3, res3, it3, ev3, m3, J3, xJ3 = _solve(G_full, x, tol, damped_exit=1e-3, newton_at=tol)
            evals += ev3
            iters += it3
            methods.append(f"retry[{m3}]")
            if res3 < res:
                x, gx, res = x3, gx3, res3
        if res > accept and not rough and not converged(x, res) and res <= accept_noise * noise(x):
            rough = True
        if res > accept and not rough and not converged(x, res):
            # last resort: the whole slow ladder from the start (coarse stage to 1e-7 first), whose
            # different path over the pieces of a rough map can end in a fixed point the others missed
            xs_ = x_start
            if coarse and R > 1:
                xs_, _, _, it4, ev4, _, _, _ = _solve(G_one, x_start, 1e-7, damped_exit=1e-3, newton_at=1e-7,
                                                     max_newton=2)
                evals += ev4
                iters += it4
            x4, gx4, res4, it4, ev4, m4, J4, xJ4 = _solve(G_full, xs_, tol, damped_exit=1e-3, newton_at=tol)
            evals += ev4
            iters += it4
            methods.append(f"restart[{m4}]")
            if res4 < res:
                x, gx, res = x4, gx4, res4
            if res > accept and not converged(x, res) and res <= accept_noise * noise(x):
                rough = True
    except np.linalg.LinAlgError as exc:
        raise ConvergenceError(_SYSTEM, params, float("nan"), f"linear algebra failed ({exc})",
                               "a larger λ, another start (x0), or more integration points") from None
    evals += counts["evals"]
    iters += counts["iters"]
    flags = []
    if not (res <= accept or rough or converged(x, res)) or not np.isfinite(x).all():
        eta = noise_cache.get("value")
        what = "the fixed point did not converge" + (
            f" (integration noise of the map there {eta:.1e}: the residual must be below {accept:g} or "
            f"{accept_noise:g}× the noise)" if eta is not None else "")
        raise ConvergenceError(_SYSTEM, params, res, what,
                               "another start (x0, e.g. from a neighbouring α or λ), a larger λ, more points, "
                               "or branches=True to see other fixed points")
    if not converged(x, res):
        flags.append("residual_above_tol")
    if rough and res > accept:
        flags.append("rough_map")
    if "x" in last and np.array_equal(last["x"], x):
        gx, info = last["g"], last["info"]  # the map was last evaluated at the returned point
    else:
        gx, info = rs_map(kern, rules, x, alpha, lam, Delta, form=form, timing=timing)
        evals += 1
    av = info["averages"]  # (R, q)
    # Jacobian of the map at the returned point (stability and the delta-method error) and, from the
    # same evaluations, the derivative of the pooled channel averages in x, which the error of every
    # observable needs (E_test depends on the k-block only through the averages A, B).  With
    # ``surrogate_jacobian`` the differences are taken on the selection-frozen surrogate anchored at
    # x: equal to the frozen map's unless a sample's minimum switches within the difference step
    # (then the latter is meaningless anyway), at a fraction of its cost.
    if surrogate_jacobian and jac_out.get("x_J") is not None and _residual(x, jac_out["x_J"]) <= jac_out["reuse_final"]:
        # taken by the piece walk near this point, on the surrogate of (nearly) this selection:
        # the two differ by O(distance) and by the few samples that switched, far below the
        # sampling noise of a Jacobian on this rule (10-20 % of its largest entry at 4×8192)
        J, Jav = jac_out["J"], jac_out["extra"]
    else:
        if surrogate_jacobian:
            offs = [d["offset"] for d in info["diags"]]

            def Gi(v):
                return rs_map(kern, rules, v, alpha, lam, Delta, form=form, timing=timing, anchor=offs, newton_steps=1)
        else:
            def Gi(v):
                return rs_map(kern, rules, v, alpha, lam, Delta, form=form, timing=timing)
        if surrogate_jacobian:
            g1, inf1 = Gi(x)
            J, Jav = _fd_jacobian_with_averages(Gi, x, g1, inf1["averages"].mean(axis=0))
            evals += x.size + 1
        else:
            J, Jav = _fd_jacobian_with_averages(Gi, x, gx, av.mean(axis=0))
            evals += x.size
    eig = np.linalg.eigvals(J)
    stability = float(np.max(np.abs(eig)))
    # observables
    mod = next(iter(kern.modules.values()))

    def observables(xv, a):
        d = dict(zip(_NAMES, a))
        (E,) = mod.test_error(xv[3], xv[4], d["A"], d["B"], Delta, 0.0)
        return float(E), float(d["train_half_sq"])

    E, tl = observables(x, av.mean(axis=0))
    errs = {k: 0.0 for k in UNKNOWNS}
    E_err = tl_err = obj_err = 0.0
    if compute_error and R > 1:
        try:
            A = np.linalg.inv(np.eye(x.size) - J)
        except np.linalg.LinAlgError:
            A = None
            flags.append("singular_jacobian")
        if A is not None:
            xr_list, Er, tlr, objr = [], [], [], []
            for r in range(R):
                gr, _ = _update_from_averages(kern, av[r], x, alpha, lam, form)
                xr = x + A @ (gr - x)
                xr_list.append(xr)
                # replicate r's averages at its own fixed point, to first order: a_r(x_r) ≈ a_r(x*) + ∂ā/∂x·δx_r
                e_r, t_r = observables(xr, av[r] + Jav @ (xr - x))
                Er.append(e_r)
                tlr.append(t_r)
                objr.append(t_r + lam * (xr[1] + xr[4]) / (2 * alpha))
            xr_arr = np.array(xr_list)
            sd = xr_arr.std(axis=0, ddof=1) / math.sqrt(R)
            E_err = float(np.std(Er, ddof=1) / math.sqrt(R))
            tl_err = float(np.std(tlr, ddof=1) / math.sqrt(R))
            obj_err = float(np.std(objr, ddof=1) / math.sqrt(R))
            # the residual's own effect: the distance to the exact fixed point of the linearised map
            shift = A @ (gx - x)
            e_s, t_s = observables(x + shift, av.mean(axis=0) + Jav @ shift)
            sd = np.hypot(sd, np.abs(shift))
            o_s = t_s + lam * (x[1] + shift[1] + x[4] + shift[4]) / (2 * alpha)
            obj_err = float(math.hypot(obj_err, o_s - (tl + lam * (x[1] + x[4]) / (2 * alpha))))
            E_err, tl_err = float(math.hypot(E_err, e_s - E)), float(math.hypot(tl_err, t_s - tl))
            errs = dict(zip(UNKNOWNS, map(float, sd)))
    d = dict(zip(_NAMES, av.mean(axis=0)))
    pd_fail = float(d["pd_fail"])
    if pd_fail > 0.01:
        flags.append("pd_fail_above_1pct")
    if stability >= 1:
        flags.append("unstable")
    stability_damped = float(np.max(eig.real))
    # the RS training objective from its derived functional (§10.7) and the replicon (§10.8)
    hats_x = {k: float(v) for k, v in info["hats"].items()}
    (free_energy,) = np.atleast_1d(mod.rs_energy(*x, *(hats_x[k] for k in ("m_hat_k", "q_hat_k", "V_hat_k", "m_hat_v",
                                                                          "q_hat_v", "V_hat_v")),
                                                 lam, alpha, d["train_half_sq"], d["gg_k"], d["gg_v"]))
    try:
        replicon, replicon_err, _ = rs_replicon(kern, rules, x, alpha, lam, Delta, hats_x,
                                                offsets=[d_["offset"] for d_ in info["diags"]])
        evals += 1
    except (np.linalg.LinAlgError, ValueError, ZeroDivisionError, ConvergenceError):
        replicon = replicon_err = float("nan")
    if replicon >= 1:
        flags.append("rsb")
    diags = info["diags"]
    amb = float(np.mean([dg["ambiguous_fraction"] for dg in diags]))
    mm = float(np.mean([dg["multi_minima_fraction"] for dg in diags]))
    values = dict(zip(UNKNOWNS, map(float, x)))
    seconds = time.perf_counter() - t_start
    if progress is not None:
        progress(f"RS alpha={alpha:g} lam={lam:g}: E_test={E:.5f} ± {E_err:.1e} ({'+'.join(methods)}, "
                 f"{evals} maps, {seconds:.2f}s)")
    return RSFixedPoint(values, errs, E, E_err, tl, tl_err, tl + lam * (x[1] + x[4]) / (2 * alpha),
                        {k: float(v) for k, v in info["hats"].items()}, stability, pd_fail, mm, amb, res, iters,
                        evals, "+".join(methods), rules[0].method, seconds, timing.get("prox", 0.0), float(alpha),
                        float(lam), float(Delta), tuple(flags), free_energy=float(free_energy),
                        training_objective_error=obj_err, stability_damped=stability_damped, replicon=replicon,
                        replicon_error=replicon_err, jacobian=J,
                        anchor=[d["offset"] for d in info["diags"]], averages=av.mean(axis=0))


def rs_learning_curve(kern: RSKernels, rules, alphas, lam, Delta, *, x0=None, model="spiked", nu=2.0,
                      progress=None, **kw) -> list:
    """Fixed points along ``alphas`` (sorted as given) by continuation: each starts from the previous
    one (``rs_fixed_point(warm=previous)``: its point, Jacobian and prox selection).

    Order matters for cost, not for the answer where the fixed point is unique: the first, cold
    point costs most, and at small α (rough map) most of all, so solving from the largest α down is
    cheaper (10 α in [1, 20], softmax spiked L = 2, 4×8192: 71 s CPU from α = 20 down, 105 s from
    α = 1 up, the same fixed points, measured 2026-12-01 with the solver of then; 12 s from α = 20 down
    now).  Where several fixed points exist, continuation follows the
    branch it starts on."""
    out = []
    prev = None
    for a in alphas:
        fp = rs_fixed_point(kern, rules, a, lam, Delta, x0=x0 if prev is None else None, warm=prev, model=model,
                            nu=nu, progress=progress, **kw)
        out.append(fp)
        prev = fp
    return out


def rs_branches(kern: RSKernels, rules, alpha, lam, Delta, *, model="spiked", nu=2.0, x0=None, progress=None,
                **kw) -> list:
    """Every distinct fixed point reached from the informed and the small-overlap starts (§10.6).

    Returns a list of ``(branch_name, RSFixedPoint)``; ``"informed"`` first.  A start that does not
    converge is skipped (the informed one must converge).  Two fixed points are the same when
    their order parameters agree within 1e-4 (relative).
    """
    starts = [("informed", informed_start(model, nu) if x0 is None else np.asarray(x0, float)),
              ("small_overlap", small_overlap_start(model, nu))]
    found = []
    for name, s in starts:
        try:
            fp = rs_fixed_point(kern, rules, alpha, lam, Delta, x0=s, model=model, nu=nu, progress=progress, **kw)
        except ConvergenceError:
            if name == "informed":
                raise
            continue
        v = np.array([fp.values[k] for k in UNKNOWNS])
        dup = any(np.max(np.abs(v - np.array([f.values[k] for k in UNKNOWNS])) / np.maximum(1, np.abs(v))) < 1e-4
                  for _, f in found)
        if not dup:
            found.append((name, fp))
    return found


def _same_point(fa: RSFixedPoint, fb: RSFixedPoint, k_se: float = 3.0, rel: float = 1e-4) -> bool:
    """Two fixed points on the same rule are one when every order parameter agrees within
    ``k_se`` combined standard errors or ``rel`` (relative): closer than the integration error they
    cannot be told apart."""
    for k in UNKNOWNS:
        a, b = fa.values[k], fb.values[k]
        ea, eb = fa.errors.get(k, 0.0), fb.errors.get(k, 0.0)
        if abs(a - b) > max(rel * max(1.0, abs(a), abs(b)), k_se * math.hypot(ea, eb)):
            return False
    return True


def _degenerate(fp: RSFixedPoint) -> bool:
    """A point the search rejects: a response parameter at the projection's floor (V → 0, where the
    map's Jacobian blows up; measured: ``linear_uncentred`` spiked L = 2, λ = 0.1, continued down
    from λ = 10, ends at V_k = V_v = 1e-10 with a residual above tol and spectral radius ~1e4) or
    non-finite values.  Not a fixed point of the RS equations (they need V > 0)."""
    x = np.array([fp.values[k] for k in UNKNOWNS])
    return (not np.isfinite(x).all()) or min(x[2], x[5]) <= 1e-8 or not math.isfinite(fp.training_objective)


def _add_distinct(found: list, origin: str, fp: RSFixedPoint) -> bool:
    """Append ``(origin, fp)`` unless it repeats a point of ``found`` (then keep the lower residual)."""
    for i, (o, f) in enumerate(found):
        if _same_point(f, fp):
            if fp.residual < f.residual:
                found[i] = (o, fp)
            return False
    found.append((origin, fp))
    return True


#: Ridge strengths of the large-λ continuation, as multiples of the target λ (from large to small).
LAMBDA_LADDER = (100.0, 10.0, 3.0)


def rs_branch_search(kern: RSKernels, rules, alphas, lam, Delta, *, model="spiked", nu=2.0, x0=None,
                     lam_ladder=LAMBDA_LADDER, side_ratio: float = 1.5, progress=None, **kw) -> dict:
    r"""Every distinct RS fixed point found at each α of ``alphas`` (docs/slr.md §10.7).

    Starts, at every α: the informed start (or ``x0``), the small-overlap start, continuation in λ
    from large λ (the informed start at ``lam_ladder`` × λ, then warm steps down to λ), and
    continuation in α from both sides: along ``alphas`` (sorted) from every fixed point of the
    neighbouring α below, then from every one of the neighbour above (the neighbouring points of the
    curve); a lone α gets its two sides at α/``side_ratio`` and α·``side_ratio``.  A start that does
    not converge is skipped.  Distinct up to the integration error (:func:`_same_point`).

    Returns ``{alpha: [(origin, RSFixedPoint), ...]}`` in the order found; select with
    :func:`rs_select_equilibrium`.  Cost: about (4 + len(lam_ladder) + 2 × branches) fixed points per α.
    """
    alphas = sorted(float(a) for a in alphas)
    found = {a: [] for a in alphas}

    def solve(a, lam_, **kw2):
        try:
            fp = rs_fixed_point(kern, rules, a, lam_, Delta, model=model, nu=nu, progress=progress, **kw, **kw2)
        except (ConvergenceError, ValueError, np.linalg.LinAlgError, FloatingPointError):
            return None
        return None if _degenerate(fp) else fp

    x_inf = informed_start(model, nu) if x0 is None else np.asarray(x0, float)
    for a in alphas:
        for origin, s in (("informed", x_inf), ("small_overlap", small_overlap_start(model, nu))):
            fp = solve(a, lam, x0=s)
            if fp is not None:
                _add_distinct(found[a], origin, fp)
        prev = None
        for mult in lam_ladder:
            prev = solve(a, lam * mult, x0=x_inf) if prev is None else solve(a, lam * mult, warm=prev)
        fp = solve(a, lam, x0=x_inf) if prev is None else solve(a, lam, warm=prev)
        if fp is not None:
            _add_distinct(found[a], "large_lambda", fp)
    sides = {}
    if len(alphas) == 1:
        a = alphas[0]
        for tag, a_side in (("alpha_below", a / side_ratio), ("alpha_above", a * side_ratio)):
            fs = solve(a_side, lam, x0=x_inf)
            sides[tag] = [] if fs is None else [fs]
    # continuation along the curve, up then down, from every branch of the neighbour
    for direction, order in (("alpha_up", alphas), ("alpha_down", alphas[::-1])):
        for i, a in enumerate(order):
            if i == 0:
                neigh = sides.get("alpha_below" if direction == "alpha_up" else "alpha_above", [])
            else:
                neigh = [f for _, f in found[order[i - 1]]]
            for fn in neigh:
                fp = solve(a, lam, warm=fn)
                if fp is not None:
                    _add_distinct(found[a], direction, fp)
    return found


def rs_select_equilibrium(branches: list) -> list:
    """Label the fixed points of one point (``[(origin, fp), ...]``): returns rows of
    ``(origin, fp, phase)`` sorted by training objective, ``phase`` one of ``"equilibrium"`` and
    ``"metastable"`` (docs/slr.md §10.7).

    The equilibrium branch is the one with the lowest RS training objective (zero-temperature free
    energy) among the RS-stable ones (replicon < 1); if none is RS-stable, the lowest of all (its row
    then carries ``rsb``).  An RS energy computed at an AT-unstable point is not the ground-state energy
    of anything (RS underestimates it there, as in the Sherrington–Kirkpatrick model), so a low value
    there does not make it the equilibrium."""
    if not branches:
        return []
    order = sorted(branches, key=lambda of: of[1].training_objective)
    stable = [of for of in order if of[1].replicon < 1]
    eq = (stable or order)[0]
    return [(o, f, "equilibrium" if (o, f) is eq or f is eq[1] else "metastable") for o, f in order]


def _unstable(fp) -> bool:
    """Not an RS prediction to tune on (docs/slr.md §10.7–10.8): not an attracting fixed point of the
    damped iteration (the largest real part of the eigenvalues of ∂G/∂x is ≥ 1), or replica symmetry
    broken there (replicon ≥ 1).  The undamped spectral radius (``stability``) can exceed 1 at a fixed
    point the damped map reaches (an eigenvalue below −1), which is a prediction like any other; it is
    used only when the damped value is missing.  Measured: with the damped criterion alone, softmax at
    α = 15.2 tuned to λ = 10⁻³ (the grid's edge) with E_test 0.238, a dip below the neighbouring α —
    a replica-symmetry-broken point."""
    d = getattr(fp, "stability_damped", float("nan"))
    rep = getattr(fp, "replicon", float("nan"))
    if math.isfinite(rep) and rep >= 1:
        return True
    return bool(d >= 1) if math.isfinite(d) else bool(fp.stability >= 1)


def rs_tune_lambda(kern: RSKernels, rules, alpha, Delta, *, grid=None, model="spiked", nu=2.0, x0=None,
                   refine: bool = True, xatol: float = 0.02, progress=None, **kw):
    r"""Minimise E_test over λ at fixed α (§12), among the stable fixed points (:func:`_unstable`: the
    damped map's criterion): a log grid (default 9 points on 10⁻³…10, solved by continuation from large
    to small λ; a warm start with no alignment, m = 0, or an unstable result is solved again from the
    informed start), then a bounded 1-D
    refinement in :math:`\log_{10}\lambda` between the neighbours of the best grid point
    (``scipy.optimize.minimize_scalar``, bounded Brent, ``xatol`` in decades).

    Returns ``(best RSFixedPoint, [grid RSFixedPoint...])``.  Grid points that do not converge
    are skipped and listed in the best point's flags.
    """
    grid = np.logspace(-3, 1, 9) if grid is None else np.asarray(sorted(grid), float)
    if grid.size < 3:
        raise ValueError("the λ grid needs at least 3 points")
    pts = {}
    x = x0
    prev = None
    failed = []
    x_informed = informed_start(model, nu) if x0 is None else np.asarray(x0, float)
    for lam in grid[::-1]:
        # Continuation from large λ, with one guard: at large λ the fixed point can be the trivial
        # one (m = 0), and the subspace m_k = m_v = 0 is invariant under the map, so a warm start
        # from it never returns to the informed branch (linear_pure, L = 3, α = 2: E = 1.038 at an
        # unstable m = 0 point instead of 0.947).  Such a start, or a result that is unstable, is
        # solved again from the informed start, and the stable informed point is kept.
        start, warm = x, prev
        if start is not None and min(abs(start[0]), abs(start[3])) < 1e-3:
            start, warm = x_informed, None
        try:
            fp = rs_fixed_point(kern, rules, alpha, float(lam), Delta, x0=start, warm=warm, model=model, nu=nu,
                                progress=progress, **kw)
        except ConvergenceError:
            fp = None
        if (fp is None or _unstable(fp)) and start is not x_informed:
            try:
                fp2 = rs_fixed_point(kern, rules, alpha, float(lam), Delta, x0=x_informed, model=model, nu=nu,
                                     progress=progress, **kw)
                if fp is None or not _unstable(fp2):
                    fp = fp2
            except ConvergenceError:
                pass
        if fp is None:
            failed.append(float(lam))
            continue
        pts[float(lam)] = fp
        x = np.array([fp.values[k] for k in UNKNOWNS])
        prev = fp
    if not pts:
        raise ConvergenceError(_SYSTEM, {"alpha": alpha, "Delta": Delta}, float("nan"),
                               "no λ of the grid converged", "a different grid or more points")
    lams = sorted(pts)
    # λ* among the stable equilibrium fixed points (an unstable one, e.g. on a rough map at small λ, is
    # not a prediction of the trained model); all of them only if none is stable.  The equilibrium
    # training objective e(λ) = min_θ [loss + λ‖θ‖²/2]/N is non-decreasing in λ (de/dλ = ‖θ̂‖²/2N ≥ 0), so
    # a fixed point whose objective exceeds that of a larger λ on the grid (beyond 3 SE) is a
    # non-equilibrium branch (measured: softmax, α = 15.2, λ = 10⁻³: objective 0.113 against 0.060 at
    # λ = 3.2·10⁻³, E_test 0.238, a dip of the tuned curve).
    objs = [pts[l_].training_objective for l_ in lams]
    errs = [pts[l_].training_objective_error if math.isfinite(pts[l_].training_objective_error) else 0.0
            for l_ in lams]
    nonequilibrium = [any(objs[i] > objs[j] + 3 * max(errs[i], errs[j]) for j in range(i + 1, len(lams)))
                      for i in range(len(lams))]
    for i, l_ in enumerate(lams):
        if nonequilibrium[i] and "nonequilibrium" not in pts[l_].flags:
            pts[l_].flags = tuple(pts[l_].flags) + ("nonequilibrium",)
    Ecand = [pts[l_].E_test if not (_unstable(pts[l_]) or nonequilibrium[i]) else math.inf
             for i, l_ in enumerate(lams)]
    if not np.isfinite(Ecand).any():
        Ecand = [pts[l_].E_test for l_ in lams]
    ib = int(np.argmin(Ecand))
    best = pts[lams[ib]]
    grid_out = [pts[l_] for l_ in lams]
    if refine and 0 < ib < len(lams) - 1:
        lo, hi = math.log10(lams[ib - 1]), math.log10(lams[ib + 1])
        cache = {}
        xb = np.array([best.values[k] for k in UNKNOWNS])

        def f(u):
            if u in cache:
                return cache[u].E_test
            try:
                fp = rs_fixed_point(kern, rules, alpha, 10 ** u, Delta, x0=xb, warm=best, model=model, nu=nu, **kw)
            except ConvergenceError:
                return math.inf
            cache[u] = fp
            return fp.E_test

        from scipy.optimize import minimize_scalar

        # Brent's bounded method (golden section with parabolic steps): interior points only, the
        # failed solves as +inf; every solved point is a candidate below, not only its minimiser
        minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": xatol})
        obj_hi = pts[lams[ib + 1]].training_objective  # the objective is non-decreasing in λ (above)
        for fp in cache.values():
            below = not fp.training_objective > obj_hi + 3 * max(fp.training_objective_error, errs[ib + 1], 0.0)
            if fp.E_test < best.E_test and below and (not _unstable(fp) or _unstable(best)):
                best = fp
    elif ib in (0, len(lams) - 1):
        best.flags = best.flags + ("lambda_at_grid_edge",)
    if failed:
        best.flags = best.flags + ("grid_failed:" + ";".join(f"{v:g}" for v in failed),)
    if progress is not None:
        progress(f"tuned alpha={alpha:g}: lam*={best.lam:.4g}, E_test={best.E_test:.5f}")
    return best, grid_out
