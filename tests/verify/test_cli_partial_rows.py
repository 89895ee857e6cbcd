"""Finished work survives a stop: a command that yields its rows keeps those finished at Ctrl-C.

The CLI prints the finished rows (in the chosen format) and one line on stderr, exit 130
(issue "Nothing lost, nothing false", item 2).
"""
import json
import sys
import types

import pytest

from attnlimits.symbolic import result as R
from attnlimits.verify import cli


def _stop_after_two(params, *, progress=None):
    if params["n"] < 1:
        raise R.InputError("--n must be >= 1")  # checked before the iterator starts

    def rows():
        for i in range(params["n"]):
            if i == 2:
                raise KeyboardInterrupt
            yield {"i": i, "value": i * i / 7}

    return rows()


def _json_rows(out):
    out = out.strip()
    return json.loads(out) if out.startswith("[") else [json.loads(line) for line in out.splitlines()]


@pytest.fixture
def stopper(monkeypatch):
    mod = types.ModuleType("_attnlimits_partial_rows_plugin")
    mod.run = _stop_after_two
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    res = R.Result(name="stopper", title="a command stopped after its second row", commands=(
        R.Command(name="", help="two rows, then Ctrl-C", parameters=(R.Param("n", "int", default=5),),
                  run=f"{mod.__name__}:run", table=("i", "value"), examples=("attnlimits stopper --n 5",)),))
    monkeypatch.setitem(R._EXTRA, "stopper", res)
    return res


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_ctrl_c_after_two_rows_prints_them_and_exits_130(stopper, capsys, fmt):
    rc = cli.main(["stopper", "--n", "5"] + ([f"--{fmt}"] if fmt != "table" else []))
    out, err = capsys.readouterr()
    assert rc == 130
    assert err.strip().splitlines() == ["attnlimits stopper: interrupted after 2 finished row(s) (printed above)"]
    if fmt == "json":
        rows = _json_rows(out)
        assert [r["i"] for r in rows] == [0, 1]
    elif fmt == "csv":
        assert out.strip().splitlines()[0].startswith("i,value") and len(out.strip().splitlines()) == 3
    else:
        assert "0.1429" in out  # the second row (1/7, at the table's 4 significant digits) is there


def test_yielding_command_checks_input_before_work(stopper, capsys):
    assert cli.main(["stopper", "--n", "0"]) == 2
    assert capsys.readouterr().err.strip() == "attnlimits stopper: error: --n must be >= 1"


def test_slr_replica_keeps_the_finished_alpha(monkeypatch, capsys):
    """Ctrl-C while the second α is solved: the first α's row is printed, exit 130."""
    from attnlimits.numeric.slr import rs_command as RC

    real, calls = RC.rs_fixed_point, []

    def once_then_stop(*a, **k):
        calls.append(a[2])
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(RC, "rs_fixed_point", once_then_stop)
    rc = cli.main(["slr", "replica", "--model", "spiked", "--nu", "2", "--L", "2", "--activation", "linear_centred",
                   "--alpha", "10,20", "--lam", "1", "--branches", "informed", "--points", "128", "--json"])
    out, err = capsys.readouterr()
    assert rc == 130, err
    rows = _json_rows(out)
    assert [r["alpha"] for r in rows] == [10.0]
    assert "interrupted after 1 finished row(s)" in err
