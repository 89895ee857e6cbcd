r"""The ``attnlimits slr bayes-optimal`` command without names: validation, the curve, tidy rows — portable source.

Shared by the in-process command (:func:`attnlimits.verify.slr.bayes_optimal.run_bayes_optimal` and
:func:`attnlimits.verify.slr.bayes_optimal.bo_state_evolution`, which generate the kernels and pass the population
Bayes risk of :mod:`attnlimits.verify.slr.theory`) and the exported standalone solver (``attnlimits export slr
--solver bayes-optimal``, which carries the printed kernels); its text is copied into exported files
with the project imports rewritten.  Both models: spiked-SLR (:func:`attnlimits.numeric.slr.bo_state_evolution.bo_fixed_point`)
and max-SLR (:func:`attnlimits.numeric.slr.bo_state_evolution.bomax_fixed_point` with a frozen inner rule
:func:`attnlimits.numeric.slr.bo_state_evolution.make_inner_rule` and a separate test-error rule).

- :func:`check_bo_inputs` — ν (finite for spiked, ``inf`` allowed for max), α, Δ
- :func:`bo_points` — validated inputs, the frozen rule(s) (:func:`attnlimits.numeric.slr.bo_state_evolution.make_rule`)
  and the curve :func:`attnlimits.numeric.slr.bo_state_evolution.bo_curve` (docs/slr.md §11)
- :func:`bo_rows` — the command's rows from those points
- :func:`bo_run` — :func:`bo_points` then :func:`bo_rows` for the command's ``params``
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from attnlimits.symbolic.options import resolve_options

from attnlimits.symbolic.result import InputError

from .bo_state_evolution import bo_curve, bomax_fixed_point, make_inner_rule, make_rule

__all__ = ["BO_MODELS", "bo_points", "bo_rows", "bo_run", "check_bo_inputs"]

BO_MODELS = ("spiked", "max")


def check_bo_inputs(nu, alphas, delta, model: str = "spiked"):
    """``model`` spiked or max; ν ≥ 0 (finite for spiked-SLR, ``inf`` allowed for max-SLR), every α finite > 0,
    Δ > 0 (:class:`InputError`, one line); returns (ν, α list, Δ) as floats."""
    if model not in BO_MODELS:
        raise InputError(f"--model must be 'spiked' or 'max', got {model!r}")
    nu = float(nu)
    if model == "max":
        if not nu >= 0:
            raise InputError(f"--nu must be >= 0 (inf allowed) for max-SLR, got {nu}")
    elif not (math.isfinite(nu) and nu >= 0):
        raise InputError(f"--nu must be finite and >= 0 for spiked-SLR, got {nu}")
    if not delta > 0:
        raise InputError(f"--delta must be > 0, got {delta}")
    alphas = [float(a) for a in alphas]
    if not alphas or any(not (a > 0 and math.isfinite(a)) for a in alphas):
        raise InputError(f"--alpha values must be finite and > 0, got {alphas}")
    return nu, alphas, float(delta)


@dataclass(frozen=True)
class BORuleSpec:
    """The frozen rules of a BO curve: ``points`` × ``replicates`` (``seed``) of the outer ``rule`` (``"sobol"``
    or Gauss–Hermite with ``n_gh`` nodes), ``inner_points`` Gauss–Hermite nodes per dimension for max-SLR's key
    smoothing and ``test_points`` per replicate for its test-error integrals."""

    points: int = 2 ** 13
    replicates: int = 8
    seed: int = 0
    rule: str = "sobol"
    n_gh: int = 12
    inner_points: int = 24
    test_points: int = 2 ** 15


def bo_points(mod, law, nu, alphas, delta, *, model: str = "spiked", form: str = "ibp",
              starts=("uninformed", "informed"), population_bayes_risk=None, spec: BORuleSpec | None = None,
              progress=None, **overrides):
    r"""The BO curve on the generated module ``mod`` for the length law ``law`` (``((L, P(L)), …)``), one
    selected :class:`attnlimits.numeric.slr.bo_state_evolution.BOPoint` per α (docs/slr.md §11).

    The rule's size is checked first: about ``8·(4L+8)`` bytes per sample and replicate (one line
    with the estimate when above 8 GiB).

    ``model="spiked"``: ``mod`` is the spiked-SLR module, the test error uses ``population_bayes_risk``
    (:math:`E_B^{\rm pop}(\nu q_k)`).  ``model="max"``: ``mod`` is the max-SLR module, ν may be ``inf``;
    the key smoothing uses a frozen Gauss–Hermite inner rule with ``inner_points`` nodes per dimension
    (exact closed form at ν = ∞, L ≤ 2) and the test-error integrals A, B a Sobol rule of ``test_points``
    per replicate (seed ``seed + 7919``); ``population_bayes_risk`` is unused (:math:`E_B^{\max}(q_k)=1-B`).
    The rule sizes are the fields of :class:`BORuleSpec` (``spec``; keywords override them).
    """
    sp = resolve_options(BORuleSpec, spec, overrides)
    points, replicates, seed, rule, n_gh = sp.points, sp.replicates, sp.seed, sp.rule, sp.n_gh
    inner_points, test_points = sp.inner_points, sp.test_points
    L_max = max(int(L) for L, _ in law)
    need = float(points) * float(replicates) * (4 * L_max + 8) * 8
    if need > 8 * 2 ** 30:
        raise InputError(f"--points {points} x --replicates {replicates} at L = {L_max} needs about "
                         f"{need / 2 ** 30:.3g} GiB; use fewer points")
    nu, alphas, delta = check_bo_inputs(nu, alphas, delta, model)
    Ls = [Lv for Lv, _ in law]
    if model == "max":
        if rule != "sobol":
            raise InputError("--model max: only the Sobol outer rule is implemented")
        r = make_rule(Ls, kind=rule, points=points, replicates=replicates, seed=seed, n_gh=n_gh)
        inner = make_inner_rule(Ls, nu, int(inner_points))
        tr = make_rule(Ls, kind=rule, points=int(test_points), replicates=replicates, seed=seed + 7919)
        return bo_curve(mod, r, law, nu, alphas, delta, starts=tuple(starts), form=form, progress=progress,
                        fixed_point=bomax_fixed_point, inner=inner, test_rule=tr)
    r = make_rule(Ls, kind=rule, points=points, replicates=replicates, seed=seed, n_gh=n_gh)
    return bo_curve(mod, r, law, nu, alphas, delta, starts=tuple(starts), form=form, progress=progress,
                    population_bayes_risk=population_bayes_risk)


def bo_rows(pts, params: dict) -> list:
    """One row per α: :meth:`BOPoint.as_row` with the model, L, number and E_BO of the branches."""
    rows = []
    Ls = params["L"] if isinstance(params["L"], (list, tuple)) else [params["L"]]
    for p in pts:
        # theory values carry `_error` (the integration error of the frozen rule: one standard error over its
        # scramblings), measured ones `_se` (docs/output.md)
        r = {(k[:-3] + "_error" if k.endswith("_se") else k): v for k, v in p.as_row().items()}
        r.update({"model": params["model"], "L": ",".join(str(x) for x in Ls),
                  "n_branches": len(p.branches), "metric": "excess",
                  "branch_E_BO": ",".join(f"{b['E_BO']:.6f}" for b in p.branches)})
        rows.append(r)
    return rows


def bo_run(mod, law, params: dict, *, population_bayes_risk=None, progress=None) -> list:
    """The rows of ``attnlimits slr bayes-optimal`` (params: model, nu, L, alpha, delta, points, replicates, seed,
    inner_points); ``mod`` is the generated module of ``params["model"]``."""
    pts = bo_points(mod, law, params["nu"], params["alpha"], params["delta"], model=params.get("model", "spiked"),
                    points=int(params.get("points", 2 ** 13)), replicates=int(params.get("replicates", 8)),
                    seed=int(params.get("seed", 0)), inner_points=int(params.get("inner_points", 24)),
                    population_bayes_risk=population_bayes_risk, progress=progress)
    return bo_rows(pts, params)
