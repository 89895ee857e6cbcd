r"""Per-sample training losses of SLR ERM, written once in SymPy: presets and user expressions.

ERM minimises :math:`\sum_\mu\rho(y_\mu-f_\mu)+\tfrac{\lambda_k}2\|k\|^2+\tfrac{\lambda_v}2\|v\|^2` with
:math:`f=\sigma(\chi)^\top z` and a per-sample loss :math:`\rho` of the residual :math:`r=y-f` (docs/slr.md
§10.1).  The replica equations (:mod:`attnlimits.derivations.slr.replica`), the ERM training in torch
(:mod:`attnlimits.verify.slr.train`) and the exported solver all use the one expression returned by
:func:`parse_loss`, printed for each backend.

Presets (``--loss``):

- ``square``: :math:`\rho(r)=r^2/2` (``half_sum``; the default, and the one for which the value fields of
  the RS prox are eliminated in closed form);
- ``huber:δ``: :math:`\rho(r)=r^2/2-\max(|r|-\delta,0)^2/2` (quadratic for :math:`|r|\le\delta`, slope
  :math:`\delta` beyond: the usual Huber loss, written without a piecewise so that every printer handles it);
- ``pseudo_huber:δ``: :math:`\rho(r)=\delta^2\big(\sqrt{1+(r/\delta)^2}-1\big)`;
- ``logcosh``: :math:`\rho(r)=\log\cosh r`.

Any other text is read as a formula in ``r`` by the safe parser of user activations
(:func:`attnlimits.symbolic.safe_parse.safe_parse`: an :mod:`ast` whitelist before SymPy sees it, decimal
literals exact), e.g. ``--loss "log(cosh(2*r))/4"``.

Derivatives for the RS prox are taken almost everywhere (:func:`loss_derivative`): the ``DiracDelta`` terms
SymPy produces at a kink of :math:`\rho'` (Huber at :math:`|r|=\delta`) carry no weight in the Gaussian
averages and are dropped.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from attnlimits.symbolic.result import InputError

__all__ = ["LOSS_PRESETS", "Loss", "loss_derivative", "loss_kernels", "parse_loss", "residual"]

#: the residual :math:`r=y-\sigma(\chi)^\top z` of one sample
residual = sp.Symbol("r", real=True)

LOSS_PRESETS = ("square", "huber:δ", "pseudo_huber:δ", "logcosh")


@dataclass(frozen=True)
class Loss:
    """A per-sample loss: ``name`` is the canonical text (a preset as ``huber:1``, a formula as SymPy prints it;
    it re-parses to the same loss and keys caches), ``expr`` :math:`\\rho(r)` in :data:`residual`, ``square``
    whether it is :math:`r^2/2` exactly (then the closed-form elimination of the value fields applies)."""

    name: str
    expr: sp.Expr
    square: bool


def _num_text(d: sp.Expr) -> str:
    t = repr(float(d))  # the shortest text that reads back as the same double (nsimplify makes it exact)
    return t[:-2] if t.endswith(".0") else t


def _param(text: str, preset: str) -> sp.Expr:
    s = text.split(":", 1)[1].strip() if ":" in text else ""
    if not s:
        raise InputError(f"loss {preset!r} needs a scale: write {preset}:δ with δ > 0, e.g. {preset}:1")
    try:
        v = float(s)
    except ValueError:
        raise InputError(f"loss {text!r}: the scale δ must be a number > 0, got {s!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise InputError(f"loss {text!r}: the scale δ must be a finite number > 0, got {s}")
    return sp.nsimplify(s, rational=True)


def _preset(text: str):
    key = text.split(":", 1)[0].strip().lower().replace("-", "_")
    r = residual
    if key == "square" and ":" not in text:
        return "square", r ** 2 / 2
    if key == "logcosh" and ":" not in text:
        return "logcosh", sp.log(sp.cosh(r))
    if key == "huber":
        d = _param(text, "huber")
        return f"huber:{_num_text(d)}", r ** 2 / 2 - sp.Max(sp.Abs(r) - d, 0) ** 2 / 2
    if key == "pseudo_huber":
        d = _param(text, "pseudo_huber")
        return f"pseudo_huber:{_num_text(d)}", d ** 2 * (sp.sqrt(1 + (r / d) ** 2) - 1)
    return None


@lru_cache(maxsize=64)
def parse_loss(text: str | None = None) -> Loss:
    """The loss named or written by ``text`` (``None``: ``square``); bad input raises :class:`InputError`.

    >>> parse_loss("huber:1").name, parse_loss("r**2/2").square
    ('huber:1', True)
    """
    from attnlimits.symbolic.safe_parse import UnsafeExpressionError, safe_parse

    text = "square" if text is None else str(text).strip()
    pre = _preset(text)
    if pre is not None:
        name, expr = pre
    else:
        try:
            expr = safe_parse(text, residual)
        except UnsafeExpressionError as exc:
            raise InputError(f"cannot parse loss {text!r}: {exc}; give a preset ({', '.join(LOSS_PRESETS)}) "
                             "or a formula in the residual r, e.g. 'log(cosh(r))'") from None
        if expr.free_symbols - {residual}:
            raise InputError(f"loss {text!r} has free names {sorted(map(str, expr.free_symbols - {residual}))}; "
                             "a loss is a formula in the residual r only")
        if residual not in expr.free_symbols:
            raise InputError(f"loss {text!r} does not depend on the residual r")
        name = sp.sstr(expr)
    for r0 in (0, sp.Rational(1, 2), -2):
        v = expr.subs(residual, r0)
        if not (v.is_real and v.is_finite) and not (sp.N(v).is_real and sp.N(v).is_finite):
            raise InputError(f"loss {text!r} is not a finite real number at r = {r0} ({v})")
    square = sp.simplify(expr - residual ** 2 / 2) == 0
    return Loss("square" if square else name, expr, bool(square))


def _drop_dirac(e: sp.Expr) -> sp.Expr:
    return e.replace(lambda a: isinstance(a, sp.DiracDelta), lambda a: sp.S.Zero)


def loss_derivative(loss: Loss, order: int = 1) -> sp.Expr:
    r""":math:`\rho^{(n)}(r)` almost everywhere (``DiracDelta`` terms of a kink dropped)."""
    e = loss.expr
    for _ in range(order):
        e = _drop_dirac(sp.diff(e, residual))
    return e


@lru_cache(maxsize=64)
def loss_kernels(name: str):
    """Kernel bundle ``rho`` (:math:`\\rho,\\rho',\\rho''` of the residual) and ``rho_value`` (:math:`\\rho` alone) of
    the loss ``name``, for the numpy and torch backends (``bundle.module("torch").rho_value(r)``): the ERM objective
    and its checks use them."""
    from attnlimits.symbolic.bundle import KernelBundle
    from attnlimits.symbolic.codegen import Kernel

    loss = parse_loss(name)
    outs = [loss.expr, loss_derivative(loss, 1), loss_derivative(loss, 2)]
    k = Kernel("rho", [residual], outs, doc=f"per-sample loss {loss.name}: rho(r), rho'(r), rho''(r) (a.e.)")
    k1 = Kernel("rho_value", [residual], outs[:1], doc=f"per-sample loss {loss.name}: rho(r) alone (training)")
    return KernelBundle(f"slr_loss_{abs(hash(loss.name))}", (k, k1), {"name": loss.name, "square": loss.square},
                        title=f"SLR per-sample loss {loss.name}")
