"""Driver of the attention_rmt solver — portable source, runs inside the generated module.

This text is never imported as part of the package: :func:`numeric.compile_model` and
:func:`numeric.export_model` append it to the generated kernels, the backend runtime and the
portable fixed-point solver, so the in-process solver and an exported file run the same code.
It strings the kernels together; it contains no formula of its own:

1. solve the bulk fixed point (§5) at each γ, sweeping from large γ with warm starts;
2. the traces ``q₀…q₅`` and their γ-derivatives from the implicit-function theorem;
3. ȳ, dȳ/dγ and Ē = −γ² dȳ/dγ by Woodbury over the reduced geometry (§6), invariants (§9);
4. the ridge baseline (§7); a quadrature error estimate for every Ē.
"""
import argparse
import json
import math
import sys
import types


# The runtime, kernels and solver are defined above this driver in the generated module: a
# snapshot of the namespace serves as the solver's runtime handle (attribute access is cheap).
_rt = types.SimpleNamespace(**{k: v for k, v in globals().items() if not k.startswith("__")})
BULK = SystemKernels(_rt, "rmt_bulk", BULK_UNKNOWNS, BULK_PARAMETERS, BULK_INVARIANTS,  # noqa: F821
                    sensitivity_param="gamma")

#: validated range of the method (docs/attention_rmt.md §9)
GAMMA_RANGE = (1e-5, 1e4)
C_RANGE = (0.05, 10.0)
MAX_DEGREE = 12  # mpmath midpoint ladder: degree d has 3·2^(d−1) nodes


class InputError(ValueError):
    """Bad user input; the message is one line."""


def _finite(name, v, *, positive=False, nonnegative=False):
    try:
        fv = float(v)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {v!r}") from None
    if not math.isfinite(fv):
        raise InputError(f"{name} must be finite, got {v!r}")
    if positive and not fv > 0:
        raise InputError(f"{name} must be > 0, got {v!r}")
    if nonnegative and not fv >= 0:
        raise InputError(f"{name} must be >= 0, got {v!r}")
    return v


def validate(c, gammas, snr, wk, wq, L, a1, nu, kappa):
    """Check inputs; return warnings (strings) for values outside the validated range."""
    _finite("c", c, positive=True)
    if len(gammas) == 0:
        raise InputError("give at least one gamma")
    for g in gammas:
        _finite("gamma", g, positive=True)
    _finite("snr", snr, nonnegative=True)
    for v in list(wk) + list(wq):
        _finite("weight coordinate", v)
    if L is not None:
        if len(L) == 0 or any(len(row) != len(L) for row in L):
            raise InputError("L must be a non-empty square matrix (list of rows)")
        for row in L:
            for v in row:
                _finite("L entry", v)
        if wk or wq:
            raise InputError("give either wk/wq (rank one) or L (general), not both")
    _finite("a1", a1)
    _finite("nu", nu, nonnegative=True)
    _finite("kappa", kappa)
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
    if L is not None:
        r = len(L)
    else:
        r = max(len(wk), len(wq), 1)
    mu = rmt_mu_coordinate(num(snr))[0]  # noqa: F821
    m = _mat([[mu]] + [[num(0)] for _ in range(r - 1)])  # noqa: F821
    if L is not None:
        Lr = _mat([[num(v) for v in row] for row in L])  # noqa: F821
        Gam, Om = rmt_geometry_general(m, Lr, r)  # noqa: F821
    else:
        pad = lambda w: [num(v) for v in w] + [num(0)] * (r - len(w))  # noqa: E731
        wK = _mat([[v] for v in pad(wk)])  # noqa: F821
        wQ = _mat([[v] for v in pad(wq)])  # noqa: F821
        Gam, Om = rmt_geometry_rank1(m, wK, wQ, r)  # noqa: F821
    return m, Gam, Om, r


def geometry_at_15(geom):
    """The reduced geometry rounded to the current (lower) precision."""
    m, Gam, Om, r = geom
    return (m * 1, Gam * 1, Om * 1, r)


def point(gamma, c, a1, nu, kappa, geom, nodes, x0=None):
    """Ē and ȳ at one γ on given quadrature nodes (one bulk solve + one linear solve)."""
    params = [num(c), num(gamma), num(a1), num(nu), num(kappa)]
    fp = solve_fixed_point(BULK, params, nodes, x0=x0, compute_stability=x0 is None)  # noqa: F821
    x = fp.x
    obs = rmt_bulk_observables(*x, *params, _nodes=nodes)  # noqa: F821
    J = fp.jacobian if fp.jacobian is not None else BULK.F_J(x, params, nodes)[1]
    Fg = rmt_bulk_dparam_gamma(*x, *params, _nodes=nodes)  # noqa: F821
    dx = solve(J, [-f for f in Fg])  # noqa: F821  implicit derivative dA/dγ = −J⁻¹ ∂F/∂γ
    rates = rmt_bulk_observable_rates_gamma(*x, *params, *dx, _nodes=nodes)  # noqa: F821
    m, Gam, Om, r = geom
    out = rmt_outer(*obs[:6], *rates[:6], num(c), num(gamma), num(a1), m, Gam, Om, r)  # noqa: F821
    ybar, ybar_rate, E = out[0], out[1], out[2]
    tol = num("1e-12") if BACKEND == "numpy" else default_tol()  # noqa: F821
    failed = [n for n, v in zip(OUTER_INVARIANTS, out[3:]) if not (v >= -tol)]  # noqa: F821
    pdict = {"c": c, "gamma": gamma, "a1": a1, "nu": nu, "kappa": kappa}
    if failed:
        raise InvariantError(  # noqa: F821
            "rmt_outer", pdict, fp.residual, f"solution violates {', '.join(failed)}",
            "continue from large gamma (give a denser gamma grid) or report the parameters",
        )
    return {"x": x, "dx": dx, "ybar": ybar, "ybar_rate": ybar_rate, "E": E, "fixed_point": fp,
            "q": list(obs[:6])}


def _point_ladder(gamma, c, a1, nu, kappa, geom, x0):
    """One γ under mpmath: the node count doubles until Ē agrees to the working precision between
    two levels; that difference is the reported quadrature error."""
    prev = None
    target = default_tol() * 10  # noqa: F821
    x = x0
    if x is None:
        # cold start: solve at double precision first (the damped/Anderson stages are the slow
        # part), then polish with Newton at the working precision along the node ladder
        import mpmath

        with mpmath.workdps(15):
            x = point(num(gamma), num(c), num(a1), num(nu), num(kappa), geometry_at_15(geom),  # noqa: F821
                      law_nodes(num(c), 6), None)["x"]  # noqa: F821
        x = [num(v) for v in x]  # noqa: F821
    for degree in range(6, MAX_DEGREE + 1):
        cur = point(gamma, c, a1, nu, kappa, geom, law_nodes(num(c), degree), x)  # noqa: F821
        x = cur["x"]
        if prev is not None:
            err = absval(cur["E"] - prev["E"])  # noqa: F821
            if err <= target * (1 + absval(cur["E"])):  # noqa: F821
                cur["quadrature_error"] = err
                return cur
        prev = cur
    raise ConvergenceError(  # noqa: F821
        "rmt quadrature", {"c": c, "gamma": gamma}, err,
        f"quadrature did not reach {len(str(target))} digits by degree {MAX_DEGREE}",
        "fewer digits (--digits), or a larger gamma",
    )


def curve(c, gammas, *, a1, nu, kappa=0, snr=0, wk=(), wq=(), L=None, digits=None, n_nodes=3000,
          error_estimate=True, check_monotone=True, progress=None):
    """Ē_attention and Ē_ridge along a γ grid (swept from large γ with warm starts).

    Returns a list of dicts, in the order of ``gammas``, with keys ``gamma``, ``E_attention``,
    ``E_ridge``, ``ybar``, ``ybar_ridge``, ``quadrature_error``, ``iterations``, ``method``.
    Under the mpmath backend the work runs at ``digits`` significant digits (default 30), and
    ``progress`` (a callable taking a message) is told about each γ as it is done.
    """
    validate(c, gammas, snr, wk, wq, L, a1, nu, kappa)
    if BACKEND == "mpmath":  # noqa: F821
        import mpmath

        with mpmath.workdps(int(digits or 30)):
            return _curve(c, gammas, a1, nu, kappa, snr, wk, wq, L, n_nodes, error_estimate, check_monotone,
                          progress)
    # non-finite intermediate values are detected by the solver (and raise ConvergenceError);
    # numpy's floating-point warnings would only add noise
    with numpy.errstate(divide="ignore", invalid="ignore", over="ignore"):  # noqa: F821
        return _curve(c, gammas, a1, nu, kappa, snr, wk, wq, L, n_nodes, error_estimate, check_monotone)


def _curve(c, gammas, a1, nu, kappa, snr, wk, wq, L, n_nodes, error_estimate, check_monotone, progress=None):
    geom = geometry(snr, wk, wq, L)
    order = sorted(range(len(gammas)), key=lambda i: -float(gammas[i]))
    if BACKEND == "numpy":  # noqa: F821
        recs = _curve_batched(c, gammas, order, a1, nu, kappa, snr, geom, n_nodes, error_estimate)
    else:
        recs = _curve_pointwise(c, gammas, order, a1, nu, kappa, snr, geom, progress)
    if check_monotone:
        tol = 1e-10
        for i, j in zip(order[1:], order[:-1]):  # γ_i < γ_j
            if float(recs[i]["E_attention"]) > float(recs[j]["E_attention"]) + tol:
                raise InvariantError(  # noqa: F821
                    "rmt sweep", {"c": c, "gamma": recs[i]["gamma"]}, 0,
                    "E is not non-decreasing along the gamma sweep", "report the parameters",
                )
    return recs


def _hermite_predict(g, g0, x0, d0, g1, x1, d1):
    """Cubic Hermite extrapolation of x(γ) from values and exact slopes at γ0, γ1."""
    h = g1 - g0
    s = (g - g0) / h
    h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
    h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
    return [h00 * a + h10 * h * da + h01 * b + h11 * h * db for a, da, b, db in zip(x0, d0, x1, d1)]


def _log_vars(g, x, d):
    """(γA₁₁, A₁₂, A₂₂) and their derivatives in log γ."""
    return [g * x[0], x[1], x[2]], [g * (x[0] + g * d[0]), g * d[1], g * d[2]]


def _bulk_point(g, c, a1, nu, kappa, nodes, x0=None, J0=None):
    """Bulk solution at γ plus the traces q and their exact γ-derivatives dq (implicit function)."""
    params = [num(c), g, num(a1), num(nu), num(kappa)]  # noqa: F821
    fp = solve_fixed_point(BULK, params, nodes, x0=x0, J0=J0, compute_stability=x0 is None)  # noqa: F821
    x = fp.x
    J = fp.jacobian if fp.jacobian is not None else BULK.F_J(x, params, nodes)[1]
    # observables O, ∂F/∂γ, ∂O/∂γ and ∂O/∂A in one pass over the nodes
    sens = fp.extra if fp.extra is not None else rmt_bulk_sensitivity_gamma(*x, *params, _nodes=nodes)  # noqa: F821
    no, n = len(BULK_OBSERVABLES), len(x)  # noqa: F821
    obs, Fg, dO_dg = sens[:no], sens[no:no + n], sens[no + n:2 * no + n]
    dO_dx = sens[2 * no + n:]
    dx = solve(J, [-f for f in Fg])  # noqa: F821  implicit derivative dA/dγ = −J⁻¹ ∂F/∂γ
    rates = [dO_dg[i] + sum(dO_dx[i * n + j] * dx[j] for j in range(n)) for i in range(no)]
    return fp, list(dx), list(obs[:6]), list(rates[:6])


def _sweep(gs, c, a1, nu, kappa, nodes, starts=None):
    """Bulk solutions along ``gs`` (descending γ), warm-started by cubic Hermite extrapolation
    from the two previous points (values and exact slopes); a cold start wherever the grid
    jumps by more than a factor 3."""
    out, hist = [], []
    for k, g in enumerate(gs):
        x0 = J0 = None
        if starts is not None:
            x0, J0 = starts[k]
        elif hist and 1 / 3 <= float(g) / float(hist[-1][0]) <= 3:
            g1, x1, d1 = hist[-1]
            if len(hist) >= 2:
                # extrapolate the smooth functions (γA₁₁, A₁₂, A₂₂) of log γ
                g0, x_0, d0 = hist[-2]
                y = _hermite_predict(math.log(g), math.log(g0), *_log_vars(g0, x_0, d0),
                                     math.log(g1), *_log_vars(g1, x1, d1))
                x0 = [y[0] / g, y[1], y[2]]
            else:
                x0 = [a + d * (g - g1) for a, d in zip(x1, d1)]
        else:
            hist = []
        fp, dx, q, dq = _bulk_point(g, c, a1, nu, kappa, nodes, x0, J0)
        hist = (hist + [(g, fp.x, dx)])[-2:]
        out.append((fp, q, dq))
    return out


def _post_batched(gs, sweep, c, a1, nu, kappa, geom):
    """Woodbury observables and their invariants for all γ in one call (batched matrices)."""
    G = len(gs)
    gam = numpy.array([float(g) for g in gs])  # noqa: F821
    q = [numpy.array([float(s[1][i]) for s in sweep]) for i in range(6)]  # noqa: F821
    dq = [numpy.array([float(s[2][i]) for s in sweep]) for i in range(6)]  # noqa: F821
    m, Gam, Om, r = geom
    out = batch(rmt_outer(*q, *dq, num(c), gam, num(a1), m, Gam, Om, r), G)  # noqa: F821
    for name, margin in zip(OUTER_INVARIANTS, out[3:]):  # noqa: F821
        bad = [k for k in range(G) if not margin[k] >= -1e-12]
        if bad:
            k = bad[0]
            raise InvariantError(  # noqa: F821
                "rmt_outer", {"c": c, "gamma": gs[k], "a1": a1, "nu": nu, "kappa": kappa},
                sweep[k][0].residual, f"solution violates {name}",
                "continue from large gamma (give a denser gamma grid) or report the parameters",
            )
    return out[0], out[2]


def _curve_batched(c, gammas, order, a1, nu, kappa, snr, geom, n_nodes, error_estimate):
    gs = [num(gammas[i]) for i in order]  # noqa: F821
    fine = law_nodes(num(c), n_nodes)  # noqa: F821
    sw = _sweep(gs, c, a1, nu, kappa, fine)
    ybar, E = _post_batched(gs, sw, c, a1, nu, kappa, geom)
    err = [None] * len(gs)
    if error_estimate:
        coarse = law_nodes(num(c), n_nodes // 2)  # noqa: F821
        csw = _sweep(gs, c, a1, nu, kappa, coarse, starts=[(s[0].x, s[0].jacobian) for s in sw])
        _, Ec = _post_batched(gs, csw, c, a1, nu, kappa, geom)
        err = [abs(float(a) - float(b)) for a, b in zip(E, Ec)]
    sols = [s[0] for s in sw]
    Err, ybar_rr = batch(rmt_ridge(num(c), numpy.array([float(g) for g in gs]), num(snr)), len(gs))  # noqa: F821
    out = [None] * len(gammas)
    for k, i in enumerate(order):
        out[i] = {
            "gamma": float(gs[k]),
            "E_attention": float(E[k]),
            "E_ridge": float(Err[k]),
            "ybar": float(ybar[k]),
            "ybar_ridge": float(ybar_rr[k]),
            "quadrature_error": err[k],
            "iterations": sols[k].iterations,
            "method": sols[k].method,
        }
    return out


def _curve_pointwise(c, gammas, order, a1, nu, kappa, snr, geom, progress=None):
    out = [None] * len(gammas)
    x0, dx0, g_prev = None, None, None
    for i in order:
        g = num(gammas[i])  # noqa: F821
        warm = None
        if x0 is not None and 1 / 3 <= float(g) / float(g_prev) <= 3:
            # first-order predictor from the exact dA/dγ of the previous point
            warm = [a + d * (g - g_prev) for a, d in zip(x0, dx0)]
        rec = _point_ladder(g, c, a1, nu, kappa, geom, warm)
        if progress is not None:
            progress(f"gamma={float(g):g} done ({sum(o is not None for o in out) + 1}/{len(gammas)})")
        x0, dx0, g_prev = rec["x"], rec["dx"], g
        E_rr, ybar_rr = rmt_ridge(num(c), g, num(snr))  # noqa: F821
        fp = rec["fixed_point"]
        out[i] = {
            "gamma": g,
            "E_attention": rec["E"],
            "E_ridge": E_rr,
            "ybar": rec["ybar"],
            "ybar_ridge": ybar_rr,
            "quadrature_error": rec["quadrature_error"],
            "iterations": fp.iterations,
            "method": fp.method,
        }
    return out


# ------------------------------------------------------------------------------------------------
# presentation (shared by `attnlimits rmt` and exported files)


def _num_text(v, digits):
    if BACKEND == "mpmath":  # noqa: F821
        return to_str(v, digits)  # noqa: F821
    return repr(float(v))


def dumps_json(records, digits=None):
    """JSON list; numbers printed with ``digits`` significant digits (mpmath) or round-trip (float)."""
    digits = int(digits or 17)
    parts = []
    for rec in records:
        items = []
        for k, v in rec.items():
            if v is None:
                val = "null"
            elif isinstance(v, (str, bool)):
                val = json.dumps(v)
            elif isinstance(v, int):
                val = str(v)
            else:
                val = _num_text(v, digits)
            items.append(f"{json.dumps(k)}: {val}")
        parts.append("{" + ", ".join(items) + "}")
    return "[\n  " + ",\n  ".join(parts) + "\n]"


def format_table(records, digits=None):
    digits = int(digits or 6)
    cols = ["gamma", "E_attention", "E_ridge", "quadrature_error"]
    def cell(k, v):
        if v is None:
            return "-"
        if k == "quadrature_error":  # an error estimate: two significant digits say enough
            return f"{float(v):.2g}"
        return f"{float(v):.{digits}g}" if BACKEND == "numpy" else _num_text(v, digits)  # noqa: F821

    rows = [[cell(k, r[k]) for k in cols] for r in records]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(cols)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(cols, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def parse_list(text, name):
    """Comma-separated numbers (strings are kept exact for the mpmath backend)."""
    if text is None or text.strip() == "":
        return []
    vals = [s.strip() for s in text.split(",")]
    for v in vals:
        _finite(name, v)
    return vals


def add_arguments(parser):
    """Options shared by `attnlimits rmt` and exported solvers."""
    parser.add_argument("--c", required=True, help="aspect ratio p/n (> 0)")
    parser.add_argument("--gamma", required=True, help="comma-separated ridge parameters, e.g. 0.01,0.1,1")
    parser.add_argument("--snr", default="0", help="signal strength ||mu||^2 (default 0)")
    parser.add_argument("--wk", default="", help="w_K coordinates in a basis whose first vector is mu/||mu||, e.g. 1,0,0")
    parser.add_argument("--wq", default="", help="w_Q coordinates in the same basis")
    parser.add_argument("--json", action="store_true", help="print a JSON list, one object per gamma")
    parser.add_argument("--nodes", type=int, default=3000, help="midpoint nodes of the MP quadrature (float64; default 3000)")


def run(args, a1, nu, kappa, digits=None, extra=None):
    """Compute and print; returns the records. Shared by both command lines."""
    gammas = parse_list(args.gamma, "gamma")
    wk, wq = parse_list(args.wk, "wk"), parse_list(args.wq, "wq")
    c = _finite("c", args.c, positive=True)
    snr = _finite("snr", args.snr, nonnegative=True)
    for w in validate(c, gammas, snr, wk, wq, None, a1, nu, kappa):
        print(f"warning: {w}", file=sys.stderr)
    progress = None
    if digits and len(gammas) > 2:  # mpmath runs take about a second per gamma: show progress
        progress = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    recs = curve(c, gammas, a1=a1, nu=nu, kappa=kappa, snr=snr, wk=wk, wq=wq, digits=digits,
                 n_nodes=args.nodes, progress=progress)
    for r in recs:
        err = r["quadrature_error"]
        if err is not None and float(err) > 1e-6:
            print(f"warning: gamma={float(r['gamma']):g}: quadrature error estimate {float(err):.1e} "
                  f"(near-singular integrand); increase --nodes (float64) or use --digits", file=sys.stderr)
    if extra:
        recs = [{**extra, **r} for r in recs]
    if args.json:
        print(dumps_json(recs, digits))
    else:
        print(format_table(recs, digits))
    return recs


def main(argv=None):
    """Command line of an exported solver (activation constants baked into this file)."""
    parser = argparse.ArgumentParser(
        description=f"Standalone attention-vs-ridge interpolation-error solver for activation "
        f"{ACTIVATION!r} (a1={A1}, nu={NU}; backend {BACKEND}).",  # noqa: F821
        epilog="example: python FILE --c 0.5 --gamma 0.01,0.1 --snr 1 --wk 1,0 --wq 1,0 --json",
    )
    add_arguments(parser)
    parser.add_argument("--kappa", default="0", help="diagonal constant kappa (0 = zero-diagonal mode)")
    if BACKEND == "mpmath":  # noqa: F821
        parser.add_argument("--digits", type=int, default=30, help="significant digits (mpmath)")
    args = parser.parse_args(argv)
    try:
        kappa = _finite("kappa", args.kappa)
        run(args, A1, NU, kappa, digits=getattr(args, "digits", None),  # noqa: F821
            extra={"activation": ACTIVATION})  # noqa: F821
    except (InputError, ConvergenceError) as exc:  # noqa: F821
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
