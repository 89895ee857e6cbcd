"""``attnlimits rmt`` and ``attnlimits export rmt``: run functions of the attention-vs-ridge result.

Parameters are declared in :data:`attnlimits.derivations.attention_rmt.result.RMT_COMMAND`.  The work is done
by the generated solver (:func:`attnlimits.numeric.compile_model` of
:data:`attnlimits.derivations.attention_rmt.equations.model`); this module resolves the activation's
Hermite data and the diagonal constant, validates the input and returns tidy rows.
"""
from __future__ import annotations

import math
import sys

from attnlimits.symbolic.result import InputError

__all__ = ["run_rmt", "format_rmt", "export_rmt", "MAX_COORDINATES", "C_LIMITS", "GAMMA_LIMITS"]

MODEL = "attnlimits.derivations.attention_rmt.equations:model"
MAX_COORDINATES = 512  #: longest w_K / w_Q (the reduced geometry is r×r with r their length)
C_LIMITS = (1e-3, 1e3)  #: c outside this range is refused (the validated range is narrower: a warning)
GAMMA_LIMITS = (1e-10, 1e10)
SNR_LIMIT = 1e6
WEIGHT_LIMIT = 1e6


def _hermite(activation: str, dps: int):
    from attnlimits.symbolic.hermite import hermite_data_bounded

    return hermite_data_bounded(activation, dps=dps)


def _hermite_numbers(activation: str, dps: int) -> tuple[str, str]:
    """a₁ and ν of the centred activation as exact decimal text, cached on disk (no SymPy when cached)."""
    from attnlimits.numeric.models import cached_json

    def compute():
        import mpmath

        h = _hermite(activation, dps)
        with mpmath.workdps(dps):
            return [mpmath.nstr(h.a1, dps), mpmath.nstr(h.nu, dps)]

    a1, nu = cached_json("hermite", f"{activation}|{dps}", compute, like=["", ""])
    return a1, nu


def _kappa(params, activation, dps):
    import mpmath

    diagonal, kappa, p = params["diagonal"], params["kappa"], params["p"]
    if diagonal == "zero":
        if kappa is not None or p is not None:
            raise InputError("--kappa/--p apply only with --diagonal keep")
        return "0"
    if kappa is not None and p is not None:
        raise InputError("give --kappa or --p, not both (--p computes kappa)")
    if kappa is None:
        if p is None:
            raise InputError("--diagonal keep needs --kappa K (e.g. a measured diagonal mean) or --p P")
        from attnlimits.derivations.attention_rmt import diagonal_constant
        from attnlimits.symbolic.hermite import t

        h = _hermite(activation, dps)
        with mpmath.workdps(dps):
            kappa = mpmath.nstr(diagonal_constant(h.centred, t, p, dps=dps), dps)
    kv = float(kappa)
    if abs(kv) > 10:
        raise InputError(f"kept-diagonal kappa = {kv:.4g} exceeds 10 in magnitude (§4.3): use --diagonal zero")
    return kappa


def _validate(params):
    c = float(params["c"])
    if not C_LIMITS[0] <= c <= C_LIMITS[1]:
        raise InputError(f"--c {c:g} is outside [{C_LIMITS[0]:g}, {C_LIMITS[1]:g}], where the quadrature "
                         "of the Marchenko-Pastur law is reliable")
    for g in params["gamma"]:
        if not GAMMA_LIMITS[0] <= float(g) <= GAMMA_LIMITS[1]:
            raise InputError(f"--gamma {float(g):g} is outside [{GAMMA_LIMITS[0]:g}, {GAMMA_LIMITS[1]:g}]")
    if float(params["snr"]) > SNR_LIMIT:
        raise InputError(f"--snr {float(params['snr']):g} exceeds {SNR_LIMIT:g}")
    for name in ("wk", "wq"):
        w = params[name]
        if len(w) > MAX_COORDINATES:
            raise InputError(f"--{name} has {len(w)} coordinates; at most {MAX_COORDINATES} are supported "
                             "(only the span of mu, w_K, w_Q matters: give coordinates in a small basis)")
        big = [v for v in w if abs(float(v)) > WEIGHT_LIMIT]
        if big:
            raise InputError(f"--{name} coordinate {float(big[0]):g} exceeds {WEIGHT_LIMIT:g} in magnitude")


def run_rmt(params: dict, *, progress=None) -> list[dict]:
    """E_attention and E_ridge along the γ grid, one row per γ (in the order given)."""
    from attnlimits.numeric import compile_model

    _validate(params)
    digits = params["digits"]
    dps = max(30, (digits or 0) + 10)
    a1, nu = _hermite_numbers(params["activation"], dps)
    kappa = _kappa(params, params["activation"], dps)
    mod = compile_model(MODEL, "mpmath" if digits else "numpy")
    gammas = list(params["gamma"])
    first = {}  # a repeated gamma (by value) is computed once
    for g in gammas:
        first.setdefault(float(g), g)
    unique = list(first.values())
    for w in mod.validate(params["c"], unique, params["snr"], params["wk"], params["wq"], None, a1, nu, kappa):
        print(f"warning: {w}", file=sys.stderr)
    step = None
    if digits and len(unique) > 2 and progress is not None:  # mpmath runs take about a second per gamma
        step = progress
    recs = mod.curve(params["c"], unique, a1=a1, nu=nu, kappa=kappa, snr=params["snr"], wk=params["wk"],
                     wq=params["wq"], digits=digits, n_nodes=params["nodes"], progress=step)
    for r in recs:
        err = r["quadrature_error"]
        if err is not None and float(err) > 1e-6:
            print(f"warning: gamma={float(r['gamma']):g}: quadrature error estimate {float(err):.1e} "
                  f"(near-singular integrand); increase --nodes (float64) or use --digits", file=sys.stderr)
    by_gamma = {float(g): r for g, r in zip(unique, recs)}
    head = {"activation": params["activation"], "c": params["c"], "snr": params["snr"],
            "wk": ",".join(map(str, params["wk"])), "wq": ",".join(map(str, params["wq"])),
            "diagonal": params["diagonal"], "kappa": str(kappa)}
    return [{**head, **by_gamma[float(g)]} for g in gammas]


def format_rmt(rows: list[dict], params: dict, fmt: str) -> str:
    """JSON with full digits (mpmath) or round-trip floats, or the γ table with its parameters."""
    from attnlimits.numeric import compile_model

    digits = params.get("digits")
    mod = compile_model(MODEL, "mpmath" if digits else "numpy")
    if fmt == "json":  # every row echoes its inputs (c, snr, wk, wq, diagonal, kappa), as in every command
        return mod.dumps_json(rows, digits)
    r0 = rows[0]
    head = (f"# attention vs ridge: activation {r0['activation']}, c={r0['c']}, snr={r0['snr']}, "
            f"wk=[{r0['wk']}], wq=[{r0['wq']}], diagonal {r0['diagonal']} (kappa={r0['kappa']}), "
            + (f"mpmath {digits} digits" if digits else f"float64, {params['nodes']} nodes"))
    return head + "\n" + mod.format_table(rows, digits)


def export_rmt(params: dict, path: str) -> str:
    """Write a standalone solver specialised to one activation; returns a one-line summary."""
    import mpmath

    from attnlimits.derivations.attention_rmt import model
    from attnlimits.numeric import export_model
    from attnlimits.symbolic.activations import canonical_activation

    h = _hermite(params["activation"], 50)
    with mpmath.workdps(50):
        consts = {
            "ACTIVATION": repr(canonical_activation(params["activation"])),  # never the text as typed
            "A1": repr(mpmath.nstr(h.a1, 45)),
            "NU": repr(mpmath.nstr(h.nu, 45)),
        }
    out = export_model(model, path, params["backend"], constants=consts)
    if not math.isfinite(float(consts["A1"].strip("'"))):  # pragma: no cover - hermite refuses first
        raise InputError("non-finite Hermite data")
    return f"wrote {out} ({params['backend']}; activation {params['activation']}: a1={consts['A1']}, nu={consts['NU']})"
