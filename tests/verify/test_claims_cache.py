"""`attnlimits verify --cache DIR`: expensive claim runs kept on disk so that a stopped run resumes."""
from __future__ import annotations

import json
import os
import pickle

import numpy as np

from attnlimits.verify.claims.base import Context, DiskCache
from attnlimits.verify.cli import main


class _Counter:
    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return {"E_test": 0.378, "theta": np.arange(4.0)}


KEY = ("slr-erm", "softmax", "spiked", 2.0, "2", 4.0, 0.1, 400, 3, "R5", "lbfgs", (("delta", 0.1),))


def test_persisted_result_is_reused_by_a_new_run(tmp_path):
    fn = _Counter()
    msgs = []
    a = Context("full", device="cpu", seed=0, cache_dir=tmp_path)
    first = a.cached(KEY, fn, persist=True)
    b = Context("full", device="cpu", seed=0, cache_dir=tmp_path, progress=msgs.append)
    second = b.cached(KEY, fn, persist=True)
    assert fn.calls == 1
    assert np.array_equal(first["theta"], second["theta"])
    assert b.disk.summary()["hits"] == 1 and b.disk.summary()["stale_hits"] == 0
    assert any("from the cache" in m for m in msgs)


def test_cache_is_keyed_by_mode_seed_and_device(tmp_path):
    fn = _Counter()
    for mode, seed, device in [("full", 0, "cpu"), ("quick", 0, "cpu"), ("full", 1, "cpu"), ("full", 0, "cuda")]:
        Context(mode, device=device, seed=seed, cache_dir=tmp_path).cached(KEY, fn, persist=True)
    assert fn.calls == 4


def test_without_persist_or_folder_nothing_is_written(tmp_path):
    fn = _Counter()
    Context("full", device="cpu", cache_dir=tmp_path).cached(KEY, fn)  # persist not asked
    Context("full", device="cpu").cached(KEY, fn, persist=True)  # no folder
    assert fn.calls == 2 and not list(tmp_path.iterdir())


def test_entries_of_other_code_are_used_and_counted(tmp_path):
    fn = _Counter()
    Context("full", device="cpu", cache_dir=tmp_path).cached(KEY, fn, persist=True)
    (path,) = tmp_path.glob("*.json")
    entry = json.loads(path.read_text())
    entry["fingerprint"] = "0123456789abcdef"
    path.write_text(json.dumps(entry))
    c = Context("full", device="cpu", cache_dir=tmp_path)
    c.cached(KEY, fn, persist=True)
    assert fn.calls == 1
    s = c.disk.summary()
    assert s["stale_hits"] == 1 and s["stale_fingerprints"] == ["0123456789abcdef"]


def test_unreadable_entry_is_recomputed_and_unpicklable_value_stays_in_memory(tmp_path):
    fn = _Counter()
    Context("full", device="cpu", cache_dir=tmp_path).cached(KEY, fn, persist=True)
    (path,) = tmp_path.glob("*.json")
    path.write_bytes(b"not json")
    Context("full", device="cpu", cache_dir=tmp_path).cached(KEY, fn, persist=True)
    assert fn.calls == 2
    c = Context("full", device="cpu", cache_dir=tmp_path)
    value = c.cached(("other",), lambda: (lambda: 1), persist=True)  # a lambda is not data
    assert callable(value) and not list(tmp_path.glob("*.tmp*"))
    assert DiskCache(tmp_path).put((object(),), 1) is False  # a key without a stable repr


def test_verify_cli_cache_option(tmp_path, capsys):
    rc = main(["verify", "V1", "--quick", "--device", "cpu", "--cache", str(tmp_path / "c"),
               "--out", str(tmp_path / "rep")])
    out = capsys.readouterr()
    assert rc == 0, out.out + out.err
    meta = json.loads((tmp_path / "rep" / "results.json").read_text())["meta"]
    assert meta["cache"]["folder"] == str(tmp_path / "c") and len(meta["cache"]["fingerprint"]) == 16
    blocker = tmp_path / "file"
    blocker.write_text("x")
    rc = main(["verify", "V1", "--quick", "--cache", str(blocker / "sub"), "--no-report"])
    err = capsys.readouterr().err
    assert rc == 2 and "--cache" in err and len(err.strip().splitlines()) == 1


class _Boom:
    """Unpickling this runs a shell command (the attack a shared cache folder must not allow)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_planted_pickles_and_object_arrays_are_never_loaded(tmp_path):
    """Crafted files in a --cache folder: nothing runs, the entries are recomputed and counted."""
    fn = _Counter()
    Context("full", device="cpu", cache_dir=tmp_path).cached(KEY, fn, persist=True)
    (entry,) = tmp_path.glob("*.json")
    marker = tmp_path / "PWNED"
    # 1. a pickle beside the entries and in place of the value's arrays
    (tmp_path / "0123.pkl").write_bytes(pickle.dumps(_Boom(marker)))
    npz = entry.with_suffix(".npz")
    with open(npz, "wb") as fh:  # an object array (np.load would need allow_pickle to read it)
        np.save(fh, np.array([_Boom(marker)], dtype=object), allow_pickle=True)
    c = Context("full", device="cpu", cache_dir=tmp_path)
    value = c.cached(KEY, fn, persist=True)
    assert not marker.exists() and fn.calls == 2 and np.array_equal(value["theta"], np.arange(4.0))
    s = c.disk.summary()
    assert s["rejected"] == 2 and any(".pkl" in e for e in s["rejected_entries"])
    # 2. an entry naming a class outside the package is refused, not imported
    data = json.loads(entry.read_text())
    data["value"] = {"__dataclass__": "os:system", "fields": {}}
    data["arrays"] = False
    entry.write_text(json.dumps(data))
    c = Context("full", device="cpu", cache_dir=tmp_path)
    c.cached(KEY, fn, persist=True)
    assert fn.calls == 3 and c.disk.summary()["rejected"] >= 2 and not marker.exists()


def test_project_dataclasses_round_trip(tmp_path):
    """The cached types of the claims (training results, RS fixed points) come back field for field."""
    import torch

    from attnlimits.verify.slr.train import TrainResult

    res = TrainResult(seeds=[{"E_test": 0.4, "status": "converged"}], summary={"E_test": 0.4, "seeds": 1},
                      settings={"L": (2, 3), 4.0: "x"}, theta=torch.arange(6.0).reshape(2, 3))
    d = DiskCache(tmp_path)
    assert d.put(("k",), (res, [1.5, float("nan")]))
    hit, (back, extra) = d.get(("k",))
    assert hit and back.seeds == res.seeds and back.settings == res.settings
    assert torch.equal(back.theta, res.theta) and extra[0] == 1.5 and extra[1] != extra[1]


def test_entry_of_the_wrong_type_is_recomputed_not_used(tmp_path):
    """A valid entry holding a value of another type (a planted or stale file) is rejected, counted and
    recomputed on every run that reads it — never handed to the claim, never failing it."""
    fn = _Counter()
    a = Context("full", device="cpu", seed=0, cache_dir=tmp_path)
    a.cached(KEY, lambda: [1, 2, 3], persist=True)  # the file now holds a list under this key
    b = Context("full", device="cpu", seed=0, cache_dir=tmp_path)
    value = b.cached(KEY, fn, persist=True, expect=dict)
    assert fn.calls == 1 and isinstance(value, dict)
    assert b.disk.summary()["rejected"] == 1 and b.disk.summary()["hits"] == 0
    c = Context("full", device="cpu", seed=0, cache_dir=tmp_path)  # the recomputed value replaced the entry
    assert c.cached(KEY, fn, persist=True, expect=lambda v: "E_test" in v)["E_test"] == 0.378
    assert fn.calls == 1 and c.disk.summary()["hits"] == 1
