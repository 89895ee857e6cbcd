"""Power of ``attnlimits verify --quick`` and ``attnlimits explore``: which planted errors they find.

For each plant of the catalogue (``benchmarks/mutants.py``; docs/power.md) a fresh process applies
the plant and then runs the command line in-process: ``verify --quick`` on the plant's claims (or
every claim with ``--all-claims``) and ``explore`` on the plant's properties at ``--budget`` points
each.  The same commands run once on unplanted code first: its failures are the false alarms, and a
claim counts as detecting a plant only if it passed (or was a discrepancy) on clean code and fails or
errs under the plant.  Prints the detection table (plant, found by which claim/property, at what
budget, in what time) and the false-alarm table, and writes them to ``--out`` (power.md, power.json).

Each run gets its own empty cache folder (``ATTNLIMITS_CACHE_DIR``): generated code is cached on disk
by source file, not by expression, so a planted run must neither read a clean entry nor leave a
planted one.  Python processes started by a planted run apply the plant at start (``$ATTNLIMITS_PLANT``
and a ``sitecustomize`` on ``PYTHONPATH``; :func:`attnlimits.symbolic.mutation.site_hook_source`).

Only the public command line is used (``attnlimits verify``'s ``results.json``, ``attnlimits explore``'s
exit status and summary lines), so the benchmark measures whatever verifier the checkout holds.
Usage (from the checkout root)::

    python benchmarks/bench_power.py --list
    python benchmarks/bench_power.py --plants rmt-ridge-c>1,slr-bayes-nu>2 --verify-only
    python benchmarks/bench_power.py --result rmt --explore-only --budget 20
    python benchmarks/bench_power.py --plants slr-replica-test-error --claims C15,C18 --budget 50
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CLEAN = "(unplanted)"

#: what a planted process runs: apply the plant (a no-op when the start-up hook already did), then the CLI
_CHILD = (
    "import sys\n"
    "sys.path.insert(0, {bench!r})\n"
    "name = sys.argv[1]\n"
    "if name:\n"
    "    import mutants\n"
    "    mutants.apply(name)\n"
    "from attnlimits.verify.cli import main\n"
    "raise SystemExit(main(sys.argv[2:]))\n"
)


def _env(plant: str, cache: Path, hook: Path | None) -> dict:
    env = dict(os.environ)
    env["ATTNLIMITS_CACHE_DIR"] = str(cache)
    env.pop("ATTNLIMITS_NO_CACHE", None)
    # attnlimits itself comes from the installed package (this checkout's editable install)
    paths = [str(hook)] if hook is not None and plant else []
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    if plant:
        env["ATTNLIMITS_PLANT"] = plant
    else:
        env.pop("ATTNLIMITS_PLANT", None)
    return env


#: --one-process: one worker runs every job in turn, each under ``mutants.planted`` (caches cleared and
#: a fresh cache folder per plant; the imports paid once); jobs and answers are JSON lines
_WORKER = (
    "import contextlib, io, json, os, sys, time\n"
    "sys.path.insert(0, {bench!r})\n"
    "import mutants\n"
    "from attnlimits.verify.cli import main\n"
    "proto = sys.stdout\n"
    "for line in sys.stdin:\n"
    "    job = json.loads(line)\n"
    "    buf = io.StringIO()\n"
    "    t0 = time.perf_counter()\n"
    "    os.environ.pop('ATTNLIMITS_PLANT', None)\n"
    "    if job['plant']:\n"
    "        os.environ['ATTNLIMITS_PLANT'] = job['plant']  # for the processes the run starts\n"
    "    ctx = mutants.planted(job['plant']) if job['plant'] else contextlib.nullcontext()\n"
    "    try:\n"
    "        with ctx, contextlib.redirect_stdout(buf):\n"
    "            rc = main(job['argv'])\n"
    "    except SystemExit as exc:\n"
    "        rc = exc.code\n"
    "    except BaseException as exc:  # report, and go on with the next job\n"
    "        rc = f'exception {{type(exc).__name__}}: {{exc}}'\n"
    "    proto.write(json.dumps({{'rc': rc, 'seconds': time.perf_counter() - t0, 'stdout': buf.getvalue()}}) + '\\n')\n"
    "    proto.flush()\n"
)


class _Worker:
    """The --one-process worker (started on first use)."""

    proc = None

    @classmethod
    def run(cls, plant, argv, work, hook, log):
        if cls.proc is None:
            cache = Path(tempfile.mkdtemp(prefix="cache-clean-", dir=work))
            env = _env("", cache, None)
            env["PYTHONPATH"] = os.pathsep.join([str(hook)] + ([env["PYTHONPATH"]] if env["PYTHONPATH"] else []))
            cls.errlog = open(work / "worker-stderr.log", "w")
            cls.proc = subprocess.Popen([sys.executable, "-c", _WORKER.format(bench=str(HERE))], cwd=str(ROOT),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=cls.errlog,
                                        text=True, env=env)
        cls.proc.stdin.write(json.dumps({"plant": plant, "argv": argv}) + "\n")
        cls.proc.stdin.flush()
        line = cls.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the --one-process worker ended; see {work / 'worker-stderr.log'}")
        ans = json.loads(line)
        log.write_text(f"$ attnlimits {' '.join(argv)}   # plant: {plant or 'none'}\n--- stdout\n{ans['stdout']}\n")
        return ans["rc"], ans["seconds"], ans["stdout"]


ONE_PROCESS = False


def run_cli(plant: str, argv: list, *, work: Path, hook: Path | None, timeout: float, log: Path):
    """Run ``attnlimits ARGV`` in a fresh process with ``plant`` applied ('' = unplanted), or in the
    --one-process worker.  Returns ``(exit status, seconds, stdout)``; the output is also kept in ``log``."""
    if ONE_PROCESS:
        return _Worker.run(plant, argv, work, hook, log)
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
    code = _CHILD.format(bench=str(HERE))
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", code, plant, *argv], cwd=str(ROOT), capture_output=True,
                              text=True, timeout=timeout, env=_env(plant, cache, hook))
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc = "timeout"
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
    seconds = time.perf_counter() - t0
    log.write_text(f"$ attnlimits {' '.join(argv)}   # plant: {plant or 'none'}\n--- stdout\n{out}\n--- stderr\n{err}")
    shutil.rmtree(cache, ignore_errors=True)
    return rc, seconds, out


def verify_run(plant: str, claims: list, args, work: Path, hook):
    """``verify --quick CLAIMS``: ``{claim: verdict}``, exit status, seconds."""
    out = work / f"verify-{_safe(plant or 'clean')}"
    argv = ["verify", "--quick", *claims, "--seed", str(args.seed), "--out", str(out)]
    rc, secs, _ = run_cli(plant, argv, work=work, hook=hook, timeout=args.timeout, log=out.with_suffix(".log"))
    verdicts = {}
    try:
        data = json.loads((out / "results.json").read_text())
        for c in data.get("claims", []):
            verdicts[c["claim"]] = str(c.get("verdict", "?")).lower()
    except (OSError, ValueError, KeyError):
        pass
    for c in claims:
        verdicts.setdefault(c, "not run" if rc != "timeout" else "timeout")
    return verdicts, rc, secs


def explore_run(plant: str, props: list, args, work: Path, hook):
    """``explore PROPS --budget N``: ``{property: status}`` (from the summary lines), exit status, seconds."""
    out = work / f"explore-{_safe(plant or 'clean')}"
    argv = ["explore", *props, "--budget", str(args.budget), "--seed", str(args.seed), "--out", str(out), "--csv"]
    if args.explore_time:
        argv += ["--time", str(args.explore_time)]
    rc, secs, stdout = run_cli(plant, argv, work=work, hook=hook, timeout=args.timeout, log=out.with_suffix(".log"))
    status = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in props:
            status[parts[0]] = parts[1]
    for p in props:
        status.setdefault(p, "timeout" if rc == "timeout" else f"no summary (exit {rc})")
    return status, rc, secs


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


FAILING = ("fail", "error")


def _caught(verdict: str, clean: str | None) -> bool:
    """A planted verdict counts as a detection when it fails or errs where the clean run did not."""
    return verdict in FAILING and (clean is None or clean not in FAILING)


def main(argv=None) -> int:
    sys.path.insert(0, str(HERE))  # mutants.py; attnlimits is the installed package, as in the child processes
    import mutants

    from attnlimits.symbolic.mutation import site_hook_source

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="examples:\n  python benchmarks/bench_power.py --list\n"
                                        "  python benchmarks/bench_power.py --plants rmt-ridge-c>1 --verify-only\n"
                                        "  python benchmarks/bench_power.py --result slr --explore-only --budget 20")
    ap.add_argument("--list", action="store_true", help="print the catalogue and exit")
    ap.add_argument("--plants", default=None, help="comma-separated plant names (default: all, or --result's)")
    ap.add_argument("--result", default=None, help="only the plants of this result (rmt, slr)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--verify-only", action="store_true")
    mode.add_argument("--explore-only", action="store_true")
    ap.add_argument("--budget", type=int, default=20, help="explore: points per property (default 20)")
    ap.add_argument("--explore-time", type=float, default=None, metavar="S", help="explore: --time of each run")
    ap.add_argument("--claims", default=None,
                    help="comma-separated claims to run for every plant (default: each plant's own claims)")
    ap.add_argument("--properties", default=None,
                    help="comma-separated properties to explore for every plant (default: each plant's own)")
    ap.add_argument("--all-claims", action="store_true", help="verify every registered claim for every plant")
    ap.add_argument("--max-claims", type=int, default=None, metavar="N",
                    help="only the first N of each plant's claims (the most direct come first)")
    ap.add_argument("--max-properties", type=int, default=None, metavar="N",
                    help="only the first N of each plant's properties")
    ap.add_argument("--no-clean", action="store_true", help="skip the unplanted run (no false-alarm table)")
    ap.add_argument("--one-process", action="store_true",
                    help="run every command in one worker process, each plant under mutants.planted (imports paid "
                         "once: for a loaded machine; no --timeout)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per command (default 3600)")
    ap.add_argument("--out", default="attnlimits-power", help="folder for power.md, power.json and the logs")
    args = ap.parse_args(argv)

    if args.list:
        for p in mutants.PLANTS_LIST:
            print(f"{p.name:<24} {p.result:<4} {p.kind:<11} {100 * p.size:4.1f} %  {p.region:<22} "
                  f"claims {','.join(p.claims) or '-'}; properties {','.join(p.properties) or '-'}\n"
                  f"{'':<24} {p.description}")
        return 0
    plants = mutants.PLANTS_LIST
    if args.plants:
        plants = [mutants.get(n.strip()) for n in args.plants.split(",") if n.strip()]
    if args.result:
        plants = [p for p in plants if p.result == args.result]
    if not plants:
        print("no plant selected", file=sys.stderr)
        return 2
    fixed_claims = [c for c in (args.claims or "").split(",") if c]
    fixed_props = [c for c in (args.properties or "").split(",") if c]

    def claims_of(p):
        return [] if args.all_claims else (fixed_claims or list(p.claims)[:args.max_claims])

    def props_of(p):
        return fixed_props or list(p.properties)[:args.max_properties]

    global ONE_PROCESS
    ONE_PROCESS = args.one_process
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="power-", dir=out))
    hook = work / "site"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(site_hook_source(str(HERE)))
    do_verify, do_explore = not args.explore_only, not args.verify_only

    union_claims = sorted({c for p in plants for c in claims_of(p)})
    union_props = sorted({c for p in plants for c in props_of(p)})
    clean_v, clean_e, clean_rows = {}, {}, []
    if not args.no_clean:
        if do_verify and (union_claims or args.all_claims):
            v, rc, secs = verify_run("", union_claims, args, work, hook)
            clean_v = v
            clean_rows.append(("verify --quick", ", ".join(union_claims) or "all", secs,
                               [f"{c}: {s}" for c, s in v.items() if s not in ("pass", "discrepancy")]))
            print(f"clean verify: {secs:.0f} s, " + (", ".join(f"{c}={s}" for c, s in v.items())), flush=True)
        if do_explore and union_props:
            e, rc, secs = explore_run("", union_props, args, work, hook)
            clean_e = e
            clean_rows.append((f"explore --budget {args.budget}", ", ".join(union_props), secs,
                               [f"{c}: {s}" for c, s in e.items() if s != "pass"]))
            print(f"clean explore: {secs:.0f} s, " + ", ".join(f"{c}={s}" for c, s in e.items()), flush=True)

    rows = []
    for p in plants:
        row = {"plant": p.name, "result": p.result, "kind": p.kind, "size": p.size, "region": p.region,
               "description": p.description}
        if do_verify and (claims_of(p) or args.all_claims):
            v, rc, secs = verify_run(p.name, claims_of(p), args, work, hook)
            row["verify"] = {"claims": v, "caught_by": [c for c, s in v.items() if _caught(s, clean_v.get(c))],
                             "seconds": round(secs, 1), "exit": rc}
        if do_explore and props_of(p):
            e, rc, secs = explore_run(p.name, props_of(p), args, work, hook)
            row["explore"] = {"properties": e, "caught_by": [c for c, s in e.items() if s == "fail"],
                              "budget": args.budget, "seconds": round(secs, 1), "exit": rc}
        rows.append(row)
        print(_line(row), flush=True)

    md = _markdown(rows, clean_rows, args)
    (out / "power.md").write_text(md)
    (out / "power.json").write_text(json.dumps({"plants": rows, "clean": {"verify": clean_v, "explore": clean_e},
                                                "budget": args.budget, "seed": args.seed}, indent=2, default=str))
    print()
    print(md)
    print(f"written: {out / 'power.md'}, {out / 'power.json'}; logs in {work}")
    return 0


def _line(row) -> str:
    parts = [f"{row['plant']}:"]
    if "verify" in row:
        v = row["verify"]
        parts.append(f"verify {'CAUGHT by ' + ','.join(v['caught_by']) if v['caught_by'] else 'missed'} "
                     f"({v['seconds']:.0f} s)")
    if "explore" in row:
        e = row["explore"]
        parts.append(f"explore@{e['budget']} {'CAUGHT by ' + ','.join(e['caught_by']) if e['caught_by'] else 'missed'} "
                     f"({e['seconds']:.0f} s)")
    return "  ".join(parts)


def _markdown(rows, clean_rows, args) -> str:
    L = ["## Detection", "",
         "| plant | result | size | region | verify --quick: caught by (claims run) | s | "
         f"explore: caught by (properties run, budget {args.budget}) | s |",
         "|---|---|---|---|---|---|---|---|"]
    nv = ne = cv = ce = 0
    for r in rows:
        v, e = r.get("verify"), r.get("explore")
        vtxt = etxt = "—"
        vs = es = ""
        if v is not None:
            nv += 1
            cv += bool(v["caught_by"])
            vtxt = (", ".join(v["caught_by"]) or "**missed**") + " (" + ", ".join(
                f"{c} {s}" for c, s in v["claims"].items()) + ")"
            vs = f"{v['seconds']:.0f}"
        if e is not None:
            ne += 1
            ce += bool(e["caught_by"])
            etxt = (", ".join(e["caught_by"]) or "**missed**") + " (" + ", ".join(
                f"{c} {s}" for c, s in e["properties"].items()) + ")"
            es = f"{e['seconds']:.0f}"
        L.append(f"| `{r['plant']}` | {r['result']} | {100 * r['size']:.0f} % | {r['region']} | {vtxt} | {vs} | "
                 f"{etxt} | {es} |")
    L += ["", f"Mutation score: verify {cv}/{nv}" + (f", explore {ce}/{ne}" if ne else "") + ".", ""]
    if clean_rows:
        L += ["## False alarms on unplanted code", "", "| run | checks | s | not passing |", "|---|---|---|---|"]
        for name, what, secs, bad in clean_rows:
            L.append(f"| {name} | {what} | {secs:.0f} | {'; '.join(bad) or 'none'} |")
        L.append("")
    return "\n".join(L)


if __name__ == "__main__":
    raise SystemExit(main())
