"""A name or module imported by another part of the project is public.

A leading underscore says "internal to this module" (for a name) or "internal to this package" (for a
module): code elsewhere may not rely on it, so it can be renamed or removed without a search. That promise
only holds if nothing outside breaks it, so this test walks the AST of every non-test ``.py`` file of
``attnlimits/``, ``derivations/``, ``symbolic/``, ``numeric/`` and ``verify/`` and fails when

(a) a module imports a name beginning with one underscore (``from attnlimits.x import _name``) from
    another module of the project — binding a public name to a private alias (``import x as _x``,
    ``from m import f as _f``) is fine: the check is on the imported name, not the local one; dunder
    names (``__version__``) are not private;
(b) a module imports a project module whose last component begins with an underscore
    (``attnlimits.verify._io``) from outside that module's own package folder — a private module may be
    used by its siblings in the same folder only; once another package needs it, it is de facto public
    and gets a public name and a docstring.

Relative imports are resolved against the importing file's package, so ``from .._x import y`` is
checked like its absolute spelling.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# folder → dotted package it installs as (pyproject.toml [tool.setuptools] package-dir)
LAYERS = {
    "attnlimits": "attnlimits",
    "derivations": "attnlimits.derivations",
    "symbolic": "attnlimits.symbolic",
    "numeric": "attnlimits.numeric",
    "verify": "attnlimits.verify",
}


def _private(part):
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _modules():
    """Yield (path, dotted module name, dotted package name) for every project source file."""
    for folder, dotted in LAYERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("").parts
            package = ".".join((dotted,) + rel[:-1])
            module = package if rel[-1] == "__init__" else f"{package}.{rel[-1]}"
            yield path, module, package


def _project_modules():
    return {module for _, module, _ in _modules()}


def _resolve(node, package):
    """The absolute module name of an ImportFrom node (relative levels resolved against ``package``)."""
    if node.level == 0:
        return node.module or ""
    base = package.split(".")
    if node.level > 1:
        base = base[: -(node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _violations():
    known = _project_modules()
    found = []
    for path, module, package in _modules():
        where = path.relative_to(ROOT)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            targets = []  # (imported module, line)
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(node, package)
                if not source.startswith("attnlimits"):
                    continue
                targets = [source]
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    if full in known:  # `from package import _module` imports a module
                        targets.append(full)
                    elif _private(alias.name) and source != module:
                        found.append(f"{where}:{node.lineno}: imports private name {alias.name!r} from {source}")
            for target in targets:
                if not target.startswith("attnlimits"):
                    continue
                parts = target.split(".")
                for i in range(1, len(parts)):
                    if _private(parts[i]):
                        owner = ".".join(parts[:i])  # the package folder holding the private module
                        if package != owner:
                            found.append(
                                f"{where}:{node.lineno}: imports private module {'.'.join(parts[: i + 1])} "
                                f"from outside its package {owner}"
                            )
                        break
    return sorted(set(found))


def test_the_scan_sees_the_project():
    """Guard against a vacuous pass: the walk finds the layers' modules."""
    known = _project_modules()
    assert "attnlimits.verify.cli.parser" in known
    assert "attnlimits.symbolic.codegen" in known


def test_no_private_name_or_module_crosses_its_boundary():
    found = _violations()
    assert not found, (
        "private names/modules used outside their module/package (make them public: drop the underscore, "
        "add a docstring, update every import):\n" + "\n".join(found)
    )
