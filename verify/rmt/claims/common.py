"""What the claims of every section share: the theory engine (cached per context), Hermite data, theory
curves, the cached Monte Carlo with its seeds, the comparison checks (against the spec, against Monte Carlo,
extrapolated in n) and the plots."""
from __future__ import annotations

import math
import numpy as np

from attnlimits.verify.claims.base import Check, PlotSeries, PlotSpec

__all__ = ["PAPER", "SPEC", "SPEC_TOLERANCE", "ACTIVATIONS", "GAMMAS_3", "rmt_model", "hermite", "as_tuple",
           "theory_curve", "run_seed", "settings_key", "cached_mc", "p_for", "gamma_index", "spec_check", "dof_of",
           "mc_check", "extrapolated_check", "correction_plot", "dense_gammas", "gamma_plot", "mc_params", "source",
           "STRUCTURED_GAMMAS"]

PAPER = "arXiv:2506.18656"
SPEC = "docs/attention_rmt.md"
#: Tolerance of the theory tables of §11 (regression targets for ``numeric/``).
SPEC_TOLERANCE = 5e-4

#: Activations used by the claims: name → text understood by ``hermite_coefficients``.
ACTIVATIONS = {
    "tanh": "tanh",
    "relu": "relu",
    "sin": "sin",
    "cos": "cos",
    "sigmoid": "sigmoid",
    "erf": "erf",
    "identity": "identity",
    "abs": "abs",
    "he2": "he2",
    "0.6t+0.3He2": "0.6*t + 0.3*(t**2-1)/sqrt(2)",
    "0.6t+0.3He3": "0.6*t + 0.3*(t**3-3*t)/sqrt(6)",
}


GAMMAS_3 = (0.01, 0.1, 1.0)  #: the γ of T2/T3, V8–V12, V17, V20 and the mixed-geometry check


# =============================================================================================
# shared helpers: theory engine, Hermite data, Monte Carlo with caching
# =============================================================================================


def rmt_model(ctx, backend: str = "numpy"):
    """The generated solver of the result's model (``numpy`` or ``mpmath``), compiled once per context."""
    from attnlimits.derivations import attention_rmt as R
    from attnlimits.numeric import compile_model

    return ctx.cached(("theory", backend), lambda: compile_model(R.model, backend))


def hermite(ctx, act: str):
    """Hermite data of a named activation (:data:`ACTIVATIONS`), cached in ``ctx``."""
    from attnlimits.symbolic.hermite import hermite_coefficients

    return ctx.cached(("hermite", act), lambda: hermite_coefficients(ACTIVATIONS[act]))


def as_tuple(v):
    """A weight vector or matrix as nested tuples of floats (hashable: a cache key); ``None`` stays ``None``."""
    if v is None:
        return None
    return tuple(tuple(float(x) for x in row) if isinstance(row, (list, tuple)) else float(row) for row in v)


def theory_curve(ctx, act: str, c: float, gammas, *, snr: float = 0.0, wk=(), wq=(), L=None,
                 kappa: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(E_attention, E_ridge)`` of the engine along ``gammas`` (cached per argument set).

    ``wk``/``wq`` are coordinates in an orthonormal basis whose first vector is μ̂ (docs/attention_rmt.md §6);
    ``L`` an r×r block of a general ``W = I + L``; ``kappa`` the §4.3 diagonal constant.
    """
    key = ("curve", act, float(c), as_tuple(gammas), float(snr), as_tuple(wk), as_tuple(wq), as_tuple(L),
           float(kappa))

    def compute():
        h = hermite(ctx, act)
        recs = rmt_model(ctx).curve(float(c), [float(g) for g in gammas], a1=float(h.a1), nu=float(h.nu),
                               kappa=float(kappa), snr=float(snr), wk=[float(x) for x in wk],
                               wq=[float(x) for x in wq],
                               L=None if L is None else [[float(x) for x in row] for row in L],
                               error_estimate=False)
        return (np.array([r["E_attention"] for r in recs]), np.array([r["E_ridge"] for r in recs]))

    return ctx.cached(key, compute)


def run_seed(ctx, run: str, extra: int = 0) -> int:
    """The seed of one Monte Carlo run, derived from its name (runs shared by several claims share
    a name: "fig1c" for V2 and V15, "random-inputs" for V4–V7 and V14, "structured" for V8–V11, V17)."""
    return ctx.seed_for(run, *((extra,) if extra else ()))


def settings_key(settings: dict) -> tuple:
    """A weight-settings mapping as a hashable cache key."""
    return tuple((name, tuple(sorted((k, as_tuple(v)) for k, v in spec.items()))) for name, spec in settings.items())


def cached_mc(ctx, act: str, n: int, p: int, gammas, *, mu=None, settings=None, draws: int, seed: int,
        diagonal: str = "zero", estimator: str = "quadratic", ridge: bool = True):
    """:func:`attnlimits.verify.rmt.montecarlo.simulate_attention`, cached under all its arguments."""
    from attnlimits.verify.rmt.montecarlo import simulate_attention

    settings = {"w0": {}} if settings is None else settings
    key = ("mc", act, int(n), int(p), as_tuple(gammas), as_tuple(mu), settings_key(settings), int(draws),
           int(seed), diagonal, estimator, bool(ridge), str(ctx.device))

    def run():
        ctx.progress(f"    MC {act}: n={n} p={p} draws={draws} settings={list(settings)} "
                     f"diag={diagonal} est={estimator}")
        return simulate_attention(hermite(ctx, act).centred, int(n), int(p), list(gammas), mu=mu,
                                  settings=settings, draws=int(draws), seed=int(seed), diagonal=diagonal,
                                  ridge=ridge, estimator=estimator, device=ctx.device)

    return ctx.cached(key, run)


def p_for(c: float, n: int) -> int:
    """The dimension p = round(c·n)."""
    return int(round(c * n))


def gamma_index(gammas, g) -> int:
    """The index of ``g`` in ``gammas`` (equal to 1e-12 relative); :class:`KeyError` otherwise."""
    for i, x in enumerate(gammas):
        if math.isclose(float(x), float(g), rel_tol=1e-12):
            return i
    raise KeyError(g)


def spec_check(label: str, spec_value: float, engine_value: float, tol: float = SPEC_TOLERANCE,
          note: str = "") -> Check:
    """:meth:`Check.spec` with this result's quoted precision and page."""
    return Check.spec(label, spec_value, engine_value, tol,
                      note or "engine value vs the documented prediction (docs/attention_rmt.md)")


def dof_of(est):
    """Degrees of freedom of an :class:`MCEstimate`'s SE: ``draws − 1`` (``None`` without draws)."""
    n = int(getattr(est, "n_draws", 0) or 0)
    return n - 1 if n >= 2 else None


def mc_check(label: str, theory: float, est, i=None, band: float = 0.0, *, allowance: float = 0.0,
              kind: str = "abs", note: str = "") -> Check:
    """:meth:`Check.mc`; ``band`` is the ± of §12 for the quoted numbers: recorded in the note, not applied (MC is
    compared with the engine, not with a quoted number, so only its SE counts)."""
    if band:
        note = (note + "; " if note else "") + f"§12 band ±{band:g} of the quoted numbers not applied to MC"
    return Check.mc(label, theory, est, i, allowance=allowance, kind=kind, note=note)


def extrapolated_check(label: str, theories, ests, sizes, i=None, *, rate: float = 1.0, band: float = 0.0,
                        note: str = "", fits: list | None = None) -> Check:
    """MC − theory measured at two or more sizes ``sizes`` (``ests``: :class:`MCEstimate` per size,
    ``theories``: the engine's value per size — they differ when the theory uses a measured κ̂),
    extrapolated to n → ∞ as ``d(n) = d∞ + a n^(−rate)``; the check compares ``theory + d∞`` with the
    theory at the largest size within the propagated SE (Welch–Satterthwaite degrees of freedom)."""
    from attnlimits.verify.comparison import extrapolate

    pick = (lambda a: float(np.asarray(a))) if i is None else (lambda a: float(np.asarray(a)[i]))
    d = [pick(e.mean) - float(t) for e, t in zip(ests, theories)]
    ses = [pick(e.se) for e in ests]
    x = extrapolate(list(sizes), d, ses, rate=rate, dofs=[dof_of(e) for e in ests])
    corr = ", ".join(f"n={int(n)}: {pick(e.mean) - float(t):+.2e} ± {s:.1e}"
                     for n, e, t, s in zip(sizes, ests, theories, ses))
    text = (f"MC − theory {corr}; extrapolated at rate n^-{rate:g}: {x.limit:+.2e} ± {x.se:.1e}, fitted "
            f"correction a/n^{rate:g} with a = {x.slope:.3g} ± {x.slope_se:.2g}")
    if x.chi2_dof:
        text += f", χ² = {x.chi2:.2f} on {x.chi2_dof} dof"
    if band:
        text += f"; §12 band ±{band:g} of the quoted numbers not applied to MC"
    th = float(theories[-1])
    if fits is not None:
        fits.append((label, x))
    return Check(label, theory=th, value=th + x.limit, se=x.se, dof=x.dof,
                 note=(note + "; " if note else "") + text)


def correction_plot(title: str, fits: list) -> PlotSpec:
    """MC − theory against n^(−rate) at each size, with the fitted line d∞ + a n^(−rate) down to n = ∞
    (x = 0): the measured finite-size correction of the extrapolated checks."""
    series = []
    for k, (label, x) in enumerate(fits):
        xs = [float(n) ** (-x.rate) for n in x.sizes]
        grid = [0.0, max(xs) * 1.1]
        series.append(PlotSeries(f"{label}: MC − theory", xs, list(x.values), yerr=list(x.ses), kind="points",
                                 group=str(k)))
        series.append(PlotSeries(f"fit, a = {x.slope:.3g}", grid, [x.limit + x.slope * g for g in grid], kind="line",
                                 group=str(k)))
    rate = fits[0][1].rate if fits else 1.0
    return PlotSpec(title, f"n^-{rate:g}", "MC − theory", series, xscale="linear")


def dense_gammas(gammas, lo_cap=1e-5, hi_cap=1e4, num=36) -> list:
    """A log grid of ``num`` γ around ``gammas`` (a factor 3 beyond each end, within the caps), for theory lines."""
    lo = max(lo_cap, min(gammas) / 3)
    hi = min(hi_cap, max(gammas) * 3)
    return [float(x) for x in np.logspace(math.log10(lo), math.log10(hi), num)]


def gamma_plot(ctx, title: str, theory: list, points: list, ylabel: str = "interpolation error E(γ)",
                gammas=None) -> PlotSpec:
    """A γ plot: theory curves on a dense log grid plus MC points with SE error bars.

    ``theory``: tuples ``(label, act, c, kw, which)`` — ``kw`` goes to :func:`theory_curve`,
    ``which`` is ``"att"`` (attention) or ``"ridge"``; ``points``: ``(label, gammas, MCEstimate)``.
    """
    all_g = list(gammas or [g for _, gs, _ in points for g in gs])
    dense = dense_gammas(all_g)
    series = []
    for label, act, c, kw, which in theory:
        att, rr = theory_curve(ctx, act, c, dense, **kw)
        series.append(PlotSeries(label, dense, (rr if which == "ridge" else att).tolist(), kind="line"))
    for label, gs, est in points:
        series.append(PlotSeries(label, [float(g) for g in gs], np.asarray(est.mean).tolist(),
                                 yerr=np.asarray(est.se).tolist(), kind="points"))
    return PlotSpec(title=title, xlabel="gamma", ylabel=ylabel, series=series, xscale="log")


def mc_params(res, **extra) -> dict:
    """The parameters of a Monte Carlo run (its size, seed, device…) from its metadata, with ``extra``."""
    meta = res.meta
    out = {k: meta[k] for k in ("f", "n", "p", "c", "mu", "snr", "settings", "draws", "seed", "diagonal",
                                "estimator", "device") if k in meta}
    out.update(extra)
    return out


def source(extra: str, section: str) -> str:
    """A claim's source line: the paper's place ``extra`` and the docs page's ``section``."""
    return f"{PAPER} {extra}; {SPEC} {section}".replace(" ;", ";")


#: the γ of the structured-input claims (V8–V11, V17, one paired run) and of V12
STRUCTURED_GAMMAS = (1e-3, 1e-2, 1e-1, 1.0, 10.0)
