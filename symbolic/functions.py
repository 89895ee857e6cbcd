r"""Special functions the printers know how to evaluate stably.

SymPy writes ``log(1 + exp(x))`` and ``exp(x)/(1 + exp(x))`` literally, and NumPy evaluates them
literally too: ``exp(800)`` overflows and the ratio becomes ``inf/inf = nan``.  The two functions
below are ordinary SymPy functions (they differentiate, simplify and rewrite to ``exp``/``log``)
whose generated code is the stable form:

========================  ==========================================  =============================
function                  NumPy                                        mpmath
========================  ==========================================  =============================
``Softplus(x)``           ``numpy.logaddexp(0, x)``                    ``mpmath.log1p(mpmath.exp(x))``
``Sigmoid(x)``            ``scipy.special.expit(x)``                   ``1/(1 + mpmath.exp(-x))``
``LogSoftplus(x)``        ``x`` for x < −30, else ``log(logaddexp(0, x))``  ``log(log1p(exp(x)))``
``LogSoftplusPrime(x)``   ``1`` for x < −30, else ``expit(x)/logaddexp(0, x)``  ``Sigmoid/Softplus``
========================  ==========================================  =============================

``LogSoftplus`` is the log-domain weight of normalised softplus attention (docs/slr.md §4,
"Numerics": :math:`\log\mathrm{sp}(x)\approx x` for :math:`x<-30`; the switch costs a relative
error below :math:`e^{-30}/2\approx5\cdot10^{-14}`).

Their derivatives close on the pair: ``Softplus' = Sigmoid``, ``Sigmoid' = Sigmoid (1 − Sigmoid)``,
so a Jacobian or Hessian of an expression built from them never contains an overflow-prone ratio.
"""
from __future__ import annotations

import sympy as sp

__all__ = ["Softplus", "Sigmoid", "LogSoftplus", "LogSoftplusPrime"]


class Sigmoid(sp.Function):
    r"""Logistic function :math:`1/(1+e^{-x})`."""

    @classmethod
    def eval(cls, x):
        if x.is_zero:
            return sp.S.Half

    def fdiff(self, argindex=1):
        s = Sigmoid(self.args[0])
        return s * (1 - s)

    def _eval_rewrite_as_exp(self, x, **kwargs):
        return 1 / (1 + sp.exp(-x))

    def _eval_is_positive(self):
        return self.args[0].is_extended_real


class Softplus(sp.Function):
    r"""Softplus :math:`\log(1+e^{x})`, evaluated as ``logaddexp(0, x)``."""

    @classmethod
    def eval(cls, x):
        if x.is_zero:
            return sp.log(2)

    def fdiff(self, argindex=1):
        return Sigmoid(self.args[0])

    def _eval_rewrite_as_exp(self, x, **kwargs):
        return sp.log(1 + sp.exp(x))

    _eval_rewrite_as_log = _eval_rewrite_as_exp

    def _eval_is_positive(self):
        return self.args[0].is_extended_real


class LogSoftplusPrime(sp.Function):
    r""":math:`\frac{d}{dx}\log\mathrm{sp}(x)=\mathrm{sigmoid}(x)/\mathrm{sp}(x)` (→ 1 as x → −∞)."""

    def fdiff(self, argindex=1):
        x = self.args[0]
        return Sigmoid(x) * (1 - Sigmoid(x)) / Softplus(x) - (Sigmoid(x) / Softplus(x)) ** 2

    def _eval_rewrite_as_exp(self, x, **kwargs):
        return (Sigmoid(x) / Softplus(x)).rewrite(sp.exp)


class LogSoftplus(sp.Function):
    r""":math:`\log\log(1+e^{x})`, the log of the softplus weight (stable for very negative x)."""

    def fdiff(self, argindex=1):
        return LogSoftplusPrime(self.args[0])

    def _eval_rewrite_as_exp(self, x, **kwargs):
        return sp.log(sp.log(1 + sp.exp(x)))

    def _eval_rewrite_as_Softplus(self, x, **kwargs):
        return sp.log(Softplus(x))
