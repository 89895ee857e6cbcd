r"""Finite-D posterior sampling for spiked-SLR: collapsed Gibbs over the hidden locations (claim C19-post).

Model (docs/slr.md §3.2, §11): Gaussian priors :math:`k,v\sim\mathcal N(0,I_D)`; sequence :math:`\mu` has tokens
:math:`x_{\mu\ell}\in\mathbb R^D`, a hidden location :math:`\varepsilon_\mu` (uniform), the spike
:math:`x_{\mu\varepsilon_\mu}=\sqrt\nu\,k/\sqrt D+\mathcal N(0,I_D)` and the label
:math:`y_\mu=x_{\mu\varepsilon_\mu}\cdot v/\sqrt D+\Delta\xi_\mu`.  With :math:`u_{\mu\ell}=x_{\mu\ell}/\sqrt D`,

.. math::
   P(X,y\mid k,v,\varepsilon)\propto\prod_\mu e^{\sqrt\nu\,u_{\mu\varepsilon_\mu}\cdot k-\nu\|k\|^2/(2D)}\,
   \mathcal N(y_\mu;u_{\mu\varepsilon_\mu}\cdot v,\Delta^2)

(the normalisation :math:`e^{-\nu\|k\|^2/2D}` of the spiked law is the same prior precision :math:`N\nu/D` that
GAMP needs, :mod:`attnlimits.verify.slr.amp`).  Given the locations the posterior is Gaussian and factorises:

.. math::
   k\mid\varepsilon\sim\mathcal N\!\Big(\frac{\sqrt\nu\,S}{a},\frac{I}{a}\Big),\quad S=\sum_\mu u_{\mu\varepsilon_\mu},\
   a=1+\frac{N\nu}D;\qquad
   v\mid\varepsilon\sim\mathcal N(Cb,C),\quad C^{-1}=I+\frac{\sum_\mu u_{\mu\varepsilon_\mu}u_{\mu\varepsilon_\mu}^\top}{\Delta^2},\
   b=\frac{\sum_\mu y_\mu u_{\mu\varepsilon_\mu}}{\Delta^2}.

Integrating :math:`k` and :math:`v` out exactly, the collapsed conditional of one location is, with
:math:`S^{-\mu}`, :math:`C^{-\mu}`, :math:`m^{-\mu}=C^{-\mu}b^{-\mu}` the quantities without sequence :math:`\mu`,

.. math::
   \log P(\varepsilon_\mu=\ell\mid\varepsilon_{-\mu},X,y)=\frac{\nu\,(2S^{-\mu}\cdot u_{\mu\ell}+\|u_{\mu\ell}\|^2)}{2a}
   -\tfrac12\log(\Delta^2+c_\ell)-\frac{(y_\mu-u_{\mu\ell}\cdot m^{-\mu})^2}{2(\Delta^2+c_\ell)}+\text{const},
   \quad c_\ell=u_{\mu\ell}^\top C^{-\mu}u_{\mu\ell}

(the :math:`k`-evidence :math:`e^{\nu\|S\|^2/2a}` and the predictive density of :math:`y_\mu` under
:math:`v\mid\varepsilon_{-\mu}`).  :math:`C^{-\mu}` is never formed: with :math:`w_o=Cu_o` for the current
location :math:`o`, Sherman–Morrison gives :math:`C^{-\mu}u_\ell=Cu_\ell+w_o(w_o\cdot u_\ell)/(\Delta^2-u_o\cdot w_o)`,
and the move :math:`o\to\ell` is the rank-two update
:math:`C\leftarrow C+w_ow_o^\top/(\Delta^2-u_o\cdot w_o)-g g^\top/(\Delta^2+c_\ell)`, :math:`g=C^{-\mu}u_\ell`.
Cost :math:`O(LD^2)` per site, :math:`O(NLD^2)` per sweep (systematic scan); :math:`C` is recomputed from
scratch by Cholesky after every sweep (no drift).  Chains are batched: every tensor carries a leading chain
axis, so seeds and starts run together.

Estimates (Rao–Blackwellised): after burn-in, :math:`\hat k=\overline{\sqrt\nu S/a}`,
:math:`\hat v=\overline{Cb}` over sweeps and chains of one data set.  Overlaps ``m_b`` :math:`=\hat b\cdot b^*/D`
and ``q_b`` :math:`=\|\hat b\|^2/D` of the pooled means, and ``q_b_cross`` from cross-chain products
:math:`\hat b_c\cdot\hat b_{c'}/D` (free of the sampling noise of each chain, which inflates ``q_b``; a
``q_b_cross`` well below ``q_b`` flags chains that disagree); the test error of the posterior-mean predictor
:math:`\sum_\varepsilon\mathrm{softmax}(\sqrt\nu X\hat k/\sqrt D)_\varepsilon(X\hat v/\sqrt D)_\varepsilon` (§11) exactly
from the seven overlaps by the §6.1 formula (exact at finite D for the orthonormal teacher of §2, claim C5).

Mixing: split-:math:`\hat R` (Gelman–Rubin) over chains from the informed start (true locations) and from
uniformly random locations, on the traces of :math:`m_k,q_k,m_v,q_v` and the location accuracy.  Measured
(``studies/study_posterior_finite_D.py``, L = 2, ν = 2, Δ = 0.1): at α ∈ {4, 10} and D ≤ 200, 50 sweeps
give :math:`\hat R\le1.09`; at α = 1 mixing is slow (with N ≈ D and small Δ nearly every location
configuration has an interpolating value vector): :math:`\hat R` up to 5 after 50 sweeps, ≤ 1.13 after 400
sweeps at D = 50.

Cost: :math:`O(LD^2)` per site; about 1 ms per site step for 8 chains at D = 200 on one core.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import torch

from attnlimits.symbolic.options import resolve_options

__all__ = ["collapsed_gibbs", "log_evidence", "split_rhat", "posterior_on_generated", "run_posterior",
           "POSTERIOR_COMMAND", "STARTS"]

STARTS = ("informed", "random")
_TRACE_KEYS = ("m_k", "q_k", "m_v", "q_v", "accuracy")


def log_evidence(U, y, eps, nu: float, delta: float) -> float:
    r""":math:`\log P(X,y\mid\varepsilon)` up to an :math:`\varepsilon`-independent constant, by dense linear algebra.

    ``U`` (N, L, D) scaled tokens :math:`x/\sqrt D`, ``y`` (N,), ``eps`` (N,) locations.  Returns
    :math:`\nu\|S\|^2/(2a)+\log\mathcal N(y;0,\Delta^2I+U_\varepsilon U_\varepsilon^\top)` (the reference of the tests:
    it does not use the rank-one updates of :func:`collapsed_gibbs`).
    """
    U = torch.as_tensor(U, dtype=torch.float64)
    y = torch.as_tensor(y, dtype=torch.float64)
    N, L, D = U.shape
    Ue = U[torch.arange(N), torch.as_tensor(eps, dtype=torch.long)]
    a = 1 + N * nu / D
    S = Ue.sum(0)
    K = delta ** 2 * torch.eye(N, dtype=torch.float64) + Ue @ Ue.T
    dist = torch.distributions.MultivariateNormal(torch.zeros(N, dtype=torch.float64), covariance_matrix=K)
    return float(nu * (S @ S) / (2 * a) + dist.log_prob(y))


def _refresh(Ue, y, delta):
    """C = (I + Σ u uᵀ/Δ²)⁻¹ and b = Σ y u/Δ² from the selected tokens ``Ue`` (B, N, D) (NumPy)."""
    B, N, D = Ue.shape
    A = np.eye(D) + np.matmul(Ue.transpose(0, 2, 1), Ue) / delta ** 2
    Lc = np.linalg.cholesky(A)
    Linv = np.linalg.solve(Lc, np.broadcast_to(np.eye(D), (B, D, D)))
    C = np.matmul(Linv.transpose(0, 2, 1), Linv)
    b = (y[:, :, None] * Ue).sum(1) / delta ** 2
    return C, b


def collapsed_gibbs(U, y, nu: float, delta: float, init_eps, *, sweeps: int, burn_in: int,
                    rng: np.random.Generator, k_star=None, v_star=None, eps_star=None, progress=None) -> dict:
    r"""Collapsed Gibbs sampler over the locations, batched over chains (module docstring for the algorithm).

    NumPy float64 (the per-site step is a few dozen small array operations: NumPy's call overhead is several
    times lower than PyTorch's on CPU).

    Parameters
    ----------
    U : array (B, N, L, D)
        Scaled tokens :math:`x/\sqrt D` of each chain's data set (chains of one seed share it).
    y : array (B, N)
    nu, delta : float
        Spike strength ν ≥ 0 and label noise Δ > 0.
    init_eps : int array (B, N)
        Starting locations (0-based).
    sweeps, burn_in : int
        Systematic-scan sweeps in all; the first ``burn_in`` are not averaged.
    rng : numpy.random.Generator
        Randomness of the sampler (Gumbel-max draws).
    k_star, v_star, eps_star : arrays (B, D), (B, D), (B, N), optional
        Truth, for the traces ``m_k``, ``m_v``, ``accuracy``.

    Returns
    -------
    dict
        ``k_hat``, ``v_hat`` (B, D): Rao–Blackwellised posterior means per chain; ``traces``: dict of
        (sweeps, B) arrays (``q_k``, ``q_v`` and, with the truth, ``m_k``, ``m_v``, ``accuracy``) of the
        conditional means after each sweep; ``eps`` (B, N) the final locations; ``flips`` (sweeps, B) the
        number of changed locations per sweep.
    """
    if not delta > 0:
        raise ValueError(f"delta must be > 0, got {delta}")
    if not (0 <= burn_in < sweeps):
        raise ValueError(f"need 0 <= burn_in < sweeps, got burn_in={burn_in}, sweeps={sweeps}")
    U = np.ascontiguousarray(np.asarray(U, dtype=np.float64))
    y = np.asarray(y, dtype=np.float64)
    B, N, L, D = U.shape
    if y.shape != (B, N):
        raise ValueError(f"y must have shape {(B, N)}, got {y.shape}")
    eps = np.array(init_eps, dtype=np.int64).reshape(B, N)
    rows = np.arange(B)
    d2 = float(delta) ** 2
    nu = float(nu)
    a = 1.0 + N * nu / D
    snu = math.sqrt(nu)
    unorm2 = (U * U).sum(-1)  # (B, N, L)
    truth = {k: (None if t is None else np.asarray(t, dtype=np.float64))
             for k, t in (("k", k_star), ("v", v_star), ("eps", eps_star))}

    def selected():
        return np.take_along_axis(U, eps[:, :, None, None], axis=2)[:, :, 0]

    Ue = selected()
    S = Ue.sum(1)
    C, bv = _refresh(Ue, y, delta)
    traces = {k: [] for k in _TRACE_KEYS}
    flips = []
    k_sum = np.zeros((B, D))
    v_sum = np.zeros((B, D))
    n_avg = 0
    for t in range(int(sweeps)):
        gumbel = rng.gumbel(size=(B, N, L))
        n_flip = np.zeros(B, dtype=np.int64)
        for mu in range(N):
            Um = U[:, mu]  # (B, L, D)
            ym = y[:, mu]
            o = eps[:, mu]
            uo = Um[rows, o]  # (B, D)
            W = np.matmul(Um, C)  # (B, L, D): row ℓ is C u_ℓ (C symmetric)
            wo = W[rows, o]
            h = np.matmul(Um, wo[:, :, None])[:, :, 0]  # u_ℓ · w_o
            den_o = d2 - h[rows, o]  # Δ² − u_oᵀ C u_o > 0
            G = W + (h / den_o[:, None])[:, :, None] * wo[:, None, :]  # rows: C⁻ u_ℓ
            c = (Um * G).sum(-1)
            s2 = d2 + c
            bm = bv - (ym / d2)[:, None] * uo
            Sm = S - uo
            pred = np.matmul(G, bm[:, :, None])[:, :, 0]
            kt = np.matmul(Um, Sm[:, :, None])[:, :, 0]
            logw = (nu * (2 * kt + unorm2[:, mu]) / (2 * a) - 0.5 * np.log(s2)
                    - (ym[:, None] - pred) ** 2 / (2 * s2) + gumbel[:, mu])
            new = logw.argmax(1)
            ch = np.nonzero(new != o)[0]
            if ch.size:
                nw = new[ch]
                g = G[ch, nw]
                w0 = wo[ch]
                C[ch] += (w0[:, :, None] * (w0 / den_o[ch, None])[:, None, :]
                          - g[:, :, None] * (g / s2[ch, nw][:, None])[:, None, :])
                un = Um[ch, nw]
                bv[ch] = bm[ch] + (ym[ch] / d2)[:, None] * un
                S[ch] = Sm[ch] + un
                eps[ch, mu] = nw
                n_flip[ch] += 1
        Ue = selected()
        S = Ue.sum(1)
        C, bv = _refresh(Ue, y, delta)  # no drift of the rank-one updates across sweeps
        k_mean = snu * S / a
        v_mean = np.matmul(C, bv[:, :, None])[:, :, 0]
        if t >= burn_in:
            k_sum += k_mean
            v_sum += v_mean
            n_avg += 1
        traces["q_k"].append((k_mean * k_mean).sum(-1) / D)
        traces["q_v"].append((v_mean * v_mean).sum(-1) / D)
        if truth["k"] is not None:
            traces["m_k"].append((k_mean * truth["k"]).sum(-1) / D)
        if truth["v"] is not None:
            traces["m_v"].append((v_mean * truth["v"]).sum(-1) / D)
        if truth["eps"] is not None:
            traces["accuracy"].append((eps == truth["eps"]).mean(1))
        flips.append(n_flip)
        if progress:
            progress(f"Gibbs sweep {t + 1}/{sweeps}: flips {n_flip.tolist()}")
    return {"k_hat": k_sum / n_avg, "v_hat": v_sum / n_avg,
            "traces": {k: np.array(v) for k, v in traces.items() if v}, "eps": eps, "flips": np.array(flips)}


def split_rhat(chains) -> float:
    r"""Split-:math:`\hat R` (Gelman et al., BDA3 §11.4) of an array (n_draws, n_chains): each chain cut in two halves.

    Returns 1.0 for a trace without variance (all chains constant and equal), ``inf`` when the chains are
    constant at different values.
    """
    x = np.asarray(chains, dtype=float)
    n = x.shape[0] // 2
    if n < 2:
        raise ValueError("split_rhat needs at least 4 draws per chain")
    halves = np.concatenate([x[:n], x[n:2 * n]], axis=1)
    means = halves.mean(0)
    W = halves.var(0, ddof=1).mean()
    Bv = n * means.var(ddof=1)
    if W == 0:
        return 1.0 if Bv == 0 else math.inf
    var_plus = (n - 1) / n * W + Bv / n
    return float(math.sqrt(var_plus / W))


def _cross_q(vecs) -> float:
    """Mean of b_c·b_c'/D over chain pairs c ≠ c' (‖b‖²/D when one chain)."""
    V = np.asarray(vecs, dtype=float)
    D = V.shape[1]
    if V.shape[0] == 1:
        return float(V[0] @ V[0] / D)
    G = V @ V.T / D
    n = G.shape[0]
    return float((G.sum() - np.trace(G)) / (n * (n - 1)))


@dataclass(frozen=True)
class GibbsOptions:
    """The chains of :func:`posterior_on_generated`: ``chains_per_start`` from each of ``starts``, ``sweeps``
    sweeps of which ``burn_in`` are discarded; the §6.1 test error (``test_error``) on ``points`` QMC points."""

    starts: tuple = STARTS
    chains_per_start: int = 1
    sweeps: int = 60
    burn_in: int = 20
    points: int = 2 ** 15
    test_error: bool = True


def posterior_on_generated(nu: float, L: int, alpha: float, delta: float, D: int, seeds, *,
                           options: GibbsOptions | None = None, progress=None, **overrides) -> list[dict]:
    r"""Collapsed Gibbs on spiked-SLR data of each seed (all seeds and chains in one batch).

    Data per seed: :func:`attnlimits.verify.slr.sample_sequences` (teacher of §2, ``N = round(αD)``) from
    ``torch.Generator().manual_seed(seed)`` (CPU); sampler randomness from ``numpy.random.default_rng([seeds[0], 7919])``.
    Chains per seed: ``chains_per_start`` from each start in ``starts`` ("informed": the true locations;
    "random": uniform locations).  ``test_error=False`` skips the §6.1 test error (``E_test`` = NaN), which
    needs the generated population kernels.  These are the fields of :class:`GibbsOptions` (``options``;
    keywords override them).

    Returns
    -------
    list of dict
        One row per seed: overlaps ``m_k, q_k, m_v, q_v, m_kvstar, m_vkstar, q_kv`` of the pooled posterior
        means, ``q_k_cross, q_v_cross`` (cross-chain products), ``E_test`` (posterior-mean predictor, §6.1 from the overlaps,
        with its integration error ``E_test_error``, one QMC standard error), ``rhat_max`` and per-trace ``rhat_*`` (split-R̂ over all
        chains of the seed after burn-in), ``start_gap_*`` (informed − random chain means of the traces after
        burn-in), mean flips per sweep after burn-in, the parameters and the run time.
    """
    import time

    from .samplers import overlaps, sample_sequences
    from .problem import slr_problem
    from .theory import theory_of

    o = resolve_options(GibbsOptions, options, overrides)
    starts, chains_per_start, sweeps, burn_in = o.starts, o.chains_per_start, o.sweeps, o.burn_in
    points, test_error = o.points, o.test_error
    if not delta > 0:
        raise ValueError(f"delta must be > 0, got {delta}")
    for s in starts:
        if s not in STARTS:
            raise ValueError(f"unknown start {s!r}; use one of {STARTS}")
    seeds = [int(s) for s in seeds]
    N = int(round(alpha * D))
    root = math.sqrt(D)
    chain_starts = [s for s in starts for _ in range(int(chains_per_start))]
    n_ch = len(chain_starts)
    U, Y, K, V, E0, init = [], [], [], [], [], []
    rng = np.random.default_rng([seeds[0], 7919])
    datas = []
    for s in seeds:
        data = sample_sequences("spiked", nu, int(L), N, int(D), generator=torch.Generator().manual_seed(s),
                                delta=delta, device="cpu")
        data = {k: v.numpy() for k, v in data.items()}
        datas.append(data)
        for st in chain_starts:
            U.append(data["X"] / root)
            Y.append(data["y"])
            K.append(data["k_star"])
            V.append(data["v_star"])
            E0.append(data["eps"])
            init.append(data["eps"].copy() if st == "informed" else rng.integers(int(L), size=N))
    t0 = time.perf_counter()
    res = collapsed_gibbs(np.stack(U), np.stack(Y), nu, delta, np.stack(init), sweeps=sweeps, burn_in=burn_in,
                          rng=rng, k_star=np.stack(K), v_star=np.stack(V), eps_star=np.stack(E0), progress=progress)
    elapsed = time.perf_counter() - t0
    softmax = theory_of(slr_problem("spiked", nu, int(L), activation="softmax")) if test_error else None
    r = math.sqrt(nu)
    rows = []
    for i, s in enumerate(seeds):
        sl = slice(i * n_ch, (i + 1) * n_ch)
        kh = res["k_hat"][sl]
        vh = res["v_hat"][sl]
        data = datas[i]
        ov = overlaps(kh.mean(0), vh.mean(0), data["k_star"], data["v_star"])
        ov["q_k_cross"], ov["q_v_cross"] = _cross_q(kh), _cross_q(vh)
        key = {"m_k": r * ov["m_k"], "q_k": nu * ov["q_k"], "m_v": ov["m_v"], "q_v": ov["q_v"],
               "m_kvstar": r * ov["m_kvstar"], "m_vkstar": ov["m_vkstar"], "q_kv": r * ov["q_kv"]}
        E, E_se = softmax.population_risk_general(key, points=points) if test_error else (math.nan,) * 2
        row = {"model": "spiked", "L": str(int(L)), "nu": float(nu), "alpha": float(alpha), "delta": float(delta),
               "D": int(D), "N": N, "seed": s, "chains": n_ch, "starts": ",".join(chain_starts), "sweeps": sweeps,
               "burn_in": burn_in, **ov, "E_test": float(E), "E_test_error": float(E_se),
               "flips_per_sweep": float(res["flips"][burn_in:, sl].mean()), "seconds_batch": elapsed}
        rh = {}
        for key_t, tr in res["traces"].items():
            x = tr[burn_in:, sl]
            rh[key_t] = split_rhat(x) if x.shape[0] >= 4 else math.nan
            row[f"rhat_{key_t}"] = rh[key_t]
            inf_c = [j for j, st in enumerate(chain_starts) if st == "informed"]
            rnd_c = [j for j, st in enumerate(chain_starts) if st == "random"]
            if inf_c and rnd_c:
                row[f"start_gap_{key_t}"] = float(x[:, inf_c].mean() - x[:, rnd_c].mean())
        row["rhat_max"] = max(rh.values()) if rh else math.nan
        rows.append(row)
    return rows


def run_posterior(params: dict, *, progress=None) -> list[dict]:
    """``attnlimits slr posterior``: one row per seed (:func:`posterior_on_generated`) with the state-evolution values."""
    from attnlimits.symbolic.result import InputError

    from .bayes_optimal import bo_state_evolution

    if params["model"] != "spiked":
        raise InputError("--model: the posterior sampler is implemented for spiked-SLR only")
    if not params["burn_in"] < params["sweeps"]:
        raise InputError(f"--burn-in must be < --sweeps, got {params['burn_in']} >= {params['sweeps']}")
    from ._guards import bayes_optimal_seconds, check_work, data_bytes, posterior_seconds

    chains = len(params["seeds"]) * 2 * int(params.get("chains_per_start", 1))
    check_work(f"slr posterior at alpha = {params['alpha']:g}, D = {params['D']}, L = {params['L']}, {chains} chains",
               nbytes=data_bytes(params["alpha"], params["D"], params["L"], copies=3 * chains),
               seconds=posterior_seconds(params["alpha"], params["D"], params["L"], chains, params["sweeps"])
               + bayes_optimal_seconds(params["L"], 1, 2 ** 13), progress=progress)
    se = bo_state_evolution("spiked", params["nu"], params["L"], [params["alpha"]], params["delta"],
                            starts=("uninformed",))[0]
    rows = posterior_on_generated(params["nu"], params["L"], params["alpha"], params["delta"], params["D"],
                                  params["seeds"], chains_per_start=params["chains_per_start"],
                                  sweeps=params["sweeps"], burn_in=params["burn_in"], progress=progress)
    for r in rows:
        r.update({"theory_q_k": se.q_k, "theory_q_v": se.q_v, "theory_E_BO": se.E_BO})
    return rows


from attnlimits.derivations.slr.result import POSTERIOR_COMMAND  # noqa: E402,F401  (declared with the result)
