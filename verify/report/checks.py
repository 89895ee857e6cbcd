"""Reading a claim's checks, shared by every part of the report: attribute access that tolerates partial
objects (a claim that raised), number and verdict formatting, the verdict counts, the family summary
(Holm's procedure at the run's level) and the power lines of the checks."""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

__all__ = ["CSV_COLUMNS", "MARK", "attr_of", "as_float", "is_interval", "format_number", "format_mc", "fit_text", "verdict_key", "paint", "verdict_counts", "summary_line", "check_passed", "check_threshold", "safe_attr", "stat_text", "p_text", "tol_text", "family_summary", "power_summary", "percent_text", "mdd_line", "float_or_none"]


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
MARK = {True: "✓", False: "✗"}


# --------------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------------
def attr_of(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute of a dataclass, or key of a dict (plot specs given as dicts are accepted)."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def as_float(x: Any) -> float | None:
    """``float(x)`` for numbers (NumPy scalars and 0-d tensors included); ``None`` when not a number."""
    if x is None or isinstance(x, (str, bytes)):
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def is_interval(theory: Any) -> bool:
    """Whether a theory value is an interval ``(low, high)``."""
    return isinstance(theory, (tuple, list)) and len(theory) == 2


def format_number(x: Any, digits: int = 4) -> str:
    """Number with ``digits`` significant digits; ``—`` for None, ``nan``/``inf`` as such."""
    if is_interval(x):
        return f"[{format_number(x[0], digits)}, {format_number(x[1], digits)}]"
    f = as_float(x)
    if f is None:
        return "—" if x is None else str(x)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f"{f:.{digits}g}"


def format_mc(value: Any, se: Any) -> str:
    """``mean ± SE``: the mean at 4 significant digits, the SE at 2 (``%.2g``)."""
    return format_number(value) if se is None else f"{format_number(value)} ± {format_number(se, 2)}"


def fit_text(text: str, width: int, align: str = "<") -> str:
    """Clip ``text`` to ``width`` characters (ending with …) and pad it."""
    text = " ".join(str(text).split())  # one line
    if len(text) > width:
        text = text[: max(width - 1, 0)] + "…"
    return f"{text:{align}{width}}"


def verdict_key(verdict: str) -> str:
    """The verdict as one of pass/fail/discrepancy, or ``"other"``."""
    v = (verdict or "").lower()
    return v if v in _VERDICTS else "other"


def paint(text: str, verdict_or_mark: str | bool, color: bool) -> str:
    """``text`` in the ANSI colour of a verdict or a ✓/✗ mark (unchanged when ``color`` is false)."""
    if not color:
        return text
    if isinstance(verdict_or_mark, bool):
        code = _ANSI["pass"] if verdict_or_mark else _ANSI["fail"]
    else:
        code = _ANSI[verdict_key(verdict_or_mark)]
    return f"{code}{text}{_ANSI_RESET}"


def verdict_counts(results: Sequence) -> dict:
    """How many claims have each verdict (``other``: any other verdict)."""
    counts = {v: 0 for v in _VERDICTS}
    other = 0
    for r in results:
        key = verdict_key(r.verdict)
        if key == "other":
            other += 1
        else:
            counts[key] += 1
    counts["other"] = other
    return counts


def summary_line(results: Sequence, elapsed: float | None) -> str:
    """The closing line ``"N claims: a pass, b fail, c discrepancy (T s)"``."""
    n = len(results)
    c = verdict_counts(results)
    if elapsed is None:
        elapsed = sum(float(r.elapsed or 0.0) for r in results)
    text = f"{n} claim{'s' if n != 1 else ''}: {c['pass']} pass, {c['fail']} fail, {c['discrepancy']} discrepancy"
    if c["other"]:
        text += f", {c['other']} other"
    return text + f" ({elapsed:.1f} s)"


def check_passed(check: Any) -> bool:
    """A check's ``passed`` (a malformed check reads as failed)."""
    try:
        return bool(check.passed)
    except Exception:  # noqa: BLE001 - a malformed check is shown as failed, never crashes the report
        return False


def check_threshold(check: Any) -> float | None:
    """A check's threshold, or ``None`` when it has none."""
    try:
        return float(check.threshold)
    except Exception:  # noqa: BLE001
        return None


def safe_attr(check: Any, name: str) -> Any:
    """A derived attribute of a check (statistic, p_value, law...), ``None`` when it cannot be computed."""
    try:
        return getattr(check, name, None)
    except Exception:  # noqa: BLE001
        return None


def stat_text(check: Any) -> str:
    """``z 2.31`` or ``t3 −2.31``; ``—`` for deterministic checks."""
    s = float_or_none(safe_attr(check, "statistic"))
    if s is None:
        return "—"
    dof = float_or_none(attr_of(check, "dof"))
    law = "z" if dof is None else (f"t{dof:.0f}" if dof >= 10 else f"t{dof:.2g}")
    return f"{law} {s:+.2f}" if abs(s) < 100 else f"{law} {s:+.1e}"


def p_text(x: Any) -> str:
    """A p-value at three decimals (scientific below 0.01); ``—`` when absent."""
    f = float_or_none(x)
    if f is None:
        return "—"
    return f"{f:.3f}" if f >= 0.01 else f"{f:.1e}"


def tol_text(check: Any) -> str:
    """A check's tolerance with its reason; ``—`` when it has none."""
    tol = float_or_none(attr_of(check, "tolerance"))
    if not tol:
        return "—"
    why = attr_of(check, "tolerance_reason", "") or ""
    if not why and float_or_none(attr_of(check, "se")):
        why = "unlabelled"
    return f"{format_number(tol, 3)} ({why})" if why else format_number(tol, 3)


def _beyond(check: Any, k: float) -> bool:
    """|z| or |t| > k for two-sided checks; statistic > k (the failing side) for bounds and intervals."""
    s = float_or_none(safe_attr(check, "statistic"))
    if s is None:
        return False
    return (abs(s) if attr_of(check, "kind", "abs") in ("abs", "rel") else s) > k


def family_summary(results: Sequence, level: float | None = None) -> dict:
    """The family of a run: its level, size, failures, and how far its checks sit from theory.

    ``beyond_2_5``: checks whose |z| (normal-equivalent of t) exceeds 2.5; ``max_z_passing``: the
    largest normal-equivalent |z| among passing checks; ``unlabelled_tolerances``: checks with an SE
    and a nonzero tolerance not labelled as a quoted precision or numerical accuracy."""
    from attnlimits.verify.comparison import LEVEL, z_equivalent

    members = [c for r in results for c in r.checks if bool(safe_attr(c, "stochastic"))]
    levels = {attr_of(c, "level") for c in members if attr_of(c, "level") is not None}
    if level is None:
        level = levels.pop() if len(levels) == 1 else LEVEL
    zs = []
    for c in members:
        p = float_or_none(safe_attr(c, "p_value"))
        sided = 2 if attr_of(c, "kind", "abs") in ("abs", "rel") else 1
        z = z_equivalent(p, sided=sided) if p is not None else None
        zs.append((z, check_passed(c)))
    unlabelled = sum(1 for c in members if (float_or_none(attr_of(c, "tolerance")) or 0) > 0
                     and not (attr_of(c, "tolerance_reason", "") or ""))
    return {
        "rule": "Holm step-down over the p-values of all checks with a Monte Carlo SE "
                "(normal law, or Student t with the SE's degrees of freedom)",
        "level": level, "m": len(members), "failed": sum(1 for _, ok in zs if not ok),
        "with_t": sum(1 for c in members if attr_of(c, "dof") is not None),
        "beyond_2_5": sum(1 for z, _ in zs if z is not None and z > 2.5),
        "beyond_2_5_raw": sum(1 for c in members if _beyond(c, 2.5)),
        "max_z_passing": max((z for z, ok in zs if ok and z is not None), default=None),
        "unlabelled_tolerances": unlabelled,
        **power_summary(results),
    }


def power_summary(results: Sequence) -> dict:
    """How many quantitative checks have a relative MDD above 5 % and 10 %, and which claims exceed
    their mode's target (explained by :data:`attnlimits.verify.claims.power.EXCEPTIONS` or not)."""
    from attnlimits.verify.claims.power import mdd_status

    rel = [as_float(safe_attr(c, "mdd_relative")) for r in results for c in r.checks]
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




def percent_text(x: Any) -> str:
    """A relative MDD as a percentage (``—`` without one, ``inf`` for an infinite one)."""
    f = as_float(x)
    if f is None or math.isnan(f):
        return "—"
    if math.isinf(f):
        return "inf"
    p = 100 * f
    return f"{p:.2g}%" if p < 10 else (f"{p:.0f}%" if p < 1e4 else f"{p:.0e}%")


def mdd_line(result: Any) -> str | None:
    """The claim's MDD against its target: ``MDD 3.2% (target 5%)``, with the exception or warning."""
    from attnlimits.verify.claims.power import TARGET, mdd_status

    m = safe_attr(result, "mdd")
    if m is None:
        return None
    mode = attr_of(result, "mode", "") or "quick"
    try:
        status = mdd_status(result)
    except Exception:  # noqa: BLE001
        status = ""
    text = f"MDD {percent_text(m)} (target {percent_text(TARGET.get(mode, TARGET['quick']))})"
    if status.startswith("exception"):
        text += " — above the target; " + status
    elif status == "above target":
        text += " — ABOVE THE TARGET, not explained"
    return text


#: The narrowest table :func:`format_table` lays out.


def float_or_none(x: Any) -> float | None:
    """``x`` as a finite float, else ``None``."""
    f = as_float(x)
    return f if f is not None and math.isfinite(f) else None
