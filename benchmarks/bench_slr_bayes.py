"""Benchmark of the SLR Bayes-risk quadratures of :mod:`attnlimits.numeric.slr.bayes_risk` (docs/slr.md §7).

(a) Spiked ``L = 2``: ``bayes_risk`` in float64 (``scipy.integrate.quad`` split at the step, to
    1e-12) and at 30 digits (``mpmath.quad`` with split points), against the baselines measured in
    the same run: ``scipy.integrate.quad`` on the same integrand over (-inf, inf) without split
    points, and plain ``mpmath.quad`` over [-inf, inf].  Accuracy is measured against the 40-digit
    value.
(b) ``L = 3``: the lattice u-representation in float64 and at 30 digits, against nested
    ``scipy.integrate.quad`` (outer in u, inner split at the step).

Usage::

    python benchmarks/bench_slr_bayes.py --nus 1 5 32 --repeats 20
"""
from __future__ import annotations

import argparse

import mpmath
import numpy as np
from scipy import integrate

from attnlimits.derivations.slr.kernels import slr_kernels
from attnlimits.numeric.slr import bayes_risk as NB
from attnlimits.verify.slr.problem import slr_problem
from attnlimits.verify.slr.theory import theory_of
from _timing import ratio, timed  # benchmarks/_timing.py (this script's folder is on sys.path)

K = slr_kernels()


def _baseline_f64(nu, tol=1e-12):
    fm = K["bayes_spiked"].module("numpy").one_d
    f = lambda z, nu: fm(z, nu)[0]  # noqa: E731
    with np.errstate(over="ignore", under="ignore"):
        return integrate.quad(f, -np.inf, np.inf, args=(nu,), epsabs=tol, epsrel=1e-14, limit=200)[0]


def _baseline_mp(nu, dps):
    fm = K["bayes_spiked"].module("mpmath").one_d
    f = lambda z, nu: fm(z, nu)[0]  # noqa: E731
    with mpmath.workdps(dps):
        num = mpmath.mpf(nu)
        return +mpmath.quad(lambda z: f(z, num), [-mpmath.inf, mpmath.inf])


def _rel(x, ref):
    with mpmath.workdps(50):
        return float(abs(mpmath.mpf(x) - ref) / abs(ref))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nus", type=float, nargs="+", default=[1.0, 5.0, 32.0], help="spike strengths ν")
    ap.add_argument("--repeats", type=int, default=20, help="float64 timings are the best of this many")
    ap.add_argument("--mp-repeats", type=int, default=3, help="mpmath timings are the best of this many")
    ap.add_argument("--dps", type=int, default=30, help="digits of the mpmath runs")
    args = ap.parse_args(argv)

    theory_of(slr_problem("spiked", 1.0, 2)).bayes_risk()  # generate and cache the integrand kernels
    theory_of(slr_problem("spiked", 1.0, 3)).bayes_risk()
    rows = []
    print("(a) spiked L=2: time (ms) and relative error vs the 40-digit value")
    hdr = f"{'nu':>5} {'E_B':>12} | {'f64 split':>10} {'err':>8} | {'f64 plain':>10} {'err':>8} {'ratio':>6} |" \
          f" {'mp split':>9} {'err':>8} | {'mp plain':>9} {'err':>8} {'ratio':>6}"
    print(hdr)
    print("-" * len(hdr))
    for nu in args.nus:
        th = theory_of(slr_problem("spiked", nu, 2))
        ref = th.bayes_risk(dps=40).value
        t_s, v_s = timed(lambda: th.bayes_risk().value, args.repeats)
        t_p, v_p = timed(lambda: _baseline_f64(nu), args.repeats)
        m_s, w_s = timed(lambda: th.bayes_risk(dps=args.dps).value, args.mp_repeats)
        m_p, w_p = timed(lambda: _baseline_mp(nu, args.dps), args.mp_repeats)
        row = dict(nu=nu, value=float(ref), f64_ms=t_s.min * 1e3, f64_err=_rel(v_s, ref),
                   f64_plain_ms=t_p.min * 1e3, f64_plain_err=_rel(v_p, ref), mp_ms=m_s.min * 1e3,
                   mp_err=_rel(w_s, ref), mp_plain_ms=m_p.min * 1e3, mp_plain_err=_rel(w_p, ref))
        rows.append(row)
        print(f"{nu:5g} {float(ref):12.6e} | {row['f64_ms']:10.3f} {row['f64_err']:8.1e} | {row['f64_plain_ms']:10.3f}"
              f" {row['f64_plain_err']:8.1e} {ratio(t_p, t_s, 'min'):6.2f} | {row['mp_ms']:9.1f} {row['mp_err']:8.1e} |"
              f" {row['mp_plain_ms']:9.1f} {row['mp_plain_err']:8.1e} {ratio(m_p, m_s, 'min'):6.2f}")
    print("ratio = baseline time / bayes_risk time; err = |value - value_40| / value_40")

    print("\n(b) L=3 (u-representation): time (ms) and relative error vs the 40-digit value")
    hdr = f"{'model':>7} {'nu':>5} {'E_B':>12} | {'lattice f64':>11} {'err':>8} | {'nested quad':>11} {'err':>8} |" \
          f" {'lattice mp':>10} {'err':>8}"
    print(hdr)
    print("-" * len(hdr))
    for model, nu in (("spiked", 5.0), ("max", 2.0)):
        th = theory_of(slr_problem(model, nu, 3))
        ref = th.bayes_risk(dps=40).value
        t_l, v_l = timed(lambda: th.bayes_risk().value, args.repeats)
        t_n, v_n = timed(lambda: NB._bayes_risk_nested_quad(K, model, nu, 3)[0], 1)
        m_l, w_l = timed(lambda: th.bayes_risk(dps=args.dps).value, 1)
        rows.append(dict(model=model, nu=nu, L=3, lattice_ms=t_l.min * 1e3, nested_ms=t_n.min * 1e3,
                         mp_ms=m_l.min * 1e3))
        print(f"{model:>7} {nu:5g} {float(ref):12.6e} | {t_l.min * 1e3:11.3f} {_rel(v_l, ref):8.1e} | "
              f"{t_n.min * 1e3:11.1f} {_rel(v_n, ref):8.1e} | {m_l.min * 1e3:10.1f} {_rel(w_l, ref):8.1e}")
    return {"rows": rows}


if __name__ == "__main__":
    main()
