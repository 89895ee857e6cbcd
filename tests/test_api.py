"""The public Python API (``import attnlimits as al``): one twin per command of the command line,
with the same parameters, validation and errors; typed tables."""
from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import attnlimits as al
from attnlimits.symbolic.result import discover_results


def _commands():
    for res in discover_results().values():
        for cmd in res.commands:
            yield pytest.param(res.name, cmd.name, id=f"{res.name}:{cmd.name or '-'}")


@pytest.mark.parametrize("result, command", list(_commands()))
def test_every_command_has_a_twin_with_its_parameters(result, command):
    ns = getattr(al, result)
    fn = getattr(ns, command.replace("-", "_")) if command else ns
    cmd = discover_results()[result].command(command)
    names = [p for p in inspect.signature(fn).parameters]
    assert names == [p.name for p in cmd.parameters] + ["progress", "threads"]
    for p in cmd.parameters:
        default = inspect.signature(fn).parameters[p.name].default
        assert default is inspect.Parameter.empty if p.required else default == p.default
    assert fn.__doc__ and (cmd.help.rstrip(".") in fn.__doc__)


def test_errors_are_the_command_lines():
    with pytest.raises(al.InputError, match="--alpha must be > 0, got -1"):
        al.slr.replica(alpha=[-1])
    cli = subprocess.run([sys.executable, "-m", "attnlimits", "slr", "replica", "--alpha", "-1"],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 2 and "--alpha must be > 0, got -1" in cli.stderr
    with pytest.raises(al.InputError, match="unknown parameter"):
        al.slr.population(nu=2, L=3, colour="red")
    with pytest.raises(al.InputError, match="no result"):
        al.run("nope")
    with pytest.raises(al.InputError, match="dps"):
        al.hermite("tanh", dps=2)
    with pytest.raises(al.InputError, match="has commands"):
        al.slr()


def test_table_rows_frame_and_plot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    t = al.rmt(activation="tanh", c=0.5, gamma=[0.1, 1, 10], snr=1, wk=[1], wq=[1], progress=False)
    assert isinstance(t, al.Table) and len(t) == 3 and t.command == "rmt"
    assert t.rows[0]["gamma"] == 0.1 and t[1]["gamma"] == 1.0
    frame = t.to_frame()
    assert frame.shape[0] == 3 and {"gamma", "E_attention", "E_ridge", "c"} <= set(frame.columns)
    ax = t.plot()
    assert ax.get_xlabel() == "gamma" and ax.get_xscale() == "log"
    assert ax.get_ylabel() == "E_attention"
    assert "rmt" in repr(t) and "E_attention" in repr(t)
    with pytest.raises(al.InputError, match="not a column"):
        t.plot(y="nope")


def test_same_numbers_as_the_layers():
    from attnlimits.derivations import attention_rmt as R
    from attnlimits.numeric import compile_model

    h = al.hermite("tanh")
    ref = compile_model(R.model, "numpy").curve(0.5, [0.1], a1=h.a1, nu=h.nu, snr=1, wk=[1], wq=[1])
    got = al.rmt(activation="tanh", c=0.5, gamma=[0.1], snr=1, wk=[1], wq=[1], progress=False)
    assert got[0]["E_attention"] == pytest.approx(ref[0]["E_attention"], rel=1e-12)


def test_layers_and_namespaces():
    import attnlimits.verify

    assert al.verify is attnlimits.verify  # the layer; the claims run through al.verify_claims
    assert {"rmt", "slr", "derivations", "verify_claims"} <= set(dir(al))
    assert al.slr.commands[:2] == ["population", "replica"]
    assert "slr" in repr(al.slr)
    with pytest.raises(AttributeError):
        al.no_such_thing  # noqa: B018
    assert len(al.claims(tags=["rmt"])) > 5
    with pytest.raises(al.InputError):
        al.claims(["NOPE"])


def test_python_dash_m_and_version():
    out = subprocess.run([sys.executable, "-m", "attnlimits", "--version"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("attnlimits ")
    assert al.__version__ in out.stdout


def test_verify_claims_twin(tmp_path):
    with pytest.raises(al.InputError, match="level"):
        al.verify_claims(["V1"], level=2)
    run = al.verify_claims(["V1"], out=tmp_path / "rep", progress=False, device="cpu")
    assert run.passed and len(run) == 1 and run.meta["level"] == 0.01
    frame = run.to_frame()
    assert len(frame) >= 1 and {"claim", "verdict"} <= set(frame.columns)
    assert (tmp_path / "rep" / "report.md").exists()
