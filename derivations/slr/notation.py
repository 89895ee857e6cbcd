"""The notation of single-location regression: code name → (LaTeX, one-line meaning).

One table for the whole result (docs/slr.md §5–§13): ``attnlimits show`` prints every symbol in this
notation and ends each item with a legend of the symbols it uses.  Plain data (no SymPy).  A name
not listed is looked up without its trailing ``_suffix`` parts, each of which becomes a subscript:
``_k``/``_v`` the key/value block, a number the token (``m_hat_k`` is m̂ of the key block,
``chih_1`` is χ̂ of token 1; :func:`attnlimits.symbolic.render.notation_entry`).
"""

NOTATION = {
    "_k": ("k", "key block"),
    "_v": ("v", "value block"),
    "_#": ("{}", "token {}"),
    # model (§3–§5)
    "L": ("L", "sequence length"),
    "nu": (r"\nu", "spike strength"),
    "alpha": (r"\alpha", "sample ratio N/D"),
    "Delta": (r"\Delta", "label noise (standard deviation)"),
    "m": ("m", "teacher overlap of a block (m_k, m_v); in the closed forms of §8 the key overlap m_k"),
    "q": ("q", "self-overlap of a block (q_k, q_v); in the Bayes-optimal prior update the overlap q of §11"),
    "V": ("V", "variance order parameter of a block"),
    "m_k": ("m_{k}", "key overlap with the teacher"),
    "m_v": ("m_{v}", "value overlap with the teacher"),
    "q_k": ("q_{k}", "key self-overlap"),
    "q_v": ("q_{v}", "value self-overlap"),
    "V_k": ("V_{k}", "key variance order parameter"),
    "V_v": ("V_{v}", "value variance order parameter"),
    "A": ("A", "E[σ(χ)_ε*], the weight on the teacher's token"),
    "B": ("B", "E‖σ(χ)‖², the squared norm of the attention weights"),
    # RS prior and channel (§10)
    "lam": (r"\lambda", "ridge strength (in the predecessor's risk, §13: the erf slope)"),
    "m_hat": (r"\hat{m}", "conjugate of m"),
    "q_hat": (r"\hat{q}", "conjugate of q"),
    "V_hat": (r"\hat{V}", "conjugate of V"),
    "chih": (r"\hat{\chi}", "prox point, key field"),
    "zh": (r"\hat{z}", "prox point, value field"),
    "wchi": (r"\omega^{\chi}", "cavity key field"),
    "wz": (r"\omega^{z}", "cavity value field"),
    "chistar": (r"\chi^{*}", "teacher key field"),
    "zstar": (r"z^{*}", "teacher value field"),
    "xi": (r"\xi", "Gaussian part of the cavity key field"),
    "xip": (r"\xi^{\prime}", "Gaussian part of the cavity value field"),
    "trK": (r"\mathrm{tr}\,K", "trace of the χχ block of (I + 𝒱H)⁻¹"),
    "trZ": (r"\mathrm{tr}\,Z", "trace of the zz block of (I + 𝒱H)⁻¹"),
    "gg": (r"\overline{gg}", "Σ_ℓ g_ℓ², g = (χ̂ − ω)/V per sample (averaged over the samples in the update)"),
    "dg": (r"\overline{dg}", "Σ_ℓ ∂g_ℓ/∂ω_ℓ per sample (averaged in the update)"),
    "gx": (r"\overline{gx}", "Σ_ℓ g_ℓ x*_ℓ, g times the teacher field (averaged in the update)"),
    "gxi": (r"\overline{g\xi}", "Σ_ℓ g_ℓ ξ_ℓ, g times the Gaussian part of the cavity field (averaged in the update)"),
    "s": ("s", "√(q − m²), the standard deviation of the Gaussian part of the cavity field"),
    "E_test": (r"E_{\mathrm{test}}", "test error (excess)"),
    "noisy": (r"\mathrm{noisy}", "1 when the test labels carry the noise Δ, else 0"),
    "e": ("e", "training objective per sample (zero-temperature RS free energy over α)"),
    "train_half_sq": (r"\overline{\ell}", "mean training loss ℓ(χ̂, ẑ) at the prox point"),
    "replicon_prior": (r"\mathcal{R}", "replicon of the ridge prior part (RS stable iff < 1)"),
    # population risk (§5, §6, §8)
    "risk": ("R", "population risk"),
    "risk_star": ("R^{*}", "population risk at the optimal value direction"),
    "m_v_star": (r"m_{v}^{*}", "optimal value overlap, A/B"),
    "argmin_m_k": (r"m_{k}^{*}", "the key overlap that minimises the risk"),
    "dB_ds2": (r"{\partial_{s^{2}}B}", "derivative of B in s² (≥ 0: the smallest q_k = m_k² is optimal)"),
    # Bayes-optimal (§11)
    "qhat": (r"\hat{q}", "conjugate of the overlap q (Bayes-optimal)"),
    "I": (r"\mathcal{I}", "integrand of q̂/α over the sample variables"),
    "M": ("M", "log-sum-exp shift (any value; the numeric code takes the maximum)"),
    "g": ("g", "standard normal sample variable of the teacher measure (key fields)"),
    "h": ("h", "standard normal sample variable of the teacher measure (value fields)"),
    "n": ("n", "standard normal sample variable of the teacher measure (label noise)"),
    "E_BO": (r"E_{\mathrm{BO}}", "Bayes-optimal test error"),
    "E_B": (r"E_{B}", "population Bayes risk at SNR ν q_k"),
    "nu_B": (r"\nu_{B}", "the SNR ν q_k at which E_B is taken"),
    "phi": (r"\phi", "RS free entropy of the Bayes-optimal problem"),
    # predecessor (§13)
    "excess_risk": (r"E_{\mathrm{exc}}", "excess risk on the manifold (predecessor paper)"),
    "d": ("d", "token dimension (predecessor paper)"),
    "gamma": (r"\gamma", "standard deviation of the relevant token (predecessor paper)"),
    "kappa": (r"\kappa", "key overlap k·k* (predecessor paper)"),
    "nu_M": (r"\nu_{M}", "value overlap v·v* (the predecessor's ν)"),
}
