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
    res = run_claims(select(["C10", "C22"]), Context("quick"))
    for r in res:
        assert r.verdict == "pass", [(c.label, c.theory, c.value) for c in r.checks if not c.passed] or r.notes
