"""How the command line prints rows: a table fitted to the terminal, JSON (non-finite numbers as null) or CSV."""
from __future__ import annotations

import json
import math
import sys

__all__ = ["chosen_columns", "format_rows", "print_rows"]


def _json_default(v):
    try:
        import numpy as np

        if isinstance(v, np.generic):
            return v.item()
        if isinstance(v, np.ndarray):
            return v.tolist()
    except ImportError:  # pragma: no cover
        pass
    return str(v)


def _finite_json(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite_json(x) for x in v]
    return v


def format_rows(rows, columns=(), fmt="table", width=None, left_out=None) -> str:
    """Generic printing of tidy rows: JSON (valid: non-finite numbers become null), CSV, or a table.

    The table shows ``columns`` (default: all), numbers at 4 significant digits (``--json``/``--csv``
    carry them all), never clipped; with ``width``, trailing columns that would make a line longer
    are left out and their names appended to the list ``left_out``."""
    if fmt == "json":
        return json.dumps(_finite_json(rows), indent=2, default=_json_default, allow_nan=False)
    cols = list(columns) or list(dict.fromkeys(k for r in rows for k in r))
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(dict.fromkeys(k for r in rows for k in r)), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (json.dumps(v, default=_json_default) if isinstance(v, (dict, list)) else v)
                        for k, v in r.items()})
        return buf.getvalue().rstrip("\n")

    def cell(v):
        if v is None:
            return "-"
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, float):
            return f"{v:.4g}"
        if isinstance(v, dict):
            return ", ".join(f"{k}={cell(x)}" for k, x in v.items())
        return str(v)

    body = [[cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(b[i]) for b in body)) if body else len(c) for i, c in enumerate(cols)]
    if width:
        keep = len(cols)
        while keep > 1 and sum(widths[:keep]) + 2 * (keep - 1) > width:
            keep -= 1
        if left_out is not None:
            left_out.extend(cols[keep:])
        cols, widths, body = cols[:keep], widths[:keep], [b[:keep] for b in body]
    lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(b, widths)) for b in body]
    return "\n".join(lines)


def print_rows(rows, cmd, params, fmt, threads, columns=None) -> None:
    """Print the rows: ``--json``/``--csv`` in full (``--columns`` picks the CSV's columns), else the
    command's table — its default columns, or ``--columns`` — fitted to the terminal's width (columns
    that do not fit are named on stderr)."""
    from attnlimits.symbolic.result import resolve
    from attnlimits.verify.report import terminal_width

    if fmt != "table":
        rows = [{**r, "threads": threads} for r in rows]
    if columns is not None:
        columns = chosen_columns(columns, rows)
    if fmt == "json" or (cmd.formatter and fmt == "table" and columns is None):
        text = resolve(cmd.formatter)(rows, params, fmt) if cmd.formatter else format_rows(rows, (), fmt)
    elif fmt == "csv":
        text = format_rows([{k: r.get(k) for k in columns} for r in rows] if columns else rows, (), "csv")
    else:
        left_out = []
        text = format_rows(rows, columns or cmd.table, "table", width=terminal_width(default=None),
                           left_out=left_out)
        if left_out:
            print(f"note: {len(left_out)} column(s) left out at this width ({', '.join(left_out)}); "
                  "--columns NAME,... picks the table's columns, --json shows them all", file=sys.stderr)
    print(text)
    sys.stdout.flush()


def chosen_columns(text, rows):
    """The columns named by ``--columns`` (``all``: every column) that the rows have.  A name they lack
    is reported in one line on stderr, with a "did you mean", and skipped — the rows were computed
    already and are printed all the same (``None`` when no name is left: the default table)."""
    import difflib

    present = list(dict.fromkeys(k for r in rows for k in r))
    names = [c.strip() for c in str(text).split(",") if c.strip()]
    if names == ["all"]:
        return present
    for n in [n for n in names if n not in present]:
        close = difflib.get_close_matches(n, present, n=1)
        print(f"warning: --columns: no column {n!r} in these rows" + (f"; did you mean {close[0]!r}?" if close else "")
              + " (--json lists every column; docs/output.md explains them)", file=sys.stderr)
    return [n for n in names if n in present] or None
