"""The example command lines the user is shown: every ``--help`` epilog, README.md and docs/cli.md.

Shared by ``tests/test_examples.py`` (each parses and validates; the slow profile runs them).
"""
from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _parsers(parser, path=()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, path + (name,))


def help_examples() -> list[tuple[str, str]]:
    """(where, command line) for every ``examples:`` line of every ``--help``."""
    from attnlimits.verify.cli import build_parser

    out = []
    for path, p in _parsers(build_parser()):
        epilog = p.epilog or ""
        if "examples:" not in epilog:
            continue
        for line in epilog.split("examples:", 1)[1].splitlines():
            line = line.strip()
            if line.startswith(("attnlimits ", "python ")):
                out.append((f"attnlimits {' '.join(path)} --help".replace("  ", " "), line))
    return out


def _shell_blocks(text: str):
    for m in re.finditer(r"```(?:bash|sh|console|shell)\n(.*?)```", text, re.S):
        yield m.group(1)


def doc_examples(page: str) -> list[tuple[str, str]]:
    """(page, command line) for each ``attnlimits …`` line of the shell blocks of ``page``."""
    text = (ROOT / page).read_text()
    out = []
    for block in _shell_blocks(text):
        block = re.sub(r"\\\n\s*", " ", block)
        for line in block.splitlines():
            line = line.strip()
            if line.startswith("$ "):
                line = line[2:]
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("attnlimits "):
                    out.append((page, part))
    return out


def all_examples() -> list[tuple[str, str]]:
    seen, out = set(), []
    for where, line in help_examples() + doc_examples("README.md") + doc_examples("docs/cli.md"):
        argv = split(line)
        key = tuple(argv)
        if key not in seen:
            seen.add(key)
            out.append((where, line))
    return out


def split(line: str) -> list[str]:
    """The argv of an example line (comments dropped; a ``$(...)`` substitution kept as one word)."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=False)
    lex.whitespace_split = True
    lex.commenters = "#"
    words = list(lex)
    for i, w in enumerate(words):  # a shell redirection ends the command's own arguments
        if w in (">", ">>", "|", "2>"):
            return words[:i]
    return words
