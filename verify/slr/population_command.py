r"""``attnlimits slr population``: optimal population risks of attention variants vs the Bayes risk.

The command of the SLR result per the contract of :mod:`symbolic.result`: :data:`POPULATION_COMMAND`
(static parameters) and :func:`run_population` (``params -> list of rows``), plus
:func:`format_population_table` for the human table.  Spec ``slr.md`` §6 (population optimum),
§7 (Bayes risk), §8 (linear closed forms).

Rows: one per activation, with the keys the CLI prints with ``--json`` — ``activation``, ``risk``
(the limit value when the optimum is a limit), ``risk_error``, ``bayes_risk``, ``bayes_error``,
``argmin``, ``limit``, ``limit_reason``, ``method``, ``model``, ``nu`` (``"inf"`` for ν = ∞), ``L``
(``{"3": 1.0}``), ``metric``, ``delta`` (metric ``noisy`` only), ``per_length`` (with
``per_length``) — and, for limit optima, ``risk_at_bound`` (the value at the search bound) and
``limit_method`` (derived or extrapolated).
"""
from __future__ import annotations

import math

from symbolic.result import Command, InputError, Param

__all__ = ["POPULATION_COMMAND", "run_population", "format_population_table", "DEFAULT_ACTIVATIONS"]

DEFAULT_ACTIVATIONS = ("softmax", "linear_uncentred", "erf_learned", "softplus_norm")

POPULATION_COMMAND = Command(
    name="population",
    help="optimal population risk of each activation, with the Bayes risk",
    run="verify.slr.population_command:run_population",
    description=(
        "Population optimum E* = 1 - sup A^2/B of attention f(X) = sigma(Xk)^T (Xv) on single-location "
        "regression (spec slr.md §6), for each activation, and the Bayes risk (§7; softmax attains it).  Linear "
        "variants use the derived closed forms (§8); the others are optimised over (m_k, extra scalar) with exact "
        "gradients on a fixed integration rule (Gauss-Hermite where smooth, randomised QMC otherwise).  "
        "risk_error is the integration error estimate; limit=true means the argmin runs to a bound (m_k -> inf, "
        "b -> -inf): risk is then the limit value (derived, or extrapolated with its error) and risk_at_bound "
        "the value at the bound."),
    parameters=(
        # model and nu are validated by make_setting (its messages: "unknown model", "nu must be ≥ 0")
        Param("model", "str", help="spiked or max"),
        Param("nu", "float", help="spike strength nu >= 0 (inf allowed for --model max)", check="inf"),
        Param("L", "ints", flag="--L",
              help="sequence length, or a comma-separated list for L uniform over it (variable length)"),
        Param("activation", "strs", default=list(DEFAULT_ACTIVATIONS),
              help="comma-separated activation names or elementwise:/normalised: expressions "
                   f"(default {','.join(DEFAULT_ACTIVATIONS)})"),
        Param("extra", "float", default=None,
              help="value of a fixed extra scalar (erf_fixed's c, softplus_norm's b; default 0); learned scalars "
                   "(erf_learned, softplus_norm_bias) are optimised regardless"),
        Param("orthogonal_noise", "flag", default=False, help="also optimise s_k = sqrt(q_k - m_k^2) >= 0 (claim C14)"),
        Param("per_length", "flag", default=False, help="variable length: also the per-length tuned risks"),
        Param("metric", "choice", default="excess", choices=("excess", "noisy"),
              help="excess (default; f = 0 gives 1) or noisy (adds --delta^2)"),
        Param("delta", "float", default=0.0, check="nonnegative", help="label noise Delta for --metric noisy"),
        Param("tol", "float", default=1e-6, check="positive", help="target integration error (Gauss-Hermite)"),
        Param("seed", "int", default=0, check="nonnegative", help="seed of the QMC scrambling"),
    ),
    examples=(
        "attnlimits slr population --model spiked --nu 2 --L 3 "
        "--activation softmax,linear_uncentred,erf_learned,softplus_norm --json",
        "attnlimits slr population --model max --nu inf --L 1,2,3 --per-length",
        "attnlimits slr population --model max --nu 2 --L 2 --activation erf_fixed --extra 0.5",
        "attnlimits slr population --model spiked --nu 1 --L 2 --activation 'elementwise:1+tanh(t)'",
    ),
    table=("activation", "risk", "risk_error", "bayes_risk", "limit"),
)


def run_population(params: dict, *, progress=None) -> list[dict]:
    """Rows of ``attnlimits slr population`` (see the module docstring for the keys).

    ``params`` are the values parsed by :meth:`symbolic.result.Command.parse` of
    :data:`POPULATION_COMMAND` (missing optional ones take their defaults); ``progress`` receives
    one line per activation.  Bad input raises :class:`symbolic.result.InputError`.
    """
    from derivations.slr import activation
    from numeric.population import SettingError
    from symbolic.hermite import ActivationError

    from .theory import bayes_risk_varlen, make_setting, optimal_population_risk

    p = {prm.name: prm.default for prm in POPULATION_COMMAND.parameters if not prm.required}
    p.update({k: v for k, v in params.items() if v is not None})
    missing = [prm.option for prm in POPULATION_COMMAND.parameters if prm.required and p.get(prm.name) is None]
    if missing:
        raise InputError(f"{', '.join(missing)} required")
    Ls = [int(v) for v in (p["L"] if isinstance(p["L"], (list, tuple)) else [p["L"]])]
    delta = float(p.get("delta") or 0.0)
    if delta < 0 or not math.isfinite(delta):
        raise InputError(f"--delta must be a finite number >= 0, got {delta}")
    try:
        setting = make_setting(p["model"], p["nu"], Ls if len(Ls) > 1 else (Ls[0] if Ls else 0))
        names = p.get("activation") or list(DEFAULT_ACTIVATIONS)
        if isinstance(names, str):
            names = [a for a in names.split(",")]
        acts = [activation(str(a).strip()) for a in names if str(a).strip()]
    except (SettingError, ActivationError) as exc:
        raise InputError(str(exc)) from None
    if not acts:
        raise InputError("--activation is empty")
    metric = p.get("metric", "excess")
    law = {L: pr for L, pr in setting.lengths}
    br = bayes_risk_varlen(setting.model, setting.nu, law)
    b_val, b_err = float(br.value), float(br.error)
    shift = delta ** 2 if metric == "noisy" else 0.0
    rows = []
    for i, a in enumerate(acts, 1):
        if progress is not None:
            progress(f"[{i}/{len(acts)}] {a.name}: {setting.describe()}")
        # --extra fixes the scalar of erf_fixed / softplus_norm; learned scalars stay learned
        extra = None if a.extra_learned else p.get("extra")
        r = optimal_population_risk(a, setting, orthogonal_noise=bool(p.get("orthogonal_noise")),
                                    per_length=bool(p.get("per_length")), tol=float(p.get("tol", 1e-6)),
                                    seed=int(p.get("seed", 0)), extra=extra)
        d = {"activation": a.name, "risk": r.risk + shift, "risk_error": r.risk_error,
             "bayes_risk": b_val + shift, "bayes_error": b_err, "argmin": r.argmin, "limit": r.limit,
             "limit_reason": r.limit_reason, "method": r.method, "model": setting.model,
             "nu": "inf" if math.isinf(setting.nu) else setting.nu,
             "L": {str(L): pr for L, pr in setting.lengths}, "metric": metric}
        if r.limit and r.risk_at_bound is not None:
            d["risk_at_bound"] = r.risk_at_bound + shift
            d["limit_method"] = r.limit_method
        if metric == "noisy":
            d["delta"] = delta
        if r.per_length:
            d["per_length"] = {"risks": {str(k): v + shift for k, v in r.per_length["risks"].items()},
                               "average": r.per_length["average"] + shift}
        rows.append(d)
    return rows


def format_population_table(rows: list[dict]) -> str:
    """The human table of ``attnlimits slr population`` (today's text)."""
    if not rows:
        return ""
    d0 = rows[0]
    nu = d0["nu"]
    Ls = [int(k) for k in d0["L"]]
    ls = str(Ls[0]) if len(Ls) == 1 else "U{" + ",".join(str(L) for L in Ls) + "}"
    nu_txt = "inf" if nu == "inf" else f"{float(nu):g}"
    out = [f"single-location regression, {d0['model']}, L={ls}, nu={nu_txt}, metric {d0['metric']}: "
           f"Bayes risk {d0['bayes_risk']:.6f} (± {d0['bayes_error']:.1e})"]
    head = f"{'activation':<20} {'risk':>10} {'± error':>9} {'- Bayes':>10}  argmin"
    out += [head, "-" * len(head)]
    for d in rows:
        arg = ", ".join(f"{k}={v:.4g}" for k, v in d["argmin"].items() if k not in ("q_v",))
        flag = "  [limit]" if d["limit"] else ""
        out.append(f"{d['activation']:<20} {d['risk']:>10.6f} {d['risk_error']:>9.1e} "
                   f"{d['risk'] - d['bayes_risk']:>10.6f}  {arg}{flag}")
        if "risk_at_bound" in d:
            out.append(f"{'':<20} limit value ({d['limit_method']}); at the bound {d['risk_at_bound']:.6f}")
        if "per_length" in d:
            out.append(f"{'':<20} per-length tuned average {d['per_length']['average']:.6f}")
    return "\n".join(out)
