"""Every input answered in one line: the cases a hostile test found (issue "Every input answered
in one line"), each with its exit status and message checked; former hangs with a time bound."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attnlimits.verify.cli import main

LONG = "+".join(["t"] * 1001)


def _run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, msg", [
    # silently accepted before
    (["slr", "population", "--model", "max", "--nu", "2", "--L", "2", "--tol", "nan"], "--tol must be a number"),
    (["slr", "population", "--model", "max", "--nu", "2", "--L", "2", "--tol", "0"], "--tol must be > 0"),
    (["slr", "population", "--model", "max", "--nu", "2", "--L", "2", "--tol", "-1"], "--tol must be > 0"),
    (["slr", "population", "--model", "max", "--nu", "2", "--L", "2", "--activation", "erf_fixed", "--extra", "inf"],
     "--extra must be finite"),
    (["slr", "population", "--model", "max", "--nu", "2", "--L", "2", "--activation", "softplus_norm",
      "--extra", "1e308"], "--extra must lie in [-1000, 1000]"),
    (["slr", "population", "--model", "max", "--nu", "2", "--L", "2", "--delta", "0.5"], "only with --metric noisy"),
    (["rmt", "--c", "2", "--gamma", "0.1", "--diagonal", "keep", "--kappa", "0.9", "--p", "100"], "not both"),
    (["verify", "V1", "--out", ""], "--out must name a folder"),
    # messages that did not name the input
    (["rmt", "--c", "1e308", "--gamma", "1"], "--c 1e+308 is outside"),
    (["rmt", "--c", "0.5", "--gamma", "1e308"], "--gamma 1e+308 is outside"),
    (["rmt", "--c", "0.5", "--gamma", "1e-300"], "--gamma 1e-300 is outside"),
    (["rmt", "--c", "0.5", "--gamma", "1", "--snr", "1e308"], "--snr 1e+308 exceeds"),
    (["rmt", "--c", "0.5", "--gamma", "1", "--wk", "1e300", "--wq", "1"], "--wk coordinate 1e+300 exceeds"),
    (["slr", "population", "--model", "max", "--nu", "1e308", "--L", "2"], "--nu 1e+308 is too large"),
    (["verify", "--device", "tpu", "--no-report"], "--device 'tpu' is not a device"),
    (["rmt", "--activation", LONG, "--c", "0.5", "--gamma", "1"], "--activation is too long"),
    (["hermite", "--activation", LONG], "--activation is too long"),
    # tracebacks before
    (["slr", "population", "--model", "max", "--nu", "2", "--L", "1000000"], "GiB"),
    (["rmt", "--c", "0.5", "--gamma", "1", "--wk", ",".join(["0.1"] * 5000)], "at most 512"),
])
def test_one_line_exit_2(capsys, argv, msg):
    code, out, err = _run(capsys, argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and msg in lines[0], err
    assert "Traceback" not in err and len(lines[0]) < 400


def test_repeated_gamma_is_a_valid_input(capsys):
    code, out, err = _run(capsys, ["rmt", "--c", "0.5", "--gamma", "0.1,0.2,0.2", "--json"])
    rows = json.loads(out)
    assert code == 0 and [r["gamma"] for r in rows] == [0.1, 0.2, 0.2]
    assert rows[1]["E_attention"] == rows[2]["E_attention"]


def test_json_is_valid_json_and_records_threads(capsys):
    code, out, _ = _run(capsys, ["rmt", "--c", "0.5", "--gamma", "0.1", "--json", "--threads", "1"])
    assert code == 0 and json.loads(out)[0]["threads"] == 1
    assert "NaN" not in out and "Infinity" not in out


def test_rmt_table_repeats_its_parameters(capsys):
    code, out, _ = _run(capsys, ["rmt", "--activation", "relu", "--c", "0.5", "--gamma", "0.1", "--snr", "2"])
    assert code == 0 and "activation relu" in out and "c=0.5" in out and "snr=2" in out


def test_bad_threads(capsys):
    code, _, err = _run(capsys, ["rmt", "--c", "0.5", "--gamma", "0.1", "--threads", "0"])
    assert code == 2 and "--threads must be between 1 and 1024" in err


def test_out_checked_before_any_claim_runs(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    t0 = time.monotonic()
    code, out, err = _run(capsys, ["verify", "C3", "--out", str(blocker)])
    assert code == 2 and "exists and is not a folder" in err and out == ""
    assert time.monotonic() - t0 < 10  # refused before the claim (tens of seconds) ran
    code, _, err = _run(capsys, ["weights", "nonexistent.safetensors", "--out", str(blocker)])
    assert code == 2 and "exists and is not a folder" in err


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("attnlimits ")


def test_rerun_into_the_same_report_folder_leaves_no_stale_plot(tmp_path):
    from attnlimits.verify.claims.base import ClaimResult, PlotSeries, PlotSpec
    from attnlimits.verify.report import write_report

    plots = tmp_path / "plots"
    spec = PlotSpec("t", "x", "y", [PlotSeries("s", [1, 2], [1, 2])])
    write_report([ClaimResult("OLD", "t", "pass", plots=[spec])], tmp_path)  # the earlier run's figure
    (plots / "MINE.png").write_bytes(b"the user's own file")  # never written by a report: never removed
    write_report([ClaimResult("NEW", "t", "pass", plots=[spec])], tmp_path)
    assert sorted(p.name for p in plots.iterdir()) == ["MINE.png", "NEW.png"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_early_is_one_line():
    """Ctrl-C in the first second of a command: one line and exit 130, no traceback."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "attnlimits.verify.cli", "slr", "population", "--model", "spiked",
                             "--nu", "2", "--L", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=Path(__file__).resolve().parents[2])
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err


@pytest.mark.parametrize("device", ["cuda:99", "tpu", "meta", "CPU", ""] + ([] if __import__("torch").cuda.is_available()
                                                                           else ["cuda"]))
@pytest.mark.parametrize("command", [["slr", "amp", "--D", "20"], ["slr", "train", "--D", "20"],
                                     ["verify", "V1", "--no-report"],
                                     ["figure", "rmt-1a"]])
def test_every_command_resolves_devices_one_way(command, device, capsys):
    """One device-resolution function: every device the machine lacks is one line, exit 2, before any work."""
    assert main(command + ["--device", device]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--device" in err[0] and "Traceback" not in err[0], err
