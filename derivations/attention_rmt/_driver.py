"""Hooks of the attention_rmt solver — portable source, runs inside the generated module.

The solver is the portable driver of :mod:`attnlimits.numeric.portable_driver`, configured by the
``DRIVER`` data of :func:`attnlimits.derivations.attention_rmt.equations.driver_data`.  What is specific to
this result and is not data lives here, without any formula:

- :func:`geometry` — the reduced geometry ``(m, Γ, Ω, r)`` from SNR and the coordinates of
  ``w_K``, ``w_Q`` (or a general ``L``), assembled by the generated kernels of §5/§6;
- :func:`validate` — input checks and the validated range of the method (§9);
- :func:`curve` — the result's call signature around :func:`sweep_curve` (options in
  :class:`CurveOptions`);
- :func:`run_cli` — the body of an exported file's command line.

This text is never imported as part of the package: :func:`attnlimits.numeric.compile_model` and
:func:`attnlimits.numeric.export_model` append it to the generated module, so the in-process solver and an
exported file run the same code.
"""
import dataclasses as _dataclasses
import sys
from attnlimits.symbolic.options import resolve_options

#: validated range of the method (docs/attention_rmt.md §9)
GAMMA_RANGE = (1e-5, 1e4)
C_RANGE = (0.05, 10.0)


def validate(c, gammas, snr, wk, wq, L, a1, nu, kappa):
    """Check inputs; return warnings (strings) for values outside the validated range."""
    finite("c", c, positive=True)
    if len(gammas) == 0:
        raise InputError("give at least one gamma")
    for g in gammas:
        finite("gamma", g, positive=True)
    finite("snr", snr, nonnegative=True)
    for v in list(wk) + list(wq):
        finite("weight coordinate", v)
    if L is not None:
        if len(L) == 0 or any(len(row) != len(L) for row in L):
            raise InputError("L must be a non-empty square matrix (list of rows)")
        for row in L:
            for v in row:
                finite("L entry", v)
        if wk or wq:
            raise InputError("give either wk/wq (rank one) or L (general), not both")
    finite("a1", a1)
    finite("nu", nu, nonnegative=True)
    finite("kappa", kappa)
    if float(nu) < float(a1) ** 2 * (1 - 1e-12) - 1e-15:
        raise InputError(f"nu must be >= a1^2 (got nu={float(nu):.6g}, a1={float(a1):.6g})")
    warnings = []
    if not C_RANGE[0] <= float(c) <= C_RANGE[1]:
        warnings.append(f"c={float(c):g} is outside the validated range {C_RANGE}")
    for g in gammas:
        if not GAMMA_RANGE[0] <= float(g) <= GAMMA_RANGE[1]:
            warnings.append(f"gamma={float(g):g} is outside the validated range {GAMMA_RANGE}")
    return warnings


def geometry(snr, wk=(), wq=(), L=None):
    """Reduced geometry ``(m, Γ, Ω, r)`` in an orthonormal basis whose first vector is μ/‖μ‖.

    ``wk``, ``wq``: coordinates of w_K, w_Q (rank-one ``W = I + w_K w_Qᵀ``); or ``L``: the r×r
    block ``U_sᵀ L U_s`` of a general ``W = I + L``.
    """
    rt = _runtime()
    r = len(L) if L is not None else max(len(wk), len(wq), 1)
    zero = rt.num(0)
    m = rt._mat([[rt.rmt_mu_coordinate(rt.num(snr))[0]]] + [[zero] for _ in range(r - 1)])
    if L is not None:
        Lr = rt._mat([[rt.num(v) for v in row] for row in L])
        Gam, Om = rt.rmt_geometry_general(m, Lr, r)
    else:
        def column(w):
            return rt._mat([[rt.num(v)] for v in list(w) + [0] * (r - len(w))])

        Gam, Om = rt.rmt_geometry_rank1(m, column(wk), column(wq), r)
    return m, Gam, Om, r


def geometry_inputs(base):
    """Hook ``outer_inputs``: the geometry arguments of the outer kernel ``rmt_outer``."""
    return geometry(base["snr"], base.get("wk", ()), base.get("wq", ()), base.get("L"))


#: Numerical options of :func:`curve` (frozen; keywords of the call replace its fields).  Built with
#: ``make_dataclass``, field types as objects: this text runs inside generated modules
#: (``from __future__ import annotations``, not in ``sys.modules``), where ``@dataclass`` cannot
#: resolve string annotations.
CurveOptions = _dataclasses.make_dataclass(
    "CurveOptions",
    [
        ("digits", object, None),
        ("n_nodes", int, 3000),
        ("error_estimate", bool, True),
        ("check_monotone", bool, True),
        ("progress", object, None),
    ],
    frozen=True,
    namespace={
        "__module__": __name__,
        "__doc__": """Options of :func:`curve` (passed on to :func:`sweep_curve`).

    Attributes
    ----------
    digits : int, optional
        Significant digits of the work under the mpmath backend (default 30).
    n_nodes : int
        Quadrature nodes of the spectral law (float64; default 3000).
    error_estimate : bool
        Also estimate the quadrature error of each point (``quadrature_error``).
    check_monotone : bool
        Check that the curve is monotone in γ.
    progress : callable, optional
        Told (a message) about each γ as it is done.
    """,
    },
)


def curve(c, gammas, *, a1, nu, kappa=0, snr=0, wk=(), wq=(), L=None, options=None, **overrides):
    """Ē_attention and Ē_ridge along a γ grid (swept from large γ with warm starts).

    Returns a list of dicts, in the order of ``gammas``, with keys ``gamma``, ``E_attention``,
    ``E_ridge``, ``ybar``, ``ybar_ridge``, ``quadrature_error``, ``iterations``, ``method``.
    ``options`` (:class:`CurveOptions`; keywords ``digits``, ``n_nodes``, ``error_estimate``,
    ``check_monotone``, ``progress`` replace its fields): under the mpmath backend the work runs
    at ``digits`` significant digits (default 30), and ``progress`` (a callable taking a message)
    is told about each γ as it is done.
    """
    o = resolve_options(CurveOptions, options, overrides)
    validate(c, gammas, snr, wk, wq, L, a1, nu, kappa)
    base = {"c": c, "a1": a1, "nu": nu, "kappa": kappa, "snr": snr, "wk": list(wk), "wq": list(wq), "L": L}
    first = {}  # a repeated γ (by value) is solved once
    for g in gammas:
        first.setdefault(float(g), g)
    recs = sweep_curve(base, list(first.values()), digits=o.digits, n_nodes=o.n_nodes,
                       error_estimate=o.error_estimate, check_monotone=o.check_monotone, progress=o.progress)
    by_value = dict(zip(first, recs))
    return [dict(by_value[float(g)]) for g in gammas]


def run_cli(args):
    """Compute and print for an exported file (activation constants baked in); returns the records."""
    a1, nu = A1, NU  # noqa: F821 - constants of the exported file
    kappa = finite("kappa", args.kappa)
    gammas = parse_list(args.gamma, "gamma")
    wk, wq = parse_list(args.wk, "wk"), parse_list(args.wq, "wq")
    c = finite("c", args.c, positive=True)
    snr = finite("snr", args.snr, nonnegative=True)
    for w in validate(c, gammas, snr, wk, wq, None, a1, nu, kappa):
        print(f"warning: {w}", file=sys.stderr)
    digits = getattr(args, "digits", None)
    progress = (lambda msg: print(msg, file=sys.stderr, flush=True)) if digits and len(gammas) > 2 else None
    recs = curve(c, gammas, a1=a1, nu=nu, kappa=kappa, snr=snr, wk=wk, wq=wq, digits=digits,
                 n_nodes=getattr(args, "nodes", 3000), progress=progress)
    for r in recs:
        err = r["quadrature_error"]
        if err is not None and float(err) > 1e-6:
            print(f"warning: gamma={float(r['gamma']):g}: quadrature error estimate {float(err):.1e} "
                  f"(near-singular integrand); increase --nodes (float64) or use --digits", file=sys.stderr)
    head = {"activation": ACTIVATION, "c": c, "snr": snr, "wk": ",".join(map(str, wk)),  # noqa: F821
            "wq": ",".join(map(str, wq)), "diagonal": "keep" if float(kappa) != 0 else "zero",
            "kappa": str(kappa)}  # kappa = 0 is the zero-diagonal mode, the default of attnlimits rmt
    recs = [{**head, **r} for r in recs]  # every row echoes its inputs, as attnlimits rmt's rows do
    print(dumps_json(recs, digits) if args.json else format_table(recs, digits))
    return recs
