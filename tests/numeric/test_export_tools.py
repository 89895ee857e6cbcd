"""attnlimits.numeric.export: standalone files assembled from the project's own source text."""
from __future__ import annotations

import numpy as np
import pytest

from attnlimits.numeric import export as X

MODULE = '''"""doc"""
from __future__ import annotations

import math

from .portable_solver import ConvergenceError

__all__ = ["f"]


def f(x):
    from attnlimits.symbolic.codegen import ModuleBuilder, load_module

    return math.sqrt(x)
'''


def test_module_text_rewrites_project_imports_and_stubs_the_rest():
    stubs: set = set()
    text = X.module_text(MODULE, provided={"ConvergenceError", "load_module"}, stubs=stubs)
    assert X.project_imports(text) == []
    assert "__all__" not in text and '"""doc"""' not in text and "__future__" not in text
    assert {s.partition(":")[0] for s in stubs} == {"ModuleBuilder"}
    assert "    pass  # load_module: defined in this file; ModuleBuilder: stubs" in text
    ns: dict = {}
    exec(compile(X.assemble("t", [("m", text)], stubs=stubs), "<t>", "exec"), ns)  # noqa: S102 - our text
    assert ns["f"](4.0) == 2.0
    with pytest.raises(RuntimeError, match="not part of this exported file"):
        ns["ModuleBuilder"]()


def test_missing_names_without_stubs_and_duplicates_are_export_errors():
    with pytest.raises(X.ExportError, match="ConvergenceError"):
        X.module_text(MODULE, provided={"load_module", "ModuleBuilder"})
    with pytest.raises(X.ExportError, match="defined by both"):
        X.assemble("t", [("a", "def g():\n    pass\n"), ("b", "g = 1\n")])
    with pytest.raises(X.ExportError, match="still imports the project"):
        X.assemble("t", [("a", "import attnlimits.numeric.replica\n")])


def test_extract_carries_dependencies_and_runs_alone():
    import attnlimits.symbolic.gaussian as SG

    text = X.extract(SG, ["sobol_normal"])
    assert "_SOBOL_RNG_KEYWORD =" in text and "from scipy.stats import qmc" in text and "sympy" not in text
    ns: dict = {}
    exec(compile(text, "<t>", "exec"), ns)  # noqa: S102 - our text
    np.testing.assert_array_equal(ns["sobol_normal"](16, 3, seed=5, replicates=2),
                                  SG.sobol_normal(16, 3, seed=5, replicates=2))


def test_literal_round_trips():
    for s in ("a\\\\b\\n'x'\n", "r'''x'''", "tail\\\\"):
        assert eval(X.literal(s)) == s  # noqa: S307 - our literal
