"""The frozen RS map G(x): channel averages over the frozen rule, conjugates, prior (docs/slr.md §10.4), the
selection-frozen surrogate and the partial map, the replicon (§10.8), and :class:`FrozenRSMap`, the map of one
(α, λ, Δ) with its caches and counters, which the fixed-point stages share.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ...portable_solver import ConvergenceError
from .prox import chunked, columns, pd_and_inverse_diagonal, prox_affine, prox_newton, unpack_sym
from .rule import SYSTEM, UNKNOWNS, RSKernels, RSRule, ridges, subrule

__all__ = ["NAMES", "FrozenRSMap", "channel_averages", "fd_jacobian_with_averages", "rs_map", "rs_replicon", "update_from_averages"]


_INTEGRANDS = ("gg_k", "gg_v", "dg_k", "dg_v", "gx_k", "gx_v", "gxi_k", "gxi_v")


def _channel(kern: RSKernels, rule: RSRule, x, delta, timing=None, anchor=None, newton_steps=0, rescreen=None,
             replicon=False):
    r"""Per-replicate averages of the channel integrands and observables at order parameters x.

    ``replicon``: also the per-replicate averages of the 9 entries of the replicon operator's
    channel part (kernel ``replicon_integrand``, docs/slr.md §10.8), appended after :data:`NAMES`;
    they need the full :math:`W=(\mathcal V^{-1}+H)^{-1}` per sample (a batched LU inverse)."""
    m_k, q_k, V_k, m_v, q_v, V_v = (float(v) for v in x)
    mod = kern.modules[rule.L]
    L = rule.L
    s_k = math.sqrt(max(q_k - m_k * m_k, 0.0))
    s_v = math.sqrt(max(q_v - m_v * m_v, 0.0))
    wchi = m_k * rule.chistar + s_k * rule.xi
    wz = m_v * rule.zstar + s_v * rule.xip
    n = rule.n
    y = rule.zstar[np.arange(n), rule.eps] + delta * rule.xi0
    t0 = time.perf_counter()
    # the prox unknowns: χ (square loss: the value fields eliminated in closed form), or (χ, r) jointly for
    # another loss, the residual starting from the square loss's prox residual at ω^χ
    wx = wchi
    if kern.joint:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            r0 = np.broadcast_to(np.asarray(mod.joint_start(*columns(wchi), *columns(wz), y, V_v)[0], float), (n,))
        wx = np.column_stack([wchi, r0])
    if kern.affine:
        x_hat, diag = prox_affine(mod, wchi, wz, y, V_k, V_v)
    else:
        x_hat, diag = prox_newton(mod, wx, wz, y, V_k, V_v, starts=None if anchor is None else wx + anchor,
                                  shift_invariant=kern.shift_invariant, joint=kern.joint,
                                  newton_steps=newton_steps if anchor is not None else 0)
        if rescreen is not None and anchor is not None and rescreen.any():
            # the partial map: the multistart again on the samples known to have several minima, the
            # anchored selection elsewhere
            idx = np.flatnonzero(rescreen)
            x_r, diag_r = prox_newton(mod, wx[idx], wz[idx], y[idx], V_k, V_v, shift_invariant=kern.shift_invariant,
                                      joint=kern.joint)
            x_hat[idx] = x_r
            diag["distinct"] = np.zeros(n, bool)
            diag["distinct"][idx] = diag_r["distinct"]
    diag["offset"] = x_hat - wx
    chi_hat = x_hat[:, :L]
    t1 = time.perf_counter()
    if timing is not None:
        timing["prox"] = timing.get("prox", 0.0) + (t1 - t0)
    with np.errstate(over="ignore", invalid="ignore"):
        if kern.joint:
            out = chunked(mod.post, [*columns(chi_hat), x_hat[:, L], *columns(wz), y], (V_v,), n)
        else:
            out = chunked(mod.post, [*columns(chi_hat), *columns(wz), y], (V_v,), n)
    z_hat = np.stack(out[L:2 * L], axis=1)
    resid = out[2 * L]
    vdiag = np.array([V_k] * L + [V_v] * L)
    # (I + 𝒱H)⁻¹ = (𝒱⁻¹ + H)⁻¹ 𝒱⁻¹: its block traces need only the diagonal of (𝒱⁻¹ + H)⁻¹, and
    # the prox check 𝒱⁻¹ + H ≻ 0 comes from the same elimination (H as its upper triangle)
    pd_ok, dinv = pd_and_inverse_diagonal(out[2 * L + 1:], 1.0 / vdiag)
    trK = sum(dinv[:, i] for i in range(L)) / V_k
    trZ = sum(dinv[:, L + i] for i in range(L)) / V_v
    pd_fail = ~pd_ok
    ints = mod.integrands(*columns(chi_hat), *columns(z_hat), *columns(wchi), *columns(wz), *columns(rule.chistar),
                          *columns(rule.zstar), *columns(rule.xi), *columns(rule.xip), trK, trZ, V_k, V_v)
    sig = mod.sigma(*columns(wchi))
    sig_loc = np.array(np.broadcast_to(sig[0], (n,)), float)  # σ_ε(ω^χ) at each sample's location ε
    for ell in range(1, L):
        np.copyto(sig_loc, sig[ell], where=rule.eps == ell)
    # the training loss per sample: ½ r² (square), ρ(r̂) from its kernel otherwise
    train = 0.5 * resid ** 2 if not kern.joint else np.broadcast_to(np.asarray(mod.train_loss(resid)[0], float), (n,))
    cols = list(ints) + [sig_loc, sig[L], train, pd_fail.astype(float), diag["multi_minima_fraction"]]
    if replicon:
        Hfull = unpack_sym([np.broadcast_to(np.asarray(h_, float), (n,)) for h_ in out[2 * L + 1:]], 2 * L)
        with np.errstate(all="ignore"):
            W = np.linalg.inv(Hfull + np.diag(1.0 / vdiag))
        w_up = [W[:, i, j] for i in range(2 * L) for j in range(i, 2 * L)]
        cols += list(mod.replicon_integrand(*w_up, V_k, V_v))
    R, P = rule.replicates, rule.points
    # per-replicate means column by column (contiguous, pairwise sums); a non-finite sample makes its mean one
    per_rep = np.stack([np.broadcast_to(np.asarray(c, float), (n,)).reshape(R, P).mean(axis=1) for c in cols], axis=1)
    if not np.isfinite(per_rep).all():
        raise ConvergenceError(SYSTEM, dict(zip(UNKNOWNS, x)), float("nan"), "non-finite channel integrands",
                               "a larger λ, or check the activation for overflow at these overlaps")
    timing_post = time.perf_counter() - t1
    if timing is not None:
        timing["post"] = timing.get("post", 0.0) + timing_post
    return per_rep, diag


NAMES = _INTEGRANDS + ("A", "B", "train_half_sq", "pd_fail", "multi_minima")


def channel_averages(kern, rules, x, delta, reps=None, timing=None, anchor=None, newton_steps=0, rescreen=None,
              replicon=False):
    """P(L)-weighted per-replicate averages (R, n_quantities), with the prox diagnostics."""
    tot = None
    diags = []
    for rule in rules:
        per_rep, diag = _channel(kern, rule if reps is None else subrule(rule, reps), x, delta, timing,
                                 None if anchor is None else anchor[len(diags)], newton_steps,
                                 None if rescreen is None else rescreen[len(diags)], replicon)
        tot = rule.weight * per_rep if tot is None else tot + rule.weight * per_rep
        diags.append(diag)
    return tot, diags


def update_from_averages(kern, av, x, alpha, lam, form="stein"):
    """Conjugates then prior from averaged integrands (one vector ``av`` of :data:`NAMES`)."""
    mod = next(iter(kern.modules.values()))
    m_k, q_k, _, m_v, q_v, _ = x
    d = dict(zip(NAMES, av))
    s_k = math.sqrt(max(q_k - m_k ** 2, 1e-300))
    s_v = math.sqrt(max(q_v - m_v ** 2, 1e-300))
    conj = getattr(mod, f"conjugates_{form}")
    mh_k, qh_k, Vh_k = conj(d["gg_k"], d["dg_k"], d["gx_k"], d["gxi_k"], m_k, s_k, alpha)
    mh_v, qh_v, Vh_v = conj(d["gg_v"], d["dg_v"], d["gx_v"], d["gxi_v"], m_v, s_v, alpha)
    lam_k, lam_v = ridges(lam)
    mk, qk, Vk = mod.prior(mh_k, qh_k, Vh_k, lam_k)
    mv, qv, Vv = mod.prior(mh_v, qh_v, Vh_v, lam_v)
    hats = {"m_hat_k": mh_k, "q_hat_k": qh_k, "V_hat_k": Vh_k, "m_hat_v": mh_v, "q_hat_v": qh_v, "V_hat_v": Vh_v}
    return np.array([mk, qk, Vk, mv, qv, Vv], float), hats


def rs_map(kern: RSKernels, rules, x, alpha, lam, delta, *, form="stein", reps=None, timing=None, anchor=None,
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
    Jacobian about the anchor point; 2: the walk's first, loosely solved round; see :func:`prox_newton`).
    ``rescreen`` (with ``anchor``; one boolean mask per rule): the *partial map* — the multistart prox
    again on the masked samples (those with several minima at the anchor's map), the anchored one on
    the rest; the piece walk's re-anchoring rounds on a rough map, never an answer.
    """
    av, diags = channel_averages(kern, rules, x, delta, reps, timing, anchor, newton_steps, rescreen)
    gx, hats = update_from_averages(kern, av.mean(axis=0), x, alpha, lam, form)
    return gx, {"hats": hats, "averages": av, "diags": diags}


def rs_replicon(kern: RSKernels, rules, x, alpha, lam, delta, hats, *, offsets=None):
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
    av, _ = channel_averages(kern, rules, np.asarray(x, float), delta, anchor=offsets,
                      newton_steps=1 if offsets is not None else 0, replicon=True)
    K = av[:, len(NAMES):]
    mod = next(iter(kern.modules.values()))
    lam_k, lam_v = ridges(lam)
    (P2k,) = np.atleast_1d(mod.replicon_prior(hats["m_hat_k"], hats["q_hat_k"], hats["V_hat_k"], lam_k))
    (P2v,) = np.atleast_1d(mod.replicon_prior(hats["m_hat_v"], hats["q_hat_v"], hats["V_hat_v"], lam_v))
    Pk, Pv = math.sqrt(float(P2k)), math.sqrt(float(P2v))
    w = np.array([Pk * Pk, Pk * Pv, Pv * Pv])

    def rho(k9):
        T = alpha * w[:, None] * np.asarray(k9, float).reshape(3, 3)
        return float(np.max(np.abs(np.linalg.eigvals(T)))), T

    val, T = rho(K.mean(axis=0))
    R = K.shape[0]
    err = float(np.std([rho(K[r])[0] for r in range(R)], ddof=1) / math.sqrt(R)) if R > 1 else float("nan")
    return val, err, T


def fd_jacobian_with_averages(Gi, x, gx, av0, h=1e-6):
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


class FrozenRSMap:
    """The frozen RS map G at one (α, λ, Δ) on one rule, and the caches the fixed-point stages share.

    ``G(x)`` is the map itself (the last evaluation is cached: the map is a deterministic function of x);
    :meth:`one_replicate` its first replicate (the coarse stage); :meth:`with_selection` G(x) with the prox
    selection there; :meth:`anchored` the selection-frozen surrogate; :meth:`partial` the partial map (the
    multistart only on the samples seen with several minima); :meth:`noise` the map's integration noise at x and
    :meth:`tolerance_at` the noise-relative tolerance ``tol_noise``·noise; :meth:`jacobian_at` the surrogate's
    finite-difference Jacobian (with the derivative of the channel averages), which ``jac_out`` keeps for reuse.
    """

    def __init__(self, kern: RSKernels, rules, alpha, lam, delta, *, form="stein", tol_noise=0.0):
        self.kern, self.rules = kern, rules
        self.alpha, self.lam, self.delta, self.form, self.tol_noise = alpha, lam, delta, form, tol_noise
        self.R = rules[0].replicates
        self.timing: dict = {}
        self.last: dict = {}  # the last evaluation of G: x, g, info
        self._masks = None  # the samples with several prox minima at the last map (per rule), for :meth:`partial`
        self._noise: dict = {}
        # the surrogate Jacobian taken inside a piece walk near the fixed point (its Newton steps use it; a later
        # walk takes a new one only beyond ``reuse``), reused for the stability and the error at the returned
        # point when that lies within ``reuse_final`` (relative) of where it was taken (measured along the
        # benchmark curve: within 1.1 % in stability and 2.1 % in every error of a fresh Jacobian; at 5e-2,
        # α = 1, 4 % and 6 %, and 18 % in q_k's error)
        self.jac_out: dict = {"reuse": 5e-2, "reuse_final": 2e-2}

    def evaluate(self, v, **kw):
        """:func:`rs_map` at v with this map's (α, λ, Δ, form) and timing: ``(G(v), info)``, never cached."""
        return rs_map(self.kern, self.rules, v, self.alpha, self.lam, self.delta, form=self.form, timing=self.timing,
                      **kw)

    def __call__(self, v):
        last = self.last
        if "x" in last and np.array_equal(last["x"], v):
            return last["g"]  # the map is a deterministic function of v (no warm-started prox)
        g, inf = self.evaluate(v)
        last.update(x=np.array(v, float), g=g, info=inf)
        if all("distinct" in d_ for d_ in inf["diags"]):
            self._masks = [d_["distinct"] for d_ in inf["diags"]]
        return g

    def at(self, v):
        """``(G(v), info, fresh)``: from the cache when G was last evaluated at v (``fresh`` False)."""
        if "x" in self.last and np.array_equal(self.last["x"], v):
            return self.last["g"], self.last["info"], False
        g, info = self.evaluate(v)
        return g, info, True

    def one_replicate(self, v):
        return self.evaluate(v, reps=[0])[0]

    def with_selection(self, v):
        g = self(v)
        return g, [d["offset"] for d in self.last["info"]["diags"]]

    def anchored(self, v, offsets, newton_steps=0):
        return self.evaluate(v, anchor=offsets, newton_steps=newton_steps)[0]

    def noise(self, v):
        """Integration noise of the map at v: relative spread of the replicate maps over √R (∞-norm)."""
        if self.R < 2:
            return 0.0
        nc = self._noise
        if nc.get("x") is not None and np.array_equal(nc["x"], v):
            return nc["value"]
        if not ("x" in self.last and np.array_equal(self.last["x"], v)):
            self(v)
        info_v = self.last["info"]
        gr = np.array([update_from_averages(self.kern, a_r, v, self.alpha, self.lam, self.form)[0]
                       for a_r in info_v["averages"]])
        eta = float(np.max(gr.std(axis=0, ddof=1) / math.sqrt(self.R) / np.maximum(1.0, np.abs(v))))
        nc.update(x=np.array(v, float), value=eta)
        return eta

    def last_noise(self):
        """The noise at the last point where it was taken, or ``None``."""
        return self._noise.get("value")

    def tolerance_at(self, v):
        """The noise-relative tolerance at v (free right after the full map at v)."""
        return self.tol_noise * self.noise(v) if self.tol_noise > 0 else 0.0

    def tolerance_last(self, v):
        """The noise-relative tolerance at the last point where it was taken (the noise varies slowly)."""
        return self.tol_noise * self._noise["value"] if self.tol_noise > 0 and "value" in self._noise else 0.0

    def partial(self, v, offsets):
        """The partial map (rs_map ``rescreen``): the multistart on the samples with several minima at the last
        map, the selection ``offsets`` elsewhere."""
        masks = self._masks
        if masks is None:
            return self.with_selection(v)
        g, inf = self.evaluate(v, anchor=offsets, rescreen=masks)
        self._masks = [m_ | d_["distinct"] for m_, d_ in zip(masks, inf["diags"])]
        return g, [d_["offset"] for d_ in inf["diags"]]

    def jacobian_at(self, v, gv, offsets):
        """Finite differences of the surrogate anchored at ``offsets`` (one Newton step of prox): ``(J, ∂ā/∂x,
        evaluations)``; ``gv`` is not used (the base value is the one-step surrogate's own)."""
        def Gi(u):
            return self.evaluate(u, anchor=offsets, newton_steps=1)

        g1, inf1 = Gi(v)  # the one-step surrogate's own value at v (see fd_jacobian_with_averages)
        Jv, Jav_v = fd_jacobian_with_averages(Gi, v, g1, inf1["averages"].mean(axis=0))
        return Jv, Jav_v, v.size + 1
