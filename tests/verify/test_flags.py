"""Flags travel with the number: a value flagged ``rsb``, ``unstable``, ``rough``, ``unconverged`` or a training
seed that stalled keeps its ``flag`` in the rows and is drawn apart in every figure (verify/flags.py).

The figures are tested on their data and artists (the drawn line's y values, the hollow markers, the legend
texts), not on pixels.  The RS side is given as fixed points built here, as ``slr replica`` gives them for
linear_uncentred, spiked L = 2, ν = 2, Δ = 0.1, λ = 0.1 at 4 × 1024 (seed 0): replicon 4.39 ± 1.65 and
8.09 ± 2.93 at α = 2 and 3 (``rsb``: replica symmetry broken), 0.855, 0.617, 0.376 at α = 4, 5, 8 (RS-stable;
there the solver's own ``flags`` say ``unstable`` for the *undamped* spectral radius, which is no reason).
The one test that solves RS for real is marked slow.
"""
import math

import numpy as np
import pytest

from attnlimits.verify import flags as F

RSB_LEGEND = "RS unstable (replicon ≥ 1): not a prediction"
#: (α, E_test, replicon, stability_damped, solver flags): measured, see the module docstring
LIN_LAM01 = [(2.0, 1.6531, 4.394, 0.818, ("rsb",)), (3.0, 4.3460, 8.090, 0.832, ("rsb",)),
             (4.0, 0.8438, 0.855, 0.741, ("unstable",)), (5.0, 0.6415, 0.617, 0.648, ("unstable",)),
             (8.0, 0.4870, 0.376, 0.741, ("unstable",))]


def _fp(alpha, E, rep, stab_d, flags=(), err=0.01, obj=0.05):
    from attnlimits.numeric.slr.rs import UNKNOWNS, RSFixedPoint

    vals = dict(zip(UNKNOWNS, (0.5, 0.8, 1.0, 0.4, 0.3, 0.2)))
    return RSFixedPoint(vals, {k: 0.0 for k in UNKNOWNS}, E, err, obj, 0.0, obj, {}, 1.5, 0.0, 0.0, 0.0, 0.0, 1, 1,
                        "m", "r", 0.0, 0.0, alpha, 0.1, 0.1, tuple(flags), free_energy=obj,
                        training_objective_error=0.0, stability_damped=stab_d, replicon=rep, replicon_error=0.0)


def _found():
    """``RSProblem.all_branches`` output for the linear_uncentred λ = 0.1 curve: the equilibrium branch only."""
    return {a: [("informed", _fp(a, E, rep, sd, fl), "equilibrium")] for a, E, rep, sd, fl in LIN_LAM01}


def _axes():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure()
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot(1, 1, 1)


def _legend_texts(ax):
    return [t for t in ax.get_legend_handles_labels()[1]]


def _hollow(ax):
    """x data of the hollow-marker artists (flagged theory points)."""
    return sorted(float(v) for ln in ax.get_lines() if ln.get_markerfacecolor() == "none" and len(ln.get_xdata())
                  for v in ln.get_xdata())


# ----------------------------------------------------------------------------------------------
# the flag of a row
# ----------------------------------------------------------------------------------------------
def test_theory_flag_words():
    """Each reason gives its word; the solver's undamped ``unstable`` alone gives none."""
    from attnlimits.numeric.slr.rs_command import theory_flag

    assert theory_flag(_fp(4.0, 0.84, 0.86, 0.74, ("unstable",)).as_row()) == ""
    assert theory_flag(_fp(2.0, 1.65, 4.39, 0.82, ("rsb",)).as_row()) == "rsb"
    assert theory_flag(_fp(2.0, 1.65, 0.5, 1.02).as_row()) == "unstable"
    assert theory_flag({**_fp(2.0, 1.65, 0.5, 0.5).as_row(), "only_unstable_fixed_points": True}) == "unstable"
    assert theory_flag(_fp(2.0, 1.65, 0.5, 0.5, ("residual_above_tol", "rough_map")).as_row()) == "rough,unconverged"
    assert theory_flag(_fp(2.0, 0.3, 0.5, 0.5, err=0.5).as_row()) == "error_exceeds_value"
    assert theory_flag(_fp(2.0, 0.3, 0.5, 0.5, err=math.nan).as_row()) == "error_exceeds_value"
    # the row's own rsb column is carried, whatever rule set it
    assert theory_flag({**_fp(2.0, 1.0, 0.99, 0.5).as_row(), "rsb": True}) == "rsb"


def test_replica_rows_carry_flag_and_warn_once_per_flagged_row(monkeypatch, capsys):
    """``slr replica`` rows: ``flag`` in every row; one stderr line per flagged row, none for clean ones."""
    from attnlimits.numeric.slr import rs_command as RC

    fake = {a: [("informed", _fp(a, E, rep, sd, fl))] for a, E, rep, sd, fl in LIN_LAM01}
    monkeypatch.setattr(RC, "rs_branch_search", lambda *a, **k: fake)
    params = {"activation": "linear_uncentred", "model": "spiked", "nu": 2.0, "L": 2,
              "alpha": [a for a, *_ in LIN_LAM01], "lam": [0.1], "delta": 0.1, "branches": "equilibrium"}
    rows = list(RC.replica_rows(None, None, RC.replica_problem(params), params))
    assert [r["flag"] for r in rows] == ["rsb", "rsb", "", "", ""]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("replica symmetry broken" in ln and "flag=rsb" in ln for ln in err)
    assert "alpha=2 " in err[0] and "alpha=3 " in err[1]


def test_seed_and_summary_flags():
    """A stalled seed carries ``flag = stalled``; the mean over seeds carries every seed's word and the count."""
    from attnlimits.verify.slr.train import summarize

    assert F.seed_flag("converged") == "" and F.seed_flag("stalled") == "stalled"
    seeds = [{"E_test": 0.5, "status": "converged", "flag": ""}, {"E_test": 0.6, "status": "stalled", "flag": "stalled"},
             {"E_test": 0.7, "status": "max_iter", "flag": "max_iter"}]
    s = summarize(seeds)
    assert s["flag"] == "stalled,max_iter" and s["seeds_flagged"] == 2
    assert summarize(seeds[:1])["flag"] == "" and summarize(seeds[:1])["seeds_flagged"] == 0


# ----------------------------------------------------------------------------------------------
# the helper
# ----------------------------------------------------------------------------------------------
def test_theory_line_leaves_flagged_points_off_the_prediction():
    fig, ax = _axes()
    x, y = [1, 2, 3, 4, 5], [1.0, 2.0, 3.0, 4.0, 5.0]
    bad = F.theory_line(ax, x, y, ["rsb", "", "", "unstable", ""], color="C0", label="theory", err=[0.1] * 5)
    assert bad.tolist() == [True, False, False, True, False]
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "theory"]
    yd = np.asarray(line.get_ydata(), float)
    assert np.isnan(yd[[0, 3]]).all() and np.isfinite(yd[[1, 2, 4]]).all()
    assert _hollow(ax) == [1.0, 4.0]
    labels = _legend_texts(ax)
    assert RSB_LEGEND in labels and F.LEGEND["unstable"] in labels and labels.count(RSB_LEGEND) == 1
    # a second curve with the same reason adds no second legend entry
    F.theory_line(ax, x, y, ["rsb"] * 5, color="C1", label="other")
    labels = _legend_texts(ax)
    assert labels.count(RSB_LEGEND) == 1 and "other" not in labels
    assert "other (every point flagged: not a prediction)" in labels


def test_measured_points_mark_stalled_seeds():
    fig, ax = _axes()
    bad = F.measured_points(ax, [1, 2], [0.5, 0.4], [0.01, 0.02], ["", "stalled"], color="C0", label="ERM")
    assert bad.tolist() == [False, True]
    markers = {ln.get_marker() for ln in ax.get_lines() if len(ln.get_xdata())}
    assert {"o", "x"} <= markers
    assert F.LEGEND["stalled"] in _legend_texts(ax) and "ERM" in _legend_texts(ax)
    assert "x markers" in F.caption(["", "stalled"]) and F.caption(["", None]) == ""


# ----------------------------------------------------------------------------------------------
# slr train --plot
# ----------------------------------------------------------------------------------------------
def _summary(alpha, E, flag=""):
    return {"row": "summary", "model": "spiked", "nu": 2.0, "L": 2, "D": 50, "delta": 0.1, "optimizer": "lbfgs",
            "activation": "linear_uncentred", "lam": 0.1, "seeds": 2, "E_test_sd": 0.01, "alpha": alpha,
            "E_test": E, "flag": flag}


def test_rs_equilibrium_curve_flags_rsb_points():
    from attnlimits.verify.slr.erm_plots import rs_equilibrium_curve

    a, E, SE, flags, fps = rs_equilibrium_curve(_found())
    assert a == [2.0, 3.0, 4.0, 5.0, 8.0] and flags == ["rsb", "rsb", "", "", ""]
    assert all(f.replicon >= 1 for f, fl in zip(fps, flags) if fl) and all(f.replicon < 1 for f, fl in
                                                                           zip(fps, flags) if not fl)


def test_learning_curve_draws_rsb_points_apart(tmp_path, monkeypatch, capsys):
    """``slr train --plot`` at λ = 0.1 (the README example's linear_uncentred curve): the points with replicon ≥ 1
    are hollow, not on the line labelled "equilibrium branch", with the RS-unstable legend entry; the summary
    rows get ``rs_flag``; a mean over stalled seeds is an x with its entry; stderr names the flagged α."""
    import attnlimits.verify.outputs as io_mod
    from attnlimits.verify.slr import erm_plots as T
    from attnlimits.verify.slr import replica as REP

    class _Problem:
        def all_branches(self, alphas, lam, delta):
            assert lam == 0.1
            return _found()

    import attnlimits.verify.slr.theory as TH

    def skip(*a, **k):  # the population lines are not under test here (and cost seconds)
        raise ValueError("not drawn in this test")

    for method in ("optimal_population_risk", "bayes_risk", "bayes_risk_varlen"):
        monkeypatch.setattr(TH.SLRTheory, method, skip)
    monkeypatch.setattr(REP, "rs_problem", lambda *a, **k: _Problem())
    drawn = {}
    monkeypatch.setattr(io_mod, "save_figure", lambda fig, path, **kw: drawn.setdefault("fig", fig) and path)
    rows = [_summary(2.0, 0.9), _summary(4.0, 0.85, "stalled"), _summary(8.0, 0.49)]
    T.plot_learning_curve(rows, str(tmp_path / "c.png"), theory=True, bayes_optimal=False)
    ax = drawn["fig"].axes[0]
    (line,) = [ln for ln in ax.get_lines() if "RS theory, equilibrium branch" in ln.get_label()]
    xd, yd = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    assert np.isnan(yd[np.isin(xd, [2.0, 3.0])]).all() and np.isfinite(yd[np.isin(xd, [4.0, 5.0, 8.0])]).all()
    assert _hollow(ax) == [2.0, 3.0]
    labels = _legend_texts(ax)
    assert RSB_LEGEND in labels and F.LEGEND["stalled"] in labels
    assert any(ln.get_marker() == "x" and list(ln.get_xdata()) == [4.0] for ln in ax.get_lines())
    assert [r["rs_flag"] for r in rows] == ["rsb", "", ""]
    err = capsys.readouterr().err
    assert "flagged at α = 2 (rsb), 3 (rsb)" in err


# ----------------------------------------------------------------------------------------------
# attnlimits figure slr-finite-alpha
# ----------------------------------------------------------------------------------------------
def _replica_rows(lam=0.1):
    from attnlimits.numeric.slr.rs_command import theory_flag

    out = []
    for a, E, rep, sd, fl in LIN_LAM01:
        r = {**_fp(a, E, rep, sd, fl).as_row(), "only_unstable_fixed_points": False, "lam": lam}
        r["flag"] = theory_flag(r)
        out.append(r)
    return out


def test_figure_theory_rows_and_line_at_lam_01():
    """The figure's data from ``slr replica`` rows at λ = 0.1: the rows carry ``flag``, the rsb α are not on the
    prediction line and are hollow markers with the RS-unstable legend entry."""
    from attnlimits.verify.figures.slr import draw_theory, theory_rows

    rows = theory_rows("slr-finite-alpha", "linear_uncentred", _replica_rows(), nu=2.0, L=2, delta=0.1)
    assert [r["flag"] for r in rows] == ["rsb", "rsb", "", "", ""] and rows[0]["lam"] == 0.1
    fig, ax = _axes()
    assert draw_theory(ax, rows, color="C0", label="linear_uncentred: replica theory") == [2.0, 3.0]
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "linear_uncentred: replica theory"]
    assert np.isnan(np.asarray(line.get_ydata(), float)[:2]).all()
    assert _hollow(ax) == [2.0, 3.0] and RSB_LEGEND in _legend_texts(ax)


def test_figure_slr_finite_alpha_carries_flags(tmp_path, monkeypatch):
    """The whole panel on stubbed computations (RS at λ = 0.1 rows instead of the tuned ones, a stalled ERM seed):
    theory rows, the ERM row's ``theory_flag`` and ``flag``, and the note all say so."""
    import attnlimits.verify.slr.bayes_optimal as BO
    import attnlimits.verify.slr.train as T
    from attnlimits.verify.figures import slr as FG

    by_alpha = {r["alpha"]: r for r in _replica_rows()}

    def run(result, command, **p):
        if command == "population":
            return [{"risk": 0.3}]
        if p["lam"] == ["tune"]:
            return [dict(by_alpha[min(by_alpha, key=lambda a: abs(a - x))], alpha=x) for x in p["alpha"]]
        return [dict(by_alpha[min(by_alpha, key=lambda a: abs(a - p["alpha"][0]))], alpha=p["alpha"][0])]

    class _Res:
        def __init__(self, alpha):
            self.seeds = [{"E_test": 0.5, "flag": ""}, {"E_test": 0.52, "flag": "stalled" if alpha == 4.0 else ""}]

    class _BO:
        E_BO = 0.25

    monkeypatch.setattr(FG, "run_command", run)
    monkeypatch.setattr(T, "train_erm", lambda act, **kw: _Res(kw["alpha"]))
    monkeypatch.setattr(BO, "bo_state_evolution", lambda *a, **k: [_BO() for _ in a[3]])
    from attnlimits.verify.figures.slr import finite_panel

    fig, ax, rows, note = finite_panel("slr-finite-alpha", tmp_path, "quick", 0, "cpu")
    th = [r for r in rows if r["kind"] == "theory" and r["curve"] == "linear_uncentred"]
    assert all(r["flag"] == ("rsb" if r["alpha"] < 3.5 else "") for r in th)
    erm = {r["alpha"]: r for r in rows if r["kind"] == "ERM" and r["curve"] == "linear_uncentred"}
    assert erm[2.0]["theory_flag"] == "rsb" and erm[10.0]["theory_flag"] == ""
    assert erm[4.0]["flag"] == "stalled" and erm[4.0]["seeds_flagged"] == 1 and erm[2.0]["flag"] == ""
    assert "hollow markers" in note and "stalled" in note
    labels = _legend_texts(ax)
    assert RSB_LEGEND in labels and F.LEGEND["stalled"] in labels


# ----------------------------------------------------------------------------------------------
# sweep plot and the report
# ----------------------------------------------------------------------------------------------
def test_sweep_curves_and_plot_mark_flagged_points(tmp_path, monkeypatch):
    from attnlimits.verify.sweep import plot as P
    from attnlimits.verify.sweep.table import ResultsTable

    t = ResultsTable(tmp_path)
    t.append([{"point_key": f"k{i}", "attempt": f"a{i}", "row_index": 0, "status": "ok", "finished_at": "z",
               "alpha": a, "E_test": E, "flag": fl, "activation": "linear_uncentred"}
              for i, (a, E, fl) in enumerate([(2.0, 1.65, "rsb"), (4.0, 0.84, ""), (8.0, 0.49, None)])])
    data = P.curves(tmp_path, "alpha", "E_test", flags=True)
    assert [p[4] for p in data[None]] == ["rsb", "", ""]
    assert [len(p) for p in P.curves(tmp_path, "alpha", "E_test")[None]] == [4, 4, 4]
    drawn = {}
    import attnlimits.verify.outputs as io_mod

    monkeypatch.setattr(io_mod, "save_figure", lambda fig, path, **kw: drawn.setdefault("fig", fig) and path)
    P.plot_table(tmp_path, "alpha", "E_test", output=tmp_path / "p.png")
    ax = drawn["fig"].axes[0]
    assert _hollow(ax) == [2.0] and RSB_LEGEND in _legend_texts(ax) and "hollow markers" in ax.get_title()


def test_report_plot_draws_flagged_series_apart(tmp_path):
    from attnlimits.verify.claims.base import ClaimResult, PlotSeries, PlotSpec
    from attnlimits.verify.report import draw_spec, plot_caption

    spec = PlotSpec("C15", "α", "E_test", [
        PlotSeries("RS", [2, 4, 8], [1.65, 0.84, 0.49], [0.03, 0.04, 0.001], flags=["rsb", "", ""]),
        PlotSeries("ERM", [2, 4, 8], [0.9, 0.85, 0.49], [0.01] * 3, kind="points", flags=["", "stalled", ""])])
    fig, ax = _axes()
    draw_spec(ax, spec)
    assert _hollow(ax) == [2.0] and RSB_LEGEND in _legend_texts(ax) and F.LEGEND["stalled"] in _legend_texts(ax)
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "RS"]
    assert np.isnan(np.asarray(line.get_ydata(), float)[0])
    res = ClaimResult("C15", "t", "pass", plots=[spec])
    assert "hollow markers" in plot_caption(res) and "stalled" in plot_caption(res)
    assert plot_caption(ClaimResult("C0", "t", "pass", plots=[PlotSpec("a", "x", "y", [PlotSeries("s", [1], [1])])])) == ""


# ----------------------------------------------------------------------------------------------
# the real thing
# ----------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_real_rs_curve_flags_the_rsb_points():
    """linear_uncentred, spiked L = 2, ν = 2, Δ = 0.1, λ = 0.1 (4 × 1024): the equilibrium branch at α = 2 has
    replicon ≥ 1 and is flagged; at α = 8 it is RS-stable (0.38) and not.  About a minute on two cores."""
    from attnlimits.verify.slr.replica import rs_problem
    from attnlimits.verify.slr.erm_plots import rs_equilibrium_curve

    found = rs_problem("linear_uncentred", "spiked", 2.0, 2).all_branches([2.0, 8.0], 0.1, 0.1)
    a, E, SE, flags, fps = rs_equilibrium_curve(found)
    assert a == [2.0, 8.0]
    assert "rsb" in flags[0].split(",") and fps[0].replicon >= 1
    assert flags[1] == "" and fps[1].replicon < 1
