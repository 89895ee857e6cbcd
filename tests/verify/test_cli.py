"""The command-line contract of `attnlimits rmt` / `hermite` (issue: the engine)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from attnlimits.verify.cli import main


def run(args, capsys):
    rc = main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_rmt_json_contract(capsys):
    rc, out, _ = run(["rmt", "--activation", "tanh", "--c", "0.5", "--gamma", "0.01,0.1,1", "--snr", "1",
                      "--wk", "1,0,0", "--wq", "1,0,0", "--json"], capsys)
    assert rc == 0
    recs = json.loads(out)
    assert [r["gamma"] for r in recs] == [0.01, 0.1, 1.0]
    # docs/attention_rmt.md §11 T2, aligned unit weights: .2647/.3281/.4003; ridge .2502/.2603/.3886
    for r, e, er in zip(recs, [.2647, .3281, .4003], [.2502, .2603, .3886]):
        assert r["E_attention"] == pytest.approx(e, abs=5e-4)
        assert r["E_ridge"] == pytest.approx(er, abs=5e-4)


def test_rmt_digits_prints_that_many_digits(capsys):
    rc, out, _ = run(["rmt", "--c", "0.5", "--gamma", "0.1", "--digits", "30", "--json"], capsys)
    assert rc == 0
    text = out.split('"E_attention": ')[1].split(",")[0]
    assert len(text.replace("0.", "", 1).lstrip("0")) >= 28
    assert float(text) == pytest.approx(0.6473, abs=5e-4)


def test_rmt_expression_activation_and_diagonal(capsys):
    # V20: .6t + .3He2 has a1 = .6, nu = .45; aligned unit, SNR 1, c=.5: .2603 at gamma=.01
    rc, out, _ = run(["rmt", "--activation", "0.6*t + 0.3*(t**2-1)/sqrt(2)", "--c", "0.5", "--gamma", "0.01",
                      "--snr", "1", "--wk", "1", "--wq", "1", "--json"], capsys)
    assert rc == 0 and json.loads(out)[0]["E_attention"] == pytest.approx(.2603, abs=5e-4)
    # V16: ReLU, diagonal kept with kappa=.991, c=2, gamma=.1: .0595
    rc, out, _ = run(["rmt", "--activation", "relu", "--c", "2", "--gamma", "0.1", "--diagonal", "keep",
                      "--kappa", "0.991", "--json"], capsys)
    assert rc == 0 and json.loads(out)[0]["E_attention"] == pytest.approx(.0595, abs=5e-4)


@pytest.mark.parametrize("args,needle", [
    (["--c", "0", "--gamma", "1"], "c must be > 0"),
    (["--c", "1", "--gamma", "-1"], "gamma must be > 0"),
    (["--c", "1", "--gamma", "1", "--snr", "-2"], "snr must be >= 0"),
    (["--c", "inf", "--gamma", "1"], "c must be finite"),
    (["--c", "1", "--gamma", "1", "--activation", "t +* 2"], "cannot parse"),
    (["--c", "1", "--gamma", "1", "--activation", "exp(t**2)"], "diverge"),
    (["--c", "1", "--gamma", "1", "--activation", "__import__('os').system('true')"], "not allowed"),
    (["--c", "1", "--gamma", "1", "--diagonal", "keep"], "--kappa"),
    (["--c", "1", "--gamma", "1", "--diagonal", "keep", "--activation", "he2", "--p", "500"], "exceeds 10"),
])
def test_bad_input_one_line_nonzero(capsys, args, needle):
    rc, out, err = run(["rmt", *args], capsys)
    assert rc == 2
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_every_command_has_help_with_example():
    for cmd in [[], ["rmt"], ["export"], ["hermite"]]:
        proc = subprocess.run([sys.executable, "-m", "attnlimits.verify.cli", *cmd, "--help"], capture_output=True, text=True)
        assert proc.returncode == 0 and "example" in proc.stdout


def test_hermite_command(capsys):
    rc, out, _ = run(["hermite", "--activation", "relu", "--json"], capsys)
    rec = json.loads(out)
    assert rc == 0 and float(rec["a1"]) == pytest.approx(0.5, abs=1e-25)
    assert float(rec["nu"]) == pytest.approx(0.340845, abs=1e-6)


def test_solver_failure_is_one_line(capsys):
    # outside the validated range (c = 1000, gamma = 1e-10) the bulk solve fails: a typed error
    # naming the system and a remedy, one line, exit 2
    rc, _, err = run(["rmt", "--c", "1000", "--gamma", "1e-10"], capsys)
    assert rc == 2 and "rmt_bulk" in err and "Try:" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 3  # range warnings + error


def test_absurd_c_is_refused_before_solving(capsys):
    rc, _, err = run(["rmt", "--c", "1e-300", "--gamma", "1"], capsys)
    assert rc == 2 and "--c" in err and len(err.strip().splitlines()) == 1


def test_in_process_module_raises_package_error_classes():
    from attnlimits.derivations import attention_rmt as R
    from attnlimits.numeric import ConvergenceError, compile_model

    mod = compile_model(R.model, "numpy")
    with pytest.raises(ConvergenceError, match="rmt_bulk"):
        mod.curve(1e-300, [1.0], a1=0.6, nu=0.4)


def test_vector_option_may_start_negative(capsys):
    """Issue: ``--wk -0.5,0.5,0`` was refused as an unknown option (exit 2)."""
    rc = main(["rmt", "--activation", "relu", "--c", "3", "--snr", "1.2", "--gamma", "0.5",
               "--wk", "-0.5,0.5,0", "--wq", "0.8,0,0", "--json"])
    out = capsys.readouterr().out
    assert rc == 0 and json.loads(out)[0]["E_attention"] > 0
