"""``report.md`` of a run (:func:`markdown_text`): metadata, environment, the summary table, the
discrepancies, then one section per claim with its checks and plot."""
from __future__ import annotations

import json
import re
import shlex
from typing import Any, Iterable, Mapping, Sequence

from .checks import attr_of, check_passed, check_threshold, family_summary, float_or_none, format_number, is_interval, mdd_line, p_text, percent_text, safe_attr, stat_text, summary_line, tol_text, verdict_key
from .records import clean
from .plots import plot_caption

__all__ = ["markdown_text"]


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
    data = clean(params)
    one = json.dumps(data, ensure_ascii=False)
    if len(one) <= 100 or not isinstance(data, dict):
        return one
    items = [f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in data.items()]
    return "{\n" + ",\n".join(items) + "\n}"


def _gap(check: Any) -> float | None:
    """|value − theory| (distance outside the interval for interval checks)."""
    v = float_or_none(attr_of(check, "value"))
    th = attr_of(check, "theory")
    if v is None:
        return None
    if is_interval(th):
        lo, hi = float_or_none(th[0]), float_or_none(th[1])
        if lo is None or hi is None:
            return None
        return max(lo - v, v - hi, 0.0)
    t = float_or_none(th)
    return None if t is None else abs(v - t)


def _anchor(safe: str) -> str:
    return "claim-" + safe.lower()


def _verdict_md(verdict: str) -> str:
    v = (verdict or "?").upper()
    return v if verdict_key(verdict) == "pass" else f"**{v}**"


def _command_text(cmd: Any) -> str:
    if isinstance(cmd, (list, tuple)):
        return shlex.join(str(c) for c in cmd)
    return str(cmd)


_META_LABELS = (("mode", "mode"), ("device", "device"), ("seed", "seed"), ("command", "command line"),
                ("elapsed_s", "elapsed"), ("elapsed", "elapsed"))


def markdown_text(results: Sequence, meta: Mapping, env: Mapping, plots: Mapping[int, str],
                  plot_errors: Mapping[int, str], anchors: Mapping[int, str]) -> str:
    """The text of ``report.md`` (``plots``/``plot_errors``/``anchors``: by claim index)."""
    L: list[str] = ["# attnlimits verify — report", ""]
    not_run = list(meta.get("not_run") or [])
    if meta.get("status") in ("partial", "interrupted"):
        why = ("the run was stopped (Ctrl-C)" if meta.get("status") == "interrupted"
               else "the run is still going; this report is rewritten after each claim")
        L += [f"> **Partial report**: {why}. {len(results)} claim(s) ran: "
              f"{', '.join(r.claim for r in results) or '(none)'}. "
              f"{len(not_run)} did not run: {', '.join(not_run) or '(none)'}. The family-wise rule below "
              "covers the claims that ran (a complete run has a larger family and stricter thresholds).", ""]
    L.append(f"**{summary_line(results, float_or_none(meta.get('elapsed_s', meta.get('elapsed'))))}**")
    L += ["", "## Run", ""]
    shown = set()
    rows = []
    for key, label in _META_LABELS:
        if key in meta and key not in shown and label not in {r[0] for r in rows}:
            val = meta[key]
            if key == "command":
                val = f"`{_command_text(val)}`"
            elif key.startswith("elapsed") and float_or_none(val) is not None:
                val = f"{float_or_none(val):.1f} s"
            rows.append((label, val))
            shown.add(key)
    for key, val in meta.items():
        if key not in shown and key not in ("environment", "references") and not key.startswith("elapsed"):
            rows.append((key, json.dumps(clean(val), ensure_ascii=False) if not isinstance(val, str) else val))
    L += _md_table(("", ""), rows) if rows else ["(no metadata)"]

    fam = family_summary(results, float_or_none(meta.get("level")))
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
         f"{sum(check_passed(c) for c in r.checks)}/{len(r.checks)}", percent_text(safe_attr(r, "mdd")),
         f"{float(r.elapsed or 0.0):.1f} s")
        for i, r in enumerate(results)
    ])

    # discrepancies: always listed, never hidden
    L += ["", "## Discrepancies", ""]
    disc = [(i, r) for i, r in enumerate(results) if verdict_key(r.verdict) == "discrepancy"]
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
                (attr_of(c, "label", ""), format_number(attr_of(c, "theory"), 6), _mc_md(c, 6), format_number(_gap(c)), _ratio(c),
                 format_number(check_threshold(c)), "✓" if check_passed(c) else "✗ contradicted")
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
        mline = mdd_line(r)
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
                (attr_of(c, "label", ""), attr_of(c, "kind", "abs"), format_number(attr_of(c, "theory"), 6), _mc_md(c, 6),
                 format_number(_gap(c)), tol_text(c), stat_text(c), p_text(safe_attr(c, "p_value")),
                 p_text(attr_of(c, "holm_threshold")), p_text(attr_of(c, "p_adjusted")), format_number(check_threshold(c)),
                 percent_text(safe_attr(c, "mdd_relative")), "✓" if check_passed(c) else "✗", attr_of(c, "note", "") or "")
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
    se = attr_of(check, "se")
    v = format_number(attr_of(check, "value"), digits)
    return v if se is None else f"{v} ± {format_number(se, 3)}"


def _ratio(check: Any) -> str:
    v, t = float_or_none(attr_of(check, "value")), attr_of(check, "theory")
    t = None if is_interval(t) else float_or_none(t)
    if v is None or t is None or t == 0:
        return "—"
    return format_number(v / t)


def _notes_md(notes: str) -> list[str]:
    notes = notes.strip()
    if "\n" in notes:
        return ["Notes:", ""] + _fence(notes)
    return [f"Notes: {notes}"]
