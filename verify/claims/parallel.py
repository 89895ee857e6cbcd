"""Claims run in worker processes (``attnlimits verify --workers N``), with the serial run's results.

A claim's draws come from seeds derived from the master seed and its own name
(:meth:`Context.seed_for`), so claims are independent of each other and of their order — except
where they reuse one another's cached computations through the run's :class:`Context`.  Such claims
name one ``group`` in their declaration (:class:`Claim`); a group runs in one worker, in registry
order, with one :class:`Context`, so every claim sees exactly what a serial run gives it and the
verdicts and numbers are the same.  The family rule (Holm over every check with an SE) is applied
once, in the parent, to the results in registry order.

Groups are handed to the workers longest first, by the measured seconds of each claim in quick mode
(:data:`attnlimits.verify.claims.costs.QUICK_SECONDS`, written by ``benchmarks/bench_verify.py``;
full mode and claims it does not list use the same figures, or the median).  Workers are fresh
processes forked from a server that has imported the claims but run nothing (``forkserver``; torch's
thread pools do not survive a fork of a process that has used them), or fresh interpreters (``spawn``)
where there is no fork; each applies the run's thread setting, and its progress lines go to stderr with
the claim's name.
"""
from __future__ import annotations

import multiprocessing
import statistics
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from .base import Claim, ClaimResult, Context, RunInterrupted, decide, run_one

__all__ = ["groups_of", "portable", "repeated_computations", "run_claims_parallel"]


def groups_of(claims: list[Claim]) -> list[list[Claim]]:
    """``claims`` partitioned by their ``group`` (a claim without one is alone), each group in the
    order of ``claims``; groups in the order of their first claim."""
    out: dict[str, list[Claim]] = {}
    for c in claims:
        out.setdefault(c.group or f"\0{c.name}", []).append(c)
    return list(out.values())


def portable(claim: Claim) -> bool:
    """Whether a worker process finds ``claim``: its run function lives in a claims module of a result that
    :func:`attnlimits.symbolic.result.discover_results` finds (what a fresh process loads).  A claim registered
    at run time (a test's, a result passed by hand) is not; ``verify`` then runs the selection in one process."""
    mod = getattr(claim.run, "__module__", "") or ""
    return any(mod == m or mod.startswith(m + ".") for m in _claims_modules())


def _claims_modules() -> tuple:
    from attnlimits.symbolic.result import discover_results

    out = []
    for res in discover_results().values():
        mods = res.claims if isinstance(res.claims, (tuple, list)) else (res.claims,)
        out += [m for m in mods if m]
    return tuple(out)


def _cost(group: list[Claim], mode: str) -> float:
    from .costs import QUICK_SECONDS

    median = statistics.median(QUICK_SECONDS.values()) if QUICK_SECONDS else 1.0
    return sum(QUICK_SECONDS.get(c.name, median) for c in group)


def _context():
    """``forkserver`` where the platform has it, with the claims imported once in the server (workers fork
    from a process that has loaded everything but run nothing: no torch thread pool to break), else
    ``spawn``."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["attnlimits.verify.claims", "attnlimits.verify.claims.parallel"])
        return ctx
    return multiprocessing.get_context("spawn")


def _run_group(names: list[str], mode: str, device: str, seed: int, cache_dir, threads) -> tuple:
    """In a worker: run the claims ``names`` in order with one Context; their undecided results and the
    disk cache's counters."""
    from attnlimits.numeric.threads import apply_threads, resolve_threads

    from . import load_claims

    apply_threads(resolve_threads(threads))
    registry = load_claims()
    t0 = time.perf_counter()
    current = [names[0]]

    def progress(msg):
        print(f"{time.perf_counter() - t0:7.1f}s [{current[0]}] {msg.strip()}", file=sys.stderr, flush=True)

    ctx = Context(mode, device=device, seed=seed, progress=progress, cache_dir=cache_dir)
    results = []
    for name in names:
        current[0] = name
        results.append(run_one(registry[name], ctx))
    disk = None if ctx.disk is None else ctx.disk.counters()
    return results, disk, ctx.computed


def run_claims_parallel(claims: list[Claim], ctx: Context, *, workers: int, threads=None,
                        level: float | None = None, on_claim=None) -> tuple[list[ClaimResult], list[dict]]:
    """:func:`run_claims` on ``workers`` processes: the same results, decided as one family in the order of
    ``claims``.  Returns the results and the disk-cache counters of the workers (empty without a cache), for
    :meth:`DiskCache.absorb`.

    ``ctx`` gives the mode, device, seed, cache folder and the progress callable (told when a claim
    starts and ends); ``threads`` is applied in each worker.  ``on_claim(results, not_run)`` is called as
    claims finish, with the finished ones decided as a provisional family in registry order.  Ctrl-C stops
    the workers and raises :class:`RunInterrupted` with the finished claims."""
    order = {c.name: i for i, c in enumerate(claims)}
    quoted = {c.name: c.quoted for c in claims}
    groups = sorted(groups_of(claims), key=lambda g: -_cost(g, ctx.mode))
    done: dict[str, ClaimResult] = {}
    disks: list[dict] = []
    by_key: dict[str, list[tuple[str, float]]] = {}
    cache_dir = None if ctx.disk is None else str(ctx.disk.folder)

    def finished():
        rs = sorted(done.values(), key=lambda r: order[r.claim])
        return rs, [quoted[r.claim] for r in rs]

    n_workers = max(1, min(int(workers), len(groups)))
    pool = ProcessPoolExecutor(max_workers=n_workers, mp_context=_context())
    pending = {}
    try:
        for g in groups:
            fut = pool.submit(_run_group, [c.name for c in g], ctx.mode, ctx.device, ctx.seed, cache_dir, threads)
            pending[fut] = g
        ctx.progress(f"{len(claims)} claim(s) in {len(groups)} group(s) on {n_workers} worker processes")
        while pending:
            ready, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in ready:
                g = pending.pop(fut)
                try:
                    results, disk, computed = fut.result()
                except Exception as exc:  # noqa: BLE001 - a worker that died: its claims fail, named
                    results, disk = [ClaimResult(c.name, c.title, "fail", notes=f"error: the worker running "
                                                 f"{', '.join(x.name for x in g)} stopped: {type(exc).__name__}: {exc}")
                                     for c in g], None, {}
                    for r, c in zip(results, g):
                        r.source, r.tags, r.mode = c.source, tuple(c.tags), ctx.mode
                if disk:
                    disks.append(disk)
                for key, (claim, seconds) in computed.items():
                    by_key.setdefault(key, []).append((claim, seconds))
                for r in results:
                    done[r.claim] = r
                    ctx.progress(f"[{len(done)}/{len(claims)}] {r.claim} done ({r.elapsed:.1f} s)")
                if on_claim is not None and len(done) < len(claims):
                    rs, q = finished()
                    not_run = [c.name for c in claims if c.name not in done]
                    on_claim(decide(rs, q, level), not_run)
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.terminate()
        rs, q = finished()
        raise RunInterrupted(decide(rs, q, level), [c.name for c in claims if c.name not in done]) from None
    pool.shutdown(wait=True)
    ctx.repeated = repeated_computations(by_key, min_seconds=REPEAT_NOTED_S)
    if ctx.repeated:
        lost = sum(r["seconds"] for r in ctx.repeated)
        ctx.progress(f"note: {len(ctx.repeated)} cached computation(s) ran in more than one worker ({lost:.1f} s "
                     f"repeated; first: {', '.join(ctx.repeated[0]['claims'])}): give those claims one group")
    rs, q = finished()
    return decide(rs, q, level, provisional=False), disks


#: a computation repeated across workers is noted when its repetition cost more than this (seconds): the
#: cached Hermite coefficients and generated theory functions, repeated in every worker, cost milliseconds
REPEAT_NOTED_S = 0.5


def repeated_computations(by_key: dict, min_seconds: float = 0.0) -> list[dict]:
    """The cached computations that ran in more than one worker (``by_key``: ``repr(key)`` → the
    (claim, seconds) of each run), costliest first: each with its key, the claims that computed it and the
    seconds spent beyond the first run.  The results are the same (keys carry every input and seed), but
    the time is spent twice: the claims belong in one ``group``."""
    out = [{"key": key, "claims": sorted({c for c, _ in runs}),
            "seconds": sum(sorted(s for _, s in runs)[:-1])}
           for key, runs in by_key.items() if len(runs) > 1]
    return sorted((r for r in out if r["seconds"] > min_seconds), key=lambda r: -r["seconds"])
