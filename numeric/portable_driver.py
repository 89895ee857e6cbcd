"""The portable driver of every generated solver — written once, configured by data.

Like :mod:`attnlimits.numeric.portable_solver`, this text is copied verbatim into each generated module
(in-process and exported), after the backend runtime, the kernels and the fixed-point solver, and
before the result's own *driver data* (a ``DRIVER`` dict and, where a result needs them, small
hooks).  It contains no formula: it strings kernels together.

What it does, for the equation system named by ``DRIVER["system"]``:

1. **sweep with continuation** along ``DRIVER["sweep"]`` (descending or ascending): each point
   starts from the previous solution moved by the exact slope ``dx/dθ`` (implicit-function
   theorem), or by cubic Hermite extrapolation of ``θ^e·x`` in ``log θ`` from the two previous
   points (``DRIVER["predictor"] = {"kind": "hermite_log", "exponents": [...]}``); a cold start
   where the grid jumps by more than ``DRIVER["jump"]``;
2. **observables and their exact θ-rates** from the system's sensitivity kernel;
3. an optional **outer stage** (a kernel of the observables, their rates, parameters and hook
   inputs) with invariant margins checked at every point;
4. **closed-form kernels** of the parameters (a baseline, say);
5. an **error estimate** of one output from a coarser quadrature (float64), or a node ladder that
   doubles until two levels agree to the working precision (mpmath);
6. an optional **monotonicity check** along the sweep;
7. **presentation**: validated inputs, JSON with full digits, a table, and the command line of an
   exported file — built from ``DRIVER["cli"]``.

Results name their kernels and options in ``DRIVER``; :class:`attnlimits.numeric.models.CompiledSystem`
uses :func:`continuation_sweep` for its ``sweep``.
"""
import argparse
import json
import math
import sys
import types


class InputError(ValueError):
    """Bad user input; the message is one line."""


def _runtime():
    """The generated module's namespace (runtime, kernels, solver, driver data) as one handle."""
    return types.SimpleNamespace(**{k: v for k, v in globals().items() if not k.startswith("__")})


def driver_spec():
    """The result's ``DRIVER`` data (defined after this text in the generated module)."""
    return globals()["DRIVER"]


def _hook(name):
    fn = driver_spec().get("hooks", {}).get(name)
    return globals()[fn] if fn else None


def finite(name, v, *, positive=False, nonnegative=False):
    """``v`` unchanged if it is a finite number (as text or number) obeying the sign rule."""
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


def parse_list(text, name):
    """Comma-separated numbers (strings are kept exact for the mpmath backend)."""
    if text is None or str(text).strip() == "":
        return []
    vals = [s.strip() for s in str(text).split(",")]
    for v in vals:
        finite(name, v)
    return vals


# ------------------------------------------------------------------------------------------------
# continuation


def system_kernels(rt=None, sensitivity=True):
    """:class:`SystemKernels` of ``DRIVER["system"]`` (with the sweep's sensitivity kernel)."""
    rt = rt or _runtime()
    S = driver_spec()
    return rt.SystemKernels(rt, S["system"], S["unknowns"], S["parameters"], S.get("invariants", ()),
                            sensitivity_param=S.get("sweep") if sensitivity else None)


def _hermite_predict(g, g0, x0, d0, g1, x1, d1):
    """Cubic Hermite extrapolation of x(γ) from values and exact slopes at γ0, γ1."""
    h = g1 - g0
    s = (g - g0) / h
    h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
    h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
    return [h00 * a + h10 * h * da + h01 * b + h11 * h * db for a, da, b, db in zip(x0, d0, x1, d1)]


def _log_vars(g, x, d, exps):
    """(θ^e·x) and their derivatives in log θ: θ^e (e·x + θ·dx/dθ)."""
    return ([g**e * a for a, e in zip(x, exps)],
            [g**e * (e * a + g * da) for a, da, e in zip(x, d, exps)])


def _point(rt, sk, p, nodes, x0=None, J0=None):
    """One solution with the observables and their exact sweep-rates (one pass over the nodes)."""
    S = driver_spec()
    fp = rt.solve_fixed_point(sk, p, nodes, x0=x0, J0=J0, compute_stability=x0 is None)
    x = fp.x
    J = fp.jacobian if fp.jacobian is not None else sk.F_J(x, p, nodes)[1]
    sens = fp.extra
    if sens is None:
        sens = getattr(rt, f"{S['system']}_sensitivity_{S['sweep']}")(*x, *p, _nodes=nodes)
    no, n = len(S["observables"]), len(x)
    obs, Fg, dO_dg = sens[:no], sens[no:no + n], sens[no + n:2 * no + n]
    dO_dx = sens[2 * no + n:]
    dx = rt.solve(J, [-f for f in Fg])  # implicit derivative dx/dθ = −J⁻¹ ∂F/∂θ
    rates = [dO_dg[i] + sum(dO_dx[i * n + j] * dx[j] for j in range(n)) for i in range(no)]
    return fp, list(dx), list(obs), rates


def _near(g, prev, jump):
    """Warm-start rule: always (``jump`` None), or when θ changed by at most a factor ``jump``."""
    if jump is None:
        return True
    try:
        ratio = float(g) / float(prev)
    except ZeroDivisionError:
        return False
    return 1 / jump <= ratio <= jump


def _params_at(rt, base, value):
    S = driver_spec()
    return [value if name == S["sweep"] else rt.num(base[name]) for name in S["parameters"]]


def continuation_sweep(base, values, nodes, starts=None, rt=None):
    """Solutions along ``values`` of the sweep parameter (in the order given), warm-started.

    Returns a list of ``(FixedPointResult, dx/dθ, observables, their θ-rates)``.
    """
    rt = rt or _runtime()
    S = driver_spec()
    sk = system_kernels(rt)
    pred = S.get("predictor", {"kind": "linear"})
    jump = S.get("jump", 3)
    out, hist = [], []
    for k, g in enumerate(values):
        x0 = J0 = None
        if starts is not None:
            x0, J0 = starts[k]
        elif hist and _near(g, hist[-1][0], jump):
            g1, x1, d1 = hist[-1]
            if len(hist) >= 2 and pred.get("kind") == "hermite_log":
                exps = pred["exponents"]
                g0, x_0, d0 = hist[-2]
                y = _hermite_predict(math.log(g), math.log(g0), *_log_vars(g0, x_0, d0, exps),
                                     math.log(g1), *_log_vars(g1, x1, d1, exps))
                x0 = [a / g**e for a, e in zip(y, exps)]
            else:
                x0 = [a + d * (g - g1) for a, d in zip(x1, d1)]
        else:
            hist = []
        fp, dx, obs, rates = _point(rt, sk, _params_at(rt, base, g), nodes, x0, J0)
        hist = (hist + [(g, fp.x, dx)])[-2:]
        out.append((fp, dx, obs, rates))
    return out


# ------------------------------------------------------------------------------------------------
# outer stage, closed forms, records


def _outer_args(rt, base, g, obs, rates, extra):
    S = driver_spec()
    o = S["outer"]
    k = o.get("n_rates", len(obs))
    ps = [g if name == S["sweep"] else rt.num(base[name]) for name in o.get("params", ())]
    return [*obs[:k], *rates[:k], *ps, *extra]


def _margin_error(rt, base, g, residual, name):
    S = driver_spec()
    o = S["outer"]
    pdict = {p: base.get(p) for p in S["parameters"]}
    pdict[S["sweep"]] = g
    return rt.InvariantError(o["kernel"], pdict, residual, f"solution violates {name}",
                             o.get("hint", "report the parameters"))


def _outer_batched(rt, base, gs, sweep, extra):
    """The outer kernel for all sweep points in one call (numpy arrays), with its margins."""
    S = driver_spec()
    o = S["outer"]
    G = len(gs)
    gam = rt.numpy.array([float(g) for g in gs])
    k = o.get("n_rates", len(sweep[0][2]))
    q = [rt.numpy.array([float(s[2][i]) for s in sweep]) for i in range(k)]
    dq = [rt.numpy.array([float(s[3][i]) for s in sweep]) for i in range(k)]
    ps = [gam if name == S["sweep"] else rt.num(base[name]) for name in o.get("params", ())]
    out = rt.batch(getattr(rt, o["kernel"])(*q, *dq, *ps, *extra), G)
    nout = len(o["outputs"])
    for name, margin in zip(o.get("margins", ()), out[nout:]):
        bad = [j for j in range(G) if not margin[j] >= -1e-12]
        if bad:
            raise _margin_error(rt, base, gs[bad[0]], sweep[bad[0]][0].residual, name)
    return out[:nout]


def _outer_point(rt, base, g, fp, obs, rates, extra):
    S = driver_spec()
    o = S["outer"]
    out = getattr(rt, o["kernel"])(*_outer_args(rt, base, g, obs, rates, extra))
    nout = len(o["outputs"])
    tol = rt.num("1e-12") if rt.BACKEND == "numpy" else rt.default_tol()
    for name, v in zip(o.get("margins", ()), out[nout:]):
        if not (v >= -tol):
            raise _margin_error(rt, base, g, fp.residual, name)
    return list(out[:nout])


def _outputs(rt, base, gs, sweep, extra, batched):
    """name → list over the sweep points: the outer outputs, or the observables and rates."""
    S = driver_spec()
    if S.get("outer"):
        names = S["outer"]["outputs"]
        if batched:
            cols = _outer_batched(rt, base, gs, sweep, extra)
            return {n: [c[j] for j in range(len(gs))] for n, c in zip(names, cols)}
        rows = [_outer_point(rt, base, g, s[0], s[2], s[3], extra) for g, s in zip(gs, sweep)]
        return {n: [r[i] for r in rows] for i, n in enumerate(names)}
    out = {}
    for i, n in enumerate(S["observables"]):
        out[n] = [s[2][i] for s in sweep]
        out[f"d{n}_d{S['sweep']}"] = [s[3][i] for s in sweep]
    return out


def _closed_forms(rt, base, gs, batched):
    S = driver_spec()
    out = {}
    for cf in S.get("closed_forms", ()):
        kern = getattr(rt, cf["kernel"])
        if batched:
            gam = rt.numpy.array([float(g) for g in gs])
            args = [gam if n == S["sweep"] else rt.num(base[n]) for n in cf["params"]]
            vals = rt.batch(kern(*args), len(gs))
            for name, col in zip(cf["outputs"], vals):
                out[name] = [col[j] for j in range(len(gs))]
        else:
            for name in cf["outputs"]:
                out[name] = []
            for g in gs:
                args = [g if n == S["sweep"] else rt.num(base[n]) for n in cf["params"]]
                for name, v in zip(cf["outputs"], kern(*args)):
                    out[name].append(v)
    return out


def _extra_inputs(base):
    fn = _hook("outer_inputs")
    return list(fn(base)) if fn is not None else []


def _has_law(rt):
    return hasattr(rt, "law_nodes") and driver_spec().get("law_parameter") is not None


def _nodes(rt, base, level):
    if not _has_law(rt):
        return None
    return rt.law_nodes(rt.num(base[driver_spec()["law_parameter"]]), level)


def _curve_batched(rt, base, gs, n_nodes, error_estimate):
    S = driver_spec()
    extra = _extra_inputs(base)
    fine = _nodes(rt, base, n_nodes)
    sw = continuation_sweep(base, gs, fine, rt=rt)
    outs = _outputs(rt, base, gs, sw, extra, batched=S.get("outer") is not None)
    err = [None] * len(gs)
    est = S.get("error")
    if error_estimate and est and fine is not None:
        coarse = _nodes(rt, base, max(16, n_nodes // 2))
        csw = continuation_sweep(base, gs, coarse, starts=[(s[0].x, s[0].jacobian) for s in sw], rt=rt)
        couts = _outputs(rt, base, gs, csw, extra, batched=S.get("outer") is not None)
        err = [abs(float(a) - float(b)) for a, b in zip(outs[est["output"]], couts[est["output"]])]
    outs.update(_closed_forms(rt, base, gs, batched=True))
    return sw, outs, err


def _ladder_point(rt, base, g, extra, x0, progress=None):
    """One sweep point under mpmath: the node count doubles until the error output agrees to the
    working precision between two levels; that difference is the reported quadrature error."""
    S = driver_spec()
    sk = system_kernels(rt)
    est = S.get("error", {}).get("output")
    lo, hi = S.get("ladder", (6, 12))
    target = rt.default_tol() * 10
    x = x0
    if x is None:
        # cold start at double precision first (damped/Anderson stages are the slow part), then
        # Newton polish at the working precision along the node ladder
        import mpmath

        with mpmath.workdps(15):
            fp, _, _, _ = _point(rt, sk, _params_at(rt, base, rt.num(g)), _nodes(rt, base, lo))
            x = fp.x
        x = [rt.num(v) for v in x]
    prev = None
    err = None
    for degree in range(lo, hi + 1):
        nodes = _nodes(rt, base, degree)
        fp, dx, obs, rates = _point(rt, sk, _params_at(rt, base, g), nodes, x)
        x = fp.x
        cur = (fp, dx, obs, rates)
        if S.get("outer"):
            outs = dict(zip(S["outer"]["outputs"], _outer_point(rt, base, g, fp, obs, rates, extra)))
        else:
            outs = dict(zip(S["observables"], obs))
        if prev is not None and est is not None:
            err = rt.absval(outs[est] - prev[est])
            if err <= target * (1 + rt.absval(outs[est])):
                return cur, outs, err
        if est is None:
            return cur, outs, None
        prev = outs
    raise rt.ConvergenceError(
        f"{S['system']} quadrature", {S["law_parameter"]: base[S["law_parameter"]], S["sweep"]: g}, err,
        f"quadrature did not reach {len(str(target))} digits by degree {hi}",
        "fewer digits (--digits), or another parameter point")


def _curve_pointwise(rt, base, gs, progress=None):
    S = driver_spec()
    extra = _extra_inputs(base)
    sw, cols, errs = [], {}, []
    x0 = dx0 = g_prev = None
    jump = S.get("jump", 3)
    for k, g in enumerate(gs):
        warm = None
        if x0 is not None and _near(g, g_prev, jump):
            warm = [a + d * (g - g_prev) for a, d in zip(x0, dx0)]  # first-order predictor, exact slope
        if _has_law(rt):
            cur, outs, err = _ladder_point(rt, base, g, extra, warm, progress)
        else:
            sk = system_kernels(rt)
            cur = _point(rt, sk, _params_at(rt, base, g), None, warm)
            outs = (dict(zip(S["outer"]["outputs"], _outer_point(rt, base, g, cur[0], cur[2], cur[3], extra)))
                    if S.get("outer") else dict(zip(S["observables"], cur[2])))
            err = None
        if progress is not None:
            progress(f"{S['sweep']}={float(g):g} done ({k + 1}/{len(gs)})")
        sw.append(cur)
        errs.append(err)
        for name, v in outs.items():
            cols.setdefault(name, []).append(v)
        x0, dx0, g_prev = cur[0].x, cur[1], g
    cols.update(_closed_forms(rt, base, gs, batched=False))
    return sw, cols, errs


def sweep_curve(base, values, *, digits=None, n_nodes=3000, error_estimate=True, check_monotone=True,
                progress=None):
    """Records along ``values`` of the sweep parameter, in the order given.

    ``base`` maps the other parameters (and hook inputs) to values.  Points are solved in the
    order ``DRIVER["order"]`` (``"descending"`` or ``"ascending"``) for continuation.  Each
    record has the keys ``DRIVER["record"]``.  Under mpmath the work runs at ``digits``
    significant digits (default 30).
    """
    rt = _runtime()
    if rt.BACKEND == "mpmath":
        import mpmath

        with mpmath.workdps(int(digits or 30)):
            return _sweep_curve(rt, base, values, n_nodes, error_estimate, check_monotone, progress)
    # non-finite intermediate values are detected by the solver (and raise ConvergenceError);
    # numpy's floating-point warnings would only add noise
    with rt.numpy.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _sweep_curve(rt, base, values, n_nodes, error_estimate, check_monotone, progress)


def _sweep_curve(rt, base, values, n_nodes, error_estimate, check_monotone, progress):
    S = driver_spec()
    desc = S.get("order", "descending") == "descending"
    order = sorted(range(len(values)), key=lambda i: -float(values[i]) if desc else float(values[i]))
    gs = [rt.num(values[i]) for i in order]
    if rt.BACKEND == "numpy":
        sw, cols, errs = _curve_batched(rt, base, gs, n_nodes, error_estimate)
    else:
        sw, cols, errs = _curve_pointwise(rt, base, gs, progress)
    err_name = S.get("error", {}).get("name", "error")
    out = [None] * len(values)
    for k, i in enumerate(order):
        rec = {S["sweep"]: float(gs[k]) if rt.BACKEND == "numpy" else gs[k]}
        for name, col in cols.items():
            rec[name] = float(col[k]) if rt.BACKEND == "numpy" else col[k]
        rec[err_name] = errs[k]
        rec["iterations"] = sw[k][0].iterations
        rec["method"] = sw[k][0].method
        keys = S.get("record")
        out[i] = {key: rec[key] for key in keys} if keys else rec
    mono = S.get("monotone")
    if check_monotone and mono:
        name, tol = mono["output"], mono.get("tol", 1e-10)
        for i, j in zip(order[1:], order[:-1]):  # consecutive points in solve order
            a, b = float(out[i][name]), float(out[j][name])
            lo_first = float(values[i]) < float(values[j])
            inc = (b - a) if lo_first else (a - b)  # change from the smaller to the larger value
            if (mono["direction"] == "nondecreasing" and inc < -tol) or \
               (mono["direction"] == "nonincreasing" and inc > tol):
                raise rt.InvariantError(
                    f"{S['system']} sweep", {S["sweep"]: out[i][S["sweep"]]}, 0,
                    f"{name} is not {mono['direction']} along the {S['sweep']} sweep", "report the parameters")
    return out


# ------------------------------------------------------------------------------------------------
# presentation (shared by the in-process command and exported files)


def _num_text(v, digits):
    if BACKEND == "mpmath":  # noqa: F821 - the runtime's backend name
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
                if val in ("nan", "inf", "-inf"):
                    val = "null"
            items.append(f"{json.dumps(k)}: {val}")
        parts.append("{" + ", ".join(items) + "}")
    return "[\n  " + ",\n  ".join(parts) + "\n]"


def format_table(records, digits=None):
    """The records as a table of ``DRIVER["columns"]`` (error columns with two digits)."""
    S = driver_spec()
    digits = int(digits or 6)
    cols = S["columns"]
    errs = set(S.get("error_columns", ()))

    def cell(k, v):
        if v is None:
            return "-"
        if k in errs:  # an error estimate: two significant digits say enough
            return f"{float(v):.2g}"
        return f"{float(v):.{digits}g}" if BACKEND == "numpy" else _num_text(v, digits)  # noqa: F821

    rows = [[cell(k, r[k]) for k in cols] for r in records]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(cols)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(cols, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def add_arguments(parser):
    """The options of ``DRIVER["cli"]`` (an exported file's command line)."""
    for opt in driver_spec()["cli"]:
        if opt.get("backend") and opt["backend"] != BACKEND:  # noqa: F821
            continue
        kw = {"help": opt.get("help")}  # numbers are parsed and checked after argparse (check_options)
        if opt.get("required"):
            kw["required"] = True
        else:
            kw["default"] = opt.get("default")
        if opt.get("flag"):
            parser.add_argument(f"--{opt['name']}", action="store_true", help=opt.get("help"))
        else:
            parser.add_argument(f"--{opt['name']}", **kw)


def check_options(args):
    """Parse and check every numeric option of ``DRIVER["cli"]`` (``"type"``, ``"check"``) in place, with
    the command line's validator (``parse_number`` of :mod:`attnlimits.symbolic.result`, whose text the
    generated module carries): the same bounds and the same one-line messages as ``attnlimits``."""
    for opt in driver_spec()["cli"]:
        if opt.get("flag") or not (opt.get("type") or opt.get("check")):
            continue
        if opt.get("backend") and opt["backend"] != BACKEND:  # noqa: F821
            continue
        value = getattr(args, opt["name"], None)
        if value is not None:
            setattr(args, opt["name"], parse_number(opt["name"], value, opt.get("type", "float"),  # noqa: F821
                                                    opt.get("check", "")))
    return args


def main(argv=None):
    """Command line of an exported solver (its constants are baked into this file)."""
    S = driver_spec()
    parser = argparse.ArgumentParser(description=S["description"].format(**_constants()),
                                     epilog=f"example: python FILE {S['example']}")
    add_arguments(parser)
    argv = join_negative_values(list(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    rt = _runtime()
    try:
        check_options(args)
        _hook("run")(args)
    except (InputError, rt.ConvergenceError) as exc:
        print(f"error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    except (ValueError, ArithmeticError) as exc:  # defensive: one line, never a traceback
        print(f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", file=sys.stderr)
        return 2
    return 0


def _constants():
    return {k: v for k, v in globals().items() if k.isupper() and isinstance(v, (str, int, float))}


def join_negative_values(argv):
    """``--wk -0.5,0.5`` → ``--wk=-0.5,0.5`` (argparse would take ``-0.5,0.5`` for an option)."""
    out, i = [], 0
    while i < len(argv):
        tok = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        if tok.startswith("--") and "=" not in tok and nxt[:1] == "-" and nxt[1:2].isdigit() | (nxt[1:2] == "."):
            out.append(f"{tok}={nxt}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out
