r"""``attnlimits slr population``: optimal population risks of attention variants vs the Bayes risk.

The command of the SLR result per the contract of :mod:`attnlimits.symbolic.result`: :data:`POPULATION_COMMAND`
(static parameters) and :func:`run_population` (``params -> list of rows``), plus
:func:`format_population_table` for the human table.  ``docs/slr.md`` §6 (population optimum),
§7 (Bayes risk), §8 (linear closed forms).

Rows: one per activation, flat (one number or word per column, as ``docs/output.md`` types them), with
the keys the CLI prints with ``--json`` — ``activation``, ``risk`` (the limit value when the optimum is
a limit), ``risk_error``, ``bayes_risk``, ``bayes_error``, ``argmin_X`` for each coordinate ``X`` of
the minimiser (``argmin_m_k``, ``argmin_q_k``, ``argmin_s_k``, ``argmin_m_v``, ``argmin_q_v`` and the
activation's learned scalars; :func:`argmin_of` gathers them back), ``limit``, ``limit_reason``,
``method``, ``model``, ``nu`` (``"inf"`` for ν = ∞), ``L`` (the lengths as text: ``"3"``, or ``"1,2"``
for a uniform law), ``metric``, ``delta`` (metric ``noisy`` only), ``per_length`` (``L:risk`` pairs,
``;``-joined) and ``per_length_average`` (with ``--per-length``) — and, for limit optima,
``risk_at_bound`` (the value at the search bound) and ``limit_method`` (derived or extrapolated).
"""
from __future__ import annotations

import math

import json
import warnings

from attnlimits.derivations.slr.result import DEFAULT_ACTIVATIONS, POPULATION_COMMAND  # noqa: F401  (declared with the result)
from attnlimits.symbolic.result import InputError

__all__ = ["POPULATION_COMMAND", "run_population", "format_population_table", "format_population",
           "argmin_of", "DEFAULT_ACTIVATIONS", "MAX_L"]

MAX_L = 64  #: longest sequence the population rules are sized for (memory grows like points × L)
_RULE_POINTS = 8 * 2 ** 14  # points of the largest (full) QMC rule


def _check_input(p, Ls):
    """The checks the parameter list cannot express (every input answered in one line)."""
    if Ls and max(Ls) > MAX_L:
        gib = _RULE_POINTS * max(Ls) * 8 * 8 / 2 ** 30
        raise InputError(f"--L {max(Ls)} is too long: the integration rule would need about {gib:.3g} GiB "
                         f"(at most L = {MAX_L} is supported)")
    nu = p.get("nu")
    if nu is not None and not math.isinf(nu) and nu > 1e6:
        raise InputError(f"--nu {nu:g} is too large to integrate in float64 (at most 1e6; "
                         "use --model max --nu inf for the hard-max limit)")
    if p.get("delta") is not None and p.get("metric", "excess") != "noisy":
        raise InputError("--delta applies only with --metric noisy (the excess risk does not depend on it)")
    extra = p.get("extra")
    if extra is not None and not -1000 <= extra <= 1000:
        raise InputError(f"--extra must lie in [-1000, 1000], got {extra:g}")


def argmin_of(row: dict) -> dict:
    """The minimiser of a population row as a dict (``{"m_k": …, "q_k": …, …}``), from its
    ``argmin_X`` columns, in the order they were written."""
    return {k[len("argmin_"):]: v for k, v in row.items() if k.startswith("argmin_")}


def run_population(params: dict, *, progress=None) -> list[dict]:
    """Rows of ``attnlimits slr population`` (see the module docstring for the keys).

    ``params`` are the values parsed by :meth:`attnlimits.symbolic.result.Command.parse` of
    :data:`POPULATION_COMMAND` (missing optional ones take their defaults); ``progress`` receives
    one line per activation.  Bad input raises :class:`attnlimits.symbolic.result.InputError`.
    """
    from attnlimits.derivations.slr import activation
    from attnlimits.symbolic.hermite import ActivationError

    from dataclasses import replace

    from .problem import slr_problem
    from .theory import theory_of

    p = {prm.name: prm.default for prm in POPULATION_COMMAND.parameters if not prm.required}
    p.update({k: v for k, v in params.items() if v is not None})
    _check_input(p, [int(v) for v in (p["L"] if isinstance(p.get("L"), (list, tuple)) else [p.get("L") or 0])])
    missing = [prm.option for prm in POPULATION_COMMAND.parameters if prm.required and p.get(prm.name) is None]
    if missing:
        raise InputError(f"{', '.join(missing)} required")
    Ls = [int(v) for v in (p["L"] if isinstance(p["L"], (list, tuple)) else [p["L"]])]
    delta = float(p.get("delta") or 0.0)
    if delta < 0 or not math.isfinite(delta):
        raise InputError(f"--delta must be a finite number >= 0, got {delta}")
    problem = slr_problem(p["model"], p["nu"], Ls if len(Ls) > 1 else (Ls[0] if Ls else 0))
    base = theory_of(problem)
    setting = base.setting
    try:
        names = p.get("activation") or list(DEFAULT_ACTIVATIONS)
        if isinstance(names, str):
            names = [a for a in names.split(",")]
        acts = [activation(str(a).strip()) for a in names if str(a).strip()]
    except ActivationError as exc:
        raise InputError(str(exc)) from None
    if not acts:
        raise InputError("--activation is empty")
    metric = p.get("metric", "excess")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        br = base.bayes_risk_varlen()
    b_val, b_err = float(br.value), float(br.error)
    shift = delta ** 2 if metric == "noisy" else 0.0
    rows = []
    for i, a in enumerate(acts, 1):
        if progress is not None:
            progress(f"[{i}/{len(acts)}] {a.name}: {setting.describe()}")
        # --extra fixes the scalar of erf_fixed / softplus_norm; learned scalars stay learned
        extra = None if a.extra_learned else p.get("extra")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            theory = theory_of(replace(problem, activation=a))
            r = theory.optimal_population_risk(orthogonal_noise=bool(p.get("orthogonal_noise")),
                                               per_length=bool(p.get("per_length")), tol=float(p.get("tol", 1e-6)),
                                               seed=int(p.get("seed", 0)), extra=extra)
        d = {"activation": a.name, "risk": r.risk + shift, "risk_error": r.risk_error,
             "bayes_risk": b_val + shift, "bayes_error": b_err,
             **{f"argmin_{k}": float(v) for k, v in r.argmin.items()}, "limit": r.limit,
             "limit_reason": r.limit_reason, "method": r.method, "model": setting.model,
             "nu": "inf" if math.isinf(setting.nu) else setting.nu,
             "L": ",".join(str(L) for L, _ in setting.lengths), "metric": metric}
        if r.limit and r.risk_at_bound is not None:
            d["risk_at_bound"] = r.risk_at_bound + shift
            d["limit_method"] = r.limit_method
        if metric == "noisy":
            d["delta"] = delta
        if r.per_length:
            d["per_length"] = ";".join(f"{k}:{v + shift!r}" for k, v in r.per_length["risks"].items())
            d["per_length_average"] = r.per_length["average"] + shift
        rows.append(d)
    return rows


def format_population_table(rows: list[dict]) -> str:
    """The human table of ``attnlimits slr population`` (today's text)."""
    if not rows:
        return ""
    d0 = rows[0]
    nu = d0["nu"]
    Ls = [int(k) for k in str(d0["L"]).split(",")]
    ls = str(Ls[0]) if len(Ls) == 1 else "U{" + ",".join(str(L) for L in Ls) + "}"
    nu_txt = "inf" if nu == "inf" else f"{float(nu):g}"
    out = [f"single-location regression, {d0['model']}, L={ls}, nu={nu_txt}, metric {d0['metric']}: "
           f"Bayes risk {d0['bayes_risk']:.6f} (± {d0['bayes_error']:.1e})"]
    head = f"{'activation':<20} {'risk':>10} {'± error':>9} {'- Bayes':>10}  argmin"
    out += [head, "-" * len(head)]
    for d in rows:
        arg = ", ".join(f"{k}={v:.4g}" for k, v in argmin_of(d).items() if k not in ("q_v",))
        flag = "  [limit]" if d["limit"] else ""
        out.append(f"{d['activation']:<20} {d['risk']:>10.6f} {d['risk_error']:>9.1e} "
                   f"{d['risk'] - d['bayes_risk']:>10.6f}  {arg}{flag}")
        if "risk_at_bound" in d:
            out.append(f"{'':<20} limit value ({d['limit_method']}); at the bound {d['risk_at_bound']:.6f}")
        if "per_length" in d:
            out.append(f"{'':<20} per-length tuned average {d['per_length_average']:.6f}")
    return "\n".join(out)


def format_population(rows: list[dict], params: dict, fmt: str) -> str:
    """The command's printing: valid JSON (``--json``), else the human table."""
    if fmt == "json":
        return json.dumps(rows, indent=2, allow_nan=False)
    return format_population_table(rows)
