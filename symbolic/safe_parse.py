"""Safe parsing of activation expressions typed by users.

The text is first parsed by Python's :mod:`ast` module and checked against a whitelist of node
types, names and literals; only then is it handed to
:func:`sympy.parsing.sympy_parser.parse_expr` with a namespace that contains nothing but the
whitelisted SymPy objects (``parse_expr`` evaluates its input, so the whitelist check is what
makes it safe). Decimal literals become exact :class:`sympy.Rational` numbers, so no 53-bit
``Float`` ever enters an activation (see GUIDE.md §5).

The public entry point is :func:`attnlimits.symbolic.hermite.parse_activation`; this module only knows
about the grammar, not about built-in activation names.
"""
from __future__ import annotations

import ast
import math
from typing import Callable

import sympy
from sympy.parsing.sympy_parser import (
    convert_xor,
    parse_expr,
    rationalize,
    standard_transformations,
)

__all__ = ["ALLOWED_CONSTANTS", "ALLOWED_FUNCTIONS", "UnsafeExpressionError", "safe_parse"]

#: Longest expression accepted (characters).
MAX_LENGTH = 2000
#: Largest absolute value of a numeric literal used as an exponent.
MAX_EXPONENT = 100
#: Most digits a numeric literal may have.
MAX_LITERAL_DIGITS = 40


def _sigmoid(x):
    return 1 / (1 + sympy.exp(-x))


def _relu(x):
    return sympy.Max(0, x)


#: Function names a user may call, with the SymPy callable and the number of arguments
#: (``None``: any number ≥ 1).
ALLOWED_FUNCTIONS: dict[str, tuple[Callable, int | None]] = {
    "exp": (sympy.exp, 1),
    "log": (sympy.log, 1),
    "sqrt": (sympy.sqrt, 1),
    "tanh": (sympy.tanh, 1),
    "sinh": (sympy.sinh, 1),
    "cosh": (sympy.cosh, 1),
    "asinh": (sympy.asinh, 1),
    "sin": (sympy.sin, 1),
    "cos": (sympy.cos, 1),
    "atan": (sympy.atan, 1),
    "erf": (sympy.erf, 1),
    "erfc": (sympy.erfc, 1),
    "Abs": (sympy.Abs, 1),
    "abs": (sympy.Abs, 1),
    "Max": (sympy.Max, None),
    "Min": (sympy.Min, None),
    "max": (sympy.Max, None),
    "min": (sympy.Min, None),
    "Heaviside": (sympy.Heaviside, 1),
    "sign": (sympy.sign, 1),
    "sigmoid": (_sigmoid, 1),
    "relu": (_relu, 1),
}

#: Bare names a user may write (besides the variable).
ALLOWED_CONSTANTS: dict[str, sympy.Expr] = {"pi": sympy.pi, "E": sympy.E}

_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.BitXor)
_UNARYOPS = (ast.UAdd, ast.USub)


class UnsafeExpressionError(ValueError):
    """The text is not in the whitelisted expression grammar (one-line message)."""


def _check(node: ast.AST, variable: str) -> None:
    """Recursively check one AST node against the whitelist."""
    if isinstance(node, ast.Expression):
        _check(node.body, variable)
    elif isinstance(node, ast.BinOp):
        if not isinstance(node.op, _BINOPS):
            raise UnsafeExpressionError(
                f"operator {type(node.op).__name__} is not allowed; use + - * / ** and parentheses"
            )
        if isinstance(node.op, (ast.Pow, ast.BitXor)):
            _check_exponent(node.right)
        _check(node.left, variable)
        _check(node.right, variable)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, _UNARYOPS):
            raise UnsafeExpressionError(
                f"operator {type(node.op).__name__} is not allowed; use + - * / ** and parentheses"
            )
        _check(node.operand, variable)
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in ALLOWED_FUNCTIONS:
            what = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
            raise UnsafeExpressionError(
                f"call of {what!r} is not allowed; allowed functions: "
                + ", ".join(sorted(ALLOWED_FUNCTIONS))
            )
        if node.keywords:
            raise UnsafeExpressionError("keyword arguments are not allowed in activation expressions")
        arity = ALLOWED_FUNCTIONS[node.func.id][1]
        nargs = len(node.args)
        if (arity is None and nargs < 1) or (arity is not None and nargs != arity):
            need = "at least 1" if arity is None else str(arity)
            raise UnsafeExpressionError(
                f"{node.func.id}() takes {need} argument(s), got {nargs}"
            )
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise UnsafeExpressionError("starred arguments are not allowed")
            _check(arg, variable)
    elif isinstance(node, ast.Name):
        if node.id == variable or node.id in ALLOWED_CONSTANTS:
            return
        if node.id in ALLOWED_FUNCTIONS:
            raise UnsafeExpressionError(f"function {node.id!r} must be called, e.g. {node.id}(t)")
        raise UnsafeExpressionError(
            f"unknown name {node.id!r}; the only variable is {variable!r} "
            f"(constants: {', '.join(sorted(ALLOWED_CONSTANTS))})"
        )
    elif isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UnsafeExpressionError(
                f"literal {value!r} is not allowed; only real numbers may appear"
            )
        if isinstance(value, int) and len(str(abs(value))) > MAX_LITERAL_DIGITS:
            raise UnsafeExpressionError(f"integer literal has more than {MAX_LITERAL_DIGITS} digits")
    else:
        raise UnsafeExpressionError(
            f"{type(node).__name__} syntax is not allowed; write a formula in {variable!r} "
            "with numbers, + - * / ** and whitelisted functions"
        )


def _check_exponent(node: ast.AST) -> None:
    """Forbid power towers and huge numeric exponents (they can exhaust memory)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, (ast.Pow, ast.BitXor)):
            raise UnsafeExpressionError("nested powers (a**b**c) are not allowed; simplify the exponent")
        if isinstance(sub, ast.Constant) and isinstance(sub.value, (int, float)) \
                and not isinstance(sub.value, bool) and abs(sub.value) > MAX_EXPONENT:
            raise UnsafeExpressionError(f"exponent literal larger than {MAX_EXPONENT} is not allowed")


#: the largest log10 |value| any sub-expression may reach for |variable| <= 10 (a number of 10 000 digits)
MAGNITUDE_LIMIT = 1e4
_VARIABLE_BOUND = 10.0
_LOG10E = math.log10(math.e)
_AT_MOST_ONE = {"tanh", "erf", "sin", "cos", "sigmoid", "Heaviside", "sign", "atan"}


class _TooLarge(Exception):
    def __init__(self, node):
        super().__init__()
        self.node = node


def _log10_bound(node: ast.AST, variable: str) -> float:
    """An upper bound of log10 |node| over |variable| <= 10, on the syntax tree (nothing is evaluated).

    The rules of :func:`attnlimits.symbolic.activations.magnitude_bound`, applied to *every*
    sub-expression: ``sin(cosh(1e300))`` is bounded, but SymPy evaluates ``cosh(1e300)`` while it
    builds it (``Min``/``Max`` compare their arguments numerically) and never returns.  Raises
    :class:`_TooLarge` at the first sub-expression beyond :data:`MAGNITUDE_LIMIT`.
    """
    def b(n) -> float:
        out = _node(n)
        if out > MAGNITUDE_LIMIT:
            raise _TooLarge(n)
        return out

    def _node(n) -> float:
        if isinstance(n, ast.Expression):
            return b(n.body)
        if isinstance(n, ast.Constant):
            v = abs(n.value)
            return -math.inf if v == 0 else math.log10(v)
        if isinstance(n, ast.Name):
            if n.id == variable:
                return math.log10(_VARIABLE_BOUND)
            c = ALLOWED_CONSTANTS.get(n.id)
            return math.log10(abs(float(c))) if c is not None else 0.0
        if isinstance(n, ast.UnaryOp):
            return b(n.operand)
        if isinstance(n, ast.BinOp):
            lo, hi = b(n.left), b(n.right)
            if isinstance(n.op, (ast.Add, ast.Sub)):
                return max(lo, hi) + math.log10(2)
            if isinstance(n.op, ast.Mult):
                return max(lo, -300.0) + max(hi, -300.0)
            if isinstance(n.op, ast.Div):  # a small constant denominator makes the quotient large
                return lo + max(0.0, -hi) if math.isfinite(hi) else lo
            if isinstance(n.op, (ast.Pow, ast.BitXor)):
                if isinstance(n.right, ast.Constant) or (isinstance(n.right, ast.UnaryOp)
                                                         and isinstance(n.right.operand, ast.Constant)):
                    return abs(float(ast.literal_eval(n.right))) * abs(lo) if math.isfinite(lo) else 0.0
                if hi > 20:
                    return math.inf
                return (10 ** hi) * max(lo, 0.0)
            return max(lo, hi)
        if isinstance(n, ast.Call):
            name = n.func.id if isinstance(n.func, ast.Name) else ""
            args = [b(a) for a in n.args]
            if name in ("exp", "cosh", "sinh"):
                return math.inf if args[0] > 20 else (10 ** args[0]) * _LOG10E
            if name in _AT_MOST_ONE:
                return 0.0
            if name == "erfc":
                return math.log10(2)
            if name in ("log", "asinh"):
                if args[0] == -math.inf:  # log(0): infinite, which validation reports as such
                    return 0.0
                return math.log10(max(abs(args[0]) * math.log(10), 1.0)) if math.isfinite(args[0]) else math.inf
            if name == "sqrt":
                return args[0] / 2
            return max(args) if args else 0.0
        return 0.0

    return b(node)


def safe_parse(text: str, variable: sympy.Symbol) -> sympy.Expr:
    """Parse ``text`` into a SymPy expression in ``variable`` without evaluating arbitrary code.

    Parameters
    ----------
    text : str
        Formula such as ``"0.6*t + 0.3*(t**2-1)/sqrt(2)"``. ``^`` is read as a power.
    variable : sympy.Symbol
        The only free name allowed.

    Returns
    -------
    sympy.Expr
        The expression, with every decimal literal turned into an exact ``Rational``.

    Raises
    ------
    UnsafeExpressionError
        If the text is not valid Python expression syntax or uses anything outside the
        whitelist (attributes, subscripts, lambdas, strings, comparisons, unknown names...).
    """
    if not isinstance(text, str):
        raise UnsafeExpressionError(f"expected a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise UnsafeExpressionError(f"expression longer than {MAX_LENGTH} characters")
    stripped = text.strip()
    if not stripped:
        raise UnsafeExpressionError("empty expression")
    try:
        tree = ast.parse(stripped, mode="eval")
    except SyntaxError as exc:
        raise UnsafeExpressionError(f"not a valid formula ({exc.msg})") from None
    _check(tree, variable.name)
    try:
        _log10_bound(tree, variable.name)
    except _TooLarge as big:
        sub = ast.unparse(big.node)
        sub = sub if len(sub) <= 60 else sub[:57] + "..."
        raise UnsafeExpressionError(
            f"the sub-expression {sub!r} grows beyond 10^{MAGNITUDE_LIMIT:g} for |t| <= {_VARIABLE_BOUND:g} (e.g. exp "
            "of exp of t, cosh(1e300)): it cannot be evaluated; use an activation of slower growth") from None
    except (RecursionError, OverflowError, ValueError):
        raise UnsafeExpressionError("the formula is too deeply nested or too large to bound") from None

    local_dict: dict[str, object] = {variable.name: variable}
    local_dict.update(ALLOWED_CONSTANTS)
    local_dict.update({name: fn for name, (fn, _) in ALLOWED_FUNCTIONS.items()})
    # Only what the auto_number / rationalize transformations emit; no builtins at all.
    global_dict = {
        "__builtins__": {},
        "Integer": sympy.Integer,
        "Float": sympy.Float,
        "Rational": sympy.Rational,
        "Symbol": sympy.Symbol,
    }
    transformations = standard_transformations + (convert_xor, rationalize)
    try:
        expr = parse_expr(stripped, local_dict=local_dict, global_dict=global_dict,
                          transformations=transformations, evaluate=True)
    except Exception as exc:  # sympy raises many types for malformed input
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UnsafeExpressionError(f"could not build the expression ({message})") from None
    return sympy.sympify(expr)
