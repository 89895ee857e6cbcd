r"""The SLR numbers of a problem: :mod:`attnlimits.numeric.slr.population` and :mod:`attnlimits.numeric.slr.bayes_risk` with the derived kernels.

``numeric/`` evaluates generated kernels it is given and never imports a derivation; this module is where the
two meet.  :class:`SLRTheory` is the road every command, claim and benchmark takes: built once from an
:class:`attnlimits.numeric.slr.problem.SLRProblem` (:func:`theory_of`), it holds the kernel bundle
(:func:`attnlimits.derivations.slr.kernels.slr_kernels`), the numeric :class:`Setting` and the activation's
kernels (resolved once from ``problem.activation``), and its methods are the population and Bayes numbers of
that problem.  Functions of no SLR problem (:func:`expected_max_gaussian`, [M]'s
:func:`predecessor_manifold_risk`, ...) inject the kernels likewise.

>>> from attnlimits.verify.slr.problem import slr_problem
>>> round(theory_of(slr_problem("spiked", 1.0, 2)).bayes_risk().value, 5)
0.32494
>>> th = theory_of(slr_problem("spiked", 2, 3, activation="linear_uncentred"))
>>> th.optimal_population_risk().method.startswith("closed form")
True
"""
from __future__ import annotations

from functools import lru_cache

from attnlimits.numeric.slr import bayes_risk as _B
from attnlimits.numeric.slr import population as _P
from attnlimits.numeric.slr.bayes_risk import AccuracyWarning, BayesRisk  # noqa: F401
from attnlimits.numeric.slr.population import PopulationError, PopulationOptimum, Setting, SettingError  # noqa: F401

__all__ = [
    "SLRTheory", "theory_of",
    "kernels", "population_module", "expected_max_gaussian", "expected_max_gaussian_exact", "zeta_erf2_value",
    "predecessor_manifold_risk", "predecessor_prop3", "Setting", "SettingError", "PopulationError",
    "PopulationOptimum", "BayesRisk", "AccuracyWarning",
]


def kernels():
    """The SLR kernel bundle (:func:`attnlimits.derivations.slr.kernels.slr_kernels`)."""
    from attnlimits.derivations.slr.kernels import slr_kernels

    return slr_kernels()


@lru_cache(maxsize=1)
def population_module():
    """The generated population kernels (NumPy): optimal value, manifold risk, residual covariance, c_ν..."""
    return kernels()["population"].module("numpy")


def _act(act):
    """The activation's kernel bundle: names resolved by :func:`attnlimits.derivations.slr.activation`."""
    if hasattr(act, "module") and hasattr(act, "meta"):
        return act
    from attnlimits.derivations.slr.kernels import activation_kernels

    return activation_kernels(act)


def expected_max_gaussian(L: int, **kw):
    """:func:`attnlimits.numeric.slr.bayes_risk.expected_max_gaussian` with the SLR kernels."""
    return _B.expected_max_gaussian(L, kernels=kernels(), **kw)


def expected_max_gaussian_exact(L: int):
    r"""Closed form of :math:`M_L` (:func:`attnlimits.derivations.slr.bayes.expected_max_exact`), checked against
    the quadrature :func:`expected_max_gaussian` to 1e-12; ``None`` when unknown or on disagreement."""
    from attnlimits.derivations.slr.bayes import expected_max_exact

    res = expected_max_exact(L)
    if res is None or int(L) == 1:
        return res
    if abs(float(res) - expected_max_gaussian(int(L))) > 1e-12:
        return None
    return res


def zeta_erf2_value(t, s, **kw):
    """:func:`attnlimits.numeric.slr.bayes_risk.zeta_erf2_value` with the SLR kernels."""
    return _B.zeta_erf2_value(t, s, kernels=kernels(), **kw)


def predecessor_manifold_risk(d, L, gamma2, lam, kappa, nu_M, **kw):
    """:func:`attnlimits.numeric.slr.bayes_risk.predecessor_manifold_risk` with the SLR kernels."""
    return _B.predecessor_manifold_risk(d, L, gamma2, lam, kappa, nu_M, kernels=kernels(), **kw)


def predecessor_prop3(gamma2, eps, L):
    """:func:`attnlimits.numeric.slr.bayes_risk.predecessor_prop3` with the SLR kernels."""
    return _B.predecessor_prop3(gamma2, eps, L, kernels=kernels())


class SLRTheory:
    """The numbers of one :class:`attnlimits.numeric.slr.problem.SLRProblem`, with the derived kernels injected.

    Built once (:func:`theory_of`): ``kernels`` (the SLR bundle), ``setting`` (the numeric :class:`Setting` of
    the problem's model, ν and length law) and ``activation_kernels`` (the bundle of ``problem.activation``,
    resolved here once, ``None`` for a problem without an activation such as the Bayes risk).  The methods
    take the remaining numeric options (QMC sizes, overlaps, parameters) as
    :mod:`attnlimits.numeric.slr.population` and :mod:`attnlimits.numeric.slr.bayes_risk` do.
    """

    def __init__(self, problem):
        self.problem = problem
        self.kernels = kernels()
        self.setting = Setting(problem.model, problem.nu, tuple(problem.lengths.items), self.kernels)
        self.activation_kernels = None if problem.activation is None else _act(problem.activation)

    def __repr__(self) -> str:
        return f"SLRTheory({self.problem!r})"

    def _need_activation(self, what: str):
        if self.activation_kernels is None:
            from attnlimits.symbolic.result import InputError

            raise InputError(f"{what} needs an activation: build the problem with slr_problem(..., activation=NAME)")
        return self.activation_kernels

    def numeric_activation(self):
        """The generated NumPy activation of the problem (:func:`attnlimits.numeric.slr.population.numeric_activation`)."""
        return _P.numeric_activation(self._need_activation("numeric_activation"))

    def optimal_population_risk(self, **kw) -> PopulationOptimum:
        """:func:`attnlimits.numeric.slr.population.optimal_population_risk` of the problem."""
        return _P.optimal_population_risk(self._need_activation("optimal_population_risk"), self.setting, **kw)

    def population_AB(self, *args, **kw):
        """:func:`attnlimits.numeric.slr.population.population_AB` of the problem at the given parameters."""
        return _P.population_AB(self._need_activation("population_AB"), self.setting, *args, **kw)

    def population_risk(self, *args, **kw):
        """:func:`attnlimits.numeric.slr.population.population_risk` of the problem at the given parameters."""
        return _P.population_risk(self._need_activation("population_risk"), self.setting, *args, **kw)

    def population_risk_general(self, overlaps: dict, **kw):
        """:func:`attnlimits.numeric.slr.population.population_risk_general` of the problem at ``overlaps``."""
        return _P.population_risk_general(self._need_activation("population_risk_general"), self.setting, overlaps,
                                          **kw)

    def bayes_risk(self, **kw) -> BayesRisk:
        """The Bayes risk at the problem's single length (:func:`attnlimits.numeric.slr.bayes_risk.bayes_risk`);
        a length law is an :class:`InputError` (use :meth:`bayes_risk_varlen`)."""
        p = self.problem
        if p.lengths.variable:
            from attnlimits.symbolic.result import InputError

            raise InputError(f"bayes_risk needs one length, not the law {p.lengths.as_dict()}; use bayes_risk_varlen")
        return _B.bayes_risk(p.model, p.nu, int(p.lengths.lengths[0]), kernels=self.kernels, **kw)

    def bayes_risk_varlen(self, **kw) -> BayesRisk:
        """The P(L)-averaged Bayes risk of the problem's length law
        (:func:`attnlimits.numeric.slr.bayes_risk.bayes_risk_varlen`; one length is a law of one point)."""
        p = self.problem
        return _B.bayes_risk_varlen(p.model, p.nu, p.lengths.as_dict(), kernels=self.kernels, **kw)

    def max_stein_mean(self, **kw):
        """:func:`attnlimits.numeric.slr.bayes_risk.max_stein_mean` at the problem's ν and (single) length."""
        p = self.problem
        if p.lengths.variable:
            from attnlimits.symbolic.result import InputError

            raise InputError(f"max_stein_mean needs one length, not the law {p.lengths.as_dict()}")
        return _B.max_stein_mean(p.nu, int(p.lengths.lengths[0]), kernels=self.kernels, **kw)


def theory_of(problem) -> SLRTheory:
    """The :class:`SLRTheory` of an :class:`attnlimits.numeric.slr.problem.SLRProblem`."""
    return SLRTheory(problem)
