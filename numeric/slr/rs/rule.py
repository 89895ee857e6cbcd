"""The bottom floor of the RS solver: generated kernels, the frozen integration rule, the unknowns and their
domain (docs/slr.md §10.6).

A frozen rule is ``replicates`` independent scrambled Sobol blocks of ``points`` points each, over the teacher and
Gaussian fields of one sequence length; the spread of the replicates is the integration error.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Ridge",
    "SYSTEM",
    "UNKNOWNS",
    "RSKernels",
    "RSRule",
    "compile_rs_kernels",
    "informed_start",
    "make_rule",
    "prefix_rule",
    "project",
    "residual",
    "ridge_term",
    "ridges",
    "small_overlap_start",
    "subrule",
]


UNKNOWNS = ("m_k", "q_k", "V_k", "m_v", "q_v", "V_v")


SYSTEM = "slr RS fixed point (docs/slr.md §10)"


class Ridge(float):
    """Separate ridges on the two blocks: a float equal to λ_k (so that the code paths that carry one λ — formats,
    checks, the λ ladders of the branch search — carry this one), with λ_v in ``.v``.  Scaling by a number scales
    both.  A plain float λ means λ_k = λ_v = λ.

    >>> lam = Ridge(0.1, 0.3); float(lam), lam.v, (10 * lam).v
    (0.1, 0.3, 3.0)
    """

    def __new__(cls, k, v):
        obj = super().__new__(cls, float(k))
        obj.v = float(v)
        return obj

    def __mul__(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return Ridge(float(self) * float(other), self.v * float(other))
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return Ridge(float(self) / float(other), self.v / float(other))
        return NotImplemented

    def __repr__(self):
        return f"Ridge(k={float(self)!r}, v={self.v!r})"

    def __reduce__(self):
        return (Ridge, (float(self), self.v))


def ridges(lam) -> tuple:
    """``(λ_k, λ_v)`` of a ridge: a :class:`Ridge`, or one float for both blocks."""
    return float(lam), float(getattr(lam, "v", lam))


def ridge_term(lam, q_k, q_v, alpha):
    """The ridge part of the training objective per sample, (λ_k q_k + λ_v q_v)/(2α) (λ(q_k + q_v)/(2α) for one λ,
    computed as such)."""
    if not isinstance(lam, Ridge):
        return lam * (q_k + q_v) / (2 * alpha)
    return (float(lam) * q_k + lam.v * q_v) / (2 * alpha)


@dataclass
class RSKernels:
    """Loaded generated kernels of one activation: ``modules[L]`` holds the functions of
    ``attnlimits.derivations.slr.replica.replica_kernels`` for length ``L``; ``affine`` says whether the exact
    polynomial prox is available; ``shift_invariant`` whether σ(χ + c1) = σ(χ) was proved (the
    ``shift_invariant`` kernel is present), so that the multistart screens rays in 1⊥ only; ``joint`` whether the
    loss is not the square one, so that the prox runs over (χ, r) jointly (the ``joint_start`` kernel is present,
    docs/slr.md §10.3)."""

    name: str
    modules: dict
    affine: bool
    sources: dict = field(default_factory=dict, repr=False)
    shift_invariant: bool = False
    joint: bool = False


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
    joint = any(hasattr(m_, "joint_start") for m_ in mods.values())
    return RSKernels(name, mods, affine, srcs, shift_invariant=shift, joint=joint)


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


def prefix_rule(rule: RSRule, points: int) -> RSRule:
    """The nested rule of the first ``points`` points of every replicate of ``rule``."""
    sl = (np.arange(rule.replicates)[:, None] * rule.points + np.arange(points)[None, :]).ravel()
    return RSRule(rule.L, rule.weight, rule.eps[sl], rule.chistar[sl], rule.zstar[sl], rule.xi[sl], rule.xip[sl],
                  rule.xi0[sl], rule.replicates, int(points),
                  rule.method.replace(f"x{rule.points} ", f"x{int(points)} ", 1) + " (pilot prefix)")


def subrule(rule: RSRule, reps):
    sl = np.concatenate([np.arange(r * rule.points, (r + 1) * rule.points) for r in reps])
    return RSRule(rule.L, rule.weight, rule.eps[sl], rule.chistar[sl], rule.zstar[sl], rule.xi[sl], rule.xip[sl],
                  rule.xi0[sl], len(reps), rule.points, rule.method)


def informed_start(model: str, nu: float):
    """Informed initialisation of §10.6: m_k = 0.8c_ν, q_k = 0.8c_ν², m_v = q_v = 0.8, V = 0.5
    (c_ν = √ν spiked, ν max; ν = ∞ uses c = 2.5, i.e. m_k = 2, q_k = 5)."""
    c = math.sqrt(nu) if model == "spiked" else (2.5 if math.isinf(nu) else nu)
    return np.array([0.8 * c, 0.8 * c * c, 0.5, 0.8, 0.8, 0.5])


def small_overlap_start(model: str, nu: float):
    """Small-overlap start (§10.6): m = 0.05, q = 0.01, V = 0.5 on both blocks."""
    return np.array([0.05, 0.01, 0.5, 0.05, 0.01, 0.5])


def project(x):
    """Keep iterates inside the domain q ≥ m², V > 0."""
    x = np.array(x, float)
    for i in (0, 3):
        x[i + 1] = max(x[i + 1], x[i] ** 2 * (1 + 1e-12) + 1e-14)
        x[i + 2] = max(x[i + 2], 1e-10)
    return x


def residual(g, x):
    """Relative ∞-distance of g from x (max |g − x| / max(1, |x|)): the residual of G(x) = x, and the
    distance between two points."""
    return float(np.max(np.abs(g - x) / np.maximum(1.0, np.abs(x))))
