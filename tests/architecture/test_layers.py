"""The import rule as a test: derivations → symbolic; numeric → symbolic; verify → all;
nothing imports verify but the CLI entry point, the top-level public API (``attnlimits/``) and
tests (GUIDE §1, README "Layout").  The layers are the subpackages of the one import package
``attnlimits`` (``attnlimits.derivations`` is the folder ``derivations/``, and so on).

Every ``import``/``from … import`` statement of every module is read from its AST, including
imports inside functions (a lazy import is still an import).  Dotted strings resolved at run
time (entry points, ``Command.run``) are data, not imports.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("derivations", "symbolic", "numeric", "verify")
#: folders of scripts run from the checkout root (not installed): they may import any layer, like tests
SCRIPTS = ("benchmarks", "studies", "tools")

#: package → the project packages it may import
ALLOWED = {
    "symbolic": {"symbolic"},
    "derivations": {"derivations", "symbolic"},
    "numeric": {"numeric", "symbolic"},
    "verify": {"verify", "derivations", "numeric", "symbolic"},
}


def _layer(dotted: str) -> str:
    """The layer a dotted module name belongs to: ``attnlimits.numeric.replica`` → ``numeric``;
    a bare old-style name (``numeric.replica``) is reported as itself so that it is caught."""
    parts = dotted.split(".")
    if parts[0] == "attnlimits":
        return parts[1] if len(parts) > 1 else "attnlimits"
    return parts[0]


def _imports(path: Path, pkg: str | None = None):
    tree = ast.parse(path.read_text(), filename=str(path))
    pkg = pkg or path.relative_to(ROOT).parts[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, _layer(a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: stays inside its own package
                yield node.lineno, pkg
            elif node.module == "attnlimits":  # from attnlimits import numeric, ...
                for a in node.names:
                    yield node.lineno, a.name if a.name in PACKAGES else "attnlimits"
            elif node.module:
                yield node.lineno, _layer(node.module)


def _modules(pkg):
    return sorted(p for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("pkg", PACKAGES)
def test_layers(pkg):
    bad = []
    for path in _modules(pkg):
        for line, top in _imports(path):
            if (top in PACKAGES and top not in ALLOWED[pkg]) or top == "attnlimits":
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {top}")
    assert not bad, "import rule violated:\n" + "\n".join(bad)


def test_only_cli_and_tests_import_verify():
    bad = []
    for pkg in ("derivations", "symbolic", "numeric") + SCRIPTS:
        if not (ROOT / pkg).exists():
            continue
        for path in _modules(pkg):
            if pkg in SCRIPTS:
                continue  # benchmarks, studies and tools are scripts, like tests
            for line, top in _imports(path):
                if top == "verify":
                    bad.append(f"{path.relative_to(ROOT)}:{line}")
    assert not bad, "verify is imported outside verify/, the CLI and tests:\n" + "\n".join(bad)


def test_the_walker_sees_lazy_imports(tmp_path):
    # the check itself can fail: an import inside a function is found
    f = tmp_path / "probe.py"
    f.write_text("def f():\n    from attnlimits.derivations import slr\n    from . import x\n"
                 "    import attnlimits.verify.cli as c\n    from attnlimits import symbolic\n"
                 "    import numeric.replica\n")
    found = [top for _, top in _imports(f, pkg="numeric")]
    assert found == ["derivations", "numeric", "verify", "symbolic", "numeric"]
    assert "derivations" not in ALLOWED["numeric"]


def test_no_old_top_level_names():
    """Every project import goes through ``attnlimits``: a bare ``import numeric`` (the layout
    before the one import name) would load a second copy of a module under another name."""
    bad = []
    for pkg in PACKAGES + ("tests", "attnlimits") + SCRIPTS:
        for path in _modules(pkg):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module] if isinstance(node, ast.ImportFrom) and not node.level else [])
                bad += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names
                        if n and n.split(".")[0] in PACKAGES]
    assert not bad, "old top-level import names:\n" + "\n".join(bad)


def test_light_modules_import_no_sympy():
    """The command line's parser reads only plain data: attnlimits.symbolic.result and every Result module."""
    import subprocess
    import sys

    code = ("import sys; import attnlimits.verify.cli as c; c.build_parser(); "
            "bad = [m for m in ('sympy', 'torch', 'scipy') if m in sys.modules]; "
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"building the parser imported {out.stdout.strip()}"


def test_the_numeric_engine_does_not_import_a_result():
    """numeric/'s top-level modules are the engine (fixed points, frozen maps, code generation, export): they never
    import a result's solvers (numeric/slr/...), which build on them."""
    bad = []
    for path in sorted((ROOT / "numeric").glob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                names = [("." * node.level) + mod] + [("." * node.level) + f"{mod}.{a.name}".strip(".") for a in node.names]
            for n in names:
                if n.startswith(("attnlimits.numeric.slr", ".slr")):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {n}")
    assert not bad, "the numeric engine imports a result's solvers:\n" + "\n".join(bad)
