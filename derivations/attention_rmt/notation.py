"""The notation of the attention-vs-ridge result: code name → (LaTeX, one-line meaning).

One table for the whole result (docs/attention_rmt.md §2–§8): ``attnlimits show`` prints every
symbol in this notation and ends each item with a legend of the symbols it uses.  Plain data (no
SymPy); a name ``X_1`` not listed is ``X`` with subscript 1 (see
:func:`attnlimits.symbolic.render.notation_entry`).
"""

NOTATION = {
    # model and activation (§2, §4)
    "c": ("c", "aspect ratio p/n"),
    "gamma": (r"\gamma", "ridge parameter of the read-out"),
    "snr": (r"\mathrm{SNR}", "signal strength ‖μ‖²"),
    "t": ("t", "eigenvalue of T, the variable of the Marchenko–Pastur average ⟨·⟩"),
    "p": ("p", "token dimension"),
    "f": ("f", "the centred activation f(t) − a₀"),
    "a0": ("a_{0}", "Hermite coefficient E f(ξ), removed by centring"),
    "a1": ("a_{1}", "first Hermite coefficient E[ξ f(ξ)]"),
    "a2": ("a_{2}", "second Hermite coefficient E[(ξ² − 1) f(ξ)]/√2"),
    "nu": (r"\nu", "E f(ξ)² of the centred activation"),
    "b2": ("b^{2}", "ν − a₁², the nonlinear part of f"),
    "kappa": (r"\kappa", "kept-diagonal constant (0 in zero-diagonal mode)"),
    "kappa_leading": (r"\kappa_{\mathrm{lead}}", "leading form f(√p)/√p of the diagonal constant κ"),
    # bulk equivalent (§5)
    "A11": ("A_{11}", "bulk unknown A₁₁ = ⟨h/Δ⟩"),
    "A12": ("A_{12}", "bulk unknown A₁₂ = ⟨t e/Δ⟩"),
    "A22": ("A_{22}", "bulk unknown A₂₂ = −⟨t g/Δ⟩"),
    "g": ("g", "g = γ − β A₂₂, β = (ν − a₁²)/c"),
    "q0": ("q_{0}", "normalised trace q₀ of the bulk equivalent (§5)"),
    "q1": ("q_{1}", "normalised trace q₁ of the bulk equivalent (§5)"),
    "q2": ("q_{2}", "normalised trace q₂ of the bulk equivalent (§5)"),
    "q3": ("q_{3}", "normalised trace q₃ of the bulk equivalent (§5)"),
    "q4": ("q_{4}", "normalised trace q₄ of the bulk equivalent (§5)"),
    "q5": ("q_{5}", "normalised trace q₅ of the bulk equivalent (§5)"),
    # reduced geometry and the error (§6, §3)
    "r": ("r", "rank of the reduced geometry"),
    "m": ("m", "reduced signal direction m = U_sᵀμ (r × 1)"),
    "Gam": (r"\Gamma", "Γ = I + m mᵀ (r × r)"),
    "Om": (r"\Omega", "Ω = I + U_sᵀ L U_s (r × r)"),
    "wK": (r"\omega_{K}", "reduced key weights U_sᵀ w_K"),
    "wQ": (r"\omega_{Q}", "reduced query weights U_sᵀ w_Q"),
    "Lr": (r"L_{r}", "reduced low-rank weights U_sᵀ L U_s"),
    "ybar": (r"\bar{y}", "limit of yᵀQ(γ)y/n for attention"),
    "ybar_rate": (r"{\partial_{\gamma}\bar{y}}", "dȳ/dγ, through the traces (implicit derivative of §5)"),
    "E_attention": (r"\bar{E}", "interpolation error of attention, −γ² dȳ/dγ"),
    # ridge baseline (§7)
    "mbar": (r"\bar{m}", "Marchenko–Pastur Stieltjes transform at −γ: the positive root of cγm̄² + (1 − c + γ)m̄ = 1"),
    "mbar_prime": (r"\bar{m}^{\prime}", "dm̄/dγ"),
    "ybar_ridge": (r"\bar{y}_{\mathrm{RR}}", "limit of yᵀQ(γ)y/n for ridge regression"),
    "E_ridge": (r"\bar{E}_{\mathrm{RR}}", "interpolation error of ridge regression, −γ² dȳ_RR/dγ"),
    # noise kernel (§4.2)
    "z": ("z", "complex spectral argument"),
    "m_z": ("m(z)", "Stieltjes transform of the zero-diagonal noise kernel"),
    "m_re": (r"\mathrm{Re}\,m", "real part of m(z)"),
    "m_im": (r"\mathrm{Im}\,m", "imaginary part of m(z)"),
    "z_re": (r"\mathrm{Re}\,z", "real part of z"),
    "z_im": (r"\mathrm{Im}\,z", "imaginary part of z"),
    "theta": (r"\theta", "quadrature variable of the Marchenko–Pastur law"),
    # large γ (§8 E)
    "M_1": ("M_{1}", "large-γ coefficient: 1 − Ē = 2M₁/γ + O(γ⁻²)"),
    "M_1^RR": (r"M_{1}^{\mathrm{RR}}", "the same coefficient for ridge regression"),
    "c_star": ("c^{*}", "crossover aspect ratio: attention beats ridge at large γ for c > c*"),
    "epsilon": (r"\varepsilon", "1/γ"),
}
