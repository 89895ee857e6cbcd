"""Benchmark: a γ curve of Ē (attention_rmt) — generated solver vs warm-started scipy root finding.

**Generated solver** (``compile_model(R.model, "numpy").curve(...)``, its default options): a
sweep from large γ with warm starts predicted by cubic Hermite extrapolation, chord/Newton steps
with the symbolic Jacobian, the exact derivative dȳ/dγ from the implicit-function theorem, and —
by default — the quadrature error estimate (a second sweep on half the nodes).

**Strong baseline** (what a competent user would write): ``scipy.optimize.root(method="hybr")``
(MINPACK's hybrd/hybrj, the algorithm behind ``fsolve``) on the *same* §5 residual
F(A) = A − G(A) and the *same* quadrature nodes, sweeping from large γ and warm-started from the
solution at the previous γ.  The residual (from the update kernel ``rmt_bulk_update``), its
symbolic Jacobian (passed as ``jac``; MINPACK evaluates it once per solve and then updates it by
Broyden steps), ∂F/∂γ, the traces and the §6 Woodbury stage are evaluated with the generated
module's kernels ``rmt_bulk_residual_jacobian``, ``rmt_bulk_dparam_gamma``, ``rmt_bulk_observables``,
``rmt_bulk_observable_rates_gamma`` and ``rmt_outer`` (called once for the whole curve, batched
over γ, as the generated driver does) — so the comparison is between root-finding and sweep
strategies on identical arithmetic, not between two transcriptions of the formulas.
Ē = −γ² dȳ/dγ uses the implicit derivative dA/dγ = −J⁻¹ ∂F/∂γ (``--derivative implicit``, the
default and the stronger choice) or a central difference of ȳ at γ(1 ± h) (``--derivative
central``).  With the error estimate on (``--error-estimate on``, the generated solver's default)
the baseline also re-solves every γ on half the nodes, warm-started from the fine solution, and
reports |Ē_N − Ē_{N/2}| — the same estimate the generated solver reports.  ``--error-estimate
both`` times both settings, labelled.

**Weak baseline** (``--weak``; the baseline of earlier versions of this script, kept only for
continuity and labelled as such): every γ solved cold by damped iteration (damping ½ from
(1/γ, 0, 0), stop at L1 change < 1e-13(1 + |A₁₁|)) at γ(1 ± h), Ē by central difference.

The two (or three) sides alternate within every repeat (the order flips between repeats), run
in the same process under the same thread setting (``--threads``, default 1, applied to BLAS
with threadpoolctl and through ``OMP_NUM_THREADS`` & co. before numpy is imported), and each
prints min/median/max over the repeats.  The benchmark stops with an error if the two sides'
Ē differ by more than 1e-8 anywhere on the curve.

Usage: python benchmarks/bench_rmt_curve.py [--points 30] [--c 0.5,2] [--snr 1,4] [--repeats 7]
       [--error-estimate on|off|both] [--derivative implicit|central] [--weak] [--threads 1]
"""
from __future__ import annotations

import argparse
import os
import sys


def _threads_from_argv(argv) -> int:
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if a.startswith("--threads="):
            return int(a.split("=", 1)[1])
    return 1


# the thread setting must be in the environment before numpy (and its BLAS) is loaded
_THREADS = _threads_from_argv(sys.argv[1:])
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = str(_THREADS)

import statistics  # noqa: E402

import numpy as np  # noqa: E402
from scipy.optimize import root  # noqa: E402
from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402

from attnlimits.derivations import attention_rmt as R  # noqa: E402
from attnlimits.numeric import compile_model  # noqa: E402
from _timing import alternate, ratio  # noqa: E402  (benchmarks/_timing.py: this script's folder is on sys.path)

A1, NU = 0.6057055096021588, 0.3942944903978412  # tanh (see `attnlimits hermite --activation tanh`)
KAPPA = 0.0
AGREE = 1e-8  # the two sides must give the same Ē to this absolute accuracy
_MS = dict(spec="8.1f", sep=" ", scale=1e3)  # min, median, max in ms


# ------------------------------------------------------------------------------------------------
# strong baseline: scipy.optimize.root('hybr'), warm-started from the previous γ


class BaselineError(RuntimeError):
    pass


#: kernel calls made by hybr in the last baseline run: residual (nfev) and Jacobian (njev)
CALLS = {"nfev": 0, "njev": 0, "solves": 0}


def _solve_hybr(mod, x0, p, nodes, xtol):
    n = 3

    def fun(x):  # F = x − G(x): the update kernel alone (half the cost of F and J together)
        return x - np.array(mod.rmt_bulk_update(*x, *p, _nodes=nodes), dtype=float)

    def jac(x):  # ∂F/∂x, the generated symbolic Jacobian
        out = mod.rmt_bulk_residual_jacobian(*x, *p, _nodes=nodes)
        return np.array(out[n:], dtype=float).reshape(n, n)

    sol = root(fun, x0, jac=jac, method="hybr", options={"xtol": xtol})
    if not sol.success:
        raise BaselineError(f"hybr failed at gamma={p[1]:g}: {sol.message}")
    CALLS["nfev"] += sol.nfev
    CALLS["njev"] += getattr(sol, "njev", 0)
    CALLS["solves"] += 1
    return sol.x


def _traces_and_rates(mod, x, p, nodes):
    """q₀…q₅ and dq/dγ at a solved bulk point: implicit derivative dA/dγ = −J⁻¹ ∂F/∂γ."""
    out = mod.rmt_bulk_residual_jacobian(*x, *p, _nodes=nodes)
    J = np.array(out[3:], dtype=float).reshape(3, 3)
    Fg = np.array(mod.rmt_bulk_dparam_gamma(*x, *p, _nodes=nodes), dtype=float)
    dx = np.linalg.solve(J, -Fg)
    obs = mod.rmt_bulk_observables(*x, *p, _nodes=nodes)
    rates = mod.rmt_bulk_observable_rates_gamma(*x, *p, *dx, _nodes=nodes)
    return [float(v) for v in obs[:6]], [float(v) for v in rates[:6]]


def _outer(mod, c, gams, qs, dqs, geom):
    """§6 Woodbury stage for all γ in one call of the (vectorised) ``rmt_outer`` kernel."""
    m, Gam, Om, r = geom
    q = [np.array([row[k] for row in qs]) for k in range(6)]
    dq = [np.array([row[k] for row in dqs]) for k in range(6)]
    out = mod.batch(mod.rmt_outer(*q, *dq, c, np.asarray(gams, dtype=float), A1, m, Gam, Om, r), len(gams))
    return np.asarray(out[0], dtype=float), np.asarray(out[2], dtype=float)  # ȳ, Ē


def _sweep(mod, c, gs, geom, nodes, derivative, h, xtol, starts=None):
    """Ē along descending ``gs``; each solve warm-started from the previous γ's solution (or
    from ``starts``).  Returns (Ē, solutions)."""
    xs, qs, dqs = [], [], []
    qp, qm, gp_, gm_ = [], [], [], []
    x = None
    for k, g in enumerate(gs):
        if starts is not None:
            x0 = starts[k]
        else:
            x0 = np.array([1 / g, 0.0, 0.0]) if x is None else x  # cold only at the largest γ
        p = [c, g, A1, NU, KAPPA]
        x = _solve_hybr(mod, x0, p, nodes, xtol)
        xs.append(x)
        if derivative == "implicit":
            q, dq = _traces_and_rates(mod, x, p, nodes)
            qs.append(q)
            dqs.append(dq)
        else:
            for gg, store, gstore in ((g * (1 + h), qp, gp_), (g * (1 - h), qm, gm_)):
                pp = [c, gg, A1, NU, KAPPA]
                xx = _solve_hybr(mod, x, pp, nodes, xtol)
                store.append([float(v) for v in mod.rmt_bulk_observables(*xx, *pp, _nodes=nodes)[:6]])
                gstore.append(gg)
    if derivative == "implicit":
        return _outer(mod, c, gs, qs, dqs, geom)[1], xs
    zeros = [[0.0] * 6] * len(gs)
    yp = _outer(mod, c, gp_, qp, zeros, geom)[0]
    ym = _outer(mod, c, gm_, qm, zeros, geom)[0]
    g = np.asarray(gs)
    return -g * g * (yp - ym) / (np.asarray(gp_) - np.asarray(gm_)), xs


def baseline_curve(mod, c, gammas, snr, *, n_nodes, error_estimate, derivative, h, xtol):
    """Ē (and the quadrature error estimate) along ``gammas`` by warm-started hybr."""
    geom = mod.geometry(snr, [1], [1])
    order = sorted(range(len(gammas)), key=lambda i: -gammas[i])
    gs = [float(gammas[i]) for i in order]
    CALLS.update(nfev=0, njev=0, solves=0)
    Es, xs = _sweep(mod, c, gs, geom, mod.law_nodes(c, n_nodes), derivative, h, xtol)
    errs = [None] * len(gs)
    if error_estimate:  # the same estimate as the generated solver: |Ē_N − Ē_{N/2}|
        Ec, _ = _sweep(mod, c, gs, geom, mod.law_nodes(c, n_nodes // 2), derivative, h, xtol, starts=xs)
        errs = list(np.abs(Es - Ec))
    E = np.empty(len(gammas))
    err = [None] * len(gammas)
    for k, i in enumerate(order):
        E[i], err[i] = Es[k], errs[k]
    return E, err


# ------------------------------------------------------------------------------------------------
# weak baseline (the old one): cold damped iteration per γ, central difference


def _damped_ybar(mod, c, gamma, geom, nodes):
    x = [1 / gamma, 0.0, 0.0]
    p = [c, gamma, A1, NU, KAPPA]
    for _ in range(100000):
        gx = mod.rmt_bulk_update(*x, *p, _nodes=nodes)
        change = sum(abs(a - b) for a, b in zip(gx, x))
        x = [0.5 * a + 0.5 * b for a, b in zip(x, gx)]
        if change < 1e-13 * (1 + abs(x[0])):
            break
    obs = mod.rmt_bulk_observables(*x, *p, _nodes=nodes)
    m, Gam, Om, r = geom
    return float(mod.rmt_outer(*obs[:6], *[0.0] * 6, p[0], p[1], p[2], m, Gam, Om, r)[0])


def weak_curve(mod, c, gammas, snr, *, n_nodes, h):
    geom = mod.geometry(snr, [1], [1])
    nodes = mod.law_nodes(c, n_nodes)
    E = []
    for g in gammas:
        gp, gm = g * (1 + h), g * (1 - h)
        yp, ym = _damped_ybar(mod, c, gp, geom, nodes), _damped_ybar(mod, c, gm, geom, nodes)
        E.append(-g * g * (yp - ym) / (gp - gm))
    return np.array(E)


# ------------------------------------------------------------------------------------------------


def run_setting(mod, c, snr, gammas, args, error_estimate):
    kw = dict(a1=A1, nu=NU, kappa=KAPPA, snr=snr, wk=[1], wq=[1])
    gl = [float(g) for g in gammas]
    bkw = dict(n_nodes=args.nodes, error_estimate=error_estimate, derivative=args.derivative,
               h=args.h, xtol=args.xtol)
    # warm-up both sides (kernel caches, first-call overheads)
    mod.curve(c, gl[:3], n_nodes=args.nodes, error_estimate=error_estimate, **kw)
    baseline_curve(mod, c, gl[:3], snr, **bkw)

    def gen():
        return mod.curve(c, gl, n_nodes=args.nodes, error_estimate=error_estimate, **kw)

    def base():
        return baseline_curve(mod, c, gl, snr, **bkw)

    def weak():
        return weak_curve(mod, c, gl, snr, n_nodes=args.nodes, h=args.h)

    sides = [("generated", gen), ("scipy hybr", base)] + ([("weak", weak)] if args.weak else [])
    # alternate, flipping the order between repeats
    ts, outs = alternate([fn for _, fn in sides], args.repeats, flip=True)
    times = {name: t for (name, _), t in zip(sides, ts)}
    results = {name: out for (name, _), out in zip(sides, outs)}

    recs = results["generated"]
    E_gen = np.array([r["E_attention"] for r in recs])
    E_base, err_base = results["scipy hybr"]
    diff = float(np.max(np.abs(E_gen - E_base)))
    if not diff <= AGREE:
        raise SystemExit(f"error: generated and hybr baseline disagree: max |dE| = {diff:.2e} > {AGREE:g}")
    line_err = ""
    if error_estimate:
        eg = np.array([r["quadrature_error"] for r in recs], dtype=float)
        eb = np.array(err_base, dtype=float)
        line_err = (f"   quadrature error estimate: generated max {eg.max():.1e}, "
                    f"hybr max {eb.max():.1e}")
    diff_weak = None
    if args.weak:
        diff_weak = float(np.max(np.abs(E_gen - results["weak"])))

    est = "ON " if error_estimate else "OFF"
    print(f"\nc={c:g} snr={snr:g}, {len(gl)} gammas in [{gl[0]:g}, {gl[-1]:g}], error estimate {est}, "
          f"nodes={args.nodes}, {args.repeats} repeats (alternating)")
    print(f"  {'side':<62} {'min':>8} {'median':>8} {'max':>8}  [ms]")
    print(f"  {'generated (default curve(); Hermite-predicted chord/Newton)':<62} {times['generated'].mmm(**_MS)}")
    print(f"  {'strong baseline: scipy root hybr, warm start, ' + args.derivative + ' dE':<62} "
          f"{times['scipy hybr'].mmm(**_MS)}")
    if args.weak:
        print(f"  {'WEAK baseline (old; cold damped + central diff, no err. est.)':<62} {times['weak'].mmm(**_MS)}")
    gen_t, base_t = times["generated"], times["scipy hybr"]
    print(f"  ratio hybr/generated: median {ratio(base_t, gen_t):.2f}x (min/min {ratio(base_t, gen_t, 'min'):.2f}x, "
          f"max/max {ratio(base_t, gen_t, 'max'):.2f}x);  max |E_gen - E_hybr| = {diff:.1e} (<= {AGREE:g} checked)")
    if args.weak:
        print(f"  ratio WEAK/generated: median {ratio(times['weak'], gen_t):.1f}x;  "
              f"max |E_gen - E_weak| = {diff_weak:.1e}")
    if line_err:
        print(line_err)
    its = [r["iterations"] for r in recs]
    print(f"  work per bulk solve: generated {statistics.mean(its):.1f} iterations (fine sweep); "
          f"hybr {CALLS['nfev'] / CALLS['solves']:.1f} residual + {CALLS['njev'] / CALLS['solves']:.1f} "
          f"Jacobian evaluations ({CALLS['solves']} solves per curve)")
    return {"c": c, "snr": snr, "error_estimate": error_estimate,
            "times": {name: list(t.walls) for name, t in times.items()}, "diff": diff}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=30, help="γ points, log-spaced (default 30)")
    ap.add_argument("--gamma-min", type=float, default=1e-3)
    ap.add_argument("--gamma-max", type=float, default=10.0)
    ap.add_argument("--c", default="0.5,2", help="comma-separated c values (paired with --snr)")
    ap.add_argument("--snr", default="1,4", help="comma-separated SNR values (paired with --c)")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--nodes", type=int, default=3000, help="midpoint nodes of the MP quadrature (default 3000)")
    ap.add_argument("--error-estimate", choices=("on", "off", "both"), default="on",
                    help="'on' is the generated solver's default; 'both' times both settings")
    ap.add_argument("--derivative", choices=("implicit", "central"), default="implicit",
                    help="baseline's dȳ/dγ: implicit function theorem (default) or central difference")
    ap.add_argument("--h", type=float, default=1e-5, help="relative step of central differences")
    ap.add_argument("--xtol", type=float, default=1e-13, help="hybr's xtol (default 1e-13)")
    ap.add_argument("--weak", action="store_true", help="also time the old weak baseline (labelled)")
    ap.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads for both sides (default 1)")
    args = ap.parse_args()

    cs = [float(v) for v in args.c.split(",")]
    snrs = [float(v) for v in args.snr.split(",")]
    if len(cs) != len(snrs):
        ap.error("--c and --snr need the same number of values")
    limiter = threadpool_limits(limits=args.threads)  # noqa: F841  (kept alive for the run)
    pools = sorted({f"{p['internal_api']}={p['num_threads']}" for p in threadpool_info()})
    print(f"threads: {args.threads} (OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}; "
          f"threadpoolctl: {', '.join(pools) or 'no pools loaded'}); "
          f"numpy {np.__version__}; tanh (a1={A1:.6f}, nu={NU:.6f}), aligned unit weights wk=wq=mu/|mu|")
    mod = compile_model(R.model, "numpy")
    gammas = np.logspace(np.log10(args.gamma_min), np.log10(args.gamma_max), args.points)
    modes = {"on": [True], "off": [False], "both": [True, False]}[args.error_estimate]
    for c, snr in zip(cs, snrs):
        for ee in modes:
            run_setting(mod, c, snr, gammas, args, ee)


if __name__ == "__main__":
    main()
