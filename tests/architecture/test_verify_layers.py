"""The subpackages of verify/ import one way: the command line on top, then figures, explore and reports,
then sweeps, then what every part shares (claims, comparison, statistics, I/O).

Each rule lists what a subpackage may *not* import (any module under ``verify/<name>/``, or
``verify/<name>.py``).  The imports are read from the source (absolute ``attnlimits.verify.X`` and
relative ones), inside functions too, so a late import cannot hide an edge.
"""
from __future__ import annotations

import ast
from pathlib import Path

VERIFY = Path(__file__).resolve().parents[2] / "verify"

#: subpackage → the parts of verify/ it must not import
FORBIDDEN = {
    "figures": {"cli", "report", "explore"},
    "explore": {"cli", "figures", "report"},
    "report": {"cli", "figures", "explore", "sweep"},
    "sweep": {"cli", "figures", "report", "explore"},
    # what every part shares imports none of the parts
    "claims": {"cli", "figures", "report", "explore", "sweep"},
    "comparison": {"cli", "figures", "report", "explore", "sweep"},
    "stats": {"cli", "figures", "report", "explore", "sweep"},
    "outputs": {"cli", "figures", "report", "explore", "sweep"},
    "flags": {"cli", "figures", "report", "explore", "sweep"},
    "torch_device": {"cli", "figures", "report", "explore", "sweep"},
    "weights": {"cli", "figures", "report", "explore", "sweep"},
    "rmt": {"cli", "figures", "report", "explore", "sweep"},
}

#: the one module outside the command line that reads it: an exported solver copies the command line's
#: option and row printers as source text (attnlimits export slr)
READS_THE_CLI = {"slr/export.py"}


def imported_parts(path: Path) -> set[str]:
    """The parts of verify/ (first component under verify/) that the module at ``path`` imports."""
    rel = path.relative_to(VERIFY).parts
    package = ["attnlimits", "verify", *rel[:-1]]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                names = [".".join(base + [node.module])] if node.module else [".".join(base + [a.name])
                                                                               for a in node.names]
            else:
                names = [node.module or ""]
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["attnlimits", "verify"] and len(parts) > 2:
                out.add(parts[2])
    return out - {rel[0].removesuffix(".py")}


def _part_modules(part: str):
    folder = VERIFY / part
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [VERIFY / f"{part}.py"]


def test_rule_reader_sees_relative_and_late_imports(tmp_path):
    """The reader itself, on an independent example: a relative import inside a function counts."""
    global VERIFY
    saved = VERIFY
    try:
        VERIFY = tmp_path
        (tmp_path / "figures").mkdir()
        mod = tmp_path / "figures" / "x.py"
        mod.write_text("def f():\n    from ..report import write_report\n    import attnlimits.verify.sweep.grid\n"
                       "from .drawing import axes\n")
        assert imported_parts(mod) == {"report", "sweep"}
    finally:
        VERIFY = saved


def test_subpackages_import_one_way():
    bad = []
    for part, forbidden in FORBIDDEN.items():
        modules = _part_modules(part)
        assert modules and all(m.exists() for m in modules), part
        for mod in modules:
            hit = imported_parts(mod) & forbidden
            if hit:
                bad.append(f"verify/{mod.relative_to(VERIFY)} imports {', '.join(sorted(hit))}")
    assert bad == []


def test_nothing_in_verify_imports_the_command_line():
    """Only the command line's own modules import it (and the export that copies its printers' source)."""
    users = [str(p.relative_to(VERIFY)) for p in VERIFY.rglob("*.py")
             if p.relative_to(VERIFY).parts[0] != "cli" and "cli" in imported_parts(p)]
    assert sorted(users) == sorted(READS_THE_CLI)


def test_shared_figure_and_report_modules_name_no_result():
    """The figure machinery and the command line name no result: panels come from the manifests."""
    import attnlimits.verify.figures.drawing as drawing
    import attnlimits.verify.figures.registry as registry
    from attnlimits.symbolic.result import discover_results

    names = set(discover_results())
    for mod in (drawing, registry, *(VERIFY / "cli").glob("*.py")):
        text = Path(mod.__file__).read_text() if hasattr(mod, "__file__") else mod.read_text()
        for name in names:
            assert f'"{name}"' not in text and f"'{name}'" not in text, (mod, name)
