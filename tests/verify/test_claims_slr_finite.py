"""Structure of the finite-α SLR claims (attnlimits.verify.slr.claims.finite); the claims themselves run in
``attnlimits verify`` (and the slow all-claims test)."""
import math

import pytest

from attnlimits.verify.claims import base
from attnlimits.verify.slr.claims import finite as F


def test_registered_with_quick_and_full_sizes():
    for name in ("C15", "C15b", "C15c", "C16", "C17", "C17-random", "C18"):
        claim = base.REGISTRY[name]
        assert claim.quick and claim.full, name
        assert claim.source.startswith("arXiv:2509.21936")
    # 12 seeds: the t quantile at the run's Holm level needs dof ≫ 2 (the α = 4 run is C16's D = 400 run)
    assert base.REGISTRY["C15"].quick["D"] == 400 and base.REGISTRY["C15"].quick["seeds"] == 12
    assert dict(base.REGISTRY["C16"].quick["seeds_by_D"])[400] == 12
    # quick runs the replica solver (at the stored λ*), never reads the theory side from the table
    assert base.REGISTRY["C15b"].quick["rs"] == base.REGISTRY["C18"].quick["rs"] == "table-lambda"
    assert max(base.REGISTRY["C16"].full["D_scan"]) == 2000 and len(base.REGISTRY["C16"].quick["D_scan"]) >= 3
    assert base.REGISTRY["C18"].full["seeds"] == 5


def test_margin_is_three_standard_errors():
    assert F._margin("d", 0.07, 0.02).passed          # 0.07 > 0.06
    assert not F._margin("d", 0.05, 0.02).passed      # 0.05 < 0.06
    assert not F._margin("d", -0.01, 0.001).passed


def test_stored_rs_points_are_complete():
    for key, e in F.RS_TUNED.items():
        act, model, nu, L, alpha = key
        assert e["lam"] > 0 and 0 < e["E_test"] < 1.5 and e["E_test_error"] >= 0
        assert set(F.OV4) <= set(e["values"])
    size = {"rs": "table"}
    with pytest.raises(KeyError, match="no stored RS-tuned point"):
        F.rs_tuned_entry(None, size, "softmax", model="spiked", nu=9.0, L=7, alpha=3.0)
    with pytest.raises(KeyError, match="no stored RS-tuned λ"):
        F.rs_tuned_entry(None, {"rs": "table-lambda"}, "softmax", model="spiked", nu=9.0, L=7, alpha=3.0)


def test_stored_rs_tunings_are_package_data():
    """RS_TUNED is read from verify/slr/data/rs_tuned.json (written by tools/regen_rs_tuned.py), not a literal:
    the file round-trips through the writer, and its numbers are those the module used to hold as a
    literal (the digest below; a regeneration by the tool updates it on purpose)."""
    import hashlib
    from importlib.resources import files

    text = files("attnlimits.verify.slr").joinpath(F.RS_TUNED_DATA).read_text(encoding="utf-8")
    assert F.rs_tuned_json(F.load_rs_tuned(text)) == text
    assert F.load_rs_tuned(text) == F.RS_TUNED
    assert all(isinstance(g, tuple) for e in F.RS_TUNED.values() for g in e["grid"])
    # the tunings of C15b and C18 (spiked ν = 2, L = 3, α = 2, 10) are unchanged by the settings added since
    first = {k: v for k, v in F.RS_TUNED.items() if k[1:4] == ("spiked", 2.0, 3) and k[4] in (2.0, 10.0)}
    assert (hashlib.sha256(repr(sorted(first.items())).encode()).hexdigest()
            == "72b9b2adb3e4e74fe86a6fc0085c0a5074b09fc413162e164f4f9217a257939c")
    # the max-SLR finite-sample panel and C15c read ν = ∞, L = 3
    for act in ("softmax", "linear_uncentred"):
        for alpha in (1.0, 2.0, 4.0, 10.0, 20.0):
            assert (act, "max", math.inf, 3, alpha) in F.RS_TUNED


def test_live_tuning_runs_once_per_setting_and_refines_lambda_star(monkeypatch):
    """--full: C15b and C18 ask for the same (setting, activation, α): one grid tuning (at TUNE_RULE,
    no golden-section refinement) and one fixed point at λ* at the claim's rule, shared by both."""
    import attnlimits.verify.slr.replica as R

    calls = {"tune": [], "fp": []}

    class FP:
        def __init__(self, lam, rule):
            self.lam, self.E_test, self.E_test_error = lam, 0.5, 0.001
            self.values = dict(m_k=0.4, q_k=0.5, V_k=2.0, m_v=0.8, q_v=0.9, V_v=1.0)
            self.errors = {k: 0.0 for k in self.values}
            self.flags, self.rule = ("lambda_at_grid_edge",), rule

    class Problem:  # rs_problem(...) resolved once, its rule options recorded with every call
        def __init__(self, act, model, nu, L, **rule):
            self.rule = rule

        def tune_lambda(self, alpha, delta, **kw):
            calls["tune"].append({**self.rule, **kw})
            return FP(0.316, kw), []

        def fixed_point(self, alpha, lam, delta, **kw):
            calls["fp"].append((lam, {**self.rule, **kw}))
            return FP(lam, kw)

    monkeypatch.setattr(R, "rs_problem", Problem)
    ctx = base.Context(mode="full")
    full15b, full18 = base.REGISTRY["C15b"].full, base.REGISTRY["C18"].full
    assert full15b["rs"] == full18["rs"] == "live"
    a = F.rs_tuned_entry(ctx, full15b, "softmax", model="spiked", nu=2.0, L=3, alpha=2.0)           # as C15b
    b = F.rs_tuned_entry(ctx, full18, "softmax", model="spiked", nu=2.0, L=3, alpha=2.0, delta=0.1)  # as C18
    assert len(calls["tune"]) == 1 and len(calls["fp"]) == 1
    assert calls["tune"][0] == dict(F.TUNE_RULE, refine=False)
    lam, kw = calls["fp"][0]
    assert lam == 0.316 and kw["points"] == 4096 and kw["replicates"] == 4 and len(kw["x0"]) == 6
    assert a.lam == b.lam == 0.316 and "live" in a.source


def test_open_finding_is_reported_with_c15_not_checked():
    """The RS-vs-ERM finding outside R5 travels with C15's report (notes and parameters), as numbers."""
    note = F.open_finding_note()
    assert note.startswith("Open finding outside R5") and "docs/slr.md §12.1" in note
    for key, pt in F.OPEN_FINDING["points"].items():
        assert key in note and len(pt["gap"]) >= 3 and pt["slope_se"] > 0
        assert all(se > 0 for _, _, se in pt["gap"])


def _fake_erm(scale_of_D):
    """A stand-in for :func:`slr_finite.erm`: per seed, a distance scale(D)·√(χ²₃/3) (seeded)."""
    import numpy as np
    from types import SimpleNamespace

    def erm(ctx, activation, *, D, seeds, **kw):
        rng = np.random.default_rng(D)
        d = scale_of_D(D) * np.sqrt(rng.chisquare(3, seeds) / 3)
        return SimpleNamespace(seeds=[{"distance": float(x)} for x in d])

    return erm


def test_c16_rate_band_excludes_no_decay(monkeypatch):
    """C16's rate checks on synthetic ERM distances (no training): ∝ D^-1/2 passes with the band excluding
    0; a distance that does not shrink fails (the old quick band −0.5 ± 0.70 accepted it).  The full size
    also excludes −1 (D^−1); quick leaves it out (its statement says why)."""
    from attnlimits.verify.claims import Context

    claim = base.REGISTRY["C16"]
    assert tuple(claim.quick["wrong"]) == (0.0,) and "wrong" not in claim.full
    assert "cannot exclude −1" in claim.statement
    for size, n_rate in ((claim.quick, 2), ({**claim.full, "seeds_by_D": claim.quick["seeds_by_D"],
                                             "D_scan": claim.quick["D_scan"]}, 3)):
        monkeypatch.setattr(F, "erm", _fake_erm(lambda D: 0.9 / D ** 0.5))
        checks, _, params = F._c16(Context("quick"), size)
        rate = [c for c in checks if "slope" in c.label]
        # slope vs −1/2, band excludes 0 (and −1 at full size)
        assert len(rate) == n_rate and rate[0].stochastic and all(c.kind == "lower" for c in rate[1:])
        assert all(c.passed for c in rate), [(c.label, c.value, c.note) for c in rate]
        monkeypatch.setattr(F, "erm", _fake_erm(lambda D: 9.0 / D))  # a D^−1 law: the slope check fails
        checks, _, _ = F._c16(Context("quick"), size)
        rate = [c for c in checks if "slope" in c.label]
        assert not rate[0].passed and (n_rate == 2 or not rate[2].passed)
        assert params["seeds"] == [s for _, s in size["seeds_by_D"]]
        monkeypatch.setattr(F, "erm", _fake_erm(lambda D: 0.05))
        checks, _, _ = F._c16(Context("quick"), size)
        rate = [c for c in checks if "slope" in c.label]
        assert not rate[0].passed and not rate[1].passed


def test_loss_claim_registered_at_three_rs_stable_points_with_d_at_least_800():
    c = base.REGISTRY["C15-loss"]
    assert c.quick["D"] >= 800 and c.full["D"] >= 800
    assert len(c.quick["alphas"]) == 3 and c.quick["seeds"] >= 6 and c.full["seeds"] >= c.quick["seeds"]
    assert F.LOSS_SETTING["loss"] == "huber:1"


@pytest.mark.slow
def test_loss_claim_runs_end_to_end_at_a_tiny_size():
    """The claim's code path at D = 60, 3 seeds, one α (seconds): every check is built, the paired difference
    uses the same data (so its SE is far below the unpaired one), and the parameters record the loss."""
    ctx = base.Context("quick", device="cpu", seed=0)
    checks, plots, params = F._c15_loss(ctx, {"D": 60, "seeds": 3, "alphas": (4.0,)})
    labels = [ch.label for ch in checks]
    assert any("replicon" in ch.note for ch in checks)
    assert any("paired" in lab for lab in labels) and any("vs huber:1 RS" in lab for lab in labels)
    assert params["loss"] == "huber:1" and params["alpha4"]["rs"]["replicon"] < 1
    pd = params["alpha4"]["paired_difference"]
    assert pd["erm_se"] < params["alpha4"]["erm"]["E_test_overlaps_sd"]
    assert len(plots) == 1
