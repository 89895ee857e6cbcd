"""The Python twins of the command line (``import attnlimits as al``).

Every command a result registers (:class:`attnlimits.symbolic.result.Command`) becomes a function
with the same parameters, validated by the same :class:`~attnlimits.symbolic.result.Param` specs,
running the same function as ``attnlimits <result> <command>``; it returns a :class:`Table`.
Bad input raises :class:`InputError` with the command line's one-line message.  The engine's
tools (``hermite``, ``verify``, ``export``, ``sweep``, ``weights``) have twins of their own here.

Nothing in this module names a result: the namespaces ``al.rmt`` and ``al.slr`` are built from the
registry, so a plug-in result gets its Python API by registering.
"""
from __future__ import annotations

import inspect
import keyword
import math
import sys
from collections.abc import Sequence
from typing import Callable

from attnlimits.symbolic.result import REQUIRED, Command, InputError, Result, discover_results

__all__ = ["InputError", "Table", "__version__", "claims", "explore", "explore_properties", "export", "figure", "hermite", "results", "run", "show", "sweep",
           "verify_claims", "weights", "result_namespace"]


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("attnlimits")
    except metadata.PackageNotFoundError:  # pragma: no cover - a bare checkout on PYTHONPATH
        return "unknown"


__version__ = _version()


def _input_error(exc: BaseException) -> InputError | None:
    """The :class:`InputError` that stands for ``exc`` at the API, or ``None`` to let ``exc`` through.

    The command line answers the same errors with one line and exit status 2 (bad activations, code a
    printer cannot generate, unusable settings, paths that cannot be read or written): here they
    become :class:`InputError` with that line as message (``raise ... from exc`` keeps the original).
    Failures of the computation itself (:class:`attnlimits.numeric.ConvergenceError`, arithmetic
    errors) are not input errors and pass unchanged."""
    if isinstance(exc, InputError):
        return None
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        if exc.strerror and where:
            text = f"{where}{exc.strerror}"
        return InputError(text)
    if isinstance(exc, ValueError) or type(exc).__name__ == "CLIError":
        return InputError(text)
    return None


def _api(fn):
    """Bad input of an API function raises :class:`InputError` (the command line's one line)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - re-raised unchanged unless it is an input error
            mapped = _input_error(exc)
            if mapped is None:
                raise
            raise mapped from exc

    return wrapper


def results() -> dict[str, Result]:
    """The registered results, name → :class:`~attnlimits.symbolic.result.Result` (entry points of
    the ``attnlimits.results`` group, plus those registered in this process)."""
    return discover_results()


# ------------------------------------------------------------------------------------------------
# tables


def _numeric(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))


class Table(Sequence):
    """The rows a command computed: one dict per point, with the parameters that made it.

    A read-only sequence of rows (``table[0]["E_test"]``, ``len(table)``, ``list(table)``), printed
    as the command line prints it, with

    - :meth:`to_frame` — a tidy :class:`pandas.DataFrame` (one row per point);
    - :meth:`plot` — one column against another, a curve per value of ``hue``, error bars from a
      ``<y>_se``/``<y>_error`` column when the table has one;
    - :attr:`rows`, :attr:`command`, :attr:`params` — the plain rows, the command's name and the
      validated parameters.
    """

    def __init__(self, rows, command: str = "", params: dict | None = None, columns: Sequence = ()):
        self._rows = [dict(r) for r in rows]
        self.command = command
        self.params = dict(params or {})
        self.columns = tuple(columns)

    @property
    def rows(self) -> list[dict]:
        """The rows as a list of plain dicts (a copy)."""
        return [dict(r) for r in self._rows]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Table(self._rows[i], self.command, self.params, self.columns)
        return self._rows[i]

    def __len__(self) -> int:
        return len(self._rows)

    def __eq__(self, other) -> bool:
        if isinstance(other, Table):
            return self._rows == other._rows
        return isinstance(other, list) and self._rows == other

    __hash__ = None

    def to_text(self, fmt: str = "table") -> str:
        """The rows as the command line prints them: ``"table"``, ``"json"`` or ``"csv"``."""
        from attnlimits.verify.cli import format_rows

        if fmt not in ("table", "json", "csv"):
            raise InputError(f"fmt must be table, json or csv, got {fmt!r}")
        return format_rows(self._rows, self.columns if fmt == "table" else (), fmt)

    def __repr__(self) -> str:
        head = f"<Table: {self.command or 'rows'}, {len(self)} row{'s' if len(self) != 1 else ''}>"
        return head + ("\n" + self.to_text() if self._rows else "")

    def to_frame(self):
        """A :class:`pandas.DataFrame`, one row per point; nested values (dicts of argmins, lists)
        stay as Python objects in their cells."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is a dependency
            raise ImportError("Table.to_frame needs pandas: pip install pandas") from None
        cols = list(dict.fromkeys(k for r in self._rows for k in r))
        return pd.DataFrame.from_records(self._rows, columns=cols)

    def _default_axes(self):
        cols = list(dict.fromkeys(k for r in self._rows for k in r))
        swept = [k for k, v in self.params.items() if isinstance(v, (list, tuple)) and len(v) > 1
                 and all(_numeric(r.get(k)) for r in self._rows)]
        x = swept[0] if swept else None
        wanted = [c for c in self.columns if c in cols] or cols
        ys = [c for c in wanted if c != x and c not in self.params and not c.endswith(("_se", "_error"))
              and all(_numeric(r.get(c)) for r in self._rows if r.get(c) is not None)
              and any(r.get(c) is not None for r in self._rows)]
        hue = next((k for k, v in self.params.items() if k != x and isinstance(v, (list, tuple)) and len(v) > 1),
                   None)
        return x, (ys[0] if ys else None), hue

    def plot(self, x: str | None = None, y: str | None = None, hue: str | None = None, ax=None,
             logx: bool | None = None, logy: bool = False):
        """Draw ``y`` against ``x`` (one curve per value of ``hue``) and return the matplotlib axes.

        Defaults: ``x`` the numeric parameter given as a list, ``y`` the first numeric output of the
        command's table, ``hue`` another list-valued parameter.  Error bars come from a
        ``<y>_se`` or ``<y>_error`` column.  ``logx`` defaults to a log axis when the ``x`` values
        span more than a factor 20.
        """
        dx, dy, dh = self._default_axes()
        x, y, hue = x or dx, y or dy, hue if hue is not None else dh
        cols = set(k for r in self._rows for k in r)
        if x is None or y is None:
            raise InputError(f"{self.command or 'table'}: give x= and y= (columns: {', '.join(sorted(cols))})")
        for what, name in (("x", x), ("y", y), ("hue", hue)):
            if name is not None and name not in cols:
                raise InputError(f"{what}={name!r} is not a column; columns: {', '.join(sorted(cols))}")
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(6, 4), layout="constrained")
        err = next((c for c in (f"{y}_se", f"{y}_error") if c in cols), None)
        groups: dict = {}
        for r in self._rows:
            if _numeric(r.get(x)) and _numeric(r.get(y)):
                groups.setdefault(r.get(hue) if hue else None, []).append(r)
        if not groups:
            raise InputError(f"no row has numbers in both {x!r} and {y!r}")
        xs_all = []
        for key, rs in groups.items():
            rs.sort(key=lambda r: r[x])
            xs = [float(r[x]) for r in rs]
            ys = [float(r[y]) for r in rs]
            xs_all += xs
            es = [float(r[err]) if err and _numeric(r.get(err)) else 0.0 for r in rs]
            label = f"{hue}={key}" if hue else None
            ax.errorbar(xs, ys, yerr=es if err else None, marker="o", ms=4, capsize=3, label=label)
        if logx is None:
            pos = [v for v in xs_all if v > 0]
            logx = len(pos) == len(xs_all) and len(pos) > 1 and max(pos) / min(pos) > 20
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        fixed = {k: v for k, v in self.params.items() if k not in (x, hue) and not isinstance(v, (list, tuple))
                 and v is not None and v is not False}
        title = self.command
        if fixed:
            title += " (" + ", ".join(f"{k}={v}" for k, v in list(fixed.items())[:6]) + ")"
        ax.set_title(title, fontsize=9)
        if hue:
            ax.legend(fontsize=8, loc="best")
        return ax


# ------------------------------------------------------------------------------------------------
# the commands of the registered results


def _py_name(name: str) -> str:
    n = name.replace("-", "_")
    return n + "_" if keyword.iskeyword(n) else n


def _progress_fn(progress) -> Callable:
    if callable(progress):
        return progress
    if progress:
        return lambda msg: print(msg, file=sys.stderr, flush=True) if msg else None
    return lambda msg: None


def _apply_threads(threads):
    from attnlimits.numeric.threads import apply_threads, resolve_threads

    return apply_threads(resolve_threads(threads))


@_api
def _run_command(result: Result, cmd: Command, values: dict, *, progress=True, threads=None) -> Table:
    params = cmd.parse(values)
    if threads is not None:
        _apply_threads(threads)
    rows = list(cmd.function()(params, progress=_progress_fn(progress)))  # a list, or rows yielded one by one
    label = f"{result.name} {cmd.name}".strip()
    return Table(rows, command=label, params=params, columns=cmd.table)


def run(result: str, command: str = "", /, *, progress=True, threads=None, **params) -> Table:
    """Run ``attnlimits RESULT [COMMAND] --param value ...`` in this process and return its :class:`Table`.

    ``params`` are the command's parameters by name (underscores, as in ``--per-length`` →
    ``per_length``), as Python values or command-line text; lists for list parameters.
    ``progress``: ``True`` prints progress to stderr, ``False`` is silent, a callable receives each
    message.  ``threads``: apply this thread setting first (``None`` leaves threads as they are).

    >>> import attnlimits as al
    >>> table = al.run("slr", "population", model="spiked", nu=2, L=3, activation="linear_centred",
    ...                progress=False)
    >>> round(table[0]["risk"], 12)                        # (L - 1)/(L + nu)
    0.4
    """
    reg = results()
    if result not in reg:
        raise InputError(f"no result {result!r}; registered: {', '.join(sorted(reg))}")
    res = reg[result]
    cmd = res.command(command.replace("_", "-") if command not in {c.name for c in res.commands} else command)
    return _run_command(res, cmd, params, progress=progress, threads=threads)


def _signature(cmd: Command) -> inspect.Signature:
    ps = []
    for p in cmd.parameters:
        default = inspect.Parameter.empty if p.default is REQUIRED else p.default
        ps.append(inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=default))
    ps.append(inspect.Parameter("progress", inspect.Parameter.KEYWORD_ONLY, default=True))
    ps.append(inspect.Parameter("threads", inspect.Parameter.KEYWORD_ONLY, default=None))
    return inspect.Signature(ps, return_annotation="attnlimits.Table")


def _doc(result: Result, cmd: Command) -> str:
    line = f"attnlimits {result.name} {cmd.name}".strip()
    lines = [cmd.help.rstrip(".") + ".", "", f"The Python twin of ``{line}``; returns a :class:`attnlimits.Table`.",
             "", "Parameters", "----------"]
    for p in cmd.parameters:
        kind = p.kind + (f" of {{{', '.join(map(str, p.choices))}}}" if p.choices else "")
        default = "required" if p.required else f"default {p.default!r}"
        lines.append(f"{p.name} : {kind}, {default}")
        if p.help:
            lines.append(f"    {p.help}")
    lines += ["progress : bool or callable, default True", "    progress messages (stderr, silent, or a callable)",
              "threads : int, optional", "    thread setting applied first (the command line's --threads)"]
    if cmd.examples:
        lines += ["", "Command-line examples", "---------------------", *(f"    {e}" for e in cmd.examples)]
    return "\n".join(lines)


class _CommandFunction:
    """One command of a result as a Python function (keyword arguments = the command's parameters)."""

    def __init__(self, result: Result, cmd: Command):
        self._result, self._cmd = result, cmd
        self.__name__ = _py_name(cmd.name or result.name)
        self.__qualname__ = f"{result.name}.{self.__name__}" if cmd.name else result.name
        self.__doc__ = _doc(result, cmd)
        self.__signature__ = _signature(cmd)

    def __call__(self, *, progress=True, threads=None, **params) -> Table:
        return _run_command(self._result, self._cmd, params, progress=progress, threads=threads)

    def __repr__(self) -> str:
        return f"<attnlimits command {self._result.name} {self._cmd.name}>".replace("  ", " ").replace(" >", ">")


class ResultNamespace:
    """A registered result's commands as functions: ``al.slr.replica(...)``; a result whose command
    is the result itself is callable (``al.rmt(...)``)."""

    def __init__(self, result: Result):
        self._result = result
        self.name = result.name
        self.title = result.title
        self.references = result.references
        for cmd in result.commands:
            if cmd.name:
                setattr(self, _py_name(cmd.name), _CommandFunction(result, cmd))
        self.__doc__ = f"{result.title}.\n\nCommands: " + ", ".join(
            _py_name(c.name) if c.name else "(call the namespace)" for c in result.commands)
        if any(c.name == "" for c in result.commands):
            self.__doc__ += "\n\n" + _doc(result, result.command(""))

    @property
    def commands(self) -> list[str]:
        """The Python names of the commands."""
        return [_py_name(c.name) for c in self._result.commands if c.name]

    def __call__(self, *, progress=True, threads=None, **params) -> Table:
        if not any(c.name == "" for c in self._result.commands):
            raise InputError(f"{self.name} has commands {', '.join(self.commands)}: call one, e.g. "
                             f"attnlimits.{self.name}.{self.commands[0]}(...)")
        return _run_command(self._result, self._result.command(""), params, progress=progress, threads=threads)

    @property
    def __signature__(self):
        if any(c.name == "" for c in self._result.commands):
            return _signature(self._result.command(""))
        return inspect.Signature()

    def __repr__(self) -> str:
        cmds = ", ".join(self.commands) or "(callable)"
        return f"<attnlimits result {self.name!r}: {self.title}; commands: {cmds}>"


_NAMESPACES: dict[str, ResultNamespace] = {}


def result_namespace(name: str) -> ResultNamespace | None:
    """The namespace of the result called ``name`` (``None`` when no such result is registered)."""
    reg = results()
    if name not in reg:
        return None
    ns = _NAMESPACES.get(name)
    if ns is None or ns._result is not reg[name]:
        ns = _NAMESPACES[name] = ResultNamespace(reg[name])
    return ns


# ------------------------------------------------------------------------------------------------
# the engine's tools


@_api
def hermite(activation: str, dps: int = 30):
    """Hermite data of a centred activation (``attnlimits hermite``): a0, a1, a2, ν, b², Parseval.

    Returns :class:`attnlimits.symbolic.hermite.HermiteData` (mpmath numbers at ``dps`` digits).

    >>> import attnlimits as al
    >>> h = al.hermite("relu", dps=20)
    >>> float(h.a1)
    0.5
    """
    if not isinstance(dps, int) or isinstance(dps, bool) or not 5 <= dps <= 500:
        raise InputError(f"dps must be an integer between 5 and 500, got {dps!r}")
    activation = str(activation)
    if len(activation) > 500:
        raise InputError(f"activation is too long ({len(activation)} characters; at most 500)")
    from attnlimits.symbolic.hermite import hermite_coefficients

    return hermite_coefficients(activation, dps=dps)


def claims(names: Sequence[str] = (), tags: Sequence[str] = ()) -> list:
    """The registered claims (``attnlimits verify --list``), selected by name and tag."""
    from attnlimits.verify.claims import select

    if isinstance(names, str):
        names = [names]
    if isinstance(tags, str):
        tags = [tags]
    try:
        return select(list(names), list(tags))
    except KeyError as exc:
        raise InputError(exc.args[0]) from None


class VerifyRun(Sequence):
    """The claim results of one :func:`verify_claims` run (a sequence of
    :class:`attnlimits.verify.claims.base.ClaimResult`), with ``passed``, ``to_frame()`` (one row per
    check) and the ``report`` folder when one was written."""

    def __init__(self, results, report=None, meta=None):
        self._results = list(results)
        self.report = report
        self.meta = dict(meta or {})

    def __getitem__(self, i):
        return self._results[i]

    def __len__(self):
        return len(self._results)

    @property
    def passed(self) -> bool:
        """True when no claim failed (discrepancies are reported, not failures)."""
        return not any(r.verdict == "fail" for r in self._results)

    def to_frame(self):
        """One row per check: claim, check, theory, value, se, threshold, passed, verdict."""
        import pandas as pd

        from attnlimits.verify.report import check_dict

        rows = []
        for r in self._results:
            for c in r.checks:
                rows.append({"claim": getattr(r.claim, "name", r.claim), "verdict": r.verdict, **check_dict(c)})
        return pd.DataFrame.from_records(rows)

    def __repr__(self):
        from attnlimits.verify.report import format_table

        return format_table(self._results)


@_api
def verify_claims(names: Sequence[str] = (), *, tags: Sequence[str] = (), mode: str = "quick", device: str = "auto",
                  seed: int = 0, level: float | None = None, out=None, cache=None, progress=True) -> VerifyRun:
    """Run claims against Monte Carlo (``attnlimits verify``) and return a :class:`VerifyRun`.

    ``mode``: ``"quick"`` or ``"full"``; ``level``: the family-wise error level of the run (Holm,
    default :data:`attnlimits.verify.comparison.LEVEL`, 1 %); ``out``: a report folder to write
    (``None``: none); ``cache``: the ``--cache`` folder.  The command line's ``attnlimits verify``
    is the same run.
    """
    import time

    from attnlimits.verify.claims import Context
    from attnlimits.verify.comparison import LEVEL

    if mode not in ("quick", "full"):
        raise InputError(f"mode must be quick or full, got {mode!r}")
    level = LEVEL if level is None else float(level)
    if not 0 < level < 1:
        raise InputError(f"level must lie strictly between 0 and 1, got {level}")
    from attnlimits.verify.cli import CLIError, check_device, check_out_dir

    try:
        check_device(device)
        if out is not None:
            check_out_dir(out, subdirs=("plots",), files=("report.md", "results.json", "results.csv"))
    except CLIError as exc:
        raise InputError(str(exc)) from None
    from attnlimits.verify.torch_device import resolve_device

    try:
        dev = str(resolve_device(device))
    except (RuntimeError, ValueError) as exc:
        raise InputError(str(exc)) from None
    selected = claims(names, tags)
    t0 = time.perf_counter()
    say = _progress_fn(progress)
    try:
        ctx = Context(mode, device=dev, seed=int(seed), progress=say, cache_dir=cache)
    except ValueError as exc:
        raise InputError(f"cache: {exc}") from None
    import contextlib

    from attnlimits.verify.outputs import OutputLock

    with OutputLock(out, "attnlimits.verify_claims", option="out") if out is not None else contextlib.nullcontext():
        return _verify_claims_run(selected, ctx, level, mode, dev, seed, t0, out)


def _verify_claims_run(selected, ctx, level, mode, dev, seed, t0, out):
    import time

    from attnlimits.verify.claims import citation, run_claims

    res = run_claims(selected, ctx, level=level)
    meta = {"mode": mode, "device": dev, "seed": int(seed), "level": level,
            "elapsed_s": round(time.perf_counter() - t0, 1),
            "command": "attnlimits.verify_claims", "references": citation(selected)}
    path = None
    if out is not None:
        from attnlimits.verify.report import write_report

        path = write_report(res, out, meta=meta)
    return VerifyRun(res, report=path, meta=meta)


@_api
def figure(name: str, out="attnlimits-figures", *, full: bool = False, seed: int = 0, device: str = "auto",
           progress=True):
    """Draw a figure panel of the papers (``attnlimits figure NAME``); return a :class:`Table` of
    its plotted points (theory and simulation), the PNG path in ``table.params["png"]``."""
    from attnlimits.verify.cli import check_device, check_out_dir
    from attnlimits.verify.figures import make_figure

    check_device(device)  # before any work, as the command line does
    check_out_dir(out)
    png, rows = make_figure(name, out, mode="full" if full else "quick", seed=int(seed), device=device,
                            progress=_progress_fn(progress))
    return Table(rows, command=f"figure {name}", params={"name": name, "png": str(png), "full": full, "seed": seed})


@_api
def explore(properties: Sequence[str] = (), *, budget: int = 100, seed: int = 0, out="attnlimits-explore",
            time_limit: float | None = None, level: float | None = None, csv: bool = False, fresh: bool = False,
            progress=True) -> Table:
    """Property-based verification (``attnlimits explore``): search each named property's domain for
    where its theory fails; return a :class:`Table` of every point tried (``table.params`` holds the
    statuses, the counterexamples and the files written).  A points table already in ``out`` is added
    to (``fresh=True``: a new one).  See docs/explore.md.

    >>> import attnlimits as al
    >>> "slr-bo-monotone" in al.explore_properties()
    True
    """
    from attnlimits.verify.comparison import LEVEL
    from attnlimits.verify.explore import explore as _explore

    res = _explore(list(properties), budget=budget, seed=seed, out=out, time_limit=time_limit,
                   level=LEVEL if level is None else level, csv=csv, fresh=fresh, progress=_progress_fn(progress))
    params = {"budget": budget, "seed": seed, "files": res.files, "failed": res.failed,
              "status": {r.prop.name: r.status for r in res.runs},
              "counterexamples": {r.prop.name: r.counterexample for r in res.runs if r.counterexample}}
    return Table(res.rows, command="explore", params=params)


@_api
def show(result: str, item: str | None = None, **options):
    """The equations of ``result``'s ``item`` as the solver uses them (``attnlimits show``): a
    :class:`attnlimits.symbolic.render.Formula` — LaTeX in Jupyter, ``to_text()``, ``to_latex()``,
    ``to_json()``, ``legend()``; ``subs``/``xreplace`` take names as strings (``{"c": 0.5}``) and
    refuse unknown ones, ``inline()`` substitutes the definitions.  Without ``item``: the names of the items.
    ``options``: ``activation``, ``L``, ``model``, ``variant``, ``loss`` where the item takes them.

    >>> import attnlimits as al
    >>> "ridge" in al.show("rmt")
    True
    >>> f = al.show("rmt", "hermite", activation="relu")
    >>> f.equations[0][1]
    Max(0, t) - sqrt(2)/(2*sqrt(pi))
    """
    from attnlimits.verify.cli.show import build_item, result_named

    if item is None:
        return [it.name for it in result_named(result).item_list()]
    return build_item(result, item, **options)[0]


def explore_properties() -> dict:
    """The declared properties of every registered result, by name (``attnlimits explore --list``)."""
    from attnlimits.verify.explore import properties

    return properties()


@_api
def export(result: str, output, **params) -> str:
    """Write a standalone solver of ``result`` to ``output`` (``attnlimits export RESULT``); return
    the command line's one-line summary."""
    from attnlimits.symbolic.result import resolve

    reg = results()
    if result not in reg or reg[result].export is None:
        known = ", ".join(sorted(n for n, r in reg.items() if r.export))
        raise InputError(f"no exporter for {result!r}; results with one: {known}")
    res = reg[result]
    known = {p.name for p in res.export_parameters}
    unknown = sorted(set(params) - known)
    if unknown:
        raise InputError(f"unknown parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    values = {p.name: p.parse(params.get(p.name)) for p in res.export_parameters}
    if not str(output).strip():
        raise InputError("output must name a file")
    from attnlimits.verify.outputs import check_output_file

    check_output_file(output, option="output", suffixes=())  # before the solver is generated (a real probe)
    return resolve(res.export)(values, str(output))


@_api
def sweep(grid, out, *, workers: int | None = None, scheduler: str | None = None, force: bool = False,
          retry_failed: bool = False, reuse_stale: bool = False, csv: bool = False, progress: bool = True):
    """Run a grid file (``attnlimits sweep GRID.toml --out DIR``) and return its summary; the
    results table is then in ``out`` (:class:`attnlimits.verify.sweep.table.ResultsTable`)."""
    from attnlimits.verify.sweep.grid import load_grid
    from attnlimits.verify.sweep.runner import run_sweep

    if workers is not None and workers < 0:
        raise InputError(f"workers must be >= 0, got {workers}")
    return run_sweep(load_grid(grid), out, scheduler=scheduler, workers=workers, force=force,
                     retry_failed=retry_failed, reuse_stale=reuse_stale, progress=progress, csv=csv)


@_api
def weights(checkpoint, *, ranks: Sequence[int] | None = None, layers: Sequence[int] | None = None,
            heads: int | None = None, layout: str = "auto", fold_layernorm: bool = False, per_head: bool = True,
            progress=True):
    """Diagnostics of ``W_K^T W_Q`` of a local checkpoint (``attnlimits weights``); returns the
    report object (``format_table()``, ``write(folder)``)."""
    from attnlimits.verify.weights import DEFAULT_RANKS, CheckpointError, analyze_checkpoint

    if heads is not None and heads < 1:
        raise InputError(f"heads must be a positive integer, got {heads}")
    if layout not in ("auto", "bert", "gpt2"):
        raise InputError(f"layout must be auto, bert or gpt2, got {layout!r}")
    try:
        return analyze_checkpoint(checkpoint, ranks=list(ranks or DEFAULT_RANKS), fold_layernorm=fold_layernorm,
                                  per_head=per_head, layout=layout, n_heads=heads,
                                  layers=None if layers is None else list(layers), progress=_progress_fn(progress))
    except CheckpointError as exc:
        raise InputError(str(exc)) from None


def __getattr__(name):  # pragma: no cover - module-level access to results: attnlimits._api.slr
    ns = result_namespace(name)
    if ns is None:
        raise AttributeError(name)
    return ns

