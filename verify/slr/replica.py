r"""RS theory of ridge ERM for SLR (docs/slr.md §10): name-level wrappers and the ``slr replica`` command.

Glue between :mod:`derivations.slr.replica` (the equations, in SymPy) and :mod:`numeric.replica`
(the generated solver): activation names are resolved here, kernels generated and compiled once
per (activation, L, extra), and results returned as :class:`numeric.replica.RSFixedPoint` or as
tidy rows (:func:`run_replica`, the command contract of :mod:`symbolic.result`).

Python API
----------
>>> fp = rs_fixed_point("softmax", "spiked", 2, 2, alpha=4, lam=0.1, Delta=0.1)   # doctest: +SKIP
>>> round(fp.E_test, 3), fp.E_test_error                                            # doctest: +SKIP
(0.378, 0.0003)

- :func:`rs_fixed_point` (activation, model, nu, L, alpha, lam, Delta, …) → ``RSFixedPoint``
- :func:`rs_learning_curve` (…, alphas, lam, …) → list (continuation in α)
- :func:`rs_tune_lambda` (…, alpha, grid) → (best, grid points)
- :func:`rs_branches` (…) → [(branch name, RSFixedPoint)], ``"informed"`` first
- :func:`rs_kernels` (activation, L, extra) → compiled kernels; :func:`rs_rule` (model, nu, L, …)

``L`` is an int, a list of ints (uniform length law) or a dict {L: P(L)} (§3.4).  Bad input
raises :class:`symbolic.result.InputError`; a fixed point that does not converge raises
:class:`numeric.ConvergenceError`.
"""
from __future__ import annotations

import math
from functools import lru_cache

from symbolic.result import Command, InputError, Param
from derivations.slr.result import REPLICA_COMMAND  # noqa: F401  (declared with the result)

__all__ = ["rs_kernels", "rs_rule", "rs_fixed_point", "rs_learning_curve", "rs_tune_lambda", "rs_branches",
           "run_replica", "REPLICA_COMMAND", "DEFAULT_LAMBDA_GRID"]

DEFAULT_LAMBDA_GRID = tuple(10.0 ** (k / 2) for k in range(-6, 3))  #: 9 points, 1e-3 … 10


def _lengths(L):
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


def _check(model, nu, alpha=None, lam=None, Delta=None):
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


@lru_cache(maxsize=64)
def _kernels_cached(act_name, lengths, extra):
    from derivations.slr import replica as RD
    from numeric.replica import compile_rs_kernels

    sets = {Lv: RD.replica_kernels(act_name, Lv, extra) for Lv, _ in lengths}
    return compile_rs_kernels(act_name, sets)


def rs_kernels(activation, L, extra=None):
    """Compiled RS kernels of ``activation`` for every length of ``L`` (cached).

    Refuses activations with a learned scalar (``erf_learned``, ``softplus_norm_bias``; spec §17.5).
    """
    from derivations.slr import activation as get_act
    from derivations.slr.replica import check_activation
    from symbolic.hermite import ActivationError

    try:
        a = check_activation(get_act(activation))
    except ActivationError as exc:
        raise InputError(str(exc)) from None
    lengths = _lengths(L)
    return _kernels_cached(a.name, tuple((Lv, 1.0) for Lv, _ in lengths), None if extra is None else float(extra))


def rs_rule(model, nu, L, *, points=1024, replicates=4, seed=0):
    """The frozen integration rule (:func:`numeric.replica.make_rule`) for a validated setting."""
    from numeric.replica import make_rule

    nu = _check(model, nu)
    if points < 2 or points & (points - 1):
        raise InputError(f"--points must be a power of 2, got {points}")
    if replicates < 2:
        raise InputError(f"--replicates must be >= 2 (their spread is the error estimate), got {replicates}")
    return make_rule(model, nu, _lengths(L), points=int(points), replicates=int(replicates), seed=int(seed))


def _prepare(activation, model, nu, L, extra, points, replicates, seed, alpha=None, lam=None, Delta=None):
    nu = _check(model, nu, alpha, lam, Delta)
    kern = rs_kernels(activation, L, extra)
    rules = rs_rule(model, nu, L, points=points, replicates=replicates, seed=seed)
    return nu, kern, rules


def rs_fixed_point(activation, model, nu, L, alpha, lam, Delta=0.1, *, extra=None, points=1024, replicates=4,
                   seed=0, x0=None, **kw):
    r"""The RS fixed point of ridge ERM (§10) at (α, λ, Δ) for a named activation.

    See :func:`numeric.replica.rs_fixed_point` for the method, the options (``tol``, ``form``,
    ``coarse``…) and the returned :class:`~numeric.replica.RSFixedPoint`.  Accuracy: the standard
    error ``E_test_error`` (replicates of scrambled Sobol, ``replicates × points`` samples); about
    2.5e-3 at the default 4 × 1024 and 1.5e-3 at 4 × 4096 for softmax, spiked L = 2, ν = 2, α = 4,
    λ = 0.1 (docs/slr.md §10.6).
    """
    from numeric.replica import rs_fixed_point as _fp

    nu, kern, rules = _prepare(activation, model, nu, L, extra, points, replicates, seed, alpha, lam, Delta)
    return _fp(kern, rules, float(alpha), float(lam), float(Delta), x0=x0, model=model, nu=nu, **kw)


def rs_learning_curve(activation, model, nu, L, alphas, lam, Delta=0.1, *, extra=None, points=1024, replicates=4,
                      seed=0, x0=None, **kw):
    """Fixed points along ``alphas`` by continuation (each warm-starts the next); one frozen rule."""
    from numeric.replica import rs_learning_curve as _lc

    for a in alphas:
        _check(model, nu, a, lam, Delta)
    nu, kern, rules = _prepare(activation, model, nu, L, extra, points, replicates, seed, None, lam, Delta)
    return _lc(kern, rules, [float(a) for a in alphas], float(lam), float(Delta), x0=x0, model=model, nu=nu, **kw)


def rs_tune_lambda(activation, model, nu, L, alpha, Delta=0.1, *, grid=DEFAULT_LAMBDA_GRID, extra=None, points=1024,
                   replicates=4, seed=0, **kw):
    """λ minimising E_test at fixed α (§12): log grid (≥ 9 points, 1e-3…10), then golden-section refinement."""
    from numeric.replica import rs_tune_lambda as _tune

    if len(grid) < 3:
        raise InputError("the λ grid needs at least 3 points")
    for g in grid:
        _check(model, nu, alpha, g, Delta)
    nu, kern, rules = _prepare(activation, model, nu, L, extra, points, replicates, seed, alpha, None, Delta)
    return _tune(kern, rules, float(alpha), float(Delta), grid=list(grid), model=model, nu=nu, **kw)


def rs_branches(activation, model, nu, L, alpha, lam, Delta=0.1, *, extra=None, points=1024, replicates=4, seed=0,
                **kw):
    """Distinct fixed points from the informed and small-overlap starts, ``"informed"`` first."""
    from numeric.replica import rs_branches as _br

    nu, kern, rules = _prepare(activation, model, nu, L, extra, points, replicates, seed, alpha, lam, Delta)
    return _br(kern, rules, float(alpha), float(lam), float(Delta), model=model, nu=nu, **kw)


# =============================================================================================
# the command
# =============================================================================================

def _parse_lams(values):
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


def _row(base, fp, branch, informed, extra_cols=None):
    row = dict(base)
    row.update(fp.as_row())
    row["branch"] = branch
    row["informed"] = informed
    if extra_cols:
        row.update(extra_cols)
    return row


def run_replica(params: dict, *, progress=None) -> list:
    """Run ``attnlimits slr replica``: one tidy row per (activation, α, λ, branch).

    ``params``: model, nu, L (list), activation (list), alpha (list), lam (list of numbers or
    ["tune"]), delta, branches, extra, points, replicates, seed, metric.  With ``lam = tune`` the
    row is the tuned λ* (``lam_grid`` and ``E_grid`` hold the grid as ';'-joined text).
    """
    from numeric import ConvergenceError

    model, nu = params["model"], params["nu"]
    Ls = params["L"] if isinstance(params["L"], (list, tuple)) else [params["L"]]
    L = Ls[0] if len(Ls) == 1 else list(Ls)
    lams = _parse_lams(params["lam"] if isinstance(params["lam"], (list, tuple)) else [params["lam"]])
    Delta = float(params.get("delta", 0.1))
    alphas = [float(a) for a in params["alpha"]]
    for a in alphas:
        _check(model, nu, a, None, Delta)
    noisy = params.get("metric", "excess") == "noisy"
    kw = dict(extra=params.get("extra"), points=int(params.get("points", 1024)),
              replicates=int(params.get("replicates", 4)), seed=int(params.get("seed", 0)))
    rows = []
    acts = params["activation"] if isinstance(params["activation"], (list, tuple)) else [params["activation"]]
    for act in acts:
        base = {"activation": act, "model": model, "nu": float(nu), "L": str(L), "metric": params.get("metric", "excess"),
                "points": kw["points"], "replicates": kw["replicates"], "seed": kw["seed"], "extra": kw["extra"]}
        if lams == "tune":
            for a in alphas:
                best, grid = rs_tune_lambda(act, model, nu, L, a, Delta, progress=progress, **kw)
                cols = {"lam_grid": ";".join(f"{g.lam:.6g}" for g in grid),
                        "E_grid": ";".join(f"{g.E_test:.6g}" for g in grid), "tuned": True}
                rows.append(_row(base, best, "informed", True, cols))
            continue
        for lam in lams:
            x = None
            for a in alphas:
                if params.get("branches"):
                    found = rs_branches(act, model, nu, L, a, lam, Delta, progress=progress, **kw)
                    for name, fp in found:
                        rows.append(_row(base, fp, name, name == "informed", {"n_branches": len(found)}))
                else:
                    try:
                        fp = rs_fixed_point(act, model, nu, L, a, lam, Delta, x0=x, progress=progress, **kw)
                    except ConvergenceError:
                        if x is None:
                            raise
                        fp = rs_fixed_point(act, model, nu, L, a, lam, Delta, progress=progress, **kw)
                    x = [fp.values[k] for k in ("m_k", "q_k", "V_k", "m_v", "q_v", "V_v")]
                    rows.append(_row(base, fp, "informed", True))
    if noisy:
        for r in rows:
            r["E_test"] += Delta ** 2
    return rows


