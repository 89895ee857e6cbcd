"""Assemble standalone solver files from the project's own source text (one source for exported code).

An exported file must run with numpy/scipy only, yet compute exactly what the in-process solver
computes.  Instead of keeping a second copy of a solver, the exporter copies the *text* of the
modules that make it (``inspect.getsource``) into the file and rewrites their imports of the
project's packages:

- :func:`module_text` — a whole module (say :mod:`attnlimits.numeric.slr.rs`): module docstring,
  ``from __future__`` and ``__all__`` dropped; every ``import``/``from ... import`` of a project
  package (``symbolic``, ``numeric``, ``derivations``, ``verify``, or relative) is replaced by
  ``pass`` when the file defines the imported names itself; names the file does not carry
  become stubs that raise when called (for example ``attnlimits.symbolic.codegen.ModuleBuilder`` inside
  ``compile_rs_kernels``, which an exported file never calls: its kernels are already printed).
- :func:`extract` — some top-level definitions of a module (say ``sobol_normal`` of
  :mod:`attnlimits.symbolic.gaussian`) with the module-level names and imports they use, transitively.
- :func:`assemble` — the file: a header docstring, the chunks in order, stubs, a ``main`` call;
  it refuses two chunks defining the same top-level name and checks, on the syntax tree, that
  the result imports no project package (:func:`project_imports`).

Later changes to the embedded modules flow into exports automatically; a change that makes a
module need something the file does not carry shows up as a stub (or an export-time error),
never as a silently different copy.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
import types

__all__ = ["ExportError", "write_atomic", "PROJECT_PACKAGES", "module_text", "extract", "assemble", "project_imports", "literal",
           "command_main",
           "third_party_imports", "top_level_names"]

PROJECT_PACKAGES = ("attnlimits",)  # the one import package; its subpackages are the layers


class ExportError(RuntimeError):
    """The exporter cannot build a standalone file (a bug of the exporter, not of the input)."""


def _is_project(node) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] in PROJECT_PACKAGES
    if isinstance(node, ast.Import):
        return any(a.name.split(".")[0] in PROJECT_PACKAGES for a in node.names)
    return False


def _bound(node) -> list:
    return [(a.asname or a.name.split(".")[0]) for a in node.names]


def project_imports(text: str) -> list:
    """The imports of project packages (or relative imports) anywhere in ``text``, as source lines."""
    tree = ast.parse(text)
    return [ast.get_source_segment(text, n) for n in ast.walk(tree)
            if isinstance(n, (ast.Import, ast.ImportFrom)) and _is_project(n)]


def third_party_imports(text: str) -> list:
    """Top-level names of the non-standard-library modules ``text`` imports (sorted)."""
    import sys

    std = set(getattr(sys, "stdlib_module_names", ())) | {"__future__"}
    out = set()
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.Import):
            out.update(a.name.split(".")[0] for a in n.names)
        elif isinstance(n, ast.ImportFrom) and n.level == 0:
            out.add((n.module or "").split(".")[0])
    return sorted(m for m in out if m and m not in std)


def top_level_names(text: str) -> set:
    """Names defined at the top level of ``text`` by ``def``, ``class`` or assignment (not imports)."""
    out = set()
    for n in ast.parse(text).body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.Assign):
            out.update(t.id for t in n.targets if isinstance(t, ast.Name))
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
    return out


def _source(obj) -> str:
    return obj if isinstance(obj, str) else inspect.getsource(obj)


def _replace_lines(text: str, edits) -> str:
    """Apply ``(first_line, last_line, replacement or None)`` edits (1-based, inclusive)."""
    lines = text.splitlines()
    for first, last, repl in sorted(edits, reverse=True):
        lines[first - 1:last] = [] if repl is None else [repl]
    return "\n".join(lines) + "\n"


def module_text(module, *, provided=(), stubs: set | None = None) -> str:
    """The source of ``module`` (a module or its text) with its project imports rewritten.

    ``provided``: names the exported file defines (an import of only such names becomes ``pass``).
    A project import of other names is removed too and the names are added to ``stubs`` (a set
    the caller passes to :func:`assemble`); without ``stubs`` such an import is an
    :class:`ExportError`.
    """
    text = _source(module)
    tree = ast.parse(text)
    provided = set(provided)
    edits = []
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        edits.append((body[0].lineno, body[0].end_lineno, None))
    for n in body:
        if isinstance(n, ast.ImportFrom) and n.module == "__future__":
            edits.append((n.lineno, n.end_lineno, None))
        elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets):
            edits.append((n.lineno, n.end_lineno, None))
    lines = text.splitlines()
    for n in ast.walk(tree):
        if not (isinstance(n, (ast.Import, ast.ImportFrom)) and _is_project(n)):
            continue
        names = _bound(n)
        if any(a.name == "*" for a in n.names):
            raise ExportError(f"star import in embedded source: {ast.get_source_segment(text, n)}")
        missing = [m for m in names if m not in provided]
        if missing:
            if stubs is None:
                raise ExportError(f"the exported file does not carry {', '.join(missing)} "
                                  f"({ast.get_source_segment(text, n)})")
            stubs.update(f"{m}:{ast.get_source_segment(text, n)}" for m in missing)
        indent = lines[n.lineno - 1][:n.col_offset]
        have = [m for m in names if m not in missing]
        note = "; ".join(([f"{', '.join(have)}: defined in this file"] if have else [])
                         + ([f"{', '.join(missing)}: stubs (not part of this exported file)"] if missing else []))
        stmt = " ".join(ast.get_source_segment(text, n).split())
        # at the top level a comment is enough; inside a block the statement becomes ``pass``
        edits.append((n.lineno, n.end_lineno, f"# {stmt}  ({note})" if not indent else f"{indent}pass  # {note}"))
    return _replace_lines(text, edits).strip("\n") + "\n"


def _free_names(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def extract(module: types.ModuleType, names) -> str:
    """Top-level definitions ``names`` of ``module`` with the module-level definitions and imports
    they use (transitively), in the module's order.  A needed import of a project package is an
    :class:`ExportError`."""
    text = inspect.getsource(module)
    tree = ast.parse(text)
    defs, imports = {}, {}
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs[n.name] = n
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name) and t.id != "__all__":
                    defs[t.id] = n
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            defs[n.target.id] = n
        elif isinstance(n, (ast.Import, ast.ImportFrom)) and not (isinstance(n, ast.ImportFrom)
                                                                  and n.module == "__future__"):
            for b in _bound(n):
                imports[b] = n
    todo, keep, keep_imports = list(names), [], []
    while todo:
        name = todo.pop()
        if name in imports:
            n = imports[name]
            if _is_project(n):
                raise ExportError(f"{module.__name__}.{names}: needs {ast.get_source_segment(text, n)}")
            if n not in keep_imports:
                keep_imports.append(n)
            continue
        if name not in defs:
            if name in names:
                raise ExportError(f"{module.__name__} has no top-level {name!r}")
            continue  # a builtin or a local name
        n = defs[name]
        if n in keep:
            continue
        keep.append(n)
        todo.extend(_free_names(n) - {name})
    keep_imports.sort(key=lambda n: n.lineno)
    keep.sort(key=lambda n: n.lineno)
    seg = []
    for n in keep:
        start = min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])])
        seg.append("\n".join(text.splitlines()[start - 1:n.end_lineno]))
    imp = "\n".join(ast.get_source_segment(text, n) for n in keep_imports)
    return (imp + "\n\n\n" if imp else "") + "\n\n\n".join(seg) + "\n"


def _stub_source(stubs) -> str:
    out = []
    for item in sorted(stubs):
        name, _, origin = item.partition(":")
        out.append(textwrap.dedent(f'''\
            def {name}(*args, **kwargs):
                """Stand-in for ``{origin.strip()}``: not part of this exported file."""
                raise RuntimeError("{name} is not part of this exported file (it needs the attnlimits package)")
            '''))
    return "\n\n".join(out)


def write_atomic(path, text: str):
    """Write an exported file atomically: a temporary file in the same folder, then a rename over
    ``path`` (:func:`attnlimits.symbolic.files.write_text_atomic`), so that a write failing partway
    (disk full, Ctrl-C) leaves the previous file intact; the file honours the umask (0644 under the
    usual 022: readable by the colleague it is meant for).  An ``OSError`` names the path in one line."""
    from pathlib import Path

    from attnlimits.symbolic.files import write_text_atomic

    path = Path(path)
    try:
        return write_text_atomic(path, text)
    except OSError as exc:
        raise OSError(f"cannot write {path}: {exc.strerror or exc}") from None


def assemble(docstring: str, chunks, *, stubs=(), main: str | None = None) -> str:
    """The text of a standalone file: ``docstring``, then each ``(title, text)`` chunk under a
    comment banner, stubs for ``stubs`` (from :func:`module_text`), and ``main`` (source appended
    last).  Refuses duplicate top-level names across chunks and any remaining project import."""
    seen: dict = {}
    from attnlimits.symbolic.codegen import comment_safe, doc_safe

    parts = ['"""' + doc_safe(docstring.strip("\n")) + '\n"""', "from __future__ import annotations"]
    stub_names = {s.partition(":")[0] for s in stubs}
    for title, text in chunks:
        for name in top_level_names(text):
            if name in seen:
                raise ExportError(f"top-level name {name!r} defined by both {seen[name]!r} and {title!r}")
            seen[name] = title
        bar = "# " + "=" * 93
        parts.append(f"{bar}\n# {comment_safe(title)}\n{bar}\n\n{text.strip()}")
    stub_names -= set(seen)
    if stub_names:
        parts.append(_stub_source([s for s in stubs if s.partition(":")[0] in stub_names]))
    if main:
        parts.append(main.strip())
    out = "\n\n\n".join(parts) + "\n"
    left = project_imports(out)
    if left:
        raise ExportError(f"the exported file still imports the project: {left[0]}")
    compile(out, "<export>", "exec")
    return out


def literal(text: str) -> str:
    """``text`` as a Python string literal that reads like the text (raw triple quotes when possible)."""
    if "'''" not in text and not text.endswith("\\") and "\r" not in text:
        return "r'''" + text + "'''"
    return repr(text)


def command_main(argv=None):
    """Command line of an exported command (copied into exported files by :func:`extract`).

    The file defines ``PARAMETERS`` (the command's :class:`attnlimits.symbolic.result.Param` specs, minus
    those fixed at export time), ``FIXED`` (those values), ``TABLE``, ``DESCRIPTION``,
    ``EXAMPLES``, ``run(params, *, progress)`` and the CLI's ``_add_params`` and ``format_rows``;
    options are parsed and validated exactly as by ``attnlimits``, and the rows printed the same
    way (table, ``--json`` or ``--csv``).  Bad input and failed solves print one line, exit 2.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,  # noqa: F821
        epilog="examples:\n" + "\n".join(f"  {e}" for e in EXAMPLES))  # noqa: F821
    _add_params(parser, PARAMETERS)  # noqa: F821
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON (one object per row)")
    out.add_argument("--csv", action="store_true", help="print CSV (one line per row)")
    args = parser.parse_args(argv)
    fmt = "json" if args.json else "csv" if args.csv else "table"
    rows = []
    try:
        params = {p.name: p.parse(getattr(args, p.name, None)) for p in PARAMETERS}  # noqa: F821
        params.update(FIXED)  # noqa: F821
        for row in run(params, progress=lambda msg: print(msg, file=sys.stderr, flush=True)):  # noqa: F821
            rows.append(row)  # rows come as they finish: a stop keeps them
    except KeyboardInterrupt:
        if rows:
            print(format_rows(rows, TABLE, fmt))  # noqa: F821
        print(f"interrupted after {len(rows)} finished row(s)", file=sys.stderr)
        return 130
    except (InputError, ConvergenceError) as exc:  # noqa: F821
        print(f"error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    except MemoryError as exc:
        print(f"error: not enough memory for this size ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})",
              file=sys.stderr)
        return 2
    except (ValueError, ArithmeticError) as exc:  # defensive: one line, never a traceback
        print(f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", file=sys.stderr)
        return 2
    if not rows:
        print("error: nothing computed", file=sys.stderr)
        return 2
    print(format_rows(rows, TABLE, fmt))  # noqa: F821
    return 0
