"""Every column a command prints is documented in docs/output.md, with its type.

Each command runs once at a small size through the CLI with ``--json``; its rows are printed again
as ``--csv`` (the same rows, through the same printer).  A column passes when it is in the page's
table, or is ``X_error``/``X_se``/``X_sd``/``theory_X``/``rs_X``/``rhat_X``/``start_gap_X`` of a
documented ``X`` (``argmin_X``, ``exact_X`` of any ``X``), and every value it holds has the page's
type in that format (the page's "Types" table): rows are flat, no value is a list or an object.
The page is the only place the schema is written.
"""
import json
import re
from pathlib import Path

import pytest

from attnlimits.verify import cli
from attnlimits.verify.cli import commands as cli_commands

PAGE = Path(__file__).resolve().parents[1] / "docs" / "output.md"

def _commands() -> dict:
    """Every smoke line the registered commands declare (``Command.smoke``), by "<result> <command> #i", and
    the engine's ``hermite``."""
    from attnlimits.symbolic.result import discover_results

    out = {"hermite": "hermite --activation relu"}
    for r in discover_results().values():
        for c in r.commands:
            for i, line in enumerate(c.smoke):
                out[f"{r.name} {c.name}".strip() + f" #{i}"] = line
    return out


COMMANDS = _commands()

#: pattern -> the type of its columns (None: the type of the quantity it names)
_PATTERNS = {r"(.+)_error": "float", r"(.+)_se": "float", r"(.+)_sd": "float", r"theory_(.+)": None,
             r"rs_(.+)": None, r"rhat_(.+)": "float", r"start_gap_(.+)": "float"}
TYPES = ("int", "float", "bool", "str")


def documented(section_title: str = "Columns") -> dict:
    """``{column: type}`` from the table of the page's section (``argmin_X``/``exact_X`` stand for any ``X``)."""
    names = {}
    section = PAGE.read_text().split(f"\n## {section_title}", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = line.split("|")
            cols = re.findall(r"`([A-Za-z_0-9]+)`", cells[1])
            types = [t.strip() for t in cells[2].split(",")]
            assert len(types) in (1, len(cols)) and set(types) <= set(TYPES), line
            names.update(zip(cols, types * len(cols) if len(types) == 1 else types))
    return names


def column_type(key, names):
    """The documented type of column ``key``, or None when the page does not document it."""
    if key in names:
        return names[key]
    for prefix in ("argmin_", "exact_"):
        if key.startswith(prefix) and len(key) > len(prefix):
            return names.get(prefix + "X")
    for p, t in _PATTERNS.items():
        if (m := re.fullmatch(p, key)) and (inner := column_type(m.group(1), names)) is not None:
            return t or inner
    return None


def is_documented(key, names) -> bool:
    return column_type(key, names) is not None


def _is_number_text(v) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def json_type_ok(v, t) -> bool:
    if v is None:
        return True  # no value in this row
    if t == "int":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "float":  # a number; digits beyond float64 (and inf) as decimal text
        return (isinstance(v, (int, float)) and not isinstance(v, bool)) or (isinstance(v, str) and _is_number_text(v))
    if t == "bool":
        return isinstance(v, bool)
    return isinstance(v, str)


def csv_type_ok(v: str, t) -> bool:
    if v == "":
        return True
    if t == "int":
        return re.fullmatch(r"-?[0-9]+", v) is not None
    if t == "float":
        return _is_number_text(v)
    if t == "bool":
        return v in ("True", "False")
    return True


def test_types_are_checked():
    """The checker itself: a wrong type fails, an empty value passes (independent cases)."""
    assert json_type_ok(3, "int") and not json_type_ok(3.5, "int") and not json_type_ok(True, "int")
    assert json_type_ok(0.5, "float") and json_type_ok("0.50000000000000000001", "float") and json_type_ok("inf", "float")
    assert not json_type_ok("abc", "float") and not json_type_ok({"3": 1.0}, "str") and not json_type_ok(2, "str")
    assert json_type_ok(None, "bool") and not json_type_ok("yes", "bool")
    assert csv_type_ok("12", "int") and not csv_type_ok("1.5", "int") and csv_type_ok("inf", "float")
    assert csv_type_ok("False", "bool") and not csv_type_ok("0", "bool") and csv_type_ok("", "int")
    names = documented()
    assert column_type("argmin_m_k", names) == "float" and column_type("E_test_se", names) == "float"
    assert column_type("rs_rsb", names) == "bool" and column_type("theory_E_BO", names) == "float"
    assert column_type("no_such_column", names) is None


def test_page_documents_the_default_table_columns():
    from attnlimits.symbolic.result import discover_results

    names = documented()
    missing = {f"{r.name} {c.name}".strip(): [k for k in c.table if not is_documented(k, names)]
               for r in discover_results().values() for c in r.commands}
    assert not {k: v for k, v in missing.items() if v}, missing


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_column_is_documented_with_its_type(name, capsys, monkeypatch):
    """JSON and CSV of one run: every column documented, every value of its documented type."""
    import csv
    import io
    import shlex

    printed = []
    original = cli_commands.print_rows

    def keep(*args):
        printed.append(args)
        return original(*args)

    monkeypatch.setattr(cli_commands, "print_rows", keep)
    rc = cli.main(shlex.split(COMMANDS[name]) + ["--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    rows = json.loads(out)
    rows = rows if isinstance(rows, list) else [rows]
    names = documented()
    keys = sorted({k for r in rows for k in r})
    assert [k for k in keys if not is_documented(k, names)] == []
    wrong = sorted({(k, repr(v)[:40]) for r in rows for k, v in r.items() if not json_type_ok(v, column_type(k, names))})
    assert wrong == [], f"JSON values of the wrong type: {wrong}"
    if not printed:  # a command with its own printer and no --csv (hermite)
        return
    rows_in, cmd, params, _fmt, threads = printed[0][:5]
    original(rows_in, cmd, params, "csv", threads)
    text = capsys.readouterr().out
    table = list(csv.DictReader(io.StringIO(text)))
    assert table and set(table[0]) == set(keys)
    wrong = sorted({(k, v[:40]) for r in table for k, v in r.items() if not csv_type_ok(v, column_type(k, names))})
    assert wrong == [], f"CSV cells of the wrong type: {wrong}"
    assert not [v for r in table for v in r.values() if v.startswith(("{", "["))], "CSV cells hold JSON"


def test_every_registered_command_is_run_here():
    """A new command cannot skip the schema test: each command of this package's results (those whose run
    function lives in attnlimits; plug-ins test their own rows) declares at least one smoke line."""
    from attnlimits.symbolic.result import discover_results

    missing = [f"{r.name} {c.name}".strip() for r in discover_results().values() for c in r.commands
               if c.run.startswith("attnlimits.") and not c.smoke]
    assert missing == []


def test_comparison_columns_of_verify_and_explore_have_their_types(tmp_path, capsys):
    """verify's results.csv (claim V1, deterministic checks) and an explore row (slr-bo-monotone, one
    stochastic check): every comparison column documented under "Comparison columns", of its type."""
    import csv

    from attnlimits.verify.claims.property_claims import find_property
    from attnlimits.verify.comparison import COMPARISON_COLUMNS
    from attnlimits.verify.explore.driver import evaluate_point

    types = documented("Comparison columns")
    assert set(COMPARISON_COLUMNS) <= set(types)
    assert cli.main(["verify", "V1", "--quick", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    with open(tmp_path / "results.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert table and set(types) - {"check", "verdict"} <= set(table[0])
    wrong = sorted({(k, r[k]) for r in table for k in types if not csv_type_ok(r[k], types[k])})
    assert wrong == []
    prop = find_property("slr-bo-monotone")
    row = evaluate_point(prop, {"alpha": 2.0, "ratio": 1.5, "nu": 2.0, "L": 2}, size=dict(prop.quick), seed=1,
                         level=0.01)
    assert row["se"] is not None and row["z"] is not None  # a stochastic check: every column filled
    wrong = sorted({(k, repr(row[k])) for k in types if k != "kind" and not json_type_ok(row[k], types[k])})
    assert wrong == []
