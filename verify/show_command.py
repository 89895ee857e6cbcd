"""``attnlimits show``: the equations a result's solvers use, as the derivation defines them.

``attnlimits show RESULT`` lists the result's items (systems, observables, closed forms, properties);
``attnlimits show RESULT ITEM`` prints one, specialised by ``--activation``/``--L``/``--model``/
``--variant`` where the item takes them, in ``--format text|latex|markdown|json`` (json: ``srepr``
strings that :func:`attnlimits.symbolic.render.from_srepr` turns back into SymPy objects);
``--jacobian`` adds the symbolic Jacobian of a system, ``--code numpy|mpmath`` prints the generated
solver module.  ``--update-docs``/``--check-docs`` regenerate / check the equation blocks of the docs
that are marked ``<!-- show: RESULT ITEM [--option value ...] -->`` … ``<!-- /show -->``.
"""
from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path

__all__ = ["add_parser", "build_item", "render_item", "doc_blocks", "update_docs"]

EXAMPLES = (
    "attnlimits show rmt",
    "attnlimits show rmt bulk_system --activation relu",
    "attnlimits show rmt ridge --format latex",
    "attnlimits show slr rs_channel --L 3 --format markdown",
    "attnlimits show rmt bulk_system --jacobian",
    "attnlimits show rmt bulk_system --code numpy > rmt_solver.py",
    "attnlimits show --check-docs",
)

FORMATS = ("text", "latex", "markdown", "json")
_OPTIONS = ("activation", "L", "model", "variant")
DOCS = Path(__file__).resolve().parents[1] / "docs"


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
    p.add_argument("--format", default="text", choices=FORMATS, help="output format (default: text)")
    p.add_argument("--jacobian", action="store_true", help="add the symbolic Jacobian of a system")
    p.add_argument("--code", choices=("numpy", "mpmath", "torch"), help="print the generated solver source")
    p.add_argument("--update-docs", action="store_true", help="regenerate the marked equation blocks of docs/*.md")
    p.add_argument("--check-docs", action="store_true", help="exit 1 when a marked block of docs/*.md is stale")
    p.set_defaults(_handler=_run)
    return p


def _result(name):
    from attnlimits.symbolic.result import InputError, discover_results

    results = discover_results()
    if name not in results:
        raise InputError(f"no result {name!r}; results: {', '.join(results)}")
    return results[name]


def build_item(result_name: str, item_name: str, **options):
    """The :class:`attnlimits.symbolic.render.Formula` of ``item_name``, specialised by ``options``."""
    from attnlimits.symbolic.result import InputError, resolve

    res = _result(result_name)
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
    return resolve(item.build)(**kwargs), item


def render_item(formula, fmt: str = "text", *, jacobian=False) -> str:
    from attnlimits.symbolic.result import InputError

    if jacobian:
        system = getattr(formula, "system", None)
        if system is None:
            raise InputError(f"{formula.name or formula.title}: --jacobian applies to systems only")
        from attnlimits.symbolic.render import system_formula

        jac = system_formula(system, title=f"Jacobian of {system.name}: dF/dx", observables=False)
        jac.equations = [("J", system.jacobian())]
        formula = formula.__class__(**{**{k: getattr(formula, k) for k in ("title", "equations", "unknowns",
                                                                                 "parameters", "source", "section",
                                                                                 "kind", "name", "notes")},
                                       "equations": list(formula.equations) + list(jac.equations)})
    return {"text": formula.to_text, "latex": formula.to_latex, "markdown": formula.to_markdown,
            "json": formula.to_json}[fmt]()


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
    from attnlimits.verify._io import write_text

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
    res = _result(args.result)
    if not args.item:
        if args.code:
            return _code(res, args.code)
        print(_list(res))
        return 0
    options = {k: getattr(args, k) for k in _OPTIONS}
    item = {it.name: it for it in res.item_list()}.get(args.item)
    if item is not None and item.slow:
        print(f"building {args.result} {args.item} (SymPy, a few seconds the first time)...", file=sys.stderr)
    formula, item = build_item(args.result, args.item, **options)
    if args.code:
        return _code(res, args.code)
    print(render_item(formula, args.format, jacobian=args.jacobian))
    return 0


def _code(res, backend) -> int:
    from attnlimits.symbolic.result import InputError

    if backend == "torch":
        raise InputError("torch code is generated for the elementwise Monte Carlo kernels, not for the solvers; "
                         "use --code numpy or --code mpmath")
    if not res.model:
        raise InputError(f"{res.name} has no single generated solver module; its kernels are generated per "
                         "activation (attnlimits export " + res.name + " writes them)")
    from attnlimits.numeric.models import model_source

    print(model_source(res.model, backend))
    return 0
