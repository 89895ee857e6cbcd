"""Evaluation functions of the random-matrix properties (declared in
:mod:`attnlimits.derivations.attention_rmt.result`) and of the engine's grammar property."""
from __future__ import annotations

import json
import math
import subprocess
import sys

from attnlimits.verify.comparison import Comparison

__all__ = ["rmt_vs_simulation", "grammar_answers"]


def rmt_vs_simulation(point, *, size, seed):
    """The deterministic equivalent of E_attention and E_ridge against simulation at two sizes n, n/2:
    the larger size's mean ± SE against theory, with a finite-size allowance measured from the two
    sizes, 2.5·|E(n) − E(n/2)| (it covers the remaining correction for any rate n^−r with r ≥ 1/2: the
    rate of this model lies between n^−1/2 and n^−1, docs/explore.md)."""
    import sympy
    from attnlimits.symbolic.activations import BUILTIN_ACTIVATIONS
    from attnlimits.symbolic.result import discover_results, resolve
    from attnlimits.verify.rmt.montecarlo import simulate_attention

    act, c, gamma, snr = point["activation"], point["c"], point["gamma"], point["snr"]
    cmd = discover_results()["rmt"].command("")
    (theory,) = resolve(cmd.run)(cmd.parse({"activation": act, "c": c, "gamma": [gamma], "snr": snr,
                                             "wk": [0.0], "wq": [0.0]}), progress=None)
    n = int(size.get("n", 256))
    draws = int(size.get("draws", 6))
    f = BUILTIN_ACTIVATIONS[act].subs(sympy.Symbol("t", real=True), sympy.Symbol("t"))
    est = {}
    for m in (n // 2, n):
        p = max(2, int(round(c * m)))
        res = simulate_attention(f, m, p, [gamma], mu=None if snr == 0 else [math.sqrt(snr)], settings={"w0": {}},
                                 draws=draws, seed=seed + m, device="cpu")
        est[m] = {k: res.estimate(k) for k in ("w0", "ridge")}
    out = []
    for key, th in (("w0", theory["E_attention"]), ("ridge", theory["E_ridge"])):
        big, small = est[n][key], est[n // 2][key]
        allowance = 2.5 * abs(float(big.mean[0]) - float(small.mean[0]))
        out.append((f"E_{'attention' if key == 'w0' else 'ridge'}(n={n}) vs theory",
                    Comparison(float(big.mean[0]), float(th), se=float(big.se[0]), dof=draws - 1, allowance=allowance)))
    return out


def grammar_answers(point, *, size, seed):
    """Every expression of the grammar gets, from ``attnlimits hermite``, an answer or a one-line refusal
    (exit 2, one stderr line) within the stated time; never a traceback, a hang or another exit status.
    An answer must be finite and obey Bessel's inequality ν ≥ a1² + a2² (to 1e-9 relative): a
    necessary condition on correct coefficients.  (The printed Parseval residual ν − Σ_{k≤40} a_k² is
    a truncation tail, not an error: about 7e-4 for tanh|t| − log 2, and a large fraction of ν for
    exp(6t), whose coefficients decay like 6^k/√k! — found by this property's first run.)"""
    expr = point["expression"]
    timeout = float(size.get("timeout", 30.0))
    try:
        proc = subprocess.run([sys.executable, "-m", "attnlimits", "hermite", "--activation", expr, "--json"],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [(f"answer within {timeout:g} s", Comparison(1.0, 0.0))]
    err = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    if proc.returncode == 2:
        ok = len(err) == 1 and "Traceback" not in proc.stderr
        return [("refusal is one line, exit 2", Comparison(0.0 if ok else 1.0, 0.0))]
    if proc.returncode != 0:
        return [(f"exit status {proc.returncode} (0 or 2 expected)", Comparison(1.0, 0.0))]
    try:
        data = json.loads(proc.stdout)
        nu, a1, a2 = (float(data[k]) for k in ("nu", "a1", "a2"))
    except (ValueError, KeyError, TypeError):
        return [("answer is readable JSON", Comparison(1.0, 0.0))]
    if not all(math.isfinite(x) for x in (nu, a1, a2)):
        return [("answer is finite", Comparison(1.0, 0.0))]
    return [("Bessel: nu >= a1^2 + a2^2", Comparison(nu, a1 * a1 + a2 * a2, tolerance=1e-9 * max(1.0, abs(nu)),
                                                    kind="lower"))]


_EXPORTED: dict = {}


def _rmt_point(point) -> dict:
    """The command's parameters at a point: the key and query weights' components along the signal are
    ``wk`` and ``wq`` (negative: anti-aligned), the orthogonal component 0."""
    return {"activation": point["activation"], "c": point["c"], "gamma": [point["gamma"]], "snr": point["snr"],
            "wk": [point["wk"], 0.0], "wq": [point["wq"], 0.0]}


def _rmt_inprocess(values: dict, digits=None) -> dict:
    from attnlimits.symbolic.result import discover_results, resolve

    cmd = discover_results()["rmt"].command("")
    (row,) = resolve(cmd.run)(cmd.parse({**values, **({"digits": digits} if digits else {})}), progress=None)
    return row


def exported_equals_inprocess(point, *, size, seed):
    """The standalone solver written by ``attnlimits export rmt`` gives the in-process numbers (float64,
    to 1e-12): the file is exported once per activation and process, then run at the point."""
    import tempfile
    from pathlib import Path

    from attnlimits.verify.rmt.commands import export_rmt

    act = point["activation"]
    if act not in _EXPORTED:
        folder = Path(tempfile.mkdtemp(prefix="attnlimits-explore-"))
        path = folder / f"rmt_{act}.py"
        export_rmt({"activation": act, "backend": "numpy"}, str(path))
        _EXPORTED[act] = path
    v = _rmt_point(point)
    argv = [sys.executable, str(_EXPORTED[act]), "--c", repr(v["c"]), "--gamma", repr(point["gamma"]), "--snr",
            repr(v["snr"]), f"--wk={v['wk'][0]!r},0", f"--wq={v['wq'][0]!r},0", "--json"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return [(f"exported file exit {proc.returncode}: {proc.stderr.strip()[-120:]}", Comparison(1.0, 0.0))]
    (exp_row,) = json.loads(proc.stdout)
    row = _rmt_inprocess(v)
    return [(f"exported {k} = in-process", Comparison(float(exp_row[k]), float(row[k]),
                                                    tolerance=1e-12 * max(1.0, abs(float(row[k])))))
            for k in ("E_attention", "E_ridge")]


def mpmath_equals_float64(point, *, size, seed):
    """The float64 solver agrees with the mpmath solver (30 digits) to float64's error: 1e-9 relative (the
    float64 path's solver tolerances), or three times the quadrature error float64 reports for the point
    when that is larger (near c = 1 at small γ it warns of a near-singular integrand and says its error,
    e.g. 2e-6 at c = 0.995, γ = 1e-3: the property checks that the stated error bar is honest).
    ``size["relative_tolerance"]`` replaces the 1e-9 (claim ID-backends states 1e-10 at its points)."""
    v = _rmt_point(point)
    lo = _rmt_inprocess(v)
    hi = _rmt_inprocess(v, digits=int(size.get("digits", 30)))
    stated = 3.0 * float(lo.get("quadrature_error") or 0.0)
    rel = float(size.get("relative_tolerance", 1e-9))  # a claim at fixed points may state a tighter one
    return [(f"float64 {k} = mpmath {k}", Comparison(float(lo[k]), float(hi[k]),
                                                    tolerance=max(rel * max(1.0, abs(float(hi[k]))), stated)))
            for k in ("E_attention", "E_ridge")]
