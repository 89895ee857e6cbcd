"""attnlimits.numeric.slr.problem: the length law reads every form a user types and refuses the rest in one line."""
import math

import pytest

from attnlimits.numeric.slr.problem import LengthLaw
from attnlimits.symbolic.result import InputError


@pytest.mark.parametrize("L,law", [(2, {2: 1.0}), ("3", {3: 1.0}), (4.0, {4: 1.0}), ([1, 2], {1: 0.5, 2: 0.5}),
                                   ("1,2,3", {1: 1 / 3, 2: 1 / 3, 3: 1 / 3}), (" 2, 4", {2: 0.5, 4: 0.5}),
                                   ({1: 0.25, 3: 0.75}, {1: 0.25, 3: 0.75})])
def test_length_law_forms(L, law):
    got = LengthLaw.parse(L).as_dict()
    assert got.keys() == law.keys() and all(math.isclose(got[k], law[k]) for k in law)


@pytest.mark.parametrize("L,msg", [(2.5, "positive integer"), ("two", "positive integer"), ("1,x", "positive integer"),
                                   (float("nan"), "positive integer"), ({2: "a"}, "must be a number"),
                                   ([2, 2], "repeated length"), ({1: 0.5, 2: 0.4}, "sum to"), (0, ">= 1")])
def test_length_law_refusals(L, msg):
    with pytest.raises(InputError, match=msg):
        LengthLaw.parse(L)
