"""The single-location-regression panels of ``attnlimits figure``: Monte Carlo markers, the --full task grid."""
from __future__ import annotations

import math

import pytest

from attnlimits.symbolic.result import InputError
from attnlimits.verify.figures.slr import (FINITE_SETTINGS, erm_grid_text, full_size, full_task_seconds,
                                          population_mc)
from attnlimits.verify.figures import all_figures, make_figure

FIGURES = all_figures()


def test_every_slr_panel_is_listed():
    for name in ("slr-risk-nu", "slr-risk-L", "slr-risk-L-max", "slr-varlen", *FINITE_SETTINGS):
        assert name in FIGURES
    assert all(FIGURES[n].options for n in FINITE_SETTINGS)
    assert not FIGURES["slr-risk-L-max"].options


def test_population_mc_reproduces_a_closed_form():
    # linear_uncentred, max-SLR, nu = inf, L = 3: E = 1 - (1 + M_3^2)/3 with M_3 = 3/(2 sqrt(pi)) (docs/slr.md §8,
    # R4: 0.42793), at its argmin m_k = M_3, q_k = m_k^2, m_v = A/B = 1/3, q_v = m_v^2 — an independent value
    m3 = 3 / (2 * math.sqrt(math.pi))
    exact = 1 - (1 + m3**2) / 3
    rec = {"activation": "linear_uncentred", "model": "max", "nu": "inf", "L": {"3": 1.0}, "risk": exact,
           "limit": False, "argmin": {"m_k": m3, "q_k": m3**2, "s_k": 0.0, "m_v": 1 / 3, "q_v": 1 / 9}}
    m, se, theory = population_mc(rec, n=200_000, seed=3, device="cpu")
    assert theory == exact
    assert 0 < se < 2e-3
    assert abs(m - exact) < 4 * se  # k = 4 standard errors


def test_population_mc_compares_a_limit_at_the_bound():
    # softmax at max-SLR nu = inf: the optimum is the limit 0 (m_k -> inf); the marker sits at m_k = 200 and is
    # compared with the risk there, not with the limit
    rec = {"activation": "softmax", "model": "max", "nu": "inf", "L": {"2": 1.0}, "risk": 0.0, "limit": True,
           "risk_at_bound": 0.0123, "argmin": {"m_k": 200.0, "q_k": 40000.0, "m_v": 1.0, "q_v": 1.0}}
    m, se, theory = population_mc(rec, n=20_000, seed=0, device="cpu")
    assert theory == 0.0123 and m > 0


def test_full_size_and_task_grid():
    assert full_size(4.0) == 5000 and full_size(1.0) == 10_000 and full_size(20.0) == 2236
    tasks = [("softmax", 4.0, 0.3, 5000, 0), ("softmax", 4.0, 0.3, 5000, 1), ("linear_uncentred", 20.0, 1.0, 2236, 0)]
    from attnlimits.verify.sweep.grid import parse_grid

    grid = parse_grid(erm_grid_text("slr-finite-alpha", "spiked", 2.0, 2, tasks, n_test=1000, device="cpu"))
    assert len(grid) == 3 and len(set(grid.keys)) == 3
    assert [p["seed"] for p in grid.points] == [0, 1, 0]
    assert grid.points[2]["D"] == 2236 and grid.points[2]["seeds"] == 1
    # max-SLR at nu = inf is a valid grid too
    grid = parse_grid(erm_grid_text("slr-finite-alpha-max-L3", "max", math.inf, 3, tasks, n_test=1000, device="cpu"))
    assert math.isinf(grid.points[0]["nu"])
    # the estimate grows with N L D (same N D at every alpha: the same cost per evaluation)
    assert full_task_seconds(4.0, 3) == pytest.approx(1.5 * full_task_seconds(4.0, 2), rel=0.01)


def test_finite_options_refused_where_they_do_not_apply(tmp_path):
    with pytest.raises(InputError, match="finite-sample panels only"):
        make_figure("slr-risk-L-max", tmp_path, seeds=4)
    with pytest.raises(InputError, match="--seeds must be >= 2"):
        make_figure("slr-finite-alpha", tmp_path, seeds=1)
    with pytest.raises(InputError, match="--alpha"):
        make_figure("slr-finite-alpha", tmp_path, alphas=[-1.0])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["slr-varlen", "slr-finite-alpha-max-L3"])
def test_quick_panel_has_theory_and_simulation_rows(tmp_path, name):
    png, rows = make_figure(name, tmp_path, device="cpu")
    kinds = {r["kind"] for r in rows}
    assert png.exists() and "theory" in kinds and kinds & {"simulation", "ERM"}


def test_full_erm_tasks_run_once_and_resume(tmp_path):
    # the --full machinery at a toy size: one sweep task per (activation, alpha, seed), the Parquet table in
    # OUT/NAME-erm/, a rerun skips the finished tasks
    from attnlimits.verify.figures.slr import _erm_full

    tasks = [("softmax", 2.0, 0.3, 40, 0), ("softmax", 2.0, 0.3, 40, 1)]
    said = []
    got = _erm_full("slr-finite-alpha", tmp_path, "spiked", 2.0, 2, tasks, n_test=200, device="cpu", workers=0,
                    progress=said.append)
    assert [len(v) for v in got.values()] == [2] and (tmp_path / "slr-finite-alpha-erm" / "parts").is_dir()
    assert "2 to run" in said[0] and "estimate" in said[0]
    e1 = sorted(r["E_test"] for r in got[("softmax", 2.0)])
    said.clear()
    again = _erm_full("slr-finite-alpha", tmp_path, "spiked", 2.0, 2, tasks + [("softmax", 2.0, 0.3, 40, 2)],
                      n_test=200, device="cpu", workers=0, progress=said.append)
    assert "2 already in" in said[0] and "1 to run" in said[0]
    rows = again[("softmax", 2.0)]
    assert len(rows) == 3 and sorted(r["E_test"] for r in rows if r["seed"] in (0, 1)) == e1


@pytest.mark.slow
def test_full_panel_end_to_end_at_toy_size(tmp_path, monkeypatch):
    # the whole --full path (plan, tasks on the sweep table, markers, CSV) at √(ND) = 60 with the theory at a fixed
    # λ (the live tuning is what --full adds and is tested with `slr replica`); a rerun trains nothing
    import attnlimits.verify.figures.slr as P

    def fixed_lambda(name, act, model, nu, L, dense, points, progress):
        rows = P.run_command("slr", "replica", model=model, nu=nu, L=[L], activation=[act], alpha=list(dense),
                           lam=["0.3"], delta=0.1, points=256, branches="informed")
        return rows, "fixed λ (test)"
    monkeypatch.setattr(P, "_tuned_theory", fixed_lambda)
    monkeypatch.setitem(P.FINITE_SIZES, "full", {"sqrt_nd": 60, "seeds": 2, "points": 256, "n_test": 500})
    said = []
    png, rows = make_figure("slr-finite-alpha-spiked-nu2-L3", tmp_path, mode="full", alphas=[2.0, 4.0], workers=0,
                            device="cpu", progress=said.append)
    erm = [r for r in rows if r["kind"] == "ERM"]
    assert png.exists() and len(erm) == 4 and all(r["seeds"] == 2 and r["D"] == full_size(r["alpha"], 60) for r in erm)
    assert any("8 to run" in m for m in said)  # 2 activations × 2 α × 2 seeds
    said.clear()
    make_figure("slr-finite-alpha-spiked-nu2-L3", tmp_path, mode="full", alphas=[2.0, 4.0], workers=0, device="cpu",
                progress=said.append)
    assert any("8 already in" in m and "0 to run" in m for m in said)
    assert any("tuned theory read back" in m for m in said)  # the λ tuning is not redone either
