"""One file, one module.  The layers (``derivations/``, ``symbolic/``, ``numeric/``, ``verify/``)
become ``attnlimits.<layer>`` only through the installed mapping (``package-dir`` in
pyproject.toml): a wheel copies them into the package, an editable install maps each name to its
folder.  Nothing extends ``attnlimits.__path__`` at run time, so a file cannot load a second time
under another name (``numeric.x`` beside ``attnlimits.numeric.x``, or
``attnlimits.attnlimits.numeric.x``) with its own classes (a second ``ConvergenceError`` that an
``except`` written against the first does not catch).

The checks run in a fresh interpreter whose working directory is the checkout root (``python -c``
puts it first on ``sys.path``): the worst case, where the bare folder names are importable too.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("derivations", "symbolic", "numeric", "verify")

#: imports every module of the installed package (each layer walked with pkgutil over its mapped
#: folder), then reports the module names, the failed imports and every file loaded under two names
_IMPORT_ALL = r"""
import importlib, json, os, pkgutil, sys
import attnlimits
names, failed = ["attnlimits"], {}
# the package's own modules (not walked below: a subpackage here other than a layer is itself a finding)
top = ["attnlimits." + m.name for m in pkgutil.iter_modules(attnlimits.__path__)]
for name in top + [n for n in %(layers)r if n not in top]:
    importlib.import_module(name)
    names.append(name)
    pkg = sys.modules[name]
    if hasattr(pkg, "__path__") and name in %(layers)r:
        def onerror(sub):
            failed[sub] = repr(sys.exc_info()[1])
        for info in pkgutil.walk_packages(pkg.__path__, name + ".", onerror=onerror):
            try:
                importlib.import_module(info.name)
                names.append(info.name)
            except Exception as exc:
                failed[info.name] = repr(exc)
# the project's files: those of the checkout (cwd) and those of the package wherever it is installed
roots = [os.path.realpath(os.getcwd()) + os.sep] + [os.path.realpath(p) + os.sep
                                                   for n in names if hasattr(sys.modules[n], "__path__")
                                                   for p in sys.modules[n].__path__]
by_file = {}
for mod_name, mod in list(sys.modules.items()):
    f = getattr(mod, "__file__", None)
    if f and any(os.path.realpath(f).startswith(r) for r in roots):
        by_file.setdefault(os.path.realpath(f), []).append(mod_name)
print(json.dumps({"names": names, "failed": failed,
                  "paths": {n: os.path.realpath(sys.modules[n].__file__) for n in names},
                  "shared": {f: sorted(m) for f, m in by_file.items() if len(m) > 1}}))
""" % {"layers": [f"attnlimits.{layer}" for layer in LAYERS]}


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=_env())


def _env():
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")
    return env


def test_every_module_imports_under_one_name():
    proc = _run(_IMPORT_ALL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not report["failed"], f"modules of the installed package that do not import: {report['failed']}"
    # every source file of every layer was imported (the walk missed nothing)
    sources = {str(p.resolve()) for layer in LAYERS for p in (ROOT / layer).rglob("*.py")
               if "__pycache__" not in p.parts}
    imported = set(report["paths"].values())
    assert sources <= imported, (
        "source files the walk did not import (is the editable install this checkout's? "
        f"`pip install -e .` in this checkout's own venv): {sorted(sources - imported)[:10]}")
    assert not report["shared"], ("files loaded as two modules (each with its own classes): "
                                  + "; ".join(f"{f}: {m}" for f, m in report["shared"].items()))


def test_checkout_does_not_import_its_package_twice():
    """``attnlimits.attnlimits`` was the checkout's package folder seen through an extended
    ``__path__``; with the mapping as the only road it does not exist."""
    proc = _run("import attnlimits.attnlimits")
    assert proc.returncode != 0
    assert "ModuleNotFoundError: No module named 'attnlimits.attnlimits'" in proc.stderr, proc.stderr[-2000:]


def test_package_search_path_is_its_own_folder():
    proc = _run("import attnlimits, json; print(json.dumps(list(attnlimits.__path__)))")
    assert proc.returncode == 0, proc.stderr[-2000:]
    (path,) = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(path).name == "attnlimits", path


def test_a_checkout_paired_with_another_checkouts_layers_is_refused(tmp_path):
    """A checkout first on ``sys.path`` while the installed mapping points at another checkout: its
    ``attnlimits/__init__.py`` would run with the other checkout's layers.  Import stops with one
    message naming both folders and the fix (a venv with this checkout installed)."""
    import shutil

    other = tmp_path / "other-checkout"
    shutil.copytree(ROOT / "attnlimits", other / "attnlimits", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", other / "pyproject.toml")
    (other / "verify").mkdir()
    (other / "verify" / "__init__.py").write_text("")
    proc = subprocess.run([sys.executable, "-c", "import attnlimits"], cwd=other, capture_output=True, text=True,
                          timeout=120, env=_env())
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: attnlimits is imported from the checkout"), proc.stderr[-2000:]
    assert str(other.resolve()) in last and f"installed from {ROOT}" in last and "pip install --no-deps -e" in last
