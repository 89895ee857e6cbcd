"""The docstring examples of every module, run against the *installed* package.

Doctests are collected here rather than with ``--doctest-modules``: pytest would import each file
of ``derivations/``, ``symbolic/``, ... under a name made from its path (``numeric.bayes``), a
second copy beside the installed ``attnlimits.numeric.slr.bayes_risk``.  Here each module is imported by its
one name, and every module whose source holds an example (``>>>``) is one test.
"""
from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("attnlimits", "derivations", "symbolic", "numeric", "verify")
#: examples that take minutes (quadratures at many digits): run with ``-m slow``
SLOW = {"attnlimits.numeric.slr.bayes_risk"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts if parts[0] == "attnlimits" else ["attnlimits", *parts])


def _modules_with_examples():
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            if "__pycache__" not in path.parts and ">>>" in path.read_text(encoding="utf-8"):
                name = _module_name(path)
                yield pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name


MODULES = list(_modules_with_examples())


def test_examples_are_found():
    assert len(MODULES) >= 10


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    assert Path(module.__file__).resolve().is_relative_to(ROOT), module.__file__
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(module) if t.examples]
    assert tests, f"{name} has '>>>' in its source but no docstring example"
    for t in tests:
        runner.run(t)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} examples of {name} failed (output above)"
