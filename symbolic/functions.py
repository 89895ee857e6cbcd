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
``ndtr(x)``               ``scipy.special.ndtr(x)``                    ``mpmath.ncdf(x)``
``zeta_erf2(t, s)``       generated quadrature ``_zeta_erf2``          generated ``mpmath.quad``
========================  ==========================================  =============================

The PyTorch printer (:mod:`attnlimits.symbolic.codegen`, backend ``"torch"``) prints the same stable forms
(``torch.logaddexp``, ``torch.sigmoid``, ``torch.special.ndtr`` and the log-domain switch of
``LogSoftplus``), so the Monte Carlo evaluates the formulas the quadratures evaluate.

``ndtr`` is the standard normal CDF kept unevaluated (SymPy rewrites ``erfc(-y)`` as
``2 - erfc(y)``, which loses the lower tail in floating point).  ``zeta_erf2`` is
:math:`\zeta(t,s)=\mathbb E_g[\mathrm{erf}(t+sg)^2]` of Marion et al., arXiv:2410.01537 (spec
slr.md §13): a function *defined by an integral*; its generated code is a one-dimensional
quadrature of the printed integrand (:func:`zeta_erf2_runtime`), split at the zero of the erf.

``LogSoftplus`` is the log-domain weight of normalised softplus attention (docs/slr.md §4,
"Numerics": :math:`\log\mathrm{sp}(x)\approx x` for :math:`x<-30`; the switch costs a relative
error below :math:`e^{-30}/2\approx5\cdot10^{-14}`).

Their derivatives close on the pair: ``Softplus' = Sigmoid``, ``Sigmoid' = Sigmoid (1 − Sigmoid)``,
so a Jacobian or Hessian of an expression built from them never contains an overflow-prone ratio.
"""
from __future__ import annotations

import mpmath
import sympy as sp

__all__ = ["Softplus", "Sigmoid", "LogSoftplus", "LogSoftplusPrime", "ndtr", "gaussian_density",
           "zeta_erf2", "zeta_erf2_integrand", "zeta_erf2_runtime", "RUNTIME_FUNCTIONS"]


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



def gaussian_density(var) -> sp.Expr:
    """Standard normal density ``exp(-var**2/2)/sqrt(2*pi)``."""
    return sp.exp(-var**2 / 2) / sp.sqrt(2 * sp.pi)


class ndtr(sp.Function):
    r"""Standard normal CDF :math:`\Phi_{\mathcal N}(x)=\tfrac12\mathrm{erfc}(-x/\sqrt2)`, kept unevaluated.

    SymPy rewrites ``erfc(-y)`` as ``2 - erfc(y)``, which loses every digit of the lower tail in
    floating point; this function stays symbolic and is printed to an accurate implementation in
    both tails (``scipy.special.ndtr``, ``mpmath.ncdf``, ``torch.special.ndtr``).  It
    differentiates to the Gaussian density and rewrites to ``erf``/``erfc``.
    """

    nargs = 1

    @classmethod
    def eval(cls, arg):
        if arg.is_zero:
            return sp.S.Half
        if arg is sp.S.Infinity:
            return sp.S.One
        if arg is sp.S.NegativeInfinity:
            return sp.S.Zero
        return None

    def fdiff(self, argindex=1):
        return gaussian_density(self.args[0])

    def _eval_rewrite_as_erfc(self, arg, **kwargs):
        return sp.erfc(-arg / sp.sqrt(2)) / 2

    def _eval_rewrite_as_erf(self, arg, **kwargs):
        return (1 + sp.erf(arg / sp.sqrt(2))) / 2

    def _eval_evalf(self, prec):
        arg = self.args[0]._eval_evalf(prec)
        if arg is None or not arg.is_Number:
            return None
        with mpmath.workprec(prec):
            return sp.Float(mpmath.ncdf(arg._to_mpmath(prec)), precision=prec)


_zt, _zs, _zg = sp.symbols("t s g", real=True)


def zeta_erf2_integrand(tt=_zt, ss=_zs, gg=_zg) -> sp.Expr:
    r"""The integrand of :math:`\zeta(t,s)=\int\mathrm{erf}(t+sg)^2\varphi(g)\,dg` — its one definition."""
    return sp.erf(tt + ss * gg) ** 2 * gaussian_density(gg)


class zeta_erf2(sp.Function):
    r""":math:`\zeta(t,s)=\mathbb E_{g\sim\mathcal N(0,1)}[\mathrm{erf}(t+sg)^2]` ([M], docs/slr.md §13).

    Stays unevaluated except at ``s = 0`` (``erf(t)**2``); ``.rewrite(sp.Integral)`` gives the
    defining integral (:func:`zeta_erf2_integrand`) and ``.evalf(n)`` evaluates it by mpmath
    quadrature at ``n`` digits.  Printed code calls ``_zeta_erf2`` (:func:`zeta_erf2_runtime`).
    """

    nargs = 2

    @classmethod
    def eval(cls, tt, ss):
        if ss.is_zero:
            return sp.erf(tt) ** 2
        return None

    def _eval_rewrite_as_Integral(self, tt, ss, **kwargs):
        gg = sp.Dummy("g", real=True)
        return sp.Integral(zeta_erf2_integrand(tt, ss, gg), (gg, -sp.oo, sp.oo))

    def _eval_evalf(self, prec):
        tt, ss = (arg._eval_evalf(prec) for arg in self.args)
        if not (tt.is_Number and ss.is_Number):
            return None
        dps = mpmath.libmp.prec_to_dps(prec)
        with mpmath.workdps(dps + 5):
            tm, sm = mpmath.mpf(tt._to_mpmath(prec + 20)), mpmath.mpf(ss._to_mpmath(prec + 20))
            f = _mpmath_integrand()
            pts = [-mpmath.inf, 0, mpmath.inf] if sm == 0 else [-mpmath.inf, -tm / sm, mpmath.inf]
            val = mpmath.quad(lambda z: f(z, tm, sm), pts)
        return sp.Float(val, dps)


_MP_INTEGRAND = []


def _mpmath_integrand():
    """The generated mpmath integrand ``(g, t, s) -> erf(t + s g)^2 φ(g)`` (compiled once)."""
    if not _MP_INTEGRAND:
        from .codegen import Kernel, load_module

        k = Kernel("zeta_integrand", [_zg, _zt, _zs], [zeta_erf2_integrand()], use_cse=False)
        mod = load_module("import mpmath\n\n" + k.source("mpmath"), "attnlimits_zeta_integrand")
        _MP_INTEGRAND.append(lambda g, t, s: mod.zeta_integrand(g, t, s)[0])
    return _MP_INTEGRAND[0]


def zeta_erf2_runtime(backend: str, print_expr) -> str:
    r"""Source of ``_zeta_erf2(t, s)`` for a generated module: quadrature of the printed integrand.

    ``print_expr(expr, backend)`` is the code printer (:func:`attnlimits.symbolic.codegen.print_expr`, passed
    in by :class:`~attnlimits.symbolic.codegen.ModuleBuilder`: codegen imports nothing from this module).

    NumPy: ``scipy.integrate.quad`` split at the Gaussian weight's centre 0 and at the zero :math:`g=-t/s` of
    the erf (when it is within 40), about 1e-15 absolute; mpmath: ``mpmath.quad`` with the same split, at the
    working precision plus 10 digits.  (Without the split at 0, a zero far out — t/s = 37 — left the interval
    [g0, ∞) with all the mass 37 standard deviations from its end, and quad returned 0 for a value of 1.)
    """
    body = print_expr(zeta_erf2_integrand(), backend)
    if backend == "numpy":
        return f"""import math as _math  # noqa: E402
import warnings as _warnings  # noqa: E402

import scipy.integrate  # noqa: E402
import scipy.special  # noqa: E402


def _zeta_erf2_integrand(g, t, s):
    return {body}


def _zeta_erf2(t, s):
    \"\"\"zeta(t, s) = E_g[erf(t + s g)^2] by quadrature of the generated integrand.\"\"\"
    t, s = float(t), float(s)
    if s == 0:
        return _math.erf(t) ** 2
    g0 = -t / s
    # split at the Gaussian weight's centre 0 always (an interval that starts 37 SDs away, g0 = -37, made
    # quad miss the whole mass and return 0) and at the erf's zero g0 when it is in range
    pts = sorted([-numpy.inf, 0.0, numpy.inf] + ([g0] if 0 < abs(g0) < 40 else []))
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore", scipy.integrate.IntegrationWarning)
        return float(sum(scipy.integrate.quad(_zeta_erf2_integrand, lo, hi, args=(t, s), epsabs=1e-15,
                                              epsrel=1e-14, limit=200)[0] for lo, hi in zip(pts[:-1], pts[1:])))
"""
    if backend == "mpmath":
        return f"""def _zeta_erf2_integrand(g, t, s):
    return {body}


def _zeta_erf2(t, s):
    \"\"\"zeta(t, s) = E_g[erf(t + s g)^2] by mpmath.quad of the generated integrand.\"\"\"
    with mpmath.workdps(mpmath.mp.dps + 10):
        tm, sm = mpmath.mpf(t), mpmath.mpf(s)
        if sm == 0:
            val = mpmath.erf(tm) ** 2
        else:
            g0 = -tm / sm
            pts = [-mpmath.inf, 0, mpmath.inf] if abs(g0) >= 40 or g0 == 0 else \
                sorted([-mpmath.inf, g0, mpmath.inf, mpmath.mpf(0)])
            val = mpmath.quad(lambda g: _zeta_erf2_integrand(g, tm, sm), pts)
    return +val
"""
    raise ValueError(f"zeta_erf2 has no {backend} implementation")


#: Functions whose printed code calls a helper defined in the generated module: each carries it as
#: ``runtime_source(backend, print_expr)`` → helper source (added once by ``ModuleBuilder``, which finds it on
#: the function class, so that codegen need not import this module).
zeta_erf2.runtime_source = staticmethod(zeta_erf2_runtime)
RUNTIME_FUNCTIONS = {zeta_erf2: zeta_erf2_runtime}
