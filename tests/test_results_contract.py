"""One contract for every registered result (the two real ones and a test-only toy).

Each result must be discovered (entry points, or registered in-process), have its commands built
into the command line with ``--help`` and examples, run its commands' parameter parsing, export a
standalone file when it declares an exporter, and register claims with sizes and sources.  The
toy result (``tests/plugins``) also runs its command, its export and its claims end to end.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from attnlimits.symbolic.result import (
    REQUIRED,
    Result,
    discover_results,
    register_result,
    resolve,
)

PLUGINS = Path(__file__).parent / "plugins"


@pytest.fixture(scope="module", autouse=True)
def toy():
    sys.path.insert(0, str(PLUGINS))
    import toy_result

    register_result(toy_result.RESULT)
    yield toy_result.RESULT
    sys.path.remove(str(PLUGINS))
    from attnlimits.symbolic import result as R

    R._EXTRA.pop(toy_result.RESULT.name, None)  # registered for this module only


def _toy_result():
    sys.path.insert(0, str(PLUGINS))
    try:
        import toy_result
    finally:
        sys.path.remove(str(PLUGINS))
    return toy_result.RESULT


def _names():
    """Every registered result (the registry's own :func:`discover_results`) and the test-only toy:
    never a hand-kept list."""
    return sorted(set(discover_results()) | {_toy_result().name})


def test_real_results_come_from_entry_points():
    from importlib.metadata import entry_points

    eps = {ep.name for ep in entry_points(group="attnlimits.results")}
    assert len(eps) >= 2, eps  # this project's own results are installed as plug-ins
    assert eps <= set(discover_results())


@pytest.mark.parametrize("name", _names())
def test_discovered_and_declared(name):
    res = discover_results()[name]
    assert isinstance(res, Result) and res.title and res.references and res.commands
    for cmd in res.commands:
        assert callable(cmd.function()), cmd.run
        assert cmd.examples, f"{name} {cmd.name}: give at least one example"
        names = [p.name for p in cmd.parameters]
        assert len(names) == len(set(names))
        for p in cmd.parameters:  # every default parses to itself
            if p.default is not REQUIRED and p.default is not None:
                p.parse(p.default)


@pytest.mark.parametrize("name", _names())
def test_cli_is_built_from_the_registry(name, capsys):
    from attnlimits.verify.cli import main

    res = discover_results()[name]
    for cmd in res.commands:
        argv = [name] + ([cmd.name] if cmd.name else []) + ["--help"]
        with pytest.raises(SystemExit) as e:
            main(argv)
        out = capsys.readouterr().out
        assert e.value.code == 0 and "examples:" in out
        for p in cmd.parameters:
            assert p.option in out, f"{p.option} missing from {' '.join(argv)}"
        assert "--threads" in out and "--json" in out


@pytest.mark.parametrize("name", _names())
def test_claims_registered_with_sizes_and_sources(name):
    from attnlimits.verify.claims import REGISTRY, load_claims

    res = discover_results()[name]
    load_claims({name: res})
    mods = res.claims if isinstance(res.claims, tuple) else (res.claims,)
    mine = [c for c in REGISTRY.values() if c.run.__module__ in mods]
    assert mine, f"{name}: no claim registered by {mods}"
    for c in mine:
        assert c.source and isinstance(c.quick, dict) and isinstance(c.full, dict)


def test_toy_runs_end_to_end(tmp_path, capsys):
    from attnlimits.verify.claims import REGISTRY, Context, load_claims, run_claims
    from attnlimits.verify.cli import main

    assert main(["toy", "--a", "0.5,1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["a"] for r in rows] == [0.5, 1.0]
    assert rows[1]["x"] == pytest.approx(0.7390851332151607, abs=1e-12)  # Dottie's number
    # exact continuation slope: dx/da = cos x / (1 + a sin x)
    import math

    x = rows[0]["x"]
    assert rows[0]["dx_da"] == pytest.approx(math.cos(x) / (1 + 0.5 * math.sin(x)), rel=1e-10)
    # exported, and the exported file prints the same numbers with only numpy
    path = tmp_path / "toy.py"
    assert main(["export", "toy", "-o", str(path)]) == 0
    capsys.readouterr()
    proc = subprocess.run([sys.executable, str(path), "--a", "0.5,1", "--json"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    exported = json.loads(proc.stdout)
    assert [r["x"] for r in exported] == pytest.approx([r["x"] for r in rows], abs=1e-13)
    bad = subprocess.run([sys.executable, str(path), "--a", "x"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    # its claims run and pass
    load_claims({"toy": discover_results()["toy"]})
    (res,) = run_claims([REGISTRY["TOY-1"]], Context("quick"))
    assert res.verdict == "pass", res.notes


def test_toy_bad_input_is_one_line(capsys):
    from attnlimits.verify.cli import main

    assert main(["toy", "--a", "-1"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--a must be > 0" in err


def test_resolve_names_module_attribute():
    assert resolve("json:dumps") is json.dumps


def _all_properties(names=None):
    """(result name, property) for every result of ``names`` (default: installed and the toy)."""
    out = []
    for name in names or _names():
        out += [(name, p) for p in getattr(discover_results()[name], "properties", ())]
    return out


def test_properties_are_declared_well(monkeypatch):
    """Every property of every result (entry points, the toy, the explore toy): a unique name, its own
    result's name, a callable evaluation, a domain of specs, validity-map axes inside the domain."""
    import toy_properties
    from attnlimits.symbolic import result as R
    from attnlimits.symbolic.properties import Property, simplest_point

    monkeypatch.setitem(R._EXTRA, "toyexplore", toy_properties.RESULT)
    props = _all_properties()  # the registry lists the in-process toy too
    assert {p.name for p in toy_properties.PROPERTIES} <= {p.name for r, p in props if r == "toyexplore"}
    names = [p.name for _, p in props]
    assert len(names) == len(set(names)), names
    assert len({r for r, _ in props} - {_toy_result().name, "toyexplore"}) >= 2  # the real results declare some
    for res, p in props:
        assert isinstance(p, Property) and p.result == res and p.title
        assert callable(resolve(p.evaluate)), p.evaluate
        assert set(p.map_axes()) <= set(p.domain), (p.name, p.map_axes())
        point = simplest_point(p)
        assert all(p.domain[k].contains(v) for k, v in point.items()), (p.name, point)


def _run_property_at_simplest_point(prop):
    from attnlimits.symbolic.properties import simplest_point
    from attnlimits.verify.comparison import Comparison

    from attnlimits.symbolic.properties import NotEvaluable

    try:
        pairs = list(resolve(prop.evaluate)(simplest_point(prop), size=dict(prop.quick), seed=0))
    except NotEvaluable as why:  # a precondition (e.g. GAMP's convergence) is not met there: not a verdict
        pytest.skip(f"{prop.name} is not evaluable at its simplest point: {why}")
    assert pairs, prop.name
    for label, comp in pairs:
        assert isinstance(label, str) and isinstance(comp, Comparison), (prop.name, label)
    return pairs


def test_toy_properties_run(monkeypatch):
    """A plug-in's properties run through the contract like the real ones (the planted one fails at
    x = 0.7 + and passes at its simplest point x = 0)."""
    import toy_properties

    for prop in toy_properties.PROPERTIES:
        for label, comp in _run_property_at_simplest_point(prop):
            assert comp.passes(0.01), (prop.name, label, comp)


#: properties whose simplest point takes more than about 10 s at screening size on two busy cores (ERM
#: training at two D, bulk traces by dense eigendecompositions, a population optimum plus 4·10⁵ Monte
#: Carlo sequences, 2 × 64 kernel draws): run under ``-m slow``; their fast checks are in
#: tests/verify/test_explore_properties_levels.py
_SLOW_AT_SIMPLEST = {"slr-replica-vs-erm-models", "slr-replica-vs-erm-loss", "slr-replica-vs-erm-max", "slr-population-vs-mc",
                     "rmt-bulk-traces", "rmt-frobenius-vs-m1"}


@pytest.mark.parametrize("prop", [pytest.param(p, marks=pytest.mark.slow) if p.name in _SLOW_AT_SIMPLEST else p
                                  for _, p in _all_properties([n for n in _names() if n != _toy_result().name])],
                         ids=lambda p: p.name)
def test_every_property_passes_at_its_simplest_point(prop):
    """Each installed result's properties evaluate at the simplest point of their domains at their
    screening size, return labelled comparisons, and pass there (a per-check level of 1e-4: one
    point, a handful of checks).  About 20 s for all of them on two cores."""
    for label, comp in _run_property_at_simplest_point(prop):
        assert comp.passes(1e-4), (prop.name, label, comp.to_dict())
