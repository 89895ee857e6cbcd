"""``attnlimits show``: the equations a result's solvers use, as the derivation defines them.

``attnlimits show RESULT`` lists the result's items (systems, observables, closed forms, properties);
``attnlimits show RESULT ITEM`` prints one, specialised by ``--activation``/``--L``/``--model``/
``--variant`` where the item takes them, in ``--format text|latex|markdown|json`` (json: ``srepr``
strings that :func:`attnlimits.symbolic.render.from_srepr` turns back into SymPy objects).  An item
is a list of definitions in the paper's notation, later rows using the symbols of earlier ones, with
a legend of every symbol; ``--substitute`` inlines the definitions.  ``attnlimits show RESULT
--format FORMAT`` prints every item of the result as one document, in the order of its docs page
(``latex``: a file pdfLaTeX compiles, each equation labelled).  ``--jacobian`` adds the symbolic
Jacobian of a system, ``--code numpy|mpmath`` prints the generated solver module.
``--update-docs``/``--check-docs`` regenerate / check the equation blocks of the docs that are
marked ``<!-- show: RESULT ITEM [--option value ...] -->`` … ``<!-- /show -->``.
"""
from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from dataclasses import replace
from pathlib import Path

__all__ = ["add_parser", "build_item", "render_item", "result_document", "doc_blocks", "update_docs"]

EXAMPLES = (
    "attnlimits show rmt",
    "attnlimits show rmt bulk_system --activation relu",
    "attnlimits show rmt ridge --format latex",
    "attnlimits show rmt ridge --substitute",
    "attnlimits show rmt --format latex > rmt_equations.tex",
    "attnlimits show slr rs_channel --L 3 --format markdown",
    "attnlimits show rmt bulk_system --jacobian",
    "attnlimits show rmt bulk_system --code numpy > rmt_solver.py",
    "attnlimits show --check-docs",
)

FORMATS = ("text", "latex", "markdown", "json")
_OPTIONS = ("activation", "L", "model", "variant", "loss")
DOCS = Path(__file__).resolve().parents[2] / "docs"


def add_parser(sub, examples):
    p = sub.add_parser("show", help="show a result's equations (systems, observables, closed forms) as the code has them",
                       formatter_class=argparse.RawDescriptionHelpFormatter, description=__doc__.split("\n\n")[0]
                       + "\n\n" + "\n".join(__doc__.split("\n\n")[1].splitlines()), epilog=examples(*EXAMPLES))
    p.add_argument("result", nargs="?", help="result name (attnlimits --help lists them)")
    p.add_argument("item", nargs="?", help="item name (without it: the list)")
    p.add_argument("--activation", help="specialise to an activation (a name or a formula in t)")
    p.add_argument("--L", help="sequence length, where the item takes one")
    p.add_argument("--model", help="data model (spiked or max), where the item takes one")
    p.add_argument("--variant", help="linear variant, where the item takes one")
    p.add_argument("--loss", help="per-sample loss (square, huber:DELTA, pseudo_huber:DELTA, logcosh or a formula "
                                  "in r), where the item takes one")
    from attnlimits.numeric.models import BACKENDS

    p.add_argument("--format", choices=FORMATS,
                   help="output format (default: text); without ITEM, the whole result as one document")
    p.add_argument("--substitute", action="store_true",
                   help="inline every definition (each row in the unknowns and parameters alone)")
    p.add_argument("--jacobian", action="store_true", help="add the symbolic Jacobian of a system")
    p.add_argument("--code", choices=BACKENDS, help="print the generated solver source")
    p.add_argument("--update-docs", action="store_true", help="regenerate the marked equation blocks of docs/*.md")
    p.add_argument("--check-docs", action="store_true", help="exit 1 when a marked block of docs/*.md is stale")
    p.set_defaults(_handler=_run)
    return p


def result_named(name):
    """The discovered result called ``name``; an unknown name raises InputError listing the results."""
    from attnlimits.symbolic.result import InputError, discover_results

    results = discover_results()
    if name not in results:
        raise InputError(f"no result {name!r}; results: {', '.join(results)}")
    return results[name]


def build_item(result_name: str, item_name: str, **options):
    """The :class:`attnlimits.symbolic.render.Formula` of ``item_name``, specialised by ``options``."""
    from attnlimits.symbolic.result import InputError, resolve

    res = result_named(result_name)
    items = {it.name: it for it in res.item_list()}
    if item_name not in items:
        raise InputError(f"{result_name} has no item {item_name!r}; items: {', '.join(items)}")
    item = items[item_name]
    given = {k: v for k, v in options.items() if v is not None}
    extra = [k for k in given if k not in item.parameters]
    if extra:
        takes = ", ".join(f"--{p}" for p in item.parameters) or "no option"
        raise InputError(f"--{extra[0]} does not apply to {result_name} {item_name} (it takes {takes})")
    if "L" in given:
        try:
            given["L"] = int(given["L"])
        except ValueError:
            raise InputError(f"--L must be an integer, got {given['L']!r}") from None
        if not 1 <= given["L"] <= 8:
            raise InputError(f"--L must lie in 1..8 for show (SymPy work grows fast with L), got {given['L']}")
    kwargs = {**dict(item.defaults), **given}
    formula = resolve(item.build)(**kwargs)
    if not formula.notation:
        formula.notation = notation(res)
    return formula, item


def notation(res) -> dict:
    """The result's notation table (``NOTATION`` beside its ``ITEMS``): code name → (LaTeX, meaning)."""
    import importlib

    if isinstance(res.items, str):
        return dict(getattr(importlib.import_module(res.items.split(":")[0]), "NOTATION", {}) or {})
    return {}


def render_item(formula, fmt: str = "text", *, jacobian=False, substitute=False) -> str:
    """``formula`` in ``fmt``; ``jacobian`` appends the Jacobian of a system (:meth:`Formula.jacobian`),
    ``substitute`` inlines the definitions (:meth:`Formula.inline`)."""
    from attnlimits.symbolic.result import InputError

    if jacobian:
        if formula.kind != "system":
            raise InputError(f"{formula.name or formula.title}: --jacobian applies to systems only "
                             f"(this is a {formula.kind.replace('_', ' ') or 'formula'})")
        jac = formula.jacobian()
        base = formula.inline() if substitute else formula
        formula = replace(base, equations=list(base.equations) + list(jac.equations),
                          notes=tuple(base.notes) + tuple(jac.notes))
    elif substitute:
        formula = formula.inline()
    if fmt == "latex":
        return formula.to_latex_block().rstrip("\n")
    return {"text": formula.to_text, "markdown": formula.to_markdown, "json": formula.to_json}[fmt]()


def _list(res) -> str:
    lines = [f"{res.name}: {res.title}", ""]
    items = res.item_list()
    if not items:
        return "\n".join(lines + ["(this result declares no items)"])
    width = max(len(it.name) for it in items)
    for kind in ("system", "observable", "closed_form", "property"):
        sel = [it for it in items if it.kind == kind]
        if sel:
            lines.append(kind.replace("_", " ") + "s:")
            for it in sel:
                opts = " ".join(f"--{p}" for p in it.parameters)
                lines.append(f"  {it.name:<{width}}  {it.title}  [{it.section}]" + (f"  ({opts})" if opts else ""))
    props = getattr(res, "properties", ()) or ()
    if props:
        lines.append("properties (attnlimits explore):")
        for p in props:
            lines.append(f"  {p.name:<{width}}  {p.title}")
    return "\n".join(lines)


# --- docs blocks ------------------------------------------------------------------------------------

_BLOCK = re.compile(r"(<!-- show: (?P<spec>[^>]*?) -->\n)(?P<body>.*?)(<!-- /show -->)", re.S)


def _block_text(spec: str) -> str:
    words = shlex.split(spec)
    if len(words) < 2:
        raise ValueError(f"a show marker needs RESULT ITEM, got {spec!r}")
    options, rest = {}, words[2:]
    while rest:
        key = rest.pop(0)
        if not key.startswith("--") or not rest:
            raise ValueError(f"bad option in show marker {spec!r}")
        options[key[2:]] = rest.pop(0)
    formula, _ = build_item(words[0], words[1], **options)
    return formula.to_markdown().rstrip("\n") + "\n"


def doc_blocks(docs=DOCS):
    """``(page, spec, current body, regenerated body)`` for every marked block of the docs."""
    out = []
    for page in sorted(Path(docs).glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for m in _BLOCK.finditer(text):
            out.append((page, m.group("spec"), m.group("body"), _block_text(m.group("spec"))))
    return out


def update_docs(docs=DOCS) -> list:
    from attnlimits.verify.outputs import write_text

    changed = []
    for page in sorted(Path(docs).glob("*.md")):
        text = page.read_text(encoding="utf-8")
        new = _BLOCK.sub(lambda m: m.group(1) + _block_text(m.group("spec")) + m.group(4), text)
        if new != text:
            write_text(page, new)
            changed.append(page.name)
    return changed


def _run(args) -> int:
    from attnlimits.symbolic.result import InputError

    if args.update_docs or args.check_docs:
        if args.check_docs:
            stale = [f"{p.name}: {spec}" for p, spec, body, new in doc_blocks() if body != new]
            for s in stale:
                print(f"stale: {s}")
            print(f"{len(doc_blocks())} marked equation blocks, {len(stale)} stale"
                  + ("; run attnlimits show --update-docs" if stale else ""))
            return 1 if stale else 0
        changed = update_docs()
        print("updated: " + (", ".join(changed) if changed else "nothing (every block is current)"))
        return 0
    if not args.result:
        raise InputError("name a result: attnlimits show rmt (attnlimits show --help)")
    res = result_named(args.result)
    if not args.item:
        if args.code:
            return _code(res, args.code)
        if args.jacobian or args.substitute or any(getattr(args, k) is not None for k in _OPTIONS):
            raise InputError("--jacobian, --substitute and the specialising options apply to one item: "
                             f"attnlimits show {args.result} ITEM ...")
        if args.format is None:
            print(_list(res))
            return 0
        print(result_document(args.result, args.format, progress=True), end="")
        return 0
    options = {k: getattr(args, k) for k in _OPTIONS}
    item = {it.name: it for it in res.item_list()}.get(args.item)
    if item is not None and item.slow:
        print(f"building {args.result} {args.item} (SymPy, a few seconds the first time)...", file=sys.stderr)
    formula, item = build_item(args.result, args.item, **options)
    if args.code:
        return _code(res, args.code)
    print(render_item(formula, args.format or "text", jacobian=args.jacobian, substitute=args.substitute))
    return 0


# --- the whole result as one document ---------------------------------------------------------------

_HEADING = re.compile(r"^(?P<hashes>#{2,4})\s+(?P<number>\d+(?:\.\d+)*)\.?\s+(?P<title>.*?)\s*$", re.M)
_BOLD = re.compile(r"^\*\*(?P<number>\d+\.\d+(?:\.\d+)*) (?P<title>[^*]*?)\*\*", re.M)  # **4.1 Hermite data.**
_SECTION = re.compile(r"§\s*(\d+(?:\.\d+)*)")


def _doc_sections(res) -> dict:
    """``number -> (position, heading title, anchor)`` of the numbered headings of the result's docs page."""
    page = Path(__file__).resolve().parents[2] / (res.doc or "")
    if not res.doc or not page.is_file():
        return {}
    text = page.read_text(encoding="utf-8")
    out, anchor = {}, ""
    found = sorted([(m.start(), m) for m in _HEADING.finditer(text)] + [(m.start(), m) for m in _BOLD.finditer(text)],
                   key=lambda x: x[0])
    for i, (_, m) in enumerate(found):
        if m.re is _HEADING:  # GitHub's anchor of the heading
            heading = (m.group("number") + (". " if m.group("hashes") == "##" else " ") + m.group("title")).lower()
            anchor = re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")
        out.setdefault(m.group("number"), (i, m.group("title").rstrip("."), anchor))  # a bold one: its section's
    return out


def _md_to_tex(text: str) -> str:
    """A markdown heading as LaTeX text: ``$…$`` kept as math, code spans in ``\\texttt``, the rest escaped."""
    from attnlimits.symbolic.render import latex_text

    parts = text.split("$")
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append("$" + part + "$")
        else:
            out.append(re.sub(r"\\texttt\\\{(.*?)\\\}", lambda m: "\\texttt{" + m.group(1) + "}",
                              latex_text(re.sub(r"`([^`]*)`", lambda m: "\x00" + m.group(1) + "\x01", part))
                              .replace("\x00", "\\texttt{").replace("\x01", "}")))
    return "".join(out)


def result_document(result_name: str, fmt: str, *, build=None, progress: bool = False) -> str:
    """Every item of ``result_name`` (its defaults) as one document in ``fmt``, grouped by the section
    of the result's docs page each item belongs to, in the page's order.

    ``latex``: a standalone ``article`` (amsmath, amssymb, hyperref) that pdfLaTeX compiles, each
    equation labelled ``eq:<result>:<item>:<name>`` and each section pointing to its docs section;
    ``markdown``: the same as a markdown page (links to the docs sections); ``text``; ``json``: the
    items' :meth:`~attnlimits.symbolic.render.Formula.to_dict` in order.  ``build(result, item)``
    (default :func:`build_item`) returns an item's Formula (tests pass a cached one).
    """
    from attnlimits.symbolic.render import latex_text

    res = result_named(result_name)
    build = build or (lambda r, i: build_item(r, i)[0])
    sections = _doc_sections(res)
    items = list(res.item_list())

    for number in {m.group(1) for it in items for m in [_SECTION.search(it.section or "")] if m}:
        parent = number
        while parent not in sections and "." in parent:  # a subsection without its own heading
            parent = parent.rsplit(".", 1)[0]
        if number not in sections and parent in sections:
            pos, title, anchor = sections[parent]
            sections[number] = (pos + 0.5, title, anchor)

    def key(it):
        m = _SECTION.search(it.section or "")
        number = m.group(1) if m else ""
        return number, (sections.get(number, (len(sections), "", ""))[0], number)

    order = sorted(range(len(items)), key=lambda k: (key(items[k])[1], k))
    groups: list = []
    for k in order:
        number = key(items[k])[0]
        if not groups or groups[-1][0] != number:
            groups.append((number, []))
        if progress:
            print(f"building {result_name} {items[k].name} ({len(sum((g[1] for g in groups), [])) + 1}/"
                  f"{len(items)})...", file=sys.stderr)
        groups[-1][1].append((items[k], build(result_name, items[k].name)))
    doc = res.doc or ""
    if fmt == "json":
        return json.dumps({"result": res.name, "title": res.title, "doc": doc,
                           "items": [f.to_dict() for _, its in groups for _, f in its]},
                          indent=2, ensure_ascii=False) + "\n"
    if fmt == "text":
        out = [f"{res.name}: {res.title}", ""]
        for number, its in groups:
            title = sections.get(number, (0, "", ""))[1]
            out += [f"§{number} {title}".rstrip(), "=" * min(78, len(f"§{number} {title}")), ""]
            out += [f.to_text() + "\n" for _, f in its]
        return "\n".join(out)
    if fmt == "markdown":
        out = [f"# {res.name}: {res.title}", "",
               f"Every equation of the result as the code has it (`attnlimits show {res.name} --format markdown`), "
               f"in the order of [{doc}]({doc}).", ""]
        for number, its in groups:
            _, title, anchor = sections.get(number, (0, "", ""))
            out += [f"## §{number} {title}".rstrip(), "", f"Documented in [{doc} §{number}]({doc}#{anchor}).", ""]
            for _, f in its:
                out += [f"### `{f.name}`", "", f.to_markdown(), ""]
        return "\n".join(out).rstrip() + "\n"
    if fmt != "latex":
        raise ValueError(f"unknown format {fmt!r}")
    out = [r"\documentclass{article}", r"\usepackage{amsmath}", r"\usepackage{amssymb}", r"\usepackage{hyperref}",
           r"\allowdisplaybreaks", r"\setlength{\emergencystretch}{3em}",
           r"\title{" + latex_text(f"{res.name}: {res.title}") + "}",
           r"\author{generated by \texttt{attnlimits show " + latex_text(res.name) + r" --format latex}}",
           r"\date{}", r"\begin{document}", r"\maketitle", "",
           "Every equation of the result as the code has it: the derivation's own SymPy objects, printed in "
           "the paper's notation, in the order of " + r"\texttt{" + latex_text(doc) + "}.", ""]
    for number, its in groups:
        _, title, anchor = sections.get(number, (0, "", ""))
        out += [r"\section*{\S" + number + " " + _md_to_tex(title) + "}",
                r"\label{sec:" + res.name + ":" + number + "}", ""]
        for _, f in its:
            link = (r"Documented in \href{" + doc + "#" + anchor + r"}{\texttt{" + latex_text(doc) + r"} \S"
                    + number + "}.") if doc else ""
            out += [r"\subsection*{" + latex_text(f.title) + " (" + r"\texttt{" + latex_text(f.name) + "})}",
                    f.to_latex_block(prefix=res.name + ":", link=link), ""]
    out += [r"\end{document}", ""]
    return "\n".join(out)


def _code(res, backend) -> int:
    from attnlimits.symbolic.result import InputError

    if not res.model:
        raise InputError(f"{res.name} has no single generated solver module; its kernels are generated per "
                         "activation (attnlimits export " + res.name + " writes them)")
    from attnlimits.numeric.models import model_source

    print(model_source(res.model, backend))
    return 0
