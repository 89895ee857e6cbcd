r"""Report writer for ``attnlimits verify``: a terminal table, Markdown, JSON, tidy CSV and PNG plots.

Input is the list of :class:`attnlimits.verify.claims.base.ClaimResult` returned by
:func:`attnlimits.verify.claims.base.run_claims`.

Outputs (GUIDE §3: results go to a folder the user chooses, with the parameters, seeds and versions
that made them)
---------------------------------------------------------------------------------------------------------
:func:`format_table`
    plain text, at most :data:`TABLE_WIDTH` columns: one block per claim (name, verdict, time,
    title) with one line per check (label, kind, theory, MC mean ± SE, threshold, ✓/✗), then a
    summary line ``"22 claims: 21 pass, 0 fail, 1 discrepancy (43.2 s)"``.
:func:`write_report`
    into ``out_dir`` (created with its parents):

    ``report.md``     metadata, environment, summary table, a *Discrepancies* section (always present;
                      quoted vs derived numbers), then one section per claim with its checks and plot;
    ``results.json``  ``{"meta", "environment", "summary", "claims"}``; NaN/±inf written as ``null``;
    ``results.csv``   tidy, one row per check (a claim without checks, e.g. one that raised, gets
                      one row with empty check columns so that it is not lost);
    ``plots/<claim>.png``  one PNG per claim with plot specs (several specs side by side).
:func:`environment_info`
    versions (Python, attnlimits, numpy, scipy, sympy, mpmath, torch, matplotlib), CUDA availability
    and device name, platform and a UTC time stamp. No host name.

Comparison rule shown in the tables (:mod:`attnlimits.verify.comparison`, stated there once): each
check with a Monte Carlo SE has a statistic (``z``, or ``t<dof>`` when its SE comes from few
replicates) — the deviation beyond its tolerance (a quoted number's precision) and allowance, in
SEs —, a raw p-value, and, after :func:`attnlimits.verify.claims.base.run_claims` applied Holm's
procedure at the run's family-wise level, the *adjusted threshold* its p-value was compared with
(``level/(m − rank + 1)``) and its Holm-adjusted p-value; it fails iff the adjusted p ≤ level.
The *threshold* column is the same decision in the value's units; the *MDD* column is the check's
minimum detectable deviation relative to its headline quantity (``t·SE + tolerance + allowance`` at
the level a lone deviation needs under Holm, level/m; :attr:`attnlimits.verify.claims.base.Check.mdd`),
and each claim states its own (the largest of its checks') against the mode's target. Checks without SE are
deterministic (``|value − theory| ≤ tolerance + allowance``). ``report.md`` states the rule, the
level and the family size; ``results.json`` has them under ``"family"``.

Plots use :class:`matplotlib.figure.Figure` with :class:`~matplotlib.backends.backend_agg.FigureCanvasAgg`
directly, so the user's global matplotlib backend is never changed.

Example
-------
>>> from attnlimits.verify.report import format_table, write_report          # doctest: +SKIP
>>> print(format_table(results))                                    # doctest: +SKIP
>>> write_report(results, "verify-report", meta={"mode": "quick", "seed": 0})  # doctest: +SKIP
"""
from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import math
import os
import platform
import re
import shlex
import warnings
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from attnlimits.verify._flags import caption, measured_points, theory_line

__all__ = ["format_table", "write_report", "environment_info", "family_summary", "TABLE_WIDTH", "CSV_COLUMNS"]

#: Maximum width (characters, ANSI codes excluded) of :func:`format_table` lines.
TABLE_WIDTH = 110

#: Columns of ``results.csv``, in order: the claim, its verdict and the check, then the comparison's
#: columns as every table prints them (:data:`attnlimits.verify.comparison.COMPARISON_COLUMNS`: value,
#: theory, se, dof, tolerance, allowance, z, law, p_value), then the run's decision and power.
CSV_COLUMNS = (
    "claim", "verdict", "check", "kind", "value", "theory", "se", "dof", "tolerance", "allowance", "z", "law", "p_value",
    "k", "threshold", "passed", "tolerance_reason", "p_adjusted", "holm_threshold", "level", "mdd", "mdd_relative",
    "mode", "seed", "device",
)

_VERDICTS = ("pass", "fail", "discrepancy")
_ANSI = {"pass": "\033[32m", "fail": "\033[1;31m", "discrepancy": "\033[1;33m", "other": "\033[1;35m"}
_ANSI_RESET = "\033[0m"
_MARK = {True: "✓", False: "✗"}


# --------------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------------
def _attr(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute of a dataclass, or key of a dict (plot specs given as dicts are accepted)."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _as_float(x: Any) -> float | None:
    """``float(x)`` for numbers (NumPy scalars and 0-d tensors included); ``None`` when not a number."""
    if x is None or isinstance(x, (str, bytes)):
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _is_interval(theory: Any) -> bool:
    return isinstance(theory, (tuple, list)) and len(theory) == 2


def _num(x: Any, digits: int = 4) -> str:
    """Number with ``digits`` significant digits; ``—`` for None, ``nan``/``inf`` as such."""
    if _is_interval(x):
        return f"[{_num(x[0], digits)}, {_num(x[1], digits)}]"
    f = _as_float(x)
    if f is None:
        return "—" if x is None else str(x)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f"{f:.{digits}g}"


def _mc(value: Any, se: Any) -> str:
    """``mean ± SE``: the mean at 4 significant digits, the SE at 2 (``%.2g``)."""
    return _num(value) if se is None else f"{_num(value)} ± {_num(se, 2)}"


def _fit(text: str, width: int, align: str = "<") -> str:
    """Clip ``text`` to ``width`` characters (ending with …) and pad it."""
    text = " ".join(str(text).split())  # one line
    if len(text) > width:
        text = text[: max(width - 1, 0)] + "…"
    return f"{text:{align}{width}}"


def _verdict_key(verdict: str) -> str:
    v = (verdict or "").lower()
    return v if v in _VERDICTS else "other"


def _paint(text: str, verdict_or_mark: str | bool, color: bool) -> str:
    if not color:
        return text
    if isinstance(verdict_or_mark, bool):
        code = _ANSI["pass"] if verdict_or_mark else _ANSI["fail"]
    else:
        code = _ANSI[_verdict_key(verdict_or_mark)]
    return f"{code}{text}{_ANSI_RESET}"


def _counts(results: Sequence) -> dict:
    counts = {v: 0 for v in _VERDICTS}
    other = 0
    for r in results:
        key = _verdict_key(r.verdict)
        if key == "other":
            other += 1
        else:
            counts[key] += 1
    counts["other"] = other
    return counts


def _summary_line(results: Sequence, elapsed: float | None) -> str:
    n = len(results)
    c = _counts(results)
    if elapsed is None:
        elapsed = sum(float(r.elapsed or 0.0) for r in results)
    text = f"{n} claim{'s' if n != 1 else ''}: {c['pass']} pass, {c['fail']} fail, {c['discrepancy']} discrepancy"
    if c["other"]:
        text += f", {c['other']} other"
    return text + f" ({elapsed:.1f} s)"


def _check_passed(check: Any) -> bool:
    try:
        return bool(check.passed)
    except Exception:  # noqa: BLE001 - a malformed check is shown as failed, never crashes the report
        return False


def _check_threshold(check: Any) -> float | None:
    try:
        return float(check.threshold)
    except Exception:  # noqa: BLE001
        return None


def _safe(check: Any, name: str) -> Any:
    """A derived attribute of a check (statistic, p_value, law...), ``None`` when it cannot be computed."""
    try:
        return getattr(check, name, None)
    except Exception:  # noqa: BLE001
        return None


def _stat_text(check: Any) -> str:
    """``z 2.31`` or ``t3 −2.31``; ``—`` for deterministic checks."""
    s = _float_or_none(_safe(check, "statistic"))
    if s is None:
        return "—"
    dof = _float_or_none(_attr(check, "dof"))
    law = "z" if dof is None else (f"t{dof:.0f}" if dof >= 10 else f"t{dof:.2g}")
    return f"{law} {s:+.2f}" if abs(s) < 100 else f"{law} {s:+.1e}"


def _p_text(x: Any) -> str:
    f = _float_or_none(x)
    if f is None:
        return "—"
    return f"{f:.3f}" if f >= 0.01 else f"{f:.1e}"


def _tol_text(check: Any) -> str:
    tol = _float_or_none(_attr(check, "tolerance"))
    if not tol:
        return "—"
    why = _attr(check, "tolerance_reason", "") or ""
    if not why and _float_or_none(_attr(check, "se")):
        why = "unlabelled"
    return f"{_num(tol, 3)} ({why})" if why else _num(tol, 3)


def _beyond(check: Any, k: float) -> bool:
    """|z| or |t| > k for two-sided checks; statistic > k (the failing side) for bounds and intervals."""
    s = _float_or_none(_safe(check, "statistic"))
    if s is None:
        return False
    return (abs(s) if _attr(check, "kind", "abs") in ("abs", "rel") else s) > k


def family_summary(results: Sequence, level: float | None = None) -> dict:
    """The family of a run: its level, size, failures, and how far its checks sit from theory.

    ``beyond_2_5``: checks whose |z| (normal-equivalent of t) exceeds 2.5; ``max_z_passing``: the
    largest normal-equivalent |z| among passing checks; ``unlabelled_tolerances``: checks with an SE
    and a nonzero tolerance not labelled as a quoted precision or numerical accuracy."""
    from attnlimits.verify.comparison import LEVEL, z_equivalent

    members = [c for r in results for c in r.checks if bool(_safe(c, "stochastic"))]
    levels = {_attr(c, "level") for c in members if _attr(c, "level") is not None}
    if level is None:
        level = levels.pop() if len(levels) == 1 else LEVEL
    zs = []
    for c in members:
        p = _float_or_none(_safe(c, "p_value"))
        sided = 2 if _attr(c, "kind", "abs") in ("abs", "rel") else 1
        z = z_equivalent(p, sided=sided) if p is not None else None
        zs.append((z, _check_passed(c)))
    unlabelled = sum(1 for c in members if (_float_or_none(_attr(c, "tolerance")) or 0) > 0
                     and not (_attr(c, "tolerance_reason", "") or ""))
    return {
        "rule": "Holm step-down over the p-values of all checks with a Monte Carlo SE "
                "(normal law, or Student t with the SE's degrees of freedom)",
        "level": level, "m": len(members), "failed": sum(1 for _, ok in zs if not ok),
        "with_t": sum(1 for c in members if _attr(c, "dof") is not None),
        "beyond_2_5": sum(1 for z, _ in zs if z is not None and z > 2.5),
        "beyond_2_5_raw": sum(1 for c in members if _beyond(c, 2.5)),
        "max_z_passing": max((z for z, ok in zs if ok and z is not None), default=None),
        "unlabelled_tolerances": unlabelled,
        **_power_summary(results),
    }


def _power_summary(results: Sequence) -> dict:
    """How many quantitative checks have a relative MDD above 5 % and 10 %, and which claims exceed
    their mode's target (explained by :data:`attnlimits.verify.claims._power.EXCEPTIONS` or not)."""
    from attnlimits.verify.claims._power import mdd_status

    rel = [_as_float(_safe(c, "mdd_relative")) for r in results for c in r.checks]
    rel = [x for x in rel if x is not None and not math.isnan(x)]
    above, unexplained = [], []
    for r in results:
        try:
            st = mdd_status(r)
        except Exception:  # noqa: BLE001
            continue
        if st != "ok":
            above.append(r.claim)
            if st == "above target":
                unexplained.append(r.claim)
    return {"mdd_checks": len(rel), "mdd_above_5": sum(x > 0.05 for x in rel),
            "mdd_above_10": sum(x > 0.10 for x in rel), "claims_above_target": len(above),
            "claims_unexplained": len(unexplained), "claims_above_target_names": above,
            "claims_unexplained_names": unexplained}


# --------------------------------------------------------------------------------------------------
# terminal table
# --------------------------------------------------------------------------------------------------
# check line: indent 2 | label (up to 24) | kind | theory | MC mean ± SE | threshold | MDD | z/t | p | adj. thr | mark.
# The number columns are as wide as their widest cell (a number is never clipped); where the line
# would exceed the width, adj. thr, then MDD, then threshold are left out (results.csv and
# report.md have them), and a label that does not fit goes on a line of its own.
_W_LABEL = 24
_OPTIONAL = ("adj. thr", "MDD", "threshold")  # left out in this order on a narrow terminal


def _pct(x: Any) -> str:
    """A relative MDD as a percentage (``—`` without one, ``inf`` for an infinite one)."""
    f = _as_float(x)
    if f is None or math.isnan(f):
        return "—"
    if math.isinf(f):
        return "inf"
    p = 100 * f
    return f"{p:.2g}%" if p < 10 else (f"{p:.0f}%" if p < 1e4 else f"{p:.0e}%")


def _mdd_line(result: Any) -> str | None:
    """The claim's MDD against its target: ``MDD 3.2% (target 5%)``, with the exception or warning."""
    from attnlimits.verify.claims._power import TARGET, mdd_status

    m = _safe(result, "mdd")
    if m is None:
        return None
    mode = _attr(result, "mode", "") or "quick"
    try:
        status = mdd_status(result)
    except Exception:  # noqa: BLE001
        status = ""
    text = f"MDD {_pct(m)} (target {_pct(TARGET.get(mode, TARGET['quick']))})"
    if status.startswith("exception"):
        text += " — above the target; " + status
    elif status == "above target":
        text += " — ABOVE THE TARGET, not explained"
    return text


#: The narrowest table :func:`format_table` lays out.
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
                "kind": str(_attr(c, "kind", "abs")), "theory": _num(_attr(c, "theory")),
                "MC mean ± SE": _mc(_attr(c, "value"), _attr(c, "se")), "threshold": _num(_check_threshold(c), 3),
                "MDD": _pct(_safe(c, "mdd_relative")), "z / t": _stat_text(c), "p": _p_text(_safe(c, "p_value")),
                "adj. thr": _p_text(_attr(c, "holm_threshold"))}
    cols = ["kind", "theory", "MC mean ± SE", "threshold", "MDD", "z / t", "p", "adj. thr"]
    widths = {k: max([len(k)] + [len(v[k]) for v in cells.values()]) for k in cols}

    def numbers_width(cs):
        return sum(widths[k] + 1 for k in cs) + 2  # each column and its space, the ✓/✗ mark
    for drop in _OPTIONAL:  # a label column of at least 8 beside the numbers, or fewer columns
        if 2 + 8 + 1 + numbers_width(cols) <= width:
            break
        cols.remove(drop)
    w_label = max(0, min(_W_LABEL, width - 2 - 1 - numbers_width(cols)))
    head2 = "  " + " ".join([_fit("check", w_label)] + [_fit(k, widths[k]) for k in cols] + ["ok"])
    lines = [head1, head2.rstrip(), rule]
    for r in results:
        verdict = (r.verdict or "?").upper()
        name = f"{r.claim:<13} "  # a longer name is written whole: the row just starts later
        vword = _fit(verdict, 12).rstrip()
        vpad = " " * (13 - len(vword))
        tfield = f"{float(r.elapsed or 0.0):>6.1f} s  "
        lead = len(name) + 13 + len(tfield)
        title = _wrapped(r.title or "", max(width, lead + 20), " " * lead, first_indent=" " * lead)
        lines.append(name + _paint(vword, r.verdict, color) + vpad + tfield + title[0][lead:])
        lines += title[1:]
        for c in r.checks:
            ok = _check_passed(c)
            label = " ".join(str(_attr(c, "label", "")).split())
            if len(label) > w_label:  # the whole label on a line of its own, the numbers below it
                lines += ["  " + s for s in _wrapped(label, width - 2, "    ")]
                label = ""
            row = cells[id(c)]
            line = "  " + " ".join([f"{label:<{w_label}}"] + [f"{row[k]:<{widths[k]}}" for k in cols]) + " "
            lines.append(line + _paint(_MARK[ok], ok, color))
        mline = _mdd_line(r)
        if mline:
            lines += ["  " + s for s in _wrapped(mline, width - 2, "    ")]
        notes = (r.notes or "").strip()
        if notes and (not r.checks or _verdict_key(r.verdict) != "pass"):
            first = notes.splitlines()[0]
            prefix = "  (no checks) " if not r.checks else "  note: "
            lines.append((prefix + _fit(first, width - len(prefix))).rstrip())
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
    lines.append(_summary_line(results, elapsed))
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# environment
# --------------------------------------------------------------------------------------------------
def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def environment_info() -> dict:
    """Versions and hardware of this run (no host name, no user name).

    Returns
    -------
    dict
        ``timestamp`` (UTC, ISO 8601), ``python``, ``platform`` (:func:`platform.platform`),
        ``machine``, ``versions`` (attnlimits — ``"dev"`` when not installed —, numpy, scipy, sympy,
        mpmath, torch, matplotlib; ``None`` when absent), ``cuda_available``, ``cuda_version``
        (the CUDA torch was built with) and ``cuda_device`` (name of device 0, or ``None``).
        Imports torch when installed (about a second the first time).
    """
    versions = {"attnlimits": _dist_version("attnlimits") or "dev"}
    for dist in ("numpy", "scipy", "sympy", "mpmath", "torch", "matplotlib"):
        versions[dist] = _dist_version(dist)
    info: dict[str, Any] = {
        "timestamp": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "versions": versions,
        "cuda_available": False,
        "cuda_version": None,
        "cuda_device": None,
    }
    try:
        import torch

        versions["torch"] = versions["torch"] or str(torch.__version__)
        info["cuda_version"] = torch.version.cuda
        available = bool(torch.cuda.is_available())
        info["cuda_available"] = available
        if available:
            info["cuda_device"] = torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001 - torch missing or broken: report what we know
        pass
    return info


# --------------------------------------------------------------------------------------------------
# JSON / CSV
# --------------------------------------------------------------------------------------------------
_FLOAT_FIELDS = ("value", "se", "tolerance", "k", "allowance", "threshold", "dof", "statistic", "z", "p_value",
                 "p_adjusted", "holm_threshold", "level", "mdd", "mdd_relative", "mdd_level", "scale")


def _clean(x: Any) -> Any:
    """JSON-safe copy: NumPy/torch scalars and arrays to Python, NaN/±inf to ``None``, tuples and sets
    to lists, unknown objects to ``str``."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, Mapping):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [_clean(v) for v in x]
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    tolist = getattr(x, "tolist", None)  # numpy arrays/scalars, torch tensors
    if callable(tolist):
        try:
            return _clean(tolist())
        except Exception:  # noqa: BLE001
            pass
    if isinstance(x, os.PathLike):
        return os.fspath(x)
    f = _as_float(x)
    if f is not None and not isinstance(x, complex):
        return f if math.isfinite(f) else None
    return str(x)


def _float_or_none(x: Any) -> float | None:
    f = _as_float(x)
    return f if f is not None and math.isfinite(f) else None


def _check_dict(check: Any) -> dict:
    try:
        d = check.to_dict()
    except Exception:  # noqa: BLE001 - e.g. unknown kind: keep the numbers, mark it failed
        d = {k: _attr(check, k) for k in ("label", "theory", "value", "se", "tolerance", "k", "allowance", "kind", "note")}
        d["theory"] = list(d["theory"]) if _is_interval(d["theory"]) else d["theory"]
        d["threshold"], d["passed"] = _check_threshold(check), False
    for key in _FLOAT_FIELDS:
        if key in d and d[key] is not None:
            d[key] = _float_or_none(d[key])
    th = d.get("theory")
    d["theory"] = [_float_or_none(v) for v in th] if _is_interval(th) else _float_or_none(th)
    d["passed"] = bool(d.get("passed"))
    return _clean(d)


def _claim_dict(result: Any, plot: str | None) -> dict:
    try:
        d = result.to_dict()
    except Exception:  # noqa: BLE001 - a malformed check must not lose the whole report
        d = {"claim": result.claim, "title": result.title, "verdict": result.verdict, "source": result.source,
             "tags": list(result.tags), "elapsed_s": round(float(result.elapsed or 0.0), 3),
             "notes": result.notes, "params": result.params}
    d["checks"] = [_check_dict(c) for c in result.checks]
    d["plot"] = plot
    return _clean(d)


def _csv_number(x: Any) -> str:
    if x is None:
        return ""
    if _is_interval(x):
        return f"{_csv_number(x[0])};{_csv_number(x[1])}"
    f = _as_float(x)
    return str(x) if f is None else repr(f)


def comparison_of(check: Any):
    """The check's :class:`~attnlimits.verify.comparison.Comparison` (``None`` for a check without a
    numeric value and theory, e.g. a qualitative one)."""
    from attnlimits.verify.comparison import Comparison

    th = _attr(check, "theory")
    try:
        ref = tuple(float(x) for x in th) if _is_interval(th) else float(th)
        se = _attr(check, "se")
        dof = _attr(check, "dof")
        return Comparison(float(_attr(check, "value")), ref, se=None if se is None else float(se),
                          dof=None if dof is None else float(dof), tolerance=float(_attr(check, "tolerance") or 0.0),
                          allowance=float(_attr(check, "allowance") or 0.0), kind=_attr(check, "kind", "abs") or "abs")
    except (TypeError, ValueError):
        return None


def check_columns(check: Any) -> dict:
    """The comparison columns of one check (:func:`attnlimits.verify.comparison.comparison_columns`), as
    ``results.csv`` writes them; ``explore`` writes the same columns for the same comparison."""
    from attnlimits.verify.comparison import comparison_columns

    comp = comparison_of(check)
    cols = {"kind": _attr(check, "kind", "abs") or "abs", **comparison_columns(comp)}
    if comp is None:  # no comparison: the raw fields, as given
        cols.update(value=_as_float(_attr(check, "value")),
                    se=_as_float(_attr(check, "se")), tolerance=_as_float(_attr(check, "tolerance")),
                    allowance=_as_float(_attr(check, "allowance")))
    return cols


def _csv_rows(results: Sequence, meta: Mapping) -> list[dict]:
    base = {"mode": meta.get("mode", ""), "seed": meta.get("seed", ""), "device": meta.get("device", "")}
    base = {k: "" if v is None else v for k, v in base.items()}
    rows = []
    for r in results:
        if not r.checks:
            rows.append({k: "" for k in CSV_COLUMNS} | {"claim": r.claim, "verdict": r.verdict, **base})
            continue
        for c in r.checks:
            cols = {k: "" if v is None else (_csv_number(v) if isinstance(v, float) else v)
                    for k, v in check_columns(c).items()}
            rows.append({
                "claim": r.claim, "verdict": r.verdict, "check": _attr(c, "label", ""), **cols,
                "k": _csv_number(_attr(c, "k")), "threshold": _csv_number(_check_threshold(c)),
                "passed": _check_passed(c), "tolerance_reason": _attr(c, "tolerance_reason", "") or "",
                "p_adjusted": _csv_number(_attr(c, "p_adjusted")),
                "holm_threshold": _csv_number(_attr(c, "holm_threshold")), "level": _csv_number(_attr(c, "level")),
                "mdd": _csv_number(_safe(c, "mdd")), "mdd_relative": _csv_number(_safe(c, "mdd_relative")), **base,
            })
    return rows


# --------------------------------------------------------------------------------------------------
# plots
# --------------------------------------------------------------------------------------------------
def _safe_name(name: str, taken: set[str]) -> str:
    """File-name-safe version of a claim name, unique (case-insensitively) among ``taken``."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)).strip("._-") or "claim"
    stem = stem[:80]
    cand, i = stem, 2
    while cand.lower() in taken:
        cand, i = f"{stem}-{i}", i + 1
    taken.add(cand.lower())
    return cand


def _array(values: Any):
    import numpy as np

    if values is None:
        return None
    out = []
    for v in (values.tolist() if hasattr(values, "tolist") else list(values)):
        f = _as_float(v)
        out.append(math.nan if f is None else f)
    return np.asarray(out, dtype=float)


def _set_scale(ax, which: str, scale: str, data) -> None:
    import numpy as np

    scale = (scale or "linear").lower()
    if scale == "log":
        finite = np.concatenate([d[np.isfinite(d)] for d in data]) if data else np.array([])
        if finite.size and np.all(finite > 0):
            (ax.set_xscale if which == "x" else ax.set_yscale)("log")
        elif finite.size:  # non-positive data on a log axis: symmetric log instead of dropping points
            nonzero = np.abs(finite[finite != 0])
            linthresh = float(np.min(nonzero)) if nonzero.size else 1.0
            (ax.set_xscale if which == "x" else ax.set_yscale)("symlog", linthresh=linthresh)
    elif scale in ("linear", "symlog", "logit"):
        (ax.set_xscale if which == "x" else ax.set_yscale)(scale)


def _draw_spec(ax, spec: Any) -> None:
    import numpy as np

    series = list(_attr(spec, "series", []) or [])
    lines = [s for s in series if _attr(s, "kind", "line") == "line"]
    points = [s for s in series if _attr(s, "kind", "line") == "points"]
    paired = len(lines) == len(points)  # theory curve i and MC points i share a colour
    groups = [g for g in dict.fromkeys(_attr(s, "group", None) for s in series) if g is not None]
    xs, ys = [], []
    n_line = n_point = 0
    for idx, s in enumerate(series):
        x, y = _array(_attr(s, "x")), _array(_attr(s, "y"))
        if x is None or y is None or len(x) != len(y):
            raise ValueError(f"series {_attr(s, 'label', '?')!r}: x and y lengths differ")
        xs.append(x), ys.append(y)
        kind = _attr(s, "kind", "line")
        is_points = kind == "points"
        group = _attr(s, "group", None)
        if groups:
            color = f"C{groups.index(group) % 10}" if group is not None else ("black" if kind == "dashed" else
                                                                              f"C{idx % 10}")
        elif paired:
            color = f"C{n_point if is_points else n_line}"
        else:
            color = f"C{idx % 10}"
        label = _attr(s, "label", None) or None
        flags = _attr(s, "flags", None)
        flags = list(flags) if flags is not None and len(list(flags)) == len(x) else None
        if kind == "dashed":
            ax.plot(x, y, "--" if group is not None else "-.", lw=1.1, color=color, label=label, zorder=1)
            continue
        yerr = _array(_attr(s, "yerr"))
        if yerr is not None and len(yerr) != len(y):
            yerr = None
        if is_points:  # NaN / negative errors drawn as none; a flagged point as an x (verify/_flags.py)
            measured_points(ax, x, y, yerr, flags, color=color, label=label, zorder=3)
            n_point += 1
        else:  # the line through the unflagged points, a flagged one hollow; isolated points stay visible
            theory_line(ax, x, y, flags, color=color, label=label, err=yerr, band=1.0, zorder=2)
            n_line += 1
    _set_scale(ax, "x", _attr(spec, "xscale", "log"), xs)
    _set_scale(ax, "y", _attr(spec, "yscale", "linear"), ys)
    ax.set_xlabel(str(_attr(spec, "xlabel", "") or ""))
    ax.set_ylabel(str(_attr(spec, "ylabel", "") or ""))
    ax.set_title(str(_attr(spec, "title", "") or ""), fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    if any(_attr(s, "label", None) for s in series):
        ax.legend(fontsize=7, framealpha=0.85)


def plot_caption(result: Any) -> str:
    """The sentence saying what the flagged markers of a claim's plots mean ("" when no point is flagged)."""
    return caption(f for spec in (_attr(result, "plots", None) or []) for s in (_attr(spec, "series", None) or [])
                   for f in (_attr(s, "flags", None) or []))


def _plot_claim(result: Any, path: Path) -> Path:
    """One PNG for a claim: its plot specs as subplots, side by side (at most 3 per row)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    specs = list(result.plots)
    ncols = min(len(specs), 3)
    nrows = math.ceil(len(specs) / ncols)
    fig = Figure(figsize=(4.8 * ncols, 3.8 * nrows + 0.4))
    FigureCanvasAgg(fig)
    try:
        axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. all-NaN series, empty legend
            for ax, spec in zip(axes, specs):
                _draw_spec(ax, spec)
            for ax in axes[len(specs):]:
                ax.set_visible(False)
            title = f"{result.claim} — {result.title}" if result.title else str(result.claim)
            if len(title) > 40 * ncols + 30:
                title = title[: 40 * ncols + 29] + "…"
            fig.suptitle(title, fontsize=10)
            said = plot_caption(result)
            if said:  # what the hollow / x markers mean, under the panels
                fig.text(0.5, 0.005, "\n".join(textwrap.wrap(said, 60 * ncols)), ha="center", va="bottom",
                         fontsize=7, color="0.3")
            fig.tight_layout(rect=(0, 0.06 if said else 0, 1, 1))
            from attnlimits.verify._io import save_figure

            save_figure(fig, path, dpi=110)  # atomically; a link in its place is replaced, not written through
    finally:
        fig.clear()
    return path


# --------------------------------------------------------------------------------------------------
# markdown
# --------------------------------------------------------------------------------------------------
def _md_cell(x: Any) -> str:
    return " ".join(str(x).split()).replace("|", "\\|")


def _md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(_md_cell(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return out


def _fence(text: str, lang: str = "text") -> list[str]:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + lang, text.rstrip("\n"), fence]


def _compact_json(params: Any) -> str:
    data = _clean(params)
    one = json.dumps(data, ensure_ascii=False)
    if len(one) <= 100 or not isinstance(data, dict):
        return one
    items = [f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in data.items()]
    return "{\n" + ",\n".join(items) + "\n}"


def _gap(check: Any) -> float | None:
    """|value − theory| (distance outside the interval for interval checks)."""
    v = _float_or_none(_attr(check, "value"))
    th = _attr(check, "theory")
    if v is None:
        return None
    if _is_interval(th):
        lo, hi = _float_or_none(th[0]), _float_or_none(th[1])
        if lo is None or hi is None:
            return None
        return max(lo - v, v - hi, 0.0)
    t = _float_or_none(th)
    return None if t is None else abs(v - t)


def _anchor(safe: str) -> str:
    return "claim-" + safe.lower()


def _verdict_md(verdict: str) -> str:
    v = (verdict or "?").upper()
    return v if _verdict_key(verdict) == "pass" else f"**{v}**"


def _command_text(cmd: Any) -> str:
    if isinstance(cmd, (list, tuple)):
        return shlex.join(str(c) for c in cmd)
    return str(cmd)


_META_LABELS = (("mode", "mode"), ("device", "device"), ("seed", "seed"), ("command", "command line"),
                ("elapsed_s", "elapsed"), ("elapsed", "elapsed"))


def _markdown(results: Sequence, meta: Mapping, env: Mapping, plots: Mapping[int, str],
              plot_errors: Mapping[int, str], anchors: Mapping[int, str]) -> str:
    L: list[str] = ["# attnlimits verify — report", ""]
    not_run = list(meta.get("not_run") or [])
    if meta.get("status") in ("partial", "interrupted"):
        why = ("the run was stopped (Ctrl-C)" if meta.get("status") == "interrupted"
               else "the run is still going; this report is rewritten after each claim")
        L += [f"> **Partial report**: {why}. {len(results)} claim(s) ran: "
              f"{', '.join(r.claim for r in results) or '(none)'}. "
              f"{len(not_run)} did not run: {', '.join(not_run) or '(none)'}. The family-wise rule below "
              "covers the claims that ran (a complete run has a larger family and stricter thresholds).", ""]
    L.append(f"**{_summary_line(results, _float_or_none(meta.get('elapsed_s', meta.get('elapsed'))))}**")
    L += ["", "## Run", ""]
    shown = set()
    rows = []
    for key, label in _META_LABELS:
        if key in meta and key not in shown and label not in {r[0] for r in rows}:
            val = meta[key]
            if key == "command":
                val = f"`{_command_text(val)}`"
            elif key.startswith("elapsed") and _float_or_none(val) is not None:
                val = f"{_float_or_none(val):.1f} s"
            rows.append((label, val))
            shown.add(key)
    for key, val in meta.items():
        if key not in shown and key not in ("environment", "references") and not key.startswith("elapsed"):
            rows.append((key, json.dumps(_clean(val), ensure_ascii=False) if not isinstance(val, str) else val))
    L += _md_table(("", ""), rows) if rows else ["(no metadata)"]

    fam = family_summary(results, _float_or_none(meta.get("level")))
    L += ["", "## How verdicts are decided", ""]
    L += [f"Family-wise rule: **Holm's step-down procedure at level {fam['level']:g}** over the {fam['m']} "
          f"checks with a Monte Carlo standard error ({fam['with_t']} of them by Student t with the "
          "degrees of freedom of their SE, the others by the normal law). A correct theory fails any of "
          f"them with probability at most {fam['level']:g}. Each such check's statistic is its deviation "
          "beyond its tolerance (a quoted number's precision, labelled) and finite-size allowance, in SEs; "
          "its p-value is compared with the adjusted threshold level/(m − rank + 1), rank 1 the smallest p, "
          "and checks fail in rank order until the first that passes (equivalently: adjusted p ≤ level). "
          "Checks without SE are deterministic: they pass iff |value − theory| ≤ tolerance + allowance. "
          "The rule is stated in `attnlimits.verify.comparison`.", ""]
    mz = fam["max_z_passing"]
    L += [f"This run: {fam['failed']} of {fam['m']} failed; {fam['beyond_2_5_raw']} have |z| or |t| > 2.5, "
          f"{fam['beyond_2_5']} lie beyond 2.5 SE normal-equivalent (same p-value); the largest normal-equivalent |z| of a passing check is "
          f"{'—' if mz is None else f'{mz:.2f}'}"
          + (f"; **{fam['unlabelled_tolerances']} check(s) with an SE carry a tolerance not labelled as a "
             "quoted precision**" if fam["unlabelled_tolerances"] else "") + "."]
    L += ["", "Power: a check detects a deviation of its headline quantity only beyond its *minimum detectable "
          "deviation* (MDD = t(1 − a/2, dof)·SE + tolerance + allowance at a = level/m, the level a lone "
          f"deviation needs under Holm). {fam['mdd_above_10']} of {fam['mdd_checks']} quantitative checks have "
          f"an MDD above 10 %, {fam['mdd_above_5']} above 5 %; {fam['claims_above_target']} claim(s) exceed "
          "their mode's MDD target"
          + (f" ({', '.join(fam['claims_above_target_names'])})" if fam["claims_above_target_names"] else "")
          + (f", **{fam['claims_unexplained']} without a stated reason** "
             f"({', '.join(fam['claims_unexplained_names'])})" if fam["claims_unexplained"] else "") + "."]

    L += ["", "## Environment", ""]
    env_rows = [("time (UTC)", env.get("timestamp")), ("python", env.get("python")),
                ("platform", env.get("platform"))]
    for name, ver in (env.get("versions") or {}).items():
        env_rows.append((name, ver if ver is not None else "not installed"))
    cuda = env.get("cuda_available")
    env_rows.append(("CUDA", (f"yes — {env.get('cuda_device')}" if cuda else "no")
                     + (f" (torch built with CUDA {env['cuda_version']})" if env.get("cuda_version") else "")))
    L += _md_table(("", ""), [(k, "—" if v is None else v) for k, v in env_rows])

    L += ["", "## Summary", ""]
    L += _md_table(("claim", "title", "verdict", "checks", "MDD", "time"), [
        (f"[{r.claim}](#{_anchor(anchors[i])})", r.title or "", _verdict_md(r.verdict),
         f"{sum(_check_passed(c) for c in r.checks)}/{len(r.checks)}", _pct(_safe(r, "mdd")),
         f"{float(r.elapsed or 0.0):.1f} s")
        for i, r in enumerate(results)
    ])

    # discrepancies: always listed, never hidden
    L += ["", "## Discrepancies", ""]
    disc = [(i, r) for i, r in enumerate(results) if _verdict_key(r.verdict) == "discrepancy"]
    if not disc:
        L.append("None in this run: no claim quoted from a paper is contradicted by the derivation.")
    else:
        L += ["> [!WARNING]",
              f"> **{len(disc)} claim{'s' if len(disc) != 1 else ''} as quoted by a paper "
              f"{'are' if len(disc) != 1 else 'is'} contradicted by the derivation.** "
              "Both numbers are listed; the quoted statement is not corrected and this is not a failure of the run.",
              ""]
        for i, r in disc:
            L += [f"### [{r.claim}](#{_anchor(anchors[i])}) — {_md_cell(r.title or '')}", ""]
            if r.source:
                L += [f"Source: {_md_cell(r.source)}", ""]
            L += _md_table(("check", "quoted (theory)", "derived (MC/derivation) ± SE", "|Δ|", "ratio", "threshold", ""), [
                (_attr(c, "label", ""), _num(_attr(c, "theory"), 6), _mc_md(c, 6), _num(_gap(c)), _ratio(c),
                 _num(_check_threshold(c)), "✓" if _check_passed(c) else "✗ contradicted")
                for c in r.checks
            ])
            L.append("")
            for key in ("quoted", "derived", "ratio"):
                if isinstance(r.params, Mapping) and key in r.params:
                    L.append(f"- {key}: `{_compact_json(r.params[key])}`")
            if r.notes:
                L += [""] + _notes_md(r.notes)
            L.append("")

    L += ["", "## Claims", ""]
    for i, r in enumerate(results):
        L += [f'<a id="{_anchor(anchors[i])}"></a>', "", f"### {_md_cell(r.claim)} — {_md_cell(r.title or '')}", ""]
        L.append(f"Verdict: {_verdict_md(r.verdict)} · time {float(r.elapsed or 0.0):.1f} s")
        mline = _mdd_line(r)
        if mline:
            L += ["", mline]
        L.append("")
        if r.source:
            L += [f"Source: {_md_cell(r.source)}", ""]
        if r.tags:
            L += ["Tags: " + ", ".join(f"`{t}`" for t in r.tags), ""]
        if r.params:
            L += ["Parameters:", ""] + _fence(_compact_json(r.params), "json") + [""]
        if r.checks:
            L += _md_table(("check", "kind", "theory", "MC mean ± SE", "|Δ|", "tolerance", "z / t", "p",
                            "adj. threshold", "adj. p", "threshold", "MDD", "", "note"), [
                (_attr(c, "label", ""), _attr(c, "kind", "abs"), _num(_attr(c, "theory"), 6), _mc_md(c, 6),
                 _num(_gap(c)), _tol_text(c), _stat_text(c), _p_text(_safe(c, "p_value")),
                 _p_text(_attr(c, "holm_threshold")), _p_text(_attr(c, "p_adjusted")), _num(_check_threshold(c)),
                 _pct(_safe(c, "mdd_relative")), "✓" if _check_passed(c) else "✗", _attr(c, "note", "") or "")
                for c in r.checks
            ])
        else:
            L.append("*No checks were produced.*")
        L.append("")
        if r.notes:
            L += _notes_md(r.notes) + [""]
        if i in plots:
            L += [f"![{_md_cell(r.claim)} plots]({plots[i]})", ""]
            if plot_caption(r):
                L += [f"*{_md_cell(plot_caption(r))}.*", ""]
        elif i in plot_errors:
            L += [f"*Plot could not be drawn: {_md_cell(plot_errors[i])}*", ""]
    refs = meta.get("references") or []
    if refs:
        L += ["## References", ""] + [f"- {_md_cell(str(ref))}" for ref in refs] + [""]
    L += ["---", "", f"Comparison rule: Holm at family-wise level {fam['level']:g} over the checks with an SE "
          "(z, or t with the SE's degrees of freedom, of the deviation beyond tolerance + allowance); the "
          "*threshold* column is the same decision in the value's units (relative checks scale the tolerance "
          "by |theory|, interval checks widen [lo, hi] by it). Full-precision numbers are in `results.json` "
          "and `results.csv`.", ""]
    return "\n".join(L)


def _mc_md(check: Any, digits: int) -> str:
    se = _attr(check, "se")
    v = _num(_attr(check, "value"), digits)
    return v if se is None else f"{v} ± {_num(se, 3)}"


def _ratio(check: Any) -> str:
    v, t = _float_or_none(_attr(check, "value")), _attr(check, "theory")
    t = None if _is_interval(t) else _float_or_none(t)
    if v is None or t is None or t == 0:
        return "—"
    return _num(v / t)


def _notes_md(notes: str) -> list[str]:
    notes = notes.strip()
    if "\n" in notes:
        return ["Notes:", ""] + _fence(notes)
    return [f"Notes: {notes}"]


# --------------------------------------------------------------------------------------------------
# write_report
# --------------------------------------------------------------------------------------------------
#: PNG path → the ``plots`` list of the ClaimResult drawn there in this process (held, so that an
#: identity test is sound): ``verify`` rewrites the report after every claim on shallow copies of the
#: results (a stop leaves a valid partial report), and redrawing every earlier figure each time made
#: the quick run's report writing quadratic (about 7-9 s between claims by the end of 65 claims)
_DRAWN: dict = {}


def _drawn_for(path: Path, result) -> bool:
    """Whether ``path`` holds this process's figure of ``result``'s plots (``None``: of any result)."""
    stored = _DRAWN.get(str(Path(path).resolve()))
    if stored is None or not Path(path).exists():
        return False
    return result is None or stored is result.plots


#: the entry of the output folder's manifest (:data:`attnlimits.verify._io.MANIFEST`) listing the report's files
MANIFEST_KEY = "verify"


def _inside(out: Path, path: Path) -> bool:
    root, real = out.resolve(), path.resolve()
    return real == root or root in real.parents


def write_report(results: Sequence, out_dir: str | os.PathLike, *, meta: Mapping | None = None) -> Path:
    """Write ``report.md``, ``results.json``, ``results.csv`` and ``plots/<claim>.png`` into ``out_dir``.

    Parameters
    ----------
    results : list of ClaimResult
    out_dir : path
        Created with its parents if missing; existing files of the same names are overwritten.
        The files written are listed in ``out_dir/.attnlimits-manifest.json``; a figure in ``plots/``
        is removed only when that manifest lists it from an earlier report and this one does not
        draw it (named on stderr) — other files in the folder are never touched.  ``plots`` a link
        to a folder outside ``out_dir``: ``OSError``, nothing written through it.
    meta : dict
        Run metadata shown in the report and stored in the JSON: ``mode``, ``device``, ``seed``,
        ``command`` (string or argv list), ``elapsed_s`` (or ``elapsed``) and anything else.
        ``mode``, ``seed`` and ``device`` are also columns of the CSV. An ``environment`` entry, if
        given, replaces :func:`environment_info` (e.g. to reuse one collected earlier).

    Returns
    -------
    pathlib.Path
        Path of ``report.md``.

    Raises
    ------
    OSError
        ``"cannot write report to DIR: reason"`` when the folder or a file cannot be written.

    Notes
    -----
    A plot that cannot be drawn (malformed series) does not abort the report: the claim's section
    says why, and the JSON has ``"plot": null`` for it.
    """
    from attnlimits.verify._io import record_files, remove_previous, write_text

    meta = dict(meta or {})
    out = Path(out_dir)
    env = meta.pop("environment", None) or environment_info()
    taken: set[str] = set()
    safe = {i: _safe_name(r.claim, taken) for i, r in enumerate(results)}
    plots: dict[int, str] = {}
    plot_errors: dict[int, str] = {}
    try:
        out.mkdir(parents=True, exist_ok=True)
        planned = {f"plots/{safe[i]}.png" for i, r in enumerate(results) if r.plots}
        if planned and not _inside(out, out / "plots"):  # nothing written through a link out of the folder
            raise OSError(f"plots is a link to {(out / 'plots').resolve()}, outside the folder; nothing is written "
                          "through it")
        # a rerun into the same folder must not leave the previous run's figures, and must not touch
        # anything else: only the figures the manifest lists as written by an earlier report go
        remove_previous(out, MANIFEST_KEY, planned, under="plots")
        if planned:
            (out / "plots").mkdir(exist_ok=True)
        for i, r in enumerate(results):
            if not r.plots:
                continue
            rel = f"plots/{safe[i]}.png"
            try:
                if not _drawn_for(out / rel, r):  # a partial report rewritten after each claim redraws only the new
                    _plot_claim(r, out / rel)
                    _DRAWN[str((out / rel).resolve())] = r.plots
                plots[i] = rel
            except OSError:
                raise
            except Exception as exc:  # noqa: BLE001 - reported in the markdown, never fatal
                plot_errors[i] = f"{type(exc).__name__}: {exc}"
        summary = {"claims": len(results), **_counts(results),
                   "elapsed_s": _float_or_none(meta.get("elapsed_s", meta.get("elapsed")))
                   or round(sum(float(r.elapsed or 0.0) for r in results), 3)}
        doc = {"meta": _clean(meta), "environment": _clean(env), "summary": summary,
               "family": _clean(family_summary(results, _float_or_none(meta.get("level")))),
               "claims": [_claim_dict(r, plots.get(i)) for i, r in enumerate(results)]}
        # every file atomically (temporary + replace): a write failing partway keeps the previous file;
        # results.json lists the files of this run (the folder may hold others)
        doc["files"] = ["report.md", "results.json", "results.csv", *sorted(plots.values())]
        write_text(out / "results.json", json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
        buf = io.StringIO(newline="")
        writer = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS))
        writer.writeheader()
        writer.writerows(_csv_rows(results, meta))
        write_text(out / "results.csv", buf.getvalue())
        md_path = out / "report.md"
        write_text(md_path, _markdown(results, meta, env, plots, plot_errors, safe))
        record_files(out, MANIFEST_KEY, doc["files"])
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.filename and os.fspath(exc.filename) != os.fspath(out):
            reason += f" ({exc.filename})"
        raise OSError(f"cannot write report to {out}: {reason}") from exc
    return md_path
