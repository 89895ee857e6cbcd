"""The single-location-regression panels of ``attnlimits figure`` (arXiv:2509.21936; docs/slr.md), declared in the
result's manifest (``derivations/slr/result.py``, ``figures=``); drawn with the shared helpers of
:mod:`attnlimits.verify.figures.drawing`.

Population panels (§6–§9): the optimal population risk of each activation and the Bayes risk, theory from
``slr population`` (quadrature or closed form), with Monte Carlo markers — the risk *at the optimal
parameters* the theory returns, re-estimated on fresh projection draws of the §3.6 sampler
(:func:`attnlimits.verify.slr.estimators.projection_risk`, an independent PyTorch sampler and estimator),
and the Bayes risk by :func:`attnlimits.verify.slr.bayes_mc.bayes_mc` — each with ± 1 SE, and a residual
axis in SE.  Where the optimum is a limit (softmax and ``softplus_norm`` at max-SLR ν = ∞: m_k → ∞), the
curve is the limit value and the marker compares with the theory *at the parameters simulated* (m_k = 200,
the row's ``risk_at_bound``), both in the CSV.

Finite-sample panels (§10–§12): :func:`finite_panel` draws, for one data setting, the tuned-λ equilibrium
replica curve of each activation (flagged points apart: :mod:`attnlimits.verify.flags`), ERM markers at
the tuned λ, the Bayes-optimal curve and the population optimum.  ``--full`` runs ERM at the paper's size
√(ND) = 10⁴ as one task per (activation, α, seed) on the sweep machinery (:mod:`attnlimits.verify.sweep`):
each finished task goes at once to a Parquet table in ``OUT/NAME-erm/``, a rerun skips the finished ones.
"""
from __future__ import annotations

import math
import time

import numpy as np

from .drawing import COLORS, axes, run_command

__all__ = ["POPULATION_ACTS", "population_mc", "population_panel", "varlen_panel", "finite_panel",
           "FINITE_SETTINGS", "full_size", "full_task_seconds", "erm_grid_text", "theory_rows", "draw_theory",
           "risk_nu", "risk_L", "risk_L_max", "varlen", "finite_alpha", "finite_alpha_spiked_nu1_L3",
           "finite_alpha_spiked_nu2_L3", "finite_alpha_max_L3"]

#: The activations of the population panels (spec §4; the paper's four families, both linear forms).
POPULATION_ACTS = ("softmax", "linear_uncentred", "linear_centred", "erf_learned", "softplus_norm")
#: Fresh projection draws per Monte Carlo marker.
MC_DRAWS = {"quick": 200_000, "full": 1_000_000}


def _extra_of(rec: dict):
    """The extra scalar at a population optimum (erf's c, softplus's b), or None."""
    arg = rec.get("argmin") or {}
    for key in ("c", "b"):
        if key in arg and arg[key] is not None:
            return float(arg[key])
    return None


def _law_of(rec: dict):
    """The length (int) or length law ({L: prob}) of a ``slr population`` row."""
    law = {int(k): float(v) for k, v in (rec["L"].items() if isinstance(rec["L"], dict) else [(rec["L"], 1.0)])}
    return next(iter(law)) if len(law) == 1 else law


def population_mc(rec: dict, *, n: int, seed: int, device: str = "auto") -> tuple[float, float, float]:
    """Monte Carlo of the risk at the optimal parameters of ``slr population`` row ``rec``.

    The on-manifold risk 1 − 2m_vA + q_vB (spec §6.2) at the row's ``argmin`` (m_k, q_k, m_v, q_v and the
    extra scalar) on ``n`` fresh projection draws with master seed ``seed``
    (:func:`attnlimits.verify.slr.estimators.projection_risk`, 20 batches).  Returns ``(mean, se,
    theory)``: ``theory`` is the population risk *at those parameters* — the row's ``risk``, or, when the
    optimum is a limit (``limit``), its ``risk_at_bound`` (the risk at the bound the parameters sit on)."""
    from attnlimits.verify.slr.estimators import projection_risk

    a = rec["argmin"]
    est = projection_risk(rec["activation"], a["m_k"], a["q_k"], a["m_v"], a["q_v"], model=rec["model"],
                          nu=float(rec["nu"]), L=_law_of(rec), n=n, generator=int(seed), extra=_extra_of(rec),
                          device=device)
    theory = float(rec["risk_at_bound"]) if rec.get("limit") and rec.get("risk_at_bound") is not None \
        else float(rec["risk"])
    return float(est.mean), float(est.se), theory


def _bayes_mc(model, nu, L, *, n, seed, device):
    from attnlimits.verify.slr.bayes_mc import bayes_mc

    est = bayes_mc(model, float(nu), L, n, int(seed), device=device)["bayes_risk"]
    return float(est.mean), float(est.se)


def _z(m, s, t):
    return (m - t) / s if s > 0 and math.isfinite(s) else float("nan")


def _mc_seed(seed: int, *index: int) -> int:
    """An explicit seed per marker: the master seed and the marker's position, mixed."""
    return int(np.random.SeedSequence([int(seed), *map(int, index)]).generate_state(1)[0])


def population_panel(name, *, xs, x, model, nu, L, mode, seed, device, title, xlabel, logx, acts=POPULATION_ACTS):
    """A population panel against ``x`` (``"nu"`` or ``"L"``): theory curves of ``acts`` and the Bayes risk,
    Monte Carlo markers at the optimal parameters (and of the Bayes risk), residuals in SE.
    Returns ``(fig, ax, rows, note)``."""
    from attnlimits.verify.flags import measured_points

    n = MC_DRAWS[mode]
    fig, ax, rax = axes(title, xlabel, "optimal population risk (excess)", logx=logx, residual=True)
    rows, curves, bayes, sims = [], {a: [] for a in acts}, [], {a: [] for a in list(acts) + ["bayes"]}
    fixed = {"model": model, "nu": nu, "L": L}
    nu_txt = "inf" if isinstance(nu, float) and math.isinf(nu) else nu
    for i, xv in enumerate(xs):
        kw = {"model": model, "nu": nu_txt if x != "nu" else xv, "L": [L] if x != "L" else [int(xv)],
              "activation": list(acts)}
        recs = run_command("slr", "population", **kw)
        base = {k: v for k, v in fixed.items() if k != x}
        for j, r in enumerate(recs):
            act = r["activation"]
            curves[act].append(float(r["risk"]))
            rows.append({"panel": name, "curve": act, "kind": "theory", x: float(xv), "risk": float(r["risk"]),
                         "risk_error": r.get("risk_error"), "limit": bool(r.get("limit")),
                         "risk_at_bound": r.get("risk_at_bound"), "flag": "", **base})
            s = _mc_seed(seed, i, j)
            m, se, th = population_mc(r, n=n, seed=s, device=device)
            sims[act].append((float(xv), m, se, th))
            rows.append({"panel": name, "curve": act, "kind": "simulation", x: float(xv), "risk": m, "risk_se": se,
                         "theory": th, "z": _z(m, se, th), "draws": n, "seed": s,
                         "parameters": "argmin" + (" (m_k at its bound: limit)" if r.get("limit") else ""), **base})
        eb = float(recs[0]["bayes_risk"])
        bayes.append(eb)
        rows.append({"panel": name, "curve": "bayes", "kind": "theory", x: float(xv), "risk": eb,
                     "risk_error": recs[0].get("bayes_error"), "flag": "", **base})
        s = _mc_seed(seed, i, len(acts))
        Lv = int(xv) if x == "L" else L
        m, se = _bayes_mc(model, float(xv) if x == "nu" else float(nu), Lv, n=n, seed=s, device=device)
        sims["bayes"].append((float(xv), m, se, eb))
        rows.append({"panel": name, "curve": "bayes", "kind": "simulation", x: float(xv), "risk": m, "risk_se": se,
                     "theory": eb, "z": _z(m, se, eb), "draws": n, "seed": s, **base})
    colors = COLORS
    for a in acts:
        ax.plot(xs, curves[a], "-", lw=1.5, color=colors[a], label=f"{a} (theory)")
    ax.plot(xs, bayes, "--", color="k", lw=1.4, label="Bayes risk (theory)")
    for a in list(acts) + ["bayes"]:
        pts = sims[a]
        xx, mm, ss, tt = (list(c) for c in zip(*pts))
        measured_points(ax, xx, mm, ss, color=colors.get(a, "k"), marker="s" if a == "bayes" else "o", ms=3.5,
                        capsize=2, label=("Bayes risk (MC)" if a == "bayes" else None))
        rax.plot(xx, [_z(m, s, t) for m, s, t in zip(mm, ss, tt)], "s" if a == "bayes" else "o", ms=3.5,
                 color=colors.get(a, "k"))
    ax.plot([], [], "o", color="0.4", ms=3.5, label="MC at the optimal parameters ± SE")
    fixed_txt = ", ".join(f"{'ν' if k == 'nu' else k} = {_nu_txt(v) if isinstance(v, float) else v}"
                          for k, v in fixed.items() if k not in (x, "model"))
    limits = sorted({r["curve"] for r in rows if r.get("limit")})
    note = (f"{model}-SLR, {fixed_txt}; lines: optimal population risk (quadrature / closed form, error ≤ 1e-4); "
            f"markers: the risk at the theory's optimal parameters on {n:,} fresh projection draws (seeded from "
            f"{seed}), and the Bayes risk by MC, ± 1 SE; lower panel (MC − theory at the same parameters)/SE")
    if limits:
        note += (f"; {', '.join(limits)}: the optimum is a limit (m_k → ∞); the line is the limit, the marker sits "
                 f"at m_k = 200 and is compared with the theory there (CSV risk_at_bound)")
    return fig, ax, rows, note


def varlen_panel(name, *, model, nu, law, mode, seed, device, title, acts=POPULATION_ACTS):
    """The variable-length panel: for each activation, the optimal risk with one parameter pair shared by
    every length of ``law`` (bars), the per-length tuned average (a lower bound, hatched bars), the risks at
    each fixed length, and the Monte Carlo risk at the shared optimum (markers ± SE, residuals in SE)."""
    from attnlimits.verify.flags import measured_points

    n = MC_DRAWS[mode]
    lengths = sorted(law)
    fig, ax, rax = axes(title, "activation", "optimal population risk (excess)", residual=True)
    nu_txt = "inf" if isinstance(nu, float) and math.isinf(nu) else nu
    recs = run_command("slr", "population", model=model, nu=nu_txt, L=lengths, activation=list(acts), per_length=True)
    rows, xs, ms, ss, zs = [], [], [], [], []
    width = 0.38
    law_txt = "U{" + ",".join(map(str, lengths)) + "}"
    for j, r in enumerate(recs):
        act = r["activation"]
        shared, per = float(r["risk"]), float(r["per_length"]["average"])
        c = COLORS[act]
        if j == 0:  # grey legend proxies: the colour is the activation's, the fill says which optimum
            ax.bar([], [], color="0.55", alpha=0.75, label=f"shared (k, v), L ~ {law_txt}")
            ax.bar([], [], color="white", edgecolor="0.4", hatch="///", label="per-length tuned (average)")
        ax.bar(j - width / 2, shared, width, color=c, alpha=0.75)
        ax.bar(j + width / 2, per, width, color="white", edgecolor=c, hatch="///")
        rows.append({"panel": name, "curve": act, "kind": "theory", "setting": "shared", "risk": shared,
                     "risk_error": r.get("risk_error"), "limit": bool(r.get("limit")),
                     "risk_at_bound": r.get("risk_at_bound"), "model": model, "nu": nu, "L": law_txt, "flag": ""})
        rows.append({"panel": name, "curve": act, "kind": "theory", "setting": "per-length average", "risk": per,
                     "model": model, "nu": nu, "L": law_txt, "flag": ""})
        for Lv, v in r["per_length"]["risks"].items():
            rows.append({"panel": name, "curve": act, "kind": "theory", "setting": f"L = {Lv}", "risk": float(v),
                         "model": model, "nu": nu, "L": int(Lv), "flag": ""})
        s = _mc_seed(seed, j)
        m, se, th = population_mc(r, n=n, seed=s, device=device)
        rows.append({"panel": name, "curve": act, "kind": "simulation", "setting": "shared", "risk": m, "risk_se": se,
                     "theory": th, "z": _z(m, se, th), "draws": n, "seed": s, "model": model, "nu": nu, "L": law_txt})
        xs.append(j - width / 2), ms.append(m), ss.append(se), zs.append(_z(m, se, th))
        measured_points(ax, [j - width / 2], [m], [se], color="k", ms=3.5, capsize=2,
                        label="MC at the shared optimum ± SE" if j == 0 else None)
        rax.plot([j - width / 2], [zs[-1]], "o", ms=3.5, color=c)
    s = _mc_seed(seed, len(recs))
    m, se = _bayes_mc(model, float(nu), {Lv: 1.0 / len(lengths) for Lv in lengths}, n=n, seed=s, device=device)
    eb = float(recs[0]["bayes_risk"])
    ax.axhline(eb, color="k", ls="--", lw=1.2, label=f"Bayes risk {eb:.3g}")
    rows.append({"panel": name, "curve": "bayes", "kind": "theory", "setting": "shared", "risk": eb, "model": model,
                 "nu": nu, "L": law_txt, "flag": ""})
    rows.append({"panel": name, "curve": "bayes", "kind": "simulation", "setting": "shared", "risk": m, "risk_se": se,
                 "theory": eb, "z": _z(m, se, eb), "draws": n, "seed": s, "model": model, "nu": nu, "L": law_txt})
    for a in (ax, rax):
        a.set_xticks(range(len(recs)))
    rax.set_xticklabels([r["activation"].replace("_", "\n", 1) for r in recs], fontsize=7)
    limits = [r["activation"] for r in recs if r.get("limit")]
    nu_s = "∞" if isinstance(nu, float) and math.isinf(nu) else f"{nu:g}"
    note = (f"{model}-SLR, ν = {nu_s}, L ~ {law_txt} (the spec's reference law, docs/slr.md §3.4); bars: optimal "
            f"risk with one (k, v) for every length, hatched: each length tuned apart, averaged (a lower bound); "
            f"the cost of sharing is the difference (claim C9); markers: the risk at the shared optimum on {n:,} "
            f"fresh projection draws per length (seeded from {seed}) ± 1 SE")
    if limits:
        note += f"; {', '.join(limits)}: optimum a limit (m_k → ∞), marker at m_k = 200 vs the theory there"
    return fig, ax, rows, note


# ---------------------------------------------------------------------------------------------
# finite-sample panels
# ---------------------------------------------------------------------------------------------
#: The finite-sample settings (docs/slr.md §15 C18, §16 Q3): name → (model, ν, L, activations).
FINITE_SETTINGS = {
    "slr-finite-alpha": ("spiked", 2.0, 2, ("softmax", "linear_uncentred")),
    "slr-finite-alpha-spiked-nu1-L3": ("spiked", 1.0, 3, ("softmax", "linear_uncentred")),
    "slr-finite-alpha-spiked-nu2-L3": ("spiked", 2.0, 3, ("softmax", "linear_uncentred")),
    "slr-finite-alpha-max-L3": ("max", math.inf, 3, ("softmax", "linear_uncentred")),
}
#: Residual axis of the finite-sample panels: (ERM − theory)/SE beyond ±ZCLIP is drawn at the edge.
ZCLIP = 8.0
#: √(ND) of the paper's finite-sample figure (docs/slr.md §12).
PAPER_SQRT_ND = 10_000


def full_size(alpha: float, sqrt_nd: int = PAPER_SQRT_ND) -> int:
    """D at the paper's size √(ND) = ``sqrt_nd``: D = √(ND)/√α (so N = αD = √(ND)·√α)."""
    return max(2, int(round(sqrt_nd / math.sqrt(alpha))))


#: Measured cost of one L-BFGS ERM task (one seed, float64, one CPU core), as seconds per N·L·D of one
#: objective evaluation and evaluations per task: softmax, spiked ν = 2, L = 2, α = 4 at √(ND) = 10⁴ (D = 5000,
#: N = 20000) took 69 s of CPU (111 evaluations with data and test draws included, 3.5 GB resident); see
#: docs/figures.md.
TASK_SECONDS_PER_NLD = 3.0e-9
TASK_EVALUATIONS = 120


def full_task_seconds(alpha: float, L: int, sqrt_nd: int = PAPER_SQRT_ND, D: int | None = None) -> float:
    """Estimated seconds of one ERM task at √(ND) = ``sqrt_nd`` (or at dimension ``D``) on one CPU core
    (N·L·D per evaluation)."""
    D = full_size(alpha, sqrt_nd) if D is None else int(D)
    N = int(alpha * D)
    return TASK_SECONDS_PER_NLD * N * L * D * TASK_EVALUATIONS


#: Code version pinned in the keys of the ``--full`` ERM tasks (:mod:`attnlimits.verify.sweep.grid`): the
#: table's finished tasks are reused by a rerun as long as the training protocol is unchanged; bump it when
#: :func:`attnlimits.verify.slr.train.train_erm` changes what a task computes.
ERM_TASK_VERSION = "slr-train-erm-1"
#: Sizes: quick (in-process training, minutes on two cores) and full (the paper's √(ND), one task per seed).
FINITE_SIZES = {"quick": {"D": 200, "seeds": 2, "points": 1024, "n_test": 10_000},
                "full": {"sqrt_nd": PAPER_SQRT_ND, "seeds": 8, "points": 4096, "n_test": 20_000}}


def _nu_txt(nu) -> str:
    return "∞" if math.isinf(float(nu)) else f"{float(nu):g}"


def _stored_lambda(act, model, nu, L, alpha):
    """λ* of the stored RS tunings (:data:`attnlimits.verify.slr.claims.finite.RS_TUNED`), or None."""
    from attnlimits.verify.slr.claims.finite import RS_TUNED

    e = RS_TUNED.get((act, model, float(nu), int(L), float(alpha)))
    return None if e is None else float(e["lam"])


def _tuned_theory(name, act, model, nu, L, dense, points, progress):
    """The tuned-λ replica rows of ``act`` on ``dense``: λ* from the stored tunings where every α has one (the
    informed-branch fixed point solved now at that λ*, the branch the stored tuning chose on; seconds per α),
    else tuned live on the equilibrium branches (``slr replica --lam tune``; minutes per α at L = 3)."""
    nu_arg = "inf" if math.isinf(float(nu)) else float(nu)
    stored = [_stored_lambda(act, model, nu, L, a) for a in dense]
    if all(s is not None for s in stored):
        rows = []
        for a, lam in zip(dense, stored):
            rows += run_command("slr", "replica", model=model, nu=nu_arg, L=[L], activation=[act], alpha=[a],
                           lam=[repr(lam)], delta=0.1, points=points, branches="informed")
        return rows, ("stored λ* (9-point grid 1e-3…10 on the informed branch, tools/regen_rs_tuned.py), the "
                      "informed-branch fixed point solved now at λ* (as the quick claims C15b, C15c, C18)")
    return (run_command("slr", "replica", model=model, nu=nu_arg, L=[L], activation=[act], alpha=list(dense), lam=["tune"],
                   delta=0.1, points=points), "λ tuned live (log grid 1e-3…10 + refinement)")


def _cached_theory(out, name, act, model, nu, L, dense, points, progress):
    """:func:`_tuned_theory` kept in ``out/NAME-theory/`` (``--full``): the live λ tuning is the longest part before
    training, so a stopped run that is started again reads it back instead of tuning again.  Keyed by the
    setting, the α grid, the rule and :data:`ERM_TASK_VERSION`; written atomically."""
    import hashlib
    import json

    from attnlimits.symbolic.files import atomic_write

    key = json.dumps([name, act, model, float(nu), int(L), [float(a) for a in dense], int(points), ERM_TASK_VERSION])
    path = out / f"{name}-theory" / f"{act}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"
    if path.is_file():
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            if saved.get("key") == key:
                if progress:
                    progress(f"  {act}: tuned theory read back from {path}")
                return saved["rows"], saved["source"]
        except (OSError, ValueError, KeyError):
            pass  # unreadable: tune again and replace it
    rows, source = _tuned_theory(name, act, model, nu, L, dense, points, progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"key": key, "source": source, "rows": rows}, default=lambda v: v.item()
                      if hasattr(v, "item") else str(v))

    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
    atomic_write(path, write)
    return rows, source


def _erm_quick(act, model, nu, L, alpha, lam, size, seed, device):
    from attnlimits.verify.slr.train import train_erm

    res = train_erm(act, model=model, nu=float(nu), L=L, alpha=alpha, lam=lam, D=size["D"], seeds=size["seeds"],
                    seed=seed, delta=0.1, device=device, n_test=size["n_test"])
    return [dict(s) for s in res.seeds], size["D"]


def erm_grid_text(name, model, nu, L, tasks, *, n_test, device) -> str:
    """The sweep grid (TOML, :mod:`attnlimits.verify.sweep.grid`) of the ``--full`` ERM tasks: one point per
    (activation, α, λ, D, seed) of ``tasks``, zipped, each one seed of ``slr train`` (informed start)."""
    def lst(vals, quote=False):
        return "[" + ", ".join((f'"{v}"' if quote else repr(v)) for v in vals) + "]"

    nu_t = "inf" if math.isinf(float(nu)) else repr(float(nu))
    return "\n".join([
        f"# {name} --full: ERM at the paper's size, one task per (activation, alpha, seed)",
        'command = "slr train"', 'mode = "zip"', f'code_version = "{ERM_TASK_VERSION}"', "[fixed]",
        f'model = "{model}"', f"nu = {nu_t}", f"L = {int(L)}", "delta = 0.1", "seeds = 1", f"n_test = {int(n_test)}",
        f'device = "{device}"', 'theory = "none"', "[axes]",
        f"activation = {lst([t[0] for t in tasks], quote=True)}", f"alpha = {lst([float(t[1]) for t in tasks])}",
        f"lam = {lst([repr(float(t[2])) for t in tasks], quote=True)}", f"D = {lst([int(t[3]) for t in tasks])}",
        f"seed = {lst([int(t[4]) for t in tasks])}", ""])


def _erm_full(name, out, model, nu, L, tasks, *, n_test, device, workers, progress):
    """Run the ERM tasks on the sweep machinery (Dask; the Parquet table ``out/NAME-erm/`` makes a rerun skip
    finished tasks) after printing the plan and an estimate; return the finished seed rows by task."""
    from attnlimits.verify.sweep.grid import parse_grid
    from attnlimits.verify.sweep.runner import run_sweep
    from attnlimits.verify.sweep.table import ResultsTable

    grid = parse_grid(erm_grid_text(name, model, nu, L, tasks, n_test=n_test, device=device), source=f"{name} --full")
    folder = out / f"{name}-erm"
    table = ResultsTable(folder)
    done = set(table.statuses()) if (folder / "parts").exists() else set()
    todo = [t for t, k in zip(tasks, grid.keys) if k not in done]
    est = sum(full_task_seconds(t[1], L, D=t[3]) for t in todo)
    nw = max(1, workers or 1)
    say = progress or (lambda m: None)
    say(f"{name} --full: {len(tasks)} ERM tasks (activation × α × seed), {len(tasks) - len(todo)} already in "
        f"{folder}, {len(todo)} to run; estimate {est / 3600:.2f} CPU-hours ({est / nw / 3600:.2f} h on {nw} "
        f"worker(s); measured cost model docs/figures.md), device {device}")
    if todo:
        summary = run_sweep(grid, folder, workers=workers)
        say(summary.line())
        if summary.failed:
            for pt, err in summary.errors[:3]:
                say(f"  failed: {pt}: {err}")
    by_task = {}
    for r in table.rows():
        if r.get("status") != "ok" or r.get("row") != "seed":
            continue
        by_task.setdefault((r["activation"], float(r["alpha"])), []).append(r)
    return by_task


def finite_panel(name, out, mode, seed, device, *, seeds=None, alphas=None, workers=None, progress=None):
    """A finite-sample panel: test error against α for the setting :data:`FINITE_SETTINGS` ``[name]``.

    Tuned-λ equilibrium replica curve of each activation (flagged points drawn apart), ERM at the tuned λ
    (quick: in process, D = 200; full: √(ND) = 10⁴, one Dask task per (activation, α, seed), resumable),
    the Bayes-optimal curve (state evolution) and each activation's population optimum.
    Returns ``(fig, ax, rows, note)``."""
    from attnlimits.numeric.slr.rs_command import theory_flag
    from attnlimits.verify.flags import caption, measured_points, summary_flag, theory_line
    from attnlimits.verify.slr.bayes_optimal import bo_state_evolution

    model, nu, L, acts = FINITE_SETTINGS[name]
    size = dict(FINITE_SIZES[mode])
    t0 = time.perf_counter()

    def say(msg):
        if progress:
            progress(f"  [{time.perf_counter() - t0:6.0f} s] {msg}")
    if seeds:
        size["seeds"] = int(seeds)
    base_alphas = [1.0, 2.0, 4.0, 10.0, 20.0]
    erm_alphas = [float(a) for a in (alphas or base_alphas)]
    if name == "slr-finite-alpha":
        dense = list(np.round(np.logspace(0, math.log10(20), 12), 4))
    else:  # L = 3: one tuning costs minutes; quick uses the stored λ* at the ERM α
        dense = sorted(set(erm_alphas)) if mode == "quick" else sorted(set(erm_alphas) | {1.5, 3.0, 6.0, 15.0})
    if mode == "full":
        n_tasks = len(acts) * len(erm_alphas) * size["seeds"]
        cpu = len(acts) * size["seeds"] * sum(full_task_seconds(a, L, size["sqrt_nd"]) for a in erm_alphas)
        msg = (f"{name} --full: first the RS λ tuning on {len(dense)} α for {len(acts)} activations (the longest part "
               f"before training: minutes per α), then {n_tasks} ERM tasks at √(ND) = {size['sqrt_nd']:g} "
               f"(about {cpu / 3600:.1f} CPU-hours, {len(acts)} activations × {len(erm_alphas)} α × {size['seeds']} "
               f"seeds; tasks already in {name}-erm/ are skipped)")
        (progress or print)(msg)
    setting = f"{model}-SLR, ν = {_nu_txt(nu)}, L = {L}, Δ = 0.1"
    fig, ax, rax = axes(f"Test error vs α, {setting} (arXiv:2509.21936)", "sample ratio α = N/D",
                          "test error E_test (excess)", logx=True, residual=True)
    fixed = {"model": model, "nu": nu, "L": L, "delta": 0.1}
    rows, lam_sources, th_at, lam_of = [], {}, {}, {}
    for act in acts:
        say(f"{act}: replica theory at tuned λ on {len(dense)} α")
        theory = _cached_theory if mode == "full" else (lambda _out, *a: _tuned_theory(*a))
        tuned, lam_sources[act] = theory(out, name, act, model, nu, L, dense, size["points"], progress)
        th_rows = theory_rows(name, act, tuned, **fixed)
        draw_theory(ax, th_rows, color=COLORS[act], label=f"{act}: replica theory, λ tuned")
        rows += th_rows
        lam_at = {float(r["alpha"]): float(r["lam"]) for r in tuned}
        for a in erm_alphas:
            if a in lam_at:
                lam_of[(act, a)] = lam_at[a]
                th_at[(act, a)] = next(r for r in tuned if float(r["alpha"]) == a)
            else:  # between tuned points: λ interpolated in log α, the theory solved at that λ
                keys = sorted(lam_at)
                lam = float(np.interp(math.log(a), [math.log(v) for v in keys], [lam_at[v] for v in keys]))
                lam_of[(act, a)] = lam
                th_at[(act, a)] = run_command("slr", "replica", model=model, nu="inf" if math.isinf(nu) else nu, L=[L],
                                         activation=[act], alpha=[a], lam=[repr(lam)], delta=0.1,
                                         points=size["points"])[0]
    # ERM: quick in process; full on the sweep machinery, one task per (activation, α, seed)
    if mode == "full":
        tasks = [(act, a, lam_of[(act, a)], full_size(a, size["sqrt_nd"]), seed + s)
                 for act in acts for a in erm_alphas for s in range(size["seeds"])]
        by_task = _erm_full(name, out, model, nu, L, tasks, n_test=size["n_test"], device=device, workers=workers,
                            progress=progress)
    clipped = []
    for act in acts:
        xs, ms, ses, zs, th_flags, erm_flags = [], [], [], [], [], []
        for a in erm_alphas:
            lam, th = lam_of[(act, a)], th_at[(act, a)]
            if mode == "full":
                seed_rows = by_task.get((act, a), [])
                D = full_size(a, size["sqrt_nd"])
                if not seed_rows:
                    continue
            else:
                say(f"{act}: ERM α={a:g}, λ={lam:.3g}, D={size['D']}, {size['seeds']} seeds")
                seed_rows, D = _erm_quick(act, model, nu, L, a, lam, size, seed, device)
            errs = np.array([float(s["E_test"]) for s in seed_rows if s.get("E_test") is not None])
            m = float(errs.mean())
            se = float(errs.std(ddof=1) / math.sqrt(len(errs))) if len(errs) > 1 else float("nan")
            xs.append(a), ms.append(m), ses.append(se)
            zs.append((m - float(th["E_test"])) / se if se > 0 else float("nan"))
            th_flags.append(th["flag"] if "flag" in th else theory_flag(th))
            erm_flags.append(summary_flag(s.get("flag") for s in seed_rows))
            eo = [float(s["E_test_overlaps"]) for s in seed_rows if s.get("E_test_overlaps") is not None]
            rows.append({"panel": name, "curve": act, "kind": "ERM", "alpha": a, "E_test": m, "E_test_se": se,
                         "E_test_overlaps": float(np.mean(eo)) if eo else float("nan"),
                         "E_test_overlaps_se": float(np.std(eo, ddof=1) / math.sqrt(len(eo))) if len(eo) > 1
                         else float("nan"),
                         "theory": float(th["E_test"]), "theory_flag": th_flags[-1], "lam": lam, "D": D,
                         "N": int(a * D), "seeds": len(errs), "seed": seed, "flag": erm_flags[-1],
                         "seeds_flagged": sum(bool(s.get("flag")) for s in seed_rows), **fixed})
        if xs:
            measured_points(ax, xs, ms, ses, erm_flags, color=COLORS[act], capsize=2,
                            label=f"{act}: ERM" + (f", D = {size['D']}" if mode == "quick" else ", √(ND) = 10⁴"))
            # an SE from a few seeds can be tiny: residuals beyond ±ZCLIP are drawn at the edge as triangles
            zc = [max(-ZCLIP, min(ZCLIP, z)) if math.isfinite(z) else z for z in zs]
            theory_line(rax, xs, zc, th_flags, color=COLORS[act], ls="none", marker="o")
            for x, z in zip(xs, zs):
                if math.isfinite(z) and abs(z) > ZCLIP:
                    rax.plot([x], [math.copysign(ZCLIP, z)], "^" if z > 0 else "v", ms=7, color=COLORS[act])
                    clipped.append(f"{act} α={x:g}: {z:+.0f} SE")
    # max-SLR at L ≥ 3 smooths the key by an L-dimensional Gauss–Hermite rule: a lighter rule at quick size
    say(f"Bayes-optimal state evolution on {len(dense)} α")
    light = {"points": 2 ** 11, "replicates": 4, "inner_points": 12, "test_points": 2 ** 13}
    bo = bo_state_evolution(model, float(nu), L, dense, 0.1,
                            **(light if model == "max" and L >= 3 and mode == "quick" else {}))
    ax.plot(dense, [float(b.E_BO) for b in bo], "--", color="k", lw=1.4, label="Bayes-optimal (state evolution)")
    rows += [{"panel": name, "curve": "BO", "kind": "theory", "alpha": a, "E_test": float(b.E_BO), **fixed}
             for a, b in zip(dense, bo)]
    for act in acts:
        pop = run_command("slr", "population", model=model, nu="inf" if math.isinf(nu) else nu, L=[L], activation=[act])[0]
        ax.axhline(float(pop["risk"]), color=COLORS[act], ls=":", lw=1.2, label=f"{act} population optimum (α → ∞)")
        rows.append({"panel": name, "curve": f"population {act}", "kind": "theory", "alpha": float("inf"),
                     "E_test": float(pop["risk"]), **fixed})
    if mode == "quick":
        erm_txt = f"ERM: D = {size['D']}, {size['seeds']} seeds from {seed}"
    else:
        erm_txt = (f"ERM: √(ND) = {size['sqrt_nd']:g} (D = √(ND)/√α), up to {size['seeds']} seeds from {seed}, one "
                   f"task each (table {name}-erm/)")
    note = (f"{erm_txt}, L-BFGS from the informed start at the tuned λ of the theory; RS: {size['points']} Sobol "
            f"points, {'; '.join(sorted(set(lam_sources.values())))}; {mode} size (the paper: sqrt(N D) = 1e4); "
            f"Δ = 0.1 (the spec's default, §12), ν and L as the spec's finite-α settings (§15 C18)")
    if clipped:
        note += f"; residuals beyond ±{ZCLIP:g} SE drawn as triangles at the edge ({', '.join(clipped)}; SE over " \
                f"{size['seeds']} seeds)"
    said = caption([r.get("flag") for r in rows] + [r.get("theory_flag") for r in rows])
    note += f"; {said}" if said else ""
    return fig, ax, rows, note


# ---------------------------------------------------------------------------------------------
# the panels as the manifest declares them
# ---------------------------------------------------------------------------------------------
def risk_nu(out, mode, seed, device):
    """Optimal population risks and the Bayes risk against ν (spiked, L = 2), with Monte Carlo."""
    xs = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0] if mode == "quick" else list(np.round(np.logspace(-1, 1.3, 14), 4))
    return population_panel("slr-risk-nu", xs=xs, x="nu", model="spiked", nu=None, L=2, mode=mode, seed=seed,
                            device=device, title="Population risk vs spike strength ν, spiked SLR, L = 2 "
                            "(arXiv:2509.21936)", xlabel="spike strength ν", logx=True)


def risk_L(out, mode, seed, device):
    """The same against L (spiked, ν = 2)."""
    xs = [2, 3, 4, 6, 8] if mode == "quick" else [2, 3, 4, 5, 6, 8, 10, 12]
    return population_panel("slr-risk-L", xs=xs, x="L", model="spiked", nu=2.0, L=None, mode=mode, seed=seed,
                            device=device, title="Population risk vs sequence length L, spiked SLR, ν = 2 "
                            "(arXiv:2509.21936)", xlabel="sequence length L", logx=False)


def risk_L_max(out, mode, seed, device):
    """The same against L at max-SLR ν = ∞ (Bayes risk 0)."""
    xs = [2, 3, 4, 5, 6, 8] if mode == "quick" else [2, 3, 4, 5, 6, 8, 10, 12, 16]
    return population_panel("slr-risk-L-max", xs=xs, x="L", model="max", nu=math.inf, L=None, mode=mode, seed=seed,
                            device=device, title="Population risk vs sequence length L, max-SLR, ν = ∞ "
                            "(arXiv:2509.21936)", xlabel="sequence length L", logx=False)


def varlen(out, mode, seed, device):
    """Variable length L ~ U{1,2,3} at max-SLR ν = ∞: shared against per-length optimum."""
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
    (:func:`attnlimits.verify.flags.theory_line`).  Returns the flagged α."""
    from attnlimits.verify.flags import theory_line

    rows = sorted(rows, key=lambda r: r["alpha"])
    bad = theory_line(ax, [r["alpha"] for r in rows], [r["E_test"] for r in rows], [r.get("flag") for r in rows],
                      color=color, label=label)
    return [r["alpha"] for r, b in zip(rows, bad) if b]


def finite_alpha(out, mode, seed, device, **options):
    """Test error against α, spiked ν = 2, L = 2 (:func:`finite_panel`)."""
    return finite_panel("slr-finite-alpha", out, mode, seed, device, **options)


def finite_alpha_spiked_nu1_L3(out, mode, seed, device, **options):
    """Test error against α, spiked ν = 1, L = 3 (:func:`finite_panel`)."""
    return finite_panel("slr-finite-alpha-spiked-nu1-L3", out, mode, seed, device, **options)


def finite_alpha_spiked_nu2_L3(out, mode, seed, device, **options):
    """Test error against α, spiked ν = 2, L = 3 (:func:`finite_panel`)."""
    return finite_panel("slr-finite-alpha-spiked-nu2-L3", out, mode, seed, device, **options)


def finite_alpha_max_L3(out, mode, seed, device, **options):
    """Test error against α, max-SLR ν = ∞, L = 3 (:func:`finite_panel`)."""
    return finite_panel("slr-finite-alpha-max-L3", out, mode, seed, device, **options)
