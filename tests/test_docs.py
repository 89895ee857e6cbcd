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
