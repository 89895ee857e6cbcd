"""§4.2 and §5 — the noise-kernel law (V19) and the bulk traces of Proposition 1 (P1-traces)."""
from __future__ import annotations

import math
import numpy as np

from attnlimits.verify.claims.base import Check, Claim, PlotSeries, PlotSpec

from .common import correction_plot, extrapolated_check, hermite, mc_check, p_for, run_seed, source

__all__ = ["solve_noise_kernel_stieltjes", "bulk_traces", "simulate_bulk_traces", "SPEC_CHECKS", "CLAIMS"]

# =============================================================================================
# V19 — the noise-kernel law of §4.2
# =============================================================================================

_V19_Z = (0.3j, -0.5 + 0.2j, 1.0 + 0.1j)
_V19_C = (0.5, 2.0)


def solve_noise_kernel_stieltjes(ctx, a1: float, nu: float, c: float, z: complex) -> complex:
    """Root of the §4.2 law, from :data:`attnlimits.derivations.attention_rmt.noise_kernel_system` (the real and
    imaginary parts of the SymPy update) with the engine's solver: damped iteration from
    ``m = −1/z`` (the branch continued from |z| → ∞), Anderson, Newton with the symbolic Jacobian;
    the invariant Im m > 0 is checked and a failure raises ``ConvergenceError``."""
    from attnlimits.derivations import attention_rmt as R
    from attnlimits.numeric import compile_system

    z = complex(z)
    if not z.imag > 0:
        raise ValueError("use Im z > 0")
    solver = ctx.cached(("v19-system",), lambda: compile_system(R.noise_kernel_system))
    res = solver.solve({"z_re": z.real, "z_im": z.imag, "c": c, "a1": a1, "nu": nu})
    return complex(float(res.x[0]), float(res.x[1]))


def _v19_theory(ctx):
    h = hermite(ctx, "tanh")
    return {(c, z): solve_noise_kernel_stieltjes(ctx, float(h.a1), float(h.nu), c, z) for c in _V19_C for z in _V19_Z}


def _spec_V19(ctx):
    from attnlimits.derivations import attention_rmt as R

    h = hermite(ctx, "tanh")
    checks = []
    for (c, z), m in _v19_theory(ctx).items():
        upd = complex(R.noise_kernel_stieltjes_update.subs({R.stieltjes_m: m, R.z: z, R.a1: float(h.a1),
                                                            R.nu: float(h.nu), R.c: c}).evalf())
        checks.append(Check(f"fixed-point residual c={c:g} z={z}", theory=0.0, value=abs(upd - m), se=None,
                            tolerance=1e-12, note="|update(m) − m| evaluated on the SymPy expression"))
        checks.append(Check(f"branch Im m > 0, c={c:g} z={z}", theory=0.0, value=m.imag, se=None, kind="lower"))
    return checks


def _run_V19(ctx, size):
    from attnlimits.verify.rmt.montecarlo import noise_kernel_stieltjes
    from attnlimits.verify.stats import mean_se

    checks = _spec_V19(ctx)
    th = _v19_theory(ctx)
    h = hermite(ctx, "tanh")
    n, draws = size["n"], size["draws"]
    params = {"n": n, "n_small": size.get("n_small"), "draws": draws, "activation": "tanh", "diagonal": "zero",
              "device": str(ctx.device), "z": [str(z) for z in _V19_Z], "runs": []}
    plots = []
    xs_mc = [float(x) for x in np.linspace(-1.5, 2.5, 17)]  # MC along x + .1i for the plot
    zs = list(_V19_Z) + [complex(x, 0.1) for x in xs_mc]
    sizes = [size["n_small"], n] if size.get("n_small") else [n]
    for k, c in enumerate(_V19_C):
        by_size = []
        for nn in sizes:
            p = p_for(c, nn)
            seed = run_seed(ctx, "V19", k) if nn == n else ctx.seed_for("V19", k, nn)
            # MC along x + .1i for the plot only at the largest size
            zz = zs if nn == n else list(_V19_Z)
            key = ("mc-v19", nn, p, tuple(zz), seed, draws, str(ctx.device))
            ms = ctx.cached(key, lambda nn=nn, p=p, zz=zz, seed=seed: noise_kernel_stieltjes(
                h.centred, nn, p, zz, seed=seed, draws=draws, device=ctx.device))
            by_size.append((mean_se(ms.real), mean_se(ms.imag)))
        re, im = by_size[-1]
        p = p_for(c, n)
        for j, z in enumerate(_V19_Z):
            m = th[(c, z)]
            for part, val, col in (("Re", m.real, 0), ("Im", m.imag, 1)):
                ests = [b[col] for b in by_size]
                if len(sizes) > 1:
                    checks.append(extrapolated_check(f"{part} m c={c:g} z={z}, n → ∞", [val] * len(sizes), ests,
                                                      sizes, j, band=0.01))
                else:
                    checks.append(mc_check(f"{part} m c={c:g} z={z}", val, ests[0], j, 0.01))
        params["runs"].append({"c": c, "p": p, "seed": seed})
        xs = [float(x) for x in np.linspace(-1.5, 2.5, 81)]
        ys = [solve_noise_kernel_stieltjes(ctx, float(h.a1), float(h.nu), c, x + 0.1j).imag / math.pi for x in xs]
        k0 = len(_V19_Z)
        plots.append(PlotSpec(f"V19: noise-kernel law, c = {c:g} (Im m(x + .1i)/π)", "Re z", "Im m / π",
                              xscale="linear", series=[
                                  PlotSeries("theory (§4.2 fixed point)", xs, ys, kind="line"),
                                  PlotSeries("MC", xs_mc, [float(v) / math.pi for v in im.mean[k0:]],
                                             yerr=[float(v) / math.pi for v in im.se[k0:]], kind="points")]))
    return checks, plots, params


# --- Proposition 1: the bulk traces q0 … q5 against simulated traces -----------------------------------

_TRACE_NAMES = ("q0", "q1", "q2", "q3", "q4", "q5")


def bulk_traces(ctx, act: str, c: float, gamma: float, kappa: float = 0.0) -> np.ndarray:
    """q₀…q₅ of §5 (the generated bulk_system's observables) at one point, cached."""
    from attnlimits.derivations import attention_rmt as R
    from attnlimits.numeric import compile_system

    def compute():
        cs = ctx.cached(("bulk-system",), lambda: compile_system(R.bulk_system))
        h = hermite(ctx, act)
        pr = {"c": float(c), "gamma": float(gamma), "a1": float(h.a1), "nu": float(h.nu), "kappa": float(kappa)}
        nodes = cs.nodes(pr)
        r = cs.solve(pr, nodes=nodes)
        if not r.converged:
            raise RuntimeError(f"bulk fixed point did not converge at {pr}")
        obs = dict(zip(R.bulk_system.observables, cs.kernels.observables(*r.x, *cs._params(pr), _nodes=nodes)))
        return np.array([float(obs[k]) for k in _TRACE_NAMES])

    return ctx.cached(("bulk-traces", act, float(c), float(gamma), float(kappa)), compute)


def simulate_bulk_traces(a1: float, nu: float, c: float, gammas, n: int, draws: int, seed: int):
    r"""Normalised traces of the bulk resolvent on the Gaussian-equivalent kernel (§5), by simulation.

    Per draw: :math:`Z\in\mathbb R^{p\times n}` (p = cn) standard normal, :math:`T=Z^\top Z/n`,
    :math:`H` symmetric, zero diagonal, i.i.d. :math:`\mathcal N(0,1/p)` above it,
    :math:`K_0=a_1(T/c-I)+bH` (:math:`b^2=\nu-a_1^2`, κ = 0),
    :math:`Q_b=(K_0TK_0+\gamma I)^{-1}` by one eigendecomposition, and the six traces of §5's table
    (:math:`q_0=\operatorname{tr}Q_b/n`, …, :math:`q_5=\operatorname{tr}(TK_0Q_bK_0T)/n`).
    Returns an :class:`~attnlimits.verify.stats.MCEstimate` over draws of shape ``(len(gammas), 6)``.
    NumPy, float64, seeded; cost ≈ 10 n³ flops per draw."""
    from attnlimits.verify.stats import mean_se

    rng = np.random.default_rng(int(seed))
    p = round(c * n)
    b = math.sqrt(max(nu - a1 * a1, 0.0))
    out = np.empty((draws, len(gammas), 6))
    eye = np.eye(n)
    for d in range(draws):
        Z = rng.standard_normal((p, n))
        T = Z.T @ Z / n
        G = np.triu(rng.standard_normal((n, n)) / math.sqrt(p), 1)
        K = a1 * (T / c - eye) + b * (G + G.T)
        M = K @ T @ K
        w, V = np.linalg.eigh((M + M.T) / 2)
        KV, TKV = K @ V, T @ K @ V  # columns: K v_k and T K v_k
        VK, VKT = V.T @ K, V.T @ K @ T
        for j, g in enumerate(gammas):
            s = 1.0 / (w + g)
            out[d, j] = [
                np.sum(s) / n,
                np.einsum("ik,k,ki->", V, s, VK) / n,            # tr(Q K)/n
                np.einsum("ik,k,ki->", V, s, VKT) / n,           # tr(Q K T)/n
                np.einsum("ik,k,ik->", KV, s, KV) / n,            # tr(K Q K)/n
                np.einsum("ik,k,ki->", KV, s, VKT) / n,           # tr(K Q K T)/n
                np.einsum("ik,k,ik->", TKV, s, TKV) / n,          # tr(T K Q K T)/n
            ]
    return mean_se(out, axis=0)


_TRACE_POINTS = ((0.5, 0.1), (0.5, 1.0), (2.0, 0.1), (2.0, 1.0))


def _run_traces(ctx, size):
    """q₀…q₅ of the §5 fixed point against traces simulated on the Gaussian-equivalent kernel, at two sizes,
    each difference extrapolated to n → ∞ at rate 1/n (:func:`extrapolated_check`)."""
    checks, fits = [], []
    sizes, draws = size["sizes"], size["draws"]
    for act in size["acts"]:
        h = hermite(ctx, act)
        for c in sorted({c for c, _ in _TRACE_POINTS}):
            gs = [g for cc, g in _TRACE_POINTS if cc == c]
            ests = []
            for n, k in zip(sizes, draws):
                seed = ctx.seed_for("bulk-traces", act, int(100 * c), n)
                run = (lambda a1=float(h.a1), nu=float(h.nu), c=c, gs=tuple(gs), n=n, k=k, seed=seed:
                       simulate_bulk_traces(a1, nu, c, gs, n, k, seed))
                ests.append(ctx.cached(("bulk-traces-mc", act, c, tuple(gs), n, k), run))
            for j, g in enumerate(gs):
                th = bulk_traces(ctx, act, c, g)
                for q, name in enumerate(_TRACE_NAMES):
                    sub = [_Sub(e, j, q) for e in ests]
                    checks.append(extrapolated_check(f"{act} c={c:g} γ={g:g}: {name}", [th[q]] * len(sizes), sub,
                                                      sizes, fits=fits if (act, c, g, name) == (
                                                          size["acts"][0], 2.0, 1.0, "q5") else None))
    plots = [correction_plot("Prop. 1 traces: finite-n correction of q5 (c = 2, γ = 1)", fits)] if fits else []
    return checks, plots, {"sizes": list(sizes), "draws": list(draws), "points": list(_TRACE_POINTS),
                           "acts": list(size["acts"])}


class _Sub:
    """Entry (j, q) of an :class:`MCEstimate` of shape (γ, 6), as a scalar estimate (mean, se, n_draws)."""

    def __init__(self, est, j, q):
        self.mean, self.se, self.n_draws = float(est.mean[j, q]), float(est.se[j, q]), est.n_draws


#: claim name → its deterministic theory-vs-spec checks (no Monte Carlo)
SPEC_CHECKS = {"V19": _spec_V19}

#: the claims of this part, in the registry's order
CLAIMS = [
    Claim("V19", "Stieltjes transform of the noise kernel (§4.2 law)",
          "Zero-diagonal K_N, c = .5, 2, z ∈ {.3i, −.5+.2i, 1+.1i}: empirical m(z) equals the fixed point of "
          "m = −(z + a1²m/(c + a1 m) + (ν − a1²)m/c)⁻¹ (±.01).",
          source("Lemma 1 (linearization)", "§4.2, §12 V19"),
          _run_V19, quick={"n": 800, "n_small": 400, "draws": 10}, full={"n": 3000, "n_small": 1500, "draws": 6}, tags=("rmt", "hermite", "mc")),
    Claim("P1-traces", "Proposition 1: bulk traces q0…q5 against simulated traces",
          "The §5 fixed point's q0…q5 equal the normalised traces of Q_b = (K0 T K0 + γ)^-1 on the Gaussian "
          "equivalent K0 = a1(T/c − I) + bH (simulated, extrapolated in n at rate 1/n), c = .5, 2, γ = .1, 1.",
          source("Proposition 1", "§5"), _run_traces,
          quick={"acts": ("tanh",), "sizes": (250, 500), "draws": (12, 8)},
          full={"acts": ("tanh", "relu"), "sizes": (500, 1000), "draws": (12, 8)},
          tags=("rmt", "random-inputs", "mc")),
]
