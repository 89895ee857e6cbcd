"""The ``attnlimits`` command line.

Subcommands
-----------
``rmt``      interpolation error of nonlinear attention vs ridge (attention_rmt.md), any precision
``export``   write a standalone solver file (numpy or mpmath only)
``hermite``  Hermite data (a0, a1, a2, nu, b^2) of an activation
``verify``   check the registered claims against Monte Carlo; write a report
``weights``  Assumption-1 diagnostics of a local pretrained checkpoint
``slr``      single-location regression (slr.md): ``slr population`` optimal population risks

Every subcommand has ``--help`` with an example.  Bad input gives one line on stderr and exit 2.
"""
from __future__ import annotations

import argparse
import json
import sys
import textwrap

__all__ = ["main", "build_parser"]


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attnlimits",
        description="Symbolic-numeric derivation and verification of high-dimensional attention theory.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_examples(
            "attnlimits rmt --activation tanh --c 0.5 --gamma 0.01,0.1,1 --snr 1 --wk 1,0,0 --wq 1,0,0",
            "attnlimits export rmt --activation tanh --backend numpy -o rmt_tanh.py",
            "attnlimits hermite --activation relu",
            "attnlimits verify --quick",
            "attnlimits weights path/to/model.safetensors",
            "attnlimits slr population --model spiked --nu 2 --L 3 --json",
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    # --- slr -----------------------------------------------------------------------------------
    p = sub.add_parser(
        "slr",
        help="single-location regression: population risks of attention variants vs Bayes",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Single-location regression (spec slr.md; Duranthon et al., arXiv:2509.21936).",
        epilog=_examples("attnlimits slr population --model spiked --nu 2 --L 3 --json"),
    )
    slr_sub = p.add_subparsers(dest="slr_command", metavar="WHAT")
    _slr_population_parser(slr_sub)

    # --- rmt -----------------------------------------------------------------------------------
    p = sub.add_parser(
        "rmt",
        help="limiting interpolation error of attention vs ridge regression",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.dedent(
            """\
            Limiting interpolation error E(gamma) of nonlinear attention (spec attention_rmt.md §6)
            and of ridge regression (Proposition 2, §7) for p/n -> c.  Tokens X = mu y^T + Z with
            SNR = ||mu||^2; W = I + w_K w_Q^T with w_K, w_Q given by coordinates in an orthonormal
            basis whose first vector is mu/||mu||.  E = -gamma^2 d ybar/d gamma, with the derivative
            from the implicit-function theorem.  float64 by default; --digits N uses mpmath."""
        ),
        epilog=_examples(
            "attnlimits rmt --activation tanh --c 0.5 --gamma 0.01,0.1,1 --snr 1 --wk 1,0,0 --wq 1,0,0 --json",
            "attnlimits rmt --activation relu --c 2 --gamma 0.1 --diagonal keep --kappa 0.991",
            "attnlimits rmt --activation '0.6*t + 0.3*(t**2-1)/sqrt(2)' --c 0.5 --gamma 1 --digits 40",
        ),
    )
    _rmt_arguments(p)
    p.add_argument("--digits", type=int, default=None, help="compute with mpmath at N significant digits and print N digits")

    # --- export --------------------------------------------------------------------------------
    p = sub.add_parser(
        "export",
        help="write a standalone solver (.py) that needs only numpy or mpmath",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write a standalone, readable Python solver generated from the SymPy equations, "
        "specialised to one activation (its Hermite data are baked in).",
        epilog=_examples(
            "attnlimits export rmt --activation tanh --backend numpy -o rmt_tanh.py",
            "python rmt_tanh.py --c 0.5 --gamma 0.01,0.1 --snr 1 --wk 1,0 --wq 1,0 --json",
            "attnlimits export rmt --activation erf --backend mpmath -o rmt_erf_mp.py",
        ),
    )
    p.add_argument("result", choices=["rmt"], help="which result to export")
    p.add_argument("--activation", default="tanh", help="built-in name or SymPy expression in t (default tanh)")
    p.add_argument("--backend", choices=["numpy", "mpmath"], default="numpy")
    p.add_argument("-o", "--output", required=True, help="file to write")

    # --- verify --------------------------------------------------------------------------------
    p = sub.add_parser(
        "verify",
        help="check every registered claim against Monte Carlo; write a report",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.dedent(
            """\
            Run the registered claims (theory vs Monte Carlo, with k-SE comparison rules), print a
            table (claim, theory, MC +- SE, verdict), and write a report folder: report.md,
            results.json, results.csv and plots/*.png.  Exit status 1 when any claim fails; a
            'discrepancy' (a quoted statement the derivation contradicts) is reported, not a failure."""
        ),
        epilog=_examples(
            "attnlimits verify --quick",
            "attnlimits verify --list",
            "attnlimits verify V4 V9 --out my-report",
            "attnlimits verify --tag alignment --full --device cuda",
        ),
    )
    p.add_argument("claims", nargs="*", metavar="CLAIM", help="claim names (default: all)")
    p.add_argument("--tag", action="append", default=[], help="select claims with this tag (repeatable)")
    p.add_argument("--list", action="store_true", help="list the claims with their tags and sources")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small sizes (default): minutes on 2 CPU cores")
    mode.add_argument("--full", action="store_true", help="the paper's sizes (n up to 4000)")
    p.add_argument("--device", default="auto", help="torch device: auto (CUDA when available), cpu, cuda")
    p.add_argument("--seed", type=int, default=0, help="master seed of all Monte Carlo draws (default 0)")
    p.add_argument("--out", default="attnlimits-report", help="report folder (default ./attnlimits-report)")
    p.add_argument("--no-report", action="store_true", help="print the table only")

    # --- weights -------------------------------------------------------------------------------
    p = sub.add_parser(
        "weights",
        help="how close W_K^T W_Q of a local checkpoint is to scaled identity + low rank",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.dedent(
            """\
            Diagnostics of Assumption 1 (spec attention_rmt.md §13) on a local checkpoint
            (safetensors or a torch state dict; BERT- or GPT-2-style names; nothing is downloaded):
            per layer and head, B_h = sqrt(p/d_h) W_K^hT W_Q^h and the layer sum; singular values,
            symmetric part, and the best identity-plus-rank-r fit residual rho_r."""
        ),
        epilog=_examples(
            "attnlimits weights path/to/model.safetensors",
            "attnlimits weights path/to/gpt2/ --layers 0,11 --fold-layernorm --out gpt2-weights",
        ),
    )
    p.add_argument("checkpoint", metavar="FILE", help="checkpoint file or folder")
    p.add_argument("--ranks", default=None, help="comma-separated ranks r of the fits (default 0,1,2,4,8,16,d_h,64)")
    p.add_argument("--layers", default=None, help="comma-separated layer indices (default: all)")
    p.add_argument("--heads", type=int, default=None, help="number of heads when there is no config.json")
    p.add_argument("--layout", choices=["auto", "bert", "gpt2"], default="auto")
    p.add_argument("--fold-layernorm", action="store_true", help="fold the LayerNorm gain into B")
    p.add_argument("--no-per-head", action="store_true", help="layer sums only (faster)")
    p.add_argument("--out", default="attnlimits-weights", help="output folder for CSV/JSON/PNG (default ./attnlimits-weights)")

    # --- hermite -------------------------------------------------------------------------------
    p = sub.add_parser(
        "hermite",
        help="Hermite coefficients of an activation",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Hermite data of a centred activation (spec attention_rmt.md §4.1): a0 (removed), "
        "a1 = E[xi f], a2, nu = E f^2, b^2 = nu - a1^2, and the Parseval residual.",
        epilog=_examples("attnlimits hermite --activation relu", "attnlimits hermite --activation 'sin(t)' --dps 50 --json"),
    )
    p.add_argument("--activation", required=True, help="built-in name or SymPy expression in t")
    p.add_argument("--dps", type=int, default=30, help="decimal digits (default 30)")
    p.add_argument("--json", action="store_true")
    return parser


_SLR_DEFAULT_ACTS = "softmax,linear_uncentred,erf_learned,softplus_norm"


def _slr_population_parser(sub):
    from derivations.slr import ACTIVATIONS

    names = "\n".join(f"  {a.name:<20} {a.description}" for a in ACTIVATIONS.values())
    p = sub.add_parser(
        "population",
        help="optimal population risk of each activation, with the Bayes risk",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.dedent(
            """\
            Population optimum E* = 1 - sup A^2/B of attention f(X) = sigma(Xk)^T (Xv) on
            single-location regression (spec slr.md §6), for each activation, and the Bayes risk
            (§7; softmax attains it).  Linear variants use the derived closed forms (§8); the others
            are optimised over (m_k, extra scalar) with exact gradients on a fixed integration rule
            (Gauss-Hermite where smooth, randomised QMC otherwise).  risk_error is the integration
            error estimate; limit=true means the argmin runs to a bound (m_k -> inf, b -> -inf).

            activations (full names; a bare linear/erf/softplus is refused):
            """) + names + "\n  elementwise:<expr in t>, normalised:<positive expr in t>   user expressions",
        epilog=_examples(
            "attnlimits slr population --model spiked --nu 2 --L 3 "
            "--activation softmax,linear_uncentred,erf_learned,softplus_norm --json",
            "attnlimits slr population --model max --nu inf --L 1,2,3 --per-length",
            "attnlimits slr population --model max --nu 2 --L 2 --activation erf_fixed --extra 0.5",
            "attnlimits slr population --model spiked --nu 1 --L 2 --activation 'elementwise:1+tanh(t)'",
        ),
    )
    p.add_argument("--model", required=True, help="spiked or max")
    p.add_argument("--nu", required=True, help="spike strength nu >= 0 (inf allowed for --model max)")
    p.add_argument("--L", required=True, dest="L",
                   help="sequence length, or a comma-separated list for L uniform over it (variable length)")
    p.add_argument("--activation", default=_SLR_DEFAULT_ACTS,
                   help=f"comma-separated activation names (default {_SLR_DEFAULT_ACTS})")
    p.add_argument("--extra", type=float, default=None,
                   help="value of a fixed extra scalar (erf_fixed's c, softplus_norm's b; default 0); "
                        "learned scalars (erf_learned, softplus_norm_bias) are optimised regardless")
    p.add_argument("--orthogonal-noise", action="store_true",
                   help="also optimise s_k = sqrt(q_k - m_k^2) >= 0 (claim C14)")
    p.add_argument("--per-length", action="store_true", help="variable length: also the per-length tuned risks")
    p.add_argument("--metric", choices=["excess", "noisy"], default="excess",
                   help="excess (default; f = 0 gives 1) or noisy (adds --delta^2)")
    p.add_argument("--delta", type=float, default=0.0, help="label noise Delta for --metric noisy")
    p.add_argument("--tol", type=float, default=1e-6, help="target integration error (Gauss-Hermite)")
    p.add_argument("--seed", type=int, default=0, help="seed of the QMC scrambling")
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per activation")
    return p


def _cmd_slr(args) -> int:
    if args.slr_command != "population":
        raise CLIError("choose a subcommand: attnlimits slr population --help")
    import math

    from derivations.slr import activation
    from numeric import bayes
    from numeric.population import make_setting, optimal_population_risk

    try:
        nu = float(args.nu)
    except ValueError:
        raise CLIError(f"--nu must be a number >= 0 or inf, got {args.nu!r}") from None
    try:
        Ls = [int(v) for v in str(args.L).split(",") if v.strip()]
    except ValueError:
        raise CLIError(f"--L must be an integer or a comma-separated list of integers, got {args.L!r}") from None
    if args.delta < 0 or not math.isfinite(args.delta):
        raise CLIError(f"--delta must be a finite number >= 0, got {args.delta}")
    setting = make_setting(args.model, nu, Ls if len(Ls) > 1 else (Ls[0] if Ls else 0))
    acts = [activation(a.strip()) for a in args.activation.split(",") if a.strip()]
    if not acts:
        raise CLIError("--activation is empty")
    law = {L: p for L, p in setting.lengths}
    br = bayes.bayes_risk_varlen(setting.model, setting.nu, law)
    b_val, b_err = (br.value, br.error) if hasattr(br, "value") else (float(br), 0.0)
    shift = args.delta ** 2 if args.metric == "noisy" else 0.0
    out = []
    for i, a in enumerate(acts, 1):
        print(f"[{i}/{len(acts)}] {a.name}: {setting.describe()}", file=sys.stderr, flush=True)
        # --extra fixes the scalar of erf_fixed / softplus_norm; learned scalars stay learned
        extra = None if a.extra_learned else args.extra
        r = optimal_population_risk(a, setting, orthogonal_noise=args.orthogonal_noise, per_length=args.per_length,
                                    tol=args.tol, seed=args.seed, extra=extra)
        d = {"activation": a.name, "risk": r.risk + shift, "risk_error": r.risk_error,
             "bayes_risk": b_val + shift, "bayes_error": b_err, "argmin": r.argmin, "limit": r.limit,
             "limit_reason": r.limit_reason, "method": r.method, "model": setting.model,
             "nu": "inf" if math.isinf(setting.nu) else setting.nu,
             "L": {str(L): p for L, p in setting.lengths}, "metric": args.metric}
        if args.metric == "noisy":
            d["delta"] = args.delta
        if r.per_length:
            d["per_length"] = {"risks": {str(k): v + shift for k, v in r.per_length["risks"].items()},
                               "average": r.per_length["average"] + shift}
        out.append(d)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"single-location regression, {setting.describe()}, metric {args.metric}: "
          f"Bayes risk {b_val + shift:.6f} (± {b_err:.1e})")
    head = f"{'activation':<20} {'risk':>10} {'± error':>9} {'- Bayes':>10}  argmin"
    print(head)
    print("-" * len(head))
    for d in out:
        arg = ", ".join(f"{k}={v:.4g}" for k, v in d["argmin"].items() if k not in ("q_v",))
        flag = "  [limit]" if d["limit"] else ""
        print(f"{d['activation']:<20} {d['risk']:>10.6f} {d['risk_error']:>9.1e} {d['risk'] - d['bayes_risk']:>10.6f}"
              f"  {arg}{flag}")
        if "per_length" in d:
            print(f"{'':<20} per-length tuned average {d['per_length']['average']:.6f}")
    return 0


def _rmt_arguments(p):
    from symbolic.hermite import BUILTIN_ACTIVATIONS

    p.add_argument("--activation", default="tanh",
                   help=f"built-in ({', '.join(sorted(BUILTIN_ACTIVATIONS))}) or a SymPy expression in t; centred automatically")
    p.add_argument("--c", required=True, help="aspect ratio p/n (> 0)")
    p.add_argument("--gamma", required=True, help="comma-separated ridge parameters, e.g. 0.01,0.1,1")
    p.add_argument("--snr", default="0", help="signal strength ||mu||^2 (default 0)")
    p.add_argument("--wk", default="", help="w_K coordinates (up to any length), e.g. 1,0,0")
    p.add_argument("--wq", default="", help="w_Q coordinates, e.g. 1,0,0")
    p.add_argument("--diagonal", choices=["zero", "keep"], default="zero",
                   help="diagonal convention of K_X (spec §4.3): zero (kappa = 0, default) or keep")
    p.add_argument("--kappa", default=None, help="diagonal constant with --diagonal keep (e.g. a measured mean)")
    p.add_argument("--p", type=int, default=None, help="with --diagonal keep and no --kappa: kappa = E f(sqrt(p) + sqrt(2) xi)/sqrt(p) (spec §4.3)")
    p.add_argument("--nodes", type=int, default=3000, help="midpoint nodes of the MP quadrature in float64 (default 3000)")
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per gamma")


# ------------------------------------------------------------------------------------------------


def _hermite(activation: str, dps: int):
    from symbolic.hermite import hermite_coefficients

    return hermite_coefficients(activation, dps=dps)


def _kappa(args, h, dps):
    import mpmath

    from derivations.attention_rmt import diagonal_constant
    from symbolic.hermite import t

    if args.diagonal == "zero":
        if args.kappa is not None or args.p is not None:
            raise CLIError("--kappa/--p apply only with --diagonal keep")
        return "0"
    if args.kappa is not None:
        kappa = args.kappa
    elif args.p is not None:
        if args.p < 1:
            raise CLIError("--p must be a positive integer")
        with mpmath.workdps(dps):
            kappa = mpmath.nstr(diagonal_constant(h.centred, t, args.p, dps=dps), dps)
    else:
        raise CLIError("--diagonal keep needs --kappa K (e.g. a measured diagonal mean) or --p P")
    try:
        kv = float(kappa)
    except ValueError:
        raise CLIError(f"--kappa must be a number, got {kappa!r}") from None
    if abs(kv) > 10:
        raise CLIError(f"kept-diagonal kappa = {kv:.4g} exceeds 10 in magnitude (spec §4.3): use --diagonal zero")
    return kappa


def _cmd_rmt(args) -> int:
    import mpmath

    from derivations import attention_rmt
    from numeric import compile_model

    digits = args.digits
    if digits is not None and not 5 <= digits <= 200:
        raise CLIError("--digits must be between 5 and 200")
    dps = max(30, (digits or 0) + 10)
    h = _hermite(args.activation, dps)
    kappa = _kappa(args, h, dps)
    backend = "mpmath" if digits else "numpy"
    mod = compile_model(attention_rmt.model, backend)
    with mpmath.workdps(dps):
        a1, nu = mpmath.nstr(h.a1, dps), mpmath.nstr(h.nu, dps)
    if args.nodes < 16:
        raise CLIError("--nodes must be at least 16")
    mod.run(args, a1, nu, kappa, digits=digits, extra={"activation": args.activation})
    return 0


def _cmd_export(args) -> int:
    import mpmath

    from derivations import attention_rmt
    from numeric import export_model

    h = _hermite(args.activation, 50)
    with mpmath.workdps(50):
        consts = {
            "ACTIVATION": repr(args.activation),
            "A1": repr(mpmath.nstr(h.a1, 45)),
            "NU": repr(mpmath.nstr(h.nu, 45)),
        }
    path = export_model(attention_rmt.model, args.output, args.backend, constants=consts)
    print(f"wrote {path} ({args.backend}; activation {args.activation}: a1={consts['A1']}, nu={consts['NU']})")
    return 0


def _cmd_hermite(args) -> int:
    import mpmath

    if not 5 <= args.dps <= 500:
        raise CLIError("--dps must be between 5 and 500")
    h = _hermite(args.activation, args.dps)
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
            "exact": {k: str(v) for k, v in (h.exact or {}).items()},
        }
    if args.json:
        print(json.dumps(rec, indent=2))
    else:
        for k, v in rec.items():
            print(f"{k:>18}: {v}")
    return 0


def _cmd_verify(args) -> int:
    import time

    from verify.claims import Context, citation, run_claims, select
    from verify.report import format_table, write_report

    try:
        claims = select(args.claims, args.tag)
    except KeyError as exc:
        raise CLIError(exc.args[0]) from None
    if args.list:
        for c in claims:
            print(f"{c.name:<14} [{', '.join(c.tags)}] {c.title}\n{'':<14} {c.source}")
        return 0
    mode = "full" if args.full else "quick"
    from verify._torchutil import resolve_device

    try:
        device = str(resolve_device(args.device))
    except (RuntimeError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    t0 = time.perf_counter()

    def progress(msg):
        print(f"{time.perf_counter() - t0:7.1f}s {msg}", file=sys.stderr, flush=True)

    ctx = Context(mode, device=device, seed=args.seed, progress=progress)
    results = run_claims(claims, ctx)
    elapsed = time.perf_counter() - t0
    print(format_table(results, color=sys.stdout.isatty()))
    if not args.no_report:
        meta = {"mode": mode, "device": device, "seed": args.seed, "elapsed_s": round(elapsed, 1),
                "command": "attnlimits " + " ".join(sys.argv[1:]) if sys.argv else "attnlimits verify",
                "references": citation(claims)}
        path = write_report(results, args.out, meta=meta)
        print(f"report: {path}")
    return 1 if any(r.verdict == "fail" for r in results) else 0


def _int_list(text, name):
    if text is None:
        return None
    try:
        return [int(v) if v.strip() != "d_h" else "d_h" for v in text.split(",") if v.strip()]
    except ValueError:
        raise CLIError(f"{name} must be comma-separated integers, got {text!r}") from None


def _cmd_weights(args) -> int:
    from verify.weights import DEFAULT_RANKS, CheckpointError, analyze_checkpoint

    ranks = _int_list(args.ranks, "--ranks") or DEFAULT_RANKS
    layers = _int_list(args.layers, "--layers")
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


_COMMANDS = {"rmt": _cmd_rmt, "export": _cmd_export, "hermite": _cmd_hermite, "verify": _cmd_verify,
             "weights": _cmd_weights, "slr": _cmd_slr}


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    from numeric import ConvergenceError
    from symbolic.hermite import ActivationError

    try:
        return _COMMANDS[args.command](args)
    except (CLIError, ActivationError, ConvergenceError, ValueError, ArithmeticError, OSError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"attnlimits {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print("attnlimits: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
