"""The example plug-in (``examples/ridge``, docs/extending.md) in process: registered like an installed
result, its solver matches an independent closed form, its export reproduces it, and it reaches the
command line, show and figure.  CI also installs it into a fresh environment and runs it through the
results contract, verify, explore, show, export and figure (``.ci/run``)."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ridge"


@pytest.fixture(scope="module")
def ridge():
    from attnlimits.symbolic import result as R

    sys.path.insert(0, str(EXAMPLE))
    from attnlimits_ridge.result import RESULT

    R.register_result(RESULT)
    yield RESULT
    R._EXTRA.pop(RESULT.name, None)
    sys.path.remove(str(EXAMPLE))


def _closed_form(g: float, lam: float, r2: float = 1.0, s2: float = 0.25) -> float:
    """Independent route: the Marchenko–Pastur Stieltjes transform in closed form (the root of
    γ z m² − (1 − γ − z) m + 1 = 0 that is positive on z < 0), differentiated by mpmath at 30 digits."""
    import mpmath

    with mpmath.workdps(30):
        g, lam = mpmath.mpf(g), mpmath.mpf(lam)

        def m(z):
            b = 1 - g - z
            return (b - mpmath.sqrt(b * b - 4 * g * z)) / (2 * g * z)

        mp = mpmath.diff(m, -lam)
        return float(r2 * lam**2 * mp + s2 * g * (m(-lam) - lam * mp))


@pytest.mark.parametrize("g, lam", [(0.3, 0.1), (0.5, 0.1), (1.0, 1.0), (2.0, 0.1), (4.0, 0.05), (0.3, 3.0)])
def test_solver_matches_the_closed_form(ridge, g, lam):
    import attnlimits as al

    row = al.run("ridge", gamma=[g], lam=lam, progress=False)[0]
    assert row["test_error"] == pytest.approx(_closed_form(g, lam), rel=1e-11)


def test_cli_show_figure_and_export(ridge, tmp_path, capsys):
    from attnlimits.verify.cli import main
    from attnlimits.verify.figures import all_figures

    assert main(["ridge", "--gamma", "0.5,2", "--lam", "0.1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert main(["show", "ridge", "system"]) == 0
    assert "kappa" in capsys.readouterr().out
    assert "ridge-risk-gamma" in all_figures()
    path = tmp_path / "ridge_solver.py"
    assert main(["export", "ridge", "-o", str(path)]) == 0
    proc = subprocess.run([sys.executable, str(path), "--gamma", "0.5,2", "--lam", "0.1", "--json"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [r["test_error"] for r in json.loads(proc.stdout)] == pytest.approx([r["test_error"] for r in rows],
                                                                                 rel=1e-12)
    assert main(["ridge", "--gamma", "-1"]) == 2  # the declared check, one line
    assert "--gamma must be > 0" in capsys.readouterr().err
