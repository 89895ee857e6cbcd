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
   gives ReLU's :math:`\nu\approx0.3400` instead of :math:`0.340845`, spec §4.1).

Activations whose second Gaussian moment diverges (growth like :math:`e^{t^2/4}` or faster), which
are singular on the real line, or which take complex values are refused with
:class:`ActivationError`; NaN is never returned.

References
----------
docs/attention_rmt.md §4.1 (Hermite data) and its table of reference values.
"""
from __future__ import annotations

import functools
import math
import signal
import threading
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import mpmath
import sympy
from sympy import S

from ._safe_parse import UnsafeExpressionError, safe_parse

__all__ = [
    "t",
    "BUILTIN_ACTIVATIONS",
    "ActivationError",
    "parse_activation",
    "HermiteData",
    "hermite_coefficients",
    "hermite_coefficient",
    "kinks",
]

#: The one activation variable of the whole project (a real SymPy symbol).
t = sympy.Symbol("t", real=True)

#: Built-in activations, uncentred, as exact SymPy expressions in :data:`t`.
BUILTIN_ACTIVATIONS: dict[str, sympy.Expr] = {
    "tanh": sympy.tanh(t),
    "relu": sympy.Max(0, t),
    "erf": sympy.erf(t),
    "sigmoid": 1 / (1 + sympy.exp(-t)),
    "sin": sympy.sin(t),
    "cos": sympy.cos(t),
    "abs": sympy.Abs(t),
    "he2": (t**2 - 1) / sympy.sqrt(2),
    "he3": (t**3 - 3 * t) / sympy.sqrt(6),
    "identity": t,
}

# Time limits (seconds) for SymPy calls that can hang.
_SYMPY_INTEGRATE_BUDGET = 2.0
_SOLVE_BUDGET = 2.0
_SIMPLIFY_BUDGET = 1.0

# Kinks are looked for in [-window, window] when there are infinitely many of them.
_DEFAULT_KINK_WINDOW = 40


class ActivationError(ValueError):
    """An activation cannot be used; the one-line message says what is wrong and what to do."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class _Diverges(Exception):
    """Internal: a Gaussian integral is infinite."""


class _Timeout(BaseException):
    """Internal: a guarded SymPy call ran past its budget (BaseException: SymPy must not swallow it)."""


# --------------------------------------------------------------------------------------------
# time guard
# --------------------------------------------------------------------------------------------

def _with_time_limit(fn: Callable[[], Any], seconds: float, skippable: bool = False) -> tuple[bool, Any]:
    """Run ``fn()`` with a SIGALRM time limit; return ``(finished, result)``.

    Signals only work on the main thread. Elsewhere (or without ``setitimer``, or when an
    outer alarm is due sooner) a ``skippable`` call — one known to hang at times, like
    ``sympy.integrate`` — is skipped, returning ``(False, None)``; any other call runs
    unguarded. An outer interval timer, if any, is restored afterwards.
    """
    unguarded = threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer")
    if not unguarded:
        old_remaining, old_interval = signal.getitimer(signal.ITIMER_REAL)
        unguarded = bool(old_remaining) and old_remaining < seconds
    if unguarded:
        return (False, None) if skippable else (True, fn())

    def _handler(signum, frame):  # pragma: no cover - only runs on timeout
        raise _Timeout()

    start = time.monotonic()
    old_handler = signal.signal(signal.SIGALRM, _handler)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            result = fn()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Timeout:
        return False, None
    finally:
        signal.signal(signal.SIGALRM, old_handler)
        if old_remaining:
            left = max(old_remaining - (time.monotonic() - start), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, old_interval)
    return True, result


# --------------------------------------------------------------------------------------------
# parsing and validation
# --------------------------------------------------------------------------------------------

_FORBIDDEN_CLASSES = (
    sympy.DiracDelta, sympy.floor, sympy.ceiling, sympy.frac, sympy.Integral, sympy.Derivative,
    sympy.Sum, sympy.Product, sympy.Order, sympy.Subs,
)
_NONSMOOTH = (sympy.Max, sympy.Min, sympy.Abs, sympy.Heaviside, sympy.sign, sympy.Piecewise)
_CHECK_POINTS = (S(-27) / 10, S(-13) / 10, S(-2) / 5, S(7) / 20, S(11) / 10, S(13) / 5)


def parse_activation(text: str) -> sympy.Expr:
    """Turn a built-in name or a formula in ``t`` into a validated SymPy expression.

    Parameters
    ----------
    text : str
        One of :data:`BUILTIN_ACTIVATIONS` (``"tanh"``, ``"relu"``, ...) or a formula in ``t``
        using numbers, ``+ - * / **`` (``^`` also means power), parentheses, ``pi``, ``E`` and the
        functions exp, log, sqrt, tanh, sinh, cosh, asinh, sin, cos, atan, erf, erfc, Abs/abs,
        Max/Min, Heaviside, sign, sigmoid, relu.

    Returns
    -------
    sympy.Expr
        The expression in :data:`t`. Decimal literals are exact rationals: ``0.6*t`` gives
        ``3*t/5``.

    Raises
    ------
    ActivationError
        If the text is not in the whitelisted grammar (attributes, subscripts, lambdas, strings,
        dunder or unknown names are refused *before* anything is evaluated), has free symbols
        other than ``t``, does not depend on ``t``, or takes complex values.

    Notes
    -----
    Safety: the string is parsed by :mod:`ast` and checked node by node against a whitelist;
    only then is it given to :func:`sympy.parsing.sympy_parser.parse_expr`, with a namespace
    holding nothing but the whitelisted SymPy objects.

    Examples
    --------
    >>> parse_activation("0.6*t + 0.3*(t**2-1)/sqrt(2)")
    3*t/5 + sqrt(2)*(3*t**2/10 - 3/10)/2
    """
    if not isinstance(text, str):
        raise ActivationError(
            f"parse_activation expects a string, got {type(text).__name__}; pass a built-in "
            "name or a formula in t"
        )
    name = text.strip()
    if name in BUILTIN_ACTIVATIONS:
        return BUILTIN_ACTIVATIONS[name]
    if name.lower() in BUILTIN_ACTIVATIONS and not any(c in name for c in "()+-*/ "):
        return BUILTIN_ACTIVATIONS[name.lower()]
    try:
        expr = safe_parse(name, t)
    except UnsafeExpressionError as exc:
        raise ActivationError(
            f"cannot parse activation {text!r}: {exc}; give a built-in name "
            f"({', '.join(BUILTIN_ACTIVATIONS)}) or a formula in t"
        ) from None
    return _validate(expr, source=text)


def _as_activation(f: sympy.Expr | str) -> sympy.Expr:
    """Accept a string or a SymPy expression; return a validated expression in :data:`t`."""
    if isinstance(f, str):
        return parse_activation(f)
    if not isinstance(f, sympy.Basic):
        raise ActivationError(
            f"activation must be a SymPy expression or a string, got {type(f).__name__}"
        )
    return _validate(f, source=f)


def _validate(expr: sympy.Basic, source: Any) -> sympy.Expr:
    if not isinstance(expr, sympy.Expr) or isinstance(
            expr, (sympy.core.relational.Relational, sympy.logic.boolalg.BooleanFunction,
                   sympy.logic.boolalg.BooleanAtom)):
        raise ActivationError(f"activation {source!r} is not a numeric expression; write a formula in t")
    # Another symbol spelled 't' (e.g. without real=True) is the activation variable.
    others = {s for s in expr.free_symbols if s != t}
    renames = {s: t for s in others if isinstance(s, sympy.Symbol) and s.name == "t"}
    if renames:
        expr = expr.xreplace(renames)
        others = {s for s in expr.free_symbols if s != t}
    if others:
        names = ", ".join(sorted(str(s) for s in others))
        raise ActivationError(
            f"activation {str(source)!r} has free symbols other than t ({names}); "
            "substitute numbers for them"
        )
    if t not in expr.free_symbols:
        raise ActivationError(
            f"activation {str(source)!r} does not depend on t (a constant has no Hermite "
            "data); write a function of t"
        )
    if expr.has(sympy.I) or any(a.is_real is False for a in expr.atoms(sympy.Number)):
        raise ActivationError(f"activation {str(source)!r} contains complex numbers; use a real formula")
    if any(isinstance(a, sympy.core.function.AppliedUndef) for a in expr.atoms(sympy.Function)):
        raise ActivationError(
            f"activation {str(source)!r} contains an undefined function; use explicit formulas"
        )
    bad = [type(a).__name__ for a in sympy.preorder_traversal(expr) if isinstance(a, _FORBIDDEN_CLASSES)]
    if bad:
        raise ActivationError(
            f"activation {str(source)!r} uses {bad[0]}, which is not supported; use Max/Min/Abs/"
            "Heaviside/sign/Piecewise for non-smooth activations"
        )
    if expr.atoms(sympy.Float):
        # A float typed in Python (0.6) means its shortest decimal; make it exact.
        expr = sympy.nsimplify(expr, rational=True)
    for x in _CHECK_POINTS:
        value = expr.subs(t, x).evalf(30)
        if value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            continue  # singular points are caught later, with a better message
        re_part, im_part = value.as_real_imag()
        if im_part != 0 and abs(im_part) > 1e-20 * (1 + abs(re_part)):
            raise ActivationError(
                f"activation {str(source)!r} takes complex values (at t = {x}); use a real formula, "
                "e.g. log(1 + t**2) instead of log(t)"
            )
    return expr


# --------------------------------------------------------------------------------------------
# kinks and smooth pieces
# --------------------------------------------------------------------------------------------

def _switch_arguments(expr: sympy.Expr) -> list[sympy.Expr]:
    """Expressions whose sign changes are where ``expr`` may switch branch."""
    out: list[sympy.Expr] = []
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, (sympy.Max, sympy.Min)):
            args = node.args
            for i in range(len(args)):
                for j in range(i + 1, len(args)):
                    out.append(args[i] - args[j])
        elif isinstance(node, (sympy.Abs, sympy.sign, sympy.Heaviside)):
            out.append(node.args[0])
        elif isinstance(node, sympy.Piecewise):
            for _, cond in node.args:
                if isinstance(cond, sympy.logic.boolalg.BooleanAtom):
                    continue
                for rel in cond.atoms(sympy.core.relational.Relational):
                    out.append(rel.lhs - rel.rhs)
    return [a for a in out if a.has(t)]


def _numeric_zero_scan(g: sympy.Expr, window: float, dps: int) -> list[sympy.Expr]:
    """Sign changes of ``g`` on a grid in [-window, window], refined by bracketing."""
    fn = sympy.lambdify(t, g, "mpmath")
    roots: list[sympy.Expr] = []
    n = int(16 * window) + 1
    with mpmath.workdps(20):
        xs = [mpmath.mpf(-window) + 2 * mpmath.mpf(window) * i / (n - 1) for i in range(n)]
        vals = []
        for x in xs:
            try:
                v = fn(x)
                vals.append(mpmath.re(v) if mpmath.isfinite(v) else None)
            except (ValueError, ZeroDivisionError, OverflowError):
                vals.append(None)
    for (x0, v0), (x1, v1) in zip(zip(xs, vals), zip(xs[1:], vals[1:])):
        if v0 is None or v1 is None:
            continue
        if v0 == 0:
            roots.append(sympy.Float(x0, dps + 15))
        elif v0 * v1 < 0:
            with mpmath.workdps(dps + 15):
                try:
                    r = mpmath.findroot(lambda x: mpmath.re(fn(x)), (x0, x1), solver="anderson")
                except (ValueError, ZeroDivisionError):
                    r = (x0 + x1) / 2
                roots.append(sympy.Float(r, dps + 15))
    return roots


def _zeros(g: sympy.Expr, window: float, dps: int) -> tuple[list[sympy.Expr], bool]:
    """Real zeros of ``g``; returns ``(zeros, complete)``.

    ``complete`` is False when the set is infinite and was cut to [-window, window], or when a
    numeric scan had to be used (then zeros outside the window may be missing).
    """
    try:
        poly = sympy.Poly(g, t)
    except sympy.PolynomialError:
        poly = None
    if poly is not None and poly.degree() > 0 and all(c.is_number for c in poly.all_coeffs()):
        try:
            roots = sympy.real_roots(poly)
            return [sympy.sqrtdenest(r) if not isinstance(r, sympy.CRootOf) else r for r in roots], True
        except (NotImplementedError, sympy.PolynomialError):
            pass

    ok, sol = _with_time_limit(lambda: sympy.solveset(g, t, S.Reals), _SOLVE_BUDGET)
    if ok and isinstance(sol, sympy.FiniteSet):
        return list(sol), True
    if ok and sol is not None and not isinstance(sol, sympy.ConditionSet):
        box = sympy.Interval(-window, window)
        ok2, cut = _with_time_limit(lambda: sympy.Intersection(sol, box), _SOLVE_BUDGET)
        if ok2 and isinstance(cut, sympy.FiniteSet):
            return list(cut), False
        if ok2 and cut is S.EmptySet:
            return [], False
    return _numeric_zero_scan(g, window, dps), False


def _num(x: sympy.Expr, dps: int) -> mpmath.mpf:
    """High-precision value of a real SymPy number as an mpmath number."""
    if x is S.Infinity:
        return mpmath.inf
    if x is S.NegativeInfinity:
        return mpmath.ninf
    v = sympy.N(x, dps + 15)
    re_part, im_part = v.as_real_imag()
    if im_part != 0 and abs(im_part) > sympy.Float(10) ** (-(dps + 5)) * (1 + abs(re_part)):
        raise ValueError(f"{x} is not real")
    re_part = sympy.Float(re_part, dps + 15)
    with mpmath.workdps(dps + 15):
        return mpmath.mpf(re_part._mpf_)


def _is_exact_number(x: sympy.Expr) -> bool:
    return not x.atoms(sympy.Float) and not x.has(sympy.I)


def _kink_points(expr: sympy.Expr, window: float, dps: int) -> tuple[list[sympy.Expr], bool]:
    """Sorted distinct kinks and whether the list is complete and exact."""
    candidates: list[sympy.Expr] = []
    complete = True
    for g in _switch_arguments(expr):
        zs, comp = _zeros(g, window, dps)
        complete = complete and comp
        candidates.extend(zs)
    keyed = []
    for z in candidates:
        try:
            keyed.append((_num(z, dps), z))
        except (ValueError, TypeError):
            continue  # not a real number
    keyed.sort(key=lambda p: p[0])
    out: list[tuple[mpmath.mpf, sympy.Expr]] = []
    tol = mpmath.mpf(10) ** (-(dps + 5))
    for v, z in keyed:
        if out and abs(v - out[-1][0]) <= tol * (1 + abs(v)):
            continue
        out.append((v, z))
    points = []
    for v, z in out:
        if not _is_exact_number(z):
            complete = False
            z = sympy.Float(str(mpmath.nstr(v, dps + 15)), dps + 15)
        points.append(z)
    return points, complete


def kinks(expr: sympy.Expr | str, window: float = _DEFAULT_KINK_WINDOW) -> list[sympy.Expr]:
    """Real points where an activation is not smooth, sorted increasingly.

    Parameters
    ----------
    expr : sympy.Expr or str
        Activation in :data:`t` (strings go through :func:`parse_activation`).
    window : float, optional
        When the set of kinks is infinite (e.g. ``Abs(sin(t))``) only those in
        ``[-window, window]`` are returned; the Gaussian mass outside ``|t| > 40`` is below
        :math:`10^{-340}`. Finite sets are returned whole.

    Returns
    -------
    list of sympy.Expr
        Zeros of the arguments of Max/Min (pairwise differences), Abs, Heaviside and sign, and of
        ``lhs - rhs`` of Piecewise conditions. Exact (radicals, ``CRootOf``, ``atanh(1/2)``...)
        when SymPy can solve; otherwise 50-digit Floats from a bracketed numeric search. Points
        where a branch switch happens to be smooth may be included; that is harmless for the
        quadrature split.

    Notes
    -----
    Cost: polynomial arguments use ``sympy.real_roots``; others ``solveset`` under a
    2-second limit, then a grid scan (step 1/16) with bracketed refinement.

    Examples
    --------
    >>> kinks("relu(t) + abs(t**2 - 2)")
    [-sqrt(2), 0, sqrt(2)]
    """
    expr = _as_activation(expr)
    points, _ = _kink_points(expr, window, 35)
    return points


def _resolve_branches(expr: sympy.Expr, point: sympy.Expr) -> sympy.Expr:
    """Replace every non-smooth node by the branch it takes at ``point`` (exact number)."""

    def value(e):
        v = sympy.N(e.subs(t, point), 40)
        return v.as_real_imag()[0]

    def truth(cond) -> bool:
        c = cond.subs(t, point)
        if c in (S.true, S.false):
            return bool(c)
        # Unevaluated relations between numbers: decide numerically.
        rels = {r: S.true if _relation_holds(r) else S.false
                for r in c.atoms(sympy.core.relational.Relational)}
        return bool(c.xreplace(rels))

    def rec(e):
        if e.is_Atom or not e.has(*_NONSMOOTH):
            return e
        if isinstance(e, sympy.Piecewise):
            for piece_expr, cond in e.args:
                if truth(cond):
                    return rec(piece_expr)
            raise ActivationError(
                f"Piecewise {e} is undefined at t = {point}; add an otherwise branch (expr, True)"
            )
        args = [rec(a) for a in e.args]
        if isinstance(e, sympy.Max):
            return max(args, key=value)
        if isinstance(e, sympy.Min):
            return min(args, key=value)
        if isinstance(e, sympy.Abs):
            return args[0] if value(args[0]) >= 0 else -args[0]
        if isinstance(e, sympy.sign):
            v = value(args[0])
            return S.One if v > 0 else (S.NegativeOne if v < 0 else S.Zero)
        if isinstance(e, sympy.Heaviside):
            v = value(args[0])
            return S.One if v > 0 else S.Zero
        return e.func(*args)

    return rec(expr)


def _relation_holds(rel) -> bool:
    diff = sympy.N(rel.lhs - rel.rhs, 40).as_real_imag()[0]
    return bool(rel.func(diff, 0))


@dataclass(frozen=True)
class _Piece:
    a: sympy.Expr  # left end (may be -oo)
    b: sympy.Expr  # right end (may be oo)
    expr: sympy.Expr  # smooth branch on (a, b)
    exact_ends: bool  # ends exact (so closed forms are allowed)


@dataclass(frozen=True)
class _Decomposition:
    expr: sympy.Expr
    pieces: tuple[_Piece, ...]
    exact_ok: bool  # kinks complete and exact: closed forms may be trusted
    parity: int  # +1 even, -1 odd (about `centre`), 0 neither
    centre: sympy.Expr | None  # f - centre is odd (parity -1); its E is `centre`
    polynomial_degree: int | None  # degree when f is a polynomial in t


def _window_for(dps: int) -> float:
    """Half-width outside which the Gaussian mass is below 10^-(dps+15)."""
    return math.ceil(math.sqrt(2 * (dps + 15) * math.log(10))) + 2


def _parity(expr: sympy.Expr) -> tuple[int, sympy.Expr | None]:
    """Structural parity: (+1, None) even, (-1, c) if f - c is odd, (0, None) otherwise."""
    mirrored = expr.subs(t, -t)

    def attempt():
        if sympy.expand(mirrored - expr) == 0:
            return 1, None
        s = sympy.expand(mirrored + expr)
        if s == 0:
            return -1, S.Zero
        if not s.has(t):
            return -1, s / 2
        s2 = sympy.cancel(sympy.expand(s.rewrite(sympy.exp)))
        if not s2.has(t):
            return -1, s2 / 2
        return 0, None

    ok, res = _with_time_limit(attempt, _SIMPLIFY_BUDGET)
    return res if ok else (0, None)


@functools.lru_cache(maxsize=512)
def _decompose(expr: sympy.Expr, dps: int) -> _Decomposition:
    window = _window_for(dps)
    points, complete = _kink_points(expr, window, dps)
    ends = [S.NegativeInfinity, *points, S.Infinity]
    pieces = []
    for a, b in zip(ends[:-1], ends[1:]):
        if a is S.NegativeInfinity and b is S.Infinity:
            probe = S.Zero
        elif a is S.NegativeInfinity:
            probe = b - 1
        elif b is S.Infinity:
            probe = a + 1
        else:
            probe = (a + b) / 2
        smooth = _resolve_branches(expr, probe) if expr.has(*_NONSMOOTH) else expr
        exact_ends = _is_exact_number(a) and _is_exact_number(b)
        pieces.append(_Piece(a, b, smooth, exact_ends))
    try:
        poly = sympy.Poly(expr, t)
        degree = poly.degree() if all(c.is_number for c in poly.all_coeffs()) else None
    except sympy.PolynomialError:
        degree = None
    parity, centre = _parity(expr)
    decomposition = _Decomposition(expr, tuple(pieces), complete, parity, centre, degree)
    removable = _check_pieces(decomposition, dps)
    if removable:
        # Split at removable singularities so that quadrature never evaluates f there.
        split: list[_Piece] = []
        for piece in pieces:
            inside = sorted((p for p in removable if (piece.a < p) == True and (p < piece.b) == True),
                            key=lambda p: _num(p, dps))
            ends_here = [piece.a, *inside, piece.b]
            for a, b in zip(ends_here[:-1], ends_here[1:]):
                split.append(_Piece(a, b, piece.expr, piece.exact_ends and _is_exact_number(a)
                                    and _is_exact_number(b)))
        decomposition = _Decomposition(expr, tuple(split), complete, parity, centre, degree)
    return decomposition


def _check_pieces(dec: _Decomposition, dps: int) -> list[sympy.Expr]:
    """Refuse activations that are singular on the line or whose E f^2 diverges.

    Returns the removable singular points (finite two-sided limit, e.g. 0 for sin(t)/t); the
    caller splits the quadrature there so that f is never evaluated at them.
    """
    removable: list[sympy.Expr] = []
    for piece in dec.pieces:
        interval = sympy.Interval.open(piece.a, piece.b)

        def domain():
            from sympy.calculus.util import continuous_domain
            return continuous_domain(piece.expr, t, interval)

        try:
            ok, dom = _with_time_limit(domain, _SIMPLIFY_BUDGET)
        except (NotImplementedError, ValueError, TypeError):
            ok, dom = False, None
        if ok and dom is not None and dom != interval:
            bad = sympy.Complement(interval, dom)
            if isinstance(bad, sympy.FiniteSet) and all(_removable(piece.expr, p) for p in bad):
                removable.extend(bad)
            else:
                where = ", ".join(str(p) for p in bad) if isinstance(bad, sympy.FiniteSet) else str(bad)
                raise ActivationError(
                    f"activation {dec.expr} is singular or undefined at t in {where}; Gaussian "
                    "expectations need a function that is finite on the real line"
                )
        _check_growth(dec.expr, piece, dps)
    return removable


def _removable(expr: sympy.Expr, point: sympy.Expr) -> bool:
    """True if both one-sided limits of ``expr`` at ``point`` exist, are finite and agree."""

    def limits():
        left = sympy.limit(expr, t, point, "-")
        right = sympy.limit(expr, t, point, "+")
        return left, right

    try:
        ok, res = _with_time_limit(limits, _SIMPLIFY_BUDGET)
    except (NotImplementedError, ValueError, TypeError):
        return False
    if not ok:
        return False
    left, right = res
    return bool(left.is_finite and right.is_finite and sympy.simplify(left - right) == 0)


def _check_growth(expr: sympy.Expr, piece: _Piece, dps: int) -> None:
    """Numeric test that f(T)^2 exp(-T^2/2) decays faster than T^-1.5 at the infinite ends."""
    fn = sympy.lambdify(t, piece.expr, "mpmath")
    for side, infinite in ((-1, piece.a is S.NegativeInfinity), (1, piece.b is S.Infinity)):
        if not infinite:
            continue
        flagged = 0
        with mpmath.workdps(30):
            for big in (100, 200, 400, 800):
                x = mpmath.mpf(side * big)
                try:
                    v = fn(x)
                except (ValueError, ZeroDivisionError, OverflowError):
                    continue
                if not mpmath.isfinite(v):
                    flagged += 2
                    continue
                if v == 0:
                    continue
                psi = 2 * mpmath.log(abs(v)) - x * x / 2
                if psi > -mpmath.mpf(3) / 2 * mpmath.log(big):
                    flagged += 1
        if flagged >= 2:
            raise ActivationError(
                f"Gaussian moments of f diverge: E[f(xi)^2] is infinite for f = {expr} "
                f"(f grows like exp(t**2/4) or faster as t -> {'-' if side < 0 else ''}oo); "
                "use an activation of slower growth"
            )


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
def _exact_hermite_moment(dec: _Decomposition, k: int, square: bool, allow_sympy: bool):
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


def _by_parts(piece: _Piece, k: int) -> sympy.Expr | None:
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
    ``-L, 0, L`` that fall inside it (``L = _window_for(dps)``, beyond which the Gaussian
    weight is below 10^-(dps+15)); the split halves the number of nodes compared with
    mpmath's own map of an infinite interval. f(x)·φ(x) and h_0..h_K(x) are memoised per
    node, so all integrals of one activation at one precision share their evaluations.
    """

    def __init__(self, dec: _Decomposition, dps: int):
        self.dec = dec
        self.dps = dps
        self.work = dps + 10
        L = _window_for(dps)
        self._skip = max(100, 3 * L)  # |x| beyond which f*phi is negligible (see _check_growth)
        self.points: list[list] = []
        with mpmath.workdps(self.work + 5):
            for p in dec.pieces:
                a, b = _num(p.a, self.work), _num(p.b, self.work)
                inner = [mpmath.mpf(c) for c in (-L, 0, L) if a < c < b]
                self.points.append([a, *inner, b])
            self._inv_sqrt_2pi = 1 / mpmath.sqrt(2 * mpmath.pi)
        self.fns = [sympy.lambdify(t, p.expr, "mpmath") for p in dec.pieces]
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
    v = _num(e, dps)
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
    expr = _as_activation(f)
    dps = _check_dps(dps)
    if isinstance(parseval_order, bool) or not isinstance(parseval_order, int) or parseval_order < 0:
        raise ActivationError(f"parseval_order must be a non-negative integer, got {parseval_order!r}")
    return _hermite_cached(expr, dps, parseval_order)


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
    dec = _decompose(expr, dps)
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
            values[name] = _num(exact[name], work)
            errors[name] = 0.0
        else:
            v, e = numeric().coefficient(k)
            values[name], errors[name] = v, float(e)
    if "nu" in exact:
        values["nu"] = _num(exact["nu"], work)
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


def _parseval_residual(dec: _Decomposition, values, exact, K: int, numeric, dps: int) -> float:
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
        return abs(float(_num(res, work))) if res != 0 else 0.0
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
    expr = _as_activation(f)
    dps = _check_dps(dps)
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ActivationError(f"k must be a non-negative integer, got {k!r}")
    return _coefficient_cached(expr, k, dps)


@functools.lru_cache(maxsize=1024)
@_with_divergence_message
def _coefficient_cached(expr: sympy.Expr, k: int, dps: int) -> mpmath.mpf:
    dec = _decompose(expr, dps)
    _exact_hermite_moment(dec, 0, True, False)  # raises _Diverges if E f^2 is infinite
    val = _exact_hermite_moment(dec, k, False, k <= 4)
    if val is not None:
        return _to_mpf(val / sympy.sqrt(sympy.factorial(k)), dps)
    v, _ = _Integrator(dec, dps).coefficient(k)
    with mpmath.workdps(dps):
        return +v
