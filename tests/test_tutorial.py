"""docs/tutorial.md runs, as a doctest (inspect, extend, solve, check)."""
from __future__ import annotations

import doctest
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_tutorial_runs():
    text = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```pycon\n(.*?)```", text, flags=re.S)
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, "docs/tutorial.md", str(ROOT / "docs"), 0)
    assert len(test.examples) >= 12
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} tutorial examples failed (output above)"
