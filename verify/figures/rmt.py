"""The panels of the interpolation result (arXiv:2506.18656, Fig. 1a–c; docs/attention_rmt.md T4):
interpolation error of ridge and tanh attention (w = 0 and aligned unit weights) against γ, c = p/n
and the SNR, theory from ``attnlimits rmt`` on a dense grid and Monte Carlo markers with residuals in SE.
Declared in the result's manifest (``derivations/attention_rmt/result.py``, ``figures=``)."""
from __future__ import annotations

import math

import numpy as np

from .drawing import COLORS, axes, compared, run_command

__all__ = ["rmt_1a", "rmt_1b", "rmt_1c"]

_SETTINGS = {"w0": ([0.0], [0.0]), "aligned": ([1.0], [1.0])}
_LABEL = {"w0": "attention, w = 0", "aligned": "attention, aligned unit w", "ridge": "ridge"}


def _rmt_theory(c: float, gammas, snr: float) -> dict:
    out = {}
    for name, (wk, wq) in _SETTINGS.items():
        rows = run_command("rmt", "", activation="tanh", c=c, gamma=list(gammas), snr=snr, wk=wk, wq=wq)
        out[name] = [float(r["E_attention"]) for r in rows]
        out["ridge"] = [float(r["E_ridge"]) for r in rows]
    return out


def _rmt_mc(n: int, c: float, gammas, snr: float, draws: int, seed: int, device: str):
    import sympy

    from attnlimits.verify.rmt.montecarlo import simulate_attention

    p = max(2, int(round(c * n)))
    t = sympy.Symbol("t")
    mu = None if snr == 0 else [math.sqrt(snr)]
    settings = {name: ({} if not any(wk) else {"wk": wk, "wq": wq}) for name, (wk, wq) in _SETTINGS.items()}
    res = simulate_attention(sympy.tanh(t), n, p, list(gammas), mu=mu, settings=settings, draws=draws, seed=seed,
                             device=device)
    return p, {name: res.estimate(name) for name in list(_SETTINGS) + ["ridge"]}


def _rmt_panel(name, out, mode, seed, device, *, x, xlabel, title, theory_x, sim_x, fixed, logx):
    """A panel whose x is one of gamma / c / snr; theory on ``theory_x``, simulation on ``sim_x``."""
    size = {"quick": {"n": 256, "draws": 4}, "full": {"n": fixed.get("n_paper", 2048), "draws": 8}}[mode]
    fig, ax, rax = axes(title, xlabel, "interpolation error E", logx=logx, residual=True)
    rows = []

    def theory_at(xv):
        c = xv if x == "c" else fixed["c"]
        snr = xv if x == "snr" else fixed["snr"]
        gam = [xv] if x == "gamma" else [fixed["gamma"]]
        return _rmt_theory(c, gam, snr)

    if x == "gamma":
        th = _rmt_theory(fixed["c"], theory_x, fixed["snr"])
    else:
        per = [theory_at(v) for v in theory_x]
        th = {k: [d[k][0] for d in per] for k in per[0]}
    for key in ("ridge", "w0", "aligned"):
        ax.plot(theory_x, th[key], color=COLORS[key], lw=1.6, label=f"{_LABEL[key]} (theory)")
        rows += [{"panel": name, "curve": key, "kind": "theory", x: float(xv), "E": float(e), **fixed}
                 for xv, e in zip(theory_x, th[key])]
    sims = []
    for i, xv in enumerate(sim_x):
        c = xv if x == "c" else fixed["c"]
        snr = xv if x == "snr" else fixed["snr"]
        gam = list(sim_x) if x == "gamma" else [fixed["gamma"]]
        if x == "gamma" and i > 0:
            break
        n = size["n"]
        p, est = _rmt_mc(n, c, gam, snr, size["draws"], seed + i, device)
        sims.append((xv, c, snr, gam, n, p, est))
    for key, marker in (("ridge", "s"), ("w0", "o"), ("aligned", "^")):
        xs, ys, es, zs = [], [], [], []
        for xv, c, snr, gam, n, p, est in sims:
            if x == "gamma":
                th_sim = _rmt_theory(c, gam, snr)[key]
                for g, m, s, tv in zip(gam, est[key].mean, est[key].se, th_sim):
                    xs.append(g), ys.append(float(m)), es.append(float(s)), zs.append((float(m) - tv) / max(float(s), 1e-300))
                    rows.append({"panel": name, "curve": key, "kind": "simulation", "gamma": float(g), "E": float(m),
                                 "E_se": float(s), "theory": tv, "n": n, "p": p, "draws": size["draws"],
                                 "seed": seed, **{k: v for k, v in fixed.items() if k != "gamma"},
                                 **compared(m, tv, s, size["draws"])})
            else:
                tv = theory_at(xv)[key][0]
                m, s = float(est[key].mean[0]), float(est[key].se[0])
                xs.append(xv), ys.append(m), es.append(s), zs.append((m - tv) / max(s, 1e-300))
                rows.append({"panel": name, "curve": key, "kind": "simulation", x: float(xv), "E": m, "E_se": s,
                             "theory": tv, "n": n, "p": p, "draws": size["draws"], "seed": seed,
                             **{k: v for k, v in fixed.items() if k != x}, **compared(m, tv, s, size["draws"])})
        ax.errorbar(xs, ys, yerr=es, fmt=marker, ms=4, color=COLORS[key], capsize=2, ls="none",
                    label=f"{_LABEL[key]} (simulation)")
        rax.plot(xs, zs, marker, ms=4, color=COLORS[key])
    fixed_txt = ", ".join(f"{k} = {v:g}" for k, v in fixed.items() if k not in (x, "n_paper"))
    note = (f"tanh attention; {fixed_txt}; simulation: n = {size['n']}, {size['draws']} draws, seed {seed} "
            f"({mode} size; the paper: n = {fixed.get('n_paper', 2048)}); theory: the p/n → c limit")
    return fig, ax, rows, note


def rmt_1a(out, mode, seed, device):
    """Fig. 1a: interpolation error against γ, c = 4, SNR 1."""
    gam = [float(f"{g:.6g}") for g in np.logspace(-5, 2, 60)]
    sim = [1e-5, 1e-3, 1e-1, 1.0, 10.0, 100.0]
    return _rmt_panel("rmt-1a", out, mode, seed, device, x="gamma", xlabel="ridge parameter γ",
                      title="Interpolation error vs γ, c = p/n = 4, SNR 1 (arXiv:2506.18656 Fig. 1a)",
                      theory_x=gam, sim_x=sim, fixed={"c": 4.0, "snr": 1.0, "n_paper": 512}, logx=True)


def rmt_1b(out, mode, seed, device):
    """Fig. 1b: interpolation error against c = p/n at γ = 1e-5."""
    cs = list(np.round(np.linspace(0.1, 2.5, 40), 4))
    sim = [0.25, 0.5, 0.75, 1.0, 2.0]
    return _rmt_panel("rmt-1b", out, mode, seed, device, x="c", xlabel="c = p/n",
                      title="Interpolation error vs c, γ = 1e-5, SNR 1 (arXiv:2506.18656 Fig. 1b)",
                      theory_x=cs, sim_x=sim, fixed={"gamma": 1e-5, "snr": 1.0, "n_paper": 4096}, logx=False)


def rmt_1c(out, mode, seed, device):
    """Fig. 1c: interpolation error against the SNR at c = 1/4, γ = 1e-5."""
    snrs = list(np.round(np.linspace(0, 8, 41), 4))
    sim = [0.0, 0.5, 1.0, 2.0, 4.0, 8.0]
    return _rmt_panel("rmt-1c", out, mode, seed, device, x="snr", xlabel="SNR ‖μ‖²",
                      title="Interpolation error vs SNR, c = 1/4, γ = 1e-5 (arXiv:2506.18656 Fig. 1c)",
                      theory_x=snrs, sim_x=sim, fixed={"c": 0.25, "gamma": 1e-5, "n_paper": 2048}, logx=False)
