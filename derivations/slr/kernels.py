r"""The generated kernels of single-location regression: what ``numeric/`` and ``verify/`` evaluate.

Every number of the SLR result is computed from a :class:`attnlimits.symbolic.bundle.KernelBundle` built
here from the SymPy expressions of :mod:`attnlimits.derivations.slr.population`,
:mod:`attnlimits.derivations.slr.bayes` and :mod:`attnlimits.derivations.slr.predecessor` and printed by
:mod:`attnlimits.symbolic.codegen` (the one code-generation route: NumPy, mpmath, PyTorch).  The numeric
layer receives these bundles as arguments and never imports a derivation.

- :func:`activation_kernels` — one activation (docs/slr.md §4): the token map, the weight and their
  derivatives (:func:`attnlimits.derivations.slr.population.vector_form`); the PyTorch weights of the Monte
  Carlo are printed from the same kernels.
- :func:`slr_kernels` — the result: the §6.2 risk and optimal value vector, the §6.1 residual
  covariance, :math:`c_\nu` per model, the Stein mean :math:`\mu_L(\nu)=\nu E_B`, the §8 linear
  closed forms (as coefficients of :math:`A(m)`, :math:`B(m)` and the derived stationary point),
  the Bayes integrands per model (§7) and [M]'s formulas (§13).  Its parts are built on first
  use; ``slr_kernels().meta["activation"]`` is :func:`activation_kernels` (name resolution
  stays in the derivation).
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import sympy as sp

from attnlimits.symbolic.bundle import KernelBundle
from attnlimits.symbolic.codegen import Kernel
from attnlimits.symbolic.functions import zeta_erf2

from . import bayes as SB
from . import population as P
from . import predecessor as SP

__all__ = ["activation_kernels", "slr_kernels", "bayes_kernels", "population_kernels", "predecessor_kernels",
           "LINEAR_VARIANTS"]

LINEAR_VARIANTS = ("linear_uncentred", "linear_centred", "linear_pure")


class _LazyParts(Mapping):
    """Sub-bundles built on first access (their SymPy derivations take up to a few seconds)."""

    def __init__(self, builders: dict):
        self._builders = dict(builders)
        self._built: dict = {}

    def __getitem__(self, key):
        if key not in self._built:
            self._built[key] = self._builders[key]()
        return self._built[key]

    def __iter__(self):
        return iter(self._builders)

    def __len__(self):
        return len(self._builders)


# =============================================================================================
# activations
# =============================================================================================

@lru_cache(maxsize=128)
def _activation_kernels(name: str) -> KernelBundle:
    act = P.activation(name)
    u, sig = P.vector_form(act)
    sub = {} if act.extra is None else {act.extra: P.extra}
    sig = sp.sympify(sig).subs(sub)
    e, t, r, uu = P.extra, P.t, P.r, P.u
    kernels = [
        Kernel("weight", [t, uu, r, e], [sig, sp.diff(sig, t), sp.diff(sig, uu), sp.diff(sig, r), sp.diff(sig, e)],
               doc=f"{act.name} ({act.kind}): sigma(t, u, r), d/dt, d/du, d/dr, d/dextra (docs/slr.md §4)."),
        Kernel("weight_value", [t, uu, r, e], [sig], doc=f"{act.name}: sigma(t, u, r) (docs/slr.md §4)."),
    ]
    if u is not None:
        u = sp.sympify(u).subs(sub)
        kernels += [
            Kernel("token", [t, e], [u, sp.diff(u, t), sp.diff(u, e)],
                   doc=f"{act.name}: the reduced token quantity u(t), d/dt, d/dextra."),
            Kernel("token_value", [t, e], [u], doc=f"{act.name}: the reduced token quantity u(t)."),
        ]
    meta = {"name": act.name, "kind": act.kind, "reduction": act.reduction, "has_extra": act.extra is not None,
            "extra_name": act.extra_name, "extra_learned": act.extra_learned,
            "extra_default": float(act.extra_default), "extra_bounds": tuple(float(b) for b in act.extra_bounds),
            "affine": act.kind == "affine", "description": act.description,
            "limits": tuple(dict(x) for x in act.limits)}
    return KernelBundle(f"slr_activation_{abs(hash(act.name))}", tuple(kernels), meta,
                        title=f"attention weight kernels: {act.name}", description=act.description)


def activation_kernels(act) -> KernelBundle:
    """The kernel bundle of an activation: a docs/slr.md §4 name, ``elementwise:``/``normalised:`` text, or an
    :class:`attnlimits.derivations.slr.population.Activation` (cached per name)."""
    a = P.activation(act)
    if a.name in P.ACTIVATIONS or a.name.startswith(("elementwise:", "normalised:")):
        return _activation_kernels(a.name)
    raise P.ActivationError(f"activation {a.name!r} is not registered; pass a name or an "
                            "'elementwise:'/'normalised:' text")


# =============================================================================================
# population: risk, value optimum, residual covariance, c_ν, μ_L, linear closed forms
# =============================================================================================

def _linear_coefficients(variant: str, model: str, length_one: bool):
    """Coefficients (a0, a1, b0, b1, b2) of A = a0 + a1 m, B = b0 + b1 m + b2 m² (§8)."""
    act = P.activation(variant)
    if length_one:
        A, B = P.length_one_AB(act, model, {})
    else:
        d = P.linear_closed_form(variant, model)
        A, B = d["A"], d["B"]
    pa, pb = sp.Poly(sp.expand(A), P.m), sp.Poly(sp.expand(B), P.m)
    return [pa.coeff_monomial(P.m ** k) for k in range(2)] + [pb.coeff_monomial(P.m ** k) for k in range(3)]


@lru_cache(maxsize=1)
def population_kernels() -> KernelBundle:
    """Population-level kernels (docs/slr.md §5–§8); see the module docstring."""
    mv_star, e_star = P.optimal_value_risk()
    va, vb, cab = P.residual_covariance()
    kernels = [
        Kernel("optimal_value", [P.A_sym, P.B_sym], [mv_star, e_star],
               doc="(m_v*, E*) = (A/B, 1 - A^2/B): the value vector optimised (docs/slr.md §6.2)."),
        Kernel("optimal_value_grad", [P.A_sym, P.B_sym], [sp.diff(e_star, P.A_sym), sp.diff(e_star, P.B_sym)],
               doc="(dE*/dA, dE*/dB) of E* = 1 - A^2/B (docs/slr.md §6.2)."),
        Kernel("manifold_risk", [P.m_v, P.q_v, P.A_sym, P.B_sym], [P.risk_on_manifold()],
               doc="E = 1 - 2 m_v A + q_v B (docs/slr.md §6.2)."),
        Kernel("residual_covariance", [P.m_k, P.q_k, P.m_v, P.q_v, P.m_kvstar, P.m_vkstar, P.q_kv], [va, vb, cab],
               doc="(Var a, Var b, Cov(a, b)) of the student residuals (docs/slr.md §6.1)."),
        Kernel("stein_mean", [SB.nu, SB.E_B], [SB.stein_mean()], doc="mu_L(nu) = nu E_B (docs/slr.md §8)."),
    ]
    for model in P.MODELS:
        kernels.append(Kernel(f"c_nu_{model}", [SB.nu], [SB.c_nu(model)],
                              doc=f"c_nu of {model}-SLR, from the ratio condition (docs/slr.md §3.5)."))
    syms, root = P.generic_stationary_point()
    a0, a1, b0, b1, b2 = syms
    num, den = sp.fraction(sp.together(root))
    kernels.append(Kernel("stationary_point", list(syms), [num, den],
                          doc="argmax over m of (a0 + a1 m)^2/(b0 + 2 b1 m + b2 m^2) as (numerator, denominator) "
                              "(Cauchy-Schwarz, §8); a zero denominator: the ratio does not depend on m."))
    degenerate = {}
    for v in LINEAR_VARIANTS:
        for model in P.MODELS:
            c = _linear_coefficients(v, model, False)
            kernels.append(Kernel(f"linear_{v}_{model}", [P.L, P.nu, P.mu], c,
                                  doc=f"(a0, a1, b0, b1, b2) of A(m), B(m) for {v} on {model}-SLR, L >= 2 (§8)."))
            c1 = _linear_coefficients(v, model, True)
            kernels.append(Kernel(f"linear_{v}_{model}_L1", [P.nu], c1,
                                  doc=f"(a0, a1, b0, b1, b2) of A(m), B(m) for {v} on {model}-SLR, L = 1 (§8)."))
        degenerate[v] = P.linear_closed_form(v, "spiked")["argmin_m_k"] is None
    meta = {"linear_variants": LINEAR_VARIANTS, "linear_degenerate": degenerate}
    return KernelBundle("slr_population", tuple(kernels), meta, title="SLR population kernels (docs/slr.md §5-§8)")


# =============================================================================================
# Bayes (§7, §8) and [M] (§13)
# =============================================================================================

@lru_cache(maxsize=None)
def bayes_kernels(model: str) -> KernelBundle:
    r"""The Bayes-risk integrands of ``model`` (docs/slr.md §7): L = 2 forms, Laplace kernels, token laws,
    outer integrands in symbolic L, the nested-quadrature integrands, M_L's integrand."""
    SB.check_model(model)
    f = SB.one_d_form(model)
    kernels = [
        Kernel("one_d", [SB.n, SB.nu], [f.integrand], doc="L = 2 integrand in n (docs/slr.md §7).", use_cse=False),
        Kernel("one_d_step", [SB.nu], [f.step, f.width], doc="split point and feature width of the L = 2 form."),
        Kernel("kernel_D0", [SB.s], [SB.kernel_remainder()], doc="D_0(s) = K_0(s) - Phi_N(-s)."),
        Kernel("normal_density", [SB.a, SB.m, SB.c], [SB.normal_density(SB.a, SB.m, SB.c)], doc="N(m, c^2) density."),
        Kernel("std_density", [SB.g], [SB.gaussian_density(SB.g)], doc="N(0, 1) density."),
        Kernel("step_part", [SB.u, SB.m, SB.c], [SB.step_part()], doc="E_a[Phi_N(u - a)], a ~ N(m, c^2)."),
        Kernel("neg_log_asymptotic", [SB.nu, SB.L], [sp.expand(SB.neg_log_rate_expansion() * SB.nu)],
               doc="-log E_B from the spiked asymptotic (docs/slr.md §9)."),
        Kernel("expected_max", [SB.x, SB.L], [SB.expected_max_integrand(SB.L)],
               doc="integrand of M_L = E max of L i.i.d. N(0, 1) (docs/slr.md §8).", use_cse=False),
    ]
    for k in (0, 1, 2):
        kernels.append(Kernel(f"kernel_K{k}", [SB.s], [SB.laplace_kernel(k)], doc=f"K_{k}(s) = exp({k}s - e^s)."))
    laws = SB.token_laws(model)
    for law, (mean, sd) in laws.items():
        kernels.append(Kernel(f"law_{law}", [SB.nu], [mean, sd], doc=f"(mean, sd) of the {law} logits."))
        kernels.append(Kernel(f"inner_step_{law}", [SB.u, SB.nu], [SB.inner_step(model, law)],
                              doc="step of the inner integrand (a = u)."))
        for k in (0, 1, 2):
            expr = sp.powsimp(SB.inner_integrand(model, law, k), combine="exp", force=True)
            kernels.append(Kernel(f"inner_{law}_{k}", [SB.g, SB.u, SB.nu], [expr], use_cse=False,
                                  doc=f"inner integrand in g of Phi_{k}(u), {law} token (nested quadrature)."))
    forms = {}
    for form in ("direct", "complement"):
        of = SB.outer_integrand(model, SB.L, form)
        syms = [SB.phi_symbol(law, k) for law, k in of.inner]
        kernels.append(Kernel(f"outer_{form}", syms + [SB.L], [of.integrand, of.constant],
                              doc=f"outer integrand in u of E_B ({form} form) and its constant (docs/slr.md §7)."))
        forms[form] = tuple(of.inner)
    meta = {"model": model, "laws": tuple(laws), "inner": forms}
    return KernelBundle(f"slr_bayes_{model}", tuple(kernels), meta,
                        title=f"SLR Bayes-risk integrands, {model}-SLR (docs/slr.md §7)")


@lru_cache(maxsize=1)
def predecessor_kernels() -> KernelBundle:
    """[M]'s formulas (docs/slr.md §13): Theorem 1 on the manifold, Proposition 3, ζ."""
    tt, ss = sp.symbols("t s", real=True)
    kernels = [
        Kernel("manifold_risk", [SP.d, SP.L, SP.gamma, SP.lam, SP.kappa, SP.nu_M], [SP.manifold_excess_risk()],
               doc="[M] Theorem 1 on the manifold (docs/slr.md §13.2).", use_cse=False),
        Kernel("prop3", [SP.gamma, SP.eps, SP.L], [SP.prop3_risk()], doc="[M] Proposition 3 (docs/slr.md §13)."),
        Kernel("zeta", [tt, ss], [zeta_erf2(tt, ss)], doc="zeta(t, s) = E_g[erf(t + s g)^2]."),
    ]
    return KernelBundle("slr_predecessor", tuple(kernels), {}, title="[M] formulas (docs/slr.md §13)")


@lru_cache(maxsize=1)
def slr_kernels() -> KernelBundle:
    """The SLR result's kernels: parts ``population``, ``bayes_spiked``, ``bayes_max``,
    ``predecessor`` (built on first access); ``meta["activation"]`` resolves activation names."""
    parts = _LazyParts({"population": population_kernels, "bayes_spiked": lambda: bayes_kernels("spiked"),
                        "bayes_max": lambda: bayes_kernels("max"), "predecessor": predecessor_kernels})
    return KernelBundle("slr", (), {"activation": activation_kernels, "models": P.MODELS}, parts,
                        title="single-location regression (docs/slr.md)")
