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

from .._portable_solver import ConvergenceError
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
    "check_setting",
    "length_law",
    "parse_lams",
    "replica_row",
    "replica_rows",
    "replica_run",
    "theory_flag",
    "THEORY_FLAGS",
    "with_block_ridges",
]

DEFAULT_LAMBDA_GRID = tuple(10.0 ** (k / 2) for k in range(-6, 3))  #: 9 points, 1e-3 … 10


def length_law(L):
    """The length law of ``L`` (int, list of ints = uniform, dict ``{L: P(L)}``) as sorted ``((L, P), …)``."""
    if isinstance(L, dict):
        items = [(int(k), float(v)) for k, v in L.items()]
    elif isinstance(L, (list, tuple)):
        vals = [int(v) for v in L]
        if len(set(vals)) != len(vals):
            raise InputError(f"--L: repeated length in {list(L)}")
        items = [(v, 1.0 / len(vals)) for v in vals]
    else:
        items = [(int(L), 1.0)]
    if not items:
        raise InputError("--L: the length law is empty")
    for Lv, p in items:
        if Lv < 2:
            raise InputError(f"--L must be >= 2 for the RS theory (every length of the law), got {Lv}")
        if p < 0:
            raise InputError(f"--L: P(L={Lv}) = {p} is negative")
    tot = sum(p for _, p in items)
    if not math.isclose(tot, 1.0, rel_tol=1e-9):
        raise InputError(f"--L: length probabilities sum to {tot}, not 1")
    return tuple(sorted(items))


def check_setting(model, nu, alpha=None, lam=None, Delta=None):
    """Validate model, ν (and α, λ, Δ when given); returns ν as a float."""
    if model not in ("spiked", "max"):
        raise InputError(f"--model must be 'spiked' or 'max', got {model!r}")
    nu = float(nu)
    if math.isnan(nu) or nu < 0:
        raise InputError(f"--nu must be >= 0, got {nu}")
    if math.isinf(nu) and model == "spiked":
        raise InputError("--nu inf is defined for max-SLR only (spiked-SLR needs a finite spike)")
    for name, v in (("alpha", alpha), ("lam", lam)):
        if v is not None and not (float(v) > 0 and math.isfinite(float(v))):
            raise InputError(f"--{name} must be > 0 and finite, got {v}")
    if Delta is not None and not (float(Delta) >= 0 and math.isfinite(float(Delta))):
        raise InputError(f"--delta must be >= 0, got {Delta}")
    return nu


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
    row["delta"] = row.pop("Delta")  # the option's name, as in every command (docs/output.md)
    row["branch"] = branch
    row["informed"] = informed
    if extra_cols:
        row.update(extra_cols)
    return row


def replica_rows(kern, rules, params: dict, *, progress=None):
    """The rows of ``attnlimits slr replica`` for one activation (``params["activation"]``, a name
    used only as a label) on compiled kernels ``kern`` and the frozen rule ``rules``.

    ``params`` as in :func:`attnlimits.verify.slr.replica.run_replica`: model, nu, L, alpha (list), lam (list
    of numbers or ``["tune"]``), delta, branches, extra, metric, points, replicates, seed, form.
    Continuation in α per λ (a failed warm start is retried from the informed start); ``lam =
    tune`` gives the tuned λ* per α with the grid as ';'-joined text; ``metric = noisy`` adds Δ².

    A generator: each row is yielded as soon as it is computed (the input checks run at the first
    ``next``), so a caller that stops (Ctrl-C) keeps the rows already finished.
    """
    model = params["model"]
    nu = check_setting(model, params["nu"])
    Ls = params["L"] if isinstance(params["L"], (list, tuple)) else [params["L"]]
    L = Ls[0] if len(Ls) == 1 else list(Ls)
    lams = parse_lams(params["lam"] if isinstance(params["lam"], (list, tuple)) else [params["lam"]])
    lams = with_block_ridges(lams, params.get("lam_k"), params.get("lam_v"))
    Delta = float(params.get("delta", 0.1))
    alphas = [float(a) for a in params["alpha"]]
    for a in alphas:
        check_setting(model, nu, a, None, Delta)
    for lam in (DEFAULT_LAMBDA_GRID if lams == "tune" else lams):
        check_setting(model, nu, None, lam, Delta)
    metric = params.get("metric", "excess")
    mode = branch_mode(params.get("branches"))
    form = params.get("form", "stein")
    if form not in ("stein", "jacobian"):
        raise InputError(f"--form must be 'stein' or 'jacobian', got {form!r}")
    base = {"activation": params["activation"], "model": model, "nu": float(params["nu"]), "L": str(L),
            "metric": metric, "points": int(params.get("points", 1024)),
            "replicates": int(params.get("replicates", 4)), "seed": int(params.get("seed", 0)),
            "extra": params.get("extra"), "form": form, "branches": mode}
    if params.get("loss") not in (None, "square"):
        base["loss"] = params["loss"]

    def finish(row):
        if metric == "noisy":
            row["E_test"] += Delta ** 2
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
            best, grid = rs_tune_lambda(kern, rules, a, Delta, grid=list(DEFAULT_LAMBDA_GRID), model=model, nu=nu,
                                        progress=progress, form=form)
            cols = {"lam_grid": ";".join(f"{g.lam:.6g}" for g in grid),
                    "E_grid": ";".join(f"{g.E_test:.6g}" for g in grid), "tuned": True,
                    "n_branches": 1, "only_unstable_fixed_points": best.stability_damped >= 1, "phase": "tuned"}
            yield finish(replica_row(base, best, "informed", True, cols))
    elif mode != "informed":
        for lam in lams:
            found = rs_branch_search(kern, rules, alphas, lam, Delta, model=model, nu=nu, progress=progress, form=form)
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
                    fp = rs_fixed_point(kern, rules, a, lam, Delta, x0=x, model=model, nu=nu, progress=progress,
                                        form=form)
                except ConvergenceError:
                    if x is None:
                        raise
                    fp = rs_fixed_point(kern, rules, a, lam, Delta, model=model, nu=nu, progress=progress, form=form)
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


def replica_run(kern, params: dict, *, progress=None):
    """The frozen rule of ``params`` (model, nu, L, points, replicates, seed), then :func:`replica_rows`
    (an iterator of rows; the setting and the rule size are checked here, before it starts)."""
    nu = check_setting(params["model"], params["nu"])
    points, replicates = int(params.get("points", 1024)), int(params.get("replicates", 4))
    check_rule_size(points, replicates)
    rules = make_rule(params["model"], nu, length_law(params["L"]), points=points, replicates=replicates,
                      seed=int(params.get("seed", 0)))
    return replica_rows(kern, rules, params, progress=progress)
