"""``attnlimits show``: every item of both results in the four formats, LaTeX that parses, JSON that
round-trips to the same SymPy objects, one-line errors (issue 28)."""
import functools

import pytest
import sympy as sp

from attnlimits.symbolic.render import Formula, mathtext_pieces
from attnlimits.symbolic.result import discover_results
from attnlimits.verify import cli
from attnlimits.verify.show_command import build_item, doc_blocks, render_item

ITEMS = [(r, it.name) for r in ("rmt", "slr") for it in discover_results()[r].item_list()]


@functools.lru_cache(maxsize=None)
def _built(result, item):
    return build_item(result, item)[0]


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
    from matplotlib.mathtext import MathTextParser

    parser = MathTextParser("agg")
    for line in _built(result, item).latex_lines():
        for piece in mathtext_pieces(line):
            parser.parse(f"${piece}$")


def test_specialised_and_jacobian(capsys):
    assert cli.main(["show", "rmt", "traces", "--activation", "relu"]) == 0
    out = capsys.readouterr().out
    assert "1/(2*pi)" in out and "nu" not in out.split("parameters:")[0].split("=")[-1]
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
    (["show", "slr", "rs_test_error", "--code", "torch"], "torch code is generated"),
    (["show"], "name a result"),
])
def test_errors_are_one_line(argv, needle, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def test_docs_equation_blocks_match_the_code():
    """The equation blocks of docs/*.md marked ``<!-- show: … -->`` are what ``show`` prints now
    (``attnlimits show --update-docs`` regenerates them)."""
    blocks = doc_blocks()
    assert len(blocks) >= 3
    stale = [f"{p.name}: {spec}" for p, spec, body, new in blocks if body != new]
    assert not stale, f"run attnlimits show --update-docs: {stale}"
