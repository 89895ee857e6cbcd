"""Every SymPy symbol of the attention-vs-ridge result, defined once (docs/attention_rmt.md §2–§9).

One symbol per name, with one set of assumptions (``tests/derivations/test_symbols.py``).
"""
import sympy as sp

__all__ = ['t', 'c', 'gamma', 'a1', 'nu', 'kappa', 'snr', 'A11', 'A12', 'A22', 'q', 'q_rate', 'r', 'm_vec', 'Gamma_mat', 'Omega_mat', 'omega_K', 'omega_Q', 'L_red', 'z', 'stieltjes_m', 'm_re', 'm_im', 'z_re', 'z_im', 'theta']

t = sp.Symbol("t", nonnegative=True)  #: eigenvalue of T (integration variable)
c = sp.Symbol("c", positive=True)  #: aspect ratio p/n
gamma = sp.Symbol("gamma", positive=True)  #: ridge parameter of the probe
a1 = sp.Symbol("a1", real=True)  #: first Hermite coefficient of f
nu = sp.Symbol("nu", nonnegative=True)  #: E f(ξ)² of the centred f
kappa = sp.Symbol("kappa", real=True)  #: diagonal constant (0 in zero-diagonal mode)
snr = sp.Symbol("snr", nonnegative=True)  #: ‖μ‖²
A11, A12, A22 = sp.symbols("A11 A12 A22", real=True)
q = sp.symbols("q0:6", real=True)  #: the traces as plain symbols for the outer stage
q_rate = sp.symbols("dq0:6", real=True)  #: their γ-derivatives
r = sp.Symbol("r", integer=True, positive=True)  #: dimension of the reduced geometry
m_vec = sp.MatrixSymbol("m", r, 1)  #: m = U_sᵀ μ
Gamma_mat = sp.MatrixSymbol("Gam", r, r)  #: Γ = I + m mᵀ
Omega_mat = sp.MatrixSymbol("Om", r, r)  #: Ω = I + U_sᵀ L U_s
omega_K = sp.MatrixSymbol("wK", r, 1)  #: ω_K = U_sᵀ w_K
omega_Q = sp.MatrixSymbol("wQ", r, 1)  #: ω_Q = U_sᵀ w_Q
L_red = sp.MatrixSymbol("Lr", r, r)  #: U_sᵀ L U_s
z = sp.Symbol("z")  #: complex spectral argument
stieltjes_m = sp.Symbol("m_z")  #: Stieltjes transform of the zero-diagonal noise kernel K_N
m_re, m_im, z_re, z_im = sp.symbols("m_re m_im z_re z_im", real=True)
theta = sp.Symbol("theta", real=True)  #: quadrature variable of the MP law (§9)
