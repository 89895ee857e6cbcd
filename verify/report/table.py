"""The terminal table of ``attnlimits verify`` (:func:`format_table`): one block per claim with a line per
check, fitted to the terminal's width (:func:`terminal_width`)."""
from __future__ import annotations

from typing import Sequence

from .checks import MARK, attr_of, check_passed, check_threshold, family_summary, fit_text, format_mc, format_number, mdd_line, p_text, paint, percent_text, safe_attr, stat_text, summary_line, verdict_key

__all__ = ["TABLE_WIDTH", "MIN_WIDTH", "terminal_width", "format_table"]


#: Maximum width (characters, ANSI codes excluded) of :func:`format_table` lines.
TABLE_WIDTH = 110

# --------------------------------------------------------------------------------------------------
# terminal table
# --------------------------------------------------------------------------------------------------
# check line: indent 2 | label (up to 24) | kind | theory | MC mean ± SE | threshold | MDD | z/t | p | adj. thr | mark.
# The number columns are as wide as their widest cell (a number is never clipped); where the line
# would exceed the width, adj. thr, then MDD, then threshold are left out (results.csv and
# report.md have them), and a label that does not fit goes on a line of its own.
_W_LABEL = 24
_OPTIONAL = ("adj. thr", "MDD", "threshold")  # left out in this order on a narrow terminal



MIN_WIDTH = 60


def terminal_width(default: int = TABLE_WIDTH) -> int:
    """The width to lay tables out in: ``$COLUMNS`` when set, else the terminal's width when stdout is
    one, else ``default``; never below :data:`MIN_WIDTH`."""
    import os
    import shutil
    import sys

    cols = os.environ.get("COLUMNS", "").strip()
    if cols.isdigit() and int(cols) > 0:
        return max(MIN_WIDTH, int(cols))
    if not sys.stdout.isatty():
        return default
    return max(MIN_WIDTH, shutil.get_terminal_size((default, 24)).columns)


def _wrapped(text: str, width: int, indent: str, first_indent: str = "") -> list[str]:
    """``text`` on as many lines of ``width`` as it needs (never clipped), continuation lines indented
    (the first line by ``first_indent``)."""
    import textwrap

    return textwrap.wrap(" ".join(str(text).split()), width=width, initial_indent=first_indent,
                         subsequent_indent=indent, break_long_words=True, break_on_hyphens=False) or [first_indent]


def format_table(results: Sequence, *, color: bool = False, elapsed: float | None = None,
                 width: int | None = None) -> str:
    """Plain-text table of claim results, ``width`` columns wide (default :data:`TABLE_WIDTH`;
    the terminal's width with :func:`terminal_width`).  Names, check labels and titles are never
    clipped: what does not fit its column goes on a line of its own (a long check label) or
    continues on the next lines (a title), so that every row can be read and pasted back.

    Parameters
    ----------
    results : list of ClaimResult
    color : bool
        Wrap verdicts and ✓/✗ marks in ANSI colours (use only when stdout is a terminal). Widths are
        computed without the escape codes.
    elapsed : float, optional
        Total seconds for the summary line; default the sum of the claims' ``elapsed``.

    Returns
    -------
    str
        Header, one block per claim (name, verdict, time, title; then one line per check: label,
        kind, theory — ``[lo, hi]`` for interval checks —, MC mean ± SE — SE omitted when ``None`` —,
        threshold, MDD, z or t statistic, raw p-value, Holm-adjusted threshold, ✓/✗), and a summary line
        such as ``"3 claims: 2 pass, 0 fail, 1 discrepancy (4.2 s)"``.  Values carry 4 significant
        digits, standard errors 2; no number is clipped: each number column is as wide as its widest
        cell, and on a narrow terminal (80 columns) the Holm threshold, the MDD and the threshold are
        left out in that order (``results.csv`` has them).  A claim without checks shows the first line
        of its notes.
    """
    width = max(MIN_WIDTH, int(width or TABLE_WIDTH))
    rule = "─" * width
    head1 = f"{'claim':<14}{'verdict':<13}{'time':>8}  title"
    cells = {}  # id(check) -> {column: text}
    for r in results:
        for c in r.checks:
            cells[id(c)] = {
                "kind": str(attr_of(c, "kind", "abs")), "theory": format_number(attr_of(c, "theory")),
                "MC mean ± SE": format_mc(attr_of(c, "value"), attr_of(c, "se")), "threshold": format_number(check_threshold(c), 3),
                "MDD": percent_text(safe_attr(c, "mdd_relative")), "z / t": stat_text(c), "p": p_text(safe_attr(c, "p_value")),
                "adj. thr": p_text(attr_of(c, "holm_threshold"))}
    cols = ["kind", "theory", "MC mean ± SE", "threshold", "MDD", "z / t", "p", "adj. thr"]
    widths = {k: max([len(k)] + [len(v[k]) for v in cells.values()]) for k in cols}

    def numbers_width(cs):
        return sum(widths[k] + 1 for k in cs) + 2  # each column and its space, the ✓/✗ mark
    for drop in _OPTIONAL:  # a label column of at least 8 beside the numbers, or fewer columns
        if 2 + 8 + 1 + numbers_width(cols) <= width:
            break
        cols.remove(drop)
    w_label = max(0, min(_W_LABEL, width - 2 - 1 - numbers_width(cols)))
    head2 = "  " + " ".join([fit_text("check", w_label)] + [fit_text(k, widths[k]) for k in cols] + ["ok"])
    lines = [head1, head2.rstrip(), rule]
    for r in results:
        verdict = (r.verdict or "?").upper()
        name = f"{r.claim:<13} "  # a longer name is written whole: the row just starts later
        vword = fit_text(verdict, 12).rstrip()
        vpad = " " * (13 - len(vword))
        tfield = f"{float(r.elapsed or 0.0):>6.1f} s  "
        lead = len(name) + 13 + len(tfield)
        title = _wrapped(r.title or "", max(width, lead + 20), " " * lead, first_indent=" " * lead)
        lines.append(name + paint(vword, r.verdict, color) + vpad + tfield + title[0][lead:])
        lines += title[1:]
        for c in r.checks:
            ok = check_passed(c)
            label = " ".join(str(attr_of(c, "label", "")).split())
            if len(label) > w_label:  # the whole label on a line of its own, the numbers below it
                lines += ["  " + s for s in _wrapped(label, width - 2, "    ")]
                label = ""
            row = cells[id(c)]
            line = "  " + " ".join([f"{label:<{w_label}}"] + [f"{row[k]:<{widths[k]}}" for k in cols]) + " "
            lines.append(line + paint(MARK[ok], ok, color))
        mline = mdd_line(r)
        if mline:
            lines += ["  " + s for s in _wrapped(mline, width - 2, "    ")]
        notes = (r.notes or "").strip()
        if notes and (not r.checks or verdict_key(r.verdict) != "pass"):
            first = notes.splitlines()[0]
            prefix = "  (no checks) " if not r.checks else "  note: "
            lines.append((prefix + fit_text(first, width - len(prefix))).rstrip())
        elif not r.checks:
            lines.append("  (no checks)")
    lines.append(rule)
    fam = family_summary(results)
    if fam["m"]:
        lines += _wrapped(f"family-wise rule: Holm at {fam['level']:g} over {fam['m']} checks with an SE "
                          f"({fam['with_t']} by t); {fam['failed']} failed", width, "  ")
        lines += _wrapped(f"beyond 2.5 SE: {fam['beyond_2_5_raw']} by |z| or |t|, {fam['beyond_2_5']} "
                          "normal-equivalent", width, "  ")
        lines += _wrapped(f"power: {fam['mdd_above_10']} of {fam['mdd_checks']} quantitative checks have MDD > 10 %, "
                          f"{fam['mdd_above_5']} > 5 %; {fam['claims_above_target']} claim(s) above their MDD "
                          f"target ({fam['claims_unexplained']} not explained)", width, "  ")
    lines.append(summary_line(results, elapsed))
    return "\n".join(lines)
