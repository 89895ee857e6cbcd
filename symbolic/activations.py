r"""Activation functions: parsing, built-ins, kinks and smooth pieces (attention_rmt.md §4.1).

Activations are SymPy expressions in the one real symbol :data:`t`, or strings parsed safely by
:func:`parse_activation` (an AST whitelist before SymPy sees anything). :func:`kinks` finds where
Max/Min/Abs/Heaviside/sign/Piecewise switch branch; the private decomposition into smooth pieces
(one branch per interval between kinks), the check that :math:`f` is finite on the line and that
:math:`\mathbb E f(\xi)^2` converges, and a bounded mpmath evaluator serve
:mod:`attnlimits.symbolic.hermite`, which computes the Hermite coefficients.

Bounded work
------------
SymPy calls that can hang (``solveset``, simplifications) run under the one time guard of
:mod:`attnlimits.symbolic._timeguard`. mpmath evaluations go through :func:`mpmath_function`, which refuses
``exp``/``sinh``/``cosh`` arguments above :data:`EXP_ARGUMENT_LIMIT` (and trigonometric arguments
above :data:`TRIG_ARGUMENT_LIMIT`) with ``OverflowError`` instead of computing them: mpmath would
otherwise spend minutes on, e.g., :math:`\exp(\exp(\exp(99)))`, a value no Gaussian integral can use
(the growth check then refuses such activations at once).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import mpmath
import sympy
from sympy import S

from .safe_parse import MAGNITUDE_LIMIT as _PARSE_MAGNITUDE_LIMIT
from .safe_parse import UnsafeExpressionError, safe_parse
from ._timeguard import with_time_limit as _with_time_limit

__all__ = [
    "t",
    "BUILTIN_ACTIVATIONS",
    "ActivationError",
    "parse_activation",
    "canonical_activation",
    "kinks",
    "check_gaussian_moments",
    "mpmath_function",
    "EXP_ARGUMENT_LIMIT",
    "TRIG_ARGUMENT_LIMIT",
]

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
_SOLVE_BUDGET = 2.0
_SIMPLIFY_BUDGET = 1.0

# Kinks are looked for in [-window, window] when there are infinitely many of them.
_DEFAULT_KINK_WINDOW = 40



class ActivationError(ValueError):
    """An activation cannot be used; the one-line message says what is wrong and what to do."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))

#: Largest real part of an ``exp``/``sinh``/``cosh`` argument that :func:`mpmath_function` evaluates
#: (:math:`e^{10^7}` is far beyond any value a Gaussian integral at :math:`|t|\le100` can use).
EXP_ARGUMENT_LIMIT = 10**7
#: Largest :math:`|x|` given to sin/cos/tan (argument reduction costs about :math:`\log_2|x|` bits).
TRIG_ARGUMENT_LIMIT = mpmath.mpf(2) ** 65536


def _capped(fn, limit, what, *, small_exp_is_zero: bool = False):
    def f(x):
        re = mpmath.re(x) if isinstance(x, mpmath.mpc) else x
        if small_exp_is_zero and re < -limit:
            return mpmath.mpf(0)
        if abs(re) > limit:
            raise OverflowError(f"{what} argument beyond the evaluation limit")
        return fn(x)

    return f


_BOUNDED_MPMATH = {
    "exp": _capped(mpmath.exp, EXP_ARGUMENT_LIMIT, "exp", small_exp_is_zero=True),
    "sinh": _capped(mpmath.sinh, EXP_ARGUMENT_LIMIT, "sinh"),
    "cosh": _capped(mpmath.cosh, EXP_ARGUMENT_LIMIT, "cosh"),
    "sin": _capped(mpmath.sin, TRIG_ARGUMENT_LIMIT, "sin"),
    "cos": _capped(mpmath.cos, TRIG_ARGUMENT_LIMIT, "cos"),
    "tan": _capped(mpmath.tan, TRIG_ARGUMENT_LIMIT, "tan"),
}


def mpmath_function(expr: sympy.Expr):
    r"""``sympy.lambdify(t, expr, "mpmath")`` with bounded work.

    ``exp`` of an argument below :math:`-`:data:`EXP_ARGUMENT_LIMIT` is 0 (it is below
    :math:`10^{-4\cdot10^6}`); above :data:`EXP_ARGUMENT_LIMIT` (and ``sinh``/``cosh`` beyond it in
    absolute value, sin/cos/tan beyond :data:`TRIG_ARGUMENT_LIMIT`) the call raises ``OverflowError``.
    """
    return sympy.lambdify(t, expr, [_BOUNDED_MPMATH, "mpmath"])


# --------------------------------------------------------------------------------------------
# parsing and validation
# --------------------------------------------------------------------------------------------

_FORBIDDEN_CLASSES = (
    sympy.DiracDelta, sympy.floor, sympy.ceiling, sympy.frac, sympy.Integral, sympy.Derivative,
    sympy.Sum, sympy.Product, sympy.Order, sympy.Subs,
)
_NONSMOOTH = (sympy.Max, sympy.Min, sympy.Abs, sympy.Heaviside, sympy.sign, sympy.Piecewise)
_CHECK_POINTS = (S(-27) / 10, S(-13) / 10, S(-2) / 5, S(7) / 20, S(11) / 10, S(13) / 5)


def canonical_activation(text: str) -> str:
    """The canonical text of an activation: a built-in name as is, a formula as SymPy prints its parsed
    expression (``'0.6*t #x'`` → ``'3*t/5'``).  Only this form reaches generated source, exported
    files and cache keys; it re-parses to the same expression."""
    key = str(text).strip()
    if key in BUILTIN_ACTIVATIONS:
        return key
    return sympy.sstr(parse_activation(key))


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


def as_activation(f: sympy.Expr | str) -> sympy.Expr:
    """Accept a string or a SymPy expression; return a validated expression in :data:`t`."""
    if isinstance(f, str):
        return parse_activation(f)
    if not isinstance(f, sympy.Basic):
        raise ActivationError(
            f"activation must be a SymPy expression or a string, got {type(f).__name__}"
        )
    return _validate(f, source=f)


#: the largest log10 |f(t)| an activation may reach for |t| <= 10 (a number of 10 000 digits): beyond it
#: nothing about f can be evaluated in reasonable time, and its Gaussian moments are out of reach
MAGNITUDE_LIMIT = _PARSE_MAGNITUDE_LIMIT
_BOUND_T = 10.0
_LOG10E = math.log10(math.e)


def magnitude_bound(expr: sympy.Expr, T: float = _BOUND_T) -> float:
    """An upper bound of log10 |expr(t)| over |t| <= T, from the expression tree alone (no evaluation).

    Interval reasoning per node: a sum is at most its largest term times the number of terms, a
    product the product of bounds, ``exp(x)`` at most ``e^(10^b(x))``, bounded functions (tanh, erf,
    sin, cos, sigmoid, Heaviside, sign) at most 1, powers and roots scale the bound; an unknown node
    is taken as its arguments' largest bound.  ``inf`` when the bound itself overflows (a tower of
    exponentials).  Used to refuse such formulas before SymPy tries to evaluate them."""
    def b(e) -> float:
        if e == t or (isinstance(e, sympy.Symbol)):
            return math.log10(T)
        if e.is_Number:
            if e == 0:
                return -math.inf
            if e.is_Rational:
                p, q = abs(int(e.p)), abs(int(e.q))
                return math.log10(p) - math.log10(q)
            try:
                return math.log10(abs(float(e)))
            except (OverflowError, ValueError, TypeError):
                return math.inf
        if e.is_NumberSymbol:
            return math.log10(abs(float(e)))
        if isinstance(e, sympy.Add):
            return max(b(a) for a in e.args) + math.log10(len(e.args))
        if isinstance(e, sympy.Mul):
            return sum(max(b(a), -300.0) for a in e.args)
        if isinstance(e, sympy.Pow):
            base, ex = e.args
            if ex.is_Number:
                return float(ex) * b(base) if ex > 0 else 0.0  # 1/x near 0 is caught elsewhere
            be = b(ex)
            if be > 20:
                return math.inf
            return (10 ** be) * max(b(base), 0.0)
        if isinstance(e, (sympy.exp, sympy.sinh, sympy.cosh)):
            bx = b(e.args[0])
            if bx > 20:
                return math.inf
            return (10 ** bx) * _LOG10E
        if isinstance(e, (sympy.tanh, sympy.erf, sympy.sin, sympy.cos, sympy.Heaviside, sympy.sign,
                          sympy.atan)):
            return 0.0
        if isinstance(e, sympy.log):
            bx = b(e.args[0])
            return math.log10(max(abs(bx) * math.log(10), 1.0)) if math.isfinite(bx) else math.inf
        if e.args:
            return max(b(a) for a in e.args)
        return 0.0

    try:
        return float(b(expr))
    except RecursionError:
        return math.inf


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
    if expr.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):  # t/0, log(0)*t: no value anywhere
        raise ActivationError(f"activation {str(source)[:80]!r} is infinite or undefined (a division by zero or "
                              "log(0)?); write a finite formula in t")
    bound = magnitude_bound(expr)  # before any evaluation: towers of exponentials never reach evalf
    if bound > MAGNITUDE_LIMIT:
        raise ActivationError(
            f"activation {str(source)[:80]!r} grows beyond 10^{MAGNITUDE_LIMIT:g} for |t| <= {_BOUND_T:g} "
            "(e.g. exp of exp of t): its Gaussian moments cannot be computed; use an activation of slower growth")
    for x in _CHECK_POINTS:
        try:
            value = expr.subs(t, x).evalf(30)
        except (TypeError, ValueError) as exc:  # Max/Min of a complex value: "not comparable"
            raise ActivationError(
                f"activation {str(source)!r} cannot be evaluated at t = {x} ({str(exc).splitlines()[0][:80]}); "
                "it must be real for every real t, e.g. log(1 + t**2) instead of log(t)") from None
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
    fn = mpmath_function(g)
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

    def solve():
        try:
            return sympy.solveset(g, t, S.Reals)
        except (AttributeError, TypeError, ValueError, NotImplementedError, RecursionError):
            # SymPy's own failures (e.g. an AttributeError inside solveset for Max(sin(t), sin(1e300)),
            # found by the nightly family run): fall back to the numeric scan below
            return None

    ok, sol = _with_time_limit(solve, _SOLVE_BUDGET)
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


def mp_value(x: sympy.Expr, dps: int) -> mpmath.mpf:
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
            keyed.append((mp_value(z, dps), z))
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
    expr = as_activation(expr)
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
class Piece:
    """One smooth branch of an activation: ``expr`` on the open interval (``a``, ``b``)."""

    a: sympy.Expr  # left end (may be -oo)
    b: sympy.Expr  # right end (may be oo)
    expr: sympy.Expr  # smooth branch on (a, b)
    exact_ends: bool  # ends exact (so closed forms are allowed)


@dataclass(frozen=True)
class Decomposition:
    """An activation split at its kinks into smooth :class:`Piece` s, with the structure (parity, polynomial
    degree) that lets :mod:`attnlimits.symbolic.hermite` choose closed forms or quadrature."""

    expr: sympy.Expr
    pieces: tuple[Piece, ...]
    exact_ok: bool  # kinks complete and exact: closed forms may be trusted
    parity: int  # +1 even, -1 odd (about `centre`), 0 neither
    centre: sympy.Expr | None  # f - centre is odd (parity -1); its E is `centre`
    polynomial_degree: int | None  # degree when f is a polynomial in t


def window_for(dps: int) -> float:
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
def decompose(expr: sympy.Expr, dps: int) -> Decomposition:
    """Split ``expr`` (in :data:`t`) at its kinks within the Gaussian window of ``dps`` digits."""
    window = window_for(dps)
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
        pieces.append(Piece(a, b, smooth, exact_ends))
    try:
        poly = sympy.Poly(expr, t)
        degree = poly.degree() if all(c.is_number for c in poly.all_coeffs()) else None
    except sympy.PolynomialError:
        degree = None
    parity, centre = _parity(expr)
    decomposition = Decomposition(expr, tuple(pieces), complete, parity, centre, degree)
    removable = _check_pieces(decomposition, dps)
    if removable:
        # Split at removable singularities so that quadrature never evaluates f there.
        split: list[Piece] = []
        for piece in pieces:
            inside = sorted((p for p in removable if (piece.a < p) == True and (p < piece.b) == True),
                            key=lambda p: mp_value(p, dps))
            ends_here = [piece.a, *inside, piece.b]
            for a, b in zip(ends_here[:-1], ends_here[1:]):
                split.append(Piece(a, b, piece.expr, piece.exact_ends and _is_exact_number(a)
                                    and _is_exact_number(b)))
        decomposition = Decomposition(expr, tuple(split), complete, parity, centre, degree)
    return decomposition


def check_gaussian_moments(f: sympy.Expr | str, dps: int = 30) -> sympy.Expr:
    r"""Refuse an activation whose Gaussian moments do not exist; return it validated.

    The checks of the Hermite computation, for code paths that use :math:`f` without its Hermite
    data (generated kernels evaluated at Gaussian points, e.g. the SLR user activations):
    :class:`ActivationError` (one line) when :math:`f` is singular on the real line (``1/t``:
    :math:`\mathbb E f(\xi)^2=\infty`, and sample averages never settle) or grows so fast that
    :math:`\mathbb E f(\xi)^2` diverges (``exp(t**2)``).  Removable singularities (``sin(t)/t``) and
    integrable ones of a finite second moment (``log(Abs(t))``) pass.  Cost: the kink and
    singularity analysis of the Hermite path (cached), typically below 0.1 s.
    """
    expr = as_activation(f)
    decompose(expr, int(dps))
    return expr


def _check_pieces(dec: Decomposition, dps: int) -> list[sympy.Expr]:
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


def _check_growth(expr: sympy.Expr, piece: Piece, dps: int) -> None:
    """Numeric test that f(T)^2 exp(-T^2/2) decays faster than T^-1.5 at the infinite ends."""
    fn = mpmath_function(piece.expr)
    for side, infinite in ((-1, piece.a is S.NegativeInfinity), (1, piece.b is S.Infinity)):
        if not infinite:
            continue
        flagged = 0
        with mpmath.workdps(30):
            for big in (100, 200, 400, 800):
                x = mpmath.mpf(side * big)
                try:
                    v = fn(x)
                except OverflowError:  # beyond the evaluation limits: f is astronomically large here
                    flagged += 2
                    continue
                except (ValueError, ZeroDivisionError):
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

