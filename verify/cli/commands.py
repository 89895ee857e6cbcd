"""The handlers of the commands: a result's command and its export, and the engine's tools
``verify``, ``figure``, ``weights`` and ``hermite``.  Each takes the parsed arguments and returns the exit status;
bad input raises :class:`attnlimits.verify.cli.common.CLIError` (one line, exit 2)."""
from __future__ import annotations

import json
import os
import sys

from .common import CLIError, check_device, check_out_dir, collect_params, print_progress, registered_results
from .output import print_rows

__all__ = ["figure_command", "hermite_command", "need_export_result", "need_subcommand", "run_command", "run_export",
           "verify_command", "weights_command"]


def need_subcommand(args) -> int:
    """A result group run without its command: exit 2 with where to look."""
    raise CLIError(f"choose a command: attnlimits {args._result} --help")


def need_export_result(args) -> int:
    """``export`` run without a result: exit 2 with where to look."""
    raise CLIError("choose a result: attnlimits export --help")


def run_command(args) -> int:
    """Run a result's command and print its rows (the finished ones too on Ctrl-C, exit 130)."""
    res = registered_results()[args._result]
    cmd = res.command(args._command)
    params = cmd.parse(collect_params(args, cmd.parameters))
    if any(p.name == "device" for p in cmd.parameters):  # one device resolution, before any work
        from attnlimits.verify.torch_device import resolve_device

        resolve_device(params.get("device"))
    fmt = "json" if getattr(args, "json", False) else "csv" if getattr(args, "csv", False) else "table"
    rows: list = []
    try:
        for row in cmd.function()(params, progress=print_progress):  # a list, or rows yielded as they finish
            rows.append(row)
    except KeyboardInterrupt:
        # the finished rows are printed before the stop is reported (exit 130)
        if rows:
            print_rows(rows, cmd, params, fmt, args._threads, args.columns)
        label = f"{args._result} {args._command}".strip()
        print(f"attnlimits {label}: interrupted after {len(rows)} finished row(s)"
              + (" (printed above)" if rows else ""), file=sys.stderr)
        return 130
    if not rows:
        raise CLIError("nothing computed")
    print_rows(rows, cmd, params, fmt, args._threads, args.columns)
    return 0


def run_export(args) -> int:
    """Write a result's standalone solver (``attnlimits export RESULT``)."""
    from attnlimits.symbolic.result import InputError, resolve

    res = registered_results()[args._result]
    values = collect_params(args, res.export_parameters)
    params = {p.name: p.parse(values.get(p.name)) for p in res.export_parameters}
    if not str(args.output).strip():
        raise InputError("-o/--output must name a file")
    from attnlimits.verify.outputs import check_output_file

    check_output_file(args.output, option="-o/--output", suffixes=())  # before the solver is generated
    print(resolve(res.export)(params, args.output))
    return 0


# ------------------------------------------------------------------------------------------------
# tools


def hermite_command(args) -> int:
    """``attnlimits hermite``: the Hermite data of an activation."""
    import mpmath

    if not 5 <= args.dps <= 500:
        raise CLIError("--dps must be between 5 and 500")
    if len(args.activation) > 500:
        raise CLIError(f"--activation is too long ({len(args.activation)} characters; at most 500)")
    from attnlimits.symbolic.hermite import hermite_data_bounded

    h = hermite_data_bounded(args.activation, dps=args.dps)  # a user formula: in a process with a deadline
    with mpmath.workdps(args.dps):
        rec = {
            "activation": args.activation,
            "centred": str(h.centred),
            "a0": mpmath.nstr(h.a0, args.dps),
            "a1": mpmath.nstr(h.a1, args.dps),
            "a2": mpmath.nstr(h.a2, args.dps),
            "nu": mpmath.nstr(h.nu, args.dps),
            "b2": mpmath.nstr(h.b2, args.dps),
            "method": h.method,
            "parseval_residual": float(h.parseval_residual),
            # closed forms, one column each (exact_a0, exact_a1, …): rows are flat
            **{f"exact_{k}": str(v) for k, v in (h.exact or {}).items()},
        }
    if args.json:
        print(json.dumps(rec, indent=2))
    else:
        for k, v in rec.items():
            print(f"{k:>18}: {v}")
    return 0


def verify_command(args) -> int:
    """``attnlimits verify``: run the selected claims and write the report."""
    from attnlimits.verify.claims import select

    try:
        claims = select(args.claims, args.tag)
    except KeyError as exc:
        raise CLIError(exc.args[0]) from None
    if args.list:
        for c in claims:
            print(f"{c.name:<14} [{', '.join(c.tags)}] {c.title}\n{'':<14} {c.source}")
        return 0
    mode = "full" if args.full else "quick"
    from attnlimits.verify.comparison import LEVEL

    level = LEVEL if args.level is None else args.level
    if not 0 < level < 1:
        raise CLIError(f"--level must lie strictly between 0 and 1, got {args.level}")
    if args.workers is not None and args.workers < 1:
        raise CLIError(f"--workers must be >= 1, got {args.workers}")
    check_device(args.device)
    lock = None
    if not args.no_report:  # the report's folder checked and locked before any claim runs
        from attnlimits.verify.outputs import OutputLock

        check_out_dir(args.out, subdirs=("plots",), files=("report.md", "results.json", "results.csv"))
        lock = OutputLock(args.out, " ".join(["attnlimits verify", *args.claims]))
    if lock is None:
        return _verify_run(args, claims, mode, level)
    with lock:
        return _verify_run(args, claims, mode, level)


def _verify_run(args, claims, mode, level) -> int:
    import time

    from attnlimits.verify.claims import Context, citation, run_claims
    from attnlimits.verify.report import format_table, terminal_width, write_report
    from attnlimits.verify.torch_device import resolve_device

    try:
        device = str(resolve_device(args.device))
    except (RuntimeError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    t0 = time.perf_counter()

    def progress(msg):
        print(f"{time.perf_counter() - t0:7.1f}s {msg}", file=sys.stderr, flush=True)

    try:
        ctx = Context(mode, device=device, seed=args.seed, progress=progress, cache_dir=args.cache)
    except ValueError as exc:
        raise CLIError(f"--cache: {exc}") from None

    def meta_now(**extra):
        meta = {"mode": mode, "device": device, "seed": args.seed, "level": level, "threads": args._threads,
                "workers": workers,
                "elapsed_s": round(time.perf_counter() - t0, 1),
                "command": "attnlimits " + " ".join(sys.argv[1:]) if sys.argv else "attnlimits verify",
                "references": citation(claims), **extra}
        if ctx.disk is not None:
            meta["cache"] = ctx.disk.summary()
        if ctx.repeated:
            meta["repeated_computations"] = [{**r, "key": r["key"][:200]} for r in ctx.repeated]
        return meta

    told: set = set()

    def on_claim(done, not_run):
        """Each verdict as it comes (provisional: the final family is larger), and the report rewritten,
        so that a stop leaves a valid partial report."""
        for r in done:
            if r.claim not in told:
                told.add(r.claim)
                progress(f"  {r.claim}: {r.verdict} (provisional; {len(not_run)} claim(s) to go)")
        if not args.no_report:
            write_report(done, args.out, meta=meta_now(status="partial", not_run=not_run))

    from attnlimits.verify.claims.base import RunInterrupted
    from attnlimits.verify.claims.parallel import groups_of, portable, run_claims_parallel

    workers = args.workers if args.workers is not None else max(1, (os.cpu_count() or 1) // max(1, args._threads))
    try:
        if workers > 1 and len(groups_of(claims)) > 1 and all(portable(c) for c in claims):
            results, disks = run_claims_parallel(claims, ctx, workers=workers, threads=args._threads, level=level,
                                                 on_claim=on_claim)
            if ctx.disk is not None:
                ctx.disk.absorb(disks)
        else:
            results = run_claims(claims, ctx, level=level, on_claim=on_claim)
    except RunInterrupted as stop:
        if stop.results:
            print(format_table(stop.results, color=sys.stdout.isatty(), width=terminal_width()))
        if not args.no_report:
            path = write_report(stop.results, args.out, meta=meta_now(status="interrupted", not_run=stop.not_run))
            print(f"partial report: {path} ({len(stop.results)} claim(s) ran; not run: {', '.join(stop.not_run)})")
        raise KeyboardInterrupt from None
    print(format_table(results, color=sys.stdout.isatty(), width=terminal_width()))
    if not args.no_report:
        path = write_report(results, args.out, meta=meta_now(status="complete"))
        print(f"report: {path}")
    if ctx.disk is not None and ctx.disk.rejected:
        print(f"note: {len(ctx.disk.rejected)} file(s) in the cache {ctx.disk.folder} were not data entries of this "
              f"cache (first: {ctx.disk.rejected[0][0]}: {ctx.disk.rejected[0][1]}); they were not loaded and the "
              "results were recomputed", file=sys.stderr)
    if ctx.disk is not None and ctx.disk.stale:
        print(f"note: {len(ctx.disk.stale)} result(s) came from the cache {ctx.disk.folder} but were made by other "
              f"code (fingerprints {', '.join(ctx.disk.summary()['stale_fingerprints'])}; this code "
              f"{ctx.disk.fingerprint}); delete the folder to recompute them", file=sys.stderr)
    return 1 if any(r.verdict == "fail" for r in results) else 0


def figure_command(args) -> int:
    """``attnlimits figure``: list the panels, or draw the named ones."""
    from attnlimits.verify.figures import all_figures, make_figure

    FIGURES = all_figures()
    if args.list or not args.names:
        w = max(18, *(len(f.name) for f in FIGURES.values()))
        for f in FIGURES.values():
            print(f"{f.name:<{w}} {f.title}\n{'':<{w}} {f.source}; quick: about {f.quick_minutes:g} min on 2 cores")
        return 0 if args.list else 2
    unknown = [n for n in args.names if n not in FIGURES]
    if unknown:
        raise CLIError(f"no figure {unknown[0]!r}; figures: {', '.join(FIGURES)}")
    check_device(args.device)
    check_out_dir(args.out, files=[f"{n}{ext}" for n in args.names for ext in (".png", ".csv")])
    from attnlimits.verify.torch_device import resolve_device

    try:
        device = str(resolve_device(args.device))
    except (RuntimeError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    alphas = None
    if args.alpha is not None:
        try:
            alphas = [float(v) for v in args.alpha.split(",") if v.strip()]
        except ValueError:
            raise CLIError(f"--alpha must be comma-separated numbers, got {args.alpha!r}") from None
    if args.workers is not None and args.workers < 0:
        raise CLIError(f"--workers must be >= 0, got {args.workers}")
    for name in args.names:
        png, rows = make_figure(name, args.out, mode="full" if args.full else "quick", seed=args.seed, device=device,
                                progress=print_progress, seeds=args.seeds, alphas=alphas, workers=args.workers)
        print(f"{name}: {png} ({len(rows)} rows in {png.with_suffix('.csv')})")
    return 0


def _int_list(text, name):
    if text is None:
        return None
    try:
        return [int(v) if v.strip() != "d_h" else "d_h" for v in text.split(",") if v.strip()]
    except ValueError:
        raise CLIError(f"{name} must be comma-separated integers, got {text!r}") from None


def weights_command(args) -> int:
    """``attnlimits weights``: the diagnostics of a local checkpoint."""
    from attnlimits.verify.weights import DEFAULT_RANKS, CheckpointError, analyze_checkpoint

    ranks = _int_list(args.ranks, "--ranks") or DEFAULT_RANKS
    layers = _int_list(args.layers, "--layers")
    if args.heads is not None and args.heads < 1:
        raise CLIError(f"--heads must be a positive integer, got {args.heads}")
    check_out_dir(args.out, files=("weights.csv", "weights.json", "weights.png"))
    try:
        rep = analyze_checkpoint(
            args.checkpoint, ranks=ranks, fold_layernorm=args.fold_layernorm, per_head=not args.no_per_head,
            layout=args.layout, n_heads=args.heads, layers=layers,
            progress=lambda m: print(m, file=sys.stderr, flush=True),
        )
    except CheckpointError as exc:
        raise CLIError(str(exc)) from None
    print(rep.format_table())
    paths = rep.write(args.out)
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0

