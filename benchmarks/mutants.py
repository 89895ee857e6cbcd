r"""The catalogue of planted errors for the power benchmark (``benchmarks/bench_power.py``, ``docs/power.md``).

Each :class:`attnlimits.symbolic.mutation.Plant` is a small error of the kind a theory carries: a
coefficient off by 1–3 % inside a derived equation (the RMT deterministic-equivalent system, the SLR
replica, population and Bayes-optimal equations, Hermite coefficients), a term scaled on one side of
a swap, a factor in one region of the domain (c > 1, ν > 2, softmax only, max-SLR only), or an error
in one of two code paths that must agree (the closed-form linear path, the exported file, the mpmath
backend).  Plants replace one module attribute at run time (never a source file):

    import mutants                   # this folder on sys.path
    mutants.apply("rmt-ridge-c>1")   # for the rest of the process
    with mutants.planted("slr-bayes-nu>2"):
        ...                          # planted here, restored after

``claims`` and ``properties`` of a plant are the checks that bear on its target (what
``bench_power.py`` runs by default), chosen from the claims' documented subjects; the benchmark
measures whether they catch it.
"""
from __future__ import annotations

from attnlimits.symbolic.mutation import (
    Plant,
    map_return,
    map_system,
    scale_expr,
    scale_return,
    scale_value,
)
from attnlimits.symbolic.mutation import apply as _apply
from attnlimits.symbolic.mutation import planted as _planted

__all__ = ["PLANTS", "get", "apply", "planted"]

RMT = "attnlimits.derivations.attention_rmt.equations"
SLR_POP = "attnlimits.derivations.slr.population"
SLR_BAYES = "attnlimits.derivations.slr.bayes"
SLR_REPLICA = "attnlimits.derivations.slr.replica"
SLR_BO = "attnlimits.derivations.slr.bayes_optimal"
SLR_PRED = "attnlimits.derivations.slr.predecessor"
NUM_POP = "attnlimits.numeric.slr.population"
NUM_BAYES = "attnlimits.numeric.slr.bayes_risk"


# ------------------------------------------------------------------------------------------------
# small helpers (regions and SymPy edits)


def _arg(args, kwargs, i, name, default=None):
    if name in kwargs:
        return kwargs[name]
    return args[i] if len(args) > i else default


def _sym(module, name):
    import importlib

    return getattr(importlib.import_module(module), name)


def _rmt_symbols():
    return {k: _sym(RMT, k) for k in ("c", "nu", "a1", "snr", "gamma")}


def _xreplace_updates(mapping_of_symbols, which=None):
    """Updates with ``mapping_of_symbols()`` substituted (in the updates listed by ``which``, else all)."""
    def change(updates):
        mapping = mapping_of_symbols()
        return [u.xreplace(mapping) if which is None or i in which else u for i, u in enumerate(updates)]

    return change


def _scale_update(i, size, condition=None):
    def change(updates):
        out = list(updates)
        out[i] = scale_expr(size, None if condition is None else condition())(out[i])
        return out

    return change


def _rat(x):
    import sympy as sp

    return sp.nsimplify(x, rational=True)


def _scale_expr_fn(size, condition=None):
    """Transform of a function returning a SymPy expression: that expression times 1 + size."""
    return map_return(lambda r, a, k: scale_expr(size, None if condition is None else condition())(r))


def _scale_dict_key(key, size, where=None):
    return map_return(lambda r, a, k: scale_value(r, 1 + size, key), where=where)


def _scale_tuple_item(i, size):
    return map_return(lambda r, a, k: scale_value(r, 1 + size, i))


def _linear_B(size, where=None):
    """§8 linear closed forms with B(m) times 1 + size: B itself, and the risk the sup over m derives from it,
    E = 1 − sup A²/B → 1 − (1 − E)/(1 + size) (the argmin does not move: B scales uniformly in m)."""
    def change(r, a, k):
        out = dict(r)
        factor = 1 + _rat(size)
        out["B"] = r["B"] * factor
        out["risk"] = 1 - (1 - r["risk"]) / factor
        return out

    return map_return(change, where=where)


def _act_name(x):
    meta = getattr(x, "meta", None)
    if isinstance(meta, dict) or hasattr(meta, "get"):
        return meta.get("name")
    return getattr(x, "name", x)


def _mpmath_curve(size):
    """compile_model → for the mpmath backend, a copy of the module whose ``curve`` returns E_attention
    times 1 + size (the float64 module untouched)."""
    import types

    def change(mod, args, kwargs):
        new = types.ModuleType(mod.__name__)
        new.__dict__.update(mod.__dict__)
        original = mod.curve

        def curve(*a, **k):
            recs = original(*a, **k)
            for r in recs:
                r["E_attention"] = r["E_attention"] * (1 + size)
            return recs

        new.curve = curve
        return new

    return map_return(change, where=lambda a, k, r: _arg(a, k, 1, "backend", "numpy") == "mpmath"
                      and hasattr(r, "curve"))


_EXPORT_PATCH = '''
# --- planted by benchmarks/mutants.py (test-only): E_attention off by {pct} % for c > 1 ---
_planted_curve = curve


def curve(c, gammas, **kw):
    recs = _planted_curve(c, gammas, **kw)
    if float(c) > 1:
        for rec in recs:
            rec["E_attention"] = rec["E_attention"] * {num} / {den}
    return recs

'''


def _export_text(size):
    """model_source(main=True) — the text of an exported file — with ``curve`` wrapped; the in-process
    module (main=False) untouched."""
    frac = _rat(1 + size)
    patch = _EXPORT_PATCH.format(pct=round(100 * size, 3), num=frac.p, den=frac.q)

    def change(text, args, kwargs):
        tail = 'if __name__ == "__main__":'
        head, sep, rest = text.rpartition(tail)
        if not sep:
            raise ValueError("exported text has no main block: the export plant cannot be placed")
        return head + patch + sep + rest

    return map_return(change, where=lambda a, k, r: bool(k.get("main")))


# ------------------------------------------------------------------------------------------------
# the catalogue

_RMT_BULK = ("V4", "P1-traces")
_RMT_PROPS_SIM = ("rmt-vs-simulation", "rmt-vs-simulation-weights")
_RMT_PROPS_BULK = ("rmt-bulk-traces", "rmt-vs-simulation", "rmt-vs-simulation-weights")

PLANTS_LIST = [
    # --- RMT: inside the deterministic-equivalent fixed point (docs/attention_rmt.md §5) ---------
    Plant("rmt-bulk-b2", "rmt",
          "b² = ν − a₁² taken as 1.02ν − a₁² in the three §5 updates (β = b²/c inside the fixed point)",
          f"{RMT}:bulk_system", map_system(_xreplace_updates(lambda: {_sym(RMT, 'nu'): _rat(1.02) * _sym(RMT, 'nu')})),
          0.02, "everywhere", "coefficient", _RMT_BULK, _RMT_PROPS_BULK),
    Plant("rmt-bulk-A22-c>1", "rmt", "the A₂₂ = −⟨tg/Δ⟩ update 3 % too large, only for c > 1",
          f"{RMT}:bulk_system", map_system(_scale_update(2, 0.03, lambda: _sym(RMT, "c") > 1)),
          0.03, "c > 1", "region", ("V6", "V3", "P1-traces"), _RMT_PROPS_BULK),
    Plant("rmt-bulk-A11-c<1", "rmt", "the A₁₁ = ⟨h/Δ⟩ update 2 % too large, only for c < 1",
          f"{RMT}:bulk_system", map_system(_scale_update(0, 0.02, lambda: _sym(RMT, "c") < 1)),
          0.02, "c < 1", "region", ("V4", "V13", "P1-traces"), _RMT_PROPS_BULK),
    Plant("rmt-woodbury-alpha", "rmt",
          "α = a₁/c 2 % too large in the §6 Woodbury stage of Ē only (acts only with a signal, SNR > 0)",
          f"{RMT}:error_attention", lambda e: e.xreplace({_sym(RMT, "a1"): _rat(1.02) * _sym(RMT, "a1")}),
          0.02, "SNR > 0", "coefficient", ("V9", "V13"), ("rmt-derivative-identity",) + _RMT_PROPS_SIM),
    Plant("rmt-ridge-c>1", "rmt", "ridge closed form Ē_RR 2 % too large for c > 1 (Proposition 2, §7)",
          f"{RMT}:error_ridge", lambda e: scale_expr(0.02, _sym(RMT, "c") > 1)(e),
          0.02, "c > 1", "region", ("V3", "V14"), ("rmt-derivative-identity", "rmt-vs-simulation")),
    Plant("rmt-ridge-snr", "rmt", "SNR term of D = γ[1 + (c + SNR) m̄] 3 % too large in Ē_RR",
          f"{RMT}:error_ridge", lambda e: e.xreplace({_sym(RMT, "snr"): _rat(1.03) * _sym(RMT, "snr")}),
          0.03, "SNR > 0", "coefficient", ("V15", "V3"), ("rmt-derivative-identity", "rmt-vs-simulation")),
    Plant("rmt-noise-kernel", "rmt", "the (ν − a₁²)m/c term of the §4.2 noise-kernel law with 1.02ν",
          f"{RMT}:noise_kernel_system",
          map_system(_xreplace_updates(lambda: {_sym(RMT, "nu"): _rat(1.02) * _sym(RMT, "nu")})),
          0.02, "everywhere", "coefficient", ("V19",), ("rmt-noise-kernel-vs-simulation",)),
    Plant("rmt-hermite-a1", "rmt",
          "Hermite coefficient a₁ 2 % too large where SymPy cannot integrate (quadrature path)",
          "attnlimits.symbolic.hermite:hermite_coefficients",
          scale_return(0.02, field="a1", where=lambda a, k, r: getattr(r, "method", "") != "exact"),
          0.02, "non-exact activations", "coefficient", ("ID-parseval", "V4"),
          ("grammar-answers", "rmt-vs-simulation")),
    Plant("rmt-kappa", "rmt", "kept-diagonal constant κ (§4.3) 3 % too large",
          f"{RMT}:diagonal_constant", scale_return(0.03),
          0.03, "kept diagonal", "coefficient", ("V16", "mixed-geometry", "V5"),
          ("rmt-kappa-vs-measured", "rmt-frobenius-vs-m1", "rmt-vs-simulation-weights")),
    Plant("rmt-large-gamma-M1", "rmt", "large-γ coefficient M₁ (§8 E) 2 % too large (moves the crossover c*)",
          f"{RMT}:large_gamma_m1", _scale_expr_fn(0.02),
          0.02, "large γ, μ = 0", "coefficient", ("V14", "V5"), ("rmt-large-gamma-m1", "rmt-frobenius-vs-m1")),
    Plant("rmt-mpmath-path", "rmt", "the mpmath backend's Ē_attention 1 % off (float64 path right)",
          "attnlimits.numeric.models:compile_model", _mpmath_curve(0.01),
          0.01, "mpmath backend", "path", ("ID-backends",), ("rmt-mpmath-equals-float64",)),
    Plant("rmt-export-c>1", "rmt", "the exported solver file's Ē_attention 2 % off for c > 1",
          "attnlimits.numeric.models:model_source", _export_text(0.02),
          0.02, "exported file, c > 1", "path", ("ID-export",), ("rmt-exported-equals-inprocess",)),

    # --- SLR population (docs/slr.md §5–§8) ----------------------------------------------------
    Plant("slr-linear-closed-form", "slr",
          "closed-form linear-attention optimum (the §8 path `slr population` prints) 2 % too large, "
          "linear_centred only",
          f"{NUM_POP}:_linear_optimum",
          scale_return(0.02, field="risk", where=lambda a, k, r: _act_name(_arg(a, k, 0, "na")) == "linear_centred"),
          0.02, "linear_centred", "path", ("C6-command", "C6", "C10"), ("slr-population-vs-mc",)),
    Plant("slr-linear-B-max", "slr", "B(m) of the §8 linear closed forms 2 % too large on max-SLR only",
          f"{SLR_POP}:linear_closed_form",
          _linear_B(0.02, where=lambda a, k, r: _arg(a, k, 1, "model") == "max"),
          0.02, "max-SLR", "region", ("C7", "C10"), ("slr-population-vs-mc",)),
    Plant("slr-softmax-risk", "slr", "population optimum of softmax 2 % too large (other activations right)",
          f"{NUM_POP}:optimal_population_risk",
          scale_return(0.02, field="risk", where=lambda a, k, r: _act_name(_arg(a, k, 0, "act")) == "softmax"),
          0.02, "softmax only", "region", ("C13", "C4", "C12"), ("slr-population-vs-mc", "slr-bayes-bound")),
    Plant("slr-optimal-value", "slr", "E* = 1 − A²/B of §6.2 with 1.01·A²/B (all activations)",
          f"{SLR_POP}:optimal_value_risk",
          map_return(lambda r, a, k: (r[0], 1 - (1 - r[1]) * _rat(1.01))),
          0.01, "everywhere", "term", ("C4", "C6"), ("slr-population-vs-mc", "slr-bayes-bound")),
    Plant("slr-residual-cov", "slr", "Cov(a, b) of the §6.1 residuals 3 % too large (finite-D risk formula)",
          f"{SLR_POP}:residual_covariance", _scale_tuple_item(2, 0.03),
          0.03, "off the manifold", "coefficient", ("C5",), ("slr-risk-formula-vs-direct",)),
    # --- SLR Bayes (§7–§9) ---------------------------------------------------------------------
    Plant("slr-bayes-nu>2", "slr", "Bayes risk E_B 2 % too large for ν > 2",
          f"{NUM_BAYES}:bayes_risk",
          scale_return(0.02, field="value", where=lambda a, k, r: float(_arg(a, k, 1, "nu")) > 2),
          0.02, "ν > 2", "region", ("C3", "C4"), ("slr-bayes-bound",)),
    Plant("slr-c-nu-spiked", "slr", "c_ν of spiked-SLR (= √ν) 2 % too large (posterior temperature)",
          f"{SLR_BAYES}:c_nu",
          map_return(lambda r, a, k: r * _rat(1.02), where=lambda a, k, r: _arg(a, k, 0, "model") == "spiked"),
          0.02, "spiked-SLR", "coefficient", ("C2", "C3", "C23", "C1", "C4"), ("slr-population-vs-mc", "slr-bayes-bound")),
    Plant("slr-stein-mean", "slr", "μ_L(ν) = ν E_B on max-SLR 2 % too large (Stein mean)",
          f"{SLR_BAYES}:stein_mean", _scale_expr_fn(0.02),
          0.02, "max-SLR, ν < ∞", "coefficient", ("C8", "C7"), ("slr-population-vs-mc", "slr-bayes-bound")),
    Plant("slr-expected-max", "slr", "M_L = E max of L Gaussians 1 % too large (max-SLR at ν = ∞)",
          f"{NUM_BAYES}:expected_max_gaussian", scale_return(0.01),
          0.01, "max-SLR, ν = ∞", "coefficient", ("C7", "C24"), ("slr-population-vs-mc",)),
    # --- SLR replica (§10) ---------------------------------------------------------------------
    Plant("slr-replica-test-error", "slr", "RS test error (§10.5) 3 % too large",
          f"{SLR_REPLICA}:test_error", map_return(lambda r, a, k: (r[0], r[1] * _rat(1.03))),
          0.03, "everywhere", "coefficient", ("C15", "C15b", "C18", "C19-softmax"),
          ("slr-bo-below-rs", "slr-replica-vs-erm-models", "slr-replica-vs-erm")),
    Plant("slr-replica-qhat", "slr", "q̂ = α E‖g‖² of the §10.4 conjugates 2 % too large (inside the RS fixed point)",
          f"{SLR_REPLICA}:conjugate_update",
          map_return(lambda r, a, k: (r[0], scale_value(r[1], 1.02, "q_hat"))),
          0.02, "everywhere", "coefficient", ("C15", "C15b", "C18", "C19-softmax"),
          ("slr-bo-below-rs", "slr-replica-vs-erm-models", "slr-replica-vs-erm")),
    Plant("slr-replica-prior-m", "slr", "m of the §10.2 ridge prior part 2 % too large (inside the RS fixed point)",
          f"{SLR_REPLICA}:prior_update", _scale_dict_key("m", 0.02),
          0.02, "everywhere", "coefficient", ("C15", "C15b", "C18", "C19-softmax"),
          ("slr-bo-below-rs", "slr-replica-vs-erm-models", "slr-replica-vs-erm")),
    # --- SLR Bayes-optimal state evolution (§11) -----------------------------------------------
    Plant("slr-bo-prior", "slr", "BO prior update q = q̂/(1 + q̂) with 1.02 q̂ (inside the state evolution)",
          f"{SLR_BO}:prior_update",
          map_return(lambda r, a, k: r.xreplace({_sym(SLR_BO, "qhat"): _rat(1.02) * _sym(SLR_BO, "qhat")})),
          0.02, "everywhere", "coefficient", ("C19-R6", "C19-order"),
          ("slr-bo-large-alpha", "slr-bo-monotone", "slr-gamp-vs-se", "slr-bo-below-rs")),
    Plant("slr-bo-test-error", "slr", "E_BO = 1 − q_v(1 − E_B) 2 % too large (§11 test error)",
          f"{SLR_BO}:test_error", map_return(lambda r, a, k: (r[0] * _rat(1.02), r[1])),
          0.02, "everywhere", "coefficient", ("C19-order", "C19-R6", "C19-softmax"),
          ("slr-bo-large-alpha", "slr-gamp-vs-se", "slr-bo-below-rs")),
    # --- SLR predecessor [M] (§13) ---------------------------------------------------------------
    Plant("slr-predecessor-risk", "slr", "[M] Theorem 1 manifold excess risk 2 % too large",
          f"{SLR_PRED}:manifold_excess_risk", _scale_expr_fn(0.02),
          0.02, "everywhere", "coefficient", ("C21",), ("slr-predecessor-vs-mc",)),
]

PLANTS = {p.name: p for p in PLANTS_LIST}
assert len(PLANTS) == len(PLANTS_LIST), "plant names must be unique"


def get(name: str) -> Plant:
    """The plant called ``name`` (KeyError naming the catalogue otherwise)."""
    try:
        return PLANTS[name]
    except KeyError:
        raise KeyError(f"no plant {name!r}; plants: {', '.join(PLANTS)}") from None


def apply(name: str) -> Plant:
    """Plant ``name`` for the rest of this process (:func:`attnlimits.symbolic.mutation.apply`)."""
    return _apply(get(name))


def planted(name: str):
    """Context manager: ``name`` planted in the block (:func:`attnlimits.symbolic.mutation.planted`)."""
    return _planted(get(name))


if __name__ == "__main__":  # list the catalogue
    for p in PLANTS_LIST:
        print(f"{p.name:<24} {p.result:<4} {p.kind:<11} {100 * p.size:4.1f} %  {p.region:<22} {p.description}")
