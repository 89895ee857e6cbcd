r"""Replica-symmetric (RS) theory of ridge ERM for single-location regression, written once in SymPy.

Source: O. Duranthon, P. Marion, C. Boyer, B. Loureiro, L. Zdeborová, arXiv:2509.21936 ([D]),
finite-sample theory (RS equations (18)–(25) of v1); the system here is the independent derivation
of ``docs/slr.md`` §10 (section numbers below refer to it).

Objective (§10.1, ``half_sum``)
-------------------------------
.. math::  \tfrac12\sum_{\mu=1}^{N}(y_\mu-\sigma(\chi_\mu)^\top z_\mu)^2+\tfrac\lambda2(\|k\|^2+\|v\|^2),
           \qquad N=\alpha D,

on the manifold :math:`\mathcal M`, with unknowns :math:`(m_b,q_b,V_b)`, :math:`b\in\{k,v\}`, and
their conjugates :math:`(\hat m_b,\hat q_b,\hat V_b)`.

What this module derives (nothing of the channel is typed per activation)
------------------------------------------------------------------------
- :func:`prior_update` — the ridge prior part per block (§10.2), from the scalar RS prior problem
  :math:`w=\arg\min_w\frac{\lambda+\hat V}{2}w^2-(\hat m x^*+\sqrt{\hat q}\xi)w` and Wick's theorem:
  :math:`V=1/(\lambda+\hat V)`, :math:`m=\hat m/(\lambda+\hat V)`, :math:`q=(\hat m^2+\hat q)/(\lambda+\hat V)^2`.
- :func:`z_elimination` — the quadratic :math:`z`-step of the per-sample proximal problem (§10.3):
  stationarity in :math:`z` makes :math:`z-\omega^z` parallel to :math:`\sigma`, one scalar linear
  equation gives the residual, and the reduced objective
  :math:`F(\chi)=\frac{r(\chi)^2}{2(1+V_v\|\sigma\|^2)}+\frac{\|\chi-\omega^\chi\|^2}{2V_k}`.
- :func:`loss_hessian` — gradient and the :math:`2L\times2L` Hessian of
  :math:`\ell(\chi,z)=\frac12(\sigma(\chi)^\top z-y)^2` (with the :math:`\nabla^2\sigma` contractions), by
  SymPy from the activation's expression.
- :func:`affine_residual_polynomial` — for the linear variants, stationarity gives :math:`\chi,z` as
  rational functions of :math:`t=\sigma^\top z-y` and :math:`t` solves one polynomial (degree 5 for
  ``linear_uncentred``), derived by SymPy (§10.6 last bullet).
- :func:`channel_integrands` and :func:`conjugate_update` — the per-sample integrands of §10.4 in the
  Jacobian form :math:`\partial g/\partial\omega=\mathcal V^{-1}[(I+\mathcal VH)^{-1}-I]` and in Stein's
  form :math:`\mathbb E[\xi g]=s\,\mathbb E[\partial g/\partial\omega]`, and the updates
  :math:`\hat q=\alpha\mathbb E\sum g^2`, :math:`\hat V=-\alpha\mathbb E\sum\partial g/\partial\omega`,
  :math:`\hat m=\alpha\mathbb E\sum g\,x^*+m\hat V`.
- :func:`test_error` — §10.5, :math:`E=1-2m_vA+q_vB` (+ :math:`\Delta^2` under ``noisy``), and the training
  residual :math:`y-\sigma(\hat\chi)^\top\hat z=r/(1+V_v\|\sigma\|^2)`.

:func:`replica_kernels` assembles them into :class:`attnlimits.symbolic.codegen.Kernel` objects for one
activation and length; :mod:`attnlimits.numeric.slr.rs` solves the fixed point with them (it never imports
this module).  Activations with a learned scalar (``erf_learned``, ``softplus_norm_bias``) are not
covered by this RS (§17.5) and are refused with :class:`attnlimits.symbolic.result.InputError`.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from attnlimits.symbolic.codegen import Kernel
from attnlimits.symbolic.gaussian import wick_expectation
from attnlimits.symbolic.result import InputError

from .population import activation, sigma_vector

__all__ = [
    "RS_UNKNOWNS", "RS_CONJUGATES", "check_activation", "prior_update", "z_elimination", "reduced_objective",
    "loss_hessian", "affine_structure", "affine_residual_polynomial", "channel_integrands",
    "conjugate_update", "test_error", "training_residual", "replica_kernels", "kernel_key",
    "prior_energy", "moreau_envelope_average", "rs_energy", "prox_jacobian", "replicon_operator", "replicon_prior",
    "residual_elimination", "joint_objective", "general_loss_hessian", "rs_energy_ridges",
]

from .symbols import Delta, alpha, m_k, m_v, q_k, q_v  # noqa: E402  (shared, one definition)

RS_UNKNOWNS = ("m_k", "q_k", "V_k", "m_v", "q_v", "V_v")  #: order parameters of §10.1
RS_CONJUGATES = ("m_hat_k", "q_hat_k", "V_hat_k", "m_hat_v", "q_hat_v", "V_hat_v")

lam = sp.Symbol("lam", positive=True)  #: ridge strength λ
y = sp.Symbol("y", real=True)
V_k, V_v = sp.symbols("V_k V_v", positive=True)
m_hat, q_hat, V_hat = sp.symbols("m_hat q_hat V_hat", real=True)


def _vec(name, L):
    return sp.symbols(f"{name}_1:{int(L) + 1}", real=True)


def check_activation(act):
    """The activation, refused (``InputError``) when it has a learned scalar (§17.5)."""
    a = activation(act)
    if a.extra_learned:
        raise InputError(f"activation {a.name!r} has a learned scalar ({a.extra_name}); the RS theory of §10 "
                         "covers fixed scalars only (docs/slr.md §17.5): use the *_fixed / softplus_norm variant with "
                         "the scalar as a parameter")
    return a


def _extra_value(a, extra):
    if a.extra is None:
        return None
    v = a.extra_default if extra is None else extra
    return sp.nsimplify(str(v), rational=True) if not isinstance(v, sp.Basic) else v


# =============================================================================================
# §10.2 prior part
# =============================================================================================

@lru_cache(maxsize=None)
def prior_update():
    r"""Ridge prior part per block (§10.2), derived.

    The RS prior problem for one coordinate of a block, with the teacher coordinate
    :math:`x^*\sim\mathcal N(0,1)` (:math:`\|k^*\|^2=D`) and :math:`\xi\sim\mathcal N(0,1)`:

    .. math:: \hat w(b)=\arg\min_w\Big[\frac{\lambda+\hat V}{2}w^2-b\,w\Big],\qquad b=\hat m x^*+\sqrt{\hat q}\,\xi,

    and :math:`m=\mathbb E[\hat w x^*]`, :math:`q=\mathbb E[\hat w^2]`, :math:`V=\partial\hat w/\partial b`.

    Returns ``{"m": ..., "q": ..., "V": ...}`` in the symbols ``m_hat, q_hat, V_hat, lam``.
    """
    w, b, xs, xi = sp.symbols("w b x_star xi", real=True)
    sq = sp.Symbol("sqrt_q_hat", nonnegative=True)
    pot = (lam + V_hat) / 2 * w ** 2 - b * w
    (w_hat,) = sp.solve(sp.diff(pot, w), w)
    field = m_hat * xs + sq * xi
    wf = w_hat.subs(b, field)
    cov = sp.eye(2)
    m = wick_expectation(sp.expand(wf * xs), (xs, xi), [0, 0], cov)
    q = wick_expectation(sp.expand(wf ** 2), (xs, xi), [0, 0], cov).subs(sq, sp.sqrt(q_hat))
    V = sp.diff(w_hat, b)
    return {"m": sp.simplify(m), "q": sp.factor(sp.simplify(q)), "V": sp.simplify(V)}


# =============================================================================================
# §10.3 channel part: the per-sample proximal problem
# =============================================================================================

@lru_cache(maxsize=None)
def z_elimination(L: int):
    r"""The quadratic :math:`z`-step of the proximal problem (§10.3), for a concrete length.

    With :math:`s=\sigma(\chi)` held as free symbols, :math:`\partial_z` of
    :math:`\frac12(s^\top z-y)^2+\|z-\omega^z\|^2/(2V_v)` vanishes iff :math:`z=\omega^z-V_v e\,s` with
    :math:`e=s^\top z-y`; substituting back gives one linear equation for :math:`e`, solved by SymPy:
    :math:`e=-r/(1+V_v\|s\|^2)`, :math:`r=y-s^\top\omega^z`.

    Returns ``(s, wz, z_hat, e_hat, F_z)``: the symbols of :math:`s` and :math:`\omega^z`, the
    minimiser :math:`\hat z(s)`, the residual :math:`e` and the minimum value of the :math:`z`-part
    (:math:`r^2/(2(1+V_v\|s\|^2))`, simplified).
    """
    s, wz = _vec("s", L), _vec("wz", L)
    e = sp.Symbol("e", real=True)
    z_of_e = [wz[i] - V_v * e * s[i] for i in range(L)]  # ∂_z = 0 ⇔ e s + (z − ω)/V_v = 0
    (e_hat,) = sp.solve(sp.Eq(e, sum(s[i] * z_of_e[i] for i in range(L)) - y), e)
    z_hat = [sp.simplify(zi.subs(e, e_hat)) for zi in z_of_e]
    obj = sp.Rational(1, 2) * (sum(s[i] * z_hat[i] for i in range(L)) - y) ** 2 + \
        sum((z_hat[i] - wz[i]) ** 2 for i in range(L)) / (2 * V_v)
    F_z = sp.factor(sp.cancel(sp.together(obj)))
    return s, wz, z_hat, sp.factor(e_hat), F_z


def reduced_objective(act, L: int, extra=None):
    r""":math:`F(\chi)=\frac{r(\chi)^2}{2(1+V_v\|\sigma(\chi)\|^2)}+\frac{\|\chi-\omega^\chi\|^2}{2V_k}` (§10.3).

    Returns ``(chi, wchi, wz, F, z_hat)`` with ``z_hat`` the minimising :math:`z` as a function of
    :math:`\chi` (the expressions of :func:`z_elimination` at :math:`s=\sigma(\chi)`).
    """
    a = check_activation(act)
    L = int(L)
    chi, wchi = _vec("chi", L), _vec("wchi", L)
    sig = sigma_vector(a, L, chi, _extra_value(a, extra))
    s, wz, z_hat, _, F_z = z_elimination(L)
    sub = dict(zip(s, list(sig)))
    F = F_z.subs(sub) + sum((chi[i] - wchi[i]) ** 2 for i in range(L)) / (2 * V_k)
    return chi, wchi, wz, F, [zi.subs(sub) for zi in z_hat]


def loss_hessian(act, L: int, extra=None):
    r"""Per-sample loss :math:`\ell(\chi,z)=\frac12(\sigma(\chi)^\top z-y)^2`, its gradient and its
    :math:`2L\times2L` Hessian in :math:`(\chi,z)` (§10.3 step 5), by SymPy.

    Blocks, for reference: :math:`H_{\chi\chi}=uu^\top+e\sum_iz_i\nabla^2\sigma_i`,
    :math:`H_{\chi z}=u\sigma^\top+eJ^\top`, :math:`H_{zz}=\sigma\sigma^\top` with :math:`e=\sigma^\top z-y`,
    :math:`u=J^\top z`; they are not typed here but come out of ``sympy.hessian``.

    Returns ``(chi, z, sigma, loss, grad, H)``.
    """
    a = check_activation(act)
    L = int(L)
    chi, z = _vec("chi", L), _vec("z", L)
    sig = sigma_vector(a, L, chi, _extra_value(a, extra))
    ell = sp.Rational(1, 2) * (sum(sig[i] * z[i] for i in range(L)) - y) ** 2
    xs = list(chi) + list(z)
    grad = [sp.diff(ell, v) for v in xs]
    H = sp.hessian(ell, xs)
    return chi, z, sig, ell, grad, H


def shift_invariant(act, L: int, extra=None) -> bool:
    r"""Whether SymPy proves :math:`\sigma(\chi+c\mathbf 1)=\sigma(\chi)` (softmax): then
    :math:`\sum_j\partial\sigma_i/\partial\chi_j\equiv0`, the prox offset :math:`\hat\chi-\omega^\chi` is
    orthogonal to :math:`\mathbf 1` (§10.3), and the multistart needs rays in :math:`\mathbf 1^\perp` only.
    ``False`` when the simplification does not prove it (a user expression): the full multistart."""
    a = check_activation(act)
    L = int(L)
    chi = _vec("chi", L)
    sig = sigma_vector(a, L, chi, _extra_value(a, extra))
    try:
        return all(sp.simplify(sum(sp.diff(s_, c) for c in chi)) == 0 for s_ in sig)
    except Exception:  # noqa: BLE001 — a simplification SymPy cannot do proves nothing
        return False


# =============================================================================================
# §10.3 for any per-sample loss: the value fields reduce to the residual, solved jointly with χ
# =============================================================================================

@lru_cache(maxsize=None)
def residual_elimination(L: int):
    r"""The value-field part of the prox for *any* per-sample loss :math:`\rho` of the residual (§10.3).

    :math:`\min_z\rho(y-s^\top z)+\|z-\omega^z\|^2/(2V_v)`: the penalty is isotropic and the loss sees
    :math:`z` only through :math:`s^\top z`, so at a fixed residual :math:`r=y-s^\top z` the best :math:`z`
    moves from :math:`\omega^z` along :math:`s` only (stationarity: :math:`z-\omega^z=V_v\rho'(r)\,s`):
    :math:`z=\omega^z+c\,s` with :math:`c` from the linear constraint, solved by SymPy,
    :math:`c=(r_0-r)/\|s\|^2`, :math:`r_0=y-s^\top\omega^z`.  What is left is one scalar,

    .. math:: \min_z(\dots)=\min_r\Big[\rho(r)+\frac{(r-r_0)^2}{2V_v\|s\|^2}\Big],

    the Moreau envelope of :math:`\rho` with parameter :math:`V_v\|s\|^2`; for :math:`\rho=r^2/2` its minimiser is
    :math:`r=r_0/(1+V_v\|s\|^2)`, the closed form of :func:`z_elimination`.  For another loss :math:`r` stays an
    unknown of the prox, minimised jointly with :math:`\chi` (:func:`joint_objective`).

    Returns ``(s, wz, r, z_of_r, penalty)``: ``z_of_r`` the best :math:`z` at residual ``r`` and ``penalty``
    :math:`\|z-\omega^z\|^2/(2V_v)` there, in the symbols ``s, wz, r, y, V_v``.
    """
    s, wz = _vec("s", L), _vec("wz", L)
    r, c = sp.symbols("r c", real=True)
    z_of_c = [wz[i] + c * s[i] for i in range(L)]
    (c_hat,) = sp.solve(sp.Eq(r, y - sum(s[i] * z_of_c[i] for i in range(L))), c)
    z_of_r = [sp.simplify(zi.subs(c, c_hat)) for zi in z_of_c]
    penalty = sp.factor(sp.simplify(sum((z_of_r[i] - wz[i]) ** 2 for i in range(L)) / (2 * V_v)))
    return s, wz, r, z_of_r, penalty


def joint_objective(act, L: int, extra=None, loss="square"):
    r"""The prox objective of a general loss in the joint unknowns :math:`(\chi,r)` (§10.3):

    .. math:: \Phi(\chi,r)=\rho(r)+\frac{(r-r_0(\chi))^2}{2V_v\|\sigma(\chi)\|^2}+\frac{\|\chi-\omega^\chi\|^2}{2V_k},
              \qquad r_0(\chi)=y-\sigma(\chi)^\top\omega^z,

    from :func:`residual_elimination` at :math:`s=\sigma(\chi)`; :math:`\min_{\chi,r}\Phi` is the prox over key
    and value fields, and :math:`\hat z=\omega^z+(r_0-\hat r)\sigma/\|\sigma\|^2`.

    Returns ``(x, wx, wz, Phi, z_hat)`` with ``x = chi + (r,)`` and ``wx = wchi + (wr,)`` (``wr``: where the
    residual's multistart begins; :math:`\Phi` does not depend on it).
    """
    from .losses import parse_loss, residual as rsym

    a = check_activation(act)
    L = int(L)
    lo = parse_loss(loss if isinstance(loss, str) else loss.name)
    chi, wchi = _vec("chi", L), _vec("wchi", L)
    sig = sigma_vector(a, L, chi, _extra_value(a, extra))
    s, wz, r, z_of_r, penalty = residual_elimination(L)
    sub = dict(zip(s, list(sig)))
    wr = sp.Symbol("wr", real=True)
    Phi = lo.expr.subs(rsym, r) + penalty.subs(sub) + sum((chi[i] - wchi[i]) ** 2 for i in range(L)) / (2 * V_k)
    return tuple(chi) + (r,), tuple(wchi) + (wr,), wz, Phi, [zi.subs(sub) for zi in z_of_r]


def general_loss_hessian(act, L: int, extra=None, loss="square"):
    r"""Per-sample loss :math:`\ell(\chi,z)=\rho(y-\sigma(\chi)^\top z)` and its :math:`2L\times2L` Hessian in
    :math:`(\chi,z)` (§10.3 step 5), almost everywhere: with :math:`e=y-\sigma^\top z`,
    :math:`H=\rho''(e)\nabla e\nabla e^\top+\rho'(e)\nabla^2e` (SymPy differentiates :math:`e`; :math:`\rho',\rho''`
    from :func:`attnlimits.derivations.slr.losses.loss_derivative`).  For ``square`` it is :func:`loss_hessian`'s.

    Returns ``(chi, z, sigma, loss, H)``.
    """
    from .losses import loss_derivative, parse_loss, residual as rsym

    a = check_activation(act)
    L = int(L)
    lo = parse_loss(loss if isinstance(loss, str) else loss.name)
    chi, z = _vec("chi", L), _vec("z", L)
    sig = sigma_vector(a, L, chi, _extra_value(a, extra))
    e = y - sum(sig[i] * z[i] for i in range(L))
    xs = list(chi) + list(z)
    de = [sp.diff(e, v) for v in xs]
    d2e = sp.hessian(e, xs)
    r1, r2 = loss_derivative(lo, 1).subs(rsym, e), loss_derivative(lo, 2).subs(rsym, e)
    H = sp.Matrix(2 * L, 2 * L, lambda i, j: r2 * de[i] * de[j] + r1 * d2e[i, j])
    return chi, z, sig, lo.expr.subs(rsym, e), H


# =============================================================================================
# §10.6: the exact prox of affine (linear) activations
# =============================================================================================

def affine_structure(act, L: int):
    r"""For an affine activation, :math:`\sigma(\chi)=a\mathbf 1+J\chi` with :math:`J` symmetric and
    acting as :math:`j_\parallel` on :math:`\mathbf 1` and :math:`j_\perp` on :math:`\mathbf 1^\perp`.

    Derived from ``sigma_vector``: :math:`a=\sigma(0)_1`, :math:`J=\partial\sigma/\partial\chi`, and the two
    eigenvalues read off :math:`J\mathbf 1` and :math:`J(e_1-e_2)`.  Returns ``(a, j_par, j_perp)``.
    """
    a_ = activation(act)
    if a_.kind != "affine":
        raise InputError(f"{a_.name!r} is not affine; the exact polynomial prox applies to linear variants")
    L = int(L)
    chi = _vec("chi", L)
    sig = sigma_vector(a_, L, chi)
    J = sig.jacobian(chi)
    if any(sp.diff(J, c) != sp.zeros(L, L) for c in chi):
        raise InputError(f"{a_.name!r}: σ is not affine in χ")
    a0 = sig.subs({c: 0 for c in chi})
    if len(set(a0)) != 1 or J != J.T:
        raise InputError(f"{a_.name!r}: the affine structure a·1 + Jχ with symmetric exchangeable J is required")
    one = sp.ones(L, 1)
    j_par = sp.simplify((J * one)[0])
    e12 = sp.zeros(L, 1)
    e12[0], e12[1] = 1, -1
    j_perp = sp.simplify((J * e12)[0])
    assert sp.simplify(J * one - j_par * one) == sp.zeros(L, 1)
    assert sp.simplify(J * e12 - j_perp * e12) == sp.zeros(L, 1)
    return sp.S(a0[0]), j_par, j_perp


@lru_cache(maxsize=None)
def _component_solution():
    r"""Stationarity of the full prox objective in one invariant subspace, given :math:`t=e`.

    In a 1-D component with weight offset :math:`a_s` and eigenvalue :math:`j` of :math:`J`:
    :math:`t(a_s+j\chi_s)+(z_s-\omega^z_s)/V_v=0` and :math:`t\,j\,z_s+(\chi_s-\omega^\chi_s)/V_k=0`
    (the gradients of :math:`\ell+\|\chi-\omega^\chi\|^2/2V_k+\|z-\omega^z\|^2/2V_v`).  Linear in
    :math:`(\chi_s,z_s)`: solved by SymPy.
    """
    t, a_s, j, wc, wzs, cs, zs = sp.symbols("t a_s j omega_chi omega_z chi_s z_s", real=True)
    sol = sp.solve([t * (a_s + j * cs) + (zs - wzs) / V_v, t * j * zs + (cs - wc) / V_k], [cs, zs], dict=True)[0]
    return (t, a_s, j, wc, wzs), sp.factor(sol[cs]), sp.factor(sol[zs])


_AFFINE_POLYNOMIALS: dict = {}  #: by (activation name, L); the resolved activation builds them


def affine_residual_polynomial(act, L: int):
    r"""The exact prox of a linear variant (§10.6): fields as functions of :math:`t` and the polynomial in :math:`t`.

    :math:`\mathbb R^L=\mathrm{span}(\mathbf 1)\oplus\mathbf 1^\perp`; on each part :func:`_component_solution`
    gives :math:`\chi,z` linear in :math:`(\omega^\chi,\omega^z)` with coefficients rational in
    :math:`t=\sigma(\chi)^\top z-y`; the self-consistency :math:`t=\sigma(\chi(t))^\top z(t)-y`, cleared of
    denominators, is a polynomial :math:`P(t)=0` whose real roots are all stationary points.

    Returns ``(t, wchi, wz, chi_of_t, z_of_t, coeffs)`` with ``coeffs`` the coefficients of
    :math:`P`, highest degree first (expressions in ``wchi, wz, y, V_k, V_v``).
    """
    a = check_activation(act)
    key = (a.name, int(L))
    if key not in _AFFINE_POLYNOMIALS:
        _AFFINE_POLYNOMIALS[key] = _affine_residual_polynomial(a, int(L))
    return _AFFINE_POLYNOMIALS[key]


def _affine_residual_polynomial(act, L: int):
    a0, j_par, j_perp = affine_structure(act, L)
    (t, a_s, j, wc, wzs), c_sol, z_sol = _component_solution()
    wchi, wz = _vec("wchi", L), _vec("wz", L)
    sqL = sp.sqrt(L)
    # parallel coordinates along u = 1/√L
    pc, pz = sum(wchi) / sqL, sum(wz) / sqL
    chi_par = c_sol.subs({a_s: a0 * sqL, j: j_par, wc: pc, wzs: pz})
    z_par = z_sol.subs({a_s: a0 * sqL, j: j_par, wc: pc, wzs: pz})
    # perpendicular part: linear, offset 0, eigenvalue j_perp; coefficients of ω^χ_⊥ and ω^z_⊥
    cp = c_sol.subs({a_s: 0, j: j_perp})
    zp = z_sol.subs({a_s: 0, j: j_perp})
    cc, cz = sp.diff(cp, wc), sp.diff(cp, wzs)
    zc, zz = sp.diff(zp, wc), sp.diff(zp, wzs)
    mc, mz = sum(wchi) / L, sum(wz) / L
    perp_c = [wchi[i] - mc for i in range(L)]
    perp_z = [wz[i] - mz for i in range(L)]
    chi_t = [chi_par / sqL + cc * perp_c[i] + cz * perp_z[i] for i in range(L)]
    z_t = [z_par / sqL + zc * perp_c[i] + zz * perp_z[i] for i in range(L)]
    # self-consistency in invariants (A = |ω^χ_⊥|², B = ⟨ω^χ_⊥, ω^z_⊥⟩, C = |ω^z_⊥|²)
    A, B, C = sp.symbols("A_perp B_perp C_perp", real=True)
    sig_par = a0 * sqL + j_par * chi_par
    perp_dot = j_perp * (cc * zc * A + (cc * zz + cz * zc) * B + cz * zz * C)
    e_t = sig_par * z_par + perp_dot - y
    num = sp.numer(sp.together(e_t - t))
    poly = sp.Poly(sp.expand(num), t)
    inv = {A: sum(p * p for p in perp_c), B: sum(perp_c[i] * perp_z[i] for i in range(L)),
           C: sum(p * p for p in perp_z)}
    coeffs = [sp.expand(c).subs(inv) for c in poly.all_coeffs()]
    return t, wchi, wz, chi_t, z_t, coeffs


# =============================================================================================
# §10.4 conjugate updates and §10.5 observables
# =============================================================================================

@lru_cache(maxsize=None)
def channel_integrands(L: int):
    r"""Per-sample integrands of the conjugate updates (§10.4), both forms.

    Inputs (symbols, per sample): prox point :math:`\hat\chi,\hat z`, cavity fields
    :math:`\omega^\chi,\omega^z`, teacher fields :math:`\chi^*,z^*`, the Gaussian parts
    :math:`\xi,\xi'` of the cavity fields, and the traces ``trK``, ``trZ`` of the
    :math:`\chi\chi` and :math:`zz` blocks of :math:`(I+\mathcal VH)^{-1}`.

    Outputs (to be averaged, then fed to :func:`conjugate_update`):

    - ``gg_k`` :math:`=\sum_\ell(g^\chi_\ell)^2`, ``gg_v`` likewise;
    - ``dg_k`` :math:`=\sum_\ell\partial g^\chi_\ell/\partial\omega^\chi_\ell=(\mathrm{tr}K-L)/V_k`, ``dg_v``;
    - ``gx_k`` :math:`=\sum_\ell g^\chi_\ell\chi^*_\ell`, ``gx_v`` :math:`=\sum_\ell g^z_\ell z^*_\ell`;
    - ``gxi_k`` :math:`=\sum_\ell g^\chi_\ell\xi_\ell` (Stein: :math:`\mathbb E[\xi g]=s\,\mathbb E[\partial g/\partial\omega]`), ``gxi_v``.
    """
    L = int(L)
    ch, zh, wc, wz = _vec("chih", L), _vec("zh", L), _vec("wchi", L), _vec("wz", L)
    cs, zs, xi, xip = _vec("chistar", L), _vec("zstar", L), _vec("xi", L), _vec("xip", L)
    trK, trZ = sp.symbols("trK trZ", real=True)
    gk = [(ch[i] - wc[i]) / V_k for i in range(L)]
    gv = [(zh[i] - wz[i]) / V_v for i in range(L)]
    # ∂g/∂ω = V^{-1}[(I + V H)^{-1} − I]: diagonal blocks' traces
    out = {
        "gg_k": sum(g * g for g in gk), "gg_v": sum(g * g for g in gv),
        "dg_k": (trK - L) / V_k, "dg_v": (trZ - L) / V_v,
        "gx_k": sum(gk[i] * cs[i] for i in range(L)), "gx_v": sum(gv[i] * zs[i] for i in range(L)),
        "gxi_k": sum(gk[i] * xi[i] for i in range(L)), "gxi_v": sum(gv[i] * xip[i] for i in range(L)),
    }
    inputs = list(ch) + list(zh) + list(wc) + list(wz) + list(cs) + list(zs) + list(xi) + list(xip) + \
        [trK, trZ, V_k, V_v]
    return inputs, out


@lru_cache(maxsize=None)
def conjugate_update(form: str = "stein"):
    r"""Conjugates from the averaged integrands (§10.4), per block :math:`b`.

    ``stein`` (the default, and the RS equations themselves): the derivatives of the channel free
    energy :math:`\Phi_b(m,q,V)=\mathbb E\,\mathcal M(\omega)`, :math:`\mathcal M` the Moreau envelope of
    the per-sample loss (the prox objective at its minimum) and
    :math:`\omega=m\,x^*+\sqrt{q-m^2}\,\xi` the cavity field.  By the envelope theorem
    :math:`\partial\mathcal M/\partial\omega=-g` and :math:`\partial\mathcal M/\partial V=-\tfrac12\|g\|^2`, so

    .. math:: \hat m=\alpha\,\mathbb E[g^\top\partial_m\omega],\quad
              \hat V=-2\alpha\,\mathbb E[g^\top\partial_q\omega],\quad \hat q=\alpha\,\mathbb E\|g\|^2,

    and SymPy takes :math:`\partial_m\omega,\partial_q\omega` here (giving
    :math:`\hat m=\alpha(\overline{gx}-\tfrac ms\overline{g\xi})`, :math:`\hat V=-\alpha\overline{g\xi}/s`).
    This needs only that :math:`\mathcal M` is continuous, which it is even where the selected prox
    minimum jumps.

    ``jacobian``: the same after Stein's lemma :math:`\mathbb E[\xi g]=s\,\mathbb E[\partial g/\partial\omega]`,
    :math:`\hat V=-\alpha\,\overline{dg}`, :math:`\hat m=\alpha\,\overline{gx}+m\hat V`, with the prox
    Jacobian's :math:`\partial g/\partial\omega`.  The lemma needs :math:`g` weakly differentiable; where
    the selected minimum switches between samples :math:`g` jumps, the a.e. derivative misses the
    jumps and this form is biased (measured: docs/slr.md §10.6; test
    ``test_stein_form_is_the_derivative_of_the_channel_free_energy``).  Kept as a check where the prox
    is single-valued.

    Returns ``(inputs, {"m_hat":..., "q_hat":..., "V_hat":...})`` with inputs
    ``(gg, dg, gx, gxi, m, s, alpha)``.
    """
    gg, dg, gx, gxi, mm = sp.symbols("gg dg gx gxi m", real=True)
    s = sp.Symbol("s", positive=True)
    if form == "stein":
        # ω = m x* + √(q − m²) ξ per coordinate; E[g ∂ω] is linear in the per-sample products g x*, g ξ
        q, xs, xi = sp.symbols("q xstar xi", real=True)
        omega = mm * xs + sp.sqrt(q - mm ** 2) * xi
        on_s = {sp.sqrt(q - mm ** 2): s}

        def average_g_times(d):
            d = sp.expand(d.subs(on_s))
            return d.coeff(xs) * gx + d.coeff(xi) * gxi

        out = {"q_hat": alpha * gg, "V_hat": -2 * alpha * average_g_times(sp.diff(omega, q)),
               "m_hat": alpha * average_g_times(sp.diff(omega, mm))}
    elif form == "jacobian":
        Vh = -alpha * dg
        out = {"q_hat": alpha * gg, "V_hat": Vh, "m_hat": alpha * gx + mm * Vh}
    else:
        raise ValueError("form must be 'stein' or 'jacobian'")
    return (gg, dg, gx, gxi, mm, s, alpha), out


def test_error():
    r"""Test error given the order parameters (§10.5): :math:`E=1-2m_vA+q_vB+\texttt{noisy}\cdot\Delta^2`,
    :math:`A=\mathbb E[\sigma(\chi)_{\varepsilon^*}]`, :math:`B=\mathbb E\|\sigma(\chi)\|^2`,
    :math:`\chi=m_k\chi^*+\sqrt{q_k-m_k^2}\,\eta`.  Returns ``(inputs, expr)``."""
    mv, qv, A, B, noisy = sp.symbols("m_v q_v A B noisy", real=True)
    return (mv, qv, A, B, Delta, noisy), 1 - 2 * mv * A + qv * B + noisy * Delta ** 2


def training_residual(L: int):
    r"""[DU] The training residual at the prox point, :math:`y-\sigma(\hat\chi)^\top\hat z=r/(1+V_v\|\sigma\|^2)`
    (§10.5), from :func:`z_elimination` (``-e_hat``), in the symbols ``s, wz, y, V_v``."""
    s, wz, _, e_hat, _ = z_elimination(int(L))
    return s, wz, -e_hat


# =============================================================================================
# the RS training objective (zero-temperature free energy) and the replicon
# =============================================================================================

@lru_cache(maxsize=None)
def prior_energy():
    r"""Prior (ridge) part of the zero-temperature RS free energy, per coordinate of a block, derived.

    The minimum value of the same scalar prior problem as :func:`prior_update`, averaged over the
    teacher coordinate and the noise:

    .. math:: \Psi_w(\hat m,\hat q,\hat V)=\mathbb E_{x^*,\xi}\min_w\Big[\frac{\lambda+\hat V}{2}w^2
              -(\hat m x^*+\sqrt{\hat q}\,\xi)\,w\Big]=-\frac{\hat m^2+\hat q}{2(\lambda+\hat V)}.
    """
    w, b, xs, xi = sp.symbols("w b x_star xi", real=True)
    sq = sp.Symbol("sqrt_q_hat", nonnegative=True)
    pot = (lam + V_hat) / 2 * w ** 2 - b * w
    (w_hat,) = sp.solve(sp.diff(pot, w), w)
    val = pot.subs(w, w_hat).subs(b, m_hat * xs + sq * xi)
    E = wick_expectation(sp.expand(val), (xs, xi), [0, 0], sp.eye(2)).subs(sq, sp.sqrt(q_hat))
    return sp.simplify(E)


@lru_cache(maxsize=None)
def moreau_envelope_average():
    r"""The channel part of the free energy, :math:`\mathbb E\,\mathcal M(\omega)`, in the averages the
    channel already computes.

    :math:`\mathcal M(\omega)=\min_{\chi,z}\ell(\chi,z)+\frac{\|\chi-\omega^\chi\|^2}{2V_k}+\frac{\|z-\omega^z\|^2}{2V_v}`
    (the prox objective of §10.3 at its minimum).  At the minimiser :math:`\hat\chi-\omega^\chi=V_kg^\chi`,
    :math:`\hat z-\omega^z=V_vg^z`, so :math:`\mathcal M=\ell(\hat\chi,\hat z)+\tfrac{V_k}{2}\|g^\chi\|^2+\tfrac{V_v}{2}\|g^z\|^2`
    and its average is written with ``train_half_sq`` :math:`=\mathbb E\,\ell`, ``gg_k``, ``gg_v``
    (the integrands of :func:`channel_integrands`).  Returns ``(inputs, expr)``.
    """
    ell, gg_k, gg_v = sp.symbols("train_half_sq gg_k gg_v", real=True)
    dchi, dz = sp.symbols("d_chi d_z", real=True)  # ‖χ̂ − ω^χ‖, ‖ẑ − ω^z‖
    M = ell + dchi ** 2 / (2 * V_k) + dz ** 2 / (2 * V_v)
    # ‖χ̂ − ω^χ‖² = V_k²‖g^χ‖² (definition of g, §10.3 step 4), averaged
    M = sp.expand(M).subs({dchi ** 2: V_k ** 2 * gg_k, dz ** 2: V_v ** 2 * gg_v})
    return (ell, gg_k, gg_v, V_k, V_v), sp.simplify(M)


#: the order parameters as everywhere in the result (one symbol per name: ``q`` nonnegative, ``V`` positive)
#: and their conjugates
RS_ENERGY_INPUTS = (m_k, q_k, V_k, m_v, q_v, V_v) + sp.symbols(" ".join(RS_CONJUGATES), real=True)


@lru_cache(maxsize=None)
def rs_energy():
    r"""The RS training objective per sample: the zero-temperature RS free energy divided by α.

    .. math:: \frac{e}{\alpha}=\frac1\alpha\sum_{b\in\{k,v\}}\Big[m_b\hat m_b+\tfrac12\hat q_bV_b
              -\tfrac12\hat V_bq_b+\Psi_w(\hat m_b,\hat q_b,\hat V_b)\Big]+\mathbb E\,\mathcal M(\omega),

    :math:`\Psi_w` from :func:`prior_energy`, :math:`\mathbb E\mathcal M` from
    :func:`moreau_envelope_average`.  :math:`e=\lim_{D\to\infty}\min_{k,v}(\text{objective})/D` under
    RS (the :math:`\beta\to\infty` limit of the replica free energy of the Gibbs measure
    :math:`e^{-\beta\,\text{objective}}`): its stationary points in the conjugates are the prior
    update (:func:`prior_update`), in :math:`(m,q,V)` the conjugate update (:func:`conjugate_update`,
    ``stein``; envelope theorem), and at a fixed point it equals
    :math:`\mathbb E\,\ell(\hat\chi,\hat z)+\lambda(q_k+q_v)/(2\alpha)`, the training objective per
    sample (``tests/derivations/test_slr_replica.py`` checks all three).  Among several fixed points
    the one with the lowest value is the one the global minimiser realises (docs/slr.md §10.7).

    Returns ``(inputs, expr)`` with inputs ``RS_ENERGY_INPUTS + (lam, alpha, train_half_sq, gg_k, gg_v)``.
    """
    mk, qk, Vk_, mv, qv, Vv_, mhk, qhk, Vhk, mhv, qhv, Vhv = RS_ENERGY_INPUTS
    Psi = prior_energy()
    (ell, ggk, ggv, Vk_s, Vv_s), M = moreau_envelope_average()
    M = M.subs({Vk_s: Vk_, Vv_s: Vv_})
    e = 0
    for m, q, V, mh, qh, Vh in ((mk, qk, Vk_, mhk, qhk, Vhk), (mv, qv, Vv_, mhv, qhv, Vhv)):
        e += m * mh + qh * V / 2 - Vh * q / 2 + Psi.subs({m_hat: mh, q_hat: qh, V_hat: Vh})
    expr = e / alpha + M
    return tuple(RS_ENERGY_INPUTS) + (lam, alpha, ell, ggk, ggv), expr


lam_k, lam_v = sp.symbols("lam_k lam_v", positive=True)  #: separate ridges on k and v


@lru_cache(maxsize=None)
def rs_energy_ridges():
    r""":func:`rs_energy` with the ridge :math:`\lambda_k` in the prior part of block k and :math:`\lambda_v` in that of
    block v (the same functional; :func:`rs_energy` is its value at :math:`\lambda_k=\lambda_v=\lambda`).
    Returns ``(inputs, expr)`` with inputs ``RS_ENERGY_INPUTS + (lam_k, lam_v, alpha, train_half_sq, gg_k, gg_v)``;
    ``train_half_sq`` is the average per-sample loss :math:`\mathbb E\,\rho(\hat r)` for any loss."""
    mk, qk, Vk_, mv, qv, Vv_, mhk, qhk, Vhk, mhv, qhv, Vhv = RS_ENERGY_INPUTS
    Psi = prior_energy()
    (ell, ggk, ggv, Vk_s, Vv_s), M = moreau_envelope_average()
    M = M.subs({Vk_s: Vk_, Vv_s: Vv_})
    e = 0
    for m, q, V, mh, qh, Vh, lb in ((mk, qk, Vk_, mhk, qhk, Vhk, lam_k), (mv, qv, Vv_, mhv, qhv, Vhv, lam_v)):
        e += m * mh + qh * V / 2 - Vh * q / 2 + Psi.subs({m_hat: mh, q_hat: qh, V_hat: Vh, lam: lb})
    return tuple(RS_ENERGY_INPUTS) + (lam_k, lam_v, alpha, ell, ggk, ggv), e / alpha + M


def _sym_matrix(name, n):
    """Symmetric n × n matrix of symbols ``name_i_j`` (i ≤ j) and the list of its upper triangle."""
    up = {}
    for i in range(n):
        for j in range(i, n):
            up[(i, j)] = sp.Symbol(f"{name}_{i}_{j}", real=True)
    M = sp.Matrix(n, n, lambda i, j: up[(min(i, j), max(i, j))])
    return M, [up[(i, j)] for i in range(n) for j in range(i, n)]


@lru_cache(maxsize=None)
def prox_jacobian(L: int):
    r""":math:`\partial g/\partial\omega` of the per-sample prox (§10.3 step 5), by implicit differentiation.

    Stationarity of :math:`\ell(h)+\frac12(h-\omega)^\top\mathcal V^{-1}(h-\omega)` in
    :math:`h=(\chi,z)` is :math:`\nabla\ell(h)+\mathcal V^{-1}(h-\omega)=0`; differentiating in
    :math:`\omega` (SymPy, with the loss Hessian :math:`H` as a symbolic symmetric matrix) gives
    :math:`(H+\mathcal V^{-1})\,\partial h/\partial\omega=\mathcal V^{-1}`, so with
    :math:`W=(H+\mathcal V^{-1})^{-1}` (numerical linear algebra per sample, not an equation):
    :math:`\partial h/\partial\omega=W\mathcal V^{-1}` and
    :math:`G=\partial g/\partial\omega=\mathcal V^{-1}(W\mathcal V^{-1}-I)`.

    Returns ``(W_upper_symbols, G)`` with ``G`` a :math:`2L\times2L` SymPy matrix in the symbols
    of ``W`` and ``V_k, V_v``.
    """
    L = int(L)
    n = 2 * L
    Hm, _ = _sym_matrix("H", n)
    Wm, w_up = _sym_matrix("W", n)
    Vinv = sp.diag(*([1 / V_k] * L + [1 / V_v] * L))
    h = sp.Matrix(sp.symbols(f"h_1:{n + 1}", real=True))
    om = sp.Matrix(sp.symbols(f"om_1:{n + 1}", real=True))
    # stationarity, linearised about the prox point: ∇ℓ(h) ≈ ∇ℓ(ĥ) + H (h − ĥ); its ω-derivative
    stat = Hm * h + Vinv * (h - om)
    dS_dh, dS_dom = stat.jacobian(h), stat.jacobian(om)
    assert sp.simplify(dS_dh - (Hm + Vinv)) == sp.zeros(n, n)
    # dh/dω = −(∂S/∂h)⁻¹ ∂S/∂ω, with (∂S/∂h)⁻¹ = W
    dh_dom = -Wm * dS_dom
    G = Vinv * (dh_dom - sp.eye(n))
    return w_up, G


@lru_cache(maxsize=None)
def replicon_prior():
    r"""Prior factor of the replicon: :math:`\mathbb E_{x^*,\xi}[(\partial\hat w/\partial b)^2]` of the ridge
    prior problem of :func:`prior_update` (a constant, :math:`1/(\lambda+\hat V)^2`, for ridge)."""
    w, b, xs, xi = sp.symbols("w b x_star xi", real=True)
    pot = (lam + V_hat) / 2 * w ** 2 - b * w
    (w_hat,) = sp.solve(sp.diff(pot, w), w)
    d = sp.diff(w_hat, b) ** 2
    return sp.simplify(wick_expectation(sp.expand(d), (xs, xi), [0, 0], sp.eye(2)))


REPLICON_BASIS = ("kk", "kv", "vv")  #: coordinates of a symmetric 2 × 2 perturbation Σ of the (k, v) overlaps


@lru_cache(maxsize=None)
def replicon_operator(L: int):
    r"""The per-sample channel part of the replicon (de Almeida–Thouless) operator, derived.

    A replicon perturbation is a fluctuation of the estimator uncorrelated with the teacher and
    across replicas: per input coordinate :math:`i` a pair :math:`(\delta k_i,\delta v_i)` with
    :math:`2\times2` covariance :math:`\Sigma` (:math:`\Sigma_{kk},\Sigma_{kv},\Sigma_{vv}`).  Through the
    i.i.d. tokens it moves the cavity fields of every sample by :math:`\delta\omega\sim\mathcal N(0,\Sigma\otimes I_L)`
    (:math:`\delta\chi_\ell=x_\ell\cdot\delta k/\sqrt D`, :math:`\delta z_\ell=x_\ell\cdot\delta v/\sqrt D`), the
    prox outputs by :math:`\delta g=G\,\delta\omega` (:func:`prox_jacobian`), the conjugate fields of
    coordinate :math:`i` by :math:`\delta b_{c,i}=\sum_{\mu,\ell}x_{\mu\ell i}\delta g_{c,\mu\ell}/\sqrt D`, whose
    covariance is :math:`\alpha\,\mathbb E\sum_\ell\delta g_{c\ell}\delta g_{d\ell}`, and the estimator by
    :math:`\delta w_c=(\partial\hat w_c/\partial b)\,\delta b_c` (:func:`replicon_prior`).  One turn is
    the linear map

    .. math:: \Sigma\mapsto\mathcal T(\Sigma)_{cd}=\alpha\,P_cP_d\,
              \mathbb E\Big[\sum_\ell\big(G(\Sigma\otimes I_L)G^\top\big)_{c\ell,d\ell}\Big],
              \qquad P_c^2=\mathbb E(\partial\hat w_c/\partial b)^2,

    on symmetric :math:`2\times2` matrices; RS is stable iff its spectral radius (the *replicon*) is
    below 1.  For one block and a scalar channel it is the familiar
    :math:`\alpha\,\mathbb E[(\partial_\omega g)^2]\,\mathbb E[(\partial_b\hat w)^2]<1`.

    Returns ``(inputs, outputs)``: inputs the upper triangle of :math:`W` and ``V_k, V_v``; outputs
    the 9 entries of the per-sample matrix :math:`K` with :math:`\mathbb E[K]\,\mathrm{vec}(\Sigma)`
    the bracket above, row-major over (output, input) in :data:`REPLICON_BASIS`.
    """
    L = int(L)
    w_up, G = prox_jacobian(L)
    a, b, c = sp.symbols("Sigma_kk Sigma_kv Sigma_vv", real=True)
    Sig = sp.Matrix([[a, b], [b, c]])
    S = sp.kronecker_product(Sig, sp.eye(L))  # (χ-block, z-block) ordering: index c·L + ℓ
    C = G * S * G.T
    blk = {"kk": (0, 0), "kv": (0, 1), "vv": (1, 1)}
    outs = []
    for name in REPLICON_BASIS:
        i0, j0 = blk[name]
        e = sp.expand(sum(C[i0 * L + ell, j0 * L + ell] for ell in range(L)))
        outs += [e.coeff(a), e.coeff(b), e.coeff(c)]
    return list(w_up) + [V_k, V_v], outs


# =============================================================================================
# kernels for attnlimits.numeric.slr.rs
# =============================================================================================

def kernel_key(act, L, extra=None, loss="square") -> tuple:
    """Hashable identity of a kernel set (the loss by its canonical name)."""
    from .losses import parse_loss

    a = check_activation(act)
    ev = _extra_value(a, extra)
    return (a.name, int(L), None if ev is None else str(ev), parse_loss(loss).name)


def _drop_dirac(e):
    return e.replace(lambda a: isinstance(a, sp.DiracDelta), lambda a: sp.S.Zero)


def _joint_kernels(a, name, L, extra, loss):
    r"""The loss-specific kernels of a non-square loss: the prox in :math:`(\chi,r)` (:func:`joint_objective`),
    the start of :math:`r`, the post-processing at the prox point and :math:`\rho` of the training residual."""
    from .losses import parse_loss, residual as rsym

    x, wx, wz, Phi, z_of_x = joint_objective(a, L, extra, loss)
    chi, r = x[:L], x[L]
    n = L + 1
    # a.e. derivatives: a kink of the loss (Huber) gives DiracDelta terms of no weight
    grad = [_drop_dirac(sp.diff(Phi, v)) for v in x]
    hess = [_drop_dirac(sp.diff(grad[i], x[j])) for i in range(n) for j in range(i, n)]
    base_in = list(x) + list(wx) + list(wz) + [y, V_k, V_v]
    doc = f"§10.3 joint prox objective of {name} (L={L}, loss {loss}" + (f", extra={extra})" if extra is not None
                                                                          else ")")
    kernels = {
        "F_value": Kernel("F_value", base_in, [Phi], doc=doc + ": Phi(chi, r).", share_exp=True),
        "F_newton": Kernel("F_newton", base_in, [Phi] + grad + hess,
                           doc=doc + ": Phi, grad Phi, upper hess Phi (row-major) in (chi, r).", share_exp=True),
    }
    wchi = wx[:L]
    sig_w = sigma_vector(a, L, wchi, _extra_value(a, extra))
    nsig = sum(si * si for si in sig_w)
    r0 = y - sum(sig_w[i] * wz[i] for i in range(L))
    kernels["joint_start"] = Kernel("joint_start", list(wchi) + list(wz) + [y, V_v], [r0 / (1 + V_v * nsig)],
                                    doc="start of the residual in the joint prox: the square loss's prox residual "
                                        "at chi = omega^chi.")
    chi2, z, sig, _, H = general_loss_hessian(a, L, extra, loss)
    assert tuple(chi2) == tuple(chi)
    zsub = dict(zip(z, z_of_x))
    Hup = [H[i, j].subs(zsub) for i in range(2 * L) for j in range(i, 2 * L)]
    resid = y - sum(sig[i] * z_of_x[i] for i in range(L))
    kernels["post"] = Kernel(
        "post", list(chi) + [r] + list(wz) + [y, V_v], list(sig) + list(z_of_x) + [resid] + Hup,
        doc=f"§10.3 steps 3-5 of {name} (L={L}, loss {loss}): sigma(chi), z(chi, r), training residual y - sigma.z, "
            "upper Hessian of the loss.", share_exp=True)
    rho = parse_loss(loss).expr.subs(rsym, r)
    kernels["train_loss"] = Kernel("train_loss", [r], [rho], doc=f"per-sample loss {loss} of the training residual.")
    sig_c = sigma_vector(a, L, chi, _extra_value(a, extra))
    kernels["sigma"] = Kernel("sigma", list(chi), list(sig_c) + [sum(s_ * s_ for s_ in sig_c)],
                              doc=f"σ(χ) and ‖σ‖² of {name} (L={L}) for the test error (§10.5).")
    if shift_invariant(a, L, extra):
        # Φ depends on χ through σ(χ) and the penalty only: the χ-offset of the joint prox lies in 1⊥ as well
        kernels["shift_invariant"] = Kernel("shift_invariant", [y], [sp.S.One],
                                            doc=f"1: σ of {name} (L={L}) is invariant under χ → χ + c1 (SymPy).")
    return kernels


#: generated kernel sets by :func:`kernel_key`; a dict, not ``lru_cache``, so that the activation already
#: resolved by the caller builds them (an :class:`Activation` is not hashable)
_REPLICA_KERNELS: dict = {}


def _build_replica_kernels(a, key):
    name, L, extra, loss = key
    if loss != "square":
        return _shared_kernels(_joint_kernels(a, name, L, extra, loss), L)
    chi, wchi, wz, F, z_of_chi = reduced_objective(a, L, extra)
    grad = [sp.diff(F, c) for c in chi]
    hess = [sp.diff(grad[i], chi[j]) for i in range(L) for j in range(i, L)]
    base_in = list(chi) + list(wchi) + list(wz) + [y, V_k, V_v]
    doc = f"§10.3 reduced prox objective of {name} (L={L}"
    doc += f", extra={extra})" if extra is not None else ")"
    kernels = {
        "F_value": Kernel("F_value", base_in, [F], doc=doc + ": F(χ).", share_exp=True),
        "F_newton": Kernel("F_newton", base_in, [F] + grad + hess, doc=doc + ": F, ∇F, upper ∇²F (row-major).",
                           share_exp=True),
    }
    # the prox point in z, the loss Hessian (2L × 2L, upper triangle) and σ at χ
    chi2, z, sig, ell, _, H = loss_hessian(a, L, extra)
    assert tuple(chi2) == tuple(chi)
    zsub = dict(zip(z, z_of_chi))
    Hup = [H[i, j].subs(zsub) for i in range(2 * L) for j in range(i, 2 * L)]
    resid = y - sum(sig[i] * z_of_chi[i] for i in range(L))
    kernels["post"] = Kernel(
        "post", list(chi) + list(wz) + [y, V_v],
        list(sig) + list(z_of_chi) + [resid] + Hup,
        doc=f"§10.3 steps 3–5 of {name} (L={L}): σ(χ̂), ẑ(χ̂), training residual y − σᵀẑ, upper Hessian of ℓ.",
        share_exp=True)
    kernels["sigma"] = Kernel("sigma", list(chi), list(sig) + [sum(s_ * s_ for s_ in sig)],
                              doc=f"σ(χ) and ‖σ‖² of {name} (L={L}) for the test error (§10.5).")
    if shift_invariant(a, L, extra):
        # a flag, not a formula: present iff σ(χ + c1) = σ(χ) (proved above); the prox multistart
        # then screens rays in 1⊥ only
        kernels["shift_invariant"] = Kernel("shift_invariant", [y], [sp.S.One],
                                            doc=f"1: σ of {name} (L={L}) is invariant under χ → χ + c1 (SymPy).")
    if a.kind == "affine":
        t, wchi2, wz2, chi_t, z_t, coeffs = affine_residual_polynomial(a, L)
        kernels["affine_poly"] = Kernel("affine_poly", list(wchi2) + list(wz2) + [y, V_k, V_v], coeffs,
                                        doc=f"§10.6 residual polynomial of {name} (L={L}), highest degree first.")
        full = sp.Rational(1, 2) * (sum(sig[i] * z[i] for i in range(L)) - y) ** 2 + \
            sum((chi[i] - wchi[i]) ** 2 for i in range(L)) / (2 * V_k) + \
            sum((z[i] - wz[i]) ** 2 for i in range(L)) / (2 * V_v)
        fsub = dict(zip(list(chi) + list(z), chi_t + z_t))
        kernels["affine_fields"] = Kernel(
            "affine_fields", [t] + list(wchi2) + list(wz2) + [y, V_k, V_v],
            chi_t + z_t + [full.subs(fsub)],
            doc=f"§10.6 stationary fields χ(t), z(t) of {name} (L={L}) and the prox objective there.")
    return _shared_kernels(kernels, L)


def _shared_kernels(kernels, L):
    """The kernels that do not depend on the loss: integrands, conjugates, prior, energy, replicon, test error."""
    cin, cout = channel_integrands(L)
    kernels["integrands"] = Kernel("integrands", cin, list(cout.values()),
                                   doc="§10.4 per-sample integrands: " + ", ".join(cout))
    for form in ("jacobian", "stein"):
        ins, upd = conjugate_update(form)
        kernels[f"conjugates_{form}"] = Kernel(f"conjugates_{form}", ins, [upd["m_hat"], upd["q_hat"], upd["V_hat"]],
                                               doc=f"§10.4 conjugates ({form} form): m̂, q̂, V̂.")
    pr = prior_update()
    kernels["prior"] = Kernel("prior", [m_hat, q_hat, V_hat, lam], [pr["m"], pr["q"], pr["V"]],
                              doc="§10.2 ridge prior part: m, q, V from m̂, q̂, V̂ and λ.")
    ein, eexpr = rs_energy()
    kernels["rs_energy"] = Kernel("rs_energy", list(ein), [eexpr],
                                  doc="§10.7 RS training objective per sample (zero-temperature free energy / alpha).")
    rin, rout = replicon_operator(L)
    kernels["replicon_integrand"] = Kernel(
        "replicon_integrand", rin, rout,
        doc=f"§10.8 per-sample replicon operator K (3 x 3, row-major over kk, kv, vv) of L={L} from W = (H + V^-1)^-1.")
    kernels["replicon_prior"] = Kernel("replicon_prior", [m_hat, q_hat, V_hat, lam], [replicon_prior()],
                                       doc="§10.8 prior factor E[(dw/db)^2] of the replicon.")
    rin2, rexpr2 = rs_energy_ridges()
    kernels["rs_energy_ridges"] = Kernel("rs_energy_ridges", list(rin2), [rexpr2],
                                         doc="§10.7 RS training objective per sample with ridges lam_k on k and lam_v "
                                             "on v.")
    tin, texpr = test_error()
    kernels["test_error"] = Kernel("test_error", tin, [texpr], doc="§10.5 test error 1 - 2 m_v A + q_v B + noisy Delta^2.")
    return kernels


def replica_kernels(act, L: int, extra=None, loss="square") -> dict:
    r"""The generated kernels of the RS system for one activation and length (dict name → Kernel).

    ``F_value``, ``F_newton`` (reduced prox objective with gradient and Hessian), ``post`` (σ, ẑ,
    training residual and the loss Hessian at the prox point), ``sigma``, ``integrands``,
    ``conjugates_jacobian``/``conjugates_stein``, ``prior``, ``test_error``, ``shift_invariant`` (a
    constant flag, present iff :func:`shift_invariant` proves it), and for affine
    activations ``affine_poly``/``affine_fields`` (exact prox).  Cached per (activation, L, extra, loss).

    ``loss`` other than ``square`` (:func:`attnlimits.derivations.slr.losses.parse_loss`): the value fields are not
    eliminated in closed form; the prox unknowns are :math:`(\chi,r)` (:func:`joint_objective`: ``F_value`` and
    ``F_newton`` in L + 1 variables, ``joint_start`` the residual's start), ``post`` takes :math:`\hat r` after
    :math:`\hat\chi`, ``train_loss`` gives :math:`\rho(\hat r)`, and there is no exact affine prox; the
    shift-invariance flag, where proved, restricts the multistart's χ-rays to :math:`\mathbf 1^\perp` (one more ray
    along r).
    """
    if int(L) < 2:
        raise InputError(f"L must be >= 2 for the RS system, got {L}")
    a = check_activation(act)
    key = kernel_key(a, L, extra, loss)
    if key not in _REPLICA_KERNELS:
        _REPLICA_KERNELS[key] = _build_replica_kernels(a, key)
    return dict(_REPLICA_KERNELS[key])
