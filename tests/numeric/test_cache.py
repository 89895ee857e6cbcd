"""On-disk cache of generated solver sources."""
from __future__ import annotations

from attnlimits.derivations import attention_rmt as R
from attnlimits.numeric import models


def test_cache_written_reused_and_disabled(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLIMITS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(models, "_CACHE", {})
    fresh = models.compile_model(R.model, "numpy")
    files = list(tmp_path.glob("*attention_rmt*-numpy-*.py"))
    assert len(files) == 1 and "SOURCE_HASH" in files[0].read_text()
    # a second process (empty in-memory cache) loads the text from disk: same program, same numbers
    calls = []
    monkeypatch.setattr(models, "_CACHE", {})
    monkeypatch.setattr(models, "model_source", lambda *a, **k: calls.append(1) or "")
    cached = models.compile_model(R.model, "numpy")
    assert not calls
    a = fresh.curve(0.5, [0.1], a1=0.6, nu=0.45, snr=1, wk=[1], wq=[1])[0]["E_attention"]
    b = cached.curve(0.5, [0.1], a1=0.6, nu=0.45, snr=1, wk=[1], wq=[1])[0]["E_attention"]
    assert a == b
    monkeypatch.setenv("ATTNLIMITS_NO_CACHE", "1")
    assert models.cache_dir() is None


def test_unwritable_cache_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("ATTNLIMITS_CACHE_DIR", str(blocker / "sub"))
    monkeypatch.setattr(models, "_CACHE", {})
    mod = models.compile_model(R.model, "numpy")
    assert mod.curve(0.5, [0.1], a1=0.6, nu=0.45)[0]["E_attention"] > 0


def test_write_text_atomic(tmp_path):
    """The cache writer: whole file via a temporary and os.replace; False, with nothing left, where it cannot write."""
    from attnlimits.numeric.models import write_text_atomic

    target = tmp_path / "sub" / "m.py"
    assert write_text_atomic(target, "x = 1\n") is True
    assert target.read_text() == "x = 1\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.py"]
    blocker = tmp_path / "file"
    blocker.write_text("")
    bad = blocker / "m.py"  # a folder under a plain file: mkdir fails
    assert write_text_atomic(bad, "y = 2\n") is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "sub"]


def test_altered_cached_module_is_regenerated_not_executed(tmp_path, monkeypatch):
    """A cached generated module is sealed with its SHA-256: one altered after it was written (a code
    payload appended) is regenerated, never run; a folder others can write is not used."""
    import os

    monkeypatch.setenv("ATTNLIMITS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(models, "_CACHE", {})
    models.compile_model(R.model, "numpy")
    (path,) = tmp_path.glob("*attention_rmt*-numpy-*.py")
    marker = tmp_path / "PWNED"
    text = path.read_text()
    body, _, seal = text.rstrip("\n").rpartition("\n")
    path.write_text(body + f"\nimport pathlib; pathlib.Path({str(marker)!r}).touch()\n" + seal + "\n")
    monkeypatch.setattr(models, "_CACHE", {})
    mod = models.compile_model(R.model, "numpy")
    assert not marker.exists() and mod.curve(0.5, [0.1], a1=0.6, nu=0.45)[0]["E_attention"] > 0
    assert models.read_sealed(path) is not None  # rewritten, sealed again
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("ATTNLIMITS_CACHE_DIR", str(shared))
    assert models.cache_dir() is None
