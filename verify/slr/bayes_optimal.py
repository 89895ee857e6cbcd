r"""Bayes-optimal error of SLR at finite α: glue, Python API and commands (``docs/slr.md`` §11, R6, C19).

- :func:`bo_module` (from :mod:`.bo_kernels`) — the generated kernel module of :mod:`attnlimits.derivations.slr.bayes_optimal` for a set
  of lengths, cached on disk (:func:`attnlimits.numeric.models.cache_dir`) keyed by the derivation, engine
  and SymPy versions (generation takes about 5 s per length, loading a cached text milliseconds).
- :func:`bo_state_evolution` — the BO curve :math:`E_{BO}(\alpha)` (:mod:`attnlimits.numeric.slr.bo_state_evolution`)
  with error estimates, both starts and the free-entropy selection.
- :data:`BAYES_OPTIMAL_COMMAND`, :data:`AMP_COMMAND` — the ``attnlimits slr bayes-optimal`` and
  ``attnlimits slr amp`` commands (:mod:`attnlimits.symbolic.result` contract); :func:`run_bayes_optimal`,
  :func:`run_amp` return tidy rows.
- :func:`phase_scan` — informed vs uninformed fixed points over an (α, ν) grid per L.

Spiked-SLR and max-SLR (finite ν and ν = ∞; :data:`attnlimits.derivations.slr.bayes_optimal.MAX_SLR_STATUS` says
what is checked and what is not).
"""
from __future__ import annotations

from attnlimits.derivations.slr.result import AMP_COMMAND, BAYES_OPTIMAL_COMMAND  # noqa: F401  (declared with the result)
from attnlimits.symbolic.result import InputError

from .bo_kernels import bo_module, bo_module_source

__all__ = ["bo_module", "bo_module_source", "bo_state_evolution", "run_bayes_optimal", "run_amp", "BAYES_OPTIMAL_COMMAND",
           "AMP_COMMAND", "lengths_law", "phase_scan"]

def lengths_law(L) -> tuple:
    """(L, P(L)) pairs from an int, a list (uniform) or a dict (:meth:`attnlimits.numeric.slr.problem.LengthLaw.parse`;
    bad input raises :class:`InputError`)."""
    from attnlimits.numeric.slr.problem import LengthLaw

    return LengthLaw.parse(L, option="L").items


def bo_state_evolution(model: str = "spiked", nu: float = 2.0, L=2, alphas=(1, 4, 10, 20), delta: float = 0.1, *,
                       form: str = "ibp", starts=("uninformed", "informed"), spec=None, progress=None, **overrides):
    r"""Bayes-optimal test error :math:`E_{BO}(\alpha)` of SLR (docs/slr.md §11), one :class:`attnlimits.numeric.slr.bo_state_evolution.BOPoint`
    per α (the free-entropy-selected fixed point; ``.branches`` lists every distinct one).

    ``model="spiked"`` (ν finite) or ``"max"`` (ν finite or ``math.inf``; ``inner_points`` Gauss–Hermite
    nodes per dimension for the key smoothing :math:`\mathbb E\,\mathrm{softmax}(\nu h)`, unused where it
    is a closed form: ν = ∞ with L ≤ 2; ``test_points`` Sobol points per replicate for the test-error
    integrals A, B).  The rule sizes (``points``, ``replicates``, ``seed``, ``rule``, ``n_gh``, ``inner_points``,
    ``test_points``) are the fields of :class:`attnlimits.numeric.slr.bo_command.BORuleSpec` (``spec``; keywords
    override them).

    Examples
    --------
    >>> pts = bo_state_evolution("spiked", 2.0, 2, [4.0], 0.1)       # doctest: +SKIP
    >>> round(pts[0].E_BO, 3)                                         # doctest: +SKIP
    0.247
    >>> pts = bo_state_evolution("max", float("inf"), 2, [4.0], 0.1)  # doctest: +SKIP
    >>> round(pts[0].E_BO, 3)                                         # doctest: +SKIP
    0.166
    """
    from attnlimits.numeric.slr.bo_command import bo_points, check_bo_inputs

    _, alphas, delta = check_bo_inputs(nu, alphas, delta, model)  # before any kernel is generated
    law = lengths_law(L)
    mod = bo_module([Lv for Lv, _ in law], model)
    bayes_risk = bayes_risk_of if model == "spiked" else None
    return bo_points(mod, law, nu, alphas, delta, model=model, form=form, starts=starts, population_bayes_risk=bayes_risk,
                     spec=spec, progress=progress, **overrides)


def bayes_risk_of(model: str, nu, L: int, **kw):
    """The Bayes risk of ``model`` at SNR ``nu`` and length ``L``: the ``population_bayes_risk`` callable of
    :func:`attnlimits.numeric.slr.bo_command.bo_points`, which needs it at the many effective SNRs ν·q_k of a
    state-evolution run, so it builds the :class:`SLRTheory` of each (model, ν, L) it is asked about."""
    from .problem import slr_problem
    from .theory import theory_of

    return theory_of(slr_problem(model, nu, L)).bayes_risk(**kw)


def _L_param(v):
    return v if isinstance(v, (list, tuple)) and len(v) > 1 else (v[0] if isinstance(v, (list, tuple)) else v)


def run_bayes_optimal(params: dict, *, progress=None) -> list[dict]:
    """``attnlimits slr bayes-optimal``: one row per α with E_BO ± SE, overlaps, free entropy, branches."""
    from ._guards import bayes_optimal_seconds, check_work

    Ls = params["L"] if isinstance(params["L"], (list, tuple)) else [params["L"]]
    check_work(f"slr bayes-optimal at L = {max(Ls)}, {len(params['alpha'])} alpha",
               seconds=bayes_optimal_seconds(max(Ls), len(params["alpha"]), int(params.get("points", 2 ** 13))),
               progress=progress)
    pts = bo_state_evolution(params["model"], params["nu"], _L_param(params["L"]), params["alpha"], params["delta"],
                             points=int(params.get("points", 2 ** 13)), replicates=int(params.get("replicates", 8)),
                             seed=int(params.get("seed", 0)), inner_points=int(params.get("inner_points", 24)),
                             progress=progress)
    from attnlimits.numeric.slr.bo_command import bo_rows

    return bo_rows(pts, params)


def run_amp(params: dict, *, progress=None):
    """``attnlimits slr amp``: GAMP on generated data at each seed, with the state-evolution prediction;
    each seed's row yielded as it finishes (a stop keeps the finished seeds)."""
    law = lengths_law(_L_param(params["L"]))
    if len(law) > 1:
        raise InputError("--L: GAMP runs one length at a time (give a single L)")
    L = law[0][0]
    model = params["model"]
    if model not in ("spiked", "max"):
        raise InputError(f"--model must be 'spiked' or 'max', got {model!r}")
    from ._guards import bayes_optimal_seconds, check_work, data_bytes

    D = int(params["D"])
    check_work(f"slr amp at alpha = {params['alpha']:g}, D = {D}, L = {L}",
               nbytes=data_bytes(params["alpha"], D, L, copies=4) + data_bytes(1, D, L) * int(params.get("n_test", 20000)) / D,
               seconds=bayes_optimal_seconds(L, 1, 2 ** 13), progress=progress)  # its state-evolution prediction
    return _amp_rows(params, model, L, progress)


def _amp_rows(params, model, L, progress):
    from .amp import gamp_on_generated, gamp_on_generated_max

    se = bo_state_evolution(model, params["nu"], L, [params["alpha"]], params["delta"], starts=("uninformed",))[0]
    for s in params["seeds"]:
        if progress:
            progress(f"GAMP seed {s}")
        kw = dict(damping=float(params.get("damping", 0.5)), iterations=int(params.get("iterations", 60)),
                  device=params.get("device", "auto"), n_test=int(params.get("n_test", 20000)))
        if model == "spiked":
            res = gamp_on_generated(params["nu"], L, params["alpha"], params["delta"], int(params["D"]), int(s), **kw)
        else:
            res = gamp_on_generated_max(params["nu"], L, params["alpha"], params["delta"], int(params["D"]), int(s),
                                        **kw)
        row = {k: v for k, v in res.items() if not isinstance(v, (list, dict))}
        row.update({"model": model, "L": str(L), "nu": params["nu"], "alpha": params["alpha"],
                    "delta": params["delta"], "D": int(params["D"]), "seed": int(s),
                    "theory_q_k": se.q_k, "theory_q_v": se.q_v, "theory_E_BO": se.E_BO, "theory_E_BO_error": se.E_BO_se})
        if not row.get("converged", True):
            import sys

            print(f"warning: slr amp seed {s}: GAMP did not converge in {row.get('iterations')} iterations "
                  f"(undamped residual {row.get('residual', float('nan')):.2g} on q); the row is not a fixed point — "
                  "more --iterations or a larger --damping", file=sys.stderr)
        yield row






def phase_scan(Ls=(2, 3, 5), nus=(0.5, 1.0, 2.0, 5.0), alphas=(0.25, 0.5, 1.0, 2.0, 4.0, 8.0), delta: float = 0.1,
               *, model: str = "spiked", points: int = 2 ** 12, inner_points: int = 24, test_points: int = 2 ** 15,
               continuation: str = "up", progress=None) -> list[dict]:
    """(α, ν) scan of spiked-SLR (``model="spiked"``, the default) or max-SLR (``model="max"``, ν may be
    ``math.inf``) for each L: informed and uninformed fixed points with continuation in α.

    One row per (L, ν, α): the model, both branches' E_BO and free entropy, ``hard`` = True when they differ
    and the informed one has the larger free entropy (a computationally hard phase: AMP, which follows the
    uninformed branch, would not reach the BO error).  Plain continuation (no pseudo-arclength).
    ``inner_points`` and ``test_points`` are the max-SLR rules of :func:`bo_state_evolution`.

    ``continuation="up"`` (default): both starts are continued upward in α from the smallest α, so the
    "informed" branch starts at q = 0.99 at the smallest α only and then follows its own previous point: where
    the fixed point is unique at the smallest α the two branches coincide thereafter, and an informed branch
    that exists only at larger α (a first-order transition) is not seen.  ``continuation="none"``: every α is
    solved from both cold starts (q = 0.01 and q = 0.99), which does see such a branch (more iterations).
    """
    if continuation not in ("up", "none"):
        raise InputError(f"continuation must be 'up' or 'none', got {continuation!r}")
    return list(phase_scan_rows(Ls, nus, alphas, delta, model=model, points=points, inner_points=inner_points,
                                test_points=test_points, continuation=continuation, progress=progress))


def phase_scan_rows(Ls, nus, alphas, delta, *, model, points, inner_points, test_points, continuation, progress=None):
    """:func:`phase_scan`'s rows as an iterator: those of each (L, ν) yielded as soon as its α scan ends."""
    for L in Ls:
        for nu in nus:
            kw = dict(points=points, inner_points=inner_points, test_points=test_points, progress=progress)
            if continuation == "up":
                pts = bo_state_evolution(model, nu, L, list(alphas), delta, **kw)
            else:
                pts = [bo_state_evolution(model, nu, L, [a], delta, **kw)[0] for a in alphas]
            for p in pts:
                br = {b["start"]: b for b in p.branches}
                uninf = br.get("uninformed") or next(b for b in p.branches)
                inf = br.get("informed", uninf)
                distinct = len(p.branches) > 1
                yield {"model": model, "L": str(L), "nu": nu, "alpha": p.alpha, "delta": delta,
                       "continuation": continuation, "distinct": distinct,
                       "E_BO": p.E_BO, "E_uninformed": uninf["E_BO"], "E_informed": inf["E_BO"],
                       "phi_uninformed": uninf["phi"], "phi_informed": inf["phi"],
                       "hard": bool(distinct and inf["phi"] > uninf["phi"])}
