"""What ``attnlimits show rmt`` prints: every system, observable and closed form the solver uses.

Each :class:`~attnlimits.symbolic.result.Item` names a builder here; a builder calls the derivation
(:mod:`attnlimits.derivations.attention_rmt.equations`) and wraps what it returns in a
:class:`~attnlimits.symbolic.render.Formula` — no formula is retyped.  ``activation`` specialises
the equations to an activation: its Hermite data ``a₁``, ``ν`` (exact when SymPy integrates,
otherwise 15-digit numbers) replace the symbols, as the generated solver receives them.

Reading this module imports no SymPy (the builders import it when called).
"""
from attnlimits.symbolic.result import Item

__all__ = ["ITEMS", "NOTATION"]

from attnlimits.derivations.attention_rmt.notation import NOTATION  # noqa: E402  (the result's notation)

_M = "attnlimits.derivations.attention_rmt.items:"
_DOC = "docs/attention_rmt.md"


def _R():
    from attnlimits.derivations.attention_rmt import equations

    return equations


def hermite_data(activation, dps: int = 30):
    """``{a1: …, nu: …}`` of the centred activation (exact where available) and the HermiteData."""
    import mpmath
    import sympy as sp

    from attnlimits.symbolic.hermite import hermite_coefficients

    R = _R()
    h = hermite_coefficients(activation, dps=dps)
    exact = dict(h.exact or {})
    values = {}
    for sym, key in ((R.a1, "a1"), (R.nu, "nu")):
        v = exact.get(key)
        values[sym] = sp.sympify(v) if v is not None else sp.Float(mpmath.nstr(getattr(h, key), 15), 15)
    return values, h


def _specialise(formula, activation):
    if not activation:
        return formula
    values, h = hermite_data(activation)
    f = formula.xreplace(values)
    f.notes = tuple(f.notes) + (f"activation {activation}: centred f(t) = {h.centred}; "
                                + ", ".join(f"{k} = {v}" for k, v in values.items()) + f" ({h.method})",)
    f.parameters = tuple(p for p in f.parameters if p not in values)
    return f


def bulk_system(activation=None):
    from attnlimits.symbolic.render import system_formula

    R = _R()
    f = system_formula(R.bulk_system, title="bulk fixed point (A11, A12, A22) and the traces q0..q5",
                       section=f"{_DOC} §5", name="bulk_system")
    f.system = R.bulk_system
    return _specialise(f, activation)


def traces(activation=None):
    from attnlimits.symbolic.render import Formula

    R = _R()
    f = Formula("normalised traces q0..q5 of the bulk equivalent (inputs of the Woodbury stage)",
                list(R.traces.items()), unknowns=R.bulk_system.unknowns, parameters=R.bulk_system.parameters,
                section=f"{_DOC} §5", kind="observable", name="traces")
    return _specialise(f, activation)


def ybar(activation=None):
    from attnlimits.symbolic.render import Formula

    R = _R()
    f = Formula("ybar by Woodbury over the reduced geometry (numerically stable form)",
                [("ybar", R.ybar)], unknowns=R.q, parameters=(R.c, R.a1, R.m_vec, R.Gamma_mat, R.Omega_mat),
                section=f"{_DOC} §6", kind="observable", name="ybar",
                source=R.ybar_expression.__doc__.strip().splitlines()[0])
    return _specialise(f, activation)


def ybar_boxed(activation=None):
    from attnlimits.symbolic.render import Formula

    R = _R()
    f = Formula("ybar, the boxed form of §6 (equal to ybar; ill-conditioned for c < 1, small gamma)",
                [("ybar", R.ybar_boxed_expression())], unknowns=R.q,
                parameters=(R.c, R.a1, R.m_vec, R.Gamma_mat, R.Omega_mat),
                section=f"{_DOC} §6", kind="closed_form", name="ybar_boxed")
    return _specialise(f, activation)


def error_attention(activation=None):
    import sympy as sp

    from attnlimits.symbolic.render import Formula

    R = _R()
    rate = sp.Symbol("ybar_rate")
    f = Formula("interpolation error of attention E = -gamma^2 dybar/dgamma",
                [("E_attention", R.error_attention.xreplace({R.ybar_rate: rate}))],
                unknowns=(rate,), parameters=(R.gamma,), section=f"{_DOC} §3, §6", kind="observable",
                name="error_attention",
                notes=("ybar_rate = dybar/dgamma: the chain rule through the traces, "
                       "directional_derivative(ybar, {}, dict(zip(q, dq))), with dq/dgamma from the implicit "
                       "derivative of the bulk system (its expanded form is long: see item ybar and --jacobian "
                       "of bulk_system)",))
    return _specialise(f, activation)


def ridge(activation=None):
    """m̄ defined once: ȳ and E are written in m̄ and m̄′ = dm̄/dγ, as Proposition 2 writes them.

    The solver's closed forms (``ridge_ybar``, ``error_ridge``) are the derivation's; here the
    Stieltjes transform (and its γ-derivative, which SymPy took of it) are replaced by their symbols,
    and m̄′ is the implicit derivative of the quadratic that defines m̄.
    """
    import sympy as sp

    from attnlimits.symbolic.render import Formula

    R = _R()
    mbar, mbar_prime = R.ridge_mbar, sp.Symbol("mbar_prime")
    named = {sp.diff(R.ridge_stieltjes, R.gamma): mbar_prime}
    rows = [("mbar", R.ridge_stieltjes),
            ("mbar_prime", -sp.diff(R.ridge_stieltjes_quadratic, R.gamma)
             / sp.diff(R.ridge_stieltjes_quadratic, mbar)),
            ("ybar_ridge", R.ridge_ybar.xreplace(named).xreplace({R.ridge_stieltjes: mbar})),
            ("E_ridge", R.error_ridge.xreplace(named).xreplace({R.ridge_stieltjes: mbar}))]
    for name, rhs in rows[1:]:
        if rhs.has(sp.Piecewise):
            raise AssertionError(f"ridge item: {name} still holds the piecewise m̄ (the derivation changed form)")
    return Formula("ridge baseline (Proposition 2): Stieltjes transform, ybar and error", rows,
                   parameters=(R.c, R.gamma, R.snr), section=f"{_DOC} §7", kind="closed_form", name="ridge",
                   notes=("m̄′ is the implicit derivative of cγm̄² + (1 − c + γ)m̄ − 1 = 0; "
                          "--substitute writes every row in c, γ, SNR alone",))


def noise_kernel_system(activation=None):
    import sympy as sp

    from attnlimits.symbolic.render import system_formula

    R = _R()
    f = system_formula(R.noise_kernel_system, title="noise-kernel Stieltjes transform as a real fixed point",
                       section=f"{_DOC} §4.2", name="noise_kernel_system")
    f.equations = [(sp.Symbol("m_z"), R.noise_kernel_stieltjes_update)] + list(f.equations[:2])
    f.system = R.noise_kernel_system
    return _specialise(f, activation)


def large_gamma(activation=None):
    from attnlimits.symbolic.render import Formula

    R = _R()
    f = Formula("large-gamma coefficient M1 (1 - E = 2 M1/gamma + O(gamma^-2)) and the crossover c*",
                [("M_1", R.large_gamma_m1()), ("M_1^RR", R.c), ("c_star", R.crossover_c_star())],
                parameters=(R.c, R.a1, R.nu, R.kappa), section=f"{_DOC} §8 E", kind="closed_form",
                name="large_gamma", source="derived from the MP moments by iterating the bulk map on ε = 1/γ series")
    return _specialise(f, activation)


def hermite(activation="tanh"):
    import mpmath
    import sympy as sp

    from attnlimits.symbolic.hermite import hermite_coefficients
    from attnlimits.symbolic.render import Formula

    R = _R()
    act = activation or "tanh"
    h = hermite_coefficients(act, dps=30)
    exact = dict(h.exact or {})
    rows = [("f", h.centred)]
    for key in ("a0", "a1", "a2", "nu", "b2"):
        v = exact.get(key)
        rows.append((key, sp.sympify(v) if v is not None else sp.Float(mpmath.nstr(getattr(h, key), 15), 15)))
    return Formula(f"Hermite data of the activation {act} (centred: a0 removed)", rows, parameters=(R.t,),
                   section=f"{_DOC} §4.1", kind="closed_form", name="hermite",
                   notes=(f"method: {h.method}; Parseval residual {float(h.parseval_residual):.1e}",))


def diagonal_constant(activation="tanh"):
    import sympy as sp

    from attnlimits.symbolic.hermite import hermite_coefficients
    from attnlimits.symbolic.hermite import t as xi
    from attnlimits.symbolic.render import Formula

    R = _R()
    act = activation or "tanh"
    h = hermite_coefficients(act, dps=30)
    p = sp.Symbol("p", positive=True, integer=True)
    return Formula(f"kept-diagonal constant kappa of {act}: leading form f(sqrt(p))/sqrt(p)",
                   [("kappa_leading", R.diagonal_constant_leading(h.centred, xi, p))], parameters=(p,),
                   section=f"{_DOC} §4.3", kind="closed_form", name="diagonal_constant",
                   notes=("the value used is E f(sqrt(p) + sqrt(2) xi)/sqrt(p) (diagonal_constant), "
                          "computed by the Gaussian-expectation engine",))


_ACT = ("activation",)

ITEMS = (
    Item("bulk_system", "system", "bulk fixed point for (A11, A12, A22), traces q0..q5", _M + "bulk_system",
         f"{_DOC} §5", _ACT),
    Item("noise_kernel_system", "system", "noise-kernel Stieltjes transform (claim V19)",
         _M + "noise_kernel_system", f"{_DOC} §4.2", _ACT),
    Item("traces", "observable", "normalised traces q0..q5", _M + "traces", f"{_DOC} §5", _ACT),
    Item("ybar", "observable", "ybar by Woodbury (stable form)", _M + "ybar", f"{_DOC} §6", _ACT),
    Item("error_attention", "observable", "E = -gamma^2 dybar/dgamma", _M + "error_attention", f"{_DOC} §3, §6",
         _ACT),
    Item("ybar_boxed", "closed_form", "ybar, boxed form of §6", _M + "ybar_boxed", f"{_DOC} §6", _ACT),
    Item("ridge", "closed_form", "ridge baseline: mbar, ybar, E_ridge", _M + "ridge", f"{_DOC} §7"),
    Item("large_gamma", "closed_form", "large-gamma M1 and the crossover c*", _M + "large_gamma", f"{_DOC} §8 E",
         _ACT, slow=True),
    Item("hermite", "closed_form", "Hermite data a0, a1, a2, nu, b2 of an activation", _M + "hermite",
         f"{_DOC} §4.1", _ACT, (("activation", "tanh"),)),
    Item("diagonal_constant", "closed_form", "kept-diagonal constant kappa (leading form)",
         _M + "diagonal_constant", f"{_DOC} §4.3", _ACT, (("activation", "tanh"),)),
)
