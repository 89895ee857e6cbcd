"""No user text becomes code: generated modules and exported files carry inputs only as inert text.

Family property (Hypothesis): any text in a generated module's title/description or an exported
file's header compiles to a module whose docstring is that text (control characters escaped), and
loading it runs nothing else.  The activation label that reaches generated source is the canonical
printed formula, never the text as typed.
"""
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlimits.symbolic.codegen import ModuleBuilder, comment_safe, doc_safe, load_module

PAYLOADS = st.lists(st.sampled_from(list('"\'\\#\n\r\t;:()ab é§\x00\x1b') + ['"""', "'''", "\\x", "\\N"]),
                   max_size=20).map("".join)


@settings(max_examples=200, deadline=None)
@given(PAYLOADS)
def test_any_text_is_inert_in_a_docstring_and_a_comment(text):
    mod = compile('"""' + doc_safe(text) + '"""\nX = 1\n# ' + comment_safe(text) + "\n", "<t>", "exec")
    ns: dict = {}
    exec(mod, ns)  # noqa: S102 - the point of the test
    assert set(ns) - {"__builtins__"} == {"__doc__", "X"}
    printable = "".join(ch for ch in text if ch in "\n\t" or ch.isprintable())
    if printable == text:
        assert ns["__doc__"] == text


@settings(max_examples=30, deadline=None)
@given(PAYLOADS)
def test_module_builder_title_and_description(tmp_path_factory, text):
    marker = tmp_path_factory.mktemp("m") / "X"
    payload = text + f'""";import pathlib;pathlib.Path({str(marker)!r}).touch()#'
    src = ModuleBuilder(payload, "numpy", "h", description=payload).source()
    load_module(src, "t")
    assert not marker.exists()


PAYLOAD = 'elementwise:t #""";import os;os.system("touch {marker}")'


def test_slr_activation_label_is_canonical():
    from attnlimits.derivations.slr.population import activation

    a = activation('elementwise:1+tanh(t) #""";x')
    assert a.name == "elementwise:tanh(t) + 1"
    assert activation('normalised:exp(2*t) # "').name == "normalised:exp(2*t)"


@pytest.mark.parametrize("argv", [
    ["export", "slr", "--solver", "replica", "--L", "2"],
    ["export", "rmt", "--backend", "numpy"],
])
def test_exported_files_hold_no_raw_input(tmp_path, capsys, argv):
    from attnlimits.verify.cli import main

    marker = tmp_path / "PWNED"
    act = PAYLOAD.format(marker=marker)
    if argv[1] == "rmt":
        act = act.removeprefix("elementwise:")
    out = tmp_path / "f.py"
    assert main(argv + ["--activation", act, "-o", str(out)]) == 0, capsys.readouterr().err
    text = out.read_text()
    assert "PWNED" not in text and "os.system" not in text
    compile(text, str(out), "exec")
    proc = subprocess.run([sys.executable, str(out), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and not marker.exists()


def test_replica_kernels_of_a_payload_activation(capsys, tmp_path):
    from attnlimits.verify.cli import main

    marker = tmp_path / "PWNED"
    rc = main(["slr", "replica", "--activation", PAYLOAD.format(marker=marker), "--alpha", "4", "--lam", "1",
               "--points", "128", "--branches", "informed", "--json"])
    assert rc == 0, capsys.readouterr().err
    assert not marker.exists()
