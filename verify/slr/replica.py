r"""RS theory of ridge ERM for SLR (docs/slr.md §10): name-level wrappers and the ``slr replica`` command.

Glue between :mod:`attnlimits.derivations.slr.replica` (the equations, in SymPy) and :mod:`attnlimits.numeric.slr.rs`
(the generated solver): activation names are resolved here, kernels generated and compiled once
per (activation, L, extra), and results returned as :class:`attnlimits.numeric.slr.rs.RSFixedPoint` or as
tidy rows (:func:`run_replica`, the command contract of :mod:`attnlimits.symbolic.result`).

Python API
----------
Names are resolved once, into an :class:`attnlimits.numeric.slr.problem.SLRProblem`
(:func:`attnlimits.verify.slr.problem.slr_problem`), and the problem with its compiled kernels and frozen rule is an
:class:`RSProblem`; its methods run the solvers at sample points, and the command runs through it too
(:meth:`RSProblem.rows`):

>>> rs = rs_problem("softmax", "spiked", 2, 2)                       # doctest: +SKIP
>>> fp = rs.fixed_point(alpha=4, lam=0.1, delta=0.1)                 # doctest: +SKIP
>>> round(fp.E_test, 3), fp.E_test_error                             # doctest: +SKIP
(0.378, 0.0003)

- :func:`rs_problem` (activation, model, nu, L, extra, points, replicates, seed, loss, delta) → :class:`RSProblem`;
  :meth:`RSProblem.of` (an SLRProblem, points, replicates, seed) → :class:`RSProblem`
- ``.fixed_point`` (alpha, lam, delta, …) → ``RSFixedPoint``
- ``.learning_curve`` (alphas, lam, …) → list (continuation in α)
- ``.tune_lambda`` (alpha, grid) → (best, grid points)
- ``.branches`` (…) → [(branch name, RSFixedPoint)], ``"informed"`` first (two starts only)
- ``.all_branches`` (alphas, lam, …) → {α: [(origin, RSFixedPoint, phase)]}: the branch search of
  docs/slr.md §10.7 with the equilibrium one labelled (``phase``), each with its ``replicon`` (§10.8)
- :func:`problem_kernels` (an SLRProblem) and :func:`rs_kernels` (activation, L, extra, loss) → compiled kernels;
  :func:`rs_rule` (model, nu, L, …)

``L`` is an int, a list of ints (uniform length law) or a dict {L: P(L)} (§3.4).  Bad input
raises :class:`attnlimits.symbolic.result.InputError`; a fixed point that does not converge raises
:class:`attnlimits.numeric.ConvergenceError`.
"""
from __future__ import annotations

import math

from dataclasses import dataclass, field
from typing import Any

from attnlimits.symbolic.result import Command, InputError, Param  # noqa: F401
from attnlimits.derivations.slr.result import REPLICA_COMMAND  # noqa: F401  (declared with the result)
# the name-free part of the command (validation, rows): one definition, shared with exported solvers
from attnlimits.numeric.slr.problem import SLRProblem, check_delta
from attnlimits.numeric.slr.rs_command import (DEFAULT_LAMBDA_GRID, check_point, parse_lams, replica_rows,
                                               replica_rule, with_block_ridges)

from .problem import slr_problem

__all__ = ["problem_kernels", "rs_kernels", "rs_rule", "rs_problem", "RSProblem", "rs_identities", "run_replica", "REPLICA_COMMAND",
           "DEFAULT_LAMBDA_GRID"]

#: compiled kernel sets by (activation name, lengths, extra scalar, loss); a dict, not ``lru_cache``, because the
#: resolved activation travels with the key (so that the derivation does not look the name up again) and an
#: :class:`Activation` is not hashable
_KERNELS: dict = {}


def problem_kernels(problem: SLRProblem):
    """Compiled RS kernels of ``problem``'s activation for every length of its law, for its loss (cached per
    activation, lengths, extra scalar and loss).  Refuses activations with a learned scalar (``erf_learned``,
    ``softplus_norm_bias``; docs/slr.md §17.5)."""
    from attnlimits.derivations.slr import replica as RD
    from attnlimits.numeric.slr.rs import compile_rs_kernels

    a = RD.check_activation(problem.activation)
    key = (a.name, problem.lengths.lengths, problem.extra, problem.loss)
    if key not in _KERNELS:
        sets = {Lv: RD.replica_kernels(a, Lv, problem.extra, problem.loss) for Lv in problem.lengths.lengths}
        if len(_KERNELS) >= 64:
            _KERNELS.pop(next(iter(_KERNELS)))
        _KERNELS[key] = compile_rs_kernels(a.name, sets)
    return _KERNELS[key]


def rs_kernels(activation, L, extra=None, loss="square"):
    """Compiled RS kernels of ``activation`` for every length of ``L`` (cached), for the per-sample ``loss``
    (``square`` by default; a preset or a formula in ``r``, :func:`attnlimits.derivations.slr.losses.parse_loss`):
    :func:`problem_kernels` of the problem these name."""
    return problem_kernels(slr_problem("spiked", 0.0, L, activation=activation, extra=extra, loss=loss,
                                       min_length=2, why=" for the RS theory"))


def rs_rule(model, nu, L, *, points=1024, replicates=4, seed=0):
    """The frozen integration rule (:func:`attnlimits.numeric.slr.rs.make_rule`) for a validated setting."""
    return replica_rule(SLRProblem.build(model, nu, L, min_length=2, why=" for the RS theory"), points=points,
                        replicates=replicates, seed=seed)


@dataclass(frozen=True)
class RSProblem:
    """An :class:`SLRProblem` with its RS solver ready (:meth:`of`, :func:`rs_problem`): the compiled kernels of its
    activation and the frozen rule.  Its methods run the solvers of :mod:`attnlimits.numeric.slr.rs` at sample
    points (α, λ, Δ; Δ defaults to the problem's), validated here; keyword arguments pass through
    (:class:`RSOptions` fields such as ``tol`` or ``form``, ``x0``, ``warm``, ``progress``…).  :meth:`rows` is
    the ``slr replica`` command on the problem: the one road into the solver, for the command and the API."""

    problem: SLRProblem = field(repr=False)
    kern: Any = field(repr=False)
    rules: Any = field(repr=False)

    @classmethod
    def of(cls, problem: SLRProblem, *, points=1024, replicates=4, seed=0) -> "RSProblem":
        """Compile the kernels of ``problem`` (cached) and draw its frozen rule (``replicates`` × ``points``
        scrambled Sobol points, ``seed``)."""
        rules = replica_rule(problem, points=points, replicates=replicates, seed=seed)
        return cls(problem, problem_kernels(problem), rules)

    @property
    def activation(self) -> str:
        return self.kern.name

    @property
    def model(self) -> str:
        return self.problem.model

    @property
    def nu(self) -> float:
        return self.problem.nu

    @property
    def loss(self) -> str:
        return self.problem.loss

    def _delta(self, delta) -> float:
        return self.problem.delta if delta is None else check_delta(delta)

    def _at(self, alphas=(None,), lam=None):
        lams = [None] if lam is None else [float(_ridge(lam)), getattr(_ridge(lam), "v", None)]
        for a in alphas:
            for lb in lams:
                if lb is not None or lam is None:
                    check_point(a, lb, None)

    def fixed_point(self, alpha, lam, delta=None, **kw):
        """The RS fixed point at (α, λ, Δ): :func:`attnlimits.numeric.slr.rs.rs_fixed_point`."""
        from attnlimits.numeric.slr.rs import rs_fixed_point

        self._at([alpha], lam)
        return rs_fixed_point(self.kern, self.rules, float(alpha), _ridge(lam), self._delta(delta), model=self.model,
                              nu=self.nu, **kw)

    def learning_curve(self, alphas, lam, delta=None, **kw) -> list:
        """Fixed points along ``alphas`` by continuation (each warm-starts the next); one frozen rule."""
        from attnlimits.numeric.slr.rs import rs_learning_curve

        self._at(alphas, lam)
        return rs_learning_curve(self.kern, self.rules, [float(a) for a in alphas], _ridge(lam), self._delta(delta),
                                 model=self.model, nu=self.nu, **kw)

    def tune_lambda(self, alpha, delta=None, *, grid=DEFAULT_LAMBDA_GRID, **kw):
        """λ minimising E_test at fixed α (§12): log grid (≥ 3 points, default 9 on 1e-3…10), then a bounded 1-D
        refinement in log λ (scipy's bounded Brent): ``(best, grid points)``."""
        from attnlimits.numeric.slr.rs import rs_tune_lambda

        if len(grid) < 3:
            raise InputError("the λ grid needs at least 3 points")
        for g in grid:
            self._at([alpha], g)
        return rs_tune_lambda(self.kern, self.rules, float(alpha), self._delta(delta), grid=list(grid),
                              model=self.model, nu=self.nu, **kw)

    def branches(self, alpha, lam, delta=None, **kw) -> list:
        """Distinct fixed points from the informed and small-overlap starts, ``"informed"`` first."""
        from attnlimits.numeric.slr.rs import rs_branches

        self._at([alpha], lam)
        return rs_branches(self.kern, self.rules, float(alpha), _ridge(lam), self._delta(delta), model=self.model,
                           nu=self.nu, **kw)

    def all_branches(self, alphas, lam, delta=None, **kw) -> dict:
        """Every distinct fixed point at each α (informed, small-overlap, large-λ and α-continuation starts),
        labelled ``equilibrium``/``metastable`` (docs/slr.md §10.7): ``{α: [(origin, RSFixedPoint, phase), …]}``
        sorted by RS training objective.  See :func:`attnlimits.numeric.slr.rs.rs_branch_search`."""
        from attnlimits.numeric.slr.rs import rs_branch_search, rs_select_equilibrium

        self._at(alphas, lam)
        found = rs_branch_search(self.kern, self.rules, [float(a) for a in alphas], _ridge(lam), self._delta(delta),
                                 model=self.model, nu=self.nu, **kw)
        return {a: rs_select_equilibrium(br) for a, br in found.items()}

    def rows(self, params: dict, *, progress=None):
        """The rows of ``attnlimits slr replica`` on this problem (:func:`attnlimits.numeric.slr.rs_command.replica_rows`;
        ``params`` as there: alpha, lam, branches, metric, form and the labels)."""
        return replica_rows(self.kern, self.rules, self.problem, params, progress=progress)


def _ridge(lam):
    """λ as the solver takes it: a float, or a :class:`attnlimits.numeric.slr.rs.Ridge` (λ_k, λ_v) kept as such;
    a pair ``(λ_k, λ_v)`` becomes one."""
    from attnlimits.numeric.slr.rs import Ridge

    if isinstance(lam, Ridge):
        return lam
    if isinstance(lam, (tuple, list)):
        if len(lam) != 2:
            raise InputError(f"lam must be a number or a pair (lam_k, lam_v), got {lam!r}")
        return Ridge(float(lam[0]), float(lam[1]))
    return float(lam)


def rs_problem(activation, model, nu, L, *, extra=None, points=1024, replicates=4, seed=0, loss="square",
               delta=0.1) -> RSProblem:
    """Resolve an RS setting once (:func:`attnlimits.verify.slr.problem.slr_problem`, lengths ≥ 2), compile the
    kernels of ``activation`` (cached) and draw the frozen rule (``replicates`` × ``points`` scrambled Sobol,
    ``seed``): :meth:`RSProblem.of`.  Accuracy: ``E_test_error`` is about 2.5e-3 at the default 4 × 1024 and
    1.5e-3 at 4 × 4096 for softmax, spiked L = 2, ν = 2, α = 4, λ = 0.1 (docs/slr.md §10.6).  ``loss``: the
    per-sample loss (``square``, ``huber:δ``, ``pseudo_huber:δ``, ``logcosh`` or a formula in ``r``); the methods
    take ``lam`` as a number or a pair ``(λ_k, λ_v)`` of separate ridges, and Δ (default ``delta``)."""
    problem = slr_problem(model, nu, L, delta=delta, activation=activation, extra=extra, loss=loss, min_length=2,
                          why=" for the RS theory")
    return RSProblem.of(problem, points=points, replicates=replicates, seed=seed)


def rs_identities(problem: RSProblem, fp, L) -> list[dict]:
    """Two identities the RS theory must satisfy at any fixed point ``fp`` of ``problem`` (the model, ν and
    L of the problem; ``L`` as given to :func:`rs_problem`), each a deterministic comparison
    ``{"label", "value", "reference", "tolerance", "note"}`` with a numerical tolerance:

    1. *test error*: the RS test-error expression (§10.5, the replica kernels' generated ``test_error``) at the
       RS overlaps, with the population averages A, B computed afresh (QMC, 4 × 4096), equals the population
       risk of §6.2 at the same overlaps (the population module's generated ``manifold_risk``, same A, B):
       two derivations of one quantity — a predictor's test error depends on it only through its overlaps.
       Tolerance 1e-9 relative (round-off).
    2. *free energy*: the zero-temperature free energy from its derived functional (§10.7, ``rs_energy``)
       equals the training objective (training loss + ridge term) — only at an exact fixed point of the RS
       equations, so an error inside the fixed-point map (a conjugate, a prior update) shows as a gap, with
       the integration noise cancelling (one rule for both).  Tolerance: the distance to the exact fixed
       point, residual/(1 − ρ) (ρ the spectral radius, capped at 0.9), times a unit sensitivity, plus 1e-7.

    Either fails for an error of a fraction of a per cent where the Monte Carlo comparisons with ERM
    cannot resolve a few per cent (docs/power.md)."""
    from attnlimits.verify.slr.theory import population_module, theory_of

    v = fp.values
    # the length law of the problem (parsed from ``L`` when the problem was built)
    A, B, _, _ = theory_of(problem.problem).population_AB(v["m_k"], v["q_k"], qmc_points=2 ** 12, replicates=4)
    mod = next(iter(problem.kern.modules.values()))
    (rs_formula,) = mod.test_error(v["m_v"], v["q_v"], A, B, float(fp.delta), 0.0)
    (population,) = population_module().manifold_risk(v["m_v"], v["q_v"], A, B)
    rho = float(fp.stability)
    rho = min(rho, 0.9) if math.isfinite(rho) else 0.9
    return [
        {"label": "RS test-error expression (§10.5) = population risk (§6.2) at the RS overlaps",
         "value": float(rs_formula), "reference": float(population),
         "tolerance": 1e-9 * max(1.0, abs(float(population))),
         "note": f"A = {A:.6f}, B = {B:.6f} at m_k = {v['m_k']:.4f}, q_k = {v['q_k']:.4f} (one QMC set for both)"},
        {"label": "RS free energy (§10.7) = training objective at the fixed point",
         "value": float(fp.free_energy), "reference": float(fp.training_objective),
         "tolerance": 1e-7 + float(fp.residual) / (1 - rho),
         "note": f"residual {fp.residual:.1e}, spectral radius {fp.stability:.2f}"},
    ]


# =============================================================================================
# the command
# =============================================================================================

def run_replica(params: dict, *, progress=None):
    """Run ``attnlimits slr replica``: one tidy row per (activation, α, λ, branch), yielded as each
    is computed (so a stop keeps the finished rows; every input is checked before the first).

    ``params``: model, nu, L (list), activation (list), alpha (list), lam (list of numbers or
    ["tune"]), delta, branches, extra, points, replicates, seed, metric.  With ``lam = tune`` the
    row is the tuned λ* (``lam_grid`` and ``E_grid`` hold the grid as ';'-joined text).
    """
    from attnlimits.numeric.slr.rs_command import check_rule_size

    from ._guards import check_work, replica_seconds

    acts = params["activation"] if isinstance(params["activation"], (list, tuple)) else [params["activation"]]
    # every input checked once, before any kernel is generated: one problem per activation (names resolved here)
    problems = [slr_problem(params["model"], params["nu"], params["L"], delta=params.get("delta", 0.1),
                            activation=act, extra=params.get("extra"), loss=params.get("loss") or "square",
                            min_length=2, why=" for the RS theory") for act in acts]
    lams = with_block_ridges(parse_lams(params["lam"] if isinstance(params["lam"], (list, tuple)) else [params["lam"]]),
                             params.get("lam_k"), params.get("lam_v"))
    for a in params["alpha"]:
        check_point(a, None if lams == "tune" else lams[0], None)
    check_rule_size(int(params.get("points", 1024)), int(params.get("replicates", 4)))
    check_work(f"slr replica at L = {problems[0].lengths.max_length} (generating its RS kernels, once)",
               seconds=replica_seconds(problems[0].lengths.max_length) * len(acts), progress=progress)
    return _replica_rows(acts, problems, params, progress)


def _replica_rows(acts, problems, params, progress):
    for act, problem in zip(acts, problems):
        rs = RSProblem.of(problem, points=params.get("points", 1024), replicates=params.get("replicates", 4),
                          seed=params.get("seed", 0))
        yield from rs.rows({**params, "activation": act, "loss": problem.loss}, progress=progress)
