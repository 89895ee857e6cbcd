"""One module of symbols per result, and no two SymPy symbols of one name with different
assumptions inside a result (two such symbols print alike and never cancel: a silent bug)."""
from __future__ import annotations

import importlib
import pkgutil

import pytest
import sympy as sp

from attnlimits import derivations


def _result_packages():
    return sorted(m.name for m in pkgutil.iter_modules(derivations.__path__) if m.ispkg)


def _symbols_of(obj, out, depth=0):
    if depth > 3:
        return
    if isinstance(obj, sp.Symbol):
        out.add(obj)
    elif isinstance(obj, sp.Basic):
        out.update(s for s in obj.free_symbols if isinstance(s, sp.Symbol))
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            _symbols_of(x, out, depth + 1)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _symbols_of(k, out, depth + 1)
            _symbols_of(v, out, depth + 1)
    elif hasattr(obj, "unknowns") and hasattr(obj, "updates"):  # an EquationSystem
        _symbols_of(list(obj.unknowns) + list(obj.parameters) + list(obj.updates), out, depth + 1)


@pytest.mark.parametrize("package", _result_packages())
def test_one_assumption_set_per_name(package):
    pkg = importlib.import_module(f"attnlimits.derivations.{package}")
    found: set = set()
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_driver"):
            continue  # portable source, runs inside generated modules only
        mod = importlib.import_module(f"attnlimits.derivations.{package}.{info.name}")
        for name, value in vars(mod).items():
            if not name.startswith("__"):
                _symbols_of(value, found)
    by_name: dict = {}
    for s in found:
        by_name.setdefault(s.name, set()).add(tuple(sorted(k for k, v in s._assumptions_orig.items() if v)))
    clashes = {n: a for n, a in by_name.items() if len(a) > 1}
    assert not clashes, f"attnlimits.derivations.{package}: symbols of one name with different assumptions: {clashes}"


@pytest.mark.parametrize("package", _result_packages())
def test_a_symbols_module_per_result(package):
    importlib.import_module(f"attnlimits.derivations.{package}.symbols")
