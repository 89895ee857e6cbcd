r"""The ``attnlimits slr replica`` command without names: validation and tidy rows — portable source.

Everything of the command that does not need an activation *name* lives here, so that the
in-process command (:func:`attnlimits.verify.slr.replica.run_replica`, which resolves names and generates the
kernels) and the exported standalone solver (``attnlimits export slr --solver replica``, which
carries the kernels printed for one activation) run the same code.  This module imports only
the standard library, numpy (through :mod:`attnlimits.numeric.slr.rs`) and :class:`attnlimits.symbolic.result.InputError`;
its text is copied into exported files with those imports rewritten.

- :func:`length_law` — ``L`` (int, list = uniform law, dict ``{L: P(L)}``) → sorted ``((L, P), …)``
- :func:`check_setting` — model / ν / α / λ / Δ checks (:class:`InputError`, one line)
- :func:`check_rule_size` — points a power of 2, at least 2 replicates
- :func:`parse_lams` — ``--lam`` values: numbers or ``["tune"]``
- :func:`branch_mode` — ``--branches`` (equilibrium, all, informed; the former flag ``True`` is ``all``)
- :func:`replica_rows` — the rows of one activation on given kernels and frozen rule (docs/slr.md §10, §12):
  with the branch search and the equilibrium selection of §10.7 unless ``branches = informed``
- :func:`replica_run` — the frozen rule of ``params`` (:func:`attnlimits.numeric.slr.rs.make_rule`), then the rows
- :func:`theory_flag` — the row's ``flag``: why its value is not an RS prediction (empty when it is one)
"""
from __future__ import annotations

import math
import sys

from attnlimits.symbolic.result import InputError

from ..portable_solver import ConvergenceError
from .problem import LengthLaw, SLRProblem, check_delta, check_model_nu
from .rs import UNKNOWNS, Ridge, make_rule, rs_branch_search, rs_fixed_point, rs_select_equilibrium, rs_tune_lambda

#: ``--branches``: equilibrium (search every branch, report the equilibrium one, default), all (report
#: every distinct fixed point with its phase), informed (no search: continuation from the informed start)
BRANCH_MODES = ("equilibrium", "all", "informed")


def branch_mode(value) -> str:
    """``--branches`` value: one of :data:`BRANCH_MODES`; ``True``/``"true"`` (the former flag) is ``all``,
    ``False``/``None``/``""`` the default ``equilibrium``."""
    if value is True or str(value).strip().lower() in ("true", "1", "yes"):
        return "all"
    if value is None or value is False or str(value).strip().lower() in ("", "false", "0", "no"):
        return "equilibrium"
    v = str(value).strip().lower()
    if v not in BRANCH_MODES:
        raise InputError(f"--branches must be one of {', '.join(BRANCH_MODES)}, got {value!r}")
    return v


__all__ = [
    "BRANCH_MODES",
    "DEFAULT_LAMBDA_GRID",
    "branch_mode",
    "check_rule_size",
    "check_point",
    "check_setting",
    "length_law",
    "parse_lams",
    "replica_problem",
    "replica_row",
    "replica_rows",
    "replica_rule",
    "replica_run",
    "theory_flag",
    "THEORY_FLAGS",
    "with_block_ridges",
]

DEFAULT_LAMBDA_GRID = tuple(10.0 ** (k / 2) for k in range(-6, 3))  #: 9 points, 1e-3 … 10


def length_law(L):
    """The length law of ``L`` (int, list of ints = uniform, dict ``{L: P(L)}``) as sorted ``((L, P), …)``: the
    items of :meth:`LengthLaw.parse` with every length at least 2 (the RS theory)."""
    return LengthLaw.parse(L, min_length=2, why=" for the RS theory").items


def check_setting(model, nu, alpha=None, lam=None, delta=None):
    """Validate model, ν (and α, λ, Δ when given); returns ν as a float."""
    nu = check_model_nu(model, nu)
    check_point(alpha, lam, delta)
    return nu


def check_point(alpha=None, lam=None, delta=None):
    """Validate a sample point: α > 0 and λ > 0 finite, Δ ≥ 0 (each when given)."""
    for name, v in (("alpha", alpha), ("lam", lam)):
        if v is not None and not (float(v) > 0 and math.isfinite(float(v))):
            raise InputError(f"--{name} must be > 0 and finite, got {v}")
    if delta is not None:
        check_delta(delta)


def replica_problem(params: dict, activation=None) -> SLRProblem:
    """The :class:`SLRProblem` of the command's ``params`` (model, nu, L, delta, extra, loss), validated once;
    ``activation`` is the resolved activation (the name, in an exported solver)."""
    return SLRProblem.build(params["model"], params["nu"], params["L"], delta=params.get("delta", 0.1),
                            activation=params.get("activation") if activation is None else activation,
                            extra=params.get("extra"), loss=params.get("loss") or "square", min_length=2,
                            why=" for the RS theory")


def check_rule_size(points, replicates):
    """Sobol points per replicate must be a power of 2; at least 2 replicates (their spread is the error)."""
    if points < 2 or points & (points - 1):
        raise InputError(f"--points must be a power of 2, got {points}")
    if replicates < 2:
        raise InputError(f"--replicates must be >= 2 (their spread is the error estimate), got {replicates}")
    need = float(points) * float(replicates) * 40 * 8  # ~40 float64 per sample (channel, prox, averages)
    if need > 8 * 2 ** 30:
        raise InputError(f"--points {points} x --replicates {replicates} needs about {need / 2 ** 30:.3g} GiB "
                         "(about 320 bytes per sample); use at most about 2^24 samples in all")


def parse_lams(values):
    """``--lam`` values: ``"tune"`` (alone) or numbers > 0."""
    if len(values) == 1 and str(values[0]).strip().lower() == "tune":
        return "tune"
    out = []
    for v in values:
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise InputError(f"--lam must be numbers > 0 or 'tune', got {v!r}") from None
        if not (f > 0 and math.isfinite(f)):
            raise InputError(f"--lam must be > 0, got {v}")
        out.append(f)
    return out


#: The words of a theory row's ``flag`` column (docs/output.md), each a reason its value is not an RS prediction:
#: ``rsb`` (replica symmetry broken: the solver's ``rsb``, replicon ≥ 1, docs/slr.md §10.8), ``unstable`` (not
#: an attracting fixed point of the damped map: ``stability_damped`` ≥ 1, or every fixed point found is so),
#: ``rough`` (accepted on a rough map, §10.6: the solver's ``rough_map``), ``unconverged`` (residual above the
#: target: ``residual_above_tol``), ``error_exceeds_value`` (the integration error is not below |E_test|).
#: The solver's own ``flags`` word ``unstable`` is the *undamped* spectral radius ≥ 1, which a fixed point the
#: damped map reaches can have (an eigenvalue below −1): it is a prediction like any other and is not a reason.
THEORY_FLAGS = ("rsb", "rsb_uncertain", "unstable", "rough", "unconverged", "error_exceeds_value")


def theory_flag(row) -> str:
    """The ``flag`` of a theory row (a row of :func:`replica_rows`, or ``RSFixedPoint.as_row()``): the words of
    :data:`THEORY_FLAGS` that apply, comma-joined, ``""`` when the value is an RS prediction.  It reads the
    row's own columns (``rsb``, ``stability_damped``, ``only_unstable_fixed_points``, ``flags``,
    ``error_exceeds_value``, ``E_test_error`` against ``E_test``), so it carries whatever rule made them."""
    words = {w.strip() for w in str(row.get("flags") or "").split(",")}
    out = []
    if row.get("rsb") or "rsb" in words:
        out.append("rsb")
    elif row.get("rsb_status") == "uncertain":  # the replicon's interval (± 3 SE) holds 1
        out.append("rsb_uncertain")
    d = row.get("stability_damped")
    if row.get("only_unstable_fixed_points") or (isinstance(d, (int, float)) and d >= 1):
        out.append("unstable")
    if "rough_map" in words:
        out.append("rough")
    if "residual_above_tol" in words:
        out.append("unconverged")
    err, E = row.get("E_test_error"), row.get("E_test")
    if row.get("error_exceeds_value") or (isinstance(err, (int, float)) and isinstance(E, (int, float))
                                          and not err < abs(E)):  # nan included: no answer to trust
        out.append("error_exceeds_value")
    return ",".join(out)


def _flag_reasons(row) -> str:
    """The words of the row's ``flag`` in a sentence, for its warning line."""
    out = []
    for w in row["flag"].split(","):
        if w == "rsb":
            out.append(("no RS-stable fixed point " if row.get("phase") == "equilibrium" else "")
                       + f"(replicon {row.get('replicon', math.nan):.3g} ± {row.get('replicon_error', math.nan):.2g}, "
                         "≥ 1 by 3 SE: replica symmetry broken)")
        elif w == "rsb_uncertain":
            out.append(f"replicon {row.get('replicon', math.nan):.3g} ± {row.get('replicon_error', math.nan):.2g} "
                       "within 3 SE of 1: replica symmetry possibly broken")
        elif w == "unstable":
            out.append("every fixed point found is unstable under the damped map"
                       if row.get("only_unstable_fixed_points") else
                       f"the fixed point is unstable under the damped map (stability_damped "
                       f"{row.get('stability_damped', math.nan):.3g} >= 1)")
        elif w == "rough":
            out.append("accepted on a rough map (a generalised fixed point; read its error bar first)")
        elif w == "unconverged":
            out.append(f"the residual {row.get('residual', math.nan):.2g} is above the solver's target")
        elif w == "error_exceeds_value":
            out.append(f"the integration error {row.get('E_test_error', math.nan):.3g} is not below |E_test| = "
                       f"{abs(row.get('E_test', math.nan)):.3g} (more --points or --replicates)")
    return "; ".join(out)


def replica_row(base, fp, branch, informed, extra_cols=None):
    """One tidy row: the parameters ``base``, the fixed point ``fp``, its branch name and flag."""
    row = dict(base)
    row.update(fp.as_row())
    row["delta"] = row.pop("delta")  # after the fixed point's columns, where the rows have always had it
    row["branch"] = branch
    row["informed"] = informed
    if extra_cols:
        row.update(extra_cols)
    return row


def replica_rows(kern, rules, problem: SLRProblem, params: dict, *, progress=None):
    """The rows of ``attnlimits slr replica`` for one :class:`SLRProblem` (model, ν, length law, Δ; validated
    when it was built) on compiled kernels ``kern`` and the frozen rule ``rules``.

    ``params`` holds the rest of the command's options as in :func:`attnlimits.verify.slr.replica.run_replica`:
    activation (its name as given, a label), L (as given, a label), alpha (list), lam (list of numbers or
    ``["tune"]``), lam_k, lam_v, branches, extra, metric, points, replicates, seed, form, loss.
    Continuation in α per λ (a failed warm start is retried from the informed start); ``lam =
    tune`` gives the tuned λ* per α with the grid as ';'-joined text; ``metric = noisy`` adds Δ².

    A generator: each row is yielded as soon as it is computed (the input checks run at the first
    ``next``), so a caller that stops (Ctrl-C) keeps the rows already finished.
    """
    model, nu, delta = problem.model, problem.nu, problem.delta
    lams = parse_lams(params["lam"] if isinstance(params["lam"], (list, tuple)) else [params["lam"]])
    lams = with_block_ridges(lams, params.get("lam_k"), params.get("lam_v"))
    alphas = [float(a) for a in params["alpha"]]
    for a in alphas:
        check_point(a, None, None)
    for lam in (DEFAULT_LAMBDA_GRID if lams == "tune" else lams):
        check_point(None, lam, None)
    metric = params.get("metric", "excess")
    mode = branch_mode(params.get("branches"))
    form = params.get("form", "stein")
    if form not in ("stein", "jacobian"):
        raise InputError(f"--form must be 'stein' or 'jacobian', got {form!r}")
    base = {"activation": params["activation"], "model": model, "nu": nu, "L": problem.lengths.label,
            "metric": metric, "points": int(params.get("points", 1024)),
            "replicates": int(params.get("replicates", 4)), "seed": int(params.get("seed", 0)),
            "extra": params.get("extra"), "form": form, "branches": mode}
    if params.get("loss") not in (None, "square"):
        base["loss"] = params["loss"]

    def finish(row):
        if metric == "noisy":
            row["E_test"] += delta ** 2
        err = row.get("E_test_error")
        if err is not None and not err < abs(row["E_test"]):  # nan included: no answer to trust
            row["error_exceeds_value"] = True
        row["flag"] = theory_flag(row)
        if row["flag"]:  # one line per flagged row: a caller that draws theory leaves these rows out or marks them
            where = "" if mode == "equilibrium" or row.get("phase") in (None, "equilibrium", "tuned") else \
                f" ({row.get('phase')} branch from {row.get('branch')})"
            print(f"warning: slr replica alpha={row['alpha']:g} lam={row['lam']:g}{where}: {_flag_reasons(row)}; "
                  f"the row is flagged (flag={row['flag']}), not an RS prediction to trust", file=sys.stderr)
        return row

    if lams == "tune":
        for a in alphas:
            best, grid = rs_tune_lambda(kern, rules, a, delta, grid=list(DEFAULT_LAMBDA_GRID), model=model, nu=nu,
                                        progress=progress, form=form)
            cols = {"lam_grid": ";".join(f"{g.lam:.6g}" for g in grid),
                    "E_grid": ";".join(f"{g.E_test:.6g}" for g in grid), "tuned": True,
                    "n_branches": 1, "only_unstable_fixed_points": best.stability_damped >= 1, "phase": "tuned"}
            yield finish(replica_row(base, best, "informed", True, cols))
    elif mode != "informed":
        for lam in lams:
            found = rs_branch_search(kern, rules, alphas, lam, delta, model=model, nu=nu, progress=progress, form=form)
            for a in alphas:
                labelled = rs_select_equilibrium(found[a])
                if not labelled:
                    raise ConvergenceError("slr RS fixed point (docs/slr.md §10)", {"alpha": a, "lam": lam}, float("nan"),
                                           "no start of the branch search converged",
                                           "more points, a larger λ, or --branches informed for the plain solve")
                only_unstable = all(f.stability_damped >= 1 for _, f, _ in labelled)
                cols = {"n_branches": len(labelled), "only_unstable_fixed_points": only_unstable}
                for origin, fp, phase in labelled:
                    if mode == "equilibrium" and phase != "equilibrium":
                        continue
                    yield finish(replica_row(base, fp, origin, origin == "informed", {**cols, "phase": phase}))
    else:
        for lam in lams:
            x = None
            for a in alphas:
                try:
                    fp = rs_fixed_point(kern, rules, a, lam, delta, x0=x, model=model, nu=nu, progress=progress,
                                        form=form)
                except ConvergenceError:
                    if x is None:
                        raise
                    fp = rs_fixed_point(kern, rules, a, lam, delta, model=model, nu=nu, progress=progress, form=form)
                x = [fp.values[k] for k in UNKNOWNS]
                yield finish(replica_row(base, fp, "informed", True, {
                    "n_branches": 1, "only_unstable_fixed_points": fp.stability_damped >= 1, "phase": "unsearched"}))


def with_block_ridges(lams, lam_k=None, lam_v=None):
    """``--lam`` values with ``--lam-k``/``--lam-v``: each λ becomes :class:`Ridge` (λ_k, λ_v), either one
    defaulting to λ; unchanged when neither is given.  ``tune`` with either is refused (it tunes one λ)."""
    if lam_k is None and lam_v is None:
        return lams
    if lams == "tune":
        raise InputError("--lam tune tunes one ridge on both blocks; give numbers with --lam-k/--lam-v")
    for name, v in (("--lam-k", lam_k), ("--lam-v", lam_v)):
        if v is not None and not (math.isfinite(float(v)) and float(v) > 0):
            raise InputError(f"{name} must be > 0, got {v}")
    return [Ridge(float(lam) if lam_k is None else float(lam_k), float(lam) if lam_v is None else float(lam_v))
            for lam in lams]


def replica_rule(problem: SLRProblem, *, points=1024, replicates=4, seed=0):
    """The frozen integration rule (:func:`attnlimits.numeric.slr.rs.make_rule`) of ``problem``: ``replicates`` ×
    ``points`` scrambled Sobol points (``points`` a power of 2, at least 2 replicates), drawn with ``seed``."""
    check_rule_size(int(points), int(replicates))
    return make_rule(problem.model, problem.nu, problem.lengths.items, points=int(points), replicates=int(replicates),
                     seed=int(seed))


def replica_run(kern, params: dict, *, progress=None):
    """The :class:`SLRProblem` and frozen rule of ``params`` (model, nu, L, delta, points, replicates, seed), then
    :func:`replica_rows` (an iterator of rows; the problem and the rule size are checked here, before it
    starts).  The entry of an exported solver, whose ``params`` name its activation."""
    problem = replica_problem(params)
    rules = replica_rule(problem, points=params.get("points", 1024), replicates=params.get("replicates", 4),
                         seed=params.get("seed", 0))
    return replica_rows(kern, rules, problem, params, progress=progress)
