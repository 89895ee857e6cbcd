"""The mutation hook of the power benchmark (:mod:`attnlimits.symbolic.mutation`, ``benchmarks/mutants.py``).

A plant changes the value it targets by its stated factor, in its region only; the context manager
restores the original objects (unplanted values bit-identical afterwards), the aliases made by
``from x import f`` and the cache folder; a changed SymPy expression hashes differently (why caches
keyed by the expression hash need no clearing).
"""
from __future__ import annotations

import functools
import os
import sys
import types
from pathlib import Path

import pytest

from attnlimits.symbolic import mutation as M

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def toy(monkeypatch):
    """A throw-away module ``attnlimits._mutation_toy`` with a function, a cached function and an alias."""
    mod = types.ModuleType("attnlimits._mutation_toy")
    calls = []

    def risk(x, region="a"):
        return {"risk": 0.1 * x + 0.3, "other": 7.0}

    @functools.lru_cache(maxsize=None)
    def cached(x):
        calls.append(x)
        return 2.0 * x

    risk.__module__ = cached.__module__ = mod.__name__  # as if defined there
    mod.risk, mod.cached = risk, cached
    alias = types.ModuleType("attnlimits._mutation_toy_user")
    alias.risk = risk  # as ``from attnlimits._mutation_toy import risk`` would leave it
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    monkeypatch.setitem(sys.modules, alias.__name__, alias)
    return mod, alias, calls


def test_scale_return_acts_by_its_factor_in_its_region_only_and_is_undone_exactly(toy):
    mod, alias, _ = toy
    original = mod.risk
    plant = M.Plant("toy", "toy", "risk 2 % too large for x > 1", "attnlimits._mutation_toy:risk",
                    M.scale_return(0.02, field="risk", where=lambda a, k, r: a[0] > 1), 0.02, "x > 1")
    xs = (0.5, 1.0, 1.5, 3.0)
    before = [mod.risk(x) for x in xs]
    with M.planted(plant):
        inside = [mod.risk(x) for x in xs]
        via_alias = [alias.risk(x) for x in xs]
        assert M.active() == (plant,)
    for x, b, i, a in zip(xs, before, inside, via_alias):
        factor = 1.02 if x > 1 else 1.0
        assert i["risk"] == pytest.approx(b["risk"] * factor, rel=1e-15)
        assert i["other"] == b["other"]  # only the named field
        assert a == i  # the alias is planted too
    assert mod.risk is original and alias.risk is original  # the same object back
    assert [mod.risk(x) for x in xs] == before  # bit-identical
    assert M.active() == ()


def test_caches_are_cleared_on_entry_and_exit(toy):
    mod, _, calls = toy
    mod.cached(3.0)
    plant = M.Plant("toy-risk", "toy", "", "attnlimits._mutation_toy:risk", M.scale_return(0.01), 0.01)
    with M.planted(plant):
        mod.cached(3.0)  # recomputed inside: the clean value was not served from the cache
    mod.cached(3.0)  # and again after: no value made under the plant is kept
    assert calls == [3.0, 3.0, 3.0]


def test_the_disk_cache_is_a_temporary_folder_while_planted(toy, monkeypatch, tmp_path):
    monkeypatch.setenv("ATTNLIMITS_CACHE_DIR", str(tmp_path))
    plant = M.Plant("toy-risk", "toy", "", "attnlimits._mutation_toy:risk", M.scale_return(0.01), 0.01)
    with M.planted(plant):
        inside = os.environ["ATTNLIMITS_CACHE_DIR"]
        assert inside != str(tmp_path) and Path(inside).is_dir()
    assert os.environ["ATTNLIMITS_CACHE_DIR"] == str(tmp_path)
    assert not Path(inside).exists()  # removed: nothing planted is left for a later run


def test_an_error_inside_the_block_still_restores(toy):
    mod, _, _ = toy
    original = mod.risk
    plant = M.Plant("toy-risk", "toy", "", "attnlimits._mutation_toy:risk", M.scale_return(0.01), 0.01)
    with pytest.raises(RuntimeError):
        with M.planted(plant):
            raise RuntimeError("boom")
    assert mod.risk is original


def test_bad_targets_are_refused():
    with pytest.raises(ValueError, match="package.module:attribute"):
        M.resolve_target("attnlimits.symbolic.mutation")
    with pytest.raises(ValueError, match="no attribute"):
        M.resolve_target("attnlimits.symbolic.mutation:nothing_here")


def test_scale_expr_in_a_region_changes_the_expression_hash():
    import sympy as sp

    from attnlimits.symbolic.codegen import expression_hash

    c, x = sp.symbols("c x", positive=True)
    expr = x / (1 + c * x)
    new = M.scale_expr(0.02, c > 1)(expr)
    assert new.subs({c: 2, x: 1}) == sp.Rational(51, 50) * expr.subs({c: 2, x: 1})  # exact: no Float
    assert new.subs({c: sp.Rational(1, 2), x: 1}) == expr.subs({c: sp.Rational(1, 2), x: 1})
    assert not new.atoms(sp.Float)
    assert expression_hash(new) != expression_hash(expr)  # hash-keyed code caches see a new expression


def test_map_system_changes_only_the_updates():
    import sympy as sp

    from attnlimits.symbolic.system import EquationSystem

    x, a = sp.symbols("x a")
    s = EquationSystem("dottie", [x], [a], [a * sp.cos(x)], {"x": x}, initial_guess=[0])
    t = M.map_system(lambda ups: [u * sp.Rational(51, 50) for u in ups])(s)
    assert t.updates == (sp.Rational(51, 50) * a * sp.cos(x),)
    assert s.updates == (a * sp.cos(x),) and t.observables == s.observables and t is not s


def test_catalogue_is_large_and_covers_both_results():
    sys.path.insert(0, str(BENCH))
    try:
        import mutants
    finally:
        sys.path.remove(str(BENCH))
    plants = mutants.PLANTS_LIST
    assert len(plants) >= 20
    assert {p.result for p in plants} >= {"rmt", "slr"}
    assert all(0.01 <= p.size <= 0.03 for p in plants)
    assert sum(p.size >= 0.02 for p in plants) > len(plants) / 2
    assert all(":" in p.target for p in plants)


def test_a_catalogue_plant_on_the_bayes_risk_acts_only_for_nu_above_2():
    sys.path.insert(0, str(BENCH))
    try:
        import mutants
    finally:
        sys.path.remove(str(BENCH))
    from attnlimits.verify.slr.problem import slr_problem
    from attnlimits.verify.slr.theory import theory_of

    def bayes(nu):
        return theory_of(slr_problem("spiked", nu, 2)).bayes_risk().value

    clean = {nu: bayes(nu) for nu in (1.5, 3.0)}
    with mutants.planted("slr-bayes-nu>2"):
        inside = {nu: bayes(nu) for nu in (1.5, 3.0)}
    assert inside[3.0] == pytest.approx(1.02 * clean[3.0], rel=1e-14)
    assert inside[1.5] == clean[1.5]
    assert {nu: bayes(nu) for nu in (1.5, 3.0)} == clean  # bit-identical after


def test_every_named_dict_cache_exists_and_the_rmt_property_caches_are_cleared_by_a_plant():
    """Each ``DICT_CACHES`` entry names a dict of the package; the random-matrix properties' per-activation
    caches (Hermite data, exported files) are emptied when a plant goes in, and the derived M₁ and bulk system
    are ``lru_cache``s (cleared with the others), so a planted derivation is never served from an earlier run."""
    import importlib

    for entry in M.DICT_CACHES:
        mod, attr = entry.split(":")
        assert isinstance(getattr(importlib.import_module(mod), attr), dict), entry
    from attnlimits.verify.rmt import properties as P

    P._hermite_data("tanh")
    assert P._HERMITE
    with M.planted(M.Plant("noop", "rmt", "no change", "attnlimits.verify.rmt.properties:m1_value",
                           M.map_return(lambda r, a, k: r), 0.01, "everywhere", "coefficient", (), ())):
        assert not P._HERMITE
    assert hasattr(P._large_gamma_m1, "cache_clear") and hasattr(P._bulk_compiled, "cache_clear")
