"""The per-sample prox of the RS channel (docs/slr.md §10.3, §10.6): screened multistart, safeguarded Newton from
the screened starts, selection of the lowest minimum; the exact polynomial prox of affine activations.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from attnlimits.symbolic.options import resolve_options

import numpy as np

from ...portable_solver import ConvergenceError
from .rule import SYSTEM

__all__ = ["ProxOptions", "chunked", "columns", "pd_and_inverse_diagonal", "prox_affine", "prox_newton", "unpack_sym"]


_START_T = (0.25, -0.25, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0, 3.0, -3.0, 4.0, -4.0, 5.0, -5.0, 7.0, -7.0,
            10.0, -10.0)


def columns(a):
    return [a[:, i] for i in range(a.shape[1])]


def unpack_sym(flat, L):
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


def pd_and_inverse_diagonal(P, shift=None):
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
        Pr = P[redo] if shift is None else unpack_sym([np.broadcast_to(f, (n,))[redo] for f in P], m) + np.diag(shift)
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
    H = unpack_sym(Hup, L)
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
    H = unpack_sym(Hup, L)
    with np.errstate(invalid="ignore"):
        ev = np.linalg.eigvalsh(np.where(np.isfinite(H), H, 0.0))
    return (ev[:, 0] > 0) & np.isfinite(H).all(axis=(1, 2))


#: samples per call of a generated kernel: the CSE'd kernels keep every intermediate alive until they
#: return (about 55 temporaries for F_newton at L = 2), so on long arrays they run from memory rather
#: than cache; in blocks of this many samples they are 1.5-1.8x faster (measured, softmax L = 2: F_newton
#: on 98304 starts 27 → 18 ms, the screening F_value on 41 × 32768 candidates 71 → 39 ms at 2048
#: columns), with bit-identical results (the kernels are elementwise)
_CHUNK = 4096


def chunked(fn, cols, scalars, m, chunk=_CHUNK):
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


@dataclass(frozen=True)
class ProxOptions:
    """Options of :func:`prox_newton`: Newton iterations ``max_iter`` to the gradient tolerance ``gtol``
    (relative to 1 + 1/V_k); ``keep_starts`` (None: one start per ray; an int: the lowest few; ``"all"``: every
    screened candidate); merging of coinciding starts within ``dedup_tol`` once ``dedup_min`` of them are live
    (0: never); ``prune`` the uphill ray starts of a one-dimensional prox."""

    max_iter: int = 60
    gtol: float = 1e-9
    keep_starts: int | str | None = None
    dedup_tol: float = 1e-4
    dedup_min: int = 32
    prune: bool = True

def prox_newton(mod, wchi, wz, y, V_k, V_v, *, starts=None, newton_steps=0, shift_invariant=False,
                options: ProxOptions | None = None, trace=None, stats=None, joint=False, **overrides):
    """Minimise F over χ for every sample; returns χ̂ (n, L) and diagnostics.

    Multistart (§10.6, screened): F is evaluated at ω^χ and at ω^χ + t√V_k d for the directions
    d ∈ {e_ℓ} ∪ {(e_ℓ − e_ℓ')/√2} (the differences matter for normalised activations, whose
    non-trivial directions are orthogonal to 1) and t ∈ ±{0.25, …, 10}; safeguarded Newton runs from
    ω^χ and from the best candidate of each ray (1 + L(L+1) starts; ``keep_starts`` keeps only the
    lowest few, ``"all"`` every candidate), and the lowest minimum is kept.  The options (``max_iter``, ``gtol``,
    ``keep_starts``, ``dedup_tol``, ``dedup_min``, ``prune``) are the fields of :class:`ProxOptions`; keyword
    arguments override them.
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

    ``joint`` (a loss other than the square one, docs/slr.md §10.3a): the last column of ``wchi`` is the start of
    the residual r, an unknown beside χ; the rays are those of χ (as above, padded with 0 in r) and one along r,
    and ``shift_invariant`` applies to the χ part (Φ depends on χ through σ(χ) and the penalty only).  The
    one-dimensional pruning never applies (the problem has at least two dimensions).

    ``starts`` (n, L), if given, replaces the multistart by one given start per sample: that is the
    selection-frozen surrogate used by the outer solver's piece walk (:func:`rs_map` ``anchor``),
    never the map itself.  With ``starts``, ``newton_steps`` k > 0 takes k plain Newton steps from
    them instead of the safeguarded iteration to ``gtol`` (for starts that are minima at a nearby
    point: finite differences, k = 1, and the walk's loosely solved first round, k = 2); a sample
    whose step is not finite (k ≥ 2: or whose H is not positive definite, or whose step exceeds the
    clip) gets the safeguarded iteration.  The diagnostics of such a call are not measured (zeros).
    """
    o = resolve_options(ProxOptions, options, overrides)
    n, L = wchi.shape
    wcT = np.ascontiguousarray(wchi.T)  # (L, n)
    wzT = np.ascontiguousarray(wz.T)
    y = np.ascontiguousarray(y, dtype=float)
    if starts is not None and newton_steps:
        return _newton_steps_from(mod, wchi, wz, y, wcT, wzT, V_k, V_v, np.array(starts, float).T.copy(),
                                  int(newton_steps), o, shift_invariant, joint)
    if starts is not None:
        # one given start per sample (the selection-frozen surrogate of the piece walk): no screening
        st = _Starts.given(np.array(starts, float).T.copy(), n)
    else:
        rays = _Rays(L, V_k, shift_invariant, joint)
        Fc = _screen(mod, wcT, wzT, y, rays.off, V_k, V_v)
        pick = _pick_starts(Fc, rays.blocks, o.keep_starts, n)
        st = _Starts.screened(wcT, rays.off, pick, n)
        if o.keep_starts is None and o.prune and shift_invariant and L == 2 and not joint:
            # a one-dimensional prox (see the docstring): an uphill ray start is not run, it receives the
            # final point of ω^χ's start (column 0)
            st.drop_uphill(_uphill_ray_starts(Fc, rays.blocks, pick, rays.off))
    it, ndup = _newton_from_starts(mod, st, wcT, wzT, y, V_k, V_v, o, trace)
    if stats is not None:
        stats["dedup"] = stats.get("dedup", 0) + ndup
    return _select_minimum(st, it, V_k, V_v)


class _Rays:
    """The screening grid: ω^χ, then per direction the positive t's and the negative t's (ascending |t|), so that
    every ray is one contiguous block of rows; ``off`` (S0, L) the offsets from ω^χ, ``blocks`` the row ranges
    of ω^χ and of each ray (direction, sign)."""

    def __init__(self, L, V_k, shift_invariant, joint=False):
        Lc = L - 1 if joint else L  # the χ coordinates; with ``joint`` the last one is the residual r
        dirs = [] if shift_invariant else [np.eye(L)[ell] for ell in range(Lc)]
        for i in range(Lc):
            for j in range(i + 1, Lc):
                dirs.append((np.eye(L)[i] - np.eye(L)[j]) / math.sqrt(2))
        if joint:
            dirs.append(np.eye(L)[L - 1])
        ts = np.array(_START_T)
        if shift_invariant:
            # σ(χ + c1) = σ(χ): the prox offset is orthogonal to 1, and a ray along e_ℓ screens the
            # points of the difference rays at t/√2 (its component along 1 only adds penalty): those
            # points join the difference rays' grids instead of making rays of their own
            ts = np.unique(np.concatenate([ts, ts / math.sqrt(2)]))
        tpos, tneg = ts[ts > 0], ts[ts < 0]
        tord = np.concatenate([tpos, tneg])
        nt, npos = tord.size, tpos.size
        self.off = np.concatenate([np.zeros((1, L))] + [np.outer(tord, d_) * math.sqrt(V_k) for d_ in dirs])
        self.blocks = [(0, 1)]
        for k in range(len(dirs)):
            self.blocks += [(1 + k * nt, 1 + k * nt + npos), (1 + k * nt + npos, 1 + (k + 1) * nt)]


def _screen(mod, wcT, wzT, y, off, V_k, V_v):
    """F at every candidate ω^χ + off_s, (S0, n), broadcast without copies of ω^χ, ω^z, y (+inf where not
    finite)."""
    S0, L = off.shape
    n = wcT.shape[1]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        Fc = np.empty((S0, n))
        cs = max(256, (8 * _CHUNK) // S0)  # about 8·_CHUNK candidates per block
        for a in range(0, n, cs):
            b = min(n, a + cs)
            Fc[:, a:b] = mod.F_value(*[wcT[l][None, a:b] + off[:, l][:, None] for l in range(L)],
                                     *[w[None, a:b] for w in wcT], *[w[None, a:b] for w in wzT], y[None, a:b],
                                     V_k, V_v)[0]
    return np.where(np.isfinite(Fc), Fc, np.inf)


def _pick_starts(Fc, blocks, keep_starts, n):
    """The best candidate of ω^χ itself and of each ray: one start per region, so that a distant basin is never
    screened out by nearer candidates of the same basin; (n, S) row indices into the grid."""
    pick = np.stack([a + np.argmin(Fc[a:b], axis=0) if b - a > 1 else np.zeros(n, int) for a, b in blocks], axis=1)
    S0 = Fc.shape[0]
    if keep_starts == "all":
        pick = np.broadcast_to(np.arange(S0), (n, S0))
    elif keep_starts is not None and keep_starts < pick.shape[1]:
        Fp = np.take_along_axis(Fc.T, pick, axis=1)
        order0 = np.argsort(Fp, axis=1, kind="stable")[:, :keep_starts]
        pick = np.take_along_axis(pick, order0, axis=1)
    return pick


class _Starts:
    """The multistart's state: ``X`` (L, M) the iterate of every start (sample-major: start s of sample i is
    column i·S + s), ``Fcur`` and ``gnorm`` its objective and gradient norm, ``alias``/``dropped`` the starts
    merged into another (they receive its final point), ``samp`` the sample of each start."""

    def __init__(self, X, n, S):
        self.X, self.n, self.S = X, n, S
        self.M = n * S
        self.samp = np.repeat(np.arange(n), S) if S > 1 else np.arange(n)
        self.Fcur = np.full(self.M, np.inf)
        self.gnorm = np.full(self.M, np.inf)
        self.alias = np.arange(self.M)
        self.dropped = np.zeros(self.M, bool)

    @classmethod
    def given(cls, X, n):
        return cls(X, n, 1)

    @classmethod
    def screened(cls, wcT, off, pick, n):
        S = pick.shape[1]
        samp = np.repeat(np.arange(n), S)  # sample of each start (sample-major, like the selection)
        pf = pick.reshape(-1)
        X = np.stack([wcT[l][samp] + off[pf, l] for l in range(wcT.shape[0])])  # (L, M)
        st = cls(X, n, S)
        st.samp = samp
        return st

    def drop_uphill(self, up):
        pr = np.flatnonzero(up.reshape(-1))
        self.alias[pr] = (pr // self.S) * self.S
        self.dropped[pr] = True


def _newton_steps_from(mod, wchi, wz, y, wcT, wzT, V_k, V_v, X, newton_steps, o, shift_invariant, joint=False):
    """``newton_steps`` plain Newton steps from given starts near their minima, no line search: one from minima
    at a point O(h) away (finite differences of the surrogate: the step's error is O(h²), so the quotient's is
    O(h)); two from minima a few 1e-2 away (error O(Δ⁴): the walk's first, loosely solved round).  Beyond one
    step a sample keeps them only while H ≻ 0 and the step is within the clip; the others, and any non-finite
    step, get the full iteration.  The diagnostics are not measured (zeros)."""
    n, L = wchi.shape
    Xk = X.copy()
    ok = np.ones(n, bool)
    clip = max(1.0, math.sqrt(V_k))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for _ in range(newton_steps):
            out = chunked(mod.F_newton, [*Xk, *wcT, *wzT, y], (V_k, V_v), n)
            d = _newton_direction(np.stack(out[1:1 + L]), out[1 + L:], L)
            ok &= np.isfinite(d).all(axis=0)
            if newton_steps > 1:
                ok &= _posdef(out[1 + L:], L) & (np.sqrt((d * d).sum(axis=0)) <= clip)
            Xk += np.where(ok, d, 0.0)
    if not ok.all():
        bad = np.flatnonzero(~ok)
        sub, _ = prox_newton(mod, wchi[bad], wz[bad], y[bad], V_k, V_v, starts=X[:, bad].T,
                             shift_invariant=shift_invariant, options=o, joint=joint)
        Xk[:, bad] = sub.T
    return Xk.T, {"prox_iterations": int(newton_steps), "unconverged_fraction": 0.0,
                  "ambiguous_fraction": 0.0, "multi_minima_fraction": 0.0}


def _newton_from_starts(mod, st: _Starts, wcT, wzT, y, V_k, V_v, o: ProxOptions, trace):
    """Safeguarded Newton from every live start, vectorised over the active ones (compacted as they converge):
    the Newton direction where it descends, else a scaled gradient step; steps clipped to length
    max(1, √V_k); backtracking until F decreases.  Returns ``(iterations, merged starts)``."""
    L = st.X.shape[0]
    act = np.flatnonzero(~st.dropped)
    xa = st.X[:, act]
    wc = wcT[:, st.samp[act]]
    wzz = wzT[:, st.samp[act]]
    yy = y[st.samp[act]]
    thr = o.gtol * (1.0 + 1.0 / V_k)
    clip = max(1.0, math.sqrt(V_k))
    it = 0
    ndup = 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        while act.size and it < o.max_iter:
            it += 1
            m = act.size
            out = chunked(mod.F_newton, [*xa, *wc, *wzz, yy], (V_k, V_v), m)
            Fa = out[0]
            g = np.stack(out[1:1 + L])
            Hup = out[1 + L:]
            st.Fcur[act] = Fa
            gn = np.sqrt((g * g).sum(axis=0))
            st.gnorm[act] = gn
            keep = gn > thr
            if o.dedup_tol and st.S > 1 and it >= 2 and keep.sum() >= o.dedup_min:
                merged = _merge_coincident(st, act, keep, Hup, o.dedup_tol)
                if merged:
                    keep &= ~st.dropped[act]
                    ndup += merged
            if trace is not None:
                trace.append(int(keep.sum()))
            if not keep.any():
                break
            if not keep.all():
                act, xa, Fa, g = act[keep], xa[:, keep], Fa[keep], g[:, keep]
                Hup = [h[keep] for h in Hup]
                wc, wzz, yy = wc[:, keep], wzz[:, keep], yy[keep]
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
            xnew, accepted = _line_search(mod, st, act, xa, d, dg, Fa, bad, dn * scale, (wc, wzz, yy), V_k, V_v)
            st.X[:, act[accepted]] = xnew[:, accepted]
            small = dn * scale < 1e-13 * (1 + np.abs(xa).max(axis=0))
            nxt = accepted & ~small
            if not nxt.all():
                act, xnew, wc, wzz, yy = act[nxt], xnew[:, nxt], wc[:, nxt], wzz[:, nxt], yy[nxt]
            xa = xnew
    return it, ndup


def _merge_coincident(st: _Starts, act, keep, Hup, dedup_tol) -> int:
    """A start whose iterate coincides with another start's of the same sample (in a convex region) follows that
    start into the same minimum: drop it (if both are candidates, the one with the larger F, then the later
    start) and alias it to the other.  Returns the number merged."""
    L, n, S, X = st.X.shape[0], st.n, st.S, st.X
    cand = np.zeros(st.M, bool)
    cand[act[keep]] = _posdef([h[keep] for h in Hup], L)
    has = np.zeros(n, bool)
    has[st.samp[act[keep]]] = True
    rows = np.flatnonzero(has)
    base = (rows * S)[:, None]
    lv = ~st.dropped.reshape(n, S)[rows]
    o = np.argsort(np.where(lv, X[0].reshape(n, S)[rows], np.inf), axis=1, kind="stable")
    pair = np.take_along_axis(lv, o[:, :-1], axis=1) & np.take_along_axis(lv, o[:, 1:], axis=1)
    a_, b_ = (base + o[:, :-1])[pair], (base + o[:, 1:])[pair]
    close = np.abs(X[:, a_] - X[:, b_]).max(axis=0) <= dedup_tol * (1.0 + np.abs(X[:, a_]).max(axis=0))
    close &= cand[a_] | cand[b_]
    if not close.any():
        return 0
    a_, b_ = a_[close], b_[close]
    Fcur = st.Fcur
    drop_b = cand[b_] & (~cand[a_] | (Fcur[b_] > Fcur[a_]) | ((Fcur[b_] == Fcur[a_]) & (b_ > a_)))
    dr = np.where(drop_b, b_, a_)
    sv = np.where(drop_b, a_, b_)
    st.alias[dr] = sv
    st.dropped[dr] = True
    return int(dr.size)


def _line_search(mod, st: _Starts, act, xa, d, dg, Fa, bad, step_norm, fields, V_k, V_v):
    """Backtracking (Armijo, at most 12 halvings) along d from xa; a step whose predicted decrease is below the
    rounding of F and whose length is below 1e-7 is taken in full (the iterate is in the quadratic range; the
    next gradient test decides).  Updates ``st.Fcur``; returns ``(new iterates, accepted)``."""
    wc, wzz, yy = fields
    m = act.size
    adg = np.abs(dg)
    step = np.ones(m)
    accepted = np.zeros(m, bool)
    xnew = xa.copy()
    todo = None
    flat = (adg <= 1e-15 * (1.0 + np.abs(Fa))) & ~bad & (step_norm <= 1e-7 * (1 + np.abs(xa).max(axis=0)))
    if flat.any():
        # the predicted decrease is below the rounding of F, so no decrease can be measured (the search below
        # would halve the step 12 times and fail)
        accepted[flat] = True
        xnew[:, flat] = xa[:, flat] + d[:, flat]
        todo = np.flatnonzero(~flat)
    for _ in range(12 if todo is None or todo.size else 0):
        if todo is None:
            xt = xa + d
            Ft = chunked(mod.F_value, [*xt, *wc, *wzz, yy], (V_k, V_v), m)[0]
            st_, Fo, ad = step, Fa, adg
        else:
            st_ = step[todo]
            xt = xa[:, todo] + st_ * d[:, todo]
            Ft = np.broadcast_to(mod.F_value(*xt, *wc[:, todo], *wzz[:, todo], yy[todo], V_k, V_v)[0],
                                 (todo.size,))
            Fo, ad = Fa[todo], adg[todo]
        fin = np.isfinite(Ft)
        ok = fin & (Ft <= Fo - 1e-4 * st_ * ad)
        ok |= fin & (Ft < Fo) & (st_ < 1e-3)
        idx = np.flatnonzero(ok) if todo is None else todo[ok]
        xnew[:, idx] = xt[:, ok]
        st.Fcur[act[idx]] = Ft[ok]
        accepted[idx] = True
        todo = np.flatnonzero(~ok) if todo is None else todo[~ok]
        if not todo.size:
            break
        step[todo] *= 0.5
    return xnew, accepted


def _select_minimum(st: _Starts, it, V_k, V_v):
    """Resolve the merged starts (chains end at a start that was never dropped), keep the lowest minimum of every
    sample, and measure the diagnostics: unconverged, ambiguous (the best two starts in different minima within
    1e-6 in F) and multi-minimum fractions, and the mask ``distinct`` of samples with several minima."""
    n, S, L = st.n, st.S, st.X.shape[0]
    root = st.alias.copy()
    while True:
        nr = root[root]
        if np.array_equal(nr, root):
            break
        root = nr
    assert not st.dropped[root].any()
    X = st.X[:, root]
    Fend = np.where(np.isfinite(st.Fcur[root]), st.Fcur[root], np.inf).reshape(n, S)
    gnorm = st.gnorm[root]
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
        raise ConvergenceError(SYSTEM, {"V_k": V_k, "V_v": V_v}, float("nan"),
                               "the prox objective is not finite for some samples",
                               "smaller overlaps, a larger λ, or check the activation for overflow")
    diag = {"prox_iterations": it, "unconverged_fraction": float((gnorm.reshape(n, S)[ar, best] > 1e-6).mean()),
            "ambiguous_fraction": float(ambiguous.mean()), "multi_minima_fraction": float(distinct_minima.mean()),
            "distinct": distinct_minima}
    return chi_hat, diag


def prox_affine(mod, wchi, wz, y, V_k, V_v):
    """Exact prox of an affine activation: real roots of the residual polynomial, lowest objective."""
    n, L = wchi.shape
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        co = mod.affine_poly(*columns(wchi), *columns(wz), y, V_k, V_v)
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
            out = mod.affine_fields(re[:, k], *columns(wchi), *columns(wz), y, V_k, V_v)
            obj = np.where(real[:, k] & np.isfinite(out[-1]), out[-1], np.inf)
            better = obj < best_obj
            best_obj = np.where(better, obj, best_obj)
            chi_k = np.stack([np.broadcast_to(o, (n,)) for o in out[:L]], axis=1)
            chi_hat[better] = chi_k[better]
    if not np.isfinite(best_obj).all():
        raise ConvergenceError(SYSTEM, {"V_k": V_k, "V_v": V_v}, float("nan"),
                               "no real root of the residual polynomial for some samples",
                               "report this setting (the polynomial always has a real root in exact arithmetic)")
    return chi_hat, {"prox_iterations": 0, "unconverged_fraction": 0.0, "ambiguous_fraction": 0.0,
                     "multi_minima_fraction": float((real.sum(axis=1) > 1).mean())}
