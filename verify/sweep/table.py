"""The results table of a sweep: the source of truth, one Parquet part file per finished point.

Layout of an output folder ``DIR``::

    DIR/sweep.json          what was swept (command, parameter names, each run's grid and counts)
    DIR/parts/*.parquet     the rows; one file per finished point attempt (or a compacted batch)
    DIR/results.csv         a CSV export of :meth:`ResultsTable.read` (``--csv``)

Every file is written to a temporary name in the same folder, flushed to disk and renamed into
place (``os.replace``), so a reader sees a whole file or none: the table is readable after any
crash, and a point is either recorded or not.  Part names are unique, so several writers never
collide: the worker that computed a point writes its part itself the moment it finishes, when it
sees the folder (a local cluster or a shared filesystem: checked through the run's token file
``DIR/.writers-<token>``); otherwise the client writes the rows it receives.

Rows
----
One row per row returned by the command (usually one per point): the parsed parameters, the
outputs (including error estimates such as ``E_test_error``), and these columns:

``point_key``      :func:`attnlimits.verify.sweep.grid.point_key` (command + parameters + code version)
``attempt``        a fresh id per execution of the point
``row_index``      position of the row among the point's rows
``status``         ``"ok"`` or ``"failed"``
``error``          the one-line error of a failed point (``""`` when ok)
``elapsed_s``      seconds the command ran
``seed``           the ``seed`` parameter or output, when there is one
``command``, ``code_version``, ``versions`` (JSON: python, numpy, scipy, sympy, mpmath, torch,
dask, pyarrow of the process that computed it), ``worker`` (host:pid), ``finished_at`` (UTC ISO),
``params_json`` (the exact parsed parameters).

List values (a ``floats`` parameter) are stored as JSON text, a one-element list as its element.  An output whose name collides
with one of these columns is stored as ``output_<name>``.
"""
from __future__ import annotations

import csv
import datetime as _dt
import json
import math
import os
import uuid
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from attnlimits.symbolic.result import InputError

from .worker import META_COLUMNS, durable_write, fsync_dir, plain, write_part  # noqa: F401

__all__ = ["ResultsTable", "META_COLUMNS", "plain"]



def _unify(tables: list[pa.Table]) -> pa.Table:
    """Concatenate tables whose columns differ or disagree in type (conflicts become text)."""
    if not tables:
        return pa.table({})
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        pass
    types: dict[str, set] = {}
    for t in tables:
        for f in t.schema:
            if not pa.types.is_null(f.type):
                types.setdefault(f.name, set()).add(f.type)
    numeric = lambda ty: pa.types.is_integer(ty) or pa.types.is_floating(ty)  # noqa: E731
    conflict = {n for n, ts in types.items() if len(ts) > 1 and not all(numeric(t) for t in ts)}
    fixed = []
    for t in tables:
        for n in conflict & set(t.column_names):
            col = t.column(n)
            if not pa.types.is_string(col.type):
                text = pa.array([None if v is None else str(v) for v in col.to_pylist()], pa.string())
                t = t.set_column(t.column_names.index(n), n, text)
        fixed.append(t)
    return pa.concat_tables(fixed, promote_options="permissive")


class ResultsTable:
    """The results table in folder ``directory`` (created on the first write).

    Parameters
    ----------
    directory : path
        the sweep's output folder (``--out``).
    """

    def __init__(self, directory):
        self.directory = Path(directory)
        self.parts = self.directory / "parts"
        self.manifest_path = self.directory / "sweep.json"

    # --- the manifest --------------------------------------------------------------------------
    def manifest(self) -> dict | None:
        """The ``sweep.json`` of this folder, or ``None`` before the first run."""
        if not self.manifest_path.exists():
            return None
        try:
            return json.loads(self.manifest_path.read_text())
        except (OSError, ValueError) as exc:
            raise InputError(f"{self.manifest_path} is not readable JSON: {exc}") from None

    def start_run(self, grid, planned: int, todo: int) -> dict:
        """Record a run of ``grid`` in the manifest; refuse a folder holding another command."""
        man = self.manifest()
        if man is not None and man.get("command") != grid.command_name:
            raise InputError(f"{self.directory} holds a sweep of {man.get('command')!r}, not "
                             f"{grid.command_name!r}; choose another --out")
        if man is None:
            man = {"command": grid.command_name, "parameters": grid.parameter_names, "runs": []}
        man["parameters"] = list(dict.fromkeys(list(man.get("parameters", [])) + grid.parameter_names))
        man["axes"] = sorted(set(man.get("axes", [])) | set(grid.axes))
        man["runs"].append({"started_at": _now(), "grid_file": grid.source, "grid": grid.text,
                            "code_version": grid.code_version, "planned": planned, "to_run": todo})
        self._write_manifest(man)
        return man

    def _write_manifest(self, man: dict) -> None:
        text = json.dumps(man, indent=1)
        durable_write(self.manifest_path, lambda tmp: Path(tmp).write_text(text), sync_dir=True)

    # --- writing --------------------------------------------------------------------------------
    def append(self, rows: list[dict]) -> Path:
        """Write ``rows`` (of one point attempt, or several) as one new part file, atomically."""
        if not rows:
            raise ValueError("append needs at least one row")
        return write_part(self.parts, rows)

    def part_files(self) -> list[Path]:
        if not self.parts.is_dir():
            return []
        return sorted(p for p in self.parts.glob("*.parquet") if not p.name.startswith("."))

    def clean_temporaries(self) -> int:
        """Remove temporary files left by a crash mid-write (never part of the table), and the
        writer tokens of runs that did not end cleanly (so their workers, if any, stop writing)."""
        import re

        from attnlimits.symbolic.files import TEMP_PREFIX

        n = 0
        # only names this package makes: the shared writer's temporaries, (in parts/, the table's own
        # folder) any temporary, and run tokens .writers-<32 hex digits>; never another file of the folder
        for folder, pattern, name_re in ((self.parts, ".tmp-*", None), (self.directory, TEMP_PREFIX + "*", None),
                                         (self.directory, ".writers-*", r"\.writers-[0-9a-f]{32}")):
            if folder.is_dir():
                for p in folder.glob(pattern):
                    if (name_re and not re.fullmatch(name_re, p.name)) or p.is_symlink() or not p.is_file():
                        continue
                    try:
                        p.unlink()
                        n += 1
                    except OSError:
                        pass
        return n

    # --- reading --------------------------------------------------------------------------------
    def read_all(self) -> pa.Table:
        """Every stored row of every attempt, read part file by part file; a damaged part file is
        set aside (:meth:`set_aside`, named in a warning) and its points are redone by a rerun."""
        tables = []
        for p in self.part_files():
            try:
                tables.append(pq.ParquetFile(p).read(use_threads=False))  # ~10x faster than read_table
            except Exception as exc:  # noqa: BLE001 - a damaged file must not hide the others
                self.set_aside(p, exc)
        return _unify(tables)

    def set_aside(self, path: Path, exc: BaseException | None = None) -> Path | None:
        """Move the unreadable part file ``path`` to ``DIR/damaged/`` (out of the table, kept for
        inspection) with a warning naming it; its points count as missing, so a rerun redoes them."""
        target = self.directory / "damaged" / Path(path).name
        why = f": {str(exc).strip().splitlines()[0]}" if exc is not None and str(exc).strip() else ""
        try:
            target.parent.mkdir(exist_ok=True)
            os.replace(path, target)
        except OSError:
            warnings.warn(f"skipping unreadable part file {path}{why}")
            return None
        warnings.warn(f"part file {path} is damaged{why}; moved to {target}; its points will be redone")
        return target

    def read(self) -> pa.Table:
        """The current table: for each point, the rows of its latest attempt."""
        t = self.read_all()
        if t.num_rows == 0:
            return t
        keys = t.column("point_key").to_pylist()
        attempts = t.column("attempt").to_pylist()
        finished = t.column("finished_at").to_pylist()
        latest: dict[str, tuple[str, str]] = {}
        for k, a, f in zip(keys, attempts, finished):
            if k not in latest or (f, a) > latest[k]:
                latest[k] = (f, a)
        # one point (command + parameters) computed by several code versions (several keys): the
        # rows of the most recently finished key stand for it; the others stay on disk
        idents = self._identities(t)
        newest: dict[str, tuple[str, str]] = {}
        for k, ident in zip(keys, idents):
            if ident is not None and (ident not in newest or latest[k][0] > newest[ident][0]):
                newest[ident] = (latest[k][0], k)
        rows = t.column("row_index").to_pylist()
        seen: set = set()
        keep = []
        for i, (k, a, r, ident) in enumerate(zip(keys, attempts, rows, idents)):
            if ident is not None and newest[ident][1] != k:
                continue
            if latest[k][1] == a and (a, r) not in seen:  # compaction can leave exact duplicates
                seen.add((a, r))
                keep.append(i)
        return t.take(pa.array(keep, pa.int64()))

    @staticmethod
    def _identities(t: pa.Table) -> list:
        """:func:`~attnlimits.verify.sweep.grid.point_identity` of every row (``None`` without
        the columns, in tables written before they existed)."""
        if "command" not in t.column_names or "params_json" not in t.column_names:
            return [None] * t.num_rows
        return [None if c is None or p is None else json.dumps([c, p])
                for c, p in zip(t.column("command").to_pylist(), t.column("params_json").to_pylist())]

    def versions_by_identity(self) -> dict[str, set]:
        """point identity → the code versions that finished it (status ``ok``), over every stored
        attempt: how a rerun recognises points made by other code."""
        t = self.read_all()
        if t.num_rows == 0 or "code_version" not in t.column_names:
            return {}
        out: dict[str, set] = {}
        for ident, v, st in zip(self._identities(t), t.column("code_version").to_pylist(),
                                t.column("status").to_pylist()):
            if ident is not None and st == "ok":
                out.setdefault(ident, set()).add(v)
        return out

    def rows(self) -> list[dict]:
        """:meth:`read` as a list of dicts."""
        return self.read().to_pylist()

    def statuses(self) -> dict[str, str]:
        """point key -> status (``"ok"``/``"failed"``) of its latest attempt."""
        t = self.read()
        if t.num_rows == 0:
            return {}
        return dict(zip(t.column("point_key").to_pylist(), t.column("status").to_pylist()))

    # --- maintenance and export -----------------------------------------------------------------
    def compact(self) -> int:
        """Merge all part files into one (atomically; a crash leaves duplicates :meth:`read` drops).

        Returns the number of part files merged (0 when there was at most one).
        """
        files = self.part_files()
        if len(files) <= 1:
            return 0
        tables, good = [], []
        for p in files:
            try:
                tables.append(pq.ParquetFile(p).read(use_threads=False))
                good.append(p)
            except Exception as exc:  # noqa: BLE001 - a damaged part must not block the others
                self.set_aside(p, exc)
        files = good
        if len(files) <= 1:
            return 0
        merged = _unify(tables)
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S%f")
        target = self.parts / f"part-{stamp}-compact-{uuid.uuid4().hex[:8]}.parquet"
        durable_write(target, lambda tmp: pq.write_table(merged, tmp), sync_dir=True)
        for p in files:
            try:
                p.unlink()
            except OSError:
                pass
        fsync_dir(self.parts)
        return len(files)

    def to_csv(self, path=None) -> Path:
        """Write :meth:`read` as CSV (default ``DIR/results.csv``), atomically; return the path."""
        path = Path(path) if path is not None else self.directory / "results.csv"
        t = self.read()
        names = _column_order(t.column_names, self.manifest())
        rows = t.to_pylist()

        def write(tmp):
            with open(tmp, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(names)
                for r in rows:
                    w.writerow(["" if r.get(n) is None else _csv_cell(r.get(n)) for n in names])
        durable_write(path, write)
        return path


def _csv_cell(v):
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else str(v)
    return v


def _column_order(names: list[str], manifest: dict | None) -> list[str]:
    params = [n for n in (manifest or {}).get("parameters", []) if n in names]
    meta = [n for n in META_COLUMNS if n in names and n not in params]
    rest = [n for n in names if n not in params and n not in meta]
    return params + rest + meta


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")
