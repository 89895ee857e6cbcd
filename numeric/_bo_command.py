r"""The ``attnlimits slr bayes-optimal`` command without names: validation, the curve, tidy rows — portable source.

Shared by the in-process command (:func:`verify.slr.bayes_optimal.run_bayes_optimal`, which
generates the kernels and passes the population Bayes risk of :mod:`verify.slr.theory`) and the
exported standalone solver (``attnlimits export slr --solver bayes-optimal``, which carries the
printed kernels); its text is copied into exported files with the project imports rewritten.

- :func:`bo_points` — validated (ν, Δ, α), the frozen rule (:func:`numeric.bayes_optimal.make_rule`)
  and the curve :func:`numeric.bayes_optimal.bo_curve` (docs/slr.md §11)
- :func:`bo_rows` — the command's rows from those points
- :func:`bo_run` — :func:`bo_points` then :func:`bo_rows` for the command's ``params``
"""
from __future__ import annotations

import math

from symbolic.result import InputError

from .bayes_optimal import bo_curve, make_rule

__all__ = ["check_bo_inputs", "bo_points", "bo_rows", "bo_run"]


def check_bo_inputs(nu, alphas, delta):
    """ν finite ≥ 0, every α finite > 0, Δ > 0 (:class:`InputError`, one line); returns them as floats."""
    nu = float(nu)
    if not (math.isfinite(nu) and nu >= 0):
        raise InputError(f"--nu must be finite and >= 0 for spiked-SLR, got {nu}")
    if not delta > 0:
        raise InputError(f"--delta must be > 0, got {delta}")
    alphas = [float(a) for a in alphas]
    if not alphas or any(not (a > 0 and math.isfinite(a)) for a in alphas):
        raise InputError(f"--alpha values must be finite and > 0, got {alphas}")
    return nu, alphas, float(delta)


def bo_points(mod, law, nu, alphas, delta, *, points: int = 2 ** 13, replicates: int = 8, seed: int = 0,
              rule: str = "sobol", n_gh: int = 12, form: str = "ibp", starts=("uninformed", "informed"),
              population_bayes_risk=None, progress=None):
    """The BO curve of spiked-SLR on the generated module ``mod`` for the length law ``law``
    (``((L, P(L)), …)``), one selected :class:`~numeric.bayes_optimal.BOPoint` per α."""
    nu, alphas, delta = check_bo_inputs(nu, alphas, delta)
    r = make_rule([Lv for Lv, _ in law], kind=rule, points=points, replicates=replicates, seed=seed, n_gh=n_gh)
    return bo_curve(mod, r, law, nu, alphas, float(delta), starts=tuple(starts), form=form, progress=progress,
                    population_bayes_risk=population_bayes_risk)


def bo_rows(pts, params: dict) -> list:
    """One row per α: :meth:`BOPoint.as_row` with the model, L, number and E_BO of the branches."""
    rows = []
    Ls = params["L"] if isinstance(params["L"], (list, tuple)) else [params["L"]]
    for p in pts:
        r = p.as_row()
        r.update({"model": params["model"], "L": ",".join(str(x) for x in Ls),
                  "n_branches": len(p.branches), "metric": "excess",
                  "branch_E_BO": ",".join(f"{b['E_BO']:.6f}" for b in p.branches)})
        rows.append(r)
    return rows


def bo_run(mod, law, params: dict, *, population_bayes_risk, progress=None) -> list:
    """The rows of ``attnlimits slr bayes-optimal`` (params: nu, L, alpha, delta, points, replicates, seed)."""
    pts = bo_points(mod, law, params["nu"], params["alpha"], params["delta"], points=int(params.get("points", 2 ** 13)),
                    replicates=int(params.get("replicates", 8)), seed=int(params.get("seed", 0)),
                    population_bayes_risk=population_bayes_risk, progress=progress)
    return bo_rows(pts, params)
