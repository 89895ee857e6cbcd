"""Grid files: which command to sweep, its fixed parameters and its axes (TOML).

A grid file names one registered command (:mod:`attnlimits.symbolic.result`), the parameters that stay
fixed, and the axes that vary::

    # learning curves of the spiked model, three noise levels, 20 sample ratios each
    command = "slr population"        # "<result> [<command>]", any registered result
    mode = "product"                  # or "zip" (all axes zipped; equal lengths)
    # zip = [["alpha", "lam"]]        # zip some axes together inside the product
    # together = ["alpha"]            # run these axes in one chain (default: Command.expensive)
    # merge = false                   # list-valued together-axes: one call per chain (default true)
    # code_version = "v2"             # pin/bump the code version in the point keys

    [fixed]
    model = "spiked"
    L = 3

    [axes]
    nu = [0.5, 1, 2]                                  # a list
    alpha = { start = 0.1, stop = 2.0, num = 20 }     # linear, both ends included
    lam = { start = 1e-3, stop = 1, num = 4, log = true }   # logarithmic (geometric)
    seed = { start = 0, stop = 9, step = 1 }          # arithmetic, stop included when hit

The grid is validated before anything runs: the command must be registered, every name must
be a :class:`attnlimits.symbolic.result.Param` of it, every value must pass :meth:`Param.parse`, and every
point must pass :meth:`Command.parse`.  A problem is one line ``FILE:LINE: message`` raised as
:class:`attnlimits.symbolic.result.InputError` (the CLI prints it and exits with status 2).

Points are ordered as the axes are written (the first axis varies slowest).  Points that differ
only along the *together* axes (``Command.expensive`` unless the file says otherwise) form one
:meth:`Grid.chains` chain, run in order on one worker, so that the work they share (a compiled
solver, a continuation along α) survives distribution.  When every together-axis is a list-valued
parameter (``floats``, ``strs``, ... such as ``rmt --gamma`` or ``slr population --activation``)
and each axis value is one value, the chain is *merged* (:attr:`Grid.merge`): the command is
called once with the lists of the chain's values, as on the command line, and its rows are
assigned back to the points by those parameters (falling back to one call per point when the
rows do not say which point they belong to, or when the call fails).
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnlimits.symbolic.result import REQUIRED, Command, InputError, Result, discover_results

from .worker import canonical_params

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["Grid", "load_grid", "parse_grid", "find_command", "point_key", "point_identity", "code_version_of",
           "source_fingerprint", "canonical_params"]

_TOP_KEYS = ("command", "mode", "zip", "together", "merge", "code_version", "fixed", "axes", "description")
_RANGE_KEYS = {"start", "stop", "num", "step", "log"}
_MAX_POINTS = 1_000_000


# ---------------------------------------------------------------------------------------------
# line numbers: tomllib has none, so find where each key is written
# ---------------------------------------------------------------------------------------------
_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\s*(#.*)?$")
_KEY = re.compile(r"""^\s*((?:[A-Za-z0-9_\-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_\-]+|"[^"]*"|'[^']*'))*)\s*=""")


def _unquote(part: str) -> str:
    part = part.strip()
    if len(part) >= 2 and part[0] == part[-1] and part[0] in "\"'":
        return part[1:-1]
    return part


class _Lines:
    """Maps ``(table, key)`` to the 1-based line where the key is assigned."""

    def __init__(self, text: str):
        self.where: dict[tuple[str, str], int] = {}
        self.tables: dict[str, int] = {}
        table = ""
        depth = 0  # inside a multi-line array: keys there are values, not assignments
        for no, line in enumerate(text.splitlines(), start=1):
            stripped = line.split("#", 1)[0] if '"' not in line and "'" not in line else line
            if depth == 0:
                m = _HEADER.match(line)
                if m and not line.lstrip().startswith("[["):
                    table = ".".join(_unquote(p) for p in m.group(1).split("."))
                    self.tables.setdefault(table, no)
                    continue
                m = _KEY.match(line)
                if m:
                    parts = [_unquote(p) for p in m.group(1).split(".")]
                    prefix = table
                    for p in parts[:-1]:
                        prefix = f"{prefix}.{p}" if prefix else p
                        self.tables.setdefault(prefix, no)
                    self.where.setdefault((prefix, parts[-1]), no)
            depth += stripped.count("[") - stripped.count("]")
            depth = max(depth, 0)

    def line(self, table: str, key: str | None = None) -> int | None:
        if key is not None and (table, key) in self.where:
            return self.where[(table, key)]
        return self.tables.get(table)


# ---------------------------------------------------------------------------------------------
# commands, keys, code versions
# ---------------------------------------------------------------------------------------------
def registry() -> dict[str, Result]:
    """The registered results (:func:`attnlimits.symbolic.result.discover_results`)."""
    return discover_results()


def find_command(name: str, results: dict[str, Result] | None = None) -> tuple[Result, Command]:
    """The registered ``(Result, Command)`` called ``name`` (``"rmt"``, ``"slr population"``)."""
    results = registry() if results is None else results
    words = str(name).split()
    known = sorted(" ".join(w for w in (r.name, c.name) if w) for r in results.values() for c in r.commands)
    if not words or words[0] not in results:
        raise InputError(f"unknown command {name!r}; known: {', '.join(known) or '(none registered)'}")
    res = results[words[0]]
    sub = " ".join(words[1:])
    for c in res.commands:
        if c.name == sub:
            return res, c
    raise InputError(f"unknown command {name!r}; known: {', '.join(known)}")


@functools.lru_cache(maxsize=None)
def _distribution_of(top: str) -> str:
    from importlib import metadata

    return (metadata.packages_distributions().get(top) or ["attnlimits"])[0]


@functools.lru_cache(maxsize=None)
def _package_fingerprint(top: str) -> str:
    """SHA-256 (16 hex digits) of the ``.py`` files of the top-level package ``top``, found
    without importing it; ``""`` when it cannot be located."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return ""
    if spec is None:
        return ""
    roots = list(spec.submodule_search_locations or []) or ([spec.origin] if spec.origin else [])
    h = hashlib.sha256()
    for root in roots:
        root = Path(root)
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
        for f in files:
            if "__pycache__" in f.parts:
                continue
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def source_fingerprint(command: Command) -> str:
    """The fingerprint of the code that computes ``command``: the attnlimits source fingerprint
    (the one ``verify --cache`` keys on, :func:`attnlimits.verify.claims.base.code_fingerprint`),
    combined with the source of the plug-in package providing ``command.run`` when that is not
    attnlimits.  Any edit of the source, also in an editable install, changes it."""
    from attnlimits.verify.claims.base import code_fingerprint

    fp = code_fingerprint()
    top = command.run.partition(":")[0].split(".")[0]
    if top != "attnlimits":
        extra = _package_fingerprint(top)
        fp = hashlib.sha256(f"{fp}|{top}:{extra}".encode()).hexdigest()[:16]
    return fp


def code_version_of(command: Command) -> str:
    """``"<distribution>==<version>+src.<fingerprint>"`` of the code that provides ``command.run``.

    The distribution is looked up from the top-level module of ``command.run`` (without importing
    it; ``attnlimits`` when it belongs to no installed distribution); the fingerprint is
    :func:`source_fingerprint`, so the points of a sweep are keyed on the code itself, not only on
    the package version: after an edit, a rerun finds the old points *stale* and recomputes them
    (``--reuse-stale`` keeps them).  A grid file's ``code_version = "..."`` pins the version instead.
    """
    from importlib import metadata

    top = command.run.partition(":")[0].split(".")[0]
    try:
        dist = _distribution_of(top)
        version = f"{dist}=={metadata.version(dist)}"
    except Exception:  # noqa: BLE001 - provenance only; never stop a sweep for it
        try:
            version = f"attnlimits=={metadata.version('attnlimits')}"
        except Exception:  # noqa: BLE001
            version = "attnlimits==unknown"
    try:
        return f"{version}+src.{source_fingerprint(command)}"
    except OSError:  # an unreadable source file: the version alone
        return version


def point_identity(command_name: str, params: dict) -> str:
    """What a point *is*, whatever code computed it: command and canonical parameters (the
    ``command`` and ``params_json`` columns of the table)."""
    return json.dumps([command_name, canonical_params(params)])


def point_key(command_name: str, params: dict, code_version: str) -> str:
    """The point key: the first 20 hex digits of SHA-256 of command, parameters and code version.

    ``params`` are the *parsed* parameters (defaults filled in), so spelling a default out in the
    grid does not change the key.
    """
    text = json.dumps([command_name, canonical_params(params), code_version])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


# ---------------------------------------------------------------------------------------------
# the grid
# ---------------------------------------------------------------------------------------------
@dataclass
class Grid:
    """A validated grid: the command and the list of its points.

    Attributes
    ----------
    command_name : str       e.g. ``"slr population"``
    result, command          the registered :class:`Result` and :class:`Command`
    fixed : dict             raw fixed values (as written)
    axes : dict              axis name -> list of raw values (ranges expanded)
    points : list[dict]      parsed ``params`` of every point (defaults filled in)
    keys : list[str]         :func:`point_key` of every point
    together : tuple         axes kept in one chain (see :meth:`chains`)
    merge : bool             run each chain as one call (list-valued together-axes; module docstring)
    code_version : str       the code version in the keys (:func:`code_version_of` by default)
    """

    command_name: str
    result: Result
    command: Command
    fixed: dict
    axes: dict
    points: list
    keys: list
    together: tuple = ()
    merge: bool = False
    code_version: str = ""
    mode: str = "product"
    text: str = ""
    source: str = "<grid>"
    raw_points: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.points)

    @property
    def parameter_names(self) -> list[str]:
        return [p.name for p in self.command.parameters]

    def chains(self, indices=None) -> list[list[int]]:
        """Indices of points grouped into chains: equal in every parameter but the *together* axes.

        Each chain keeps grid order (the order the together-axes were written in, e.g. α
        increasing for a continuation).  Without together-axes every point is its own chain.
        """
        indices = range(len(self.points)) if indices is None else indices
        if not self.together:
            return [[i] for i in indices]
        groups: dict[str, list[int]] = {}
        for i in indices:
            rest = {k: v for k, v in self.points[i].items() if k not in self.together}
            groups.setdefault(canonical_params(rest), []).append(i)
        return list(groups.values())


    def check_outputs(self, out) -> None:
        """Refuse a point whose output-file parameter (:attr:`Param.writes`, e.g. ``slr train
        --log/--plot``) names a path outside the output folder ``out`` — absolute elsewhere, or
        climbing out with ``..`` — as one line ``FILE:LINE: ...``; relative paths are taken inside
        ``out`` when the point runs."""
        writes = [p.name for p in self.command.parameters if p.writes]
        if not writes:
            return
        root = Path(out).resolve()
        lines = _Lines(self.text) if self.text else None
        for raw in self.raw_points or self.points:
            for name in writes:
                v = raw.get(name)
                if not isinstance(v, str) or not v.strip():
                    continue
                target = (Path(v) if Path(v).is_absolute() else root / v).resolve()
                if target != root and root not in target.parents:
                    table = "fixed" if name in self.fixed else "axes"
                    line = lines.line(table, name) if lines else None
                    raise _fmt(self.source, line, f"{name} = {v!r} writes outside the output folder {out}; "
                                                  f"give a path inside it (relative paths are taken inside it)")


def _fmt(source: str, line: int | None, msg: str) -> InputError:
    return InputError(f"{source}:{line}: {msg}" if line else f"{source}: {msg}")


def _clean_float(v: float) -> float:
    """``v`` rounded to 12 significant digits, so that ranges give 0.3 and not 0.30000000000000004."""
    return float(f"{v:.12g}")


def _expand_range(spec: dict, err) -> list:
    unknown = set(spec) - _RANGE_KEYS
    if unknown:
        raise err(f"unknown range key(s) {', '.join(sorted(unknown))}; a range is "
                  "{start, stop, num [, log]} or {start, stop, step}")
    if "start" not in spec or "stop" not in spec:
        raise err("a range needs start and stop, and num or step")
    start, stop = spec["start"], spec["stop"]
    for what, v in (("start", start), ("stop", stop)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise err(f"range {what} must be a finite number, got {v!r}")
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise err(f"range log must be true or false, got {log!r}")
    if ("num" in spec) == ("step" in spec):
        raise err("a range needs exactly one of num and step")
    if "num" in spec:
        num = spec["num"]
        if isinstance(num, bool) or not isinstance(num, int) or num < 1:
            raise err(f"range num must be an integer >= 1, got {num!r}")
        if num > _MAX_POINTS:
            raise err(f"range num {num} is more than {_MAX_POINTS}")
        if log:
            if not (start > 0 and stop > 0):
                raise err(f"a log range needs start > 0 and stop > 0, got {start!r}, {stop!r}")
            if num == 1:
                return [_clean_float(float(start))]
            a, b = math.log(start), math.log(stop)
            vals = [math.exp(a + (b - a) * i / (num - 1)) for i in range(num)]
            vals[0], vals[-1] = float(start), float(stop)
            return [_clean_float(v) for v in vals]
        if num == 1:
            return [start]
        if isinstance(start, int) and isinstance(stop, int) and (stop - start) % (num - 1) == 0:
            d = (stop - start) // (num - 1)
            return [start + d * i for i in range(num)]
        return [_clean_float(start + (stop - start) * i / (num - 1)) for i in range(num)]
    if log:
        raise err("a log range takes num, not step")
    step = spec["step"]
    if isinstance(step, bool) or not isinstance(step, (int, float)) or not math.isfinite(step) or step == 0:
        raise err(f"range step must be a finite nonzero number, got {step!r}")
    if (stop - start) / step < 0:
        raise err(f"range step {step!r} does not lead from {start!r} to {stop!r}")
    n = int(math.floor((stop - start) / step * (1 + 1e-12) + 1e-9)) + 1
    if n > _MAX_POINTS:
        raise err(f"range has {n} points, more than {_MAX_POINTS}")
    if all(isinstance(v, int) for v in (start, stop, step)):
        return [start + step * i for i in range(n)]
    return [_clean_float(start + step * i) for i in range(n)]


def _validate_value(p, parsed, checked: dict) -> None:
    """Run ``p.validator`` (see :class:`~attnlimits.symbolic.result.Param`) on every item of a parsed
    value, once per distinct item; its refusal becomes an :class:`InputError` of one line."""
    if not p.validator:
        return
    from attnlimits.symbolic.result import resolve

    for item in parsed if isinstance(parsed, list) else [parsed]:
        if item is None or (p.validator, repr(item)) in checked:
            continue
        try:
            resolve(p.validator)(item)
        except (InputError, ValueError, KeyError, TypeError) as exc:
            msg = str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc).strip().splitlines()
            raise InputError(msg[0] if msg else f"{item!r} is refused") from None
        checked[(p.validator, repr(item))] = True


def parse_grid(text: str, source: str = "<grid>", results: dict[str, Result] | None = None) -> Grid:
    """Parse and validate grid-file ``text`` (see the module docstring for the format).

    Raises
    ------
    InputError
        one line ``SOURCE:LINE: message`` for a TOML syntax error, an unknown command, key,
        parameter or range key, a bad value, a missing required parameter, or unequal zipped axes.
    """
    lines = _Lines(text)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"at line (\d+)", msg)
        raise _fmt(source, int(m.group(1)) if m else None, f"invalid TOML: {msg}") from None

    def err(msg, table="", key=None):
        return _fmt(source, lines.line(table, key), msg)

    for k in doc:
        if k not in _TOP_KEYS:
            raise err(f"unknown key {k!r}; a grid file has {', '.join(_TOP_KEYS)}", "", k)
    if "command" not in doc:
        raise _fmt(source, None, "no command: write e.g. command = \"slr population\" at the top")
    if not isinstance(doc["command"], str):
        raise err(f"command must be a string, got {doc['command']!r}", "", "command")
    try:
        result, command = find_command(doc["command"], results)
    except InputError as exc:
        raise err(str(exc), "", "command") from None
    cmd_name = " ".join(w for w in (result.name, command.name) if w)
    params = {p.name: p for p in command.parameters}

    fixed = doc.get("fixed", {})
    axes_in = doc.get("axes", {})
    for tname, tbl in (("fixed", fixed), ("axes", axes_in)):
        if not isinstance(tbl, dict):
            raise err(f"{tname} must be a table ([{tname}])", "", tname)
    for tname, tbl in (("fixed", fixed), ("axes", axes_in)):
        for k in tbl:
            if k not in params:
                raise err(f"unknown parameter {k!r} of {cmd_name}; known: {', '.join(params)}", tname, k)
    for k in fixed:
        if k in axes_in:
            raise err(f"parameter {k!r} is both fixed and an axis", "axes", k)

    listy = ("floats", "ints", "strs", "choices")
    checked: dict = {}  # (validator, value) already accepted
    for k, v in fixed.items():
        p = params[k]
        if isinstance(v, dict):
            raise err(f"{k}: a range belongs under [axes], not [fixed]", "fixed", k)
        if isinstance(v, list) and p.kind not in listy:
            raise err(f"{k} takes one value; to sweep it, put the list under [axes]", "fixed", k)
        try:
            _validate_value(p, p.parse(v), checked)
        except InputError as exc:
            raise err(f"{k}: {exc}", "fixed", k) from None

    axes: dict[str, list] = {}
    for k, spec in axes_in.items():
        p = params[k]
        def aerr(msg, k=k):
            return err(f"axis {k}: {msg}", "axes", k)
        if isinstance(spec, dict):
            values = _expand_range(spec, aerr)
        elif isinstance(spec, list):
            values = list(spec)
        else:
            raise aerr(f"give a list [..] or a range {{start, stop, num}}, got {spec!r}")
        if not values:
            raise aerr("is empty")
        for v in values:
            if isinstance(v, list) and p.kind not in listy:
                raise aerr(f"takes one value per point, got the list {v!r}")
            try:
                _validate_value(p, p.parse(v), checked)
            except InputError as exc:
                raise aerr(str(exc)) from None
        axes[k] = values

    mode = doc.get("mode", "product")
    if mode not in ("product", "zip"):
        raise err(f"mode must be \"product\" or \"zip\", got {mode!r}", "", "mode")
    zips = doc.get("zip", [])
    if mode == "zip":
        if zips:
            raise err("zip groups are for mode = \"product\"; mode = \"zip\" zips every axis", "", "zip")
        zips = [list(axes)] if axes else []
    if not isinstance(zips, list) or not all(isinstance(g, list) and all(isinstance(a, str) for a in g) for g in zips):
        raise err("zip must be a list of lists of axis names, e.g. zip = [[\"alpha\", \"lam\"]]", "", "zip")
    seen: set[str] = set()
    for g in zips:
        for a in g:
            if a not in axes:
                raise err(f"zip names {a!r}, which is not an axis; axes: {', '.join(axes) or '(none)'}", "", "zip" if mode == "product" else "mode")
            if a in seen:
                raise err(f"axis {a!r} is in more than one zip group", "", "zip")
            seen.add(a)
        lens = {a: len(axes[a]) for a in g}
        if len(set(lens.values())) > 1:
            what = ", ".join(f"{a} has {n}" for a, n in lens.items())
            raise err(f"zipped axes need equal lengths: {what}", "", "zip" if mode == "product" else "mode")

    together = doc.get("together", None)
    if together is None:
        together = tuple(a for a in command.expensive if a in axes)
    else:
        if not isinstance(together, list) or not all(isinstance(a, str) for a in together):
            raise err("together must be a list of axis names", "", "together")
        for a in together:
            if a not in axes:
                raise err(f"together names {a!r}, which is not an axis; axes: {', '.join(axes) or '(none)'}", "", "together")
        together = tuple(together)

    merge_opt = doc.get("merge", True)
    if not isinstance(merge_opt, bool):
        raise err(f"merge must be true or false, got {merge_opt!r}", "", "merge")
    merge = bool(merge_opt and together
                 and all(params[a].kind in listy and all(not isinstance(v, list) for v in axes[a]) for a in together))

    cv = doc.get("code_version")
    if cv is not None and not isinstance(cv, str):
        raise err(f"code_version must be a string, got {cv!r}", "", "code_version")
    code_version = cv or code_version_of(command)

    # factors of the product: each zip group is one factor, every other axis its own
    grouped = {a for g in zips for a in g}
    factors: list[list[dict]] = []
    for a in axes:
        if a in grouped:
            g = next(g for g in zips if a in g)
            if a == g[0]:
                factors.append([dict(zip(g, vals)) for vals in zip(*(axes[b] for b in g))])
        else:
            factors.append([{a: v} for v in axes[a]])
    n = math.prod(len(f) for f in factors)
    if n > _MAX_POINTS:
        raise err(f"the grid has {n} points, more than {_MAX_POINTS}", "axes")

    raw_points, points, keys = [], [], []
    for combo in itertools.product(*factors):
        raw = dict(fixed)
        for part in combo:
            raw.update(part)
        try:
            parsed = command.parse(raw)
        except InputError as exc:
            missing = [p.name for p in command.parameters if p.default is REQUIRED and p.name not in raw]
            if missing:
                raise err(f"{cmd_name} needs {', '.join(missing)}: give it under [fixed] or [axes]",
                          "", "command") from None
            raise err(f"point {raw}: {exc}", "axes") from None
        raw_points.append(raw)
        points.append(parsed)
        keys.append(point_key(cmd_name, parsed, code_version))
    first: dict[str, int] = {}
    for i, k in enumerate(keys):  # one pass (a 10^6-point grid checks in a second)
        if first.setdefault(k, i) != i:
            raise err(f"the grid lists the same point twice: {points[first[k]]}", "axes")
    return Grid(command_name=cmd_name, result=result, command=command, fixed=dict(fixed), axes=axes,
                points=points, keys=keys, together=together, merge=merge, code_version=code_version, mode=mode,
                text=text, source=source, raw_points=raw_points)


def load_grid(path, results: dict[str, Result] | None = None) -> Grid:
    """Read and validate the grid file at ``path`` (see :func:`parse_grid`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read grid file {path}: {exc.strerror or exc}") from None
    return parse_grid(text, source=str(path), results=results)
