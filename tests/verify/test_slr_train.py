"""Tests of the finite-D ERM trainer (attnlimits.verify.slr.train, docs/slr.md §12).

Expected values are independent of the code under test: the same problems trained one seed at
a time (batched vs looped), the stated gradient tolerance, a different optimiser (GD vs L-BFGS),
and the §6.1 population formula against fresh Monte Carlo samples within k = 4 SE.
"""
import math
import os

import pytest
import torch

from attnlimits.symbolic.result import InputError
from attnlimits.verify.slr import erm_plots as EP
from attnlimits.verify.slr import train as T

SMALL = dict(model="spiked", nu=2.0, L=2, lam=0.1, delta=0.1)


@pytest.fixture(autouse=True)
def _one_thread():
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(saved)


def test_batched_equals_looped_seeds():
    """Seed s of a batched run = the same seed trained alone (per-seed L-BFGS, own line search)."""
    kw = dict(SMALL, alpha=4.0, D=40, seed=7, test=False, device="cpu")
    batched = T.train_erm("softmax", seeds=3, **kw)
    for row in batched.seeds:
        alone = T.train_erm("softmax", seed_indices=[row["seed_index"]], **kw).seeds[0]
        assert alone["status"] == row["status"] == "converged"
        for key in T.OVERLAP_KEYS:
            assert alone[key] == pytest.approx(row[key], rel=1e-7, abs=1e-9), key
        assert alone["objective"] == pytest.approx(row["objective"], rel=1e-12)
    # the seeds are different problems
    assert len({round(r["m_k"], 6) for r in batched.seeds}) == 3


def test_lbfgs_reaches_gradient_tolerance():
    res = T.train_erm("softmax", seeds=2, alpha=4.0, D=60, test=False, device="cpu", **SMALL)
    for row in res.seeds:
        assert row["status"] == "converged"
        assert row["grad_norm"] <= 1e-8
        assert 0 < row["iterations"] < 5000


@pytest.mark.parametrize("activation", ["linear_uncentred", "erf_learned"])
def test_lbfgs_other_activations_converge(activation):
    res = T.train_erm(activation, seeds=2, alpha=4.0, D=40, test=False, device="cpu", **SMALL)
    for row in res.seeds:
        assert row["status"] in ("converged", "stalled"), row
        assert row["grad_norm"] <= 1e-6
        if activation == "erf_learned":
            assert row["extra"] is not None and math.isfinite(row["extra"])


def test_gd_from_informed_start_matches_lbfgs():
    kw = dict(SMALL, alpha=4.0, D=30, seeds=2, test=False, device="cpu")
    ref = T.train_erm("softmax", optimizer="lbfgs", **kw)
    gd = T.train_erm("softmax", optimizer="gd", lr=0.5, max_iter=3000, tol_grad=1e-5, **kw)
    for a, b in zip(ref.seeds, gd.seeds):
        assert b["status"] == "converged", b
        assert b["step_size"] == pytest.approx(0.5 * 30 / 120)
        for key in ("m_k", "q_k", "m_v", "q_v"):
            assert b[key] == pytest.approx(a[key], rel=1e-4), key
        assert b["objective"] == pytest.approx(a["objective"], rel=1e-9)


def test_adam_decreases_objective():
    kw = dict(SMALL, alpha=4.0, D=30, seeds=2, test=False, device="cpu")
    start = T.train_erm("softmax", optimizer="gd", max_iter=0, init="random", **kw)
    adam = T.train_erm("softmax", optimizer="adam", lr=0.03, max_iter=150, batch=32, init="random", **kw)
    for a, b in zip(start.seeds, adam.seeds):
        assert b["objective"] < 0.7 * a["objective"]


def test_population_formula_agrees_with_fresh_samples():
    """§6.1 from the learned overlaps = direct MC on fresh sequences, within k = 4 SE (claim C5)."""
    res = T.train_erm("softmax", seeds=2, alpha=4.0, D=80, n_test=20_000, device="cpu", **SMALL)
    k = 4.0
    for row in res.seeds:
        se = math.hypot(row["E_test_se"], row["E_test_overlaps_se"])
        assert abs(row["E_test"] - row["E_test_overlaps"]) <= k * se, row
    s = res.summary
    assert s["row"] == "summary" and s["seeds"] == 2 and s["E_test_sd"] is not None
    assert s["distance"] < 0.3


def test_variable_length_split_and_training():
    assert T.length_split(10, [1, 2, 3]) == [(1, 4), (2, 3), (3, 3)] or \
        sum(n for _, n in T.length_split(10, [1, 2, 3])) == 10
    res = T.train_erm("softmax", seeds=1, alpha=3.0, D=30, test=False, device="cpu",
                      **{**SMALL, "L": [1, 2, 3]})
    assert res.seeds[0]["status"] in ("converged", "stalled")
    assert res.settings["L"] == "1,2,3"


@pytest.mark.parametrize("kw, msg", [
    (dict(D=1), "--D"),
    (dict(alpha=0.0), "--alpha"),
    (dict(alpha=-1.0), "--alpha"),
    (dict(lam=-0.1), "--lam"),
    (dict(optimizer="newton"), "--optimizer"),
    (dict(nu=math.inf), "--nu"),
])
def test_bad_inputs_refused(kw, msg):
    args = dict(SMALL, alpha=2.0, D=20, seeds=1, test=False, device="cpu")
    args.update(kw)
    act = args.pop("activation", "softmax")
    with pytest.raises(InputError, match=msg):
        T.train_erm(act, **args)


def test_bare_activation_and_memory_refused():
    with pytest.raises(InputError, match="in full"):
        T.train_erm("linear", alpha=2.0, D=20, seeds=1, device="cpu", **SMALL)
    with pytest.raises(InputError, match=r"N·L·D = 2000·2·1000 needs .* GiB per seed on cpu"):
        T.train_erm("softmax", alpha=2.0, D=1000, seeds=1, device="cpu", max_memory_bytes=10**6, **SMALL)


def test_command_rows_plot_and_interrupt(tmp_path):
    cmd = T.TRAIN_COMMAND
    params = cmd.parse({"activation": "softmax", "alpha": "2,4", "lam": "0.1", "D": "30",
                        "seeds": "2", "n_test": "2000", "plot": str(tmp_path / "curve.png"),
                        "log": str(tmp_path / "rows.jsonl"), "device": "cpu", "theory": "none"})
    rows = T.run_train(params)
    summ = [r for r in rows if r["row"] == "summary"]
    assert len(summ) == 2 and len(rows) == 6
    for r in rows:
        assert all(isinstance(v, (int, float, str, bool, type(None))) for v in r.values())
    assert os.path.getsize(tmp_path / "curve.png") > 10_000
    assert len((tmp_path / "rows.jsonl").read_text().splitlines()) == 4

    with pytest.raises(InputError, match="--lam"):
        T.run_train({**params, "lam": ["abc"]})

    # Ctrl-C during the second configuration: the first one's rows are returned
    calls = {"n": 0}

    def progress(msg):
        if msg.startswith("softmax α=2") or msg.startswith("lbfgs"):
            calls["n"] += 1
        if msg.startswith("softmax α=4"):
            raise KeyboardInterrupt

    rows = T.run_train({**params, "activation": ["softmax"], "plot": "", "log": ""}, progress=progress)
    assert any(r["alpha"] == 2.0 and r["row"] == "summary" for r in rows)
    assert all(r.get("interrupted") for r in rows)


def test_final_parameters_warm_start_a_second_run():
    """TrainResult.theta is the minimiser: restarting from it stops at once at the same objective."""
    kw = dict(SMALL, alpha=4.0, D=30, seed=3, test=False, device="cpu")
    first = T.train_erm("softmax", seeds=2, **kw)
    assert tuple(first.theta.shape) == (2, 60) and first.theta.dtype == torch.float64
    again = T.train_erm("softmax", seeds=2, init_theta=first.theta, **kw)
    for a, b in zip(first.seeds, again.seeds):
        assert b["iterations"] <= 2
        assert b["objective"] == pytest.approx(a["objective"], rel=1e-12)
    with pytest.raises(InputError, match="init_theta must have shape"):
        T.train_erm("softmax", seeds=3, init_theta=first.theta, **kw)


def test_learning_curve_draws_bo_line_or_says_why(tmp_path, monkeypatch, capsys):
    """Given curves are drawn without recomputation; BO values land on the summary rows at their α;
    a setting the BO theory does not cover gets a legend note instead of an error."""
    base = {"row": "summary", "model": "spiked", "nu": 2.0, "L": 2, "D": 50, "delta": 0.1, "optimizer": "lbfgs",
            "activation": "softmax", "lam": 0.1, "seeds": 2, "E_test_sd": 0.01}
    rows = [dict(base, alpha=2.0, E_test=0.50), dict(base, alpha=4.0, E_test=0.40)]
    bo = ([2.0, 3.0, 4.0], [0.27, 0.255, 0.247], [1e-4] * 3)
    path = EP.plot_learning_curve(rows, str(tmp_path / "c.png"), theory=False, bo_curve=bo,
                                 rs_curves={"softmax": ([2.0, 4.0], [0.486, 0.378], [0.002, 0.001])})
    assert os.path.getsize(path) > 10_000
    assert [r["bo_E_test"] for r in rows] == [0.27, 0.247]
    # a setting the BO theory refuses (InputError) gets a legend note, not an error
    import attnlimits.verify.slr.bayes_optimal as BO
    from attnlimits.symbolic.result import InputError

    def refuse(*a, **k):
        raise InputError("not covered")

    monkeypatch.setattr(BO, "bo_state_evolution", refuse)
    mx = [dict(base, model="max", alpha=a, E_test=e) for a, e in ((2.0, 0.5), (4.0, 0.4))]
    capsys.readouterr()
    EP.plot_learning_curve(mx, str(tmp_path / "m.png"), theory=False, bayes_optimal=True)
    assert "bo_E_test" not in mx[0] and os.path.getsize(tmp_path / "m.png") > 10_000
    # ... and the terminal says why, in one line
    err = [ln for ln in capsys.readouterr().err.splitlines() if "not drawn" in ln]
    assert len(err) == 1 and "not covered" in err[0]


def test_output_paths_checked_before_training_and_log_appends(tmp_path, capsys):
    """A bad --plot is refused before any training (one line, exit 2); --log appends, as its help says."""
    from attnlimits.verify import cli

    log = tmp_path / "seeds.jsonl"
    log.write_text('{"earlier": 1}\n')
    base = ["slr", "train", "--activation", "softmax", "--alpha", "4", "--lam", "0.1", "--D", "20", "--seeds", "1"]
    for bad, why in ((str(tmp_path / "no" / "c.png"), "does not exist"), (str(tmp_path / "c.txt"), "must end in")):
        assert cli.main(base + ["--plot", bad, "--log", str(log)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and why in err[0]
    assert log.read_text() == '{"earlier": 1}\n'  # untouched by the refused runs
    assert cli.main(base + ["--log", str(log)]) == 0
    lines = log.read_text().splitlines()
    assert lines[0] == '{"earlier": 1}' and len(lines) >= 2


def test_cubic_step_on_a_degenerate_interval_is_the_midpoint():
    """x1 == x2 in the line search's cubic interpolation: the midpoint of the bounds (torch's NaN path),
    not a ZeroDivisionError (found training linear_uncentred at alpha = 11.6, D = 800)."""
    from attnlimits.verify.slr.erm_solver import _cubic

    assert _cubic(0.5, 1.0, -1.0, 0.5, 0.9, -0.5, bounds=(0.505, 5.0)) == (0.505 + 5.0) / 2
    # an ordinary step still interpolates: exact for f(x) = (x − 0.7)², whose minimiser is 0.7
    assert _cubic(0.0, 0.49, -1.4, 1.0, 0.09, 0.6) == pytest.approx(0.7, abs=1e-12)
