r"""Hermite coefficients of activation functions (docs/attention_rmt.md §4.1).

With :math:`\xi\sim\mathcal N(0,1)` and the normalised probabilists' Hermite polynomials
:math:`h_k=\mathrm{He}_k/\sqrt{k!}` (so that :math:`\mathbb E[h_j(\xi)h_k(\xi)]=\delta_{jk}`),

.. math::

    a_0=\mathbb E f(\xi),\qquad a_k=\mathbb E[f(\xi)h_k(\xi)],\qquad
    a_1=\mathbb E[\xi f(\xi)]=\mathbb E f'(\xi),\qquad a_2=\tfrac{1}{\sqrt2}\mathbb E[(\xi^2-1)f(\xi)],

.. math::

    \nu=\mathbb E\big[(f(\xi)-a_0)^2\big]=\sum_{k\ge1}a_k^2\quad\text{(Parseval)},\qquad
    b^2=\nu-a_1^2\ge0 .

Activations are SymPy expressions in the one real symbol :data:`t` (or strings, parsed safely by
:func:`parse_activation`). Only :math:`a_1`, :math:`\nu` (and the diagonal constant of §4.3)
enter the limits of the spec; :math:`a_0` is subtracted automatically (centring).

How the expectations are computed
---------------------------------
1. **Split at kinks.** :func:`kinks` finds where Max/Min/Abs/Heaviside/sign/Piecewise switch
   branch; on every interval between kinks the activation is replaced by its smooth branch.
2. **Exact, in closed form**, piece by piece, when every piece is a sum of terms
   :math:`c\,t^n e^{\alpha t^2+\beta t}` (polynomials, exp, sin, cos, sinh, cosh of polynomial
   arguments of degree ≤ 2): completing the square reduces each term to Gaussian moments
   (Isserlis/Wick) on the whole line, or to the incomplete-moment recursion
   :math:`M_m=(m-1)M_{m-2}+[-u^{m-1}\varphi(u)]` with :math:`M_0=\Phi(B)-\Phi(A)` on a sub-interval.
   Failing that, one Gaussian integration by parts
   (:math:`\mathbb E[f\,\mathrm{He}_k]=\mathbb E[f'\,\mathrm{He}_{k-1}]`, boundary terms included)
   is tried (this gives erf exactly), then ``sympy.integrate`` under a time limit for a narrow
   class of integrands. Parity (f odd/even, or odd about a constant, like the sigmoid) sets the
   vanishing coefficients to an exact 0.
3. **Otherwise by quadrature**: ``mpmath.quad`` (tanh–sinh) on
   :math:`(-\infty,k_1,\dots,k_N,\infty)` at ``dps + 10`` digits, with its error estimate checked
   against :math:`10^{-\mathrm{dps}}`. Gauss–Hermite is never used (a fixed Gauss–Hermite rule
   gives ReLU's :math:`\nu\approx0.3400` instead of :math:`0.340845`, docs/attention_rmt.md §4.1).

Parsing, the built-in activations, kinks and the smooth pieces live in
:mod:`attnlimits.symbolic.activations` (re-exported here); the one time guard is :mod:`attnlimits.symbolic._timeguard`.

Activations whose second Gaussian moment diverges (growth like :math:`e^{t^2/4}` or faster), which
are singular on the real line, or which take complex values are refused with
:class:`ActivationError`; NaN is never returned.

References
----------
docs/attention_rmt.md §4.1 (Hermite data) and its table of reference values.
"""
from __future__ import annotations

import functools
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import mpmath
import sympy
from sympy import S

from ._timeguard import with_time_limit as _with_time_limit
from .activations import (  # re-exported: the public names keep their attnlimits.symbolic.hermite spelling
    BUILTIN_ACTIVATIONS,
    ActivationError,
    as_activation,
    decompose,
    Decomposition,
    mp_value,
    Piece,
    window_for,
    kinks,
    mpmath_function,
    parse_activation,
    t,
)

__all__ = [
    "t",
    "BUILTIN_ACTIVATIONS",
    "ActivationError",
    "parse_activation",
    "HermiteData",
    "hermite_coefficients",
    "hermite_data_bounded",
    "hermite_coefficient",
    "kinks",
]

# Time limit (seconds) of a sympy.integrate attempt (skipped when no timer is available).
_SYMPY_INTEGRATE_BUDGET = 2.0
# Total time limit (seconds) of one hermite_coefficients / hermite_coefficient call (main thread only).
_TOTAL_BUDGET = 60.0


class _Diverges(Exception):
    """Internal: a Gaussian integral is infinite."""


# --------------------------------------------------------------------------------------------
# exact Gaussian integrals
# --------------------------------------------------------------------------------------------

_SQRT_2PI = sympy.sqrt(2 * sympy.pi)


def _phi(x: sympy.Expr) -> sympy.Expr:
    if x.is_infinite:
        return S.Zero
    return sympy.exp(-x**2 / 2) / _SQRT_2PI


def _Phi(x: sympy.Expr) -> sympy.Expr:
    if x is S.Infinity:
        return S.One
    if x is S.NegativeInfinity:
        return S.Zero
    return (1 + sympy.erf(x / sympy.sqrt(2))) / 2


def _incomplete_moments(A: sympy.Expr, B: sympy.Expr, top: int) -> list[sympy.Expr]:
    r"""M_m = \int_A^B u^m \varphi(u) du for m = 0..top (exact)."""
    if A is S.NegativeInfinity and B is S.Infinity:
        out = []
        for m in range(top + 1):
            out.append(S.Zero if m % 2 else sympy.factorial2(m - 1) if m else S.One)
        return out
    pa, pb = _phi(A), _phi(B)
    M = [_Phi(B) - _Phi(A)]
    if top >= 1:
        M.append(pa - pb)
    for m in range(2, top + 1):
        ta = A ** (m - 1) * pa if A.is_finite else S.Zero
        tb = B ** (m - 1) * pb if B.is_finite else S.Zero
        M.append((m - 1) * M[m - 2] + ta - tb)
    return M


_TRIG = (sympy.sin, sympy.cos, sympy.sinh, sympy.cosh)


def _exp_poly_terms(g: sympy.Expr):
    """Decompose g into {(alpha, beta): polynomial P(t)} with g = sum P(t) exp(alpha t^2 + beta t).

    Returns None if g is not of that form.
    """
    if g.has(*_TRIG):
        g = g.replace(lambda e: isinstance(e, _TRIG), lambda e: e.rewrite(sympy.exp))
    g = sympy.expand(g)
    groups: dict[tuple[sympy.Expr, sympy.Expr], sympy.Expr] = {}
    for term in sympy.Add.make_args(g):
        coeff = S.One
        power = 0
        argument = S.Zero
        for fac in sympy.Mul.make_args(term):
            if not fac.has(t):
                coeff *= fac
            elif fac == t:
                power += 1
            elif fac.is_Pow and fac.base == t and fac.exp.is_Integer and fac.exp >= 0:
                power += int(fac.exp)
            elif isinstance(fac, sympy.exp):
                argument += fac.args[0]
            elif fac.is_Pow and isinstance(fac.base, sympy.exp) and fac.exp.is_Integer:
                argument += fac.exp * fac.base.args[0]
            else:
                return None
        try:
            arg_poly = sympy.Poly(sympy.expand(argument), t)
        except sympy.PolynomialError:
            return None
        if arg_poly.degree() > 2 or not all(c.is_number for c in arg_poly.all_coeffs()):
            return None
        c2, c1, c0 = _quadratic_coeffs(arg_poly)
        key = (c2, c1)
        groups[key] = groups.get(key, S.Zero) + coeff * sympy.exp(c0) * t**power
    return groups


def _quadratic_coeffs(p: sympy.Poly) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    coeffs = list(reversed(p.all_coeffs())) + [S.Zero, S.Zero, S.Zero]
    return coeffs[2], coeffs[1], coeffs[0]


@functools.lru_cache(maxsize=4096)
def _engine(g: sympy.Expr, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
    r"""Exact \int_a^b g(t) \varphi(t) dt for g = sum of c t^n exp(alpha t^2 + beta t); else None.

    Raises _Diverges when an infinite end makes the integral infinite (alpha >= 1/2).
    """
    groups = _exp_poly_terms(g)
    if groups is None:
        return None
    full_line = a is S.NegativeInfinity and b is S.Infinity
    total = S.Zero
    for (alpha, beta), P in groups.items():
        if P == 0:
            continue
        if alpha.is_real is not True:
            return None
        if not full_line and beta.is_real is not True:
            return None
        if (a.is_infinite or b.is_infinite) and (1 - 2 * alpha).is_positive is not True:
            if (1 - 2 * alpha).is_nonpositive:
                raise _Diverges()
            return None
        if (1 - 2 * alpha).is_positive is not True:
            return None  # finite interval with alpha >= 1/2: leave it to quadrature
        s = 1 / sympy.sqrt(1 - 2 * alpha)
        mu = s**2 * beta
        u = sympy.Dummy("u", real=True)
        Q = sympy.Poly(sympy.expand(P.subs(t, mu + s * u)), u)
        A = a if a.is_infinite else (a - mu) / s
        B = b if b.is_infinite else (b - mu) / s
        degree = Q.degree()
        M = _incomplete_moments(A, B, max(degree, 0))
        acc = S.Zero
        for (m,), q in Q.terms():
            acc += q * M[m]
        total += s * sympy.exp(s**2 * beta**2 / 2) * acc
    return sympy.expand(total)


def _sympy_integrate_allowed(g: sympy.Expr) -> bool:
    """Cheap gate: only try sympy.integrate where it has a fair chance (erf-linear integrands)."""
    allowed = (sympy.exp, sympy.sin, sympy.cos, sympy.sinh, sympy.cosh, sympy.erf, sympy.erfc)
    for f in g.atoms(sympy.Function):
        if f.has(t) and not isinstance(f, allowed):
            return False
    for p in g.atoms(sympy.Pow):
        if p.has(t) and not (p.exp.is_Integer and p.exp > 0):
            return False
        if p.exp.is_Integer and p.exp > 1 and p.base.has(sympy.erf, sympy.erfc):
            return False
    erf_factors = sum(1 for f in sympy.Mul.make_args(sympy.factor_terms(g)) if f.has(sympy.erf, sympy.erfc))
    return erf_factors <= 1


@functools.lru_cache(maxsize=1024)
def _sympy_integrate(g: sympy.Expr, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
    if not _sympy_integrate_allowed(g):
        return None
    integrand = g * sympy.exp(-t**2 / 2) / _SQRT_2PI

    def run():
        return sympy.integrate(integrand, (t, a, b), conds="none")

    try:
        ok, res = _with_time_limit(run, _SYMPY_INTEGRATE_BUDGET, skippable=True)
    except Exception:  # sympy internals may raise anything on hard integrals
        return None
    if not ok or res is None or res.has(sympy.Integral) or res.has(t):
        return None
    if res.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return None
    return res


@functools.lru_cache(maxsize=4096)
def _exact_hermite_moment(dec: Decomposition, k: int, square: bool, allow_sympy: bool):
    r"""Exact E[f He_k] (unnormalised He_k), or E[f^2] when ``square``; None if not possible.

    Uses, per piece: the closed-form engine; else one Gaussian integration by parts
    E[g He_k 1_(a,b)] = [-g He_{k-1} phi]_a^b + E[g' He_{k-1} 1_(a,b)]; else sympy.integrate.
    """
    if not square:
        if dec.parity == 1 and k % 2 == 1:
            return S.Zero
        if dec.parity == -1 and k % 2 == 0:
            return dec.centre if k == 0 else S.Zero
    if not dec.exact_ok:
        return None
    total = S.Zero
    He_k = sympy.hermite_prob(k, t) if not square else S.One
    for piece in dec.pieces:
        if not piece.exact_ends:
            return None
        g = piece.expr**2 if square else piece.expr * He_k
        res = _engine(g, piece.a, piece.b)
        if res is None and not square and k >= 1:
            res = _by_parts(piece, k)
        if res is None and allow_sympy:
            res = _sympy_integrate(g, piece.a, piece.b)
        if res is None:
            return None
        total += res
    return sympy.expand(total)


def _by_parts(piece: Piece, k: int) -> sympy.Expr | None:
    """One Gaussian integration by parts for E[g He_k 1_(a,b)] (see _exact_hermite_moment)."""
    He_km1 = sympy.hermite_prob(k - 1, t)
    dg = sympy.diff(piece.expr, t)
    inner = _engine(dg * He_km1, piece.a, piece.b)
    if inner is None:
        return None
    boundary = S.Zero
    for end, sgn in ((piece.a, 1), (piece.b, -1)):
        if end.is_infinite:
            continue
        val = (piece.expr * He_km1).subs(t, end)
        if val.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
            return None
        boundary += sgn * val * _phi(end)
    return boundary + inner


# --------------------------------------------------------------------------------------------
# quadrature
# --------------------------------------------------------------------------------------------

class _Integrator:
    """mpmath tanh–sinh quadrature over the smooth pieces, with memoised f and Hermite values.

    Each piece is integrated by ``mpmath.quad`` over its ends plus the split points
    ``-L, 0, L`` that fall inside it (``L = window_for(dps)``, beyond which the Gaussian
    weight is below 10^-(dps+15)); the split halves the number of nodes compared with
    mpmath's own map of an infinite interval. f(x)·φ(x) and h_0..h_K(x) are memoised per
    node, so all integrals of one activation at one precision share their evaluations.
    """

    def __init__(self, dec: Decomposition, dps: int):
        self.dec = dec
        self.dps = dps
        self.work = dps + 10
        L = window_for(dps)
        self._skip = max(100, 3 * L)  # |x| beyond which f*phi is negligible (see _check_growth)
        self.points: list[list] = []
        with mpmath.workdps(self.work + 5):
            for p in dec.pieces:
                a, b = mp_value(p.a, self.work), mp_value(p.b, self.work)
                inner = [mpmath.mpf(c) for c in (-L, 0, L) if a < c < b]
                self.points.append([a, *inner, b])
            self._inv_sqrt_2pi = 1 / mpmath.sqrt(2 * mpmath.pi)
        self.fns = [mpmath_function(p.expr) for p in dec.pieces]
        self._f_memo: list[dict] = [{} for _ in dec.pieces]
        self._h_memo: dict = {}
        # fixed-point bits for the Hermite recurrence: working precision plus guard bits
        self._bits = int((self.work + 20) * 3.33) + 64
        self._sq: list[int] = []
        self._isq: list[int] = []

    def _f_phi(self, i: int, x):
        """(f_i(x), φ(x)) for piece i, memoised on the node."""
        memo = self._f_memo[i]
        try:
            return memo[x]
        except KeyError:
            pass
        if abs(x) > self._skip:
            # Far tail: phi(x) < e^{-x^2/2} and the growth check bounds f, so f*phi is far below
            # 10^-(dps+15); not evaluating f there also avoids absurd arguments (sin(exp(1e40))).
            memo[x] = (mpmath.mpf(0), mpmath.mpf(0))
            return memo[x]
        try:
            fx = self.fns[i](x)
        except (ZeroDivisionError, OverflowError, ValueError, TypeError) as exc:
            raise ActivationError(
                f"activation {self.dec.expr} cannot be evaluated at t = {mpmath.nstr(x, 8)} "
                f"({type(exc).__name__}); Gaussian expectations need f finite on the real line"
            ) from None
        if isinstance(fx, mpmath.mpc):
            if abs(fx.imag) > mpmath.eps * 1000 * (1 + abs(fx.real)):
                raise ActivationError(
                    f"activation {self.dec.expr} takes complex values near t = {mpmath.nstr(x, 8)}; "
                    "use a real formula"
                )
            fx = fx.real
        fx = mpmath.mpf(fx)
        ph = mpmath.exp(-x * x / 2) * self._inv_sqrt_2pi
        memo[x] = (fx, ph)
        return fx, ph

    def _hvec(self, x, k: int) -> list[int]:
        """[h_0(x), ..., h_k(x)] as fixed-point integers (``self._bits`` fractional bits).

        h_j = He_j/sqrt(j!) by the recurrence h_{n+1} = (x h_n - sqrt(n) h_{n-1}) / sqrt(n+1),
        run in integers (one ulp of rounding per step); memoised per node.
        """
        hs = self._h_memo.get(x)
        bits = self._bits
        if hs is None:
            X = mpmath.libmp.to_fixed(mpmath.mpf(x)._mpf_, bits)
            hs = [X, [1 << bits, X]]
            self._h_memo[x] = hs
        X, H = hs
        if len(H) <= k:
            self._extend_sqrt(k + 1)
            sq, isq = self._sq, self._isq
            while len(H) <= k:
                n = len(H) - 1
                H.append((((X * H[n]) >> bits) - ((sq[n] * H[n - 1]) >> bits)) * isq[n + 1] >> bits)
        return H

    def _h(self, x, k: int):
        """Normalised h_k(x) = He_k(x)/sqrt(k!) as an mpf."""
        return mpmath.mpf((self._hvec(x, k)[k], -self._bits))

    def _extend_sqrt(self, n: int) -> None:
        bits = self._bits
        while len(self._sq) <= n:
            m = len(self._sq)
            self._sq.append(mpmath.libmp.isqrt(m << (2 * bits)))
            self._isq.append((1 << (2 * bits)) // max(self._sq[-1], 1))

    def integrate(self, integrand: Callable[[Any, Any], Any], *, strict: bool = True,
                  what: str = "integral"):
        """Sum over pieces of ∫ integrand(f(x), x) φ(x) dx; returns (value, error) as mpf.

        ``mpmath.quad(..., error=True)`` at ``dps + 10`` digits; if the error estimate exceeds
        10^-dps·max(1, |value|) the piece is redone with unit sub-intervals and a higher
        degree; if it still does (and ``strict``), ActivationError.
        """
        total = mpmath.mpf(0)
        error = mpmath.mpf(0)
        with mpmath.workdps(self.work):
            for i, pts in enumerate(self.points):
                def fun(x, i=i):
                    fx, ph = self._f_phi(i, x)
                    return integrand(fx, x) * ph

                value, err = self._quad(fun, pts)
                tol = mpmath.mpf(10) ** (-self.dps) * max(1, abs(value))
                if not (mpmath.isfinite(value) and mpmath.isfinite(err)) or err > tol:
                    value, err = self._quad(fun, pts, hard=True)
                if not (mpmath.isfinite(value) and mpmath.isfinite(err)):
                    raise ActivationError(
                        f"Gaussian moments of f diverge: the {what} of {self.dec.expr} is not "
                        "finite numerically; use an activation of slower growth"
                    )
                tol = mpmath.mpf(10) ** (-self.dps) * max(1, abs(value))
                if strict and err > tol:
                    raise ActivationError(
                        f"quadrature of the {what} of {self.dec.expr} did not reach {self.dps} "
                        f"digits (error estimate {mpmath.nstr(err, 3)}); lower dps or simplify "
                        "the activation"
                    )
                total += value
                error += err
            return +total, +error

    def _quad(self, fun, pts, hard: bool = False):
        if hard:
            # Harder integrand: unit sub-intervals on the finite part, higher degree.
            refined = [pts[0]]
            for lo, hi in zip(pts[:-1], pts[1:]):
                if mpmath.isfinite(lo) and mpmath.isfinite(hi) and hi - lo > 1:
                    n = int(mpmath.ceil(hi - lo))
                    refined.extend(lo + (hi - lo) * j / n for j in range(1, n))
                refined.append(hi)
            pts = refined
        return mpmath.quad(fun, pts, error=True, maxdegree=10 if hard else None)

    # Convenience wrappers ---------------------------------------------------------------
    def coefficient(self, k: int, strict: bool = True):
        """(a_k, error) by ``mpmath.quad``; k = 0 gives the mean."""
        if k == 0:
            return self.integrate(lambda fx, x: fx, strict=strict, what="mean")
        return self.integrate(lambda fx, x: fx * self._h(x, k), strict=strict,
                              what=f"coefficient a_{k}")

    def centred_second_moment(self, a0):
        """(E[(f - a0)^2], error) by ``mpmath.quad``."""
        return self.integrate(lambda fx, x: (fx - a0) ** 2, what="variance")

    def coefficients(self, K: int) -> tuple[list, list]:
        """a_0..a_K in one tanh–sinh pass over shared nodes (for the Parseval check).

        Same rule and nodes as ``mpmath.quad`` (its ``TanhSinh`` node cache), the same
        sub-intervals, and its error extrapolation; degrees are raised until every
        coefficient's error estimate is below 10^-dps or the degree cap (``guess_degree + 2``)
        is reached. The sums run in fixed-point integers. Returns (values, error estimates);
        not strict: a coefficient that misses the tolerance only blurs the residual.
        """
        ctx = mpmath.mp
        rule = ctx._tanh_sinh
        bits = self._bits
        values = [mpmath.mpf(0)] * (K + 1)
        errors = [mpmath.mpf(0)] * (K + 1)
        with mpmath.workdps(self.work):
            tol = mpmath.mpf(10) ** (-self.dps)
            prec = ctx.prec
            eps = ctx.eps / 8
            max_degree = rule.guess_degree(prec) + 2
            for i, pts in enumerate(self.points):
                for lo, hi in zip(pts[:-1], pts[1:]):
                    both = lo == mpmath.ninf and hi == mpmath.inf
                    if both:
                        lo = mpmath.mpf(0)
                    sums = [0] * (K + 1)
                    history: list[list] = []
                    err = [mpmath.mpf(1)] * (K + 1)
                    for degree in range(1, max_degree + 1):
                        for x, w in rule.get_nodes(lo, hi, degree, prec):
                            for xx in ((x, -x) if both else (x,)):
                                fx, ph = self._f_phi(i, xx)
                                v = fx * ph * w
                                if not v or mpmath.mag(v) < -bits:
                                    continue  # below one ulp of the fixed-point sums
                                F = mpmath.libmp.to_fixed(v._mpf_, bits)
                                H = self._hvec(xx, K)
                                for k in range(K + 1):
                                    sums[k] += F * H[k]
                        h = mpmath.ldexp(1, -degree)
                        history.append([mpmath.mpf((s_k, -2 * bits)) * h for s_k in sums])
                        if degree > 1:
                            err = [rule.estimate_error([r[k] for r in history], prec, eps)
                                   for k in range(K + 1)]
                            if max(err) <= tol:
                                break
                    for k in range(K + 1):
                        values[k] += history[-1][k]
                        errors[k] += err[k]
        return values, errors


# --------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------

def _to_mpf(e: sympy.Expr, dps: int) -> mpmath.mpf:
    """Value of an exact real SymPy constant, rounded to ``dps`` digits, as an mpf."""
    v = mp_value(e, dps)
    with mpmath.workdps(dps):
        return +v


def _tidy(e: sympy.Expr) -> sympy.Expr:
    """Canonical expanded form of an exact result (no costly simplification)."""
    return sympy.expand(e)


@dataclass(frozen=True)
class HermiteData:
    r"""Hermite data of one activation (docs/attention_rmt.md §4.1).

    Attributes
    ----------
    expr : sympy.Expr
        The activation as given (uncentred), in :data:`t`.
    centred : sympy.Expr
        ``expr - a0``. When :math:`a_0` has no closed form it enters as a ``Float`` with
        ``dps + 10`` digits (never a 53-bit float).
    a0, a1, a2 : mpmath.mpf
        :math:`a_0=\mathbb Ef(\xi)`, :math:`a_1=\mathbb E[\xi f(\xi)]`,
        :math:`a_2=\mathbb E[(\xi^2-1)f(\xi)]/\sqrt2`, rounded to ``dps`` digits.
    nu : mpmath.mpf
        :math:`\nu=\mathbb E[(f(\xi)-a_0)^2]` (the second moment of the *centred* activation).
    exact : Mapping[str, sympy.Expr]
        Closed forms for those of ``'a0'``, ``'a1'``, ``'a2'``, ``'nu'``, ``'b2'`` that were
        obtained exactly (read-only mapping), e.g. ``{'a1': 2*sqrt(3)/(3*sqrt(pi)), ...}`` for erf.
    dps : int
        Decimal digits of the numbers (quadrature runs at ``dps + 10``).
    method : str
        ``'exact'`` (a0, a1, a2, ν all in closed form), ``'quadrature'`` (none), or ``'mixed'``.
        Coefficients fixed to 0 by parity count as exact.
    parseval_residual : float
        :math:`|\nu-\sum_{k=1}^{K}a_k^2|` with ``K = parseval_order``. Tiny for smooth f
        (e.g. < 1e-10 for tanh at K = 40), 0 for polynomials; decays only like
        :math:`K^{-3/2}` for kinked f (ReLU: about 2e-4 at K = 40) — reported, not an error.
    parseval_order : int
        The K used for the residual.
    errors : Mapping[str, float]
        Quadrature error estimates for ``'a0'``, ``'a1'``, ``'a2'``, ``'nu'`` (0.0 when exact).

    Notes
    -----
    Arithmetic on the ``mpf`` fields follows the *global* mpmath precision; the properties
    below evaluate under ``mpmath.workdps(self.dps)``.
    """

    expr: sympy.Expr
    centred: sympy.Expr
    a0: mpmath.mpf
    a1: mpmath.mpf
    a2: mpmath.mpf
    nu: mpmath.mpf
    exact: Mapping[str, sympy.Expr] = field(hash=False, compare=False)
    dps: int = 30
    method: str = "quadrature"
    parseval_residual: float = float("nan")
    parseval_order: int = 0
    errors: Mapping[str, float] = field(default_factory=dict, hash=False, compare=False)

    @property
    def b2(self) -> mpmath.mpf:
        r""":math:`b^2=\nu-a_1^2\ge0` (zero iff f is affine), at ``dps`` digits."""
        with mpmath.workdps(self.dps):
            return self.nu - self.a1**2

    @property
    def a0_float(self) -> float:
        return float(self.a0)

    @property
    def a1_float(self) -> float:
        return float(self.a1)

    @property
    def a2_float(self) -> float:
        return float(self.a2)

    @property
    def nu_float(self) -> float:
        return float(self.nu)

    @property
    def b2_float(self) -> float:
        return float(self.b2)

    def floats(self) -> dict[str, float]:
        """Python floats ``{'a0', 'a1', 'a2', 'nu', 'b2', 'parseval_residual'}``."""
        return {
            "a0": float(self.a0),
            "a1": float(self.a1),
            "a2": float(self.a2),
            "nu": float(self.nu),
            "b2": float(self.b2),
            "parseval_residual": float(self.parseval_residual),
        }


def _check_dps(dps: int) -> int:
    if isinstance(dps, bool) or not isinstance(dps, int) or dps < 5 or dps > 1000:
        raise ActivationError(f"dps must be an integer between 5 and 1000, got {dps!r}")
    return dps


def hermite_coefficients(f: sympy.Expr | str, dps: int = 30, parseval_order: int = 40) -> HermiteData:
    r"""Hermite data :math:`(a_0, a_1, a_2, \nu)` of an activation, centred automatically.

    .. math::

        a_0=\mathbb Ef(\xi),\quad a_1=\mathbb E[\xi f(\xi)],\quad
        a_2=\frac{\mathbb E[(\xi^2-1)f(\xi)]}{\sqrt2},\quad
        \nu=\mathbb E\big[(f(\xi)-a_0)^2\big],\qquad \xi\sim\mathcal N(0,1).

    Parameters
    ----------
    f : sympy.Expr or str
        Activation in :data:`t`, or a built-in name / formula (see :func:`parse_activation`).
    dps : int, optional
        Decimal digits wanted (default 30). Quadrature runs at ``dps + 10``.
    parseval_order : int, optional
        K for the Parseval check :math:`\nu-\sum_{k=1}^K a_k^2` (default 40; 0 skips it).

    Returns
    -------
    HermiteData
        Values as ``mpmath.mpf`` at ``dps`` digits, closed forms in ``.exact``, the method, the
        quadrature error estimates and the Parseval residual.

    Raises
    ------
    ActivationError
        Bad input (see :func:`parse_activation`), singular f, divergent Gaussian moments
        (``"Gaussian moments of f diverge: ..."``), or a quadrature that misses ``dps`` digits.

    Notes
    -----
    See docs/attention_rmt.md §4.1. Exact when every smooth piece is polynomial × exp/sin/cos of
    polynomials of degree ≤ 2 (Isserlis/Wick after completing the square), or after one
    Gaussian integration by parts (erf); otherwise ``mpmath.quad`` split at the kinks, with
    error estimate below :math:`10^{-\mathrm{dps}}` enforced. Parseval coefficients
    :math:`a_3..a_K` come from the same quadrature nodes (memoised), exactly for polynomials.

    Accuracy: ``dps`` correct digits up to rounding (checked against the closed forms at 30 and
    50 digits). Cost: tanh at dps=30 with K=40 takes about 0.2 s the first time; results are
    cached per (expression, dps, K).

    Examples
    --------
    >>> h = hermite_coefficients("relu")
    >>> h.exact["nu"]
    1/2 - 1/(2*pi)
    >>> round(h.a1_float, 6), round(h.nu_float, 6)
    (0.5, 0.340845)
    """
    expr = as_activation(f)
    dps = _check_dps(dps)
    if isinstance(parseval_order, bool) or not isinstance(parseval_order, int) or parseval_order < 0:
        raise ActivationError(f"parseval_order must be a non-negative integer, got {parseval_order!r}")
    return _bounded(lambda: _hermite_cached(expr, dps, parseval_order), expr, dps)


def hermite_data_bounded(f, dps: int = 30, parseval_order: int = 40) -> HermiteData:
    """:func:`hermite_coefficients` with a hard deadline for user-typed formulas: a built-in name runs
    here; any other text is parsed here (cheap, refused at once when malformed or too large) and its
    coefficients computed in a child process killed after ``$ATTNLIMITS_SYMBOLIC_SECONDS`` (default
    60 s), which no SymPy or mpmath operation can outlast (:mod:`attnlimits.symbolic._isolate`).
    Used by the command line (``hermite``, ``rmt``)."""
    from ._isolate import DeadlineExceeded, call_with_deadline

    if isinstance(f, str) and f.strip() in BUILTIN_ACTIVATIONS:
        return hermite_coefficients(f, dps=dps, parseval_order=parseval_order)
    expr = as_activation(f)  # parse and validate here: bad input fails without a child process
    dps = _check_dps(dps)
    try:
        fields = call_with_deadline(_hermite_fields, expr, dps, parseval_order)
    except DeadlineExceeded as exc:
        text = str(expr)
        text = text if len(text) <= 80 else text[:77] + "..."
        raise ActivationError(f"the Hermite coefficients of {text} were {exc} at dps={dps}; simplify the "
                              "activation or lower dps (ATTNLIMITS_SYMBOLIC_SECONDS sets the limit)") from None
    except TypeError as exc:  # SymPy comparing a NaN (Max(t, 2/t) at t = 0): the formula, not our code
        if "NaN" not in str(exc):
            raise
        raise ActivationError(f"the activation {str(expr)[:80]} is undefined (NaN) where it must be "
                              "compared (e.g. Max/Min of a term infinite at a point); give a formula "
                              "finite for every real t") from None
    from types import MappingProxyType

    fields["exact"] = MappingProxyType(fields["exact"])
    fields["errors"] = MappingProxyType(fields["errors"])
    return HermiteData(**fields)


def _hermite_fields(expr, dps, parseval_order) -> dict:
    """:func:`hermite_coefficients` as plain picklable fields (the child side of :func:`hermite_data_bounded`)."""
    import dataclasses

    h = hermite_coefficients(expr, dps=dps, parseval_order=parseval_order)
    out = {f.name: getattr(h, f.name) for f in dataclasses.fields(h)}
    out["exact"], out["errors"] = dict(h.exact), dict(h.errors)
    return out


def _bounded(fn: Callable[[], Any], expr: sympy.Expr, dps: int):
    """Run ``fn`` under the total budget :data:`_TOTAL_BUDGET` (a backstop: the evaluation limits of
    :func:`attnlimits.symbolic.activations.mpmath_function` already refuse the known hangs at once)."""
    ok, res = _with_time_limit(fn, _TOTAL_BUDGET)
    if not ok:
        text = str(expr)
        if len(text) > 80:
            text = text[:77] + "..."
        raise ActivationError(
            f"the Hermite coefficients of {text} were not found within {_TOTAL_BUDGET:g} s at dps={dps}; "
            "simplify the activation or lower dps"
        )
    return res


def _with_divergence_message(fn):
    @functools.wraps(fn)
    def wrapper(expr, *args):
        try:
            return fn(expr, *args)
        except _Diverges:
            raise ActivationError(
                f"Gaussian moments of f diverge: E[f(xi)^2] is infinite for f = {expr} "
                "(growth like exp(t**2/4) or faster); use an activation of slower growth"
            ) from None
    return wrapper


@functools.lru_cache(maxsize=256)
@_with_divergence_message
def _hermite_cached(expr: sympy.Expr, dps: int, K: int) -> HermiteData:
    dec = decompose(expr, dps)
    # The second moment first: it decides divergence before anything else is computed.
    m2_exact = _exact_hermite_moment(dec, 0, True, True)
    exact_raw: dict[str, sympy.Expr] = {}
    for name, k in (("a0", 0), ("a1", 1), ("a2", 2)):
        val = _exact_hermite_moment(dec, k, False, True)
        if val is not None:
            exact_raw[name] = val / sympy.sqrt(sympy.factorial(k))
    if m2_exact is not None and "a0" in exact_raw:
        exact_raw["nu"] = m2_exact - exact_raw["a0"] ** 2
    exact = {name: _tidy(val) for name, val in exact_raw.items()}
    if "a1" in exact and "nu" in exact:
        exact["b2"] = _tidy(exact["nu"] - exact["a1"] ** 2)

    integrator: _Integrator | None = None

    def numeric():
        nonlocal integrator
        if integrator is None:
            integrator = _Integrator(dec, dps)
        return integrator

    values: dict[str, mpmath.mpf] = {}
    errors: dict[str, float] = {}
    work = dps + 10
    for name, k in (("a0", 0), ("a1", 1), ("a2", 2)):
        if name in exact:
            values[name] = mp_value(exact[name], work)
            errors[name] = 0.0
        else:
            v, e = numeric().coefficient(k)
            values[name], errors[name] = v, float(e)
    if "nu" in exact:
        values["nu"] = mp_value(exact["nu"], work)
        errors["nu"] = 0.0
    else:
        v, e = numeric().centred_second_moment(values["a0"])
        values["nu"], errors["nu"] = v, float(e)

    with mpmath.workdps(work):
        if values["nu"] < 0:
            if values["nu"] < -mpmath.mpf(10) ** (-dps):
                raise ActivationError(f"internal error: negative variance for {expr}; please report")
            values["nu"] = mpmath.mpf(0)

    # Parseval residual nu - sum_{k<=K} a_k^2.
    residual = _parseval_residual(dec, values, exact, K, numeric, dps)

    n_exact = sum(name in exact for name in ("a0", "a1", "a2", "nu"))
    method = "exact" if n_exact == 4 else ("quadrature" if n_exact == 0 else "mixed")
    if "a0" in exact:
        centred = expr - exact["a0"]
    else:
        with mpmath.workdps(work):
            centred = expr - sympy.Float(mpmath.nstr(values["a0"], work), work)
    with mpmath.workdps(dps):
        rounded = {name: +values[name] for name in ("a0", "a1", "a2", "nu")}
    return HermiteData(
        expr=expr,
        centred=centred,
        a0=rounded["a0"],
        a1=rounded["a1"],
        a2=rounded["a2"],
        nu=rounded["nu"],
        exact=types.MappingProxyType(exact),
        dps=dps,
        method=method,
        parseval_residual=residual,
        parseval_order=K,
        errors=types.MappingProxyType(errors),
    )


def _parseval_residual(dec: Decomposition, values, exact, K: int, numeric, dps: int) -> float:
    if K == 0:
        return float(values["nu"])  # empty sum: the residual is nu itself
    work = dps + 10
    exact_poly = dec.polynomial_degree is not None and dec.exact_ok
    if exact_poly and all(name in exact for name in ("a1", "a2", "nu")):
        total = exact["a1"] ** 2 + (exact["a2"] ** 2 if K >= 2 else 0)
        for k in range(3, min(K, dec.polynomial_degree) + 1):
            ak = _exact_hermite_moment(dec, k, False, False)
            total += ak**2 / sympy.factorial(k)
        res = sympy.expand(exact["nu"] - total)
        return abs(float(mp_value(res, work))) if res != 0 else 0.0
    coefficients, _ = numeric().coefficients(K)
    with mpmath.workdps(work):
        total = values["a1"] ** 2 + (values["a2"] ** 2 if K >= 2 else 0)
        total += mpmath.fsum(c**2 for c in coefficients[3:])
        return float(abs(values["nu"] - total))


def hermite_coefficient(f: sympy.Expr | str, k: int, dps: int = 30) -> mpmath.mpf:
    r"""One normalised Hermite coefficient :math:`a_k=\mathbb E[f(\xi)\,\mathrm{He}_k(\xi)]/\sqrt{k!}`.

    Parameters
    ----------
    f : sympy.Expr or str
        Activation in :data:`t` or a built-in name / formula.
    k : int
        Order, ``k >= 0``. ``k = 0`` gives the (uncentred) mean :math:`a_0=\mathbb Ef(\xi)`.
    dps : int, optional
        Decimal digits (default 30).

    Returns
    -------
    mpmath.mpf
        :math:`a_k` rounded to ``dps`` digits; exact closed form evaluated when available
        (same machinery as :func:`hermite_coefficients`), otherwise tanh–sinh quadrature split
        at the kinks, run at ``dps + 10`` digits with its error estimate checked.

    Raises
    ------
    ActivationError
        As :func:`hermite_coefficients` (f must have a finite Gaussian second moment).

    Notes
    -----
    See docs/attention_rmt.md §4.1. Cost grows with k (the integrand oscillates k times); for
    k ≲ 60 at dps ≤ 50 quadrature stays well under a second.
    """
    expr = as_activation(f)
    dps = _check_dps(dps)
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ActivationError(f"k must be a non-negative integer, got {k!r}")
    return _bounded(lambda: _coefficient_cached(expr, k, dps), expr, dps)


@functools.lru_cache(maxsize=1024)
@_with_divergence_message
def _coefficient_cached(expr: sympy.Expr, k: int, dps: int) -> mpmath.mpf:
    dec = decompose(expr, dps)
    _exact_hermite_moment(dec, 0, True, False)  # raises _Diverges if E f^2 is infinite
    val = _exact_hermite_moment(dec, k, False, k <= 4)
    if val is not None:
        return _to_mpf(val / sympy.sqrt(sympy.factorial(k)), dps)
    v, _ = _Integrator(dec, dps).coefficient(k)
    with mpmath.workdps(dps):
        return +v

