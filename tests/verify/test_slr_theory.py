"""The one-object road to the SLR population and Bayes numbers (attnlimits.verify.slr.theory.SLRTheory)."""
import sys
from collections import Counter

import pytest

from attnlimits.numeric.slr import bayes_risk as B
from attnlimits.numeric.slr import population as P
from attnlimits.symbolic.result import InputError
from attnlimits.verify.slr.problem import slr_problem
from attnlimits.verify.slr.theory import SLRTheory, kernels, theory_of


def _count_calls(codes, fn):
    """Run ``fn`` and count the calls of the given code objects (a profile hook, so aliases count too)."""
    seen = Counter()

    def hook(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            seen[codes[frame.f_code]] += 1

    sys.setprofile(hook)
    try:
        out = fn()
    finally:
        sys.setprofile(None)
    return seen, out


def test_population_and_bayes_resolve_the_activation_once_per_theory():
    """Building an SLRTheory turns the problem's activation into its kernels once; no method resolves it again."""
    from attnlimits.derivations.slr import kernels as K

    codes = {K.activation_kernels.__code__: "activation kernels"}
    problem = slr_problem("spiked", 2, 3, activation="linear_uncentred")
    built, th = _count_calls(codes, lambda: theory_of(problem))
    assert built == Counter({"activation kernels": 1}), built

    def use():
        th.optimal_population_risk()
        th.population_risk(0.5, qmc_points=2 ** 8, replicates=2)
        th.population_AB(0.5, qmc_points=2 ** 8, replicates=2)
        th.numeric_activation()
        th.bayes_risk()
        th.bayes_risk_varlen()

    used, _ = _count_calls(codes, use)
    assert used == Counter(), used


def test_theory_numbers_equal_the_numeric_functions():
    """Each method is the numeric function with the derived kernels: identical numbers (exact equality)."""
    problem = slr_problem("spiked", 2, 3, activation="linear_uncentred")
    th = SLRTheory(problem)
    ker = kernels()
    setting = P.make_setting("spiked", 2, 3, kernels=ker)
    assert th.setting == setting
    assert th.optimal_population_risk().risk == P.optimal_population_risk(th.activation_kernels, setting).risk
    assert th.population_risk(0.5, qmc_points=2 ** 8, replicates=2) == P.population_risk(
        th.activation_kernels, setting, 0.5, qmc_points=2 ** 8, replicates=2)
    assert th.bayes_risk().value == B.bayes_risk("spiked", 2.0, 3, kernels=ker).value
    law = SLRTheory(slr_problem("max", 1, [2, 3]))
    assert law.bayes_risk_varlen().value == B.bayes_risk_varlen("max", 1.0, {2: 0.5, 3: 0.5}, kernels=ker).value
    assert SLRTheory(slr_problem("max", 1, 2)).max_stein_mean() == B.max_stein_mean(1.0, 2, kernels=ker)


def test_theory_bad_use_is_one_line():
    no_act = theory_of(slr_problem("spiked", 2, 3))
    with pytest.raises(InputError, match="needs an activation"):
        no_act.optimal_population_risk()
    with pytest.raises(InputError, match="one length"):
        theory_of(slr_problem("spiked", 2, [2, 3])).bayes_risk()
