"""Results as plug-ins: the :class:`Result` a derivation declares, and the registry that finds them.

A result (one paper's theory) is declared once, as data, by its derivation package::

    RESULT = Result(
        name="rmt", title="...", references=(...),
        commands=(Command(name="", help="...", parameters=(Param("c", "float", check="positive"), ...),
                          run="attnlimits.verify.rmt.commands:rmt"),),
        claims="attnlimits.verify.rmt.claims",
        model="attnlimits.derivations.attention_rmt:model",
    )

and registered under the ``attnlimits.results`` entry-point group in ``pyproject.toml``::

    [project.entry-points."attnlimits.results"]
    rmt = "attnlimits.derivations.attention_rmt.result:RESULT"

so that a third-party package adds a result without editing attnlimits.  Everything here is
plain data: building the command-line parser from a :class:`Result` imports no SymPy and none of
the result's modules.  Callables are named by ``"module:attribute"`` strings and imported only
when a command runs (:func:`resolve`).

The command contract
--------------------
A :class:`Command`'s ``run`` names a function ``run(params: dict, *, progress) -> list[dict]``:
``params`` maps each :class:`Param` name to its parsed, validated value (see :meth:`Param.parse`);
``progress`` is a callable taking one message (or ``None``); the function returns *tidy rows*
(one dict per computed point, plain numbers/strings/bools/None, including the parameters that
made it): a list, or an iterator that yields each row as soon as it is computed (then a stop —
Ctrl-C — keeps the finished rows: the CLI prints them and exits 130).  A run function that
yields checks its inputs before it returns the iterator, so bad input fails at once.  The CLI prints the rows as a table (``Command.table`` columns) or JSON/CSV, and a sweep
(``attnlimits sweep``) runs the same function on each grid point.  Bad input raises
:class:`InputError` (one line, exit status 2).
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Param", "Command", "Item", "Panel", "Result", "InputError", "REQUIRED", "parse_number", "resolve",
           "discover_results",
           "register_result", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "attnlimits.results"


class InputError(ValueError):
    """Bad user input; the message is one line naming the input."""


class _Required:
    def __repr__(self):
        return "REQUIRED"


REQUIRED: Any = _Required()  #: marks a :class:`Param` without default

_KINDS = ("float", "int", "str", "floats", "ints", "strs", "flag", "choice", "choices")


def _check_number(name: str, v, check: str):
    if isinstance(v, float) and math.isnan(v):
        raise InputError(f"--{name} must be a number, got nan")
    allow_inf = "inf" in check
    if isinstance(v, float) and math.isinf(v) and not allow_inf:
        raise InputError(f"--{name} must be finite, got {v}")
    if "positive" in check and not v > 0:
        raise InputError(f"--{name} must be > 0, got {v:g}")
    if "nonnegative" in check and not v >= 0:
        raise InputError(f"--{name} must be >= 0, got {v:g}")
    for part in check.split(","):
        part = part.strip()
        if part.startswith(">=") or part.startswith("<="):
            bound = float(part[2:])
            if (part[0] == ">" and not v >= bound) or (part[0] == "<" and not v <= bound):
                raise InputError(f"--{name} must be {part[:2]} {part[2:]}, got {v:g}")
    return v


def parse_number(name: str, text, base: str = "float", check: str = ""):
    """``text`` (command-line text or a number) as an ``int`` (``base="int"``) or ``float``, checked by
    the rules of ``check`` (:class:`Param`); :class:`InputError` with the one-line message otherwise.

    The one number validator of the command line, the Python API and the exported solvers (whose
    files carry this function's text, :func:`attnlimits.numeric.models.model_source`)."""
    s = str(text).strip()
    if len(s) > 64:
        s = s[:60] + "..."
    try:
        v = int(s) if base == "int" else float(s)
    except (TypeError, ValueError):
        what = "an integer" if base == "int" else "a number"
        raise InputError(f"--{name} must be {what}, got {s!r}") from None
    _check_number(name, v, check)
    return v


@dataclass(frozen=True)
class Param:
    """One parameter of a command: its name, kind, default, help and validation.

    ``kind``: ``float``, ``int``, ``str``, ``floats``/``ints``/``strs`` (comma-separated lists, split
    at commas outside brackets so that a formula such as ``Max(t, 0)`` stays whole; the first entry
    may be negative), ``flag`` (boolean switch), ``choice``/``choices`` (one or a
    comma-separated list of ``choices``).  ``check``: comma-separated rules for numbers:
    ``positive``, ``nonnegative``, ``inf`` (allow ±inf), ``>=X``, ``<=X``.  ``flag`` overrides the
    command-line spelling (default ``--name`` with ``_`` → ``-``).  ``raw=True`` keeps numbers as
    their exact text (for an mpmath backend) after validating them.  Text longer than
    ``max_length`` characters is refused (a one-line message, never the input repeated back).
    ``validator`` optionally names ``"module:function"`` called with one value (one item of a
    list) that raises :class:`InputError` or :class:`ValueError` for a value the command would
    refuse (an unknown activation name): a sweep's grid is checked with it before anything runs.
    It is imported only then, so that the parser stays free of SymPy.  ``writes=True`` marks a
    parameter naming a file the command writes (a log, a figure): a sweep keeps such paths inside
    its output folder.
    """

    name: str
    kind: str = "float"
    default: Any = REQUIRED
    help: str = ""
    choices: tuple = ()
    check: str = ""
    flag: str | None = None
    metavar: str | None = None
    raw: bool = False
    max_length: int = 500
    validator: str | None = None
    writes: bool = False

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"Param {self.name}: unknown kind {self.kind!r} (one of {', '.join(_KINDS)})")

    @property
    def option(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def _scalar(self, text, base: str):
        name = self.option.lstrip("-")
        if base == "str":
            s = str(text).strip()
            if len(s) > self.max_length:
                raise InputError(f"--{name} is too long ({len(s)} characters; at most {self.max_length})")
            if self.choices and s not in self.choices:
                raise InputError(f"--{name} must be one of {', '.join(map(str, self.choices))}, got {s!r}")
            return s
        v = parse_number(name, text, base, self.check)
        return str(text).strip() if self.raw else v

    def parse(self, value):
        """The validated value of ``value`` (text from the command line, or a Python value)."""
        if value is None or value is REQUIRED:
            if self.required:
                raise InputError(f"{self.option} is required")
            return self.default if self.default is not REQUIRED else None
        if self.kind == "flag":
            if isinstance(value, str):
                low = value.strip().lower()
                if low in ("1", "true", "yes", "on"):
                    return True
                if low in ("0", "false", "no", "off", ""):
                    return False
                raise InputError(f"{self.option} is a switch (true/false), got {value!r}")
            return bool(value)
        base = {"floats": "float", "ints": "int", "strs": "str", "choice": "str", "choices": "str"}.get(
            self.kind, self.kind)
        if self.kind in ("floats", "ints", "strs", "choices"):
            items = value if isinstance(value, (list, tuple)) else split_top_level(str(value))
            items = [v for v in items if str(v).strip() != ""]
            if not items and self.required:
                raise InputError(f"{self.option} needs at least one value")
            return [self._scalar(v, base) for v in items]
        return self._scalar(value, base)

    def to_text(self, value) -> str:
        """The command-line text of ``value`` (inverse of :meth:`parse`)."""
        if isinstance(value, (list, tuple)):
            return ",".join(str(v) for v in value)
        return str(value)


def split_top_level(text: str) -> list:
    """``text`` split at the commas outside brackets: ``"tanh,Max(t, 0)"`` is two items, not three.

    A list option (``--activation tanh,relu``) must keep a formula such as ``Max(t, 0)`` whole.
    """
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return items


@dataclass(frozen=True)
class Command:
    """A command of a result: ``attnlimits <result> [<name>] --param ...``.

    ``name`` is empty for a result whose command is the result itself (``attnlimits rmt``).
    ``run`` is ``"module:function"`` following the contract of this module's docstring;
    ``table`` lists the row keys shown by the default table; ``expensive`` lists the parameters a
    sweep should keep together in one task (for example the axis a continuation runs along).
    ``formatter`` optionally names ``format(rows, params, fmt) -> str`` (``fmt`` is ``"table"`` or
    ``"json"``) for results whose numbers need their own printing (mpmath digits, say).
    ``smoke`` lists command lines (without the leading ``attnlimits``) at small sizes, seconds each, that
    together print every column the command can print: the output-schema test runs each and checks
    every column against docs/output.md.
    """

    name: str
    help: str
    run: str
    parameters: tuple = ()
    description: str = ""
    examples: tuple = ()
    table: tuple = ()
    expensive: tuple = ()
    formatter: str | None = None
    smoke: tuple = ()

    def param(self, name: str) -> Param:
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(name)

    def parse(self, values: dict) -> dict:
        """Validate a mapping name → value (text or Python) into the run function's ``params``."""
        unknown = [k for k in values if k not in {p.name for p in self.parameters}]
        if unknown:
            raise InputError(f"unknown parameter(s) {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(p.name for p in self.parameters)}")
        return {p.name: p.parse(values.get(p.name)) for p in self.parameters}

    def function(self) -> Callable:
        return resolve(self.run)


ITEM_KINDS = ("system", "observable", "closed_form", "property")


@dataclass(frozen=True)
class Item:
    """Something of a result that ``attnlimits show`` prints: a system, observable, closed form or property.

    ``build`` names ``"module:function"`` called with keyword arguments taken from ``parameters``
    (a subset of ``activation``, ``L``, ``model``, ``variant``... — the specialisation the
    derivation accepts) and returning an :class:`attnlimits.symbolic.render.Formula` built by the
    derivation's own functions (no formula retyped).  ``defaults`` gives each parameter's value when
    the user names none (``None``: keep it symbolic).  Plain data: nothing is imported until shown.
    """

    name: str
    kind: str
    title: str
    build: str
    section: str = ""
    parameters: tuple = ()
    defaults: tuple = ()  #: pairs (parameter, default value)
    slow: bool = False  #: SymPy work of seconds or more (``show`` prints a progress line)

    def __post_init__(self):
        if self.kind not in ITEM_KINDS:
            raise ValueError(f"Item {self.name}: unknown kind {self.kind!r} (one of {', '.join(ITEM_KINDS)})")

    def default(self, parameter: str):
        return dict(self.defaults).get(parameter)


@dataclass(frozen=True)
class Panel:
    """A figure panel a result declares (``attnlimits figure NAME``).

    ``make`` names ``"module:function"`` called as ``make(out, mode, seed, device)`` (``mode`` is
    ``"quick"`` or ``"full"``) and returning ``(fig, ax, rows, note)``: the matplotlib figure, the axes
    that carry the legend, the tidy rows of the panel's CSV and a one-line note of the sizes and seeds.
    ``quick_minutes`` is the measured time of the quick size on two cores (shown by ``figure --list``).
    ``options=True`` marks a panel whose ``make`` also takes the keyword options ``seeds``, ``alphas``,
    ``workers`` and ``progress`` (``figure --seeds/--alpha/--workers``); other panels refuse them.
    ``examples`` are command lines that ``attnlimits figure --help`` shows.
    """

    name: str
    title: str
    source: str
    make: str
    quick_minutes: float = 1.0
    options: bool = False
    examples: tuple = ()


@dataclass(frozen=True)
class Result:
    """A registered result: name, title, references, commands, claims module, generated model.

    ``claims`` is the module (or a tuple of modules) that registers the result's claims (imported
    by ``attnlimits verify``); ``model`` names its :class:`attnlimits.symbolic.model.GeneratedModel` (or ``None``);
    ``export`` names ``export(params, path) -> str`` (a one-line summary) for
    ``attnlimits export <name>``, with ``export_parameters`` its options (``-o/--output`` is added),
    ``export_help`` its description and ``export_examples`` the command lines its ``--help`` shows.
    ``doc`` is the result's documentation page, relative to the project root (``"docs/slr.md"``): the
    page that documents every claim ID the claims modules register (``None``: a plug-in without one).
    """

    name: str
    title: str
    references: tuple = ()
    commands: tuple = ()
    claims: str | tuple | None = None
    model: str | None = None
    export: str | None = None
    export_parameters: tuple = ()
    export_help: str = ""
    export_examples: tuple = ()
    description: str = ""
    group_help: str = ""
    #: :class:`attnlimits.symbolic.properties.Property` declarations (``attnlimits explore``)
    properties: tuple = ()
    #: what ``attnlimits show`` prints: a tuple of :class:`Item`, or ``"module:attribute"`` naming one
    items: tuple | str = ()
    #: the documentation page, relative to the project root (``"docs/<result>.md"``)
    doc: str | None = None
    #: :class:`Panel` declarations (``attnlimits figure``)
    figures: tuple = ()

    def item_list(self) -> tuple:
        """The result's :class:`Item` declarations (imports the named module when ``items`` is a string)."""
        return tuple(resolve(self.items)) if isinstance(self.items, str) else tuple(self.items)

    def command(self, name: str = "") -> Command:
        for c in self.commands:
            if c.name == name:
                return c
        known = ", ".join(c.name or "(none)" for c in self.commands)
        raise InputError(f"{self.name} has no command {name!r}; known: {known}")

    @property
    def is_group(self) -> bool:
        """True when the result has named subcommands (``attnlimits slr population``)."""
        return any(c.name for c in self.commands)


def resolve(dotted: str):
    """Import ``"module:attribute"`` (or ``"module.attribute"``) and return the attribute."""
    mod, sep, attr = dotted.partition(":")
    if not sep:
        mod, _, attr = dotted.rpartition(".")
    obj = importlib.import_module(mod)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


_EXTRA: dict[str, Result] = {}
_DISCOVERED: dict[str, Result] | None = None


def register_result(result: Result) -> Result:
    """Register ``result`` in this process (tests, notebooks); entry points need no call."""
    _EXTRA[result.name] = result
    return result


def discover_results() -> dict[str, Result]:
    """Results from the ``attnlimits.results`` entry points (read once per process), plus those
    registered in-process.

    An entry point that fails to load is skipped with a warning naming it (a broken third-party
    plug-in must not take the command line down).
    """
    if _DISCOVERED is not None:
        return {**_DISCOVERED, **_EXTRA}
    import warnings
    from importlib.metadata import entry_points

    out: dict[str, Result] = {}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            res = ep.load()
        except Exception as exc:  # noqa: BLE001 - reported, the others still load
            warnings.warn(f"attnlimits: result plug-in {ep.name!r} ({ep.value}) failed to load: {exc}")
            continue
        if not isinstance(res, Result):
            warnings.warn(f"attnlimits: entry point {ep.name!r} is not a Result")
            continue
        out.setdefault(res.name, res)
    globals()["_DISCOVERED"] = out  # entry points are read once per process
    return {**out, **_EXTRA}
