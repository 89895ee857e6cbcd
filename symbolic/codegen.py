"""Code generation: SymPy expressions → readable NumPy, mpmath or PyTorch Python source.

One printer per backend turns scalar expressions, :class:`attnlimits.symbolic.spectral.SpectralAverage`
nodes and small matrix expressions (``MatMul``, ``Inverse``, ``KroneckerProduct``,
``BlockMatrix``...) into plain Python.  Generated functions are assembled into a module source by
:class:`ModuleBuilder`; the same text is loaded in-process (:func:`load_module`) and written out by
the exporters, so the exported solver *is* the in-process solver.

Conventions of generated kernels
--------------------------------
- A kernel is ``def name(<inputs...>, _nodes=None)`` returning a tuple of its outputs.
- Spectral averages are sums over ``_nodes = (t, w)``: arrays of nodes and weights (NumPy), or
  sequences of ``mpf`` (mpmath).  Integrands of one kernel share common subexpressions.
- Matrix expressions call the backend runtime (``_mm``, ``_inv``, ``_kron``, ``_block``...), found
  in :mod:`attnlimits.symbolic._runtime_numpy` / :mod:`attnlimits.symbolic._runtime_mpmath`; symbolic dimensions such as
  ``r`` become ordinary arguments.
- Every expression is checked by :func:`assert_exact` first: a ``Float`` would silently cap the
  mpmath path at 53 bits.
- The special functions of :mod:`attnlimits.symbolic.functions` print to their stable forms on every
  backend; a function with a ``runtime_source`` (those of :data:`attnlimits.symbolic.functions.RUNTIME_FUNCTIONS`:
  ``zeta_erf2``) prints a call to a helper that :class:`ModuleBuilder` adds to the module once.
- Backend ``"torch"`` (elementwise kernels only: no spectral averages, no matrices) prints
  ``torch.*`` calls; the generated module needs ``torch`` (imported by the module itself), and
  gradients come from autograd.  It is the printer of the Monte Carlo attention weights
  (:mod:`attnlimits.verify.slr`), so the simulated predictor is the derived one.
"""
from __future__ import annotations

import hashlib
import inspect
import keyword
import textwrap
import types
from dataclasses import dataclass, field
from typing import Sequence

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixElement
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import MpmathPrinter
from sympy.printing.pytorch import TorchPrinter

from .spectral import SpectralAverage, spectral_averages

__all__ = [
    "BACKENDS",
    "ALL_BACKENDS",
    "CodegenError",
    "FloatLiteralError",
    "assert_exact",
    "expression_hash",
    "Kernel",
    "ModuleBuilder",
    "comment_safe",
    "doc_safe",
    "load_module",
    "print_expr",
]

BACKENDS = ("numpy", "mpmath")  #: backends of solver modules (spectral averages, matrices)
ALL_BACKENDS = BACKENDS + ("torch",)  #: ``"torch"``: elementwise kernels


def doc_safe(text) -> str:
    """``text`` made inert inside a triple-quoted (non-raw) docstring of generated source.

    Generated modules and exported files mention their inputs (an activation's name) in
    docstrings; whatever the text holds — quotes, a closing triple quote, backslashes, control
    characters — it cannot end the string or start code: backslashes are doubled, every ``"`` is
    escaped, and control characters other than newline and tab are written as escapes."""
    out = []
    for ch in str(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch in "\n\t" or ch.isprintable():
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii").replace("\\", "\\\\"))
    return "".join(out)


def comment_safe(text) -> str:
    """``text`` made inert inside one ``#`` comment line of generated source: one line, printable."""
    return "".join(ch if ch.isprintable() else " " for ch in str(text).replace("\r", " ").replace("\n", " "))


class CodegenError(ValueError):
    """An expression the code printer cannot generate (one line, exit 2 at the command line)."""


class FloatLiteralError(ValueError):
    """An expression contains a binary ``Float``; write it with ``Rational``/``S()`` instead."""


def assert_exact(*exprs) -> None:
    """Reject expressions containing SymPy ``Float`` atoms (≤ 53-bit literals).

    ``lambdify(..., 'mpmath')`` and our printers keep a ``Float`` at its own binary precision,
    so ``0.1`` in an expression caps any mpmath computation at ~16 digits.  Numbers must be
    ``Integer``/``Rational``/named constants.
    """
    for e in exprs:
        for node in _walk(e):
            if isinstance(node, sp.Float):
                raise FloatLiteralError(
                    f"float literal {node} (precision {node._prec} bits) in expression "
                    f"{sp.sstr(e)[:120]}: use sympy.Rational or sympy.S('...') for exact constants"
                )


def _walk(e):
    if isinstance(e, sp.MatrixBase):
        for x in e:
            yield from _walk(x)
        return
    if isinstance(e, sp.Basic):
        yield from sp.preorder_traversal(e)


def expression_hash(*exprs) -> str:
    """SHA-256 (first 16 hex digits) of the ``srepr`` of the expressions: the source identity."""
    h = hashlib.sha256()
    for e in exprs:
        h.update(sp.srepr(e).encode())
        h.update(b"\x00")
    return h.hexdigest()[:16]


# ------------------------------------------------------------------------------------------------
# printers


def _matrix_methods(base):
    class _Printer(base):
        # scalar-times-matrix products and matrix products
        def _print_MatMul(self, e):
            scal = [a for a in e.args if not getattr(a, "is_Matrix", False)]
            mats = [a for a in e.args if getattr(a, "is_Matrix", False)]
            body = self._matrix_chain(mats)
            if scal:
                return f"_msc({self._print(sp.Mul(*scal))}, {body})"
            return body

        def _print_MatAdd(self, e):
            return "_madd(" + ", ".join(self._print(a) for a in e.args) + ")"

        def _matrix_chain(self, mats):
            """A product of matrices; ``A⁻¹·B`` is printed as a linear solve, never an inverse."""
            for k, m in enumerate(mats):
                if isinstance(m, sp.Inverse) and k < len(mats) - 1:
                    solved = f"_msolve({self._print(m.arg)}, {self._matrix_chain(mats[k + 1:])})"
                    if k == 0:
                        return solved
                    return "_mm(" + ", ".join(self._print(h) for h in mats[:k]) + ", " + solved + ")"
            if len(mats) == 1:
                return self._print(mats[0])
            return "_mm(" + ", ".join(self._print(m) for m in mats) + ")"

        def _print_Inverse(self, e):
            return f"_inv({self._print(e.arg)})"

        def _print_Transpose(self, e):
            return f"_tr({self._print(e.arg)})"

        def _print_KroneckerProduct(self, e):
            return "_kron(" + ", ".join(self._print(a) for a in e.args) + ")"

        def _print_BlockMatrix(self, e):
            rows = e.blocks.tolist()
            return "_block([" + ", ".join("[" + ", ".join(self._print(b) for b in row) + "]" for row in rows) + "])"

        def _print_Identity(self, e):
            return f"_eye({self._print(e.shape[0])})"

        def _print_ZeroMatrix(self, e):
            return f"_zeros({self._print(e.shape[0])}, {self._print(e.shape[1])})"

        def _print_MatrixSymbol(self, e):
            return e.name

        def _print_MatrixBase(self, e):
            return "_mat([" + ", ".join("[" + ", ".join(self._print(x) for x in e.row(i)) + "]" for i in range(e.rows)) + "])"

        _print_ImmutableDenseMatrix = _print_MatrixBase
        _print_MutableDenseMatrix = _print_MatrixBase

        def _print_MatrixElement(self, e):
            return f"_el({self._print(e.parent)}, {self._print(e.i)}, {self._print(e.j)})"

        def _print_SpectralAverage(self, e):  # pragma: no cover - kernels replace averages first
            raise TypeError("spectral averages must be replaced before printing")

    return _Printer


class _NumpyPrinter(_matrix_methods(NumPyPrinter)):
    # stable forms of the functions of attnlimits.symbolic.functions
    def _print_Softplus(self, e):
        return f"numpy.logaddexp(0, {self._print(e.args[0])})"

    def _print_Sigmoid(self, e):
        return f"scipy.special.expit({self._print(e.args[0])})"

    def _print_erf(self, e):
        return f"scipy.special.erf({self._print(e.args[0])})"

    def _print_erfc(self, e):
        return f"scipy.special.erfc({self._print(e.args[0])})"

    def _print_LogSoftplus(self, e):
        x = self._print(e.args[0])
        return f"numpy.where(({x}) < -30, {x}, numpy.log(numpy.logaddexp(0, numpy.maximum({x}, -30))))"

    def _print_LogSoftplusPrime(self, e):
        x = self._print(e.args[0])
        return (f"numpy.where(({x}) < -30, 1.0, scipy.special.expit(numpy.maximum({x}, -30))"
                f" / numpy.logaddexp(0, numpy.maximum({x}, -30)))")

    def _print_ndtr(self, e):
        return f"scipy.special.ndtr({self._print(e.args[0])})"

    def _print_zeta_erf2(self, e):
        return f"_zeta_erf2({self._print(e.args[0])}, {self._print(e.args[1])})"

    def _print_Pow(self, e, rational=False):
        # small integer powers of a name as products: numpy's ``power`` has fast paths for the
        # exponents 2, 0.5 and -1 only, and ``x**3`` or ``x**(-2.0)`` on an array is a libm ``pow``
        # per element, 40-50× the cost of a multiplication (measured, numpy 2.4, 32768 doubles:
        # 530 µs against 12 µs); ``1/x`` is 3× cheaper than ``x**(-1.0)``.  Products differ
        # from ``pow`` by at most a few ulp.  Only names (after CSE nearly every base is one):
        # a compound base would be evaluated once per factor.
        b, x = e.base, e.exp
        if isinstance(b, sp.Symbol) and x.is_Integer and 1 <= abs(int(x)) <= 4 and int(x) != 1:
            name = self._print(b)
            prod = "*".join([name] * abs(int(x)))
            return f"({prod})" if x > 0 else f"(1/({prod}))" if abs(int(x)) > 1 else f"(1/{name})"
        return super()._print_Pow(e, rational=rational)


class _MpmathPrinter(_matrix_methods(MpmathPrinter)):
    def _print_Softplus(self, e):
        return f"mpmath.log1p(mpmath.exp({self._print(e.args[0])}))"

    def _print_Sigmoid(self, e):
        return f"(1/(1 + mpmath.exp(-({self._print(e.args[0])}))))"

    def _print_LogSoftplus(self, e):
        return f"mpmath.log(mpmath.log1p(mpmath.exp({self._print(e.args[0])})))"

    def _print_LogSoftplusPrime(self, e):
        x = self._print(e.args[0])
        return f"(1/((1 + mpmath.exp(-({x}))) * mpmath.log1p(mpmath.exp({x}))))"

    def _print_ndtr(self, e):
        return f"mpmath.ncdf({self._print(e.args[0])})"

    def _print_zeta_erf2(self, e):
        return f"_zeta_erf2({self._print(e.args[0])}, {self._print(e.args[1])})"


class _TorchPrinter(TorchPrinter):
    """SymPy's PyTorch printer with the stable special functions and tensor-safe Max/Min/erfc.

    Rational constants print as Python divisions (float64 once combined with a float64 tensor).
    """

    def _print_Softplus(self, e):
        x = self._print(e.args[0])
        return f"torch.logaddexp(torch.zeros_like({x}), {x})"

    def _print_Sigmoid(self, e):
        return f"torch.sigmoid({self._print(e.args[0])})"

    def _print_LogSoftplus(self, e):
        # log sp(x) = x below −30 (relative error < e^-30/2); the clamped branch keeps gradients finite
        x = self._print(e.args[0])
        xs = f"torch.clamp({x}, min=-30.0)"
        return (f"torch.where(({x}) < -30.0, {x}, torch.log(torch.clamp({xs}, min=0.0)"
                f" + torch.log1p(torch.exp(-torch.abs({xs})))))")

    def _print_LogSoftplusPrime(self, e):
        x = self._print(e.args[0])
        xs = f"torch.clamp({x}, min=-30.0)"
        return (f"torch.where(({x}) < -30.0, torch.ones_like({x}), torch.sigmoid({xs})"
                f" / torch.logaddexp(torch.zeros_like({xs}), {xs}))")

    def _print_ndtr(self, e):
        return f"torch.special.ndtr({self._print(e.args[0])})"

    def _print_Heaviside(self, e):
        # SymPy's printer passes the value at 0 as a Python float, which torch.heaviside refuses; with the
        # value ½ at 0 (SymPy's default) H(x) = (1 + sign x)/2 exactly, for tensors and numbers alike
        if len(e.args) > 1 and e.args[1] != sp.Rational(1, 2):
            raise NotImplementedError("Heaviside with a value at 0 other than 1/2")
        return f"(0.5 + 0.5*torch.sign(torch.as_tensor({self._print(e.args[0])})))"

    def _print_erf(self, e):
        return f"torch.special.erf({self._print(e.args[0])})"

    def _print_erfc(self, e):
        return f"torch.special.erfc({self._print(e.args[0])})"

    def _minmax(self, e, clamp, fn):
        const = [a for a in e.args if a.is_number]
        rest = [a for a in e.args if not a.is_number]
        if not rest:
            return self._print(e.func(*const))
        out = self._print(rest[0])
        for a in rest[1:]:
            out = f"{fn}({out}, {self._print(a)})"
        if const:
            out = f"torch.clamp({out}, {clamp}={self._print(e.func(*const))})"
        return out

    def _print_Max(self, e):
        return self._minmax(e, "min", "torch.maximum")

    def _print_Min(self, e):
        return self._minmax(e, "max", "torch.minimum")

    def _print(self, expr, **kwargs):
        # a constant subexpression (sqrt(2), pi/3, erf(1)...) is one float64 number: torch's
        # functions take tensors, not Python numbers
        if isinstance(expr, sp.Expr) and expr.is_number and not expr.is_Integer and expr.is_real:
            return repr(float(sp.N(expr, 30)))
        return super()._print(expr, **kwargs)

    def _print_Float(self, e):  # pragma: no cover - assert_exact refuses floats first
        return repr(float(e))


_TRIVIAL = (sp.MatrixSymbol, sp.Identity, sp.ZeroMatrix)


def _memo_printer(backend: str, exprs):
    """A printer that names every matrix subexpression occurring more than once."""
    from collections import Counter

    counts: Counter = Counter()

    def visit(e):
        if getattr(e, "is_Matrix", False) and not isinstance(e, _TRIVIAL):
            counts[e] += 1
            if counts[e] > 1:
                return
        for a in getattr(e, "args", ()):
            if isinstance(a, sp.Basic):
                visit(a)

    for e in exprs:
        visit(e)
    base = _printer(backend)

    class _Memo(type(base)):
        def __init__(self, settings):
            super().__init__(settings)
            self.assignments: list = []
            self._names: dict = {}

        def _print(self, expr, **kwargs):
            if counts.get(expr, 0) > 1:
                name = self._names.get(expr)
                if name is None:
                    text = super()._print(expr, **kwargs)
                    name = f"_m{len(self.assignments)}"
                    self.assignments.append((name, text))
                    self._names[expr] = name
                return name
            return super()._print(expr, **kwargs)

    return _Memo(dict(base._settings))


def _printer(backend: str):
    if backend == "numpy":
        return _NumpyPrinter({"fully_qualified_modules": True, "allow_unknown_functions": False})
    if backend == "mpmath":
        return _MpmathPrinter({"fully_qualified_modules": True, "allow_unknown_functions": False})
    if backend == "torch":
        return _TorchPrinter({"fully_qualified_modules": True, "allow_unknown_functions": False})
    raise ValueError(f"unknown backend {backend!r}; choose one of {ALL_BACKENDS}")


def print_expr(expr, backend: str) -> str:
    """Python source for one expression on ``backend`` ("numpy", "mpmath" or "torch")."""
    assert_exact(expr)
    try:
        return _printer(backend).doprint(expr)
    except NotImplementedError as exc:  # PrintMethodNotImplementedError: one line, not a printer traceback
        raise _codegen_error("expression", backend, [expr], exc) from None


# ------------------------------------------------------------------------------------------------
# kernels


@dataclass
class Kernel:
    """A generated function: named inputs (symbols or matrix symbols) → a tuple of outputs.

    Parameters
    ----------
    name : str
        Python name of the function.
    inputs : sequence of sympy.Symbol or sympy.MatrixSymbol
        Positional arguments, in order.  Symbolic dimensions of matrix inputs (e.g. ``r``) must be
        listed too.
    outputs : sequence of sympy.Expr
        Scalar expressions (spectral averages and matrix elements allowed).
    doc : str
        Docstring of the generated function (formula and source).
    """

    name: str
    inputs: Sequence
    outputs: Sequence
    doc: str = ""
    use_cse: bool = True
    #: Compute each ``exp(x)`` of an input symbol once and write ``exp(k·x + …)`` with integer ``k``
    #: as products of its powers (SymPy folds ``exp(x)**2`` into ``exp(2x)``, so CSE alone recomputes
    #: it): see :func:`share_exponentials`.  Off by default (it changes results by rounding only).
    share_exp: bool = False

    def source(self, backend: str) -> str:
        """The function's Python source for ``backend``; :class:`CodegenError` (one line) where the
        printer has no code for a node (``DiracDelta``, the derivative of a step or of ``sign``)."""
        try:
            return self._source(backend)
        except CodegenError:
            raise
        except NotImplementedError as exc:  # PrintMethodNotImplementedError
            raise _codegen_error(self.name, backend, self.outputs, exc) from None

    def _source(self, backend: str) -> str:
        assert_exact(*self.outputs)
        p = _printer(backend)
        names = [_pyname(s) for s in self.inputs]
        # one quadrature sum per distinct integrand up to a constant factor:
        # <k·φ> = k<φ>, and integrands are brought over a common denominator first (shares work)
        avgs: list[SpectralAverage] = []
        rep = {}
        for o in self.outputs:
            for a in spectral_averages(o):
                if a in rep:
                    continue
                coeff, core = sp.together(a.integrand).as_coeff_Mul()
                core_avg = SpectralAverage(core, a.var, a.law)
                if core_avg not in avgs:
                    avgs.append(core_avg)
                rep[a] = coeff * sp.Symbol(f"_avg{avgs.index(core_avg)}")
        outer = [sp.sympify(o).xreplace(rep) if rep else sp.sympify(o) for o in self.outputs]
        lines = [f"def {self.name}({', '.join(names)}, _nodes=None):"]
        if self.doc:
            lines.append(textwrap.indent('"""' + self.doc.strip() + '\n"""', "    "))
        if avgs:
            variables = {a.var for a in avgs}
            if len(variables) != 1:
                raise ValueError("one kernel may average over one variable only")
            (tvar,) = variables
            if backend == "torch":
                raise ValueError("the torch backend prints elementwise kernels only (no spectral averages)")
            integrands = [a.integrand for a in avgs]
            subs, reduced = sp.cse(integrands, symbols=sp.numbered_symbols("_s"), optimizations="basic")
            if backend == "numpy":
                lines.append(f"    {_pyname(tvar)}, _w = _nodes")
                for s, e in subs:
                    lines.append(f"    {s} = {p.doprint(e)}")
                for k, e in enumerate(reduced):
                    lines.append(f"    _avg{k} = _wsum(_w, {p.doprint(e)})")
            else:
                lines.append(f"    _acc = [mpmath.mpf(0)] * {len(avgs)}")
                lines.append(f"    for {_pyname(tvar)}, _w in zip(*_nodes):")
                for s, e in subs:
                    lines.append(f"        {s} = {p.doprint(e)}")
                for k, e in enumerate(reduced):
                    lines.append(f"        _acc[{k}] += _w * ({p.doprint(e)})")
                lines.append("    " + ", ".join(f"_avg{k}" for k in range(len(avgs))) + ", = _acc")
        has_matrix = any(o.has(MatrixElement) or getattr(o, "is_Matrix", False) for o in outer)
        if self.share_exp and not has_matrix:
            outer, defs = share_exponentials(outer, [s_ for s_ in self.inputs if isinstance(s_, sp.Symbol)])
            for e_sym, arg in defs:
                lines.append(f"    {e_sym} = {p.doprint(sp.exp(arg))}")
        if self.use_cse and not has_matrix:
            subs, reduced = sp.cse(outer, symbols=sp.numbered_symbols("_o"), optimizations="basic")
        else:
            subs, reduced = [], outer
        for s, e in subs:
            lines.append(f"    {s} = {p.doprint(e)}")
        if has_matrix:
            # repeated matrix subexpressions (blocks, Kronecker products, inverses) are computed
            # once: a memoising printer assigns each to a temporary
            p = _memo_printer(backend, reduced)
            outs = [p.doprint(e) for e in reduced]
            lines.extend(f"    {name} = {text}" for name, text in p.assignments)
        else:
            outs = [p.doprint(e) for e in reduced]
        lines.append("    return (" + ", ".join(outs) + ("," if len(outs) == 1 else "") + ")")
        return "\n".join(lines) + "\n"


def _codegen_error(name: str, backend: str, outputs, exc: Exception) -> "CodegenError":
    """The one-line error of a node the printer cannot generate, naming the function class."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    bad = sorted({type(f).__name__ for e in outputs for f in sp.sympify(e).atoms(sp.Function)
                  if type(f).__name__ in text}) or [text.split(":")[-1].strip()]
    return CodegenError(
        f"kernel {name}: {', '.join(bad)} cannot be generated for {backend} (a kink or jump of the activation, "
        "differentiated twice); use a smooth activation, e.g. log(1+exp(8*t))/8 for Max(t, 0), sigmoid(8*t) "
        "for Heaviside(t)")


def share_exponentials(exprs, symbols):
    r"""Rewrite ``exp(c + Σ k_i x_i)`` (integer ``k_i``, ``x_i`` among ``symbols``) as
    ``exp(c)·Π E_i^{k_i}`` with one new symbol ``E_i`` per ``x_i`` standing for ``exp(x_i)``.

    Returns ``(new_exprs, [(E_i, x_i), ...])``.  Exponentials of other arguments are left alone.
    The values are unchanged up to rounding (``E**k`` for ``exp(k x)``; overflow happens at the
    same ``x``).
    """
    allowed = set(symbols)
    rep, defs = {}, {}
    for e in set().union(*(sp.sympify(x).atoms(sp.exp) for x in exprs)):
        arg = sp.expand(e.args[0])
        const, terms = arg.as_coeff_add()
        parts = []
        for t in terms:
            k, x = t.as_coeff_Mul()
            if x not in allowed or not (k.is_Integer and k != 0):
                parts = None
                break
            parts.append((int(k), x))
        if not parts:
            continue
        prod = sp.exp(const) if const != 0 else sp.S.One
        for k, x in parts:
            if x not in defs:
                defs[x] = sp.Symbol(f"_exp_{_pyname(x)}")
            prod = prod * defs[x] ** k
        rep[e] = prod
    if not rep:
        return list(exprs), []
    return [sp.sympify(x).xreplace(rep) for x in exprs], [(E, x) for x, E in defs.items()]


def _pyname(s) -> str:
    name = s.name if hasattr(s, "name") else str(s)
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"symbol name {name!r} is not a Python identifier")
    return name


# ------------------------------------------------------------------------------------------------
# modules


def _runtime_source(backend: str) -> str:
    if backend == "torch":
        return "import math\n\nimport torch\n"
    if backend == "numpy":
        from . import _runtime_numpy as rt
    else:
        from . import _runtime_mpmath as rt
    return strip_module_header(inspect.getsource(rt))


def strip_module_header(src: str) -> str:
    tree_lines = src.splitlines()
    # drop a leading module docstring and ``from __future__`` line; keep the rest verbatim
    out, in_doc, done = [], False, False
    for line in tree_lines:
        if not done:
            stripped = line.strip()
            if not in_doc and stripped.startswith('"""'):
                in_doc = not (stripped.count('"""') >= 2 and len(stripped) > 3)
                continue
            if in_doc:
                if '"""' in stripped:
                    in_doc = False
                continue
            if stripped.startswith("from __future__"):
                continue
            done = True
        out.append(line)
    return "\n".join(out).strip() + "\n"


@dataclass
class ModuleBuilder:
    """Assemble generated kernels and verbatim helper sources into one module text.

    The header names the result, the source-expression hash and the SymPy version, so that an
    exported file says exactly what it was generated from.
    """

    title: str
    backend: str
    source_hash: str = ""
    description: str = ""
    kernels: list = field(default_factory=list)
    constants: list = field(default_factory=list)  # (name, python source of value, comment)
    extra_sources: list = field(default_factory=list)

    def add_kernel(self, kernel: Kernel) -> None:
        self.kernels.append(kernel)

    def add_constant(self, name: str, value_source: str, comment: str = "") -> None:
        self.constants.append((name, value_source, comment))

    def add_source(self, src: str) -> None:
        self.extra_sources.append(src)

    def _runtime_helpers(self) -> list[str]:
        """Helper sources of the special functions the kernels call (each once)."""
        seen, out = [], []
        for k in self.kernels:
            for o in k.outputs:
                for f in sp.sympify(o).atoms(sp.Function):
                    cls = type(f)
                    runtime = getattr(cls, "runtime_source", None)  # e.g. functions.zeta_erf2
                    if runtime is not None and cls not in seen:
                        seen.append(cls)
                        out.append(runtime(self.backend, print_expr))
        return out

    def source(self, *, main: str | None = None) -> str:
        if self.backend not in ALL_BACKENDS:
            raise ValueError(f"unknown backend {self.backend!r}; choose one of {ALL_BACKENDS}")
        helpers = self._runtime_helpers()
        kernel_sources = [k.source(self.backend) for k in self.kernels]
        body = "\n".join(kernel_sources + list(self.extra_sources) + helpers + ([main] if main else []))
        needs = {"numpy": ["numpy"], "mpmath": ["mpmath"], "torch": ["torch"]}[self.backend]
        if "scipy." in body:
            needs.append("scipy")
        doc = [
            f'"""{doc_safe(self.title)}',
            "",
            doc_safe(textwrap.dedent(self.description).strip()),
            "",
            f"Generated by attnlimits from SymPy expressions (SymPy {sp.__version__}).",
            f"Source-expression hash: {self.source_hash}",
            f"Backend: {self.backend}; requires " + ", ".join(needs) + " and the Python standard library.",
            '"""',
        ]
        parts = ["\n".join(doc), "from __future__ import annotations\n"]
        parts.append(f"SOURCE_HASH = {self.source_hash!r}\nSYMPY_VERSION = {sp.__version__!r}\nBACKEND = {self.backend!r}\n")
        parts.append(_runtime_source(self.backend))
        if "scipy" in needs:
            parts.append("import scipy.special  # noqa: E402  (special functions printed by the numpy printer)\n")
        for name, val, comment in self.constants:
            parts.append((f"# {comment_safe(comment)}\n" if comment else "") + f"{name} = {val}\n")
        parts.extend(kernel_sources)
        parts.extend(self.extra_sources)
        parts.extend(helpers)
        if main:
            parts.append(main)
        return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"


def load_module(source: str, name: str = "attnlimits_generated") -> types.ModuleType:
    """Compile generated module source into a fresh module object (our own generated text only)."""
    mod = types.ModuleType(name)
    mod.__dict__["__file__"] = f"<{name}>"
    code = compile(source, f"<{name}>", "exec")
    exec(code, mod.__dict__)  # noqa: S102 - generated by ModuleBuilder from SymPy expressions
    return mod
