"""What ``attnlimits show slr`` prints: the systems, observables and closed forms the SLR solvers use.

Each :class:`~attnlimits.symbolic.result.Item` names a builder here; a builder calls the derivation
(:mod:`~attnlimits.derivations.slr.replica`, :mod:`~attnlimits.derivations.slr.population`,
:mod:`~attnlimits.derivations.slr.bayes_optimal`, :mod:`~attnlimits.derivations.slr.predecessor`) and wraps
what it returns in a :class:`~attnlimits.symbolic.render.Formula` — no formula is retyped.  ``L``,
``model`` and ``variant`` specialise where the derivation takes them.

Reading this module imports no SymPy (the builders import it when called).
"""
from attnlimits.symbolic.result import Item

__all__ = ["ITEMS", "NOTATION"]

from attnlimits.derivations.slr.notation import NOTATION  # noqa: E402  (the result's notation)

_M = "attnlimits.derivations.slr.items:"
_DOC = "docs/slr.md"


def _rows(obj, name="value", names=()):
    """(lhs, rhs) rows of what a derivation function returns: a mapping, an (inputs, expr) pair, a
    pair of expressions, a list or a single expression (non-SymPy values are left out)."""
    import sympy as sp

    def ok(v):
        return isinstance(v, (sp.Basic, sp.MatrixBase)) or (isinstance(v, (int, float)) and not isinstance(v, bool))

    if isinstance(obj, dict):
        return [(k, v) for k, v in obj.items() if ok(v)]
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], (tuple, list)) and not ok(obj[0]):
        inputs, out = obj
        return _rows(out, name, names)
    if isinstance(obj, (tuple, list)):
        if names:
            return [(n, v) for n, v in zip(names, obj) if ok(v)]
        return [(f"{name}_{i}", v) for i, v in enumerate(obj) if ok(v)]
    return [(name, obj)]


def _inputs(obj):
    import sympy as sp

    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], (tuple, list)):
        return tuple(s for s in obj[0] if isinstance(s, sp.Symbol))
    return ()


def _formula(title, obj, *, kind, name, section, lhs="value", notes=(), names=(), unknowns=()):
    import sympy as sp
    from attnlimits.symbolic.render import Formula

    rows = _rows(obj, lhs, names)
    symbols = set()
    for _, v in rows:
        if isinstance(v, sp.Basic):
            symbols |= v.free_symbols
    params = tuple(sorted(symbols, key=str))
    by_name = {str(s): s for s in (*_inputs(obj), *params)}
    unknowns = tuple(by_name[u] for u in unknowns)
    parameters = tuple(p for p in (_inputs(obj) or params) if p not in unknowns)
    return Formula(title, rows, unknowns=unknowns, parameters=parameters, section=section, kind=kind,
                   name=name, notes=tuple(notes))


def rs_prior_update(L=None, model=None, variant=None):
    from . import replica as R

    return _formula("RS prior (ridge) part: m, q, V of one block from its conjugates", R.prior_update(),
                    kind="system", name="rs_prior_update", section=f"{_DOC} §10.2",
                    unknowns=("m_hat", "q_hat", "V_hat"))


def rs_conjugate_update(L=None, model=None, variant=None):
    from . import replica as R

    return _formula("RS conjugate update from the channel averages (Stein form)", R.conjugate_update("stein"),
                    kind="system", name="rs_conjugate_update", section=f"{_DOC} §10.4", lhs="hat",
                    unknowns=("gg", "dg", "gx", "gxi", "m"))


def rs_channel(L=2, model=None, variant=None):
    from . import replica as R

    L = int(L or 2)
    return _formula(f"RS channel integrands per Monte Carlo sample, L = {L}", R.channel_integrands(L),
                    kind="system", name="rs_channel", section=f"{_DOC} §10.3", lhs="integrand",
                    unknowns=[f"{w}_{i}" for w in ("wchi", "wz") for i in range(1, L + 1)])


def rs_test_error(L=None, model=None, variant=None):
    from . import replica as R

    return _formula("RS test error (excess) from the order parameters", R.test_error(), kind="observable",
                    name="rs_test_error", section=f"{_DOC} §10.5", lhs="E_test")


def rs_energy(L=None, model=None, variant=None):
    from . import replica as R

    return _formula("RS training objective per sample (zero-temperature free energy over alpha)", R.rs_energy(),
                    kind="observable", name="rs_energy", section=f"{_DOC} §10.7", lhs="e")


def rs_replicon(L=None, model=None, variant=None):
    from . import replica as R

    return _formula("replicon of the ridge prior part (RS stable iff the replicon < 1)", R.replicon_prior(),
                    kind="observable", name="rs_replicon", section=f"{_DOC} §10.8", lhs="replicon_prior")


def rs_joint_prox(L=2, model=None, variant=None, activation="softmax", loss="huber:1"):
    import sympy as sp

    from . import replica as R
    from .losses import parse_loss, residual

    L = int(L or 2)
    lo = parse_loss(loss)
    x, wx, wz, Phi, z_hat = R.joint_objective(activation, L, None, lo.name)
    r = x[L]
    rho_r = lo.expr.subs(residual, r)
    # Φ written with ρ as a named intermediate (``--substitute`` inlines it)
    rows = {"rho": rho_r, "Phi": sp.expand(Phi - rho_r, deep=False) + sp.Symbol("rho", real=True)}
    rows.update({f"zh_{i + 1}": sp.simplify(z) for i, z in enumerate(z_hat)})
    return _formula(f"RS prox for the loss {lo.name}, {activation}, L = {L}: joint in the key field and the residual",
                    rows, kind="observable", name="rs_joint_prox", section=f"{_DOC} §10.3a", lhs="Phi",
                    notes=("the value fields are eliminated exactly for any loss; (χ̂, r̂) = argmin Φ",))


def risk_on_manifold(L=None, model=None, variant=None):
    from . import population as P

    return _formula("population risk on the manifold of the key-value overlaps", P.risk_on_manifold(),
                    kind="closed_form", name="risk_on_manifold", section=f"{_DOC} §5", lhs="risk")


def optimal_value_risk(L=None, model=None, variant=None):
    from . import population as P

    return _formula("risk at the optimal value direction (A, B form)", P.optimal_value_risk(),
                    kind="closed_form", name="optimal_value_risk", section=f"{_DOC} §5",
                    names=("m_v_star", "risk_star"))


def linear_closed_form(L=None, model="spiked", variant="linear_uncentred"):
    from . import population as P

    variant = variant or "linear_uncentred"
    model = model or "spiked"
    return _formula(f"closed-form population risk of {variant} ({model})", P.linear_closed_form(variant, model),
                    kind="closed_form", name="linear_closed_form", section=f"{_DOC} §8")


def bo_prior_update(L=None, model=None, variant=None):
    from . import bayes_optimal as B

    return _formula("BO state evolution: prior update", B.prior_update(), kind="system", name="bo_prior_update",
                    section=f"{_DOC} §11", lhs="q", unknowns=("qhat",))


def bo_stationarity(L=2, model=None, variant=None):
    from . import bayes_optimal as B

    L = int(L or 2)
    return _formula(f"BO state evolution: channel stationarity (integration by parts), L = {L}",
                    B.stationarity(L), kind="system", name="bo_stationarity", section=f"{_DOC} §11",
                    names=("I_k", "I_v"), unknowns=("q_k", "q_v"))


def bo_test_error(L=None, model=None, variant=None):
    from . import bayes_optimal as B

    return _formula("Bayes-optimal test error from the overlaps", B.test_error(), kind="observable",
                    name="bo_test_error", section=f"{_DOC} §11", names=("E_BO", "nu_B"))


def bo_free_entropy(L=None, model=None, variant=None):
    from . import bayes_optimal as B

    return _formula("RS free entropy of the Bayes-optimal problem (branch selection)", B.rs_free_entropy(),
                    kind="observable", name="bo_free_entropy", section=f"{_DOC} §11", lhs="phi")


def predecessor_risk(L=None, model=None, variant=None):
    from . import predecessor as Q

    return _formula("predecessor paper: excess risk on the manifold", Q.manifold_excess_risk(),
                    kind="closed_form", name="predecessor_risk", section=f"{_DOC} §13", lhs="excess_risk")


_L = ("L",)

ITEMS = (
    Item("rs_prior_update", "system", "RS prior part: m, q, V from the conjugates", _M + "rs_prior_update",
         f"{_DOC} §10.2"),
    Item("rs_channel", "system", "RS channel integrands per sample", _M + "rs_channel", f"{_DOC} §10.3", _L,
         (("L", 2),)),
    Item("rs_conjugate_update", "system", "RS conjugate update (Stein form)", _M + "rs_conjugate_update",
         f"{_DOC} §10.4"),
    Item("rs_test_error", "observable", "RS test error", _M + "rs_test_error", f"{_DOC} §10.5"),
    Item("rs_energy", "observable", "RS training objective (free energy)", _M + "rs_energy", f"{_DOC} §10.7"),
    Item("rs_replicon", "observable", "replicon of the prior part", _M + "rs_replicon", f"{_DOC} §10.8"),
    Item("rs_joint_prox", "observable", "RS prox for any per-sample loss (joint in χ and the residual)",
         _M + "rs_joint_prox", f"{_DOC} §10.3a", ("L", "activation", "loss"),
         (("L", 2), ("activation", "softmax"), ("loss", "huber:1"))),
    Item("risk_on_manifold", "closed_form", "population risk on the overlap manifold", _M + "risk_on_manifold",
         f"{_DOC} §5"),
    Item("optimal_value_risk", "closed_form", "risk at the optimal value direction", _M + "optimal_value_risk",
         f"{_DOC} §5"),
    Item("linear_closed_form", "closed_form", "closed-form risk of a linear variant", _M + "linear_closed_form",
         f"{_DOC} §8", ("model", "variant"), (("model", "spiked"), ("variant", "linear_uncentred"))),
    Item("bo_prior_update", "system", "BO state evolution: prior update", _M + "bo_prior_update", f"{_DOC} §11"),
    Item("bo_stationarity", "system", "BO state evolution: channel stationarity", _M + "bo_stationarity",
         f"{_DOC} §11", _L, (("L", 2),), slow=True),
    Item("bo_test_error", "observable", "Bayes-optimal test error", _M + "bo_test_error", f"{_DOC} §11"),
    Item("bo_free_entropy", "observable", "RS free entropy (BO)", _M + "bo_free_entropy", f"{_DOC} §11"),
    Item("predecessor_risk", "closed_form", "predecessor: excess risk on the manifold", _M + "predecessor_risk",
         f"{_DOC} §13"),
)
