"""The papers' figure panels, one command each: ``attnlimits figure NAME [--full] [--out DIR]``.

Each panel computes its theory live (dense grids: the theory is cheap) and, where the panel has
a finite-size side, simulates it at ``quick`` size (minutes on two cores) or at the paper's size
with ``--full``.  It writes ``DIR/NAME.png`` and ``DIR/NAME.csv`` (tidy: one row per plotted
point, with the parameters, sizes and seeds that made it) and returns the rows.

Panels (``attnlimits figure --list``):

- ``rmt-1a`` — interpolation error against γ (arXiv:2506.18656, Fig. 1a; docs/attention_rmt.md T4):
  ridge and tanh attention (w = 0 and aligned unit weights), c = 4, SNR 1;
- ``rmt-1b`` — against c = p/n at γ = 10⁻⁵ (Fig. 1b);
- ``rmt-1c`` — against the SNR at c = 1/4, γ = 10⁻⁵ (Fig. 1c);
- ``slr-risk-nu`` — optimal population risk of each activation and the Bayes risk against ν
  (arXiv:2509.21936, population figure; docs/slr.md §6–§9), spiked SLR, L = 2, with Monte Carlo markers
  at the optimal parameters (fresh projection draws) and of the Bayes risk, residuals in SE;
- ``slr-risk-L`` — the same against L at spiked ν = 2;
- ``slr-risk-L-max`` — the same against L at max-SLR ν = ∞ (Bayes risk 0; softmax and softplus_norm optima
  are limits m_k → ∞);
- ``slr-varlen`` — variable length L ~ U{1,2,3} at max-SLR ν = ∞: the optimum with one (k, v) for every
  length against each length tuned apart, with Monte Carlo at the shared optimum;
- ``slr-finite-alpha`` (spiked ν = 2, L = 2), ``slr-finite-alpha-spiked-nu1-L3``,
  ``slr-finite-alpha-spiked-nu2-L3``, ``slr-finite-alpha-max-L3`` — test error against α = N/D: replica
  theory of ridge ERM at tuned λ for softmax and linear attention, ERM training, the Bayes-optimal error
  and the population optima (finite-sample figure; docs/slr.md §10–§12).  ``--full`` trains at the
  paper's √(ND) = 10⁴, one Dask task per (activation, α, seed), resumable from ``OUT/NAME-erm/``.

The SLR panels are made in :mod:`attnlimits.verify._slr_panels`.
"""
from __future__ import annotations

import contextvars
import csv
import math
import os
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from attnlimits.symbolic._files import atomic_write
from attnlimits.symbolic.result import InputError, discover_results

__all__ = ["FIGURES", "Figure", "all_figures", "axes", "make_figure"]

_ACTS = ("softmax", "linear_uncentred", "linear_centred", "erf_learned", "softplus_norm")
_COLORS = {"ridge": "k", "w0": "C0", "aligned": "C3", "softmax": "C3", "linear_uncentred": "C0",
           "linear_centred": "C9", "erf_learned": "C2", "softplus_norm": "C4", "bayes": "k", "BO": "k"}


@dataclass(frozen=True)
class Figure:
    name: str
    title: str
    source: str
    make: Callable
    quick_minutes: float  # measured on two cores, for --list
    options: bool = False  # make() takes the finite-sample options (seeds, alphas, workers, progress)


#: the progress callback of the figure being drawn (set by :func:`make_figure`); None: silent
_PROGRESS: contextvars.ContextVar = contextvars.ContextVar("figure_progress", default=None)


def _step(msg: str) -> None:
    """One progress line of the figure being drawn (``figure NAME: msg`` on stderr from the CLI)."""
    report = _PROGRESS.get()
    if report is not None:
        report(msg)


def _compared(value, theory, se, draws) -> dict:
    """The comparison columns of a simulated point against its theory (the columns ``verify`` and
    ``explore`` write for a comparison: docs/output.md, "Comparison columns"); the SE comes from
    ``draws`` draws or seeds (``draws − 1`` degrees of freedom)."""
    from attnlimits.verify.comparison import Comparison, comparison_columns

    try:
        comp = Comparison(float(value), float(theory), se=float(se),
                          dof=float(draws) - 1 if draws and int(draws) > 1 else None)
        return comparison_columns(comp)
    except (TypeError, ValueError):
        return comparison_columns(None)


def _run(result: str, command: str, **params) -> list[dict]:
    """Rows of a registered command; its own progress lines go to the figure's progress."""
    cmd = discover_results()[result].command(command)
    return list(cmd.function()(cmd.parse(params), progress=_step if _PROGRESS.get() is not None else None))


def axes(title: str, xlabel: str, ylabel: str, logx=False, logy=False, residual=False):
    """A panel's figure and axes in the style of every panel (``residual=True`` adds the (sim − theory)/SE
    axes below): ``(fig, ax, rax)``; for a plug-in's :class:`attnlimits.symbolic.result.Panel` too."""
    import matplotlib

    matplotlib.use("Agg", force=False) if not os.environ.get("MPLBACKEND") else None
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    fig = MplFigure(figsize=(7.0, 5.2 if residual else 4.2), layout="constrained")
    if residual:
        ax, rax = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    else:
        ax, rax = fig.subplots(1, 1), None
    for a in [ax] + ([rax] if rax is not None else []):
        if logx:
            a.set_xscale("log")
            a.xaxis.set_major_locator(LogLocator(base=10, numticks=8))
            a.xaxis.set_minor_formatter(NullFormatter())
        a.grid(alpha=0.3, which="major")
    if logy:
        ax.set_yscale("log")
    else:
        ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.set_title("\n".join(textwrap.wrap(title, 70)), fontsize=9.5)
    ax.set_ylabel(ylabel)
    (rax or ax).set_xlabel(xlabel)
    if rax is not None:
        rax.axhline(0, color="0.5", lw=0.8)
        rax.set_ylabel("(sim − theory)/SE", fontsize=8)
    return fig, ax, rax


def _finish(fig, ax, out: Path, name: str, rows: list[dict], note: str) -> Path:
    from attnlimits.verify._io import plain_log_ticks

    plain_log_ticks(fig)  # 0.1, 0.2, 0.5, 1 (or one per decade when wide)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    # the sizes, seeds and fixed parameters, in the right margin under the legend
    ax.annotate("\n".join(textwrap.wrap(note, 44)), xy=(1.02, 0.0), xycoords="axes fraction", fontsize=6.5,
                color="0.3", ha="left", va="bottom")
    from attnlimits.verify._io import save_figure

    png = save_figure(fig, out / f"{name}.png", dpi=130)
    cols = list(dict.fromkeys(k for r in rows for k in r))

    def write_csv(tmp):
        with open(tmp, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols)
            w.writeheader()
            w.writerows(rows)
    atomic_write(out / f"{name}.csv", write_csv)
    return png


# ---------------------------------------------------------------------------------------------
# interpolation paper: Fig. 1a-c
# ---------------------------------------------------------------------------------------------
_SETTINGS = {"w0": ([0.0], [0.0]), "aligned": ([1.0], [1.0])}
_LABEL = {"w0": "attention, w = 0", "aligned": "attention, aligned unit w", "ridge": "ridge"}


def _rmt_theory(c: float, gammas, snr: float) -> dict:
    out = {}
    for name, (wk, wq) in _SETTINGS.items():
        rows = _run("rmt", "", activation="tanh", c=c, gamma=list(gammas), snr=snr, wk=wk, wq=wq)
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
        ax.plot(theory_x, th[key], color=_COLORS[key], lw=1.6, label=f"{_LABEL[key]} (theory)")
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
                                 **_compared(m, tv, s, size["draws"])})
            else:
                tv = theory_at(xv)[key][0]
                m, s = float(est[key].mean[0]), float(est[key].se[0])
                xs.append(xv), ys.append(m), es.append(s), zs.append((m - tv) / max(s, 1e-300))
                rows.append({"panel": name, "curve": key, "kind": "simulation", x: float(xv), "E": m, "E_se": s,
                             "theory": tv, "n": n, "p": p, "draws": size["draws"], "seed": seed,
                             **{k: v for k, v in fixed.items() if k != x}, **_compared(m, tv, s, size["draws"])})
        ax.errorbar(xs, ys, yerr=es, fmt=marker, ms=4, color=_COLORS[key], capsize=2, ls="none",
                    label=f"{_LABEL[key]} (simulation)")
        rax.plot(xs, zs, marker, ms=4, color=_COLORS[key])
    fixed_txt = ", ".join(f"{k} = {v:g}" for k, v in fixed.items() if k not in (x, "n_paper"))
    note = (f"tanh attention; {fixed_txt}; simulation: n = {size['n']}, {size['draws']} draws, seed {seed} "
            f"({mode} size; the paper: n = {fixed.get('n_paper', 2048)}); theory: the p/n → c limit")
    return fig, ax, rows, note


def _fig_rmt_1a(out, mode, seed, device):
    gam = [float(f"{g:.6g}") for g in np.logspace(-5, 2, 60)]
    sim = [1e-5, 1e-3, 1e-1, 1.0, 10.0, 100.0]
    return _rmt_panel("rmt-1a", out, mode, seed, device, x="gamma", xlabel="ridge parameter γ",
                      title="Interpolation error vs γ, c = p/n = 4, SNR 1 (arXiv:2506.18656 Fig. 1a)",
                      theory_x=gam, sim_x=sim, fixed={"c": 4.0, "snr": 1.0, "n_paper": 512}, logx=True)


def _fig_rmt_1b(out, mode, seed, device):
    cs = list(np.round(np.linspace(0.1, 2.5, 40), 4))
    sim = [0.25, 0.5, 0.75, 1.0, 2.0]
    return _rmt_panel("rmt-1b", out, mode, seed, device, x="c", xlabel="c = p/n",
                      title="Interpolation error vs c, γ = 1e-5, SNR 1 (arXiv:2506.18656 Fig. 1b)",
                      theory_x=cs, sim_x=sim, fixed={"gamma": 1e-5, "snr": 1.0, "n_paper": 4096}, logx=False)


def _fig_rmt_1c(out, mode, seed, device):
    snrs = list(np.round(np.linspace(0, 8, 41), 4))
    sim = [0.0, 0.5, 1.0, 2.0, 4.0, 8.0]
    return _rmt_panel("rmt-1c", out, mode, seed, device, x="snr", xlabel="SNR ‖μ‖²",
                      title="Interpolation error vs SNR, c = 1/4, γ = 1e-5 (arXiv:2506.18656 Fig. 1c)",
                      theory_x=snrs, sim_x=sim, fixed={"c": 0.25, "gamma": 1e-5, "n_paper": 2048}, logx=False)


# ---------------------------------------------------------------------------------------------
# softmax paper: population risks, finite-sample curve
# ---------------------------------------------------------------------------------------------
def _fig_slr_nu(out, mode, seed, device):
    from ._slr_panels import population_panel

    xs = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0] if mode == "quick" else list(np.round(np.logspace(-1, 1.3, 14), 4))
    return population_panel("slr-risk-nu", xs=xs, x="nu", model="spiked", nu=None, L=2, mode=mode, seed=seed,
                            device=device, title="Population risk vs spike strength ν, spiked SLR, L = 2 "
                            "(arXiv:2509.21936)", xlabel="spike strength ν", logx=True)


def _fig_slr_L(out, mode, seed, device):
    from ._slr_panels import population_panel

    xs = [2, 3, 4, 6, 8] if mode == "quick" else [2, 3, 4, 5, 6, 8, 10, 12]
    return population_panel("slr-risk-L", xs=xs, x="L", model="spiked", nu=2.0, L=None, mode=mode, seed=seed,
                            device=device, title="Population risk vs sequence length L, spiked SLR, ν = 2 "
                            "(arXiv:2509.21936)", xlabel="sequence length L", logx=False)


def _fig_slr_L_max(out, mode, seed, device):
    from ._slr_panels import population_panel

    xs = [2, 3, 4, 5, 6, 8] if mode == "quick" else [2, 3, 4, 5, 6, 8, 10, 12, 16]
    return population_panel("slr-risk-L-max", xs=xs, x="L", model="max", nu=math.inf, L=None, mode=mode, seed=seed,
                            device=device, title="Population risk vs sequence length L, max-SLR, ν = ∞ "
                            "(arXiv:2509.21936)", xlabel="sequence length L", logx=False)


def _fig_slr_varlen(out, mode, seed, device):
    from ._slr_panels import varlen_panel

    return varlen_panel("slr-varlen", model="max", nu=math.inf, law={1: 1 / 3, 2: 1 / 3, 3: 1 / 3}, mode=mode,
                        seed=seed, device=device, title="Variable length L ~ U{1,2,3}, max-SLR, ν = ∞: one (k, v) "
                        "for every length vs each length tuned (arXiv:2509.21936)")


def theory_rows(panel: str, curve: str, rows: list[dict], **fixed) -> list[dict]:
    """The figure's rows of a replica curve from ``slr replica`` rows: α, E_test, its error, λ and the row's
    ``flag`` (empty for an RS prediction; ``rsb``, ``unstable``, ``rough``… otherwise, docs/output.md)."""
    from attnlimits.numeric.slr.rs_command import theory_flag

    return [{"panel": panel, "curve": curve, "kind": "theory", "alpha": float(r["alpha"]), "E_test": float(r["E_test"]),
             "E_test_error": r.get("E_test_error"), "lam": r.get("lam"),
             "flag": r["flag"] if "flag" in r else theory_flag(r), **fixed} for r in rows]


def draw_theory(ax, rows: list[dict], *, color, label: str) -> list:
    """Draw the theory rows of one curve (:func:`theory_rows`): the line labelled ``label`` through the
    unflagged points only, flagged ones as hollow markers with their legend entry
    (:func:`attnlimits.verify._flags.theory_line`).  Returns the flagged α."""
    from attnlimits.verify._flags import theory_line

    rows = sorted(rows, key=lambda r: r["alpha"])
    bad = theory_line(ax, [r["alpha"] for r in rows], [r["E_test"] for r in rows], [r.get("flag") for r in rows],
                      color=color, label=label)
    return [r["alpha"] for r, b in zip(rows, bad) if b]


def _finite(name):
    def make(out, mode, seed, device, **options):
        from ._slr_panels import finite_panel

        return finite_panel(name, out, mode, seed, device, **options)
    return make


FIGURES = {f.name: f for f in (
    Figure("rmt-1a", "interpolation error vs γ, ridge and attention (c = 4, SNR 1)", "arXiv:2506.18656 Fig. 1a",
           _fig_rmt_1a, 0.5),
    Figure("rmt-1b", "interpolation error vs c = p/n at γ = 1e-5", "arXiv:2506.18656 Fig. 1b", _fig_rmt_1b, 1.0),
    Figure("rmt-1c", "interpolation error vs SNR at c = 1/4, γ = 1e-5", "arXiv:2506.18656 Fig. 1c", _fig_rmt_1c, 1.0),
    Figure("slr-risk-nu", "optimal population risks and Bayes risk vs ν (spiked, L = 2), with MC", "arXiv:2509.21936 population figure",
           _fig_slr_nu, 2.0),
    Figure("slr-risk-L", "optimal population risks and Bayes risk vs L (spiked, ν = 2), with MC", "arXiv:2509.21936 population figure",
           _fig_slr_L, 2.0),
    Figure("slr-risk-L-max", "optimal population risks vs L at max-SLR ν = ∞ (Bayes risk 0)",
           "arXiv:2509.21936 population figure (max-SLR)", _fig_slr_L_max, 3.0),
    Figure("slr-varlen", "variable length L ~ U{1,2,3}, max-SLR ν = ∞: shared vs per-length optimum",
           "arXiv:2509.21936 variable-length figure", _fig_slr_varlen, 1.0),
    Figure("slr-finite-alpha", "test error vs α, spiked ν = 2, L = 2: RS at tuned λ, ERM, Bayes-optimal, population",
           "arXiv:2509.21936 finite-sample figure", _finite("slr-finite-alpha"), 8.0, True),
    Figure("slr-finite-alpha-spiked-nu1-L3", "test error vs α, spiked ν = 1, L = 3 (same curves)",
           "arXiv:2509.21936 finite-sample figure", _finite("slr-finite-alpha-spiked-nu1-L3"), 1.0, True),
    Figure("slr-finite-alpha-spiked-nu2-L3", "test error vs α, spiked ν = 2, L = 3 (same curves)",
           "arXiv:2509.21936 finite-sample figure", _finite("slr-finite-alpha-spiked-nu2-L3"), 1.0, True),
    Figure("slr-finite-alpha-max-L3", "test error vs α, max-SLR ν = ∞, L = 3 (same curves)",
           "arXiv:2509.21936 finite-sample figure", _finite("slr-finite-alpha-max-L3"), 2.0, True),
)}


def all_figures() -> dict:
    """Every panel: the papers' own (:data:`FIGURES`) and those the registered results declare
    (``Result.figures``, :class:`attnlimits.symbolic.result.Panel`)."""
    from attnlimits.symbolic.result import resolve

    out = dict(FIGURES)
    for res in discover_results().values():
        for panel in getattr(res, "figures", ()):
            if panel.name in out:
                raise ValueError(f"figure {panel.name!r} of result {res.name!r} is declared twice")
            out[panel.name] = Figure(panel.name, panel.title, panel.source,
                                     (lambda dotted: lambda *a: resolve(dotted)(*a))(panel.make), panel.quick_minutes)
    return out


def make_figure(name: str, out, *, mode: str = "quick", seed: int = 0, device: str = "auto",
                progress: Callable | None = None, seeds: int | None = None, alphas=None,
                workers: int | None = None) -> tuple[Path, list[dict]]:
    """Draw panel ``name`` into ``out`` (``NAME.png`` and ``NAME.csv``); return the PNG path and rows.

    ``seeds``, ``alphas`` and ``workers`` apply to the finite-sample panels (``Figure.options``): the ERM
    seeds per (activation, α), the α of the ERM markers, and the Dask worker processes of ``--full``
    (``0``: in this process); other panels refuse them."""
    figures = all_figures()
    if name not in figures:
        raise InputError(f"no figure {name!r}; figures: {', '.join(figures)}")
    if mode not in ("quick", "full"):
        raise InputError(f"mode must be quick or full, got {mode!r}")
    if not figures[name].options and (seeds is not None or alphas is not None or workers is not None):
        raise InputError(f"figure {name!r} takes no --seeds/--alpha/--workers (finite-sample panels only)")
    if seeds is not None and int(seeds) < 2:
        raise InputError(f"--seeds must be >= 2 (a standard error needs two), got {seeds}")
    if alphas is not None and (not alphas or any(not (float(a) > 0 and math.isfinite(float(a))) for a in alphas)):
        raise InputError(f"--alpha must be positive sample ratios, got {alphas}")
    from attnlimits.verify._io import OutputLock, check_output_folder, record_files

    # before any work: the folder writable, the two files not folders; then the folder locked
    out = check_output_folder(out, files=(f"{name}.png", f"{name}.csv"))
    t0 = time.perf_counter()
    with OutputLock(out, f"attnlimits figure {name}"):
        if progress:
            progress(f"figure {name} ({mode}): {figures[name].title}")
        token = _PROGRESS.set((lambda msg: progress(f"figure {name}: {msg}")) if progress else None)
        try:
            if figures[name].options:
                fig, ax, rows, note = figures[name].make(out, mode, seed, device, seeds=seeds, alphas=alphas,
                                                         workers=workers, progress=progress)
            else:
                fig, ax, rows, note = figures[name].make(out, mode, seed, device)
        finally:
            _PROGRESS.reset(token)
        png = _finish(fig, ax, out, name, rows, note + f"; made by: attnlimits figure {name}"
                      + (" --full" if mode == "full" else "") + f" (seed {seed})")
        record_files(out, "figure", [f"{name}.png", f"{name}.csv"], merge=True)
    if progress:
        progress(f"figure {name}: {time.perf_counter() - t0:.1f} s -> {png}")
    return png, rows
