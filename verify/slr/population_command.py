"""``attnlimits slr population``: optimal population risk per activation, with the Bayes risk.

The command's parameters are declared in :data:`derivations.slr.result.POPULATION_COMMAND`; this
module is its run function (contract of :mod:`symbolic.result`): resolve the activations
(:func:`derivations.slr.activation`), optimise each on the population objective
(:func:`numeric.population.optimal_population_risk`) and return one tidy row per activation.
"""
from __future__ import annotations

import json
import math
import warnings

from symbolic.result import InputError

__all__ = ["run_population", "format_population", "MAX_L"]

MAX_L = 64  #: longest sequence the population rules are sized for (memory grows like points × L)
_RULE_POINTS = 8 * 2 ** 14  # points of the largest (full) QMC rule


def _check_lengths(Ls):
    if not Ls:
        raise InputError("--L needs at least one length")
    big = max(Ls)
    if big > MAX_L:
        gib = _RULE_POINTS * big * 8 * 8 / 2 ** 30
        raise InputError(f"--L {big} is too long: the integration rule would need about {gib:.3g} GiB "
                         f"(at most L = {MAX_L} is supported)")


def run_population(params: dict, *, progress=None) -> list[dict]:
    """One row per activation: risk, its integration error, the Bayes risk, argmin, limit flag."""
    from derivations.slr import activation
    from numeric import bayes
    from numeric.population import make_setting, optimal_population_risk

    nu, Ls = params["nu"], list(params["L"])
    _check_lengths(Ls)
    if params["model"] == "spiked" and math.isinf(nu):
        raise InputError("--nu inf is allowed only for --model max (spiked-SLR needs a finite spike)")
    if nu > 1e6 and not math.isinf(nu):
        raise InputError(f"--nu {nu:g} is too large to integrate in float64 (at most 1e6; "
                         "use --model max --nu inf for the hard-max limit)")
    metric, delta = params["metric"], params["delta"]
    if delta is not None and metric != "noisy":
        raise InputError("--delta applies only with --metric noisy (the excess risk does not depend on it)")
    delta = 0.0 if delta is None else delta
    extra_value = params["extra"]
    if extra_value is not None and not -1000 <= extra_value <= 1000:
        raise InputError(f"--extra must lie in [-1000, 1000], got {extra_value:g}")
    setting = make_setting(params["model"], nu, Ls if len(Ls) > 1 else Ls[0])
    acts = [activation(a) for a in params["activation"]]
    if not acts:
        raise InputError("--activation is empty")
    law = {L: p for L, p in setting.lengths}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        br = bayes.bayes_risk_varlen(setting.model, setting.nu, law)
    b_val, b_err = (br.value, br.error) if hasattr(br, "value") else (float(br), 0.0)
    shift = delta ** 2 if metric == "noisy" else 0.0
    out = []
    for i, a in enumerate(acts, 1):
        if progress is not None:
            progress(f"[{i}/{len(acts)}] {a.name}: {setting.describe()}")
        # --extra fixes the scalar of erf_fixed / softplus_norm; learned scalars stay learned
        extra = None if a.extra_learned else extra_value
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = optimal_population_risk(a, setting, orthogonal_noise=params["orthogonal_noise"],
                                        per_length=params["per_length"], tol=params["tol"], seed=params["seed"],
                                        extra=extra)
        d = {"activation": a.name, "risk": r.risk + shift, "risk_error": r.risk_error,
             "bayes_risk": b_val + shift, "bayes_error": b_err, "argmin": r.argmin, "limit": r.limit,
             "limit_reason": r.limit_reason, "method": r.method, "model": setting.model,
             "nu": "inf" if math.isinf(setting.nu) else setting.nu,
             "L": {str(L): p for L, p in setting.lengths}, "metric": metric}
        for key in ("risk_at_bound",):
            if getattr(r, key, None) is not None:
                d[key] = getattr(r, key) + shift
        if metric == "noisy":
            d["delta"] = delta
        if r.per_length:
            d["per_length"] = {"risks": {str(k): v + shift for k, v in r.per_length["risks"].items()},
                               "average": r.per_length["average"] + shift}
        out.append(d)
    return out


def format_population(rows: list[dict], params: dict, fmt: str) -> str:
    """The JSON list, or the human table (Bayes risk line, one line per activation)."""
    if fmt == "json":
        return json.dumps(rows, indent=2, allow_nan=False)
    first = rows[0]
    ls = list(first["L"])
    L = ls[0] if len(ls) == 1 else "U{" + ",".join(ls) + "}"
    nu = first["nu"] if isinstance(first["nu"], str) else f"{first['nu']:g}"
    head_line = (f"single-location regression, {first['model']}, L={L}, nu={nu}, metric {first['metric']}: "
                 f"Bayes risk {first['bayes_risk']:.6f} (± {first['bayes_error']:.1e})")
    head = f"{'activation':<20} {'risk':>10} {'± error':>9} {'- Bayes':>10}  argmin"
    lines = [head_line, head, "-" * len(head)]
    for d in rows:
        arg = ", ".join(f"{k}={v:.4g}" for k, v in d["argmin"].items() if k not in ("q_v",))
        flag = "  [limit]" if d["limit"] else ""
        lines.append(f"{d['activation']:<20} {d['risk']:>10.6f} {d['risk_error']:>9.1e} "
                     f"{d['risk'] - d['bayes_risk']:>10.6f}  {arg}{flag}")
        if "per_length" in d:
            lines.append(f"{'':<20} per-length tuned average {d['per_length']['average']:.6f}")
    return "\n".join(lines)
