"""One import package: a wheel built from the repository installs exactly ``attnlimits`` (and its
dist-info), with the layers as its subpackages; the explicit package list is complete."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("derivations", "symbolic", "numeric", "verify")


def _declared():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return cfg["packages"], cfg["package-dir"]


def test_package_list_is_complete():
    packages, mapping = _declared()
    assert mapping == {"attnlimits": "attnlimits", **{f"attnlimits.{n}": n for n in LAYERS}}
    found = {"attnlimits"}
    for layer in LAYERS:
        for init in (ROOT / layer).rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                found.add("attnlimits." + ".".join(init.parent.relative_to(ROOT).parts))
    assert set(packages) == found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel of the files git does not ignore, built in a copy: a build/ folder left in the checkout by an earlier
    build (files since moved or deleted) would otherwise slip into the wheel, and the test leaves nothing there."""
    import shutil

    out = tmp_path_factory.mktemp("wheel")
    src = tmp_path_factory.mktemp("src")
    tracked = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, timeout=60)
    if tracked.returncode == 0:
        for rel in filter(None, tracked.stdout.decode().split("\0")):
            if (ROOT / rel).is_file():
                (src / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, src / rel)
    else:  # not a git checkout (an unpacked sdist): build where it is
        src = ROOT
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                           "--wheel-dir", str(out), str(src)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (whl,) = out.glob("attnlimits-*.whl")
    return whl


def test_wheel_installs_one_top_level_package(wheel):
    with zipfile.ZipFile(wheel) as z:
        record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        paths = [line.split(",")[0] for line in z.read(record).decode().splitlines() if line.strip()]
        entry_points = z.read(record.replace("RECORD", "entry_points.txt")).decode()
    tops = {p.split("/")[0] for p in paths}
    assert tops == {"attnlimits", record.split("/")[0]}, tops
    for layer in LAYERS:
        assert f"attnlimits/{layer}/__init__.py" in paths
    sources = sum(1 for layer in LAYERS for p in (ROOT / layer).rglob("*.py") if "__pycache__" not in p.parts)
    assert sum(1 for p in paths if p.endswith(".py") and p.split("/")[1] in LAYERS) == sources
    assert "attnlimits = attnlimits.verify.cli:console_main" in entry_points
    assert "slr = attnlimits.derivations.slr.result:RESULT" in entry_points


def test_tests_run_against_this_checkout():
    """The package under test is this checkout's, through its editable install (each layer mapped to
    its folder here).  A second checkout needs its own environment (README, "Development"): with
    another checkout's install, the layers would come from there."""
    import attnlimits
    import attnlimits.numeric

    hint = "install this checkout in the interpreter that runs the tests: pip install -e ."
    assert Path(attnlimits.numeric.__file__).resolve() == ROOT / "numeric" / "__init__.py", hint
    assert Path(attnlimits.__file__).resolve() == ROOT / "attnlimits" / "__init__.py", hint


def test_a_test_run_leaves_no_folder_behind(tmp_path):
    """pytest with the project's settings, run in a folder, leaves nothing there but what the tests
    write under their own tmp_path: no empty .benchmarks/ (the pytest-benchmark plugin, where
    installed, is switched off in pyproject.toml), no cache folder with -p no:cacheprovider."""
    (tmp_path / "test_probe.py").write_text("def test_probe():\n    assert True\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
                           str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), "test_probe.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "__pycache__") == ["test_probe.py"]
