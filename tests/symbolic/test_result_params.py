"""List options keep formulas with commas whole (found by the nightly slr population family)."""
from attnlimits.symbolic.result import Param, split_top_level


def test_split_top_level_respects_brackets():
    assert split_top_level("tanh,Max(t, 0)") == ["tanh", "Max(t, 0)"]
    assert split_top_level("a,b") == ["a", "b"]
    assert split_top_level("Min(Max(t, 1), 2)") == ["Min(Max(t, 1), 2)"]
    assert split_top_level("") == [""]


def test_strs_option_keeps_a_formula_with_commas_whole():
    p = Param("activation", kind="strs", default="softmax", help="activations")
    assert p.parse("normalised:Max(t, 2),softmax") == ["normalised:Max(t, 2)", "softmax"]
