r"""Replica-symmetric fixed point of ridge ERM for single-location regression (docs/slr.md §10), generated.

The equations come from :mod:`attnlimits.derivations.slr.replica` as generated kernels (this module never
imports ``derivations``): the caller passes, per sequence length, the dict of
:class:`attnlimits.symbolic.codegen.Kernel` objects returned by ``attnlimits.derivations.slr.replica.replica_kernels``;
:func:`compile_rs_kernels` prints and loads them.  ``attnlimits.verify.slr.replica`` has the wrappers that
take activation names.

Method (§10.6, with the two qualifications listed there)
--------------------------------------------------------
- **Frozen rule.** The channel expectations run over one common-random-number sample of
  :math:`(\varepsilon^*,\chi^*,z^*,\xi,\xi',\xi_0)`: ``replicates`` independent scrambled Sobol
  blocks of ``points`` points each in dimension :math:`4L+1` (+1 for the location draw on max-SLR
  at finite ν).  Tensor Gauss–Hermite is not used: the smallest channel integral is
  5-dimensional (:math:`L=2`) and its integrand is only piecewise smooth (prox minima switching),
  where Gauss–Hermite loses its rate.  The spread of the replicates is the error estimate.
- **Prox.** Per sample, the reduced objective :math:`F(\chi)` (§10.3) is minimised from the
  multistart of §10.6 (:math:`\omega^\chi` and :math:`\omega^\chi+t\sqrt{V_k}e_\ell`,
  :math:`t\in\{\pm2,\pm5,\pm10\}`) by a safeguarded Newton method (Newton step when it is a descent
  direction, else a scaled gradient step; steps clipped to length 1; backtracking until
  :math:`F` decreases), vectorised over samples × starts, keeping the lowest :math:`F`.  The starts
  are recomputed from the cavity fields at every call — **no warm start across outer
  iterations** — so the frozen map is a deterministic function of the order parameters.  A start
  whose iterate meets another start's of the same sample (within 1e-4, Hessian positive definite)
  is merged into it, which saves about half the Newton work and changes no minimum.
  Affine (linear) activations use the exact prox: all real roots of the residual polynomial,
  lowest objective kept.  At the solution :math:`\mathcal V^{-1}+H\succ0` is checked and the failing
  fraction reported; the fraction of samples whose best two starts end in different minima within
  ``1e-6`` of each other in :math:`F` (ambiguous selection) is reported too.
- **Outer fixed point.**  :math:`x=(m_k,q_k,V_k,m_v,q_v,V_v)\mapsto` channel :math:`\mapsto`
  conjugates :math:`\mapsto` prior.  Ladder: damped iteration then Anderson on one replicate (to
  ``coarse_tol``); Anderson on the full rule down to ``walk_at`` (1e-3); then the **piece walk**:
  the frozen map is smooth except where a sample's selected prox minimum switches, so Newton
  (finite-difference Jacobian, chord steps) runs on the *selection-frozen surrogate* (each sample's
  prox started only from the minimum selected at the current point — smooth, and equal to the
  frozen map on that piece; cheap, no screening) and every candidate is checked on the frozen map
  itself, until its residual is below ``tol``.  If that stalls, the slower damped → Anderson →
  Newton ladder is retried from the best point.  Converged when :math:`\|G(x)-x\|_\infty\le`
  ``tol`` (default :math:`10^{-9}`, relative, far below the integration error).  Failure raises
  :class:`attnlimits.numeric.ConvergenceError`.
- **Error and stability.** The Jacobian :math:`J=\partial G/\partial x` at the solution gives the
  stability (spectral radius) and the replicate error by the delta method:
  :math:`\delta x_r=(I-J)^{-1}(G_r(x^*)-x^*)`; an observable of replicate r is evaluated at
  :math:`x_r=x^*+\delta x_r` with that replicate's channel averages carried to :math:`x_r` to first
  order (:math:`\partial\bar a/\partial x` from the same finite differences as :math:`J`); the
  standard error of every reported quantity is the replicate standard deviation over :math:`\sqrt R`
  (checked against the per-replicate nonlinear fixed points, ``tests/numeric/test_replica_error.py``).
  J is taken by finite differences of the selection-frozen surrogate anchored at the solution
  (equal to the frozen map's on its piece), whose prox is then one Newton step from the anchored
  minima (the implicit-function linearisation: more accurate than differencing a converged prox, and
  a seven-evaluation Jacobian costs about half a multistart map at 4 × 8192).

Cost: one map evaluation is one vectorised prox over ``replicates × points`` samples (about 90 % of
the time); a fixed point takes two multistart maps and about ten cheaper surrogate evaluations along a
curve (softmax, spiked, L = 2, on one CPU core: 0.33–0.38 s at 4 × 1024 points from the informed start,
error included; 0.24 s per point along a learning curve; 0.7–1 s per smooth point at 4 × 8192).
See ``benchmarks/bench_slr_replica.py``.

Floors, bottom up (each imports only those below it): :mod:`.rule` (kernels, frozen rule, unknowns) →
:mod:`.prox` (the per-sample prox) → :mod:`.map` (the frozen map, :class:`FrozenRSMap`) → :mod:`.walk` (ladder,
piece walk, Jacobians) → :mod:`.fixed_point` (:class:`RSOptions`, the stages, :class:`RSFixedPoint`) →
:mod:`.curves` (continuation, branches, λ tuning).
"""
from __future__ import annotations

from .curves import (LAMBDA_LADDER, rs_branch_search, rs_branches, rs_learning_curve, rs_select_equilibrium,
                     rs_tune_lambda)
from .fixed_point import RSFixedPoint, RSOptions, rs_fixed_point
from .map import FrozenRSMap, rs_map, rs_replicon
from .rule import UNKNOWNS, Ridge, RSKernels, RSRule, compile_rs_kernels, informed_start, make_rule, small_overlap_start

__all__ = [
                     "LAMBDA_LADDER",
                     "UNKNOWNS",
                     "FrozenRSMap",
                     "RSFixedPoint",
                     "RSKernels",
                     "RSOptions",
                     "Ridge",
                     "RSRule",
                     "compile_rs_kernels",
                     "informed_start",
                     "make_rule",
                     "rs_branch_search",
                     "rs_branches",
                     "rs_fixed_point",
                     "rs_learning_curve",
                     "rs_map",
                     "rs_replicon",
                     "rs_select_equilibrium",
                     "rs_tune_lambda",
                     "small_overlap_start",
]
