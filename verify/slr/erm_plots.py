r"""The learning-curve figure of ``attnlimits slr train --plot`` (docs/slr.md §12): ERM's test error against α per
activation, with the RS theory's equilibrium branch, the population optima, the Bayes risk and the finite-α
Bayes-optimal error; points that are not predictions (flags of :mod:`attnlimits.verify.flags`) drawn apart.

- :func:`plot_learning_curve` — the figure, from the rows of :func:`attnlimits.verify.slr.train.run_train`;
- :func:`rs_equilibrium_curve` — the RS curve (equilibrium branch, flags) from a branch search;
- :func:`bo_learning_curve` — :math:`E_{BO}(\alpha)` on a log grid;
- :func:`attach_rs` — the RS columns of the summary rows at the α of a curve.
"""
from __future__ import annotations

import math
import os
import sys
import textwrap
from typing import Mapping

import numpy as np

from attnlimits.numeric.slr.problem import LengthLaw
from attnlimits.symbolic.result import InputError
from attnlimits.verify.flags import caption, measured_points, theory_line

__all__ = ["attach_rs", "bo_learning_curve", "plot_learning_curve", "rs_equilibrium_curve"]


def _length_argument(law):
    """The length argument of the theory functions (an int, or a dict for a variable length) of law items."""
    return law[0][0] if len(law) == 1 else {Lv: p for Lv, p in law}


_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive")


def bo_learning_curve(model: str, nu: float, L, alphas, delta: float = 0.1, *, n_grid: int = 9,
                      points: int = 2 ** 11, replicates: int = 4):
    r"""The finite-α Bayes-optimal error :math:`E_{BO}(\alpha)` (docs/slr.md §11) on a log grid through ``alphas``.

    Calls :func:`attnlimits.verify.slr.bayes_optimal.bo_state_evolution` (free-entropy-selected fixed point)
    at the α of ``alphas`` and ``n_grid`` log-spaced α between their extremes, Sobol
    ``replicates × points`` (integration error about 10⁻⁴ on :math:`E_{BO}`, spiked :math:`L=2`, ν=2).

    Returns ``(alphas, E_BO, E_BO_se)`` (sorted), or raises :class:`attnlimits.symbolic.result.InputError`
    when the BO theory does not cover the setting and
    :class:`attnlimits.numeric.ConvergenceError` when a state evolution fails.
    """
    from attnlimits.verify.slr.bayes_optimal import bo_state_evolution

    a = sorted({float(x) for x in alphas})
    if len(a) > 1:
        a = sorted(set(a) | {float(x) for x in np.geomspace(a[0], a[-1], n_grid)})
    pts = bo_state_evolution(model, nu, L, a, delta, points=points, replicates=replicates)
    return [p.alpha for p in pts], [p.E_BO for p in pts], [p.E_BO_se for p in pts]


def rs_equilibrium_curve(found: Mapping) -> tuple:
    """The RS curve a learning-curve figure draws, from the branch search
    (:meth:`attnlimits.verify.slr.replica.RSProblem.all_branches`: ``{α: [(origin, RSFixedPoint, phase), …]}``):
    the equilibrium branch at each α, with the ``flag`` ``slr replica`` gives its row
    (:func:`attnlimits.numeric.slr.rs_command.theory_flag`: ``rsb``, ``unstable``, ``rough``, …; ``""`` for a
    prediction).  Returns ``(alphas, E_test, E_test_error, flags, fixed points)``, sorted by α; an α without an
    equilibrium branch is left out."""
    from attnlimits.numeric.slr.rs_command import theory_flag

    out = ([], [], [], [], [])
    for a in sorted(found):
        eq = [fp for _, fp, ph in found[a] if ph == "equilibrium"]
        if not eq:
            continue
        fp = eq[0]
        only_unstable = all(f.stability_damped >= 1 for _, f, _ in found[a])
        flag = theory_flag({**fp.as_row(), "only_unstable_fixed_points": only_unstable})
        for lst, v in zip(out, (float(fp.alpha), float(fp.E_test), float(fp.E_test_error), flag, fp)):
            lst.append(v)
    return out


def attach_rs(summ: list[dict], act: str, curve: tuple) -> None:
    """Summary rows of ``act`` at an α of the RS ``curve`` gain ``rs_E_test``, ``rs_E_test_error``, ``rs_flag``
    and (when the curve holds fixed points) ``rs_m_k`` … ``rs_q_v``."""
    alphas, E, SE = curve[:3]
    flags = curve[3] if len(curve) > 3 else [""] * len(alphas)
    fps = curve[4] if len(curve) > 4 else [None] * len(alphas)
    for r in (r for r in summ if r["activation"] == act):
        for a, e, se, fl, fp in zip(alphas, E, SE, flags, fps):
            if a == r["alpha"]:
                r["rs_E_test"], r["rs_E_test_error"], r["rs_flag"] = float(e), float(se), fl
                if fp is not None:
                    r.update({f"rs_{k}": float(fp.values[k]) for k in ("m_k", "q_k", "m_v", "q_v")})


def plot_learning_curve(rows: list[dict], path: str, *, theory=True, rs_curves: dict | None = None,
                        title: str | None = None, bayes_optimal: bool = True, bo_curve: tuple | None = None) -> str:
    r"""E_test against α per activation (docs/slr.md §12).

    ERM: summary rows (mean ± sd over seeds, points with error bars; a mean over seeds some of which stalled or
    did not converge — its ``flag`` — with an ``x`` marker and a legend entry); RS: ``rs_curves``
    ``{activation: (alphas, E, SE[, flags])}`` drawn as lines with a ±3 SE band (when ``theory`` and not given:
    the equilibrium branch of :meth:`attnlimits.verify.slr.replica.RSProblem.all_branches` on a dense α grid
    — about 6 per decade, through the ERM α — for activations trained at one λ, with its flags from
    :func:`rs_equilibrium_curve`).  The line and its label run through the unflagged points only; a point
    flagged ``rsb``, ``unstable``, ``rough``… is a hollow marker with a legend entry saying it is not a
    prediction (:mod:`attnlimits.verify.flags`), and a line on stderr says so.  The population optimum of
    each activation dashed in its colour; the Bayes risk (population) in black, dotted; the
    finite-α Bayes-optimal error :math:`E_{BO}(\alpha)` (docs/slr.md §11, :func:`bo_learning_curve`) in black,
    dash-dotted, when ``bayes_optimal`` (``bo_curve = (alphas, E, SE)`` given, or computed; spiked and
    max-SLR) — a setting the BO theory does not cover gets a note in the legend instead.  Summary rows
    that get an RS point gain ``rs_E_test``, ``rs_E_test_error``, ``rs_flag`` and ``rs_m_k`` … ``rs_q_v``; those
    at an α of the BO curve gain ``bo_E_test``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401

    summ = [r for r in rows if r.get("row") == "summary" and r.get("E_test") is not None]
    if not summ:
        raise InputError("no finished configuration to plot")
    first = summ[0]
    model, nu, Lname = first["model"], first["nu"], first["L"]
    acts = list(dict.fromkeys(r["activation"] for r in summ))
    fig, ax = plt.subplots(figsize=(7.0, 4.6), dpi=120)
    law = LengthLaw.parse(Lname if not isinstance(Lname, str) else [int(x) for x in Lname.strip("U{}").split(",")],
                          option="L").items
    all_alpha = sorted({r["alpha"] for r in summ})
    notes = []  # curves that could not be drawn: in the legend and one line each on stderr
    # the theory is cheap next to training: drawn on a dense α grid (about 6 per decade), through the ERM α too
    dense = sorted(set(all_alpha) | set(np.geomspace(all_alpha[0], all_alpha[-1], max(
        2, min(16, int(round(6 * math.log10(all_alpha[-1] / all_alpha[0]))) + 1))).round(6).tolist())) \
        if len(all_alpha) > 1 else list(all_alpha)
    if rs_curves is None and theory:
        rs_curves = {}
        try:
            from . import replica as rep

            for act in acts:
                lam_set = {r["lam"] for r in summ if r["activation"] == act}
                if len(lam_set) != 1:
                    notes.append(f"{act}: RS theory not drawn (trained at several λ: {sorted(lam_set)})")
                if len(lam_set) == 1:
                    # the equilibrium branch at each α (docs/slr.md §10.7), not whichever fixed point a
                    # continuation reaches: near the interpolation peak the two differ by a factor 10
                    found = rep.rs_problem(act, model, nu, _length_argument(law)).all_branches(dense, lam_set.pop(),
                                                                                        first.get("delta", 0.1))
                    rs_curves[act] = rs_equilibrium_curve(found)
        except (InputError, ImportError, ArithmeticError, RuntimeError) as exc:  # said on the figure
            notes.append(f"RS theory not drawn: {str(exc).splitlines()[0][:90]}")
    all_flags = []
    for j, act in enumerate(acts):
        col = _COLOURS[j % len(_COLOURS)]
        pts = sorted(((r["alpha"], r["E_test"], r.get("E_test_sd") or 0.0, r["lam"], r.get("flag") or "")
                      for r in summ if r["activation"] == act), key=lambda p: p[0])
        a = [p[0] for p in pts]
        lam_txt = ",".join(sorted({f"{p[3]:g}" for p in pts}))
        measured_points(ax, a, [p[1] for p in pts], [p[2] for p in pts], [p[4] for p in pts], color=col,
                        label=f"{act}: ERM (λ={lam_txt}, mean ± sd, {first.get('seeds', '')} seeds)")
        all_flags += [p[4] for p in pts]
        if rs_curves and act in rs_curves:
            curve = rs_curves[act]
            attach_rs(summ, act, curve)
            rflags = list(curve[3]) if len(curve) > 3 else None
            theory_line(ax, curve[0], curve[1], rflags, err=curve[2], band=3, color=col,
                        label=f"{act}: RS theory, equilibrium branch (band ±3 SE)")
            bad = [(x, f) for x, f in zip(curve[0], rflags or []) if f]
            if bad:
                all_flags += [f for _, f in bad]
                print(f"warning: slr train --plot: {act}: the RS equilibrium branch is flagged at α = "
                      + ", ".join(f"{x:g} ({f})" for x, f in bad) + ": drawn as hollow markers, not as the "
                      "prediction", file=sys.stderr)
        try:
            start = None
            from attnlimits.verify.slr.problem import slr_problem
            from attnlimits.verify.slr.theory import theory_of

            if act == "softmax":
                start = None
            else:
                start = theory_of(slr_problem(model, nu, {Lv: p for Lv, p in law},
                                              activation=act)).optimal_population_risk().risk
            if start is not None:
                ax.axhline(start, color=col, ls="--", lw=1.2, label=f"{act}: population optimum {start:.3f}")
        except (ValueError, ArithmeticError):
            pass
    if bayes_optimal:
        from attnlimits.numeric import ConvergenceError

        try:
            if bo_curve is None:
                bo_curve = bo_learning_curve(model, nu, _length_argument(law), dense, first.get("delta", 0.1))
            ba, be = (np.asarray(x, dtype=float) for x in bo_curve[:2])
            ax.plot(ba, be, "-.", color="black", lw=1.5, label=r"Bayes-optimal $E_{BO}(\alpha)$ (finite α, §11)")
            for r in summ:
                hit = np.isclose(ba, r["alpha"], rtol=1e-12)
                if hit.any():
                    r["bo_E_test"] = float(be[np.argmax(hit)])
        except (InputError, NotImplementedError, ConvergenceError, ArithmeticError) as exc:
            why = str(exc).splitlines()[0]
            why = why.split(": ", 1)[1] if why.startswith("--model") and ": " in why else why
            notes.append(f"Bayes-optimal E_BO(α) not drawn: {why[:70]}")
    try:
        from attnlimits.verify.slr.problem import slr_problem
        from attnlimits.verify.slr.theory import theory_of

        bayes = theory_of(slr_problem(model, nu, {Lv: p for Lv, p in law}))
        eb = float((bayes.bayes_risk() if len(law) == 1 else bayes.bayes_risk_varlen()).value)
        ax.axhline(eb, color="black", ls=":", lw=1.5, label=f"Bayes risk (population) {eb:.3f} = softmax optimum")
    except (ValueError, ArithmeticError, AttributeError):
        pass
    ax.set_xscale("log")
    ax.set_xticks(all_alpha)
    ax.set_xticklabels([f"{x:g}" for x in all_alpha])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel(r"sample ratio $\alpha = N/D$")
    ax.set_ylabel(r"test error $E_{\rm test}$ (excess)")
    nu_txt = "∞" if math.isinf(nu) else f"{nu:g}"
    ax.set_title(title or f"{model}-SLR, L={Lname}, ν={nu_txt}, D={first['D']}, Δ={first.get('delta', 0.1):g}, "
                          f"{first['optimizer']}", fontsize=10)
    ax.grid(alpha=0.3)
    for note in notes:
        ax.plot([], [], " ", label=note)
        print(f"warning: slr train --plot: {note}", file=sys.stderr)
    if caption(all_flags):  # what the hollow and x markers mean, under the legend
        ax.plot([], [], " ", label="\n".join(textwrap.wrap(caption(all_flags), 60)))
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)  # outside the data
    fig.set_size_inches(10.5, 4.6)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    from attnlimits.verify.outputs import save_figure

    save_figure(fig, path)  # atomic: a failing write leaves the previous file
    plt.close(fig)
    return path
