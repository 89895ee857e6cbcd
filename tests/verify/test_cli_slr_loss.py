"""`slr replica` and `slr train` with --loss, --lam-k and --lam-v: the command-line contract."""
from __future__ import annotations

import json

import pytest

from attnlimits.verify.cli import main


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("cmd, extra, msg", [
    ("replica", ["--loss", "huber"], "needs a scale"),
    ("replica", ["--loss", "x**2"], "unknown name 'x'"),
    ("replica", ["--loss", "__import__('os')"], "not allowed"),
    ("replica", ["--lam", "tune", "--lam-v", "0.3"], "tunes one ridge"),
    ("replica", ["--lam-k", "0"], "--lam-k"),
    ("train", ["--loss", "huber:-1"], "> 0"),
    ("train", ["--lam", "rs-tuned", "--lam-k", "0.1"], "tunes one ridge"),
    ("train", ["--loss", "logcosh", "--init", "multistart"], "multistart"),
])
def test_bad_loss_or_ridges_one_line_error(capsys, cmd, extra, msg):
    code, out, err = _run(capsys, "slr", cmd, "--alpha", "4", *extra)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and msg in lines[0], err


def test_train_with_a_loss_and_two_ridges_records_them(capsys):
    code, out, _ = _run(capsys, "slr", "train", "--alpha", "2", "--D", "40", "--seeds", "2", "--n-test", "500",
                        "--loss", "pseudo_huber:0.5", "--lam-k", "0.2", "--lam-v", "0.4", "--json")
    assert code == 0
    rows = json.loads(out)
    assert rows and all(r["loss"] == "pseudo_huber:0.5" and r["lam_k"] == 0.2 and r["lam_v"] == 0.4 for r in rows)
    assert all(r["status"] in ("converged", "stalled") for r in rows if r["row"] == "seed")


def test_replica_with_two_ridges_prints_them(capsys):
    code, out, _ = _run(capsys, "slr", "replica", "--alpha", "4", "--lam-k", "0.1", "--lam-v", "0.3", "--points",
                        "256", "--replicates", "2", "--branches", "informed", "--json")
    assert code == 0
    (row,) = json.loads(out)
    assert row["lam"] == 0.1 and row["lam_k"] == 0.1 and row["lam_v"] == 0.3 and "loss" not in row


def test_help_shows_the_loss_presets_with_examples(capsys):
    for cmd in ("replica", "train"):
        with pytest.raises(SystemExit):
            main(["slr", cmd, "--help"])
        out = capsys.readouterr().out
        assert "--loss" in out and "huber:DELTA" in out and "--lam-k" in out and "--loss huber:1" in out
