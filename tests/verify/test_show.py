"""``attnlimits show``: every item of both results in the four formats, LaTeX that parses, JSON that
round-trips to the same SymPy objects, named intermediates in the paper's notation with a legend,
string ``subs``, the Jacobian of every listed system, whole-result documents that compile, one-line
errors."""
import functools
import io
import re
import shutil
import subprocess

import pytest
import sympy as sp

from attnlimits.symbolic.render import Formula, mathtext_pieces
from attnlimits.symbolic.result import InputError, discover_results
from attnlimits.verify import cli
from attnlimits.verify.cli.show import build_item, doc_blocks, render_item, result_document

ITEMS = [(r, it.name) for r in ("rmt", "slr") for it in discover_results()[r].item_list()]
SYSTEMS = [(r, it.name) for r, it in ((r, it) for r in ("rmt", "slr") for it in discover_results()[r].item_list())
           if it.kind == "system"]


@functools.lru_cache(maxsize=None)
def _built(result, item):
    return build_item(result, item)[0]


def _parse_mathtext(tex: str):
    """``tex`` parsed by matplotlib's mathtext, environments it lacks (``cases``, ``matrix``) piece by
    piece (:func:`mathtext_pieces`); a failure raises ValueError naming the piece."""
    from matplotlib.mathtext import MathTextParser

    parser = _parse_mathtext.parser = getattr(_parse_mathtext, "parser", None) or MathTextParser("agg")
    for piece in mathtext_pieces(tex):
        parser.parse(f"${piece}$")


@pytest.mark.parametrize("result,item", ITEMS, ids=[f"{r}-{i}" for r, i in ITEMS])
def test_every_item_in_four_formats(result, item):
    f = _built(result, item)
    assert f.equations, item
    for fmt in ("text", "latex", "markdown", "json"):
        assert render_item(f, fmt).strip(), (item, fmt)
    # JSON round-trips to the same SymPy objects (parsed by the whitelisted srepr reader)
    back = Formula.from_json(f.to_json())
    for (l0, r0), (l1, r1) in zip(f.equations, back.equations):
        assert sp.sympify(r0) == r1 or sp.simplify(sp.sympify(r0) - r1) == 0, (item, str(l0))


@pytest.mark.parametrize("result,item", ITEMS, ids=[f"{r}-{i}" for r, i in ITEMS])
def test_latex_parses_with_mathtext(result, item):
    """Every equation and every legend symbol renders with matplotlib's mathtext (``cases`` and
    ``matrix``, which mathtext lacks, cell by cell)."""
    f = _built(result, item)
    for line in f.latex_lines():
        _parse_mathtext(line)
    for _, tex, _ in f.legend():
        _parse_mathtext(tex)


@pytest.mark.parametrize("result,item", ITEMS, ids=[f"{r}-{i}" for r, i in ITEMS])
def test_every_symbol_has_a_legend_entry(result, item):
    """The result's notation table names every symbol an item uses, with a one-line meaning."""
    missing = [name for name, _, meaning in _built(result, item).legend() if not meaning]
    assert not missing, f"{result} {item}: no notation entry for {missing}"


def test_ridge_defines_mbar_once(capsys):
    """m̄ (the piecewise Stieltjes root) is written once; ybar and E use its symbol and m̄′."""
    assert cli.main(["show", "rmt", "ridge", "--format", "latex"]) == 0
    out = capsys.readouterr().out
    assert out.count(r"\begin{cases}") == 1, out
    assert out.count(r"\sqrt{c^{2} + 2 c \gamma") == 2  # the two branches of the one definition
    e_row = next(l for l in out.splitlines() if l.startswith(r"\bar{E}_{\mathrm{RR}} &="))
    assert r"\bar{m}^{\prime}" in e_row and r"\bar{m} " in e_row and "cases" not in e_row
    assert r"\label{eq:ridge:E-ridge}" in e_row
    assert r"\item $\bar{m}$: " in out  # the legend
    # --substitute: the inlined form, as the solver's closed form has it (no named m̄ left)
    assert cli.main(["show", "rmt", "ridge", "--substitute"]) == 0
    out = capsys.readouterr().out
    e_line = next(l for l in out.splitlines() if l.strip().startswith("E_ridge ="))
    assert "mbar" not in e_line and "Piecewise" in e_line


@pytest.mark.parametrize("point", [{"c": 0.5, "gamma": 1, "snr": 1}, {"c": 3, "gamma": 0.5, "snr": 2},
                                   {"c": 0.25, "gamma": 0.01, "snr": 8}])
def test_string_subs_matches_the_solver(point):
    """``subs`` with names as strings changes the formula (its symbols carry assumptions, a plain
    ``Symbol("c")`` would not match), and the inlined rows equal the generated solver's closed form
    ``rmt_ridge`` (both branches of m̄: 1 − c + γ ≥ 0 and < 0) to 1e-12 relative."""
    import attnlimits as al
    from attnlimits.derivations import attention_rmt as R
    from attnlimits.numeric import compile_model

    ridge = al.show("rmt", "ridge")
    f = ridge.subs({"c": point["c"]})
    assert f.exprs != ridge.exprs and R.c not in f.parameters
    assert ridge.subs({sp.Symbol("c"): point["c"]}).exprs == f.exprs  # same name, no assumptions
    at = f.subs({"gamma": point["gamma"], "snr": point["snr"]}).inline()
    e_show, y_show = float(at["E_ridge"]), float(at["ybar_ridge"])
    e_num, y_num = compile_model(R.model, "numpy").rmt_ridge(point["c"], point["gamma"], point["snr"])
    assert abs(e_show - float(e_num)) <= 1e-12 * abs(float(e_num))
    assert abs(y_show - float(y_num)) <= 1e-12 * abs(float(y_num))


def test_subs_refuses_unknown_names():
    f = _built("rmt", "ridge")
    with pytest.raises(InputError, match=r"no symbol 'C', 'snrr'; its symbols: .*\bsnr\b"):
        f.subs({"C": 1, "snrr": 2})
    with pytest.raises(InputError, match="no symbol 'x'"):
        f.xreplace({"x": 1})
    assert f.xreplace({"snr": 0}).parameters == (f.parameters[0], f.parameters[1])


@pytest.mark.parametrize("result,item", SYSTEMS, ids=[f"{r}-{i}" for r, i in SYSTEMS])
def test_jacobian_of_every_listed_system(result, item):
    """``--jacobian`` works for every system ``show RESULT`` lists; where the system is a map of its
    unknowns, J is checked against a central difference of the inlined rows at a random point
    (smallest detected deviation ~1e-6 relative)."""
    import random

    f = _built(result, item)
    out = render_item(f, "text", jacobian=True)
    assert re.search(r"J_\{1(,1)?\} =", out), out[:500]
    if f.system is not None:
        return
    jac = f.jacobian()
    rows = [rhs for _, rhs in f.inline().equations]
    rng = random.Random(7)
    symbols = sorted(set(f.unknowns).union(*(r.free_symbols for r in rows)), key=str)
    point = {s: sp.Rational(rng.randint(20, 90), 37) for s in symbols}
    n_u = len(f.unknowns)
    h = sp.Rational(1, 10**6)
    for i, row in enumerate(rows):
        for j, u in enumerate(f.unknowns):
            exact = complex(jac.equations[i * n_u + j][1].subs(point).evalf(30))
            fd = complex(((row.subs({**point, u: point[u] + h}) - row.subs({**point, u: point[u] - h})) / (2 * h))
                         .evalf(30))
            assert abs(exact - fd) <= 1e-6 * max(1, abs(exact)), (item, i, j)


def test_code_offers_only_existing_backends(capsys):
    from attnlimits.numeric.models import BACKENDS

    parser = cli.build_parser() if hasattr(cli, "build_parser") else None
    show = None
    if parser is not None:
        for action in parser._subparsers._group_actions:
            show = action.choices.get("show") or show
    if show is not None:
        code = next(a for a in show._actions if a.dest == "code")
        assert tuple(code.choices) == tuple(BACKENDS) and "torch" not in code.choices
    with pytest.raises(SystemExit) as exc:  # argparse refuses the choice (exit 2)
        cli.main(["show", "rmt", "ridge", "--code", "torch"])
    assert exc.value.code == 2 and "invalid choice: 'torch'" in capsys.readouterr().err


def test_specialised_and_jacobian(capsys):
    assert cli.main(["show", "rmt", "traces", "--activation", "relu"]) == 0
    out = capsys.readouterr().out
    assert "1/(2*pi)" in out and "nu" not in out.split("where:")[0].split("=")[-1]
    assert cli.main(["show", "rmt", "bulk_system", "--jacobian"]) == 0
    assert "J_{1,1} =" in capsys.readouterr().out
    assert cli.main(["show", "slr", "rs_channel", "--L", "3", "--format", "markdown"]) == 0
    assert "$$" in capsys.readouterr().out


@pytest.mark.parametrize("argv,needle", [
    (["show", "nope"], "no result 'nope'"),
    (["show", "rmt", "nope"], "rmt has no item 'nope'"),
    (["show", "rmt", "ridge", "--L", "3"], "--L does not apply to rmt ridge"),
    (["show", "slr", "rs_channel", "--L", "50"], "--L must lie in 1..8"),
    (["show", "rmt", "ridge", "--jacobian"], "--jacobian applies to systems only"),
    (["show", "rmt", "--jacobian", "--format", "latex"], "apply to one item"),
    (["show"], "name a result"),
])
def test_errors_are_one_line(argv, needle, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


# --- the whole result as one document -----------------------------------------------------------------

def _cached(result, item):
    return _built(result, item)


@pytest.mark.parametrize("result", ["rmt", "slr"])
def test_whole_result_latex_document(result, tmp_path):
    """``show RESULT --format latex``: an article with every item, in the docs page's section order,
    every equation labelled; its equations parse with mathtext, and it compiles with pdfLaTeX or
    LuaLaTeX where one is installed (skipped otherwise)."""
    doc = result_document(result, "latex", build=_cached)
    assert doc.startswith(r"\documentclass{article}") and r"\usepackage{amsmath}" in doc
    assert doc.rstrip().endswith(r"\end{document}")
    items = [it.name for it in discover_results()[result].item_list()]
    for name in items:
        assert f"(\\texttt{{{name.replace('_', chr(92) + '_')}}})" in doc, name
    labels = re.findall(r"\\label\{(eq:[^}]*)\}", doc)
    n_rows = sum(len(_built(result, i).equations) for i in items)
    assert len(labels) == n_rows == len(set(labels))
    numbers = [tuple(int(x) for x in n.split(".")) for n in re.findall(r"\\section\*\{\\S([\d.]+) ", doc)]
    assert numbers == sorted(numbers), numbers  # the docs page's order
    for m in re.finditer(r"\\begin\{align\}\n(.*?)\n\\end\{align\}", doc, re.S):
        for row in m.group(1).split(" \\\\\n"):
            _parse_mathtext(re.sub(r"\\label\{[^}]*\}", "", row).replace("&=", "="))
    engine = shutil.which("pdflatex") or shutil.which("lualatex")
    if engine is None:
        pytest.skip("no pdflatex/lualatex installed: the document's equations were checked with mathtext only")
    (tmp_path / "doc.tex").write_text(doc, encoding="utf-8")
    run = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    errors = [l for l in run.stdout.splitlines() if l.startswith("!")]
    assert run.returncode == 0 and not errors, "\n".join(errors) or run.stdout[-2000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 10_000


@pytest.mark.parametrize("result", ["rmt", "slr"])
def test_whole_result_markdown_and_json_documents(result):
    md = result_document(result, "markdown", build=_cached)
    items = [it.name for it in discover_results()[result].item_list()]
    assert all(f"### `{name}`" in md for name in items)
    assert re.search(r"Documented in \[docs/\w+\.md §[\d.]+\]\(docs/\w+\.md#[\w-]+\)", md)
    blocks = re.findall(r"\$\$\n(.*?)\n\$\$", md, re.S)
    assert len(blocks) == sum(len(_built(result, i).equations) for i in items)
    for block in blocks:
        _parse_mathtext(block)
    import json

    data = json.loads(result_document(result, "json", build=_cached))
    assert sorted(d["name"] for d in data["items"]) == sorted(items)


def test_docs_equation_blocks_match_the_code():
    """The equation blocks of docs/*.md marked ``<!-- show: … -->`` are what ``show`` prints now
    (``attnlimits show --update-docs`` regenerates them)."""
    blocks = doc_blocks()
    assert len(blocks) >= 3
    stale = [f"{p.name}: {spec}" for p, spec, body, new in blocks if body != new]
    assert not stale, f"run attnlimits show --update-docs: {stale}"
