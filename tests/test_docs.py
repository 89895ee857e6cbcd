"""The project stands alone: the docs it cites exist, with the sections and claims it cites.

Static checks over the source text (only the registries are imported: the results', to list their pages
(``Result.doc``) and claims modules, and the claims', for the claim IDs): every ``docs/<page>.md`` named in
the code exists; every ``docs/<page>.md §N`` names a section of that page; no reference to the
external ``shared/spec`` files is left; every registered claim ID appears in its result's page.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("derivations", "numeric", "symbolic", "verify", "benchmarks", "studies", "tools", "tests")


def _results() -> dict:
    from attnlimits.symbolic.result import discover_results

    return discover_results()


def _result_pages() -> list:
    """The documentation page of every registered result (``Result.doc``) that lives in this checkout."""
    return sorted({Path(res.doc).name for res in _results().values()
                   if res.doc and (ROOT / res.doc).is_file() and Path(res.doc).parent.name == "docs"})


def _claim_pages() -> dict:
    """Every claims module of every registered result → its result's docs page (``Result.doc``), from the
    registry, never a hand-kept list."""
    out = {}
    for res in _results().values():
        mods = res.claims if isinstance(res.claims, tuple) else (res.claims,) if res.claims else ()
        for mod in mods:
            path = ROOT / (mod.removeprefix("attnlimits.").replace(".", "/") + ".py")
            if not path.is_file():  # a plug-in result outside this checkout
                continue
            assert res.doc, f"result {res.name!r} registers claims ({mod}) but declares no doc page"
            assert (ROOT / res.doc).is_file(), f"{res.name}: doc page {res.doc} does not exist"
            out[str(path.relative_to(ROOT))] = Path(res.doc).name
    return out


RESULT_PAGES = _result_pages()
CLAIM_PAGES = _claim_pages()


def _sources():
    for pkg in PACKAGES:
        yield from sorted((ROOT / pkg).rglob("*.py"))


def _sections(page: Path) -> set[str]:
    """Section numbers of a page: headings '## 5.' / '### 6.2' and bold run-in heads '**4.1 '."""
    text = page.read_text(encoding="utf-8")
    secs = set(re.findall(r"(?m)^#{2,4} (\d+(?:\.\d+)*)\.?\s", text))
    secs |= set(re.findall(r"(?m)^\*\*(\d+\.\d+)\s", text))
    return secs


def test_docs_index_lists_every_page():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    assert len(RESULT_PAGES) >= 2, RESULT_PAGES  # the registry was read
    for page in RESULT_PAGES + ["cli.md"]:
        assert (ROOT / "docs" / page).is_file()
        assert f"({page})" in index


def test_no_reference_to_external_spec_files():
    this = Path(__file__).resolve()
    bad = [f"{p.relative_to(ROOT)}:{i}" for p in _sources() if p.resolve() != this
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           if "shared/spec" in line or re.search(r"\bspec (attention_rmt|slr)\.md", line)]
    assert not bad, f"cite docs/<page>.md instead: {bad}"


@pytest.mark.parametrize("page", RESULT_PAGES)
def test_cited_sections_exist(page):
    secs = _sections(ROOT / "docs" / page)
    assert {"2", "5", "6"} <= secs or {"2", "6", "7"} <= secs  # sanity: headings were parsed
    pat = re.compile(r"docs/" + re.escape(page) + r"`*\)?:?\s*§(\d+(?:\.\d+)?)")
    missing, hits = [], 0
    for p in _sources():
        for m in pat.finditer(p.read_text(encoding="utf-8")):
            hits += 1
            num = m.group(1)
            if num not in secs and num.split(".")[0] not in secs:
                missing.append(f"{p.relative_to(ROOT)}: §{num}")
    assert hits >= 5, hits  # the pattern does find the citations
    assert not missing, missing


@pytest.mark.parametrize("module, page", sorted(CLAIM_PAGES.items()))
def test_registered_claims_are_documented(module, page):
    """Every claim the module registers (read from the claims registry, so that a claim built in a loop or a
    table is not missed) is named on its result's page."""
    from attnlimits.verify.claims import load_claims

    dotted = "attnlimits." + module.removesuffix(".py").replace("/", ".")
    ids = sorted(name for name, claim in load_claims().items() if getattr(claim.run, "__module__", None) == dotted)
    assert ids, f"{module} registers no claim"
    ids += re.findall(r'Claim\(\s*(?:name=)?"([\w-]+)"', (ROOT / module).read_text(encoding="utf-8"))
    doc = (ROOT / "docs" / page).read_text(encoding="utf-8")
    undocumented = sorted({c for c in ids if not re.search(r"(^|[|`*\s(])" + re.escape(c) + r"($|[|`\s),])", doc, re.M)})
    assert not undocumented, f"claims missing from docs/{page}: {undocumented}"


# --------------------------------------------------------------------------------------------
# The docs are checked, not only written: every path a doc names exists, the command table of
# docs/cli.md is the command line, and every claim count is the registry's.
# --------------------------------------------------------------------------------------------

#: the documents a user reads
DOC_FILES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"),
                    *(p for p in (ROOT / "tools" / "README.md", ROOT / "studies" / "README.md",
                                  ROOT / "benchmarks" / "README.md") if p.is_file())])
#: folders of the repository: a backticked token starting with one of them names a file that must exist
TOP = ("derivations", "symbolic", "numeric", "verify", "tests", "benchmarks", "studies", "tools", "docs",
       "attnlimits", "examples", ".ci")
#: placeholders of a pattern rather than a path (``plots/<claim>.png``, ``docs/gallery/NAME.csv``)
_PLACEHOLDER = re.compile(r"[<>*{}$]|NAME|\bN\b|\.\.\.|…")
_TOKEN = re.compile(r"`([^`\s]+)`|\]\(([^)\s#]+)(?:#[^)]*)?\)")


def _named_paths(doc: Path):
    """(line, token, path) for every repository path ``doc`` names: backticked tokens that start with a
    top-level folder, bare file names of the doc's own folder (``study_bo_phase.py``) and relative
    markdown links."""
    for i, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        for m in _TOKEN.finditer(line):
            tok, link = m.group(1), m.group(2)
            if link is not None:
                if re.match(r"[a-z]+:", link):  # https:, mailto:
                    continue
                yield i, link, (doc.parent / link)
                continue
            tok = tok.rstrip(".,:;").split("::")[0]
            if _PLACEHOLDER.search(tok) or tok.startswith(("-", "/", "~", "http")):
                continue
            head = tok.split("/")[0]
            if head in TOP and "/" in tok:
                # ``verify/report.py:905`` → the file; ``tests/verify/test_io.py::test_x`` too
                yield i, tok, ROOT / tok.split(":")[0]
            elif "/" not in tok and re.fullmatch(r"[\w-]+\.py", tok) and doc.parent.name in ("studies", "tools",
                                                                                          "benchmarks"):
                # a bare script name in the README of a folder of scripts names a script of that folder
                yield i, tok, doc.parent / tok


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_named_paths_exist(doc):
    missing = [f"{doc.relative_to(ROOT)}:{i}: {tok}" for i, tok, path in _named_paths(doc) if not path.exists()]
    assert not missing, "docs name files that do not exist:\n" + "\n".join(missing)


def test_named_paths_detects_a_stale_path(tmp_path):
    """The path check can fail: a doc naming a removed module is caught, a pattern is not."""
    doc = tmp_path / "docs" / "page.md"
    doc.parent.mkdir()
    doc.write_text("see `verify/no_such_module.py` and `plots/<claim>.png` and [x](missing.md)\n", encoding="utf-8")
    found = [tok for _, tok, path in _named_paths(doc) if not path.exists()]
    assert found == ["verify/no_such_module.py", "missing.md"], found


def _cli_commands() -> set[str]:
    """Every command of the command line, from the parser itself: ``rmt``, ``slr population``, ``export rmt``…"""
    from attnlimits.verify.cli import build_parser, leaf_parsers

    return set(leaf_parsers(build_parser()))


def test_every_command_takes_threads():
    """The README promises ``--threads N`` on every command."""
    from attnlimits.verify.cli import build_parser, leaf_parsers

    refused = [name for name, p in leaf_parsers(build_parser()).items()
               if not any("--threads" in a.option_strings for a in p._actions)]
    assert not refused, refused


def _cli_table(text: str) -> set[str]:
    return set(re.findall(r"(?m)^\| `attnlimits ([a-z][\w -]*?)` \|", text))


def test_cli_table_is_the_command_line():
    """docs/cli.md's table names every command of the parser and no other; a group (``slr``, ``export``,
    ``sweep``) counts through its subcommands."""
    commands = _cli_commands()
    table = _cli_table((ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))
    assert len(commands) >= 10, commands  # the parser was walked
    missing = sorted(commands - table)
    unknown = sorted(table - commands)
    assert not missing, f"commands missing from docs/cli.md's table: {missing}"
    assert not unknown, f"docs/cli.md's table names commands that do not exist: {unknown}"


def test_cli_table_check_can_fail():
    table = _cli_table("| `attnlimits rmt` | x | y |\n| `attnlimits slr population` | x | y |\n")
    assert table == {"rmt", "slr population"}


_COUNT = re.compile(r"\b(\d+)\s+(?:registered\s+)?claims\b")


def test_claim_counts_are_the_registry():
    """A number of claims stated in a doc is the number registered."""
    from attnlimits.verify.claims import load_claims

    n = len(load_claims())
    wrong = [f"{doc.relative_to(ROOT)}:{i}: {m.group(0)}" for doc in DOC_FILES
             for i, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
             for m in _COUNT.finditer(line) if int(m.group(1)) > 20 and int(m.group(1)) != n]
    assert not wrong, f"{n} claims are registered; docs say otherwise:\n" + "\n".join(wrong)


def test_help_names_docs_sections_never_the_spec():
    """Help text names the docs page a user can open ("docs/slr.md §6"), never "spec §" (a document the
    user was not given); an option's help that cites a section names its page."""
    import re

    from attnlimits.verify import cli

    leaves = cli.leaf_parsers(cli.build_parser())
    assert leaves
    for name, parser in leaves.items():
        text = parser.format_help()
        assert "spec §" not in text and "Spec §" not in text, name
        for action in parser._actions:
            h = action.help or ""
            if "§" in h:
                assert re.search(r"docs/[a-z_]+\.md §", h), (name, h)
