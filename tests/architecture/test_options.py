"""One options merge: every options object is combined with its keyword overrides by
:func:`attnlimits.symbolic.options.resolve_options`, so an unknown keyword gets the same one-line
:class:`InputError` everywhere.  The test reads every module's AST for a ``replace(…, **overrides)``
call (a mapping passed through) outside the helper.

``numeric/portable_solver.py`` is exempt: it is copied verbatim into the standalone files of
``attnlimits export`` and may import nothing from the package.
"""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from attnlimits.symbolic.options import resolve_options
from attnlimits.symbolic.result import InputError

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("derivations", "symbolic", "numeric", "verify")
HELPER = ROOT / "symbolic" / "options.py"
EXEMPT = {ROOT / "numeric" / "portable_solver.py"}


def _merges(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            # ``**overrides`` (a mapping passed through), not ``**{field: value}`` built on the spot
            if name == "replace" and any(k.arg is None and isinstance(k.value, ast.Name) for k in node.keywords):
                yield node.lineno


def test_no_options_merge_outside_the_helper():
    found = [f"{p.relative_to(ROOT)}:{line}" for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))
             if p != HELPER and p not in EXEMPT for line in _merges(p)]
    assert not found, f"replace(..., **overrides) outside symbolic/options.py: {found}"


def test_the_check_sees_a_merge(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("import dataclasses\ndef f(o, **kw):\n    return dataclasses.replace(o, **kw)\n")
    assert list(_merges(p)) == [3]


@dataclasses.dataclass(frozen=True)
class _Opts:
    tol: float = 1e-8
    steps: int = 10


def test_resolve_options():
    assert resolve_options(_Opts, None) == _Opts()
    o = _Opts(steps=3)
    assert resolve_options(_Opts, o, {}) is o
    assert resolve_options(_Opts, o, {"tol": 1e-3}) == _Opts(tol=1e-3, steps=3)
    with pytest.raises(InputError, match=r"_Opts has no option 'tolx' \(its options: steps, tol\)"):
        resolve_options(_Opts, None, {"tolx": 1})
    with pytest.raises(InputError, match="options must be a _Opts, not dict"):
        resolve_options(_Opts, {"tol": 1}, {})
