"""No history in the code or the docs: docstrings, comments and documentation say what the code does
and why, not when or in which piece of work it changed.  Git keeps the history.

Scanned: every docstring (each bare string statement, read from the AST) and every ``#`` comment (read
with :mod:`tokenize`) of every module of ``derivations/``, ``symbolic/``, ``numeric/``, ``verify/`` and
``attnlimits/`` (there every string literal too: claim statements, sources and notes reach the reports) and
of the scripts and tests beside them (there the names of functions and classes too: ``test_..._issue_8``) (``tests/``, ``benchmarks/``, ``studies/``,
``tools/``, ``examples/``; this file's own examples excepted), and every line of ``README.md``,
``docs/**/*.md`` and the other folders' markdown.

Flagged (:data:`PATTERNS`):

- an issue or pull-request reference: ``issue 26``, ``Issue 12``, ``issues 12``, ``(#17)``, ``PR 5``;
- a numbered pass of work: ``fourth pass``, ``Update (`` (a paragraph that amends the text above it);
- a date: ``2026-12-01``, ``2026-11``, ``March 2026``;
- a session or round of work: ``this session``, ``this round``, ``second session``, ``session notes``.

Not flagged: section signs and claim or theorem names (``§4``, ``claim C16``, ``Theorem 1``, ``Q1``),
markdown headings and anchors (``## 10.7``, ``page.md#anchor``), hex colours, a round of an iteration
(``the walk's first round``).  A measurement in the docs says which command reproduces it instead of
when it was taken.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("derivations", "symbolic", "numeric", "verify", "attnlimits")
#: folders of scripts, tests and examples, scanned the same way
OTHERS = ("tests", "benchmarks", "studies", "tools", "examples")

_ORDINAL = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)"
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
#: kind → pattern; each is written so that §N, claim and theorem names, headings and anchors do not match
PATTERNS = {
    "issue reference": re.compile(r"\b[Ii]ssues?\s+#?\d+|\bISSUES?\s+#?\d+|(?<![\w&/#])#\d+\b|\bPR\s*#?\d+\b"),
    "numbered pass": re.compile(rf"(?i:\b{_ORDINAL} pass\b)|\bUpdate \("),
    "date": re.compile(rf"\b20\d\d-(?:0[1-9]|1[0-2])(?:-\d\d)?\b|\b{_MONTH} 20\d\d\b"),
    "session": re.compile(rf"\bthis (?:session|round)\b|\b(?:{_ORDINAL}|previous|last|earlier|next) session\b"
                          r"|\bsession notes?\b", re.I),
}

#: Files allowed to keep a finding (each with the reason beside it); none now.
ALLOWLIST: set[str] = set()


def _findings(text: str):
    for kind, pattern in PATTERNS.items():
        m = pattern.search(text)
        if m:
            yield kind, m.group(0)


def _python_texts(path: Path):
    """(line, text) of every docstring line and every comment of one module."""
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            for offset, line in enumerate(node.value.value.splitlines()):
                yield node.lineno + offset, line
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string.lstrip("#:")


def _package_strings(path: Path):
    """(line, text) of every string literal of one package module (claim texts reach the reports)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for offset, line in enumerate(node.value.splitlines()):
                yield node.lineno + offset, line


def _names(path: Path):
    """(line, name) of every function and class, with underscores read as spaces (``test_issue_8``)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.lineno, node.name.replace("_", " ")


def _package_modules():
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts)


def _modules():
    return sorted(p for pkg in PACKAGES + OTHERS for p in (ROOT / pkg).rglob("*.py")
                  if "__pycache__" not in p.parts and p.resolve() != Path(__file__).resolve())


def _docs():
    return [ROOT / "README.md"] + sorted(p for folder in ("docs",) + OTHERS for p in (ROOT / folder).rglob("*.md"))


def _scan(paths, texts):
    out = {}
    for path in paths:
        rel = path.relative_to(ROOT).as_posix()
        hits = [f"{rel}:{line}: {kind} {found!r}: {text.strip()[:120]}"
                for line, text in texts(path) for kind, found in _findings(text)]
        if hits:
            out[rel] = hits
    return out


def _all_findings():
    found = _scan(_modules(), _python_texts)
    for extra in (_scan(_package_modules(), _package_strings), _scan(_modules(), _names)):
        for rel, hits in extra.items():
            found.setdefault(rel, []).extend(h for h in hits if h not in found.get(rel, []))
    found.update(_scan(_docs(), lambda p: enumerate(p.read_text(encoding="utf-8").splitlines(), 1)))
    return found


def test_no_history_in_docstrings_comments_and_docs():
    found = {rel: hits for rel, hits in _all_findings().items() if rel not in ALLOWLIST}
    lines = [h for hits in found.values() for h in hits]
    assert not lines, ("history in the code or the docs (say what the code does and why; a number says "
                       "which command reproduces it):\n" + "\n".join(lines))


def test_allowlist_is_not_stale():
    """An allowlisted file without findings leaves the allowlist, so that it cannot gather new ones."""
    found = _all_findings()
    stale = sorted(rel for rel in ALLOWLIST if rel not in found)
    assert not stale, f"no history left in {stale}: remove them from ALLOWLIST in {Path(__file__).name}"


def test_patterns_tell_history_from_references():
    history = ["see issue 39", "Issue 12, item 3", "issues 12 and 14", "fixed in (#17)", "PR 5",
               "the fourth pass", "Update (fourth pass): ...", "measured 2026-12-01", "the 2026-11 solver",
               "March 2026", "this session", "this round's other issues", "second session", "the session notes"]
    plain = ["§4", "claim C16", "Theorem 1", "Q1–Q3", "## 10.7 Every branch", "[page](slr.md#107-every-branch)",
             "color '#1f77b4'", "the walk's first round", "each later round", "arXiv:2509.21936", "C15-loss",
             "a single pass over the samples", "D = 2000", "α ∈ {0.25,…,16}", "x**(-2.0)", "seed 2026",
             "code 2010-2020"]
    assert [t for t in history if not any(_findings(t))] == []
    assert [(t, list(_findings(t))) for t in plain if any(_findings(t))] == []
