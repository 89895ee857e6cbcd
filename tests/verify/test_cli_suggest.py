"""Typos get a "did you mean" in one line with the command's own usage, exit 2."""
from __future__ import annotations

import contextlib

import pytest

from attnlimits.verify.cli import main


@pytest.mark.parametrize("argv, said", [
    (["rmt", "--activaton", "tanh", "--c", "0.5", "--gamma", "0.1"], "attnlimits rmt: error: unknown option: --activaton (did you mean --activation?)"),
    (["slr", "replica", "--alpah", "2"], "did you mean --alpha?"),
    (["verify", "--quik", "--list"], "attnlimits verify: error: unknown option: --quik (did you mean --quick?)"),
    (["verfy"], "did you mean 'verify'?"),
    (["slr", "replca"], "did you mean 'replica'?"),
])
def test_typo_gets_a_suggestion(argv, said, capsys):
    # a wrong command or choice is argparse's own error (SystemExit); an unknown option is main's return
    choice = argv[0] == "verfy" or argv[-1] == "replca"
    with pytest.raises(SystemExit) if choice else contextlib.nullcontext() as exc:
        rc = main(argv)
    code = exc.value.code if exc is not None else rc
    err = capsys.readouterr().err
    assert code == 2
    assert said in err, err
    assert "usage: attnlimits" in err
    assert "Traceback" not in err
    if argv[0] in ("rmt", "verify"):  # the command's usage, not the top level's
        assert f"usage: attnlimits {argv[0]} " in err


def test_far_option_gets_no_wrong_suggestion(capsys):
    assert main(["hermite", "--activation", "relu", "--zzzzzzzz"]) == 2
    err = capsys.readouterr().err
    assert "unknown option: --zzzzzzzz" in err and "did you mean" not in err
