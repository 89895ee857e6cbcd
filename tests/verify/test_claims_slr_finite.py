"""Structure of the finite-α SLR claims (verify.claims.slr_finite); the claims themselves run in
``attnlimits verify`` (and the slow all-claims test)."""
import pytest

from verify.claims import base
from verify.claims import slr_finite as F


def test_registered_with_quick_and_full_sizes():
    for name in ("C15", "C15b", "C16", "C17", "C18"):
        claim = base.REGISTRY[name]
        assert claim.quick and claim.full, name
        assert claim.source.startswith("arXiv:2509.21936")
    assert base.REGISTRY["C15"].quick["D"] == 400 and base.REGISTRY["C15"].quick["seeds"] == 3
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
