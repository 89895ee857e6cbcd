"""Guard families of inputs: cache entries, activations from every whitelisted function through the
code generators, the options of an exported solver, and explore's run options.  Each input gets an
answer or one line with exit 2 (InputError at the API).  The default profile draws a few examples;
``ATTNLIMITS_HYPOTHESIS_PROFILE=nightly`` draws many."""
import contextlib
import importlib.util
import io
import json
import os
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlimits.symbolic.safe_parse import ALLOWED_FUNCTIONS
from attnlimits.verify.cli import main

NIGHTLY = os.environ.get("ATTNLIMITS_HYPOTHESIS_PROFILE") == "nightly"
FEW = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None)

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                    max_leaves=6)


@settings(max_examples=500 if NIGHTLY else 15, **FEW)
@given(JSON)
def test_cached_json_of_the_wrong_shape_is_recomputed(tmp_path_factory, value):
    from attnlimits.numeric import models

    folder = tmp_path_factory.mktemp("c")
    os.environ["ATTNLIMITS_CACHE_DIR"] = str(folder)
    try:
        if models.cache_dir() is None:
            pytest.skip("no cache folder in this configuration")
        models.cached_json("ns", "k", lambda: ["1", "2"], like=["", ""])
        (path,) = folder.glob("ns-*.json")
        path.write_text(json.dumps(value))
        got = models.cached_json("ns", "k", lambda: ["3", "4"], like=["", ""])
        expect = value if isinstance(value, list) and len(value) == 2 and all(type(v) is str for v in value) \
            else ["3", "4"]
        assert got == expect
    finally:
        os.environ.pop("ATTNLIMITS_CACHE_DIR", None)


def test_npz_bomb_is_rejected_before_inflating(tmp_path, monkeypatch):
    """A small file whose member inflates past the limit (the limit lowered to 4 MiB here, to stay fast;
    the zip directory is read, nothing inflated)."""
    from attnlimits.verify.claims import _datacache
    from attnlimits.verify.claims._datacache import CacheFormatError, load_arrays

    monkeypatch.setattr(_datacache, "MAX_ARRAY_BYTES", 4 << 20)
    MAX_ARRAY_BYTES = _datacache.MAX_ARRAY_BYTES

    bomb = tmp_path / "b.npz"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        header = b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }" % \
            (MAX_ARRAY_BYTES // 8 + 1)
        header = header + b" " * (127 - len(header)) + b"\n"
        with zf.open("a0.npy", "w", force_zip64=True) as fh:
            fh.write(header)
            chunk = b"\0" * (1 << 20)
            for _ in range(MAX_ARRAY_BYTES // len(chunk) + 1):
                fh.write(chunk)
    assert bomb.stat().st_size < MAX_ARRAY_BYTES / 50  # small on disk
    with pytest.raises(CacheFormatError, match="GiB once inflated"):
        load_arrays(bomb)


def test_claim_cache_entry_with_a_bomb_is_recomputed(tmp_path, monkeypatch):
    from attnlimits.verify.claims import _datacache
    from attnlimits.verify.claims.base import Context

    calls = []

    def fn():
        calls.append(1)
        return {"x": np.arange(1000.0)}

    Context("full", device="cpu", cache_dir=tmp_path).cached(("k",), fn, persist=True)
    monkeypatch.setattr(_datacache, "MAX_ARRAY_BYTES", 100)  # the stored 8 kB array now counts as a bomb
    c = Context("full", device="cpu", cache_dir=tmp_path)
    c.cached(("k",), fn, persist=True)
    assert len(calls) == 2 and any("inflated" in why for _, why in c.disk.rejected)


# ---------------------------------------------------------------------------------------------
# activations from every whitelisted function, through every code generator

_NAMES = sorted(n for n, (_, k) in ALLOWED_FUNCTIONS.items())


def _formula(name):
    arity = ALLOWED_FUNCTIONS[name][1]
    return f"{name}(t, 0)" if arity is None else f"{name}(t)"


def _one_line_or_answer(argv):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main(argv)
    text = err.getvalue()
    assert rc in (0, 2) and "Traceback" not in text, (argv, rc, text[-400:])
    if rc == 2:
        assert len([ln for ln in text.splitlines() if "error:" in ln]) == 1, (argv, text)
    return rc, text


@pytest.mark.parametrize("name", _NAMES)
@pytest.mark.parametrize("backend", ["numpy", "mpmath"])
def test_every_whitelisted_function_prints_or_refuses_in_one_line(name, backend):
    """numpy and mpmath printers, on the activation and on its first two derivatives."""
    import sympy as sp

    from attnlimits.symbolic.activations import parse_activation, t
    from attnlimits.symbolic.codegen import CodegenError, print_expr

    try:
        f = parse_activation(_formula(name))
    except ValueError:
        return  # refused by the parser: one line at the command line
    for e in (f, sp.diff(f, t), sp.diff(f, t, 2)):
        try:
            assert isinstance(print_expr(e, backend), str)
        except CodegenError as exc:
            assert "\n" not in str(exc) and "cannot be generated" in str(exc)


@settings(max_examples=len(_NAMES) * 20 if NIGHTLY else 2, **FEW)
@given(st.sampled_from(_NAMES), st.sampled_from(["elementwise", "normalised"]))
def test_slr_population_with_every_whitelisted_function(name, kind):
    _one_line_or_answer(["slr", "population", "--model", "spiked", "--nu", "1", "--L", "2",
                         "--activation", f"{kind}:{_formula(name)}", "--json"])


@pytest.mark.parametrize("formula", ["1/t", "exp(t**2)", "1/Abs(t)"])
def test_divergent_moments_are_refused(formula):
    rc, text = _one_line_or_answer(["slr", "population", "--model", "spiked", "--nu", "1", "--L", "2",
                                    "--activation", f"elementwise:{formula}"])
    assert rc == 2


def test_discontinuous_activation_in_slr_replica_is_one_line():
    """Max(t, 0) in the RS kernels: the prox Hessian has DiracDelta; one line, exit 2 (was a 49-line traceback)."""
    rc, text = _one_line_or_answer(["slr", "replica", "--L", "2", "--alpha", "2", "--lam", "0.1",
                                    "--activation", "elementwise:Heaviside(t)"])
    assert rc == 2 and "DiracDelta cannot be generated" in text


# ---------------------------------------------------------------------------------------------
# every option of an exported rmt solver


@pytest.fixture(scope="module")
def exported_rmt(tmp_path_factory):
    path = tmp_path_factory.mktemp("exp") / "rmt_tanh.py"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["export", "rmt", "--activation", "tanh", "-o", str(path)]) == 0
    spec = importlib.util.spec_from_file_location("rmt_tanh_exported", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


HOSTILE = st.sampled_from(["nan", "inf", "-inf", "1e308", "-1", "0", "1e12", "1000000000000", "x", "1e-300", ""])
OPTIONS = ["c", "gamma", "snr", "wk", "wq", "kappa", "nodes"]


@settings(max_examples=300 if NIGHTLY else 8, **FEW)
@given(st.sampled_from(OPTIONS), HOSTILE)
def test_exported_file_options_answer_or_refuse_in_one_line(exported_rmt, option, value):
    argv = {"c": "0.5", "gamma": "0.1", "nodes": "64"}
    argv[option] = value
    args = [x for k, v in argv.items() for x in (f"--{k}", v)]
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            rc = exported_rmt.main(args)
        except SystemExit as e:  # argparse: an empty required value
            rc = e.code
    text = err.getvalue()
    assert rc in (0, 2) and "Traceback" not in text, (option, value, text[-300:])
    if rc == 2:
        assert len([ln for ln in text.splitlines() if "error" in ln]) == 1, text


def test_exported_file_carries_the_commands_bounds(exported_rmt, capsys):
    assert exported_rmt.main(["--c", "0.5", "--gamma", "0.1", "--nodes", "1000000000000"]) == 2
    assert "--nodes must be <= 1000000" in capsys.readouterr().err
    assert exported_rmt.main(["--c", "0.5", "--gamma", "0.1", "--nodes", "1e12"]) == 2
    assert "--nodes must be an integer" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# explore: the --at path checks what the search checks


@pytest.mark.parametrize("level", ["5", "nan", "0", "-1", "inf"])
def test_explore_at_checks_level_like_the_search(level, capsys):
    at = ["explore", "slr-bayes-bound", "--at", "model=spiked,nu=2,L=3,activation=softmax", "--level", level]
    assert main(at) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--level must lie in (0, 1)" in err[0]


@pytest.mark.parametrize("kw", [{"level": 5}, {"level": float("nan")}, {"budget": 0}, {"time_limit": float("nan")}])
def test_api_explore_raises_input_error(kw, tmp_path):
    import attnlimits as al

    with pytest.raises(al.InputError):
        al.explore(["slr-bo-monotone"], out=tmp_path, progress=False, **kw)
