r"""Rendering of derivations: :class:`Formula`, a titled list of equations in four formats.

A :class:`Formula` is what ``attnlimits show`` prints and what a notebook displays: equations
``lhs = rhs`` (SymPy objects, never retyped: built by the derivation's own functions), the
unknowns and parameters they involve, and where they come from.  It renders as

- :meth:`Formula.to_text` — SymPy's string form (``sstr``), one equation a line;
- :meth:`Formula.to_latex` — one ``lhs = rhs`` LaTeX line per equation (``_repr_latex_`` for
  Jupyter); spectral averages print as :math:`\langle\cdot\rangle_{t\sim\mathrm{MP}(c)}`;
- :meth:`Formula.to_markdown` — title, ``$$ … $$`` display blocks and the source;
- :meth:`Formula.to_json` — ``srepr`` strings that :func:`from_srepr` turns back into the same
  SymPy objects through a whitelisted parser (no ``eval`` of arbitrary code: the text is checked
  node by node by :mod:`ast` first, and evaluated with no builtins and only SymPy classes in scope).

:meth:`Formula.subs` and :meth:`Formula.simplify` pass through to SymPy and return a new
:class:`Formula`; :attr:`Formula.exprs` gives the right-hand sides as plain SymPy objects.

>>> import sympy as sp
>>> x, a = sp.symbols("x a")
>>> f = Formula("square", [(sp.Symbol("y"), a * x**2)], unknowns=(x,), parameters=(a,))
>>> print(f.to_text())
square
  y = a*x**2
unknowns: x
parameters: a
>>> f.subs({a: 2}).exprs
[2*x**2]
>>> from_srepr(sp.srepr(a * x**2)) == a * x**2
True
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import sympy as sp
from sympy.printing.latex import LatexPrinter

__all__ = ["Formula", "latex", "from_srepr", "UnsafeSreprError", "mathtext_pieces", "as_formula"]


# ------------------------------------------------------------------------------------------------
# LaTeX printer: the project's own nodes


class _Latex(LatexPrinter):
    def _print_SpectralAverage(self, e):
        law = e.args[2]
        law_text = self._print(law)
        return (r"\left\langle " + self._print(e.args[0]) + r" \right\rangle_{" + self._print(e.args[1])
                + r" \sim " + law_text + "}")

    def _print_MarchenkoPasturLaw(self, e):
        return r"\mathrm{MP}\left(" + self._print(e.args[0]) + r"\right)"

    def _fn(self, name, e):
        return name + r"\left(" + ", ".join(self._print(a) for a in e.args) + r"\right)"

    def _print_Softplus(self, e):
        return self._fn(r"\operatorname{sp}", e)

    def _print_LogSoftplus(self, e):
        return self._fn(r"\log\operatorname{sp}", e)

    def _print_LogSoftplusPrime(self, e):
        return self._fn(r"(\log\operatorname{sp})'", e)

    def _print_Sigmoid(self, e):
        return self._fn(r"\operatorname{sigmoid}", e)

    def _print_ndtr(self, e):
        return self._fn(r"\Phi", e)

    def _print_zeta_erf2(self, e):
        return self._fn(r"\zeta_{\mathrm{erf}2}", e)


def latex(expr) -> str:
    """LaTeX of one SymPy object, with the project's nodes (spectral averages...) printed readably."""
    return _Latex({"mul_symbol": None}).doprint(expr)


def _text(expr) -> str:
    return sp.sstr(expr)


# ------------------------------------------------------------------------------------------------
# safe parsing of srepr text


class UnsafeSreprError(ValueError):
    """The text is not a SymPy ``srepr`` of whitelisted classes (one-line message)."""


_NAMESPACE: dict | None = None
MAX_SREPR_LENGTH = 2_000_000


def _namespace() -> dict:
    global _NAMESPACE
    if _NAMESPACE is None:
        import sympy.matrices.expressions as mexpr
        from sympy.matrices.expressions.matexpr import MatrixElement

        from . import functions as _functions
        from . import spectral as _spectral

        ns = {}
        for mod in (sp, mexpr, _functions, _spectral):
            for k, v in vars(mod).items():
                if k.startswith("_"):
                    continue
                if isinstance(v, type) and issubclass(v, (sp.Basic, sp.MatrixBase)):
                    ns[k] = v
        ns["MatrixElement"] = MatrixElement
        from sympy.core.symbol import Str

        ns["Str"] = Str  # the name of a MatrixSymbol
        from sympy.functions.elementary.piecewise import ExprCondPair

        ns["ExprCondPair"] = ExprCondPair  # the branches of a Piecewise
        for k in ("Symbol", "Dummy", "Wild", "Function", "Integer", "Rational", "Float", "Tuple",
                  "ImmutableDenseMatrix", "MutableDenseMatrix", "Matrix"):
            ns[k] = getattr(sp, k)
        for k in ("true", "false", "nan", "oo", "zoo", "pi", "E", "I", "EulerGamma"):
            ns[k] = getattr(sp, k)
        ns.update({"true": sp.true, "false": sp.false})
        _NAMESPACE = ns
    return _NAMESPACE


def _check_node(node, ns):
    if isinstance(node, ast.Expression):
        return _check_node(node.body, ns)
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Name):
            if f.id not in ns:
                raise UnsafeSreprError(f"name {f.id!r} is not a whitelisted SymPy class")
        elif isinstance(f, ast.Call):  # Function('f')(x): an undefined function applied
            if not (isinstance(f.func, ast.Name) and f.func.id == "Function"):
                raise UnsafeSreprError("only Function('name')(...) may be called on a call")
            _check_node(f, ns)
        else:
            raise UnsafeSreprError(f"call of a {type(f).__name__} is not allowed")
        for a in node.args:
            _check_node(a, ns)
        for kw in node.keywords:
            if kw.arg is None or not kw.arg.isidentifier():
                raise UnsafeSreprError("** arguments are not allowed")
            _check_node(kw.value, ns)
        return
    if isinstance(node, ast.Name):
        if node.id not in ns and node.id not in ("True", "False", "None"):
            raise UnsafeSreprError(f"name {node.id!r} is not allowed")
        return
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, (int, float, str, bool, type(None))):
            raise UnsafeSreprError("only numbers and strings are allowed as literals")
        if isinstance(node.value, str) and len(node.value) > 1000:
            raise UnsafeSreprError("string literal too long")
        return
    if isinstance(node, (ast.Tuple, ast.List)):
        for e in node.elts:
            _check_node(e, ns)
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _check_node(node.operand, ns)
    raise UnsafeSreprError(f"{type(node).__name__} is not allowed in srepr text")


def from_srepr(text: str):
    """The SymPy object of ``srepr`` text, parsed safely.

    The text is parsed by :mod:`ast` and every node is checked: calls of whitelisted SymPy classes
    (those of :mod:`sympy`, its matrix expressions and :mod:`attnlimits.symbolic.functions` /
    :mod:`attnlimits.symbolic.spectral`), ``Function('f')(…)``, numbers, strings, tuples, lists and
    keyword arguments (assumptions).  Anything else (attributes, subscripts, lambdas, other names)
    raises :class:`UnsafeSreprError`.  Only then is it evaluated, without builtins.
    """
    if not isinstance(text, str):
        raise UnsafeSreprError("srepr text must be a string")
    if len(text) > MAX_SREPR_LENGTH:
        raise UnsafeSreprError(f"srepr text too long ({len(text)} characters)")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise UnsafeSreprError(f"not valid srepr text: {exc.msg}") from None
    ns = _namespace()
    _check_node(tree, ns)
    env = {"__builtins__": {}, **ns, "True": True, "False": False, "None": None}
    return eval(compile(tree, "<srepr>", "eval"), env)  # noqa: S307 - every node checked above


# ------------------------------------------------------------------------------------------------
# the Formula


def _as_rows(lhs, rhs) -> list[tuple[Any, Any]]:
    """Matrices are shown component by component (``J[i, j] = …``)."""
    if isinstance(rhs, sp.MatrixBase):
        rows = []
        name = lhs if isinstance(lhs, str) else sp.sstr(lhs)
        for i in range(rhs.rows):
            for j in range(rhs.cols):
                idx = f"{i + 1}" if rhs.cols == 1 else f"{i + 1},{j + 1}"
                rows.append((sp.Symbol(f"{name}_{{{idx}}}"), rhs[i, j]))
        return rows
    if isinstance(lhs, str):
        lhs = sp.Symbol(lhs)
    return [(lhs, sp.sympify(rhs))]


@dataclass
class Formula:
    """A titled list of equations ``lhs = rhs`` with their unknowns, parameters and source.

    Parameters
    ----------
    title : str
        What the equations are (one line).
    equations : sequence of (lhs, rhs)
        ``lhs`` a SymPy object or a name (made a Symbol), ``rhs`` a SymPy expression; a matrix
        ``rhs`` is split into its components.
    unknowns, parameters : sequence of Symbol
        What is solved for, and what the equations depend on besides.
    source : str
        Paper and section; ``section`` the doc section (``docs/slr.md §10.2``).
    notes : sequence of str
        Extra lines (specialisation used, Hermite data...).
    """

    title: str
    equations: Sequence = ()
    unknowns: Sequence = ()
    parameters: Sequence = ()
    source: str = ""
    section: str = ""
    kind: str = ""
    name: str = ""
    notes: Sequence = ()
    code: str = field(default="", repr=False)  #: generated kernel source (``show --code``)

    def __post_init__(self):
        rows = []
        for lhs, rhs in self.equations:
            rows.extend(_as_rows(lhs, rhs))
        self.equations = rows
        self.unknowns = tuple(self.unknowns)
        self.parameters = tuple(self.parameters)
        self.notes = tuple(self.notes)

    # ---------------------------------------------------------------- SymPy passthrough
    @property
    def exprs(self) -> list:
        """The right-hand sides as SymPy objects."""
        return [rhs for _, rhs in self.equations]

    def __getitem__(self, key):
        """The right-hand side of the equation whose left-hand side prints as ``key`` (or index)."""
        if isinstance(key, int):
            return self.equations[key][1]
        for lhs, rhs in self.equations:
            if sp.sstr(lhs) == str(key):
                return rhs
        raise KeyError(key)

    def keys(self) -> list[str]:
        return [sp.sstr(lhs) for lhs, _ in self.equations]

    def _map(self, fn, *, title_suffix="") -> "Formula":
        return replace(self, equations=[(lhs, fn(rhs)) for lhs, rhs in self.equations],
                       title=self.title + title_suffix)

    def subs(self, *args, **kwargs) -> "Formula":
        """:meth:`sympy.Basic.subs` on every right-hand side (a new :class:`Formula`)."""
        return self._map(lambda e: e.subs(*args, **kwargs))

    def xreplace(self, rule) -> "Formula":
        return self._map(lambda e: e.xreplace(rule))

    def simplify(self, **kwargs) -> "Formula":
        """:func:`sympy.simplify` on every right-hand side (a new :class:`Formula`)."""
        return self._map(lambda e: sp.simplify(e, **kwargs))

    def applyfunc(self, fn) -> "Formula":
        return self._map(fn)

    # ---------------------------------------------------------------- renderings
    def _meta_lines(self) -> list[str]:
        out = []
        if self.unknowns:
            out.append("unknowns: " + ", ".join(sp.sstr(u) for u in self.unknowns))
        if self.parameters:
            out.append("parameters: " + ", ".join(sp.sstr(p) for p in self.parameters))
        if self.section:
            out.append("section: " + self.section)
        if self.source:
            out.append("source: " + self.source)
        out.extend(self.notes)
        return out

    def to_text(self, meta: bool = True) -> str:
        lines = [self.title]
        lines += [f"  {_text(lhs)} = {_text(rhs)}" for lhs, rhs in self.equations]
        if meta:
            lines += self._meta_lines()
        if self.code:
            lines += ["", self.code.rstrip()]
        return "\n".join(lines)

    def latex_lines(self) -> list[str]:
        """One LaTeX line ``lhs = rhs`` per equation (no ``$``)."""
        return [f"{latex(lhs)} = {latex(rhs)}" for lhs, rhs in self.equations]

    def to_latex(self) -> str:
        """The equations as LaTeX, one ``lhs = rhs`` per line (separated by ``\\\\``), no ``$``."""
        return " \\\\\n".join(self.latex_lines())

    def _repr_latex_(self) -> str:
        return "$\\displaystyle " + " \\\\ ".join(self.latex_lines()) + "$" if len(self.equations) == 1 else \
            "$$\\begin{aligned}" + " \\\\ ".join(l.replace(" = ", " &= ", 1) for l in self.latex_lines()) + \
            "\\end{aligned}$$"

    def to_markdown(self) -> str:
        lines = [f"**{self.title}**", ""]
        for l in self.latex_lines():
            lines += ["$$", l, "$$", ""]
        meta = []
        if self.unknowns:
            meta.append("unknowns " + ", ".join(f"${latex(u)}$" for u in self.unknowns))
        if self.parameters:
            meta.append("parameters " + ", ".join(f"${latex(p)}$" for p in self.parameters))
        if self.section:
            meta.append(self.section)
        if meta:
            lines.append("*" + "; ".join(meta) + ".*")
        if self.source:
            lines += ["", "Source: " + self.source]
        for n in self.notes:
            lines += ["", n]
        if self.code:
            lines += ["", "```python", self.code.rstrip(), "```"]
        return "\n".join(lines).rstrip() + "\n"

    def to_dict(self) -> dict:
        return {
            "name": self.name, "kind": self.kind, "title": self.title, "section": self.section,
            "source": self.source, "notes": list(self.notes),
            "unknowns": [sp.srepr(u) for u in self.unknowns],
            "parameters": [sp.srepr(p) for p in self.parameters],
            "equations": [{"lhs": sp.srepr(lhs), "rhs": sp.srepr(rhs), "text": f"{_text(lhs)} = {_text(rhs)}",
                           "latex": f"{latex(lhs)} = {latex(rhs)}"} for lhs, rhs in self.equations],
            **({"code": self.code} if self.code else {}),
        }

    def to_json(self, indent: int | None = 2) -> str:
        """JSON with ``srepr`` strings (``lhs``, ``rhs``, unknowns, parameters): :meth:`from_json`
        rebuilds the same SymPy objects."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | dict) -> "Formula":
        """The :class:`Formula` of :meth:`to_json` text (parsed with :func:`from_srepr`)."""
        d = json.loads(text) if isinstance(text, str) else text
        return cls(title=d["title"], equations=[(from_srepr(e["lhs"]), from_srepr(e["rhs"])) for e in d["equations"]],
                   unknowns=[from_srepr(u) for u in d.get("unknowns", ())],
                   parameters=[from_srepr(p) for p in d.get("parameters", ())],
                   source=d.get("source", ""), section=d.get("section", ""), kind=d.get("kind", ""),
                   name=d.get("name", ""), notes=d.get("notes", ()), code=d.get("code", ""))

    def render(self, fmt: str) -> str:
        """``fmt`` one of ``text``, ``latex``, ``markdown``, ``json``."""
        if fmt == "text":
            return self.to_text()
        if fmt == "latex":
            return self.to_latex()
        if fmt == "markdown":
            return self.to_markdown()
        if fmt == "json":
            return self.to_json()
        raise ValueError(f"unknown format {fmt!r}; choose text, latex, markdown or json")

    def __str__(self):
        return self.to_text()


def as_formula(obj, title: str = "", **kw) -> Formula:
    """A :class:`Formula` of an :class:`~attnlimits.symbolic.system.EquationSystem`, a mapping
    name → expression, a single expression or a Formula (returned as is)."""
    if isinstance(obj, Formula):
        return obj
    if _is_system(obj):
        return system_formula(obj, title=title, **kw)
    if isinstance(obj, dict):
        return Formula(title, list(obj.items()), **kw)
    return Formula(title, [(kw.pop("lhs", "value"), obj)], **kw)


def _is_system(obj) -> bool:
    """True for an :class:`~attnlimits.symbolic.system.EquationSystem`, told by its fields (this module sits
    below ``system``, which renders through it, so it does not import it)."""
    return all(hasattr(obj, a) for a in ("unknowns", "updates", "observables", "parameters", "jacobian", "source"))


def system_formula(system, title: str = "", *, observables: bool = True, jacobian: bool = False, **kw) -> Formula:
    """The fixed-point equations ``x = G(x; θ)`` of an EquationSystem (then its observables, and its
    Jacobian ``∂F/∂x`` with ``jacobian=True``)."""
    rows: list = list(zip(system.unknowns, system.updates))
    if observables:
        rows += [(sp.Symbol(k), v) for k, v in system.observables.items() if sp.Symbol(k) != v]
    if jacobian:
        rows.append(("J", system.jacobian()))
    kw.setdefault("source", system.source)
    kw.setdefault("unknowns", system.unknowns)
    kw.setdefault("parameters", system.parameters)
    kw.setdefault("kind", "system")
    kw.setdefault("name", system.name)
    return Formula(title or f"fixed point {system.name}: x = G(x; θ)", rows, **kw)


# ------------------------------------------------------------------------------------------------
# mathtext: displayed equations as matplotlib's parser accepts them


_ENV = re.compile(r"\\begin\{(cases|matrix|pmatrix|bmatrix|aligned)\}(.*?)\\end\{\1\}", re.S)


def mathtext_pieces(line: str) -> list[str]:
    """Split one LaTeX line into pieces matplotlib's mathtext parses: environments it lacks
    (``cases``, ``matrix``) become one piece per cell, the rest stays as it is."""
    pieces = []

    def cell(m):
        for row in re.split(r"\\\\", m.group(2)):
            for c in row.split("&"):
                if c.strip():
                    pieces.extend(mathtext_pieces(c))
        return r"\blacksquare"  # a placeholder mathtext knows (it has no \square)

    outer = line
    while _ENV.search(outer):
        outer = _ENV.sub(cell, outer)
    outer = outer.replace(r"\left[\blacksquare\right]", r"\blacksquare").replace(r"\left(\blacksquare\right)",
                                                                                  r"\blacksquare")
    return [outer] + pieces
