r"""Bayes-optimal state evolution of spiked-SLR at finite :math:`\alpha` (``docs/slr.md`` §11), solved on a frozen rule.

The equations come as generated kernels (module text from
:func:`attnlimits.derivations.slr.bayes_optimal.module_source`, loaded by :func:`load_bo_module`; this module
never imports :mod:`derivations`).  Per length :math:`L` the kernels give, at a point of the teacher
measure written in standard normals :math:`(g_{1..L},h_{1..L},n)`, the integrands of
:math:`\log Z_{\rm out}`, of :math:`\hat q_b/\alpha` in the integration-by-parts form (``ibp``, the
default) and in the direct form (``direct``, differentiation of :math:`\Psi_{\rm out}` under the
expectation).  The state evolution with Nishimori built in is

.. math::  \hat q_b=\alpha\sum_LP(L)\,\mathbb E[I^{(L)}_b(q_k,q_v)],\qquad q_b=\frac{\hat q_b}{1+\hat q_b},
           \qquad E_{BO}=\sum_LP(L)\,\big(1-q_v[1-E_B^{\rm pop}(\nu q_k;L)]\big).

Integration rule (frozen: the same points for every :math:`q`, so the map is deterministic and
smooth and Newton applies; the solver runs a few damped steps from a cold start, then Newton with a
finite-difference Jacobian refreshed only when a Broyden-updated step fails):

- ``"sobol"`` (default): scrambled Sobol points in dimension :math:`2L+1`, ``replicates``
  independent scramblings of ``points`` each.  The error estimate propagates the replicate spread
  of the map at the fixed point through :math:`(I-J)^{-1}` (:math:`J` the Jacobian of the map on
  the frozen rule), then to :math:`E_{BO}` by its gradient.
- ``"gauss-hermite"``: tensor Gauss–Hermite with ``n_gh`` nodes per dimension (only for
  :math:`2L+1\le5`); error = difference to the rule with ``3 n_gh / 2`` nodes.  The integrands are
  sharp at the scale :math:`\sqrt S\approx\Delta` in the value variables at large :math:`\alpha`,
  where Gauss–Hermite converges slowly; Sobol is the default for that reason.

Starts: uninformed (:math:`q=0.01`) and informed (:math:`q=0.99`); with continuation in
:math:`\alpha` each branch warm-starts from its previous point.  Distinct fixed points are all
kept; the reported one maximises the RS free entropy
:math:`\Phi=\sum_b[-q_b\hat q_b/2+\psi_P(\hat q_b)]+\alpha\Psi_{\rm out}`.

Failures raise :class:`attnlimits.numeric.ConvergenceError`; non-finite integrands raise it too (never NaN).
"""
from __future__ import annotations

import dataclasses
from attnlimits.symbolic.options import resolve_options

import hashlib
import math
from dataclasses import asdict, dataclass, field

import numpy as np

from ..portable_solver import ConvergenceError
from ..frozen import fd_jacobian

__all__ = [
    "START_INFORMED",
    "START_UNINFORMED",
    "SYSTEM",
    "SYSTEM_MAX",
    "BOPoint",
    "BORule",
    "InnerRule",
    "bo_curve",
    "bo_fixed_point",
    "bo_map",
    "bomax_fixed_point",
    "bomax_map",
    "load_bo_module",
    "location_scaling",
    "make_inner_rule",
    "make_rule",
    "max_locations",
]

SYSTEM = "bayes-optimal state evolution (spiked-SLR, docs/slr.md §11)"
START_UNINFORMED = 0.01
START_INFORMED = 0.99
_Q_MIN, _Q_MAX = 1e-12, 1.0 - 1e-12

_MODULES: dict = {}


def load_bo_module(source: str):
    """Load (once per text) the generated BO kernel module from its source text."""
    from attnlimits.symbolic.codegen import load_module

    key = hashlib.sha256(source.encode()).hexdigest()
    mod = _MODULES.get(key)
    if mod is None:
        mod = load_module(source, name=f"attnlimits_bo_{key[:12]}")
        _MODULES[key] = mod
    return mod


@dataclass
class BORule:
    """Frozen integration rule: per length ``L``, columns of standard normals and weights.

    ``nodes[L]`` has shape (replicates, points, 2L+1) (Sobol; Gauss–Hermite has one replicate);
    ``weights[L]`` has shape (points,) and sums to one.
    """

    kind: str
    nodes: dict
    weights: dict
    replicates: int
    description: str
    finer: BORule | None = None


def make_rule(lengths, *, kind: str = "sobol", points: int = 2 ** 13, replicates: int = 8, seed: int = 0,
              n_gh: int = 12) -> BORule:
    """The frozen rule for the lengths ``lengths`` (iterable of ints)."""
    from attnlimits.symbolic.gaussian import gauss_hermite_rule, sobol_normal

    Ls = sorted({int(L) for L in lengths})
    if kind == "sobol":
        nodes, weights = {}, {}
        for L in Ls:
            nodes[L] = sobol_normal(points, 2 * L + 1, seed=seed + 1009 * L, replicates=replicates)
            weights[L] = np.full(points, 1.0 / points)
        return BORule(kind, nodes, weights, replicates, f"scrambled Sobol {replicates} x {points}")
    if kind == "gauss-hermite":
        if any(2 * L + 1 > 5 for L in Ls):
            raise ValueError("gauss-hermite rule needs 2L+1 <= 5 (L <= 2); use kind='sobol'")

        def build(nn):
            nodes, weights = {}, {}
            for L in Ls:
                x, w = gauss_hermite_rule(2 * L + 1, nn)
                nodes[L] = np.asarray(x)[None]
                weights[L] = np.asarray(w)
            return BORule(kind, nodes, weights, 1, f"gauss-hermite {nn}^(2L+1)")

        r = build(n_gh)
        r.finer = build(n_gh + n_gh // 2)
        return r
    raise ValueError(f"unknown rule kind {kind!r}; choose 'sobol' or 'gauss-hermite'")


def _kernel(mod, L, name):
    fn = getattr(mod, f"bo_L{L}_{name}", None)
    if fn is None:
        raise ValueError(f"the generated BO module has no kernels for L = {L}; regenerate it with this length")
    return fn


def _integrate(mod, rule, lengths, nu, delta, q, outputs):
    """Replicate-wise rule averages of the generated integrands; ``outputs`` = "ibp" (the map only)
    or "all" (log Z, ibp_k, ibp_v, direct_k, direct_v).  Shape (replicates, n_outputs)."""
    qk, qv = float(q[0]), float(q[1])
    R = rule.replicates
    acc = None
    for L, p in lengths:
        x = rule.nodes[L]
        w = rule.weights[L]
        cols = [x[..., j] for j in range(x.shape[-1])]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            A = _kernel(mod, L, "log_terms")(*cols, qk, qv, nu, delta)
            Mx = np.max(np.stack([np.broadcast_to(a, x.shape[:-1]) for a in A]), axis=0)
            name = "ibp" if outputs == "ibp" else "integrands"
            res = _kernel(mod, L, name)(*cols, qk, qv, nu, delta, Mx)
        part = np.stack([(np.broadcast_to(r, x.shape[:-1]) * w).sum(-1) for r in res], axis=1)
        acc = p * part if acc is None else acc + p * part
    if not np.all(np.isfinite(acc)):
        raise ConvergenceError(SYSTEM, {"q_k": qk, "q_v": qv, "nu": nu, "Delta": delta}, float("nan"),
                               "non-finite channel integrands", "check nu and Delta (Delta > 0); for very large "
                               "nu the log-sum-exp terms overflow float64")
    assert acc.shape[0] == R
    return acc


def bo_map(mod, rule: BORule, lengths, nu, delta, q, *, form: str = "ibp", with_phi: bool = False):
    r"""Replicate-wise means of :math:`\hat q_b/\alpha` (shape (replicates, 2)), and of
    :math:`\Psi_{\rm out}` (shape (replicates,)) with ``with_phi``; the length law mixed in."""
    if form not in ("ibp", "direct"):
        raise ValueError(f"unknown form {form!r}; choose 'ibp' or 'direct'")
    if form == "ibp" and not with_phi:
        return _integrate(mod, rule, lengths, nu, delta, q, "ibp")
    a = _integrate(mod, rule, lengths, nu, delta, q, "all")
    out = a[:, 1:3] if form == "ibp" else a[:, 3:5]
    return (out, a[:, 0]) if with_phi else out


@dataclass
class BOPoint:
    r"""One fixed point of the BO state evolution.

    ``q_k, q_v`` (= m_k, m_v by Nishimori; V_b = 1 − q_b), ``qhat_k, qhat_v``, their standard errors
    ``q_k_se, q_v_se`` (integration error), ``E_BO`` and ``E_BO_se``, ``E_B_snr`` (the population
    Bayes risk at SNR ν q_k, P(L)-mixed), ``phi`` the RS free entropy (up to an α-independent
    constant shared by all branches at equal α) and ``phi_se``, ``start`` ("informed" /
    "uninformed"), ``iterations``, ``residual``, ``method``, ``rule``, ``stability`` (spectral radius
    of the map's Jacobian), ``identity_gap`` (direct − ibp estimate of q̂/α, summed over k and v, with
    its replicate SE ``identity_gap_se``).  Max-SLR points (``model="max"``, :func:`bomax_fixed_point`):
    ``E_B_snr`` is :math:`E_B^{\max}(q_k)`, the location Bayes risk from the estimated key field;
    ``inner_rule``/``inner_error`` the key-smoothing rule and its error (included in ``E_BO_se``);
    ``nishimori_A_minus_B`` (± SE) the Nishimori check of the two test-error integrals.
    """

    alpha: float
    nu: float
    delta: float
    lengths: tuple
    q_k: float
    q_v: float
    qhat_k: float
    qhat_v: float
    q_k_se: float
    q_v_se: float
    E_BO: float
    E_BO_se: float
    E_B_snr: float
    phi: float
    phi_se: float
    start: str
    iterations: int
    residual: float
    method: str
    rule: str
    stability: float
    identity_gap: tuple = ()
    identity_gap_se: tuple = ()
    branches: list = field(default_factory=list)
    model: str = "spiked"
    inner_rule: str = ""
    inner_error: float = 0.0
    nishimori_A_minus_B: float | None = None
    nishimori_A_minus_B_se: float | None = None

    def as_row(self) -> dict:
        d = asdict(self)
        d.pop("branches")
        d["lengths"] = ",".join(f"{L}:{p:g}" for L, p in self.lengths)
        for i, b in enumerate(("k", "v")):  # tidy scalars: direct − ibp estimate of q̂_b/α and its SE
            d[f"identity_gap_{b}"] = self.identity_gap[i] if self.identity_gap else None
            d[f"identity_gap_{b}_se"] = self.identity_gap_se[i] if self.identity_gap_se else None
        d.pop("identity_gap")
        d.pop("identity_gap_se")
        return d


def _clip(x):
    return np.clip(np.asarray(x, float), _Q_MIN, _Q_MAX)


def _solve(G, x0, params, *, tol, max_iter, damping, warm=False, system=SYSTEM):
    """Fixed point x = G(x) in (0,1)^2: damped iteration, then Newton (finite-difference Jacobian of the
    deterministic frozen-rule map) with backtracking; damped iteration continues if Newton stalls."""
    x = _clip(x0)
    it = 0
    gx = G(x)
    res = float(np.max(np.abs(x - gx)))
    method = "damped"
    for _ in range(0 if warm else 8):
        if res < tol:
            break
        x = _clip((1 - damping) * x + damping * gx)
        gx = G(x)
        res = float(np.max(np.abs(x - gx)))
        it += 1

    def jac(x, fx):
        J = np.zeros((2, 2))
        for j in range(2):
            h = 1e-6 * max(1e-3, min(x[j], 1 - x[j]))
            xp = x.copy()
            xp[j] += h
            J[:, j] = ((xp - G(xp)) - fx) / h
        return J

    stalled = 0
    Jb = None  # Broyden approximation of ∂F/∂x (refreshed by finite differences when a step fails)
    while res >= tol and it < max_iter:
        fx = x - gx
        fresh = Jb is None
        if fresh:
            Jb = jac(x, fx)
        try:
            step = np.linalg.solve(Jb, -fx)
        except np.linalg.LinAlgError:
            step = None
        accepted = False
        if step is not None and np.all(np.isfinite(step)):
            t = 1.0
            for _ in range(30):
                xn = _clip(x + t * step)
                gn = G(xn)
                rn = float(np.max(np.abs(xn - gn)))
                if rn < res:
                    dx, df = xn - x, (xn - gn) - fx
                    if float(dx @ dx) > 0:
                        Jb = Jb + np.outer(df - Jb @ dx, dx) / float(dx @ dx)
                    x, gx, res, accepted = xn, gn, rn, True
                    break
                t *= 0.5
        it += 1
        if accepted:
            method = "damped+newton"
            continue
        Jb = None  # next step with a fresh finite-difference Jacobian
        if not fresh:
            continue
        stalled += 1
        for _ in range(50):  # Newton stalled: damped iteration
            x = _clip((1 - damping) * x + damping * gx)
            gx = G(x)
            res = float(np.max(np.abs(x - gx)))
            it += 1
        if stalled > 20:
            break
    if not res < tol:
        raise ConvergenceError(system, params, res, f"no fixed point after {it} iterations",
                               "raise max_iter, use damping 0.3, or start from a neighbouring alpha (continuation)")
    return x, it, res, method


def _bayes(pop_bayes, snr, L):
    return float(pop_bayes("spiked", snr, L).value)


def _fd_jacobian(G, x, Gx):
    """Forward-difference Jacobian of the 2-D map ``G`` at ``x`` (``Gx = G(x)``), steps inside (0, 1)."""
    return fd_jacobian(G, x, Gx, step=_unit_step)


def _unit_step(xj):
    """A difference step that stays inside (0, 1): 1e-6 of the distance to the nearer end (at least 1e-9)."""
    return 1e-6 * max(1e-3, min(xj, 1 - xj))


@dataclass(frozen=True)
class BOOptions:
    """Options of :func:`bo_fixed_point` and :func:`bomax_fixed_point`: the form of the map (``"ibp"``), the
    solver's ``tol``, ``max_iter`` and ``damping``, and ``with_error`` (the error bars and the rule-difference
    check; off for the finer rule's own solve)."""

    form: str = "ibp"
    tol: float = 1e-11
    max_iter: int = 3000
    damping: float = 0.5
    with_error: bool = True


def _options(options, overrides) -> BOOptions:
    return resolve_options(BOOptions, options, overrides)


def bo_fixed_point(mod, rule: BORule, lengths, nu, alpha, delta, *, x0=None, start="uninformed",
                   population_bayes_risk=None, options: BOOptions | None = None, **overrides) -> BOPoint:
    """Solve the BO state evolution at one α from ``x0`` (default: the ``start``'s q) on ``rule``.

    ``lengths`` is a tuple of (L, P(L)); ``population_bayes_risk(model, snr, L)`` returns an object
    with ``.value`` (e.g. :func:`attnlimits.numeric.slr.bayes_risk.bayes_risk` given the derived kernels).
    ``options`` (:class:`BOOptions`; keywords override its fields): form, tol, max_iter, damping, with_error.
    """
    o = _options(options, overrides)
    form, tol, max_iter, damping, _with_error = o.form, o.tol, o.max_iter, o.damping, o.with_error
    if population_bayes_risk is None:
        raise TypeError("bo_fixed_point needs population_bayes_risk(model, snr, L) (e.g. attnlimits.verify.slr.bayes_optimal.bayes_risk_of, "
                        "attnlimits.numeric.slr.bayes_risk.bayes_risk with the derived kernels)")
    nu, alpha, delta = float(nu), float(alpha), float(delta)
    params = {"alpha": alpha, "nu": nu, "Delta": delta}
    if not (alpha > 0 and nu >= 0 and delta > 0 and math.isfinite(alpha) and math.isfinite(nu)):
        raise ValueError(f"need alpha > 0, finite nu >= 0 and Delta > 0; got alpha={alpha}, nu={nu}, Delta={delta}")
    upd = mod.bo_prior_update

    def G(x):
        h = bo_map(mod, rule, lengths, nu, delta, x, form=form).mean(0) * alpha
        return np.array([upd(h[0])[0], upd(h[1])[0]], float)

    warm = x0 is not None
    if x0 is None:
        q0 = START_INFORMED if start == "informed" else START_UNINFORMED
        x0 = (q0, q0)
    x, it, res, method = _solve(G, np.asarray(x0, float), params, tol=tol, max_iter=max_iter, damping=damping,
                                warm=warm)
    full = _integrate(mod, rule, lengths, nu, delta, x, "all")
    hat_r = full[:, 1:3] if form == "ibp" else full[:, 3:5]
    psi_r = full[:, 0]
    hat = hat_r.mean(0) * alpha
    # Jacobian of the map (for the error propagation and stability): forward differences from G(x)
    Gx = np.array([upd(hat[0])[0], upd(hat[1])[0]], float)
    J = _fd_jacobian(G, x, Gx)
    stability = float(max(abs(np.linalg.eigvals(J))))
    # replicate maps: δq_r = (I − J)^{-1} (G_r − G)
    dq_dqhat = 1.0 / (1.0 + hat) ** 2
    qk, qv = float(x[0]), float(x[1])
    se_q = np.zeros(2)
    R = rule.replicates
    if R > 1:
        Gr = (hat_r * alpha - hat) * dq_dqhat
        dq = np.linalg.solve(np.eye(2) - J, Gr.T).T
        se_q = dq.std(axis=0, ddof=1) / math.sqrt(R)
    # test error and its gradient in q (population Bayes risk by attnlimits.numeric.slr.bayes_risk)
    E = 0.0
    EB_mix = 0.0
    dE = np.zeros(2)
    for L, p in lengths:
        snr = nu * qk
        eb = _bayes(population_bayes_risk, snr, L)
        e, _ = mod.bo_test_error(qk, qv, nu, eb)
        E += p * float(e)
        EB_mix += p * eb
        hs = 1e-5 * max(snr, 1e-3)
        d_eb = (_bayes(population_bayes_risk, snr + hs, L) - _bayes(population_bayes_risk, max(snr - hs, 0.0), L)) \
            / (snr + hs - max(snr - hs, 0.0))
        dE[0] += p * (float(mod.bo_test_error(qk, qv, nu, eb + 1e-6)[0]) - float(e)) / 1e-6 * d_eb * nu
        dE[1] += p * (float(mod.bo_test_error(qk, qv + 1e-7, nu, eb)[0]) - float(e)) / 1e-7
    phi_prior = float(mod.bo_prior_phi(qk, float(hat[0]), qv, float(hat[1]))[0])
    phi = phi_prior + alpha * float(psi_r.mean())
    phi_se = alpha * float(psi_r.std(ddof=1) / math.sqrt(R)) if R > 1 else 0.0
    E_se = float(abs(dE[0]) * se_q[0] + abs(dE[1]) * se_q[1])
    gap, gap_se = (), ()
    if _with_error:
        diff = full[:, 3:5] - full[:, 1:3]
        gap = tuple(float(v) for v in diff.mean(0))
        gap_se = tuple(float(v) for v in (diff.std(0, ddof=1) / math.sqrt(R) if R > 1 else np.zeros(2)))
    if rule.finer is not None and _with_error:  # Gauss–Hermite: error = rule difference
        fine = bo_fixed_point(mod, rule.finer, lengths, nu, alpha, delta, x0=x,
                              population_bayes_risk=population_bayes_risk,
                              options=dataclasses.replace(o, with_error=False))
        se_q = np.array([abs(fine.q_k - qk), abs(fine.q_v - qv)])
        E_se = abs(fine.E_BO - E)
        phi_se = abs(fine.phi - phi)
    for v in (qk, qv, E, phi, E_se):
        if not math.isfinite(v):
            raise ConvergenceError(SYSTEM, params, res, "non-finite result at the fixed point",
                                   "check the inputs; try a finer rule")
    return BOPoint(alpha, nu, delta, tuple(lengths), qk, qv, float(hat[0]), float(hat[1]), float(se_q[0]),
                   float(se_q[1]), float(E), E_se, float(EB_mix), phi, phi_se, start, it, res, method,
                   rule.description, stability, gap, gap_se)


def bo_curve(mod, rule: BORule, lengths, nu, alphas, delta, *, starts=("uninformed", "informed"),
             distinct_tol: float = 1e-6, progress=None, fixed_point=None, **kw):
    """State evolution along ``alphas`` with continuation, from each start.

    Returns a list (in the order of ``alphas``) of the selected :class:`BOPoint` (largest free
    entropy), each with ``branches`` holding every distinct fixed point found at that α.
    ``fixed_point`` is :func:`bo_fixed_point` (default, spiked-SLR) or :func:`bomax_fixed_point`.
    """
    order = sorted(range(len(alphas)), key=lambda i: alphas[i])
    per_start = {}
    for s in starts:
        prev = None
        pts = {}
        for i in order:
            a = float(alphas[i])
            if progress:
                progress(f"BO state evolution: {s} start, alpha = {a:g}")
            pt = (fixed_point or bo_fixed_point)(mod, rule, lengths, nu, a, delta, x0=prev, start=s, **kw)
            pt.start = s
            pts[i] = pt
            prev = (pt.q_k, pt.q_v)
        per_start[s] = pts
    out = []
    for i in range(len(alphas)):
        cands = [per_start[s][i] for s in starts]
        distinct = []
        for c in cands:
            if not any(abs(c.q_k - d.q_k) < distinct_tol and abs(c.q_v - d.q_v) < distinct_tol for d in distinct):
                distinct.append(c)
        best = max(distinct, key=lambda c: c.phi)
        best.branches = [c.as_row() for c in distinct]
        out.append(best)
    return out


# =====================================================================================================
# Max-SLR (docs/slr.md §11, max-SLR paragraph): kernels of attnlimits.derivations.slr.bayes_optimal.max_module_source
# =====================================================================================================

SYSTEM_MAX = "bayes-optimal state evolution (max-SLR, docs/slr.md §11)"
_P_FLOOR = 1e-300  # floor of p_eps inside the log that picks the shift M only (any M is exact)
_CHUNK = 2 ** 21   # elements per inner-rule chunk


@dataclass
class InnerRule:
    r"""Frozen inner rule for the key smoothing :math:`p_\varepsilon=\mathbb E_u\pi_\varepsilon(\omega,V_k,u)`.

    ``nodes[L]`` (n, d) and ``weights[L]`` (n,) per length: Gauss–Hermite in :math:`d=L-1`
    dimensions (finite ν), in one dimension (ν = ∞, :math:`L\ge3`), or a single empty node
    (ν = ∞ with :math:`L\le2` and every :math:`L=1`: closed forms).  ``finer`` has ``3n/2`` nodes per
    dimension (the inner-rule error is the change of the result on it)."""

    finite: bool
    n: int
    nodes: dict
    weights: dict
    description: str
    finer: InnerRule | None = None

    @property
    def exact(self) -> bool:
        return all(x.shape[1] == 0 for x in self.nodes.values())


def make_inner_rule(lengths, nu, n: int = 24, *, _finer: bool = True) -> InnerRule:
    """The inner rule for ``lengths`` at ``nu`` (``math.inf`` allowed) with ``n`` nodes per dimension."""
    from attnlimits.symbolic.gaussian import gauss_hermite_rule

    finite = math.isfinite(float(nu))
    nodes, weights = {}, {}
    for L in sorted({int(v) for v in lengths}):
        d = (L - 1) if finite else (1 if L >= 3 else 0)
        if d == 0:
            nodes[L], weights[L] = np.zeros((1, 0)), np.ones(1)
        else:
            x, w = gauss_hermite_rule(d, int(n))
            nodes[L], weights[L] = np.asarray(x, float).reshape(-1, d), np.asarray(w, float)
    r = InnerRule(finite, int(n), nodes, weights, f"inner gauss-hermite {n}/dim ({'finite nu' if finite else 'nu=inf'})")
    if _finer and not r.exact:
        r.finer = make_inner_rule(lengths, nu, int(n) + int(n) // 2, _finer=False)
    return r


def _mkernel(mod, L, name):
    fn = getattr(mod, f"bomax_L{L}_{name}", None)
    if fn is None:
        raise ValueError(f"the generated max-SLR BO module has no kernels for L = {L}; regenerate it with this length")
    return fn


def max_locations(mod, inner: InnerRule, L, nu, omx, Vk):
    r""":math:`p_\varepsilon`, :math:`\partial_\ell p_\varepsilon`, :math:`\partial^2_\ell p_\varepsilon`,
    :math:`\partial_{V}p_\varepsilon` on the inner rule at fields ``omx`` (list of L arrays) and ``Vk``
    (scalar or array).  Returns ``(P, dP, ddP, dVP)``: lists of arrays (L, L×L, L×L, L)."""
    L = int(L)
    shape = np.broadcast_shapes(*[np.shape(o) for o in omx], np.shape(Vk))
    omx = [np.broadcast_to(np.asarray(o, float), shape) for o in omx]
    Vk = np.broadcast_to(np.asarray(Vk, float), shape)
    x, w = inner.nodes[L], inner.weights[L]
    nout = 2 * L + 2 * L * L
    if inner.finite:
        fn = _mkernel(mod, L, "inner_fin")
        extra = (float(nu),)
    else:
        fn = _mkernel(mod, L, "inner_inf")
        extra = ()
    size = max(1, int(np.prod(shape)))
    c = max(1, _CHUNK // size)
    acc = [np.zeros(shape) for _ in range(nout)]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for j0 in range(0, x.shape[0], c):
            xs, ws = x[j0:j0 + c], w[j0:j0 + c]
            args = [o[..., None] for o in omx] + [Vk[..., None]] + list(extra) + [xs[:, i] for i in range(xs.shape[1])]
            out = fn(*args)
            for i, o in enumerate(out):
                acc[i] = acc[i] + np.sum(np.broadcast_to(o, shape + (xs.shape[0],)) * ws, axis=-1)
    P = acc[:L]
    dP = acc[L:L + L * L]
    ddP = acc[L + L * L:L + 2 * L * L]
    dVP = acc[L + 2 * L * L:]
    return P, dP, ddP, dVP


def location_scaling(P, Bv):
    r"""Shift :math:`M=\log\sum_\varepsilon\tilde P_\varepsilon e^{B_\varepsilon}` (:math:`\tilde P=\max(P,10^{-300})`)
    and the factors :math:`E_\varepsilon=e^{B_\varepsilon-M}` of the scaled symbols
    (``attnlimits.derivations.slr.bayes_optimal.max_scaled_symbols``); :math:`E_\varepsilon\le 10^{300}`."""
    A = np.stack([np.log(np.maximum(p, _P_FLOOR)) + b for p, b in zip(P, Bv)])
    Mx = np.max(A, axis=0)
    Mx = Mx + np.log(np.sum(np.exp(A - Mx), axis=0))
    return Mx, [np.exp(b - Mx) for b in Bv]


def _integrate_max(mod, rule: BORule, inner: InnerRule, lengths, nu, delta, q, outputs):
    """Replicate-wise rule means of the max-SLR integrands, P(L)-mixed; ``outputs`` = "ibp" (2) or "all"
    (W log Z, ibp_k, ibp_v, direct_k, direct_v, A, B).  Shape (replicates, n_outputs)."""
    qk, qv = float(q[0]), float(q[1])
    acc = None
    for L, p in lengths:
        x = rule.nodes[L]
        w = rule.weights[L]
        cols = [x[..., j] for j in range(x.shape[-1])]
        shp = x.shape[:-1]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            fl = _mkernel(mod, L, "fields")(*cols, qk, qv, delta)
            omx, Vk = list(fl[:L]), fl[L]
            P, dP, _, dVP = max_locations(mod, inner, L, nu, omx, Vk)
            Bv = [np.broadcast_to(b, shp) for b in _mkernel(mod, L, "value_logdens")(*cols, qk, qv, delta)]
            Mx, E = location_scaling(P, Bv)
            t = [P[e] * E[e] for e in range(L)]
            u = [dP[e * L + l] * E[e] for e in range(L) for l in range(L)]
            if outputs == "ibp":
                res = _mkernel(mod, L, "ibp")(*cols, qk, qv, delta, P[0], *t, *u)
            else:
                sv = [dVP[e] * E[e] for e in range(L)]
                res = _mkernel(mod, L, "integrands")(*cols, qk, qv, delta, Mx, *P, *dP[:L], dVP[0], *t, *u, *sv)
            # teacher weight W = L p_1 below L·1e-300: the sample carries no measure (its W-weighted
            # integrands are below 1e-300 times a polynomial) but the scaling of the others can fail
            # there (0/0); such samples contribute 0 to the W-weighted outputs (all but A, B).
            dead = np.broadcast_to(P[0] < _P_FLOOR, shp)
            res = [np.where(dead, 0.0, np.broadcast_to(r, shp)) if i < 5 else r for i, r in enumerate(res)]
        part = np.stack([(np.broadcast_to(r, x.shape[:-1]) * w).sum(-1) for r in res], axis=1)
        acc = p * part if acc is None else acc + p * part
    if not np.all(np.isfinite(acc)):
        raise ConvergenceError(SYSTEM_MAX, {"q_k": qk, "q_v": qv, "nu": nu, "Delta": delta}, float("nan"),
                               "non-finite channel integrands", "check nu and Delta (Delta > 0); for large finite "
                               "nu the inner softmax overflows float64 (use nu = inf)")
    return acc


def bomax_map(mod, rule: BORule, inner: InnerRule, lengths, nu, delta, q, *, form: str = "ibp"):
    r"""Replicate-wise means of :math:`\hat q_b/\alpha` for max-SLR (shape (replicates, 2))."""
    if form not in ("ibp", "direct"):
        raise ValueError(f"unknown form {form!r}; choose 'ibp' or 'direct'")
    if form == "ibp":
        return _integrate_max(mod, rule, inner, lengths, nu, delta, q, "ibp")
    return _integrate_max(mod, rule, inner, lengths, nu, delta, q, "all")[:, 3:5]


def bomax_fixed_point(mod, rule: BORule, lengths, nu, alpha, delta, *, inner: InnerRule = None, x0=None,
                      start="uninformed", test_rule: BORule = None, options: BOOptions | None = None,
                      **overrides) -> BOPoint:
    r"""Solve the max-SLR BO state evolution at one α (``nu`` finite or ``math.inf``) on ``rule`` and ``inner``.

    .. math:: \hat q_b=\alpha\,\mathbb E[W\textstyle\sum_\ell(g^b_\ell)^2],\quad q_b=\hat q_b/(1+\hat q_b),\quad
              E_{BO}=1-2q_vA+q_vB,\ A=\mathbb E[Wp_1],\ B=\mathbb E\|p\|^2.

    Error: the replicate spread of the map propagated through :math:`(I-J)^{-1}` and the gradient of
    :math:`E_{BO}`, plus the replicate SE of :math:`A,B` at the fixed point, plus (``inner_error``) the
    change of :math:`E_{BO}` when the inner rule is refined to ``3n/2`` nodes (added linearly).
    ``E_B_snr`` holds :math:`E_B^{\max}(q_k)=1-B` (location Bayes risk from the estimated key field).
    ``test_rule`` (default ``rule``): the rule for :math:`A,B` (a larger one pays off at large α, where
    :math:`1-B` lives in a boundary layer of width :math:`\sqrt{1-q_k}` at ν = ∞).
    ``options`` (:class:`BOOptions`; keywords override its fields): form, tol, max_iter, damping, with_error.
    """
    o = _options(options, overrides)
    form, tol, max_iter, damping, _with_error = o.form, o.tol, o.max_iter, o.damping, o.with_error
    nu, alpha, delta = float(nu), float(alpha), float(delta)
    params = {"alpha": alpha, "nu": nu, "Delta": delta}
    if not (alpha > 0 and nu >= 0 and delta > 0 and math.isfinite(alpha) and not math.isnan(nu)):
        raise ValueError(f"need alpha > 0, nu >= 0 (inf allowed) and Delta > 0; got alpha={alpha}, nu={nu}, "
                         f"Delta={delta}")
    if inner is None:
        inner = make_inner_rule([L for L, _ in lengths], nu)
    if inner.finite != math.isfinite(nu):
        raise ValueError("the inner rule was made for a different nu (finite vs inf)")
    upd = mod.bo_prior_update

    def G(x):
        h = bomax_map(mod, rule, inner, lengths, nu, delta, x, form=form).mean(0) * alpha
        return np.array([upd(h[0])[0], upd(h[1])[0]], float)

    warm = x0 is not None
    if x0 is None:
        q0 = START_INFORMED if start == "informed" else START_UNINFORMED
        x0 = (q0, q0)
    x, it, res, method = _solve(G, np.asarray(x0, float), params, tol=tol, max_iter=max_iter,
                                damping=damping, warm=warm, system=SYSTEM_MAX)
    full = _integrate_max(mod, rule, inner, lengths, nu, delta, x, "all")
    hat_r = full[:, 1:3] if form == "ibp" else full[:, 3:5]
    hat = hat_r.mean(0) * alpha
    Gx = np.array([upd(hat[0])[0], upd(hat[1])[0]], float)
    J = _fd_jacobian(G, x, Gx)
    stability = float(max(abs(np.linalg.eigvals(J))))
    dq_dqhat = 1.0 / (1.0 + hat) ** 2
    qk, qv = float(x[0]), float(x[1])
    R = rule.replicates
    se_q = np.zeros(2)
    if R > 1:
        Gr = (hat_r * alpha - hat) * dq_dqhat
        dq = np.linalg.solve(np.eye(2) - J, Gr.T).T
        se_q = dq.std(axis=0, ddof=1) / math.sqrt(R)
    te = mod.bomax_test_error
    trule = rule if test_rule is None else test_rule

    def AB_at(qk_):
        f = full if (trule is rule and qk_ == qk) else _integrate_max(mod, trule, inner, lengths, nu, delta,
                                                                        (qk_, qv), "all")
        return f[:, 5], f[:, 6]

    Ar, Br = AB_at(qk)
    Er = np.array([float(te(qv, float(a), float(b))[0]) for a, b in zip(Ar, Br)])
    E = float(Er.mean())
    # gradient: A, B depend on q_k only; E is explicit in q_v
    hstep = 1e-5 * max(1e-3, min(qk, 1 - qk))
    Ap, Bp = AB_at(qk + hstep)
    dE = np.array([(float(te(qv, float(Ap.mean()), float(Bp.mean()))[0]) - float(te(qv, float(Ar.mean()),
                                                                                         float(Br.mean()))[0])) / hstep,
                   (float(te(qv + 1e-7, float(Ar.mean()), float(Br.mean()))[0])
                    - float(te(qv, float(Ar.mean()), float(Br.mean()))[0])) / 1e-7])
    E_se = float(abs(dE[0]) * se_q[0] + abs(dE[1]) * se_q[1])
    if trule.replicates > 1:
        E_se += float(Er.std(ddof=1) / math.sqrt(trule.replicates))
    phi_prior = float(mod.bo_prior_phi(qk, float(hat[0]), qv, float(hat[1]))[0])
    psi_r = full[:, 0]
    phi = phi_prior + alpha * float(psi_r.mean())
    phi_se = alpha * float(psi_r.std(ddof=1) / math.sqrt(R)) if R > 1 else 0.0
    ab = Ar - Br
    ab_mean = float(ab.mean())
    ab_se = float(ab.std(ddof=1) / math.sqrt(len(ab))) if len(ab) > 1 else 0.0
    gap, gap_se = (), ()
    if _with_error:
        diff = full[:, 3:5] - full[:, 1:3]
        gap = tuple(float(v) for v in diff.mean(0))
        gap_se = tuple(float(v) for v in (diff.std(0, ddof=1) / math.sqrt(R) if R > 1 else np.zeros(2)))
    inner_err = 0.0
    if _with_error and inner.finer is not None:
        fine = bomax_fixed_point(mod, rule, lengths, nu, alpha, delta, inner=inner.finer, x0=x, test_rule=test_rule,
                                 options=dataclasses.replace(o, with_error=False))
        inner_err = abs(fine.E_BO - E)
        se_q = se_q + np.array([abs(fine.q_k - qk), abs(fine.q_v - qv)])
        E_se += inner_err
    for v in (qk, qv, E, phi, E_se):
        if not math.isfinite(v):
            raise ConvergenceError(SYSTEM_MAX, params, res, "non-finite result at the fixed point",
                                   "check the inputs; try a finer rule")
    return BOPoint(alpha, nu, delta, tuple(lengths), qk, qv, float(hat[0]), float(hat[1]), float(se_q[0]),
                   float(se_q[1]), E, E_se, float(1.0 - Br.mean()), phi, phi_se, start, it, res, method,
                   rule.description, stability, gap, gap_se, model="max", inner_rule=inner.description,
                   inner_error=inner_err, nishimori_A_minus_B=ab_mean, nishimori_A_minus_B_se=ab_se)
