"""`attnlimits verify` and `attnlimits weights` command lines (issue: the verification layer)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from attnlimits.verify.cli import main


def run(args, capsys):
    rc = main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_verify_list_names_all_rmt_claims(capsys):
    rc, out, _ = run(["verify", "--list"], capsys)
    assert rc == 0
    for k in range(1, 21):
        assert f"V{k} " in out or f"V{k}\n" in out or f"V{k}  " in out
    assert "2506.18656" in out


def test_verify_unknown_claim_is_one_line(capsys):
    rc, _, err = run(["verify", "V99"], capsys)
    assert rc == 2 and "unknown claim" in err and len(err.strip().splitlines()) == 1
    rc, _, err = run(["verify", "--tag", "no-such-tag"], capsys)
    assert rc == 2 and "no claim has tag" in err


def test_verify_runs_selected_claims_and_writes_report(tmp_path, capsys):
    out = tmp_path / "rep"
    rc, stdout, err = run(["verify", "V1", "V3", "--quick", "--device", "cpu", "--out", str(out)], capsys)
    assert rc == 0, stdout + err
    assert "V1" in stdout and "V3" in stdout and "PASS" in stdout.upper()
    assert (out / "report.md").exists() and (out / "results.csv").exists()
    data = json.loads((out / "results.json").read_text())
    assert {c["claim"] for c in data["claims"]} == {"V1", "V3"}
    assert all(c["verdict"] == "pass" for c in data["claims"])
    assert "[1/2]" in err  # progress on stderr


def _bert_checkpoint(folder: Path, p=24, heads=3, layers=2, seed=0):
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    tensors = {}
    for layer in range(layers):
        for kind in ("query", "key"):
            tensors[f"encoder.layer.{layer}.attention.self.{kind}.weight"] = rng.normal(size=(p, p)).astype(np.float32)
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"num_attention_heads": heads, "hidden_size": p}))
    return folder / "model.safetensors"


def test_weights_command_on_synthetic_checkpoint(tmp_path, capsys):
    path = _bert_checkpoint(tmp_path)
    rc, out, _ = run(["weights", str(path), "--ranks", "0,1,2", "--out", str(tmp_path / "w")], capsys)
    assert rc == 0 and "layer" in out
    for name in ("weights.csv", "weights.json", "weights.png"):
        assert (tmp_path / "w" / name).exists()


def test_weights_command_bad_file(tmp_path, capsys, monkeypatch):
    """A checkpoint that does not read is one line, exit 2, and leaves no empty output folder: neither the
    default ./attnlimits-weights (run here in tmp_path, never in the checkout) nor a new --out."""
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "broken.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    for path in (str(bad), str(tmp_path / "missing.safetensors")):
        rc, _, err = run(["weights", path], capsys)
        assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
        rc, _, err = run(["weights", path, "--out", str(tmp_path / "new" / "deeper")], capsys)
        assert rc == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.safetensors"]
    (tmp_path / "mine").mkdir()  # a folder the user made is kept, empty or not
    assert run(["weights", str(bad), "--out", str(tmp_path / "mine")], capsys)[0] == 2
    assert (tmp_path / "mine").is_dir()


def test_citation_lists_the_references_of_the_claims_run(tmp_path, capsys):
    from attnlimits.verify.claims import citation

    refs = citation(["V1", "V4"])
    assert refs and "arXiv:2506.18656" in refs[0] and len(refs) == len(set(refs))
    assert citation([]) == []


def test_verify_writes_its_report_with_and_without_a_cache(tmp_path, capsys):
    for extra in ([], ["--cache", str(tmp_path / "c")]):
        out = tmp_path / ("rep" + str(len(extra)))
        rc, stdout, err = run(["verify", "V1", "--quick", "--device", "cpu", "--out", str(out), *extra], capsys)
        assert rc == 0, stdout + err
        assert (out / "results.json").exists() and "report:" in stdout
