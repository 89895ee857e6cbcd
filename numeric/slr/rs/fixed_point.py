"""The RS fixed point of ridge ERM at one (α, λ, Δ) (docs/slr.md §10.6): options, the strategy as a list of
stages, error bars by the delta method, and the result object.
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any
from attnlimits.symbolic.options import resolve_options

import numpy as np

from ...portable_solver import ConvergenceError
from .map import NAMES, FrozenRSMap, fd_jacobian_with_averages, rs_replicon, update_from_averages
from .rule import SYSTEM, UNKNOWNS, Ridge, RSKernels, informed_start, prefix_rule, project, residual, ridge_term, ridges
from ...frozen import LadderOptions, ladder
from .walk import RS_DOMAIN, WalkHooks, WalkOptions, piece_walk

__all__ = ["REPLICON_K", "RSFixedPoint", "RSOptions", "replicon_phase", "rs_fixed_point"]

#: Standard errors by which the replicon must clear 1 before replica symmetry is declared broken (or
#: stable): its error bar is the scatter of the scrambled-Sobol replicates, often 5–60 % of the value.
REPLICON_K = 3.0


def replicon_phase(replicon: float, error: float, k: float = REPLICON_K) -> str:
    """The replicon's verdict with its error bar (docs/slr.md §10.8): ``"rsb"`` when
    ``replicon − k·error ≥ 1`` (replica symmetry broken), ``"rs"`` when ``replicon + k·error < 1``
    (RS-stable), ``"uncertain"`` when the interval ``replicon ± k·error`` contains 1, ``"unknown"``
    without a replicon.  A missing or NaN error counts as 0 (a single rule: no error bar).

    >>> replicon_phase(1.09, 0.21), replicon_phase(1.32, 0.04), replicon_phase(0.6, 0.006)
    ('uncertain', 'rsb', 'rs')
    """
    r = float(replicon)
    if math.isnan(r):
        return "unknown"
    e = float(error) if error is not None and math.isfinite(float(error)) else 0.0
    if r - k * e >= 1.0:
        return "rsb"
    if r + k * e < 1.0:
        return "rs"
    return "uncertain"


@dataclass(frozen=True)
class RSOptions:
    r"""Options of :func:`rs_fixed_point`, one frozen object (``dataclasses.replace`` derives variants).

    Attributes
    ----------
    tol_noise : float
        The solve also stops when the residual is below ``tol_noise`` times the map's integration
        noise at the point (see ``accept_noise``), if that is larger than ``tol``: the residual's
        effect on the answer is then about ``tol_noise`` of its error bar (both pass through
        (I − J)⁻¹; the shift is added to the reported errors in quadrature).  ``0``: ``tol`` only.
    tol, accept : float
        Target residual ‖G(x) − x‖∞ (relative to max(1, |x|)); a solve whose residual stays above
        ``accept`` raises :class:`ConvergenceError`; between the two it is returned with the flag
        ``residual_above_tol``.
    accept_noise : float
        A rough frozen map (§10.6: at small λ the selected prox minimum of some samples switches, so
        the map is piecewise smooth and may have no exact fixed point) is also accepted when the
        residual is below ``accept_noise`` times the map's own integration noise at that point
        (relative spread of the replicate maps over √R): the point is then a fixed point to well
        within its error bar.  The residual's own effect, (I − J)⁻¹(G(x) − x), is added to every
        reported error in quadrature, and the flags say ``residual_above_tol`` and ``rough_map``.
        ``0`` restores the absolute ``accept`` only.  Default 0.25 (a smaller value refuses real cases:
        softmax spiked L = 2, λ = 0.1 on 4×16384, seed 0, has no fixed point below 3.4 % of its noise
        at α = 1.946 and below 8 % at α = 7.368).  What such a point is: the map jumps there (a
        sample with a heavy integrand switches its minimum — the replicate spread jumps by 30 %, the
        mark of one or a few samples — moving the update by about 7e-4 relative; the walk cycles
        across the jump), so it may have
        no fixed point; the map with that sample's selection smoothed (a fractional weight on its
        two minima) is continuous and has one within about the residual (a generalised fixed
        point: reasoned, not computed); at 0.25 of the noise the added term grows the error bar by
        ≤ 3 % before (I − J)⁻¹.  The bound is
        on the residual of the map, not on its effect on the answer: (I − J)⁻¹ can amplify the
        residual far more than the replicate spread where the map is nearly unstable (that point:
        spectral radius 0.98, E_test error 0.051 once the shift is added, against 7e-4 at its
        neighbours), so a ``rough_map`` result's error bar must be read before its value.
    form : {"stein", "jacobian"}
        Form of the V̂ and m̂ updates (§10.4).  ``stein`` (default) is the derivative of the channel
        free energy and right where the selected prox minimum jumps; ``jacobian`` (Stein's lemma with
        the prox Jacobian) misses those jumps and is biased there (docs/slr.md §10.6).
    coarse : bool
        Run the damped stage on the first replicate only (cheaper; the full rule refines).
    coarse_tol : float
        Residual at which the coarse stage hands over to the full rule (the replicates' own fixed
        points differ by about the integration error, so a tighter coarse solve is wasted).
    walk_at : float
        Residual at which Anderson on the full rule hands over to the piece walk
        (:func:`piece_walk`: Newton on the selection-frozen surrogate, every candidate checked on
        the frozen map itself); ``0`` uses plain Newton on the frozen map instead.
    surrogate_jacobian : bool
        Take ∂G/∂x at the returned point (stability and error estimate) by finite differences of
        the selection-frozen surrogate anchored there (see :func:`rs_map` ``anchor``): equal to
        the frozen map's within the piece (measured: eigenvalues agree to 1e-3), its prox one
        Newton step from the anchored minima (:func:`fd_jacobian_with_averages`); seven such
        evaluations cost about half a multistart map.  A piece walk takes this Jacobian once near the fixed point (residual ≤ 3e-2) for its
        own Newton steps; it is reused at the returned point when that lies within 2e-2 (relative)
        of where it was taken (measured on the benchmark curve: stability within 1.1 % and every
        error within 2.1 % of a fresh one, below the Jacobian's own sampling noise).  ``False``: finite
        differences of the frozen map itself, at the returned point.
    partial_maps : bool
        In a piece walk that has shown samples switching their selection (a rough map), re-anchor
        the later rounds on the *partial map* (the multistart only on the samples with several prox
        minima at the last map, :func:`rs_map` ``rescreen``) instead of the map itself, about a
        quarter of its cost; every acceptance and every returned value is still the map's own
        (:func:`piece_walk` ``G_partial``).  ``False``: every round on the map.
    pilot : int or None
        Multilevel start for large rules: when the rule has more than ``2·pilot`` points per
        replicate, the fixed point is first solved on the nested rule made of the first ``pilot``
        points of every replicate (a Sobol prefix of size 2^k is itself a scrambled net), and the
        full rule starts from it with the pilot's Jacobian for its chord steps (the piece walk).
        The pilot point differs from the full one by about the pilot's integration error, and its
        Jacobian from the full one by as little, so a few chord steps reach ``tol`` on the full
        rule instead of the whole ladder.  The answer is the full rule's fixed point either way
        (same ``tol``); a pilot that fails is skipped.  ``None``: no pilot.
    compute_error : bool
        Take the delta-method error bars (a pilot solve does not need them).
    warm_reach : float
        Largest relative (∞-norm) step of the continuation predictor from a ``warm`` neighbour; beyond it the
        regular path starts from the neighbour's point (see ``warm`` in :func:`rs_fixed_point`).
    """

    tol: float = 1e-9
    accept: float = 1e-6
    accept_noise: float = 0.25
    tol_noise: float = 1e-3
    form: str = "stein"
    compute_error: bool = True
    coarse: bool = True
    coarse_tol: float = 1e-3
    walk_at: float = 1e-3
    surrogate_jacobian: bool = True
    partial_maps: bool = True
    pilot: int | None = 1024
    warm_reach: float = 1.5


@dataclass
class RSFixedPoint:
    """An RS fixed point with its integration error (every ``*_error`` is one standard error)."""

    values: dict
    errors: dict
    E_test: float
    E_test_error: float
    training_loss: float
    training_loss_error: float
    training_objective: float
    hats: dict
    stability: float
    pd_fail_fraction: float
    multi_minima_fraction: float
    ambiguous_fraction: float
    residual: float
    iterations: int
    evaluations: int
    method: str
    rule: str
    seconds: float
    prox_seconds: float
    alpha: float
    lam: float
    delta: float
    flags: tuple = ()
    #: The RS training objective per sample, the zero-temperature free energy over α, evaluated from
    #: its derived functional (kernel ``rs_energy``, docs/slr.md §10.7); equal to
    #: ``training_objective`` at an exact fixed point (they differ by the residual).
    free_energy: float = float("nan")
    #: Standard error of ``training_objective`` (and so of ``free_energy``), delta method.
    training_objective_error: float = float("nan")
    #: Largest real part of the eigenvalues of ∂G/∂x: below 1 the fixed point attracts the damped
    #: iteration x ← (1 − ε)x + εG(x) for small ε (``stability``, the spectral radius, is the undamped one).
    stability_damped: float = float("nan")
    #: Replicon (de Almeida–Thouless) eigenvalue, docs/slr.md §10.8: RS is locally stable iff < 1.
    replicon: float = float("nan")
    replicon_error: float = float("nan")
    #: ∂G/∂x at the fixed point (6×6, forward differences; ``stability`` is its spectral radius).
    jacobian: Any = field(default=None, repr=False, compare=False)
    #: The prox selection at the fixed point (χ̂ − ω^χ per sample, one array per rule): the handle
    #: by which a neighbouring solve on the same rule starts (``rs_fixed_point(warm=…)``).  Not
    #: pickled (it is as large as the rule).
    anchor: Any = field(default=None, repr=False, compare=False)
    #: The ridge on v where it differs from the one on k (``lam`` is then λ_k); ``None``: one ridge λ on both.
    lam_v: Any = None
    #: The pooled channel averages at the fixed point (they do not depend on α or λ, so with the
    #: Jacobian they give a first-order predictor at a neighbouring (α, λ) without a prox call).
    averages: Any = field(default=None, repr=False, compare=False)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["anchor"] = None
        return state

    @property
    def rsb_phase(self) -> str:
        """:func:`replicon_phase` of this point: ``rsb``, ``uncertain``, ``rs`` or ``unknown``."""
        return replicon_phase(self.replicon, self.replicon_error)

    def as_row(self) -> dict:
        row = {"alpha": self.alpha, "lam": self.lam, "delta": self.delta, "E_test": self.E_test,
               "E_test_error": self.E_test_error, "training_loss": self.training_loss,
               "training_loss_error": self.training_loss_error, "training_objective": self.training_objective,
               "training_objective_error": self.training_objective_error, "free_energy": self.free_energy,
               "replicon": self.replicon, "replicon_error": self.replicon_error,
               "rsb": self.rsb_phase == "rsb", "rsb_status": self.rsb_phase,
               "stability_damped": self.stability_damped}
        if self.lam_v is not None:
            row.update(lam_k=self.lam, lam_v=self.lam_v)
        for k in UNKNOWNS:
            row[k] = self.values[k]
            row[k + "_error"] = self.errors[k]
        row.update({k: float(v) for k, v in self.hats.items()})
        row.update({"stability": self.stability, "pd_fail_fraction": self.pd_fail_fraction,
                    "multi_minima_fraction": self.multi_minima_fraction, "ambiguous_fraction": self.ambiguous_fraction,
                    "residual": self.residual, "iterations": self.iterations, "evaluations": self.evaluations,
                    "method": self.method, "rule": self.rule, "seconds": self.seconds, "prox_seconds": self.prox_seconds,
                    "flags": ",".join(self.flags)})
        return row


# ---------------------------------------------------------------------------------------------
# the state the stages share
# ---------------------------------------------------------------------------------------------

@dataclass
class _Solve:
    """One solve in progress: the map, the options, the best point so far (``x``, ``gx``, ``res``) and the
    bookkeeping (evaluations, iterations, the method string).  ``done``: a stage reached a fixed point, the
    regular path is skipped; ``rough``: accepted as a fixed point of a map that jumps there (within
    ``accept_noise`` of its integration noise): no further ladders; ``kept``: a continuation result that the
    regular path must beat."""

    G: FrozenRSMap
    options: RSOptions
    x0: Any
    model: str
    nu: float
    warm: Any = None
    anchor0: Any = None
    x_start: Any = None
    x: Any = None
    gx: Any = None
    res: float = math.inf
    kept: Any = None
    done: bool = False
    rough: bool = False
    evals: int = 0
    iters: int = 0
    methods: list = field(default_factory=list)

    def converged(self, v, r) -> bool:
        return r <= self.options.tol or (self.options.tol_noise > 0 and r <= self.G.tolerance_at(v))

    def take(self, x, gx, res, *, if_better=False):
        if not if_better or res < self.res:
            self.x, self.gx, self.res = x, gx, res

    def hooks(self) -> WalkHooks:
        o, G = self.options, self.G
        partial = o.partial_maps and not G.kern.affine
        return WalkHooks(tol_of=G.tolerance_at if o.tol_noise > 0 else None,
                         jacobian=G.jacobian_at if o.surrogate_jacobian else None,
                         jac_out=G.jac_out if o.surrogate_jacobian else None,
                         partial=G.partial if partial else None,
                         tol_partial=G.tolerance_last if partial and o.tol_noise > 0 else None)

    def walk(self, xs, *, label="walk", J0=None, anchor0=None, options=WalkOptions()):
        """A piece walk from xs, counted and labelled in ``methods``: (x, G(x), residual)."""
        w = piece_walk(self.G.with_selection, self.G.anchored, xs, self.options.tol, J0=J0, anchor0=anchor0,
                       hooks=self.hooks(), options=options)
        self.evals += w.true_evaluations + w.surrogate_evaluations
        self.iters += w.true_evaluations
        self.methods.append(f"{label}[{w.true_evaluations}+{w.surrogate_evaluations}s]")
        return w.x, w.gx, w.residual

    def climb(self, G, x, tol, options: LadderOptions, label: str | None):
        """A :func:`ladder` from x, counted (and labelled ``label[method]`` unless ``label`` is None)."""
        r = ladder(G, x, tol, options=options, domain=RS_DOMAIN)
        self.evals += r.evaluations
        self.iters += r.iterations
        if label is not None:
            self.methods.append(f"{label}[{r.method}]" if label else r.method)
        return r

    def maybe_rough(self) -> None:
        """Accept the best point as a generalised fixed point of a map that jumps there when its residual is
        within ``accept_noise`` of the map's noise (and it is not converged)."""
        if not self.converged(self.x, self.res) and self.res <= self.options.accept_noise * self.G.noise(self.x):
            self.rough = True


# ---------------------------------------------------------------------------------------------
# the stages, in order (each returns at once where it does not apply)
# ---------------------------------------------------------------------------------------------

#: a continuation walk: two rounds, then up to six more while each halves the residual
_WARM_WALK = WalkOptions(rounds=2, extra_rounds=6)


def continue_from_neighbour(s: _Solve) -> None:
    """Newton on the surrogate anchored at the neighbour's selection, with its Jacobian, checked on the map; where
    it stalls between two pieces of a rough map (the fixed point of each lies in the other), once more from the
    damped point between x and G(x), whose selection differs — far cheaper than the regular path (measured at
    α = 1 on 4×8192).  What does not converge is kept for comparison and the regular path starts from the
    neighbour's point."""
    if s.anchor0 is None or not s.options.walk_at:
        return
    x, gx, res = s.walk(s.x0, label="warm-walk", J0=s.warm.jacobian, anchor0=s.anchor0, options=_WARM_WALK)
    s.done = s.converged(x, res)
    if not s.done and np.isfinite(gx).all():
        x2, gx2, res2 = s.walk(project(0.5 * (x + gx)), J0=s.G.jac_out.get("J", s.warm.jacobian),
                               options=_WARM_WALK)
        if res2 < res:
            x, gx, res = x2, gx2, res2
        s.done = s.converged(x, res)
    if not s.done and res <= s.options.accept_noise * s.G.noise(x):
        s.rough, s.done = True, True  # a generalised fixed point of a map that jumps here
    if not s.done:
        s.kept, s.x0 = (x, gx, res), np.array([s.warm.values[k] for k in UNKNOWNS])
        s.methods.append("then")
    s.take(x, gx, res)


def pilot(s: _Solve) -> None:
    """Multilevel: the fixed point and its Jacobian on the nested pilot rule (the first ``pilot`` points of every
    replicate), then chord steps on the full rule's surrogate (the piece walk) from there."""
    o, G = s.options, s.G
    if s.done or not (o.pilot and o.walk_at and G.rules[0].points > 2 * int(o.pilot)):
        return
    prules = [prefix_rule(r, int(o.pilot)) for r in G.rules]
    # the pilot's own options: these fields from the caller's, the others (accept_noise, partial_maps,
    # warm_reach) at their defaults, as the solver has always run it
    popts = dataclasses.replace(RSOptions(), tol=o.tol, accept=o.accept, form=o.form, compute_error=False,
                                coarse=o.coarse, coarse_tol=o.coarse_tol, walk_at=o.walk_at, surrogate_jacobian=True,
                                pilot=None, tol_noise=o.tol_noise)
    try:
        fpp = rs_fixed_point(G.kern, prules, G.alpha, G.lam, G.delta, x0=s.x0, model=s.model, nu=s.nu,
                             options=popts)
    except (ConvergenceError, np.linalg.LinAlgError):
        s.methods.append("pilot_failed")
        return
    xp = np.array([fpp.values[k] for k in UNKNOWNS])
    G.timing["prox"] = G.timing.get("prox", 0.0) + fpp.prox_seconds
    G.timing["pilot"] = fpp.seconds
    s.methods.append(f"pilot[{G.R}x{int(o.pilot)}: {fpp.evaluations} maps]")
    s.take(*s.walk(xp, J0=fpp.jacobian))
    s.done = True


def regular_ladder(s: _Solve) -> None:
    """Damped → Anderson on the first replicate to ``coarse_tol``, then on the full rule down to ``walk_at``
    (Newton there only without a piece walk); a kept continuation result wins if it is better."""
    o, G = s.options, s.G
    if not s.done:
        if o.coarse and G.R > 1:
            s.x0 = s.climb(G.one_replicate, s.x0, o.coarse_tol,
                           LadderOptions(newton_at=o.coarse_tol, max_newton=2), "coarse").x
        r = s.climb(G, s.x0, o.tol, LadderOptions(newton_at=o.walk_at, max_newton=0 if o.walk_at else 8), "")
        s.take(r.x, r.gx, r.residual)
    if s.kept is not None and s.kept[2] < s.res:
        s.take(*s.kept)


def end_game(s: _Solve) -> None:
    """Newton on the smooth pieces of the frozen map (the piece walk) from the best point."""
    if not s.converged(s.x, s.res) and s.options.walk_at and not s.rough:
        s.take(*s.walk(s.x), if_better=True)
    s.maybe_rough()


def retry(s: _Solve) -> None:
    """A rough frozen map (prox minima switching, §10.6): the slow ladder from the best point — damped to 1e-3,
    Anderson to tol, Newton — which wanders over more pieces of the map."""
    o = s.options
    if not s.converged(s.x, s.res) and not s.rough:
        r = s.climb(s.G, s.x, o.tol, LadderOptions(damped_exit=1e-3, newton_at=o.tol), "retry")
        s.take(r.x, r.gx, r.residual, if_better=True)
    if s.res > o.accept and not s.rough:
        s.maybe_rough()


def restart(s: _Solve) -> None:
    """Last resort: the whole slow ladder from the start (coarse stage to 1e-7 first), whose different path over
    the pieces of a rough map can end in a fixed point the others missed."""
    o, G = s.options, s.G
    if not (s.res > o.accept and not s.rough and not s.converged(s.x, s.res)):
        return
    xs_ = s.x_start
    if o.coarse and G.R > 1:
        xs_ = s.climb(G.one_replicate, s.x_start, 1e-7, LadderOptions(damped_exit=1e-3, newton_at=1e-7, max_newton=2),
                      None).x
    r = s.climb(G, xs_, o.tol, LadderOptions(damped_exit=1e-3, newton_at=o.tol), "restart")
    s.take(r.x, r.gx, r.residual, if_better=True)
    if s.res > o.accept:
        s.maybe_rough()


#: the strategy: each stage improves the best point or leaves it
STAGES = (continue_from_neighbour, pilot, regular_ladder, end_game, retry, restart)


# ---------------------------------------------------------------------------------------------
# the start, the acceptance, the error bars
# ---------------------------------------------------------------------------------------------

def _warm_anchor(warm, rules):
    if warm is not None and warm.anchor is not None and len(warm.anchor) == len(rules) and all(
            np.shape(a_) == (r_.n, r_.L) for a_, r_ in zip(warm.anchor, rules)):
        return warm.anchor
    return None


def _predict(kern, warm, x0, alpha, lam, options: RSOptions):
    """One Newton step at the new (α, λ) from the neighbour, with its Jacobian and its averages: ``(x, ok)``;
    not ok when the step leaves ``warm_reach`` (the neighbour's selection and Jacobian would not carry: the
    regular path from the neighbour's point)."""
    xw = np.array([warm.values[k] for k in UNKNOWNS])
    if not np.array_equal(x0, xw):
        return x0, True
    try:
        g_new, _ = update_from_averages(kern, warm.averages, xw, alpha, lam, options.form)
        xp_ = project(xw + np.linalg.solve(np.eye(xw.size) - warm.jacobian, g_new - xw))
        step_ = float(np.max(np.abs(xp_ - xw) / np.maximum(1.0, np.abs(xw))))
        if np.isfinite(xp_).all() and step_ <= options.warm_reach:
            return xp_, True
        return x0, False
    except (np.linalg.LinAlgError, ValueError, ZeroDivisionError):
        return x0, True


def _check_point(alpha, lam, delta):
    if not (alpha > 0 and math.isfinite(alpha)):
        raise ValueError(f"alpha must be > 0, got {alpha}")
    if not all(v > 0 and math.isfinite(v) for v in ridges(lam)):
        raise ValueError(f"lam must be > 0, got {lam!r}")
    if not (delta >= 0 and math.isfinite(delta)):
        raise ValueError(f"delta must be >= 0, got {delta}")


def _acceptance_flags(s: _Solve, params) -> list:
    """Raise :class:`ConvergenceError` unless the best point is a fixed point (``tol``, the noise tolerance),
    below ``accept``, or accepted as rough; the flags of an accepted point."""
    o = s.options
    if not (s.res <= o.accept or s.rough or s.converged(s.x, s.res)) or not np.isfinite(s.x).all():
        eta = s.G.last_noise()
        what = "the fixed point did not converge" + (
            f" (integration noise of the map there {eta:.1e}: the residual must be below {o.accept:g} or "
            f"{o.accept_noise:g}× the noise)" if eta is not None else "")
        raise ConvergenceError(SYSTEM, params, s.res, what,
                               "another start (x0, e.g. from a neighbouring α or λ), a larger λ, more points, "
                               "or branches=True to see other fixed points")
    flags = []
    if not s.converged(s.x, s.res):
        flags.append("residual_above_tol")
    if s.rough and s.res > o.accept:
        flags.append("rough_map")
    return flags


def _jacobian(s: _Solve, x, gx, info):
    """∂G/∂x at the returned point (stability and the delta-method error) and, from the same evaluations, the
    derivative of the pooled channel averages in x (E_test depends on the k-block only through the averages
    A, B): on the selection-frozen surrogate anchored at x with ``surrogate_jacobian`` (equal to the frozen
    map's unless a sample's minimum switches within the difference step, at a fraction of its cost), reused
    from the piece walk when taken within ``reuse_final`` of x (the two differ by O(distance) and by the few
    samples that switched, far below the sampling noise of a Jacobian on this rule: 10-20 % of its largest
    entry at 4×8192).  Returns ``(J, ∂ā/∂x, evaluations)``."""
    G, jo = s.G, s.G.jac_out
    if s.options.surrogate_jacobian and jo.get("x_J") is not None and residual(x, jo["x_J"]) <= jo["reuse_final"]:
        return jo["J"], jo["extra"], 0
    if s.options.surrogate_jacobian:
        offs = [d["offset"] for d in info["diags"]]

        def Gi(v):
            return G.evaluate(v, anchor=offs, newton_steps=1)

        g1, inf1 = Gi(x)
        J, Jav = fd_jacobian_with_averages(Gi, x, g1, inf1["averages"].mean(axis=0))
        return J, Jav, x.size + 1
    J, Jav = fd_jacobian_with_averages(G.evaluate, x, gx, info["averages"].mean(axis=0))
    return J, Jav, x.size


def _observables(G: FrozenRSMap, xv, a):
    """E_test and the training loss E[½r²] at order parameters ``xv`` with pooled channel averages ``a``."""
    mod = next(iter(G.kern.modules.values()))
    d = dict(zip(NAMES, a))
    (E,) = mod.test_error(xv[3], xv[4], d["A"], d["B"], G.delta, 0.0)
    return float(E), float(d["train_half_sq"])


def _error_bars(G: FrozenRSMap, x, gx, av, J, Jav, E, tl):
    """Standard errors by the delta method: replicate r's fixed point x_r = x + (I − J)⁻¹(G_r(x) − x), its
    averages carried to x_r to first order; the residual's own effect (the distance to the exact fixed point of
    the linearised map) added in quadrature.  Returns ``(errors, E_err, tl_err, objective_err, flags)``."""
    R, alpha, lam = G.R, G.alpha, G.lam
    try:
        A = np.linalg.inv(np.eye(x.size) - J)
    except np.linalg.LinAlgError:
        return {k: 0.0 for k in UNKNOWNS}, 0.0, 0.0, 0.0, ["singular_jacobian"]
    xr_list, Er, tlr, objr = [], [], [], []
    for r in range(R):
        gr, _ = update_from_averages(G.kern, av[r], x, alpha, lam, G.form)
        xr = x + A @ (gr - x)
        xr_list.append(xr)
        # replicate r's averages at its own fixed point, to first order: a_r(x_r) ≈ a_r(x*) + ∂ā/∂x·δx_r
        e_r, t_r = _observables(G, xr, av[r] + Jav @ (xr - x))
        Er.append(e_r)
        tlr.append(t_r)
        objr.append(t_r + ridge_term(lam, xr[1], xr[4], alpha))
    xr_arr = np.array(xr_list)
    sd = xr_arr.std(axis=0, ddof=1) / math.sqrt(R)
    E_err = float(np.std(Er, ddof=1) / math.sqrt(R))
    tl_err = float(np.std(tlr, ddof=1) / math.sqrt(R))
    obj_err = float(np.std(objr, ddof=1) / math.sqrt(R))
    shift = A @ (gx - x)
    e_s, t_s = _observables(G, x + shift, av.mean(axis=0) + Jav @ shift)
    sd = np.hypot(sd, np.abs(shift))
    o_s = t_s + ridge_term(lam, x[1] + shift[1], x[4] + shift[4], alpha)
    obj_err = float(math.hypot(obj_err, o_s - (tl + ridge_term(lam, x[1], x[4], alpha))))
    E_err, tl_err = float(math.hypot(E_err, e_s - E)), float(math.hypot(tl_err, t_s - tl))
    return dict(zip(UNKNOWNS, map(float, sd))), E_err, tl_err, obj_err, []


def _energy_and_replicon(G: FrozenRSMap, x, info, d):
    """The RS training objective from its derived functional (§10.7) and the replicon (§10.8) with its error;
    ``(free_energy, replicon, replicon_error, evaluations)`` (NaN replicon where it cannot be computed)."""
    mod = next(iter(G.kern.modules.values()))
    hats_x = {k: float(v) for k, v in info["hats"].items()}
    hat_vals = [hats_x[k] for k in ("m_hat_k", "q_hat_k", "V_hat_k", "m_hat_v", "q_hat_v", "V_hat_v")]
    if isinstance(G.lam, Ridge):
        (free_energy,) = np.atleast_1d(mod.rs_energy_ridges(*x, *hat_vals, *ridges(G.lam), G.alpha,
                                                            d["train_half_sq"], d["gg_k"], d["gg_v"]))
    else:
        (free_energy,) = np.atleast_1d(mod.rs_energy(*x, *hat_vals, G.lam, G.alpha, d["train_half_sq"], d["gg_k"],
                                                     d["gg_v"]))
    try:
        replicon, replicon_err, _ = rs_replicon(G.kern, G.rules, x, G.alpha, G.lam, G.delta, hats_x,
                                                offsets=[d_["offset"] for d_ in info["diags"]])
        return float(free_energy), replicon, replicon_err, 1
    except (np.linalg.LinAlgError, ValueError, ZeroDivisionError, ConvergenceError):
        return float(free_energy), float("nan"), float("nan"), 0


# ---------------------------------------------------------------------------------------------
# the solver
# ---------------------------------------------------------------------------------------------

def rs_fixed_point(kern: RSKernels, rules, alpha: float, lam: float, delta: float, *, x0=None, warm=None,
                   model="spiked", nu=2.0, options: RSOptions | None = None, progress=None,
                   **overrides) -> RSFixedPoint:
    r"""The RS fixed point at (α, λ, Δ) on the frozen rule ``rules`` (see :func:`make_rule`).

    Parameters
    ----------
    kern : RSKernels
        From :func:`compile_rs_kernels` (``attnlimits.verify.slr.replica.rs_kernels`` builds it from a name).
    rules : list of RSRule
        The frozen integration rule (one per length of the length law).
    alpha, lam, delta : float
        Sample ratio α = N/D > 0, ridge λ > 0, label noise Δ ≥ 0.
    x0 : array-like, optional
        Start (m_k, q_k, V_k, m_v, q_v, V_v); default :func:`informed_start` of ``model``, ``nu``.
        A warm start from a neighbouring (α, λ) point is continuation.
    warm : RSFixedPoint, optional
        A neighbouring fixed point solved on the **same** rule (continuation; ``rs_learning_curve``
        and ``rs_tune_lambda`` pass the previous one): ``x0`` defaults to its point, its Jacobian
        starts the chord steps and its prox selection (``warm.anchor``) anchors the first piece-walk
        round, so neither the pilot nor a first multistart map is needed.  Where the frozen map has a
        fixed point the answer is the same (every candidate is still checked on the map itself; only
        the path changes).  Where the walk stalls it is retried once from the damped point; if the best
        point is then within ``accept_noise`` of the noise it is returned as ``rough_map`` without the
        regular path, so on a rough map a warm and a cold solve may end at different points, each
        within its (residual-inflated) error bar.  Ignored when its anchor does not fit the rule, and
        the regular path taken from its point when the predictor's step exceeds ``warm_reach``
        (relative, ∞-norm; measured along the benchmark's α grid, ratio 1.4: 0.3–1.0; α 20 → 4: 7.4).
    model, nu : str, float
        The data model and its ν (the informed start's scale).
    options : RSOptions, optional
        The solver's options (see :class:`RSOptions`); keyword arguments ``**overrides`` replace its fields
        (``rs_fixed_point(..., tol=1e-10, form="jacobian")``).
    progress : callable, optional
        Receives one line per solved point.

    Returns
    -------
    RSFixedPoint
        Order parameters, conjugates, E_test and training loss with standard errors (replicate
        spread through the delta method), stability (spectral radius of ∂G/∂x), PD-failure and
        multi-minimum fractions, residual, iterations, method and timings.
    """
    _check_point(alpha, lam, delta)
    o = resolve_options(RSOptions, options, overrides)
    t_start = time.perf_counter()
    anchor0 = _warm_anchor(warm, rules)
    if warm is not None and x0 is None:
        x0 = np.array([warm.values[k] for k in UNKNOWNS])
    x0 = informed_start(model, nu) if x0 is None else np.asarray(x0, float)
    if anchor0 is not None and warm.jacobian is not None and warm.averages is not None:
        x0, carries = _predict(kern, warm, x0, alpha, lam, o)
        if not carries:
            anchor0 = None
    G = FrozenRSMap(kern, rules, alpha, lam, delta, form=o.form, tol_noise=o.tol_noise)
    s = _Solve(G, o, x0, model, nu, warm=warm, anchor0=anchor0, x_start=x0)
    params = {"alpha": alpha, "lam": lam, "delta": delta}
    try:
        for stage in STAGES:
            stage(s)
    except np.linalg.LinAlgError as exc:
        raise ConvergenceError(SYSTEM, params, float("nan"), f"linear algebra failed ({exc})",
                               "a larger λ, another start (x0), or more integration points") from None
    flags = _acceptance_flags(s, params)
    x, res = s.x, s.res
    gx, info, fresh = G.at(x)
    s.evals += fresh
    av = info["averages"]  # (R, q)
    J, Jav, n_jac = _jacobian(s, x, gx, info)
    s.evals += n_jac
    eig = np.linalg.eigvals(J)
    stability = float(np.max(np.abs(eig)))
    E, tl = _observables(G, x, av.mean(axis=0))
    errs = {k: 0.0 for k in UNKNOWNS}
    E_err = tl_err = obj_err = 0.0
    if o.compute_error and G.R > 1:
        errs, E_err, tl_err, obj_err, more = _error_bars(G, x, gx, av, J, Jav, E, tl)
        flags += more
    d = dict(zip(NAMES, av.mean(axis=0)))
    pd_fail = float(d["pd_fail"])
    if pd_fail > 0.01:
        flags.append("pd_fail_above_1pct")
    if stability >= 1:
        flags.append("unstable")
    free_energy, replicon, replicon_err, n_rep = _energy_and_replicon(G, x, info, d)
    s.evals += n_rep
    phase = replicon_phase(replicon, replicon_err)
    if phase == "rsb":
        flags.append("rsb")
    elif phase == "uncertain":
        flags.append("rsb_uncertain")
    diags = info["diags"]
    seconds = time.perf_counter() - t_start
    method = "+".join(s.methods)
    if progress is not None:
        progress(f"RS alpha={alpha:g} lam={lam:g}: E_test={E:.5f} ± {E_err:.1e} ({method}, "
                 f"{s.evals} maps, {seconds:.2f}s)")
    objective = tl + ridge_term(lam, x[1], x[4], alpha)
    return RSFixedPoint(
        values=dict(zip(UNKNOWNS, map(float, x))), errors=errs, E_test=E, E_test_error=E_err, training_loss=tl,
        training_loss_error=tl_err, training_objective=objective,
        hats={k: float(v) for k, v in info["hats"].items()}, stability=stability, pd_fail_fraction=pd_fail,
        multi_minima_fraction=float(np.mean([dg["multi_minima_fraction"] for dg in diags])),
        ambiguous_fraction=float(np.mean([dg["ambiguous_fraction"] for dg in diags])), residual=res,
        iterations=s.iters, evaluations=s.evals, method=method, rule=rules[0].method, seconds=seconds,
        prox_seconds=G.timing.get("prox", 0.0), alpha=float(alpha), lam=float(lam), delta=float(delta),
        flags=tuple(flags), free_energy=free_energy, training_objective_error=obj_err,
        lam_v=ridges(lam)[1] if isinstance(lam, Ridge) else None,
        stability_damped=float(np.max(eig.real)), replicon=replicon, replicon_error=replicon_err, jacobian=J,
        anchor=[d_["offset"] for d_ in diags], averages=av.mean(axis=0))
