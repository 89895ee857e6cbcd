"""Claims of docs/slr.md: the registry and the quoted-vs-derived verdicts (fast, theory-only parts)."""
from __future__ import annotations

from attnlimits.verify.claims import REGISTRY, Context, run_claims, select

NAMES = [f"C{i}" for i in range(1, 15)] + [f"C{i}" for i in range(20, 25)] + ["TRAIN-pop", "Q1", "Q2", "Q3"]


def test_registry_has_every_population_claim():
    for name in NAMES:
        assert name in REGISTRY, name
        c = REGISTRY[name]
        assert "slr" in c.tags and c.source and c.statement
        assert any("2509.21936" in r for r in c.references)
    assert all(REGISTRY[q].quoted for q in ("Q1", "Q2", "Q3"))
    assert not any(REGISTRY[n].quoted for n in NAMES if not n.startswith("Q"))
    assert {"C15", "C16", "C17", "C18", "C19-R6"} <= set(REGISTRY)  # finite-sample claims (slr_finite, BO)


def test_quoted_forms_are_discrepancies_with_both_numbers():
    res = run_claims(select(["Q1", "Q2", "Q3"]), Context("quick"))
    for r in res:
        assert r.verdict == "discrepancy", (r.claim, r.notes)
        assert r.checks and any(c.passed is False for c in r.checks)
    q1 = res[0]
    # derived values (the 'value' column) are L, L-1, L at L = 3; the quoted one is L/(L-1) = 1.5
    l3 = [c for c in q1.checks if c.label.startswith("L=3")]
    assert [c.value for c in l3] == [3.0, 2.0, 3.0] and all(c.theory == 1.5 for c in l3)
    q2 = res[1]
    assert all(not c.passed for c in q2.checks)
    q3 = res[2]
    spiked = [c for c in q3.checks if c.label.startswith("spiked")]
    assert spiked and all(not c.passed for c in spiked)  # readings below the population Bayes error


def test_theory_only_claims_pass():
    res = run_claims(select(["C10"]), Context("quick"))  # C22 has Monte Carlo now: test_c22_rate_is_fitted_on_monte_carlo
    for r in res:
        assert r.verdict == "pass", [(c.label, c.theory, c.value) for c in r.checks if not c.passed] or r.notes


def test_c11_decay_rates_on_monte_carlo():
    """Linear attention ∝ 1/ν and softmax ∝ e^(−ν/4) fitted on Monte Carlo population risks: both bands
    contain the predicted rate and exclude the wrong ones (0 and −2; 0 and the quoted −1)."""
    from attnlimits.verify.slr.claims import population_limits as P

    checks, series = P._c11_mc_rates(Context("quick"), dict(REGISTRY["C11"].quick))
    slopes = [c for c in checks if c.stochastic]
    assert len(slopes) == 3 and {c.theory for c in slopes} == {-1.0, -0.25}
    excl = [c for c in checks if c.kind == "lower"]
    assert len(excl) == 6 and all(c.passed for c in checks), [(c.label, c.value) for c in checks if not c.passed]
    assert any("excluded: +0, -1" in c.label for c in slopes) and series


def test_c22_rate_is_fitted_on_monte_carlo():
    res = run_claims(select(["C22"]), Context("quick"))[0]
    mc = [c for c in res.checks if c.label.startswith("MC excess risk")]
    assert len(mc) == 3 and mc[0].stochastic and mc[0].theory == -0.5
    assert res.verdict == "pass" and abs(res.params["slope"] + 0.5) < 5 * res.params["slope_se"]
