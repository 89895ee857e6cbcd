"""What ``attnlimits show ridge`` prints: the fixed point and the test error, from the derivation."""
from __future__ import annotations


def system_formula():
    from attnlimits.symbolic.render import system_formula as render

    from . import derivation

    formula = render(derivation.system(), title="Marchenko–Pastur Stieltjes transform at z = −λ and the test error")
    formula.section = "Hastie et al. (2022) Thm. 5"
    return formula
