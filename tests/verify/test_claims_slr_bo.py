"""C19-order's 1/α rate on GAMP runs (attnlimits.verify.slr.claims.bayes_optimal._gamp_rate).

The fast tests replace GAMP by a seeded synthetic excess (no simulation); the claim itself runs at --quick in
the slow test (≈ 20 s on 2 cores)."""
from __future__ import annotations

import numpy as np
import pytest
from attnlimits.verify.claims import REGISTRY, Context, run_claims, select
from attnlimits.verify.slr.claims import bayes_optimal as B


def _fake(excess_of_alpha):
    def fake(nu, L, alpha, D, seed, points, device):
        rng = np.random.default_rng(seed)
        return float(excess_of_alpha(alpha) * (1 + 0.05 * rng.standard_normal())), True

    return fake


def test_gamp_rate_passes_on_a_one_over_alpha_excess(monkeypatch):
    monkeypatch.setattr(B, "_gamp_excess", _fake(lambda a: 0.09 / a))
    checks, series, params = B._gamp_rate(Context("quick"), dict(REGISTRY["C19-order"].quick), 2, 2.0, 0.2248)
    rate = [c for c in checks if "log α" in c.label]
    assert len(rate) == 3 and rate[0].stochastic and rate[0].theory == -1.0
    assert all(c.passed for c in checks), [(c.label, c.value) for c in checks if not c.passed]
    assert params["seeds"] == REGISTRY["C19-order"].quick["gamp_seeds"] and series


def test_gamp_rate_fails_without_an_approach(monkeypatch):
    monkeypatch.setattr(B, "_gamp_excess", _fake(lambda a: 0.005))
    checks, _, _ = B._gamp_rate(Context("quick"), dict(REGISTRY["C19-order"].quick), 2, 2.0, 0.2248)
    rate = [c for c in checks if "log α" in c.label]
    assert not rate[0].passed and not rate[1].passed  # slope ≈ 0: not −1, and 0 is not excluded


@pytest.mark.slow
def test_c19_order_passes_in_quick_mode():
    res = run_claims(select(["C19-order"]), Context("quick"))[0]
    assert res.verdict == "pass", [(c.label, c.value, c.note) for c in res.checks if not c.passed]
    assert abs(res.params["gamp"]["slope"] + 1) < 4 * res.params["gamp"]["slope_se"]
