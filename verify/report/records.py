"""The machine-readable records of a run: the environment (:func:`environment_info`), the JSON of claims
and checks (:func:`claim_dict`, :func:`check_dict`) and the tidy rows of ``results.csv`` (:func:`csv_rows`)."""
from __future__ import annotations

import datetime as _dt
import math
import os
import platform
from typing import Any, Mapping, Sequence

from .checks import CSV_COLUMNS, as_float, attr_of, check_passed, check_threshold, float_or_none, is_interval, safe_attr

__all__ = ["environment_info", "clean", "check_dict", "claim_dict", "comparison_of", "check_columns", "csv_rows"]


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


def clean(x: Any) -> Any:
    """JSON-safe copy: NumPy/torch scalars and arrays to Python, NaN/±inf to ``None``, tuples and sets
    to lists, unknown objects to ``str``."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, Mapping):
        return {str(k): clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [clean(v) for v in x]
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    tolist = getattr(x, "tolist", None)  # numpy arrays/scalars, torch tensors
    if callable(tolist):
        try:
            return clean(tolist())
        except Exception:  # noqa: BLE001
            pass
    if isinstance(x, os.PathLike):
        return os.fspath(x)
    f = as_float(x)
    if f is not None and not isinstance(x, complex):
        return f if math.isfinite(f) else None
    return str(x)


def check_dict(check: Any) -> dict:
    """The JSON record of a check (a malformed one keeps its numbers, marked failed)."""
    try:
        d = check.to_dict()
    except Exception:  # noqa: BLE001 - e.g. unknown kind: keep the numbers, mark it failed
        d = {k: attr_of(check, k) for k in ("label", "theory", "value", "se", "tolerance", "k", "allowance", "kind", "note")}
        d["theory"] = list(d["theory"]) if is_interval(d["theory"]) else d["theory"]
        d["threshold"], d["passed"] = check_threshold(check), False
    for key in _FLOAT_FIELDS:
        if key in d and d[key] is not None:
            d[key] = float_or_none(d[key])
    th = d.get("theory")
    d["theory"] = [float_or_none(v) for v in th] if is_interval(th) else float_or_none(th)
    d["passed"] = bool(d.get("passed"))
    return clean(d)


def claim_dict(result: Any, plot: str | None) -> dict:
    """The JSON record of a claim result with the path of its plot."""
    try:
        d = result.to_dict()
    except Exception:  # noqa: BLE001 - a malformed check must not lose the whole report
        d = {"claim": result.claim, "title": result.title, "verdict": result.verdict, "source": result.source,
             "tags": list(result.tags), "elapsed_s": round(float(result.elapsed or 0.0), 3),
             "notes": result.notes, "params": result.params}
    d["checks"] = [check_dict(c) for c in result.checks]
    d["plot"] = plot
    return clean(d)


def _csv_number(x: Any) -> str:
    if x is None:
        return ""
    if is_interval(x):
        return f"{_csv_number(x[0])};{_csv_number(x[1])}"
    f = as_float(x)
    return str(x) if f is None else repr(f)


def comparison_of(check: Any):
    """The check's :class:`~attnlimits.verify.comparison.Comparison` (``None`` for a check without a
    numeric value and theory, e.g. a qualitative one)."""
    from attnlimits.verify.comparison import Comparison

    th = attr_of(check, "theory")
    try:
        ref = tuple(float(x) for x in th) if is_interval(th) else float(th)
        se = attr_of(check, "se")
        dof = attr_of(check, "dof")
        return Comparison(float(attr_of(check, "value")), ref, se=None if se is None else float(se),
                          dof=None if dof is None else float(dof), tolerance=float(attr_of(check, "tolerance") or 0.0),
                          allowance=float(attr_of(check, "allowance") or 0.0), kind=attr_of(check, "kind", "abs") or "abs")
    except (TypeError, ValueError):
        return None


def check_columns(check: Any) -> dict:
    """The comparison columns of one check (:func:`attnlimits.verify.comparison.comparison_columns`), as
    ``results.csv`` writes them; ``explore`` writes the same columns for the same comparison."""
    from attnlimits.verify.comparison import comparison_columns

    comp = comparison_of(check)
    cols = {"kind": attr_of(check, "kind", "abs") or "abs", **comparison_columns(comp)}
    if comp is None:  # no comparison: the raw fields, as given
        cols.update(value=as_float(attr_of(check, "value")),
                    se=as_float(attr_of(check, "se")), tolerance=as_float(attr_of(check, "tolerance")),
                    allowance=as_float(attr_of(check, "allowance")))
    return cols


def csv_rows(results: Sequence, meta: Mapping) -> list[dict]:
    """The rows of ``results.csv``: one per check (one for a claim without checks)."""
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
                "claim": r.claim, "verdict": r.verdict, "check": attr_of(c, "label", ""), **cols,
                "k": _csv_number(attr_of(c, "k")), "threshold": _csv_number(check_threshold(c)),
                "passed": check_passed(c), "tolerance_reason": attr_of(c, "tolerance_reason", "") or "",
                "p_adjusted": _csv_number(attr_of(c, "p_adjusted")),
                "holm_threshold": _csv_number(attr_of(c, "holm_threshold")), "level": _csv_number(attr_of(c, "level")),
                "mdd": _csv_number(safe_attr(c, "mdd")), "mdd_relative": _csv_number(safe_attr(c, "mdd_relative")), **base,
            })
    return rows
