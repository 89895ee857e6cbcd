"""Every column a command prints is documented in docs/output.md (issue "What a researcher sees", item 2).

Each command runs once at a small size through the CLI with ``--json``; a column passes when it is
in the page's table, or is ``X_error``/``X_se``/``X_sd``/``theory_X``/``rs_X``/``rhat_X``/
``start_gap_X`` of a documented ``X``.  The page is the only place the schema is written.
"""
import json
import re
from pathlib import Path

import pytest

from attnlimits.verify import cli

PAGE = Path(__file__).resolve().parents[1] / "docs" / "output.md"

COMMANDS = {
    "rmt": "rmt --activation tanh --c 0.5 --gamma 0.1,1 --snr 1 --wk 1,0 --wq 1,0",
    "rmt-digits": "rmt --activation relu --c 2 --gamma 0.1 --diagonal keep --kappa 0.991 --digits 20",
    "hermite": "hermite --activation relu",
    "population": "slr population --model spiked --nu 2 --L 3 --activation softmax,linear_uncentred,erf_learned",
    "population-limit": "slr population --model max --nu inf --L 1,2 --per-length --metric noisy --delta 0.1",
    "replica": "slr replica --model spiked --nu 2 --L 2 --activation linear_centred --alpha 4 --lam 1 --points 128",
    "replica-tune": "slr replica --model spiked --nu 2 --L 2 --activation linear_centred --alpha 4 --lam tune "
                    "--points 128",
    "bayes-optimal": "slr bayes-optimal --model spiked --nu 2 --L 2 --alpha 4 --points 1024",
    "amp": "slr amp --D 100 --n-test 200",
    "posterior": "slr posterior --nu 2 --L 2 --alpha 4 --D 30 --seeds 0 --sweeps 20 --burn-in 10",
    "bo-phase": "slr bo-phase --L 2 --nu 2 --alpha 1,4 --points 1024",
    "train": "slr train --model spiked --nu 2 --L 2 --activation softmax --alpha 4 --lam 0.1 --D 40 --seeds 2",
}

_PATTERNS = (r"(.+)_error", r"(.+)_se", r"(.+)_sd", r"theory_(.+)", r"rs_(.+)", r"rhat_(.+)", r"start_gap_(.+)")


def documented() -> set:
    names = set()
    for line in PAGE.read_text().splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            names |= set(re.findall(r"`([A-Za-z_0-9]+)`", first))
    return names


def is_documented(key, names) -> bool:
    if key in names:
        return True
    return any((m := re.fullmatch(p, key)) and is_documented(m.group(1), names) for p in _PATTERNS)


def test_page_documents_the_default_table_columns():
    from attnlimits.symbolic.result import discover_results

    names = documented()
    missing = {f"{r.name} {c.name}".strip(): [k for k in c.table if not is_documented(k, names)]
               for r in discover_results().values() for c in r.commands}
    assert not {k: v for k, v in missing.items() if v}, missing


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_json_column_is_documented(name, capsys):
    import shlex

    rc = cli.main(shlex.split(COMMANDS[name]) + ["--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    rows = json.loads(out)
    rows = rows if isinstance(rows, list) else [rows]
    keys = sorted({k for r in rows for k in r})
    names = documented()
    assert [k for k in keys if not is_documented(k, names)] == []
