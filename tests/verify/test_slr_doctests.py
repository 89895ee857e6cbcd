"""Docstring examples of the SLR modules run as tests (numeric.bayes, the kernel bundle, the wrappers)."""
from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", [pytest.param("numeric.bayes", marks=pytest.mark.slow), "symbolic.bundle",
                                  "verify.slr.theory", "derivations.slr.population"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
