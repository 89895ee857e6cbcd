r"""Interpolation error of nonlinear attention versus ridge regression (random matrix theory).

Source: Liao, Liu, Hou, Zou, Ling, *On the Interpolation Error of Nonlinear Attention versus Linear
Regression*, arXiv:2506.18656 (v1: *A Random Matrix Analysis of In-context Memorization for
Nonlinear Attention*).  Every formula below is written once, here, in SymPy, and tagged with its
section of the project documentation ``docs/attention_rmt.md`` — an independent derivation
in the paper's framework (Hermite linearisation → deterministic equivalent → Woodbury).

Model (§2)
----------
Tokens ``X = μ yᵀ + Z ∈ R^{p×n}``, ``c = p/n``; attention ``K_X = f(Xᵀ W X/√p)/√p`` with
``W = W_Kᵀ W_Q = I + L`` (``L = w_K w_Qᵀ`` or any fixed rank); probe ``Φ = X K_X`` with a ridge
read-out; ``ȳ(γ) = yᵀ Q(γ) y / n`` and the error ``E(γ) = −γ² dȳ/dγ`` (§3).

Only the Hermite data ``a₁ = E[ξ f(ξ)]``, ``ν = E f(ξ)²`` and the diagonal constant ``κ`` (§4.3)
enter the limit.

Contents
--------
- :data:`bulk_system` — the §5 fixed point for ``(A₁₁, A₁₂, A₂₂)`` and the traces ``q₀ … q₅``;
- :func:`ybar_expression`, :data:`ybar`, :data:`ybar_rate`, :data:`error_attention` — §6
  (Woodbury over the reduced geometry, general rank);
- :func:`reduced_geometry_rank1`, :func:`reduced_geometry_general` — ``Γ``, ``Ω`` of §5/§6;
- :data:`ridge_stieltjes`, :data:`error_ridge` — the baseline, Proposition 2 (§7);
- :func:`large_gamma_m1`, :func:`crossover_c_star` — §8 E, derived from the MP moments;
- :data:`noise_kernel_stieltjes_update`, :data:`noise_kernel_system` — the noise-kernel law of §4.2
  (claim V19), as a complex update and as a real fixed-point system;
- :func:`diagonal_constant` — the kept-diagonal ``κ = E f(√p + √2ξ)/√p`` of §4.3 (and the
  spec's leading form ``f(√p)/√p``).
"""
from __future__ import annotations

import functools

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixElement

from attnlimits.symbolic.matexpr import directional_derivative
from attnlimits.symbolic.spectral import MarchenkoPasturLaw, SpectralAverage, replace_averages_by_moments
from attnlimits.symbolic.system import EquationSystem, Invariant

__all__ = [
    "t", "c", "gamma", "a1", "nu", "kappa", "snr", "A11", "A12", "A22",
    "law", "beta", "alpha", "bulk_system", "traces", "q", "q_rate",
    "r", "m_vec", "Gamma_mat", "Omega_mat", "omega_K", "omega_Q", "L_red",
    "ybar_expression", "ybar_boxed_expression", "ybar", "ybar_rate", "error_attention", "outer_invariants",
    "reduced_geometry_rank1", "reduced_geometry_general",
    "ridge_stieltjes", "ridge_ybar", "error_ridge", "ridge_mbar", "ridge_stieltjes_quadratic",
    "large_gamma_m1", "crossover_c_star", "noise_kernel_stieltjes_update", "stieltjes_m", "z",
    "noise_kernel_system",
    "diagonal_constant", "diagonal_constant_leading", "REFERENCES",
]

from .result import REFERENCES  # noqa: E402  (what a computation with this result rests on)
from .symbols import (  # noqa: E402
    t, c, gamma, a1, nu, kappa, snr, A11, A12, A22, q, q_rate, r, m_vec, Gamma_mat, Omega_mat, omega_K, omega_Q, L_red, z, stieltjes_m, m_re, m_im, z_re, z_im, theta,
)

# ------------------------------------------------------------------------------------------------
# symbols (§2, §4.1, §4.3)

law = MarchenkoPasturLaw(c)


def _avg(phi):
    return SpectralAverage(phi, t, law)


# ------------------------------------------------------------------------------------------------
# §5 bulk deterministic equivalent
beta = (nu - a1**2) / c  #: β = b²/c, b² = ν − a₁²
alpha = a1 / c  #: α = a₁/c, strength of the low-rank signal term
d_t = a1 * (t / c - 1) + kappa  #: d(t) = a₁(t/c − 1) + κ
g_ = gamma - beta * A22  #: g = γ − β A₂₂
e_t = d_t - beta * A12  #: e(t) = d(t) − β A₁₂
h_t = 1 + beta * t * A11  #: h(t) = 1 + β t A₁₁
Delta_t = g_ * h_t + t * e_t**2  #: Δ(t) = g h(t) + t e(t)²

#: Normalised traces q₀…q₅ of §5 (table "Normalized traces").
traces = {
    "q0": A11,
    "q1": _avg(e_t / Delta_t),
    "q2": A12,
    "q3": _avg((beta * g_ * A11 + e_t**2) / Delta_t),
    "q4": 1 - gamma * A11,
    "q5": c + A22,
}

bulk_system = EquationSystem(
    name="rmt_bulk",
    unknowns=(A11, A12, A22),
    parameters=(c, gamma, a1, nu, kappa),
    updates=(
        _avg(h_t / Delta_t),  # A₁₁ = ⟨h/Δ⟩
        _avg(t * e_t / Delta_t),  # A₁₂ = ⟨t e/Δ⟩
        -_avg(t * g_ / Delta_t),  # A₂₂ = −⟨t g/Δ⟩
    ),
    observables={**traces, "g": g_},
    initial_guess=(1 / gamma, sp.S.Zero, sp.S.Zero),
    invariants=(
        Invariant("g > 0", g_ > 0, "g = γ − β A₂₂ is positive"),
        Invariant("A11 > 0", A11 > 0),
        Invariant("A22 <= 0", A22 <= 0),
        Invariant("A22 >= -c", A22 >= -c),
        Invariant("q4 >= 0", 1 - gamma * A11 >= 0),
        Invariant("q4 < 1", 1 - gamma * A11 < 1),
    ),
    source=(
        "Bulk fixed point g = γ − βA₂₂, e = d − βA₁₂, h = 1 + βtA₁₁, Δ = gh + te²; "
        "A₁₁ = ⟨h/Δ⟩, A₁₂ = ⟨te/Δ⟩, A₂₂ = −⟨tg/Δ⟩ over the MP law of T "
        "(docs/attention_rmt.md §5; arXiv:2506.18656, Proposition-1-type)."
    ),
)

# ------------------------------------------------------------------------------------------------
# §6 Woodbury over the reduced geometry (general rank r)


def reduced_geometry_rank1():
    """``(Γ, Ω) = (I + m mᵀ, I + ω_K ω_Qᵀ)`` — rank-one weights ``W = I + w_K w_Qᵀ`` (§5)."""
    I = sp.Identity(r)
    return I + m_vec * m_vec.T, I + omega_K * omega_Q.T


def reduced_geometry_general():
    """``(Γ, Ω) = (I + m mᵀ, I + U_sᵀ L U_s)`` — general fixed-rank ``W = I + L`` (§5, §6)."""
    I = sp.Identity(r)
    return I + m_vec * m_vec.T, I + L_red


def _woodbury_blocks():
    I, Z = sp.Identity(r), sp.ZeroMatrix(r, r)
    G, O = Gamma_mat, Omega_mat
    C = sp.BlockMatrix([
        [alpha**2 * O.T * G * (c * I + G) * O, alpha * O.T * G, alpha * O.T],
        [alpha * G * O, I, Z],
        [alpha * O, Z, Z],
    ])
    q0, q1, q2, q3, q4, q5 = q
    Qm = sp.ImmutableMatrix([[q0, q1, q2], [q1, q3, q4], [q2, q4, q5]])
    return C, Qm


def ybar_boxed_expression():
    r"""§6, boxed: :math:`\bar y = q_0 - v^\top C (I_{3r} + (\mathcal Q\otimes\Gamma)C)^{-1} v`.

    .. math::
        C=\begin{pmatrix}\alpha^2\Omega^\top\Gamma(cI_r+\Gamma)\Omega&\alpha\Omega^\top\Gamma&\alpha\Omega^\top\\
        \alpha\Gamma\Omega&I_r&0\\ \alpha\Omega&0&0\end{pmatrix},\quad
        v=(q_0,q_1,q_2)^\top\otimes m,\quad
        \mathcal Q=\begin{pmatrix}q_0&q_1&q_2\\q_1&q_3&q_4\\q_2&q_4&q_5\end{pmatrix}.

    This is the spec's form; :func:`ybar_expression` is the equivalent form used numerically.
    """
    C, Qm = _woodbury_blocks()
    q0, q1, q2 = q[:3]
    v = sp.KroneckerProduct(sp.ImmutableMatrix([q0, q1, q2]), m_vec)
    N = sp.Identity(3 * r) + sp.KroneckerProduct(Qm, Gamma_mat) * C
    return q0 - MatrixElement(v.T * C * sp.Inverse(N) * v, 0, 0)


def ybar_expression():
    r"""§6, in a form free of the ill-conditioning of the boxed one (equal to it exactly).

    With :math:`B=\mathcal Q\otimes\Gamma`, :math:`w=e_1\otimes m` and :math:`s=\|m\|^2`,
    :math:`\Gamma m=(1+s)m` gives :math:`v=Bw/(1+s)`, and
    :math:`BC(I+BC)^{-1}=I-(I+BC)^{-1}`, :math:`(I+BC)^{-1}B=(B^{-1}+C)^{-1}` give

    .. math:: \bar y=\frac{q_0}{1+s}+\frac{w^\top(\mathcal Q^{-1}\otimes\Gamma^{-1}+C)^{-1}w}{(1+s)^2}.

    For c < 1 and small γ the traces carry a large rank-one part (the atom of T at 0, of size
    (1 − c)/γ); the boxed form then subtracts nearly equal numbers through an ill-conditioned
    3r×3r inverse and loses up to 3 digits of Ē in float64 (c = 1/4, SNR 8, γ = 1e-5), while this
    form involves only O(1) matrices.  ``tests/derivations`` checks that both forms agree.
    """
    C, Qm = _woodbury_blocks()
    w = sp.KroneckerProduct(sp.ImmutableMatrix([1, 0, 0]), m_vec)
    s = MatrixElement(m_vec.T * m_vec, 0, 0)
    inner = sp.Inverse(sp.KroneckerProduct(sp.Inverse(Qm), sp.Inverse(Gamma_mat)) + C)
    return q[0] / (1 + s) + MatrixElement(w.T * inner * w, 0, 0) / (1 + s) ** 2


ybar = ybar_expression()  #: ȳ as a function of the traces and the geometry (§6)
#: dȳ/dγ by the chain rule through the traces (dq/dγ from the implicit derivative of §5).
ybar_rate = directional_derivative(ybar, {}, dict(zip(q, q_rate)))
error_attention = -gamma**2 * ybar_rate  #: Ē = −γ² dȳ/dγ (§3, §6)

#: Invariants of the outer stage (§9), as margins that must be ≥ 0 (strict ones > 0).
outer_invariants = (
    Invariant("gamma*ybar > 0", gamma * ybar > 0),
    Invariant("gamma*ybar <= 1", gamma * ybar <= 1),
    Invariant("dybar/dgamma < 0", ybar_rate < 0),
    Invariant("E >= 0", error_attention >= 0),
    Invariant("E <= 1", error_attention <= 1),
)

# ------------------------------------------------------------------------------------------------
# §7 ridge baseline (Proposition 2)


ridge_mbar = sp.Symbol("mbar")  #: m̄ as the unknown of its defining quadratic
ridge_stieltjes_quadratic = c * gamma * ridge_mbar**2 + (1 - c + gamma) * ridge_mbar - 1  #: = 0 defines m̄ (§7)


def _positive_stieltjes_root():
    """Positive root of ``cγm̄² + (1 − c + γ)m̄ − 1 = 0``, in a cancellation-free form.

    SymPy solves the quadratic; Vieta (m₊m₋ = −1/(cγ)) gives the conjugate form, and the two
    are combined by the sign of ``B = 1 − c + γ`` so that neither subtracts nearly equal numbers.
    """
    mb = ridge_mbar
    roots = sp.solve(ridge_stieltjes_quadratic, mb)
    # the positive root is the one with +sqrt: check numerically at a sample point
    sample = {c: sp.Rational(1, 2), gamma: sp.Rational(1, 3)}
    (m_plus,) = [rt for rt in roots if rt.subs(sample) > 0]
    (m_minus,) = [rt for rt in roots if rt != m_plus]
    conj = sp.simplify(-1 / (c * gamma * m_minus))  # Vieta
    B = 1 - c + gamma
    return sp.Piecewise((conj, B >= 0), (m_plus, True))


ridge_stieltjes = _positive_stieltjes_root()  #: m̄(γ): MP Stieltjes transform at −γ (§7)
_D = gamma * (1 + (c + snr) * ridge_stieltjes)  #: D = γ[1 + (c + SNR) m̄]
ridge_ybar = 1 / _D  #: yᵀRy/n → 1/D
error_ridge = gamma**2 * sp.diff(_D, gamma) / _D**2  #: Ē_RR = γ² D'/D² (§7)

# ------------------------------------------------------------------------------------------------
# §8 E: large-γ coefficient and the crossover


@functools.lru_cache(maxsize=None)
def large_gamma_m1() -> sp.Expr:
    r"""``M₁`` in ``1 − Ē = 2M₁/γ + O(γ⁻²)`` for random inputs, derived from the MP moments.

    With ``ε = 1/γ`` the §5 fixed point is iterated on truncated ε-series (each pass fixes one
    more order); spectral averages of the polynomial coefficients become MP moments.  Random
    inputs give ``ȳ = q₀ = A₁₁ = ε − M₁ ε² + O(ε³)``, so ``M₁ = −[ε²] A₁₁``.  The spec states
    ``M₁ = ν + a₁²/c + 2κa₁ + cκ²`` (§8 E); the tests compare the two.
    """
    eps = sp.Symbol("epsilon", positive=True)
    order = 3  # keep terms up to ε² (series truncated at O(ε³))

    def taylor(expr):
        # truncated power-series division N/D in ε (coefficients stay polynomial in t)
        num, den = sp.fraction(sp.together(expr))
        nc = sp.Poly(sp.expand(num), eps).all_coeffs()[::-1]
        dc = sp.Poly(sp.expand(den), eps).all_coeffs()[::-1]
        shift = next(k for k, d in enumerate(dc) if d != 0)  # D = ε^shift (d₀ + d₁ε + …)
        dc = dc[shift:]
        nc = nc + [sp.S.Zero] * (order + shift + 1)
        coeffs = []
        for k in range(order + shift):
            acc = nc[k] - sum(dc[j] * coeffs[k - j] for j in range(1, min(k, len(dc) - 1) + 1))
            coeffs.append(sp.cancel(sp.expand(acc) / dc[0]))
        return sp.expand(sum(cf * eps ** (k - shift) for k, cf in enumerate(coeffs) if k - shift < order))

    x = {A11: eps, A12: sp.S.Zero, A22: sp.S.Zero}
    for _ in range(order + 1):
        new = {}
        for var, upd in zip(bulk_system.unknowns, bulk_system.updates):
            e = upd.subs(gamma, 1 / eps).xreplace(x)
            e = e.replace(
                lambda a: isinstance(a, SpectralAverage),
                lambda a: SpectralAverage(taylor(a.integrand), a.var, a.law),
            )
            new[var] = taylor(replace_averages_by_moments(e))
        x = new
    return sp.factor_terms(sp.expand(-sp.expand(x[A11]).coeff(eps, 2)))


def crossover_c_star() -> sp.Expr:
    """``c*``: with κ = 0 attention wins at large γ iff ``M₁ > M₁^RR = c``, i.e. ``c < c*`` (§8 E)."""
    m1 = large_gamma_m1().subs(kappa, 0)
    roots = sp.solve(sp.Eq(m1, c), c)
    sample = {nu: sp.Rational(2, 5), a1: sp.Rational(3, 5)}
    (pos,) = [rt for rt in roots if rt.subs(sample) > 0]
    return sp.simplify(pos)


# ------------------------------------------------------------------------------------------------
# §4.2 noise-kernel law (claim V19)
#: m = −(z + a₁² m/(c + a₁ m) + (ν − a₁²) m/c)⁻¹  (Cheng–Singer; Fan–Montanari; §4.2)
noise_kernel_stieltjes_update = -1 / (
    z + a1**2 * stieltjes_m / (c + a1 * stieltjes_m) + (nu - a1**2) * stieltjes_m / c
)




def _noise_kernel_system():
    """The §4.2 law as a real fixed point for (Re m, Im m), derived from the complex update."""
    e = noise_kernel_stieltjes_update.subs({stieltjes_m: m_re + sp.I * m_im, z: z_re + sp.I * z_im})
    D = sp.together(-1 / e)  # update = −1/D
    re_D, im_D = sp.expand_complex(D).as_real_imag()
    den = re_D**2 + im_D**2
    z2 = z_re**2 + z_im**2
    return EquationSystem(
        name="noise_kernel",
        unknowns=(m_re, m_im),
        parameters=(z_re, z_im, c, a1, nu),
        updates=(-re_D / den, im_D / den),
        observables={"m_re": m_re, "m_im": m_im},
        initial_guess=(-z_re / z2, z_im / z2),  # m ≈ −1/z: the branch continued from |z| → ∞
        invariants=(Invariant("Im m > 0", m_im > 0, "Stieltjes transform of a measure, Im z > 0"),),
        source="Stieltjes transform of the zero-diagonal noise kernel K_N (docs/attention_rmt.md §4.2; "
        "Cheng–Singer 2013, Fan–Montanari 2019)",
    )


noise_kernel_system = _noise_kernel_system()  #: §4.2 as an :class:`EquationSystem` (claim V19)

# ------------------------------------------------------------------------------------------------
# §4.3 kept-diagonal constant
def diagonal_constant_leading(f_centred: sp.Expr, var: sp.Symbol, p) -> sp.Expr:
    """``κ ≈ f(√p)/√p``: the diagonal of ``K_X`` in kept-diagonal mode as the spec states it (§4.3).

    Good for monotone bounded f (tanh, sigmoid) and ReLU; wrong for oscillating f (cos, sin),
    whose value at √p is not the mean over the O(1) fluctuation of ``‖x‖²/√p`` — use
    :func:`diagonal_constant`.
    """
    p = sp.sympify(p)
    return f_centred.subs(var, sp.sqrt(p)) / sp.sqrt(p)


def diagonal_constant(f_centred: sp.Expr, var: sp.Symbol, p, dps: int = 30):
    r"""``κ(p) = E[f(√p + √2 ξ)]/√p``: mean diagonal of ``K_X`` in kept-diagonal mode (§4.3).

    At μ = 0 and W = I the diagonal entry is ``f(‖x_i‖²/√p)/√p`` with
    ``‖x_i‖²/√p = √p + √2 ξ + O(p^{-1/2})`` (χ²_p has mean p, variance 2p).  Keeping the Gaussian
    fluctuation gives the spec's leading term ``f(√p)/√p`` (:func:`diagonal_constant_leading`) for
    slowly varying f, and the right value for oscillating f: cos at p = 1000 gives −0.0078 (MC:
    −0.0079) where ``f(√p)/√p`` gives +0.0118.  Returned as an ``mpf`` at ``dps`` digits, from the
    Gaussian-expectation engine (exact when SymPy can integrate, quadrature split at kinks else).
    """
    import mpmath

    from attnlimits.symbolic.hermite import hermite_coefficients
    from attnlimits.symbolic.hermite import t as xi

    p = sp.sympify(p)
    g = f_centred.subs(var, sp.sqrt(p) + sp.sqrt(2) * xi)
    with mpmath.workdps(dps):
        root_p = mpmath.sqrt(mpmath.mpf(int(p)) if p.is_Integer else mpmath.mpf(str(p)))
        return hermite_coefficients(g, dps=dps, parseval_order=2).a0 / root_p


# ------------------------------------------------------------------------------------------------
# code-generation model: every kernel of the solver, generated from the expressions above


def _outer_margins():
    out = []
    for inv in outer_invariants:
        rel = inv.expr
        out.append(rel.lhs - rel.rhs if isinstance(rel, (sp.StrictGreaterThan, sp.GreaterThan))
                   else rel.rhs - rel.lhs)
    return out


def _build_kernels():
    from attnlimits.symbolic.codegen import Kernel

    Gam1, Om1 = reduced_geometry_rank1()
    GamL, OmL = reduced_geometry_general()
    ks = [
        Kernel("law_theta", [c, theta], [law.theta_to_t(theta), law.theta_weight(theta)],
               doc="MP node map t(θ) and θ-density (docs/attention_rmt.md §9)."),
        Kernel("law_masses", [c], [law.continuous_mass(), law.atom_mass()],
               doc="Continuous mass min(1, c) and atom 1 − c at t = 0 (c < 1)."),
        *bulk_system.kernels([gamma]),
        Kernel("rmt_mu_coordinate", [snr], [sp.sqrt(snr)], doc="m₁ = ‖μ‖ = √SNR."),
        Kernel("rmt_geometry_rank1", [m_vec, omega_K, omega_Q, r], [Gam1, Om1],
               doc="Γ = I + m mᵀ, Ω = I + ω_K ω_Qᵀ (§5).", use_cse=False),
        Kernel("rmt_geometry_general", [m_vec, L_red, r], [GamL, OmL],
               doc="Γ = I + m mᵀ, Ω = I + U_sᵀ L U_s (§5, §6).", use_cse=False),
        Kernel("rmt_outer", [*q, *q_rate, c, gamma, a1, m_vec, Gamma_mat, Omega_mat, r],
               [ybar, ybar_rate, error_attention, *_outer_margins()],
               doc="ȳ, dȳ/dγ and Ē = −γ² dȳ/dγ by Woodbury (§6), then invariant margins (§9).",
               use_cse=False),
        Kernel("rmt_ridge", [c, gamma, snr], [error_ridge, ridge_ybar],
               doc="Ridge baseline Ē_RR = γ² D'/D², ȳ_RR = 1/D (§7, Proposition 2)."),
    ]
    return ks


def _model_expressions():
    return [*bulk_system.updates, *bulk_system.observables.values(), ybar, error_ridge,
            law.theta_to_t(theta), law.theta_weight(theta)]


def driver_data() -> dict:
    """What the portable driver (:mod:`attnlimits.numeric.portable_driver`) does with the kernels: plain data.

    Sweep γ from large to small with Hermite extrapolation of (γA₁₁, A₁₂, A₂₂) in log γ; the
    traces q₀…q₅ and their γ-rates feed the outer Woodbury stage ``rmt_outer`` (§6) whose margins
    are the invariants of §9; the ridge baseline is the closed form ``rmt_ridge`` (§7); Ē carries
    a quadrature error estimate and must be non-decreasing in γ.
    """
    from .result import DIGITS_CHECK, NODES_CHECK  # the command's bounds, carried by the exported file

    return {
        "system": bulk_system.name,
        "unknowns": [s.name for s in bulk_system.unknowns],
        "parameters": [s.name for s in bulk_system.parameters],
        "invariants": [i.name for i in bulk_system.invariants],
        "observables": list(bulk_system.observables),
        "sweep": gamma.name,
        "order": "descending",
        "law_parameter": c.name,
        "ladder": (6, 14),  # mpmath node ladder: degree d has about 3·2^(d−1) nodes (midpoint, or graded
        #                    Gauss–Legendre panels near c = 1: symbolic/_runtime_mpmath.py); 14 for small γ there
        "predictor": {"kind": "hermite_log", "exponents": [1, 0, 0]},  # γA₁₁, A₁₂, A₂₂ smooth in log γ
        "jump": 3,
        "outer": {
            "kernel": "rmt_outer", "n_rates": len(q), "params": [c.name, gamma.name, a1.name],
            "outputs": ["ybar", "ybar_rate", "E_attention"], "margins": [i.name for i in outer_invariants],
            "hint": "continue from large gamma (give a denser gamma grid) or report the parameters",
        },
        "closed_forms": [{"kernel": "rmt_ridge", "params": [c.name, gamma.name, snr.name],
                          "outputs": ["E_ridge", "ybar_ridge"]}],
        "error": {"output": "E_attention", "name": "quadrature_error"},
        "monotone": {"output": "E_attention", "direction": "nondecreasing", "tol": 1e-10},
        "record": ["gamma", "E_attention", "E_ridge", "ybar", "ybar_ridge", "quadrature_error", "iterations",
                   "method"],
        "columns": ["gamma", "E_attention", "E_ridge", "quadrature_error"],
        "error_columns": ["quadrature_error"],
        "hooks": {"outer_inputs": "geometry_inputs", "run": "run_cli"},
        "cli": [
            {"name": "c", "required": True, "help": "aspect ratio p/n (> 0)"},
            {"name": "gamma", "required": True, "help": "comma-separated ridge parameters, e.g. 0.01,0.1,1"},
            {"name": "snr", "default": "0", "help": "signal strength ||mu||^2 (default 0)"},
            {"name": "wk", "default": "", "help": "w_K coordinates in a basis whose first vector is mu/||mu||, e.g. 1,0,0"},
            {"name": "wq", "default": "", "help": "w_Q coordinates in the same basis"},
            {"name": "kappa", "default": "0", "help": "diagonal constant kappa (0 = zero-diagonal mode)"},
            {"name": "json", "flag": True, "help": "print a JSON list, one object per gamma"},
            {"name": "nodes", "type": "int", "default": 3000, "backend": "numpy", "check": NODES_CHECK,
             "help": "midpoint nodes of the MP quadrature (float64; default 3000)"},
            {"name": "digits", "type": "int", "default": 30, "backend": "mpmath", "check": DIGITS_CHECK,
             "help": "significant digits (mpmath)"},
        ],
        "description": "Standalone attention-vs-ridge interpolation-error solver for activation {ACTIVATION!r} "
                       "(a1={A1}, nu={NU}; backend {BACKEND}).",
        "example": "--c 0.5 --gamma 0.01,0.1 --snr 1 --wk 1,0 --wq 1,0 --json",
    }


def _make_model():
    from pathlib import Path

    from attnlimits.symbolic.model import GeneratedModel

    return GeneratedModel(
        name="attention_rmt",
        title="Interpolation error of nonlinear attention vs ridge regression (p/n -> c).",
        description="""
        Deterministic equivalents of Liao, Liu, Hou, Zou, Ling, arXiv:2506.18656, as derived in
        attnlimits' docs/attention_rmt.md: bulk fixed point (§5), Woodbury over the reduced
        geometry (§6), ridge baseline (Proposition 2, §7).  E_attention = -gamma^2 d ybar/d gamma
        with the derivative from the implicit-function theorem (no finite differences).
        """,
        build_kernels=_build_kernels,
        driver_path=Path(__file__).with_name("_driver.py"),
        constants={"DRIVER": repr(driver_data())},
        expressions=_model_expressions,
    )


model = _make_model()  #: the :class:`attnlimits.symbolic.model.GeneratedModel` of this result
