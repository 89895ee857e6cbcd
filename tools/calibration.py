"""Calibration of ``attnlimits verify``: do the statistics of a correct theory look like their laws?

Pools the two-sided checks without tolerance or allowance of one or more ``results.json`` files (runs
at different master seeds) and applies :func:`attnlimits.verify.comparison.calibration`: KS and
Anderson–Darling of the normal-equivalent z's against N(0, 1), the count beyond |z| = 3 against its
expectation, and a sign test per claim (a small systematic offset shows as one sign in most of a claim's
checks).  Also prints the power summary of each run: the checks whose relative minimum detectable
deviation (MDD) exceeds 5 % and 10 %, and the claims above their mode's MDD target.

Usage::

    python -m attnlimits verify --quick --seed 0 --out /tmp/vq0
    python -m attnlimits verify --quick --seed 1 --out /tmp/vq1
    python tools/calibration.py /tmp/vq0/results.json /tmp/vq1/results.json

With ``--mdd-only`` only the power summary is printed (it needs no seeds: one run suffices); for a
results.json written before checks carried an MDD, it is recomputed from the SE, dof, tolerance,
allowance and family size stored there.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def _mdd_rel(c: dict, m: int, level: float) -> float | None:
    """A check's relative MDD: stored, or recomputed (results.json from before the MDD column)."""
    if "mdd_relative" in c:
        return c["mdd_relative"]
    from attnlimits.verify.comparison import minimum_detectable_deviation

    th = c.get("theory")
    try:
        head = max(abs(float(x)) for x in th) if isinstance(th, list) else abs(float(th))
    except (TypeError, ValueError):
        return None
    if not head:
        return None
    tol = float(c.get("tolerance") or 0.0)
    if c.get("kind") == "rel":
        tol *= head
    margin = tol + float(c.get("allowance") or 0.0)
    se = c.get("se")
    if se is None or not (isinstance(se, (int, float)) and math.isfinite(se) and se > 0):
        return margin / head
    sided = 2 if c.get("kind", "abs") in ("abs", "rel") else 1
    return minimum_detectable_deviation(se, c.get("dof"), level / max(m, 1), sided=sided, margin=margin) / head


def power_summary(doc: dict) -> dict:
    """Per claim: the largest relative MDD; counts of checks above 5 % and 10 %."""
    claims = doc.get("claims", [])
    fam = doc.get("family") or doc.get("summary", {}).get("family") or {}
    level = float(fam.get("level") or 0.01)
    m = sum(1 for r in claims for c in r.get("checks", []) if c.get("statistic") is not None)
    per, rel_all = {}, []
    for r in claims:
        vals = [_mdd_rel(c, m, level) for c in r.get("checks", [])]
        vals = [v for v in vals if v is not None]
        rel_all += vals
        per[r["claim"]] = max(vals) if vals else None
    return {"m": m, "checks": len(rel_all), "above_5": sum(v > 0.05 for v in rel_all),
            "above_10": sum(v > 0.10 for v in rel_all), "per_claim": per}


def pooled_statistics(docs: list) -> tuple[list, list, list]:
    """Statistics, dofs and claim names of the two-sided checks without tolerance or allowance."""
    s, d, g = [], [], []
    for doc in docs:
        for r in doc.get("claims", []):
            for c in r.get("checks", []):
                if c.get("statistic") is None or c.get("kind", "abs") not in ("abs", "rel"):
                    continue
                if (c.get("tolerance") or 0) or (c.get("allowance") or 0):
                    continue
                s.append(float(c["statistic"]))
                d.append(c.get("dof"))
                g.append(r["claim"])
    return s, d, g


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="example: python tools/calibration.py /tmp/vq0/results.json /tmp/vq1/results.json")
    ap.add_argument("results", nargs="+", help="results.json of verify runs (different --seed)")
    ap.add_argument("--mdd-only", action="store_true", help="print only the power (MDD) summary")
    ap.add_argument("--json", help="write the figures to this file")
    a = ap.parse_args(argv)
    docs = [json.loads(Path(p).read_text(encoding="utf-8")) for p in a.results]
    out = {"power": [power_summary(doc) for doc in docs]}
    for p, ps in zip(a.results, out["power"]):
        print(f"{p}: {ps['above_10']} of {ps['checks']} quantitative checks have MDD > 10 %, {ps['above_5']} > 5 % "
              f"(family of {ps['m']})")
        worst = sorted(((v, k) for k, v in ps["per_claim"].items() if v is not None and v > 0.05), reverse=True)
        for v, k in worst:
            print(f"  {k:<16} MDD {100 * v:.3g} %")
    if not a.mdd_only:
        from attnlimits.verify.comparison import calibration

        s, d, g = pooled_statistics(docs)
        cal = calibration(s, d, g)
        out["calibration"] = cal.to_dict()
        print(f"pooled: {cal.n} two-sided statistics without tolerance/allowance from {len(docs)} run(s)")
        print(f"  KS D = {cal.ks_statistic:.4f} (p = {cal.ks_p:.3g}); Anderson–Darling A² = {cal.ad_statistic:.3f} "
              f"(p = {cal.ad_p:.3g}); mean z = {cal.mean_z:+.3f} ± {cal.mean_z_se:.3f}")
        print(f"  |z| > 3: {cal.beyond_3} against {cal.expected_beyond_3:.2f} expected (p = {cal.beyond_3_p:.3g})")
        flagged = cal.flagged()
        for k, v in sorted(cal.signs.items(), key=lambda kv: kv[1]["p"])[:10]:
            mark = "  FLAGGED" if k in flagged else ""
            print(f"  sign test {k:<16} {v['positive']}/{v['n']} positive, p = {v['p']:.3g}{mark}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1, default=float), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
