"""`attnlimits slr population`: the command-line contract."""
from __future__ import annotations

import json

import pytest

from attnlimits.verify.cli import main


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_population_json_contract(capsys):
    code, out, _ = _run(capsys, "slr", "population", "--model", "spiked", "--nu", "2", "--L", "3", "--activation",
                        "softmax,linear_uncentred,erf_learned,softplus_norm", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["activation"] for r in rows] == ["softmax", "linear_uncentred", "erf_learned", "softplus_norm"]
    for r in rows:
        assert {"activation", "risk", "risk_error", "bayes_risk", "argmin_m_k", "argmin_q_v"} <= set(r)
        assert r["risk"] >= r["bayes_risk"] - 1e-6
        assert r["risk_error"] < 1e-4
        assert not any(isinstance(v, (dict, list)) for v in r.values())  # flat rows
    by = {r["activation"]: r for r in rows}
    assert by["softmax"]["risk"] == pytest.approx(0.35242, abs=1e-5)       # docs/slr.md §14 R3
    assert by["linear_uncentred"]["risk"] == pytest.approx(6 / 13, abs=1e-9)  # docs/slr.md §8: L(L-1)/(L²+(L-1)ν)
    assert by["erf_learned"]["risk"] == pytest.approx(0.4444, abs=3e-3)    # docs/slr.md §14 R1 (MC, ±0.002)
    assert "argmin_c" in by["erf_learned"]


def test_population_max_inf_variable_length(capsys):
    code, out, _ = _run(capsys, "slr", "population", "--model", "max", "--nu", "inf", "--L", "1,2,3",
                        "--activation", "softmax,linear_uncentred", "--per-length", "--json")
    assert code == 0
    rows = json.loads(out)
    assert rows[0]["bayes_risk"] == 0.0 and rows[0]["limit"] is True
    assert rows[1]["risk"] == pytest.approx(0.3895, abs=1e-4)  # docs/slr.md §14 R1, exact via M_L
    assert rows[1]["per_length_average"] == pytest.approx(0.2562, abs=1e-4)


def test_population_text_output(capsys):
    code, out, _ = _run(capsys, "slr", "population", "--model", "spiked", "--nu", "1", "--L", "2",
                        "--activation", "linear_centred,linear_pure")
    assert code == 0
    assert "Bayes risk" in out and "linear_centred" in out


@pytest.mark.parametrize("argv, msg", [
    (["--model", "spiked", "--nu", "-1", "--L", "2"], "--nu must be >= 0"),
    (["--model", "spiked", "--nu", "1", "--L", "0"], "--L must be >= 1"),
    (["--model", "spiked", "--nu", "inf", "--L", "2"], "max-SLR only"),
    (["--model", "gaussian", "--nu", "1", "--L", "2"], "--model must be one of"),
    (["--model", "spiked", "--nu", "1", "--L", "2", "--activation", "linear"], "linear_uncentred"),
    (["--model", "spiked", "--nu", "1", "--L", "2", "--activation", "erf"], "erf_fixed"),
    (["--model", "spiked", "--nu", "1", "--L", "2", "--activation", "softplus"], "softplus_norm"),
    (["--model", "spiked", "--nu", "1", "--L", "2", "--activation", "tanh_attention"], "unknown activation"),
    (["--model", "spiked", "--nu", "x", "--L", "2"], "--nu"),
    (["--model", "spiked", "--nu", "1", "--L", "2,a"], "--L"),
])
def test_bad_input_one_line_error(capsys, argv, msg):
    code, out, err = _run(capsys, "slr", "population", *argv)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and msg in lines[0], err


def test_help_lists_activation_names(capsys):
    with pytest.raises(SystemExit) as e:
        main(["slr", "population", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for name in ("softmax", "linear_uncentred", "linear_centred", "linear_pure", "erf_fixed", "erf_learned",
                 "softplus_norm", "softplus_norm_bias", "examples:"):
        assert name in out


@pytest.mark.parametrize("argv", [
    "slr replica --model spiked --nu 2 --L 2 --activation linear_centred --alpha 4 --lam 1 --points 128",
    "slr train --model spiked --nu 2 --L 2 --activation softmax --alpha 4 --lam 0.1 --D 40 --seeds 2",
    "slr amp --D 100 --n-test 200",
])
def test_default_table_fits_80_columns(argv, capsys, monkeypatch):
    """At COLUMNS=80 the wide commands print their whole default table within 80 characters, with no
    column left out; --columns picks others (a typo gets a 'did you mean' and is skipped: the rows are
    printed all the same), --json keeps them all."""
    from attnlimits.symbolic.result import discover_results

    monkeypatch.setenv("COLUMNS", "80")
    name = argv.split()[1]
    table = discover_results()["slr"].command(name).table
    assert 7 <= len(table) <= 12
    code, out, err = _run(capsys, *argv.split())
    assert code == 0, err
    lines = out.rstrip("\n").splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0].split() == list(table) and "left out" not in err
    code, out, err = _run(capsys, *argv.split(), "--columns", "alpha,q_k,m_k")
    assert code == 0 and out.splitlines()[0].split() == ["alpha", "q_k", "m_k"]
    code, out, err = _run(capsys, *argv.split(), "--columns", "alpha,q_kk")  # computed: printed all the same
    assert code == 0 and "did you mean 'q_k'" in err and out.splitlines()[0].split() == ["alpha"]
    code, out, err = _run(capsys, *argv.split(), "--csv", "--columns", "alpha,q_k")
    assert code == 0 and out.splitlines()[0] == "alpha,q_k"


def test_a_table_wider_than_the_terminal_names_what_it_leaves_out(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    code, out, err = _run(capsys, *"slr replica --model spiked --nu 2 --L 2 --activation linear_uncentred --alpha 4 "
                          "--lam 1 --points 128".split())
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 60
    assert "left out at this width" in err and "m_v" in err and "--json" in err
