"""Differentiation of small matrix expressions (Woodbury-type observables).

SymPy's matrix-expression calculus does not differentiate through ``KroneckerProduct`` or
``BlockMatrix`` with explicit entries.  :func:`matrix_diff` implements the rules needed by the
observables of the derivations once, for any scalar symbol ``x``:

- explicit matrices: entrywise ``diff``;
- ``MatrixSymbol``, ``Identity``, ``ZeroMatrix``: zero (they are constants);
- sums and products: linearity and the product rule (scalar factors included);
- ``Inverse(A)``: ``-A⁻¹ (dA) A⁻¹``;
- ``Transpose``, ``KroneckerProduct``, ``BlockMatrix``: passed inside.

:func:`scalar_diff` differentiates a scalar expression that contains matrix elements
(``M[i, j]`` of a matrix expression), e.g. ``ȳ = q₀ − (vᵀ C N⁻¹ v)[0, 0]``.
"""
from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixElement

__all__ = ["matrix_diff", "scalar_diff", "directional_derivative"]


def _is_zero(m) -> bool:
    return isinstance(m, sp.ZeroMatrix) or (
        isinstance(m, sp.MatrixBase) and all(e == 0 for e in m)
    )


def matrix_diff(expr, x: sp.Symbol):
    """Derivative of the matrix expression ``expr`` with respect to the scalar symbol ``x``."""
    shape = expr.shape
    if not expr.has(x):
        return sp.ZeroMatrix(*shape)
    if isinstance(expr, sp.MatrixBase):
        return sp.ImmutableMatrix(expr.diff(x))
    if isinstance(expr, sp.MatAdd):
        terms = [matrix_diff(a, x) for a in expr.args]
        terms = [t for t in terms if not _is_zero(t)]
        if not terms:
            return sp.ZeroMatrix(*shape)
        return sp.MatAdd(*terms) if len(terms) > 1 else terms[0]
    if isinstance(expr, sp.MatMul):
        args = list(expr.args)
        terms = []
        for i, a in enumerate(args):
            if not a.has(x):
                continue
            da = matrix_diff(a, x) if getattr(a, "is_Matrix", False) else sp.diff(a, x)
            if _is_zero(da) if getattr(da, "is_Matrix", False) else da == 0:
                continue
            terms.append(sp.MatMul(*(args[:i] + [da] + args[i + 1 :])))
        if not terms:
            return sp.ZeroMatrix(*shape)
        return sp.MatAdd(*terms) if len(terms) > 1 else terms[0]
    if isinstance(expr, sp.Inverse):
        a = expr.arg
        return sp.MatMul(sp.S.NegativeOne, sp.Inverse(a), matrix_diff(a, x), sp.Inverse(a))
    if isinstance(expr, sp.Transpose):
        return sp.Transpose(matrix_diff(expr.arg, x))
    if isinstance(expr, sp.KroneckerProduct):
        args = list(expr.args)
        terms = []
        for i, a in enumerate(args):
            if not a.has(x):
                continue
            terms.append(sp.KroneckerProduct(*(args[:i] + [matrix_diff(a, x)] + args[i + 1 :])))
        return sp.MatAdd(*terms) if len(terms) > 1 else terms[0]
    if isinstance(expr, sp.BlockMatrix):
        rows = expr.blocks.tolist()
        return sp.BlockMatrix([[matrix_diff(b, x) for b in row] for row in rows])
    raise NotImplementedError(f"matrix_diff: no rule for {type(expr).__name__}")


def scalar_diff(expr: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """Derivative of a scalar expression that may contain elements of matrix expressions."""
    if not expr.has(x):
        return sp.S.Zero
    if isinstance(expr, MatrixElement):
        return MatrixElement(matrix_diff(expr.parent, x), expr.i, expr.j)
    if not expr.has(MatrixElement):
        return sp.diff(expr, x)
    if isinstance(expr, sp.Add):
        return sp.Add(*[scalar_diff(a, x) for a in expr.args])
    if isinstance(expr, sp.Mul):
        args = list(expr.args)
        return sp.Add(
            *[
                sp.Mul(*(args[:i] + [scalar_diff(a, x)] + args[i + 1 :]))
                for i, a in enumerate(args)
                if a.has(x)
            ]
        )
    if isinstance(expr, sp.Pow) and not expr.exp.has(x):
        return expr.exp * expr.base ** (expr.exp - 1) * scalar_diff(expr.base, x)
    raise NotImplementedError(f"scalar_diff: no rule for {type(expr).__name__}")


def directional_derivative(expr: sp.Expr, point: dict, direction: dict) -> sp.Expr:
    """``d/dε expr(point + ε·direction)`` at ε = 0, for scalar expressions with matrix elements.

    ``point`` and ``direction`` map the symbols to move (e.g. the traces ``q_i``) to their values and
    their rates (e.g. ``dq_i/dγ``).  Used for the chain rule through Woodbury-type observables.
    """
    eps = sp.Dummy("epsilon")
    moved = expr.xreplace({s: point.get(s, s) + eps * d for s, d in direction.items()})
    return _subs_zero(scalar_diff(moved, eps), eps)


def _subs_zero(expr, eps):
    return expr.xreplace({eps: sp.S.Zero})
