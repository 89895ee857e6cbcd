"""The README's "From Python" section runs, as a doctest, against the installed package."""
from __future__ import annotations

import doctest
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _python_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## From Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```pycon\n(.*?)```", section, flags=re.S)
    assert blocks, "the README's From Python section has no ```pycon block"
    return "\n".join(blocks)


def test_readme_from_python_runs():
    parser = doctest.DocTestParser()
    test = parser.get_doctest(_python_section(), {}, "README.md#from-python", str(ROOT / "README.md"), 0)
    assert len(test.examples) >= 10
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} README examples failed (output above)"
