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

__all__ = ["Formula", "latex", "latex_text", "notation_entry", "from_srepr", "UnsafeSreprError", "mathtext_pieces",
           "as_formula"]


# ------------------------------------------------------------------------------------------------
# LaTeX printer: the project's own nodes


class _Latex(LatexPrinter):
    def __init__(self, settings=None, notation=None):
        super().__init__(settings)
        self._notation = notation or {}

    def _print_Symbol(self, expr, style="plain"):
        entry = notation_entry(expr.name, self._notation)
        if entry is not None:
            return entry[0]
        return super()._print_Symbol(expr, style)

    def _print_MatrixSymbol(self, expr):
        entry = notation_entry(str(expr.name), self._notation)
        if entry is not None:
            return entry[0]
        return super()._print_MatrixSymbol(expr)

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


def latex(expr, notation=None) -> str:
    """LaTeX of one SymPy object, with the project's nodes (spectral averages...) printed readably
    and every symbol named in ``notation`` (see :func:`notation_entry`) in its paper notation."""
    return _Latex({"mul_symbol": None}, notation).doprint(expr)


# ------------------------------------------------------------------------------------------------
# plain text in a LaTeX document

_TEXT_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                 "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                 "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}
_TEXT_MATH = {"−": "-", "≥": r"\geq", "≤": r"\leq", "≠": r"\neq", "≈": r"\approx", "→": r"\to", "×": r"\times",
              "·": r"\cdot", "∂": r"\partial", "∞": r"\infty", "′": r"^{\prime}", "‖": r"\|", "⟨": r"\langle",
              "⟩": r"\rangle", "∑": r"\sum", "√": r"\surd", "±": r"\pm", "∈": r"\in", "ℓ": r"\ell", "∫": r"\int",
              "⊗": r"\otimes", "∝": r"\propto", "∼": r"\sim", "≪": r"\ll", "≫": r"\gg", "⊤": r"\top", "ᵀ": r"^{\top}",
              "…": r"\dots", "∇": r"\nabla", "ϵ": r"\epsilon", "ε": r"\varepsilon", "ϕ": r"\phi", "φ": r"\varphi"}
_TEXT_PLAIN = {"–": "--", "—": "---", "’": "'", "‘": "`", "“": "``", "”": "''", "§": r"\S{}", "\u00a0": "~",
               "é": r"\'e", "è": r"\`e", "ü": r"\"u", "ö": r"\"o", "ä": r"\"a"}
_COMBINING = {"\u0302": r"\hat", "\u0304": r"\bar", "\u0303": r"\tilde", "\u0307": r"\dot", "\u20d7": r"\vec"}


def _unicode_math(ch: str) -> str | None:
    """The math-mode LaTeX of one non-ASCII character (Greek, sub/superscripts, math signs)."""
    import unicodedata

    if ch in _TEXT_MATH:
        return _TEXT_MATH[ch]
    name = unicodedata.name(ch, "")
    m = re.match(r"GREEK (SMALL|CAPITAL) LETTER (\w+)$", name)
    if m:
        letter = m.group(2).lower()
        letter = {"lamda": "lambda", "omicron": "o"}.get(letter, letter)
        if m.group(1) == "CAPITAL":
            letter = letter.capitalize()
            if letter in ("Alpha", "Beta", "Epsilon", "Zeta", "Eta", "Iota", "Kappa", "Mu", "Nu", "O", "Rho",
                          "Tau", "Chi"):
                return {"Alpha": "A", "Beta": "B", "Epsilon": "E", "Zeta": "Z", "Eta": "H", "Iota": "I",
                        "Kappa": "K", "Mu": "M", "Nu": "N", "O": "O", "Rho": "P", "Tau": "T", "Chi": "X"}[letter]
        return "\\" + letter
    m = re.match(r"(SUBSCRIPT|SUPERSCRIPT) (\w+)$", name)
    if m:
        digits = {"ZERO": "0", "ONE": "1", "TWO": "2", "THREE": "3", "FOUR": "4", "FIVE": "5", "SIX": "6",
                  "SEVEN": "7", "EIGHT": "8", "NINE": "9", "MINUS": "-", "PLUS": "+"}
        body = digits.get(m.group(2))
        if body is None and re.match(r"LATIN SMALL LETTER \w$", m.group(2)):
            body = m.group(2)[-1].lower()
        if body is None:
            return None
        return ("_" if m.group(1) == "SUBSCRIPT" else "^") + "{" + body + "}"
    m = re.match(r"(?:MODIFIER LETTER SMALL|LATIN SUBSCRIPT SMALL LETTER) (\w)$", name)
    if m:
        return ("^" if name.startswith("MODIFIER") else "_") + "{" + m.group(1).lower() + "}"
    return None


def latex_text(text: str) -> str:
    """Plain text (titles, meanings, notes: Unicode, code names) as LaTeX text that pdfLaTeX
    compiles: special characters escaped, Greek letters, sub/superscripts and math signs in
    ``$…$``, combining accents (``χ̂``, ``m̄``) on the letter before them, anything else as ``?``."""
    import unicodedata

    out: list[str] = []
    for ch in unicodedata.normalize("NFD", str(text)):
        if ch in _COMBINING:
            if out and out[-1].startswith("$") and out[-1].endswith("$"):
                out[-1] = "$" + _COMBINING[ch] + "{" + out[-1][1:-1] + "}$"
            elif out and len(out[-1]) == 1 and out[-1].isalpha():
                out[-1] = "$" + _COMBINING[ch] + "{" + out[-1] + "}$"
            continue
        if ord(ch) < 128:
            out.append(_TEXT_SPECIAL.get(ch, ch))
        elif ch in _TEXT_PLAIN:
            out.append(_TEXT_PLAIN[ch])
        else:
            tex = _unicode_math(ch)
            out.append("$" + tex + "{}$" if tex and tex[0] == "\\" and tex[-1].isalpha() else
                       "$" + tex + "$" if tex else "?")
    # adjacent math pieces merge ("$a$$b$" is not valid), and so do consecutive sub/superscripts
    text = re.sub(r"\$\$", "", "".join(out))
    for mark in ("_", r"\^"):
        pattern = re.compile(mark + r"\{([^{}]*)\}" + mark + r"\{([^{}]*)\}")
        while pattern.search(text):
            text = pattern.sub(lambda m: mark.replace("\\", "") + "{" + m.group(1) + m.group(2) + "}", text)
    return text


# ------------------------------------------------------------------------------------------------
# notation: code name -> (LaTeX, one-line meaning)

#: entries every Formula knows (the Jacobian rows ``J_{i,j}`` of ``show --jacobian``)
BUILTIN_NOTATION = {"J": ("J", "Jacobian: J_{i,j} = d(equation i)/d(unknown j), in the listed orders")}

_BRACED_INDEX = re.compile(r"^(?P<base>.+)_\{(?P<idx>[0-9,]+)\}$")


def notation_entry(name: str, notation) -> tuple | None:
    """``(latex, meaning)`` of the code name ``name`` in a result's notation table, or ``None``.

    ``notation`` maps code names to ``(latex, meaning)``.  A name found there is used as it is;
    otherwise trailing ``_suffix`` parts are peeled off the name until the rest is found, and each
    suffix becomes a subscript: ``"_k": ("K", "key block")`` in the table gives the subscript and
    meaning of ``_k``; a number ``_1`` is printed as is, with the meaning template of ``"_#"``
    (``("{}", "token {}")``) when the table has one.  ``m_hat_k`` is thus ``m_hat`` with subscript
    ``k``, and ``J_{1,2}`` is ``J`` with subscript ``1,2``.
    """
    table = {**BUILTIN_NOTATION, **(notation or {})}
    if name in table:
        tex, meaning = table[name]
        return tex, meaning
    m = _BRACED_INDEX.match(name)
    if m and m.group("base") in table:
        tex, meaning = table[m.group("base")]
        return _subscript(tex, [m.group("idx")]), meaning
    parts = name.split("_")
    for cut in range(len(parts) - 1, 0, -1):
        base, suffixes = "_".join(parts[:cut]), parts[cut:]
        if base not in table or not all(suffixes):
            continue
        tex, meaning = table[base]
        sub_tex, sub_meaning = [], []
        for suf in suffixes:
            if "_" + suf in table:
                st, sm = table["_" + suf]
            elif suf.isdigit():
                st, sm = table.get("_#", ("{}", "index {}"))
                st, sm = st.format(suf), sm.format(suf)
            else:
                break
            sub_tex.append(st)
            sub_meaning.append(sm)
        else:
            return _subscript(tex, sub_tex), meaning + "; " + ", ".join(sub_meaning)
    return None


def _subscript(tex: str, subs) -> str:
    base = "{" + tex + "}" if "_" in tex else tex
    return base + "_{" + ",".join(subs) + "}"


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
    notation : mapping
        The result's notation table, code name → ``(LaTeX, one-line meaning)`` (see
        :func:`notation_entry`): the LaTeX renderings print symbols in paper notation, and every
        rendering ends with a legend of the symbols the equations use.
    system : EquationSystem or None
        The system the equations come from (``show --jacobian`` differentiates it).

    The equations are an ordered list of definitions: a later right-hand side may use the symbol an
    earlier row defines (``E = γ(c + SNR) m̄′ + …`` with ``m̄`` defined above it);
    :meth:`inline` substitutes every definition into the rows after it.
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
    notation: Any = field(default_factory=dict, repr=False, compare=False)
    system: Any = field(default=None, repr=False, compare=False)

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

    # ---------------------------------------------------------------- symbols and definitions
    def symbols(self) -> dict:
        """Every symbol the equations use (left-hand sides, right-hand sides, unknowns, parameters), by
        name, in order of first appearance (matrix symbols included)."""
        out: dict = {}

        def visit(expr):
            if not isinstance(expr, sp.Basic):
                return
            walk = sp.preorder_traversal(expr)
            for node in walk:
                if isinstance(node, sp.MatrixSymbol):
                    out.setdefault(str(node.name), node)
                    walk.skip()
                elif isinstance(node, sp.Symbol):
                    out.setdefault(node.name, node)

        for lhs, rhs in self.equations:
            visit(lhs)
            visit(rhs)
        for s_ in (*self.unknowns, *self.parameters):
            visit(s_)
        return out

    def definitions(self) -> list[str]:
        """The names the rows define (their left-hand sides), in order."""
        return [lhs.name for lhs, _ in self.equations if isinstance(lhs, sp.Symbol)]

    def inline(self) -> "Formula":
        """Every definition substituted into the rows after it (``show --substitute``): each right-hand
        side then involves only the unknowns and parameters."""
        done: dict = {}
        rows = []
        for lhs, rhs in self.equations:
            if done and isinstance(rhs, sp.Basic):
                rhs = rhs.xreplace({s_: done[s_.name] for s_ in rhs.free_symbols
                                    if isinstance(s_, sp.Symbol) and s_.name in done})
            rows.append((lhs, rhs))
            if isinstance(lhs, sp.Symbol):
                done[lhs.name] = rhs
        return replace(self, equations=rows)

    def _rule(self, args) -> list:
        """``subs``/``xreplace`` arguments as (formula symbol, SymPy value) pairs: names given as strings,
        or symbols whose assumptions differ from the formula's, are matched to the formula's own
        symbols by name; a name the formula lacks raises :class:`InputError` listing the known ones."""
        from .result import InputError

        if len(args) == 2:
            pairs = [tuple(args)]
        elif len(args) == 1:
            rule = args[0]
            pairs = list(rule.items()) if hasattr(rule, "items") else [tuple(p) for p in rule]
        else:
            raise TypeError("subs takes a mapping, a list of (old, new) pairs, or old, new")
        known = self.symbols()
        out, unknown = [], []
        for old, new in pairs:
            if isinstance(old, str):
                if old not in known:
                    unknown.append(old)
                    continue
                old = known[old]
            elif isinstance(old, (sp.Symbol, sp.MatrixSymbol)) and old not in known.values():
                old = known.get(str(old.name), old)  # same name, other assumptions: the formula's own
            if isinstance(new, str):
                new = sp.sympify(new, locals=dict(known))
            out.append((old, sp.sympify(new)))
        if unknown:
            raise InputError(f"{self.name or self.title}: no symbol {', '.join(map(repr, unknown))}; "
                             f"its symbols: {', '.join(known)}")
        return out

    def _substituted(self, pairs, fn) -> "Formula":
        gone = {old for old, new in pairs if isinstance(old, sp.Symbol) and not (new.free_symbols and new == old)}
        f = self._map(fn)
        f.unknowns = tuple(u for u in f.unknowns if u not in gone)
        f.parameters = tuple(p for p in f.parameters if p not in gone)
        return f

    def subs(self, *args, **kwargs) -> "Formula":
        """:meth:`sympy.Basic.subs` on every right-hand side (a new :class:`Formula`).

        Names may be strings (``f.subs({"c": 0.5})``): they are matched to the formula's own symbols
        whatever their assumptions, and a name the formula does not use is refused
        (:class:`~attnlimits.symbolic.result.InputError`, listing the names it does use).  A
        defined name (a left-hand side) is replaced in the rows after it."""
        pairs = self._rule(args)
        return self._substituted(pairs, lambda e: e.subs(pairs, **kwargs))

    def xreplace(self, rule) -> "Formula":
        """:meth:`sympy.Basic.xreplace` on every right-hand side; names as in :meth:`subs`."""
        pairs = dict(self._rule((rule,)))
        return self._substituted(list(pairs.items()), lambda e: e.xreplace(pairs))

    def legend(self) -> list[tuple[str, str, str]]:
        """``(code name, LaTeX, meaning)`` of every symbol the equations use, in order of first
        appearance; the meaning is ``""`` where the notation table has no entry."""
        out = []
        syms = self.symbols()
        first = [*self.definitions(), *(sp.sstr(u) for u in self.unknowns), *(sp.sstr(p) for p in self.parameters)]
        order = list(dict.fromkeys([n for n in first if n in syms] + list(syms)))
        seen_bases = set()
        for name in order:
            s_ = syms[name]
            m = _BRACED_INDEX.match(name)
            if m and notation_entry(m.group("base"), self.notation):  # J_{1,1}, J_{1,2}...: one entry, J_{i,j}
                base = m.group("base")
                if base not in seen_bases:
                    seen_bases.add(base)
                    tex, meaning = notation_entry(base, self.notation)
                    ij = "i,j" if "," in m.group("idx") else "i"
                    out.append((f"{base}_{{{ij}}}", _subscript(tex, [ij]), meaning))
                continue
            entry = notation_entry(name, self.notation)
            out.append((name, entry[0], entry[1]) if entry else (name, latex(s_), ""))
        return out

    def jacobian(self) -> "Formula":
        """The symbolic Jacobian: of the fixed-point map ``F = x − G(x; θ)`` where the formula has its
        :class:`~attnlimits.symbolic.system.EquationSystem`, otherwise of the (inlined) right-hand
        sides with respect to the unknowns."""
        from .result import InputError

        if self.system is not None:
            J, rows, cols = self.system.jacobian(), "F = x - G(x)", self.system.unknowns
            title = f"Jacobian of {self.system.name}: dF/dx"
        else:
            if not self.unknowns:
                raise InputError(f"{self.name or self.title}: --jacobian needs the unknowns of a system; "
                                 "this item has none")
            flat = self.inline()
            J = sp.Matrix([rhs for _, rhs in flat.equations]).jacobian(list(self.unknowns))
            rows, cols = ", ".join(flat.keys()), self.unknowns
            title = f"Jacobian of {self.name or self.title}: d(equations)/d(unknowns)"
        note = f"J rows: {rows}; columns: {', '.join(sp.sstr(u) for u in cols)}"
        return Formula(title, [("J", J)], unknowns=cols, notes=(note,), notation=self.notation)

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

    def _legend_text(self) -> list[str]:
        rows = [(n, m) for n, _, m in self.legend() if m]
        if not rows:
            return []
        width = max(len(n) for n, _ in rows)
        return ["where:"] + [f"  {n:<{width}}  {m}" for n, m in rows]

    def to_text(self, meta: bool = True) -> str:
        lines = [self.title]
        lines += [f"  {_text(lhs)} = {_text(rhs)}" for lhs, rhs in self.equations]
        if meta:
            lines += self._legend_text()
            lines += self._meta_lines()
        if self.code:
            lines += ["", self.code.rstrip()]
        return "\n".join(lines)

    def latex_lines(self) -> list[str]:
        """One LaTeX line ``lhs = rhs`` per equation (no ``$``), symbols in the result's notation."""
        return [f"{latex(lhs, self.notation)} = {latex(rhs, self.notation)}" for lhs, rhs in self.equations]

    def label(self, lhs, prefix: str = "") -> str:
        """The LaTeX ``\\label`` key of the row defining ``lhs``: ``eq:<prefix><item>:<name>``."""
        key = re.sub(r"[^A-Za-z0-9.]+", "-", sp.sstr(lhs)).strip("-")
        return f"eq:{prefix}{self.name or 'formula'}:{key}"

    def to_latex_block(self, prefix: str = "", link: str = "") -> str:
        """The equations as a LaTeX ``align`` environment, each row labelled (:meth:`label`), then the
        legend of its symbols, notes and source (a fragment of a document with ``amsmath``;
        ``link`` is LaTeX text that points to the documentation section)."""
        rows = [f"{latex(lhs, self.notation)} &= {latex(rhs, self.notation)} \\label{{{self.label(lhs, prefix)}}}"
                for lhs, rhs in self.equations]
        out = ["\\begin{align}", " \\\\\n".join(rows), "\\end{align}"]
        legend = [(t, m) for _, t, m in self.legend() if m]
        if legend:
            out.append("where")
            out.append("\\begin{itemize}")
            out += [f"\\item ${t}$: {latex_text(m)}" for t, m in legend]
            out.append("\\end{itemize}")
        meta = []
        if self.unknowns:
            meta.append("Unknowns " + ", ".join(f"${latex(u, self.notation)}$" for u in self.unknowns) + ".")
        if link:
            meta.append(link)
        if self.source:
            meta.append("Source: " + latex_text(self.source))
        meta += [latex_text(n) for n in self.notes]
        if meta:
            out += ["", "\n\n".join(meta)]
        return "\n".join(out) + "\n"

    def to_latex(self) -> str:
        """The equations as LaTeX, one ``lhs = rhs`` per line (separated by ``\\\\``), no ``$``."""
        return " \\\\\n".join(self.latex_lines())

    def _repr_latex_(self) -> str:  # noqa: D401 - Jupyter hook
        return "$\\displaystyle " + " \\\\ ".join(self.latex_lines()) + "$" if len(self.equations) == 1 else \
            "$$\\begin{aligned}" + " \\\\ ".join(l.replace(" = ", " &= ", 1) for l in self.latex_lines()) + \
            "\\end{aligned}$$"

    def to_markdown(self) -> str:
        lines = [f"**{self.title}**", ""]
        for l in self.latex_lines():
            lines += ["$$", l, "$$", ""]
        legend = [(n, t, m) for n, t, m in self.legend() if m]
        if legend:
            lines.append("where")
            lines.append("")
            lines += [f"- ${t}$ (`{n}`): {m}" for n, t, m in legend]
            lines.append("")
        meta = []
        if self.unknowns:
            meta.append("unknowns " + ", ".join(f"${latex(u, self.notation)}$" for u in self.unknowns))
        if self.parameters:
            meta.append("parameters " + ", ".join(f"${latex(p, self.notation)}$" for p in self.parameters))
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
                           "latex": f"{latex(lhs, self.notation)} = {latex(rhs, self.notation)}"}
                          for lhs, rhs in self.equations],
            "legend": [{"name": n, "latex": t, "meaning": m} for n, t, m in self.legend()],
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
                   name=d.get("name", ""), notes=d.get("notes", ()), code=d.get("code", ""),
                   notation={e["name"]: (e["latex"], e["meaning"]) for e in d.get("legend", ()) if e["meaning"]})

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
    kw.setdefault("system", system)
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
