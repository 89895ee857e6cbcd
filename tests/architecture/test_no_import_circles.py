"""No two modules of the package import each other (STRUCTURE "Smaller items": each circle broken by a move or
an injected argument).  Every ``import`` / ``from … import`` of every module is read from its AST, lazy ones
inside functions included (a lazy import hides a circle, it does not remove it); ``from pkg import name``
counts as an import of the submodule ``pkg.name`` when there is one, else of ``pkg``.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("derivations", "symbolic", "numeric", "verify")


def _name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["attnlimits", *parts])


def _modules(root: Path = ROOT, packages=PACKAGES) -> dict:
    return {_name(p, root): p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))
            if "__pycache__" not in p.parts}


def _graph(mods: dict) -> dict:
    """module → {imported module of ``mods``: first line}."""
    def known(dotted):  # the longest prefix that is a module of ours
        parts = dotted.split(".")
        for i in range(len(parts), 1, -1):
            if ".".join(parts[:i]) in mods:
                return ".".join(parts[:i])
        return None

    graph = {}
    for name, path in mods.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        out: dict = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here[: len(here) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in mods]
                targets = subs + ([base] if len(subs) < len(node.names) else [])
            else:
                continue
            for t in targets:
                m = known(t)
                if m and m != name:
                    out.setdefault(m, node.lineno)
        graph[name] = out
    return graph


def _circles(graph: dict) -> list:
    return sorted(f"{a}:{graph[a][b]} <-> {b}:{graph[b][a]}"
                  for a in graph for b in graph[a] if a < b and a in graph.get(b, {}))


def test_no_two_modules_import_each_other():
    circles = _circles(_graph(_modules()))
    assert not circles, "modules importing each other (break by a move or an injected argument):\n" + "\n".join(circles)


def test_the_check_sees_a_lazy_circle(tmp_path):
    pkg = tmp_path / "numeric"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from attnlimits.numeric.a import g\n")
    (pkg / "c.py").write_text("from .a import x\n")
    circles = _circles(_graph(_modules(tmp_path, ("numeric",))))
    assert circles == ["attnlimits.numeric.a:1 <-> attnlimits.numeric.b:2"]
