"""Collapsed Gibbs posterior sampler of spiked-SLR (verify/slr/posterior.py) and the BO phase diagram (verify/slr/phase.py).

Expected values are independent of the sampler: the exact posterior of a tiny problem by enumerating all
L^N location configurations with dense-matrix evidences (:func:`log_evidence`, no rank-one updates).
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from attnlimits.verify.slr.posterior import collapsed_gibbs, log_evidence, posterior_on_generated, split_rhat

NU, DELTA, L, N, D = 2.0, 0.3, 2, 5, 3


@pytest.fixture(scope="module")
def tiny():
    g = torch.Generator().manual_seed(3)
    U = torch.randn(N, L, D, generator=g, dtype=torch.float64) / math.sqrt(D)
    y = torch.randn(N, generator=g, dtype=torch.float64)
    confs = list(itertools.product(range(L), repeat=N))
    le = np.array([log_evidence(U, y, torch.tensor(c), NU, DELTA) for c in confs])
    p = np.exp(le - le.max())
    p /= p.sum()
    a = 1 + N * NU / D
    k_exact, v_exact = np.zeros(D), np.zeros(D)
    for pc, c in zip(p, confs):
        Ue = U[torch.arange(N), torch.tensor(c)]
        k_exact += pc * (math.sqrt(NU) * Ue.sum(0) / a).numpy()
        A = torch.eye(D, dtype=torch.float64) + Ue.T @ Ue / DELTA ** 2
        v_exact += pc * torch.linalg.solve(A, Ue.T @ y / DELTA ** 2).numpy()
    return U.numpy(), y.numpy(), confs, p, k_exact, v_exact


def test_log_evidence_k_part_is_gaussian_integral():
    """ν‖S‖²/(2a) is log ∫ exp(√ν S·k − Nν‖k‖²/2D) N(k; 0, I) dk (up to a constant): check by 1-D quadrature, D = 1."""
    from scipy.integrate import quad

    nu, Nn, Dd = 1.5, 3, 1
    U = np.array([[[0.3], [-0.7]], [[1.1], [0.2]], [[-0.4], [0.9]]])
    y = np.array([0.1, -0.2, 0.3])
    a = 1 + Nn * nu / Dd
    vals = []
    for c in ([0, 0, 0], [1, 0, 1], [1, 1, 1]):
        S = U[np.arange(Nn), c, 0].sum()
        integ = quad(lambda k: math.exp(math.sqrt(nu) * S * k - a * k * k / 2) / math.sqrt(2 * math.pi), -30, 30)[0]
        Ue = U[np.arange(Nn), c]
        K = DELTA ** 2 * np.eye(Nn) + Ue @ Ue.T
        logN = -0.5 * (y @ np.linalg.solve(K, y)) - 0.5 * np.linalg.slogdet(2 * math.pi * K)[1]
        vals.append((log_evidence(U, y, c, nu, DELTA), math.log(integ) + logN))
    diffs = [x - y_ for x, y_ in vals]
    assert max(diffs) - min(diffs) < 1e-10  # equal up to an ε-independent constant


def test_stationary_law_matches_enumeration(tiny):
    """Final states of 400 independent chains (25 sweeps from random starts) vs the exact location posterior:
    chi-square over the 32 configurations below the 0.1 % quantile (61.1 for 31 dof)."""
    U, y, confs, p, _, _ = tiny
    B = 400
    rng = np.random.default_rng(11)
    res = collapsed_gibbs(np.broadcast_to(U, (B, N, L, D)), np.broadcast_to(y, (B, N)), NU, DELTA,
                          rng.integers(L, size=(B, N)), sweeps=25, burn_in=24, rng=rng)
    idx = {c: i for i, c in enumerate(confs)}
    counts = np.zeros(len(confs))
    for e in res["eps"]:
        counts[idx[tuple(int(x) for x in e)]] += 1
    expected = p * B
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 61.1, chi2


def test_rao_blackwell_means_match_enumeration(tiny):
    """Posterior means of k and v: 48 chains × 300 sweeps, mean over chains within 4 SE of the exact values."""
    U, y, _, _, k_exact, v_exact = tiny
    B = 48
    res = collapsed_gibbs(np.broadcast_to(U, (B, N, L, D)), np.broadcast_to(y, (B, N)), NU, DELTA,
                          np.zeros((B, N), dtype=int), sweeps=300, burn_in=20, rng=np.random.default_rng(5))
    for est, exact in ((res["k_hat"], k_exact), (res["v_hat"], v_exact)):
        m, se = est.mean(0), est.std(0, ddof=1) / math.sqrt(B)
        assert np.all(np.abs(m - exact) <= 4 * se + 1e-12), (m, exact, se)


def test_split_rhat():
    rng = np.random.default_rng(0)
    same = rng.normal(size=(200, 4))
    assert abs(split_rhat(same) - 1) < 0.05
    shifted = same + np.array([0.0, 0.0, 3.0, 3.0])
    assert split_rhat(shifted) > 1.5
    assert split_rhat(np.ones((10, 3))) == 1.0
    with pytest.raises(ValueError):
        split_rhat(np.ones((3, 2)))


def test_bad_input():
    U = np.zeros((1, 2, 2, 3))
    with pytest.raises(ValueError, match="delta"):
        collapsed_gibbs(U, np.zeros((1, 2)), 1.0, 0.0, np.zeros((1, 2), int), sweeps=2, burn_in=0,
                        rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="burn_in"):
        collapsed_gibbs(U, np.zeros((1, 2)), 1.0, 0.1, np.zeros((1, 2), int), sweeps=2, burn_in=2,
                        rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="start"):
        posterior_on_generated(2.0, 2, 1.0, 0.1, 10, [0], starts=("warm",))


def test_posterior_on_generated_smoke():
    """D = 20, α = 2: rows carry overlaps and R̂; reproducible from the seeds (E_test: claim C19-post)."""
    kw = dict(sweeps=8, burn_in=2, test_error=False)
    rows = posterior_on_generated(2.0, 2, 2.0, 0.1, 20, [4, 5], **kw)
    assert [r["seed"] for r in rows] == [4, 5]
    for r in rows:
        assert r["N"] == 40 and r["chains"] == 2
        assert math.isnan(r["E_test"]) and r["q_k"] > 0 and r["q_v"] > 0
        assert math.isfinite(r["rhat_max"]) and "start_gap_m_k" in r
    again = posterior_on_generated(2.0, 2, 2.0, 0.1, 20, [4, 5], **kw)
    assert [r["m_k"] for r in again] == [r["m_k"] for r in rows]


# ---------------------------------------------------------------------------------------------------
# phase diagram
def _rows(hard_at=None):
    rows = []
    for L_ in (2, 3):
        for nu in (1.0, 2.0):
            for al in (0.5, 1.0, 4.0):
                hard = (L_, nu, al) == hard_at
                e = 1 / (1 + al * nu)
                rows.append({"L": L_, "nu": nu, "alpha": al, "delta": 0.1, "distinct": hard, "E_BO": e,
                             "E_uninformed": e + (0.2 if hard else 0.0), "E_informed": e,
                             "phi_uninformed": 0.0, "phi_informed": 1.0 if hard else 0.0, "hard": hard})
    return rows


def test_phase_summary_and_plot(tmp_path):
    from attnlimits.verify.slr.phase import phase_summary, plot_phase_diagram

    rows = _rows()
    s = phase_summary(rows)
    assert s[2]["hard"] == 0 and s[2]["points"] == 6 and s[3]["max_gap"] == 0.0
    rows_h = _rows(hard_at=(3, 2.0, 1.0))
    assert phase_summary(rows_h)[3]["hard"] == 1 and phase_summary(rows_h)[2]["hard"] == 0
    path = plot_phase_diagram(rows_h, tmp_path / "phase.png")  # one panel with and one without a hard point
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_phase_plot_max_with_nu_inf(tmp_path):
    """max-SLR rows with ν = ∞: the ∞ row sits one grid step above the largest finite ν, labelled ∞; the model
    is in the titles; a panel with ν = ∞ only works too."""
    from attnlimits.verify.slr.phase import _model_name, _nu_positions, phase_summary, plot_phase_diagram

    rows = [dict(r, model="max", nu=(math.inf if r["nu"] == 2.0 else r["nu"])) for r in _rows()]
    rows += [dict(r, model="max", L=5, nu=math.inf) for r in _rows() if r["L"] == 2 and r["nu"] == 1.0]
    assert _model_name(rows) == "max-SLR" and _model_name(_rows()) == "spiked-SLR"
    pos, labels, line = _nu_positions([0.5, 1.0, 2.0, 5.0, math.inf])
    assert pos[:4] == [0.5, 1.0, 2.0, 5.0] and pos[4] == pytest.approx(12.5) and labels[4] == "∞"
    assert line == pytest.approx(math.sqrt(5.0 * 12.5))
    assert _nu_positions([math.inf]) == ([1.0], ["∞"], None)
    assert phase_summary(rows)[5]["nu_range"] == (math.inf, math.inf)
    path = plot_phase_diagram(rows, tmp_path / "phase_max.png")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_phase_command_model_max_parses_and_refuses():
    from attnlimits.symbolic.result import InputError
    from attnlimits.verify.slr.phase import PHASE_COMMAND, run_phase

    p = PHASE_COMMAND.parse({"model": "max", "L": "2", "nu": "1,inf", "alpha": "1,4"})
    assert p["model"] == "max" and p["nu"] == [1.0, math.inf]
    assert PHASE_COMMAND.parse({})["model"] == "spiked"
    with pytest.raises(InputError, match="finite and > 0"):  # ν = ∞ is max-SLR only
        run_phase(PHASE_COMMAND.parse({"model": "spiked", "L": "2", "nu": "inf", "alpha": "1"}))


def test_phase_scan_continuation_modes(monkeypatch):
    """continuation="up" solves the α list in one continued curve; "none" solves every α from both cold starts."""
    import types

    import attnlimits.verify.slr.bayes_optimal as B
    from attnlimits.symbolic.result import InputError

    calls = []

    def fake(model, nu, L, alphas, delta, **kw):
        calls.append((model, nu, L, tuple(alphas)))
        br = [{"start": "uninformed", "E_BO": 0.5, "phi": 0.0}]
        return [types.SimpleNamespace(alpha=a, E_BO=0.5, branches=br) for a in alphas]

    monkeypatch.setattr(B, "bo_state_evolution", fake)
    rows = B.phase_scan((2,), (math.inf,), (1.0, 4.0), model="max")
    assert calls == [("max", math.inf, 2, (1.0, 4.0))] and rows[0]["continuation"] == "up"
    calls.clear()
    rows = B.phase_scan((2,), (math.inf,), (1.0, 4.0), model="max", continuation="none")
    assert calls == [("max", math.inf, 2, (1.0,)), ("max", math.inf, 2, (4.0,))]
    assert [r["alpha"] for r in rows] == [1.0, 4.0] and not any(r["hard"] for r in rows)
    with pytest.raises(InputError, match="continuation"):
        B.phase_scan((2,), (1.0,), (1.0,), continuation="down")


def test_phase_command_parses():
    from attnlimits.verify.slr.phase import PHASE_COMMAND

    p = PHASE_COMMAND.parse({"L": "2,3", "nu": "1,2", "alpha": "1,4"})
    assert p["L"] == [2, 3] and p["alpha"] == [1.0, 4.0] and p["plot"] == ""
    assert PHASE_COMMAND.function().__name__ == "run_phase"


def test_new_claims_registered():
    import attnlimits.verify.slr.claims.bayes_optimal  # noqa: F401
    from attnlimits.verify.claims.base import REGISTRY

    for name in ("C19-post", "C19-phase", "C19-phase-max"):
        assert name in REGISTRY and REGISTRY[name].quick and REGISTRY[name].full


def test_posterior_command_parses_and_refuses():
    from attnlimits.symbolic.result import InputError
    from attnlimits.verify.slr.posterior import POSTERIOR_COMMAND

    p = POSTERIOR_COMMAND.parse({"D": "30", "seeds": "1,2", "sweeps": "6", "burn_in": "6"})
    assert p["D"] == 30 and p["seeds"] == [1, 2]
    with pytest.raises(InputError, match="burn-in"):
        POSTERIOR_COMMAND.function()(p)
    with pytest.raises(InputError):
        POSTERIOR_COMMAND.parse({"delta": "0"})
