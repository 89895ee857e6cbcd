"""Evaluation functions of the single-location-regression properties (declared in
:mod:`attnlimits.derivations.slr.result`).  Each takes ``(point, *, size, seed)`` and returns
``[(label, Comparison), ...]`` (:mod:`attnlimits.symbolic.properties`)."""
from __future__ import annotations

import functools
import math

from attnlimits.verify.comparison import Comparison

__all__ = ["bayes_bound", "bo_monotone", "bo_below_rs", "bo_large_alpha", "risk_formula_vs_direct", "gamp_vs_state_evolution",
           "replica_vs_erm", "replica_vs_erm_loss", "replica_vs_erm_max", "predecessor_vs_mc",
           "population_vs_mc", "replica_vs_erm_models", "replica_vs_erm_at", "length_law", "minimum_detectable_deviation"]

#: the precision to which the population optimiser locates an optimum (its ``--tol`` 1e-6 on the
#: integrals, the optimum's value then to about 1e-5): a deterministic numerical precision
OPTIMUM_PRECISION = 1e-5


def minimum_detectable_deviation(c: Comparison, level: float = 0.01) -> float:
    """The smallest deviation of ``c.value`` from ``c.reference`` that the comparison detects with
    probability about 1/2 at per-check ``level``: ``t(1 − level/2, dof)·SE + tolerance + allowance``
    (two-sided; ``t(1 − level, dof)`` for one-sided kinds)."""
    from attnlimits.verify.comparison import critical_value

    t = critical_value(level, c.dof, sided=2 if c.kind in ("abs", "rel") else 1)
    return t * float(c.se or 0.0) + float(c.tolerance) + float(c.allowance)


def length_law(L) -> list:
    """The lengths of a point's ``L``: an int, or a comma list ``"1,2,3"`` (L uniform over it, the
    population command's ``--L 1,2,3``)."""
    if isinstance(L, str):
        return [int(x) for x in L.split(",") if x.strip()]
    return [int(L)]


def _population_rows(point, seed):
    from attnlimits.derivations.slr.result import POPULATION_COMMAND
    from attnlimits.symbolic.result import resolve

    params = POPULATION_COMMAND.parse({"model": point["model"], "nu": point["nu"], "L": length_law(point["L"]),
                                       "activation": [point["activation"]], "seed": seed})
    return list(resolve(POPULATION_COMMAND.run)(params, progress=None))


def bayes_bound(point, *, size, seed):
    """The optimal population risk of an activation is at least the Bayes risk; softmax attains it."""
    (row,) = _population_rows(point, seed)
    se = math.hypot(float(row.get("risk_error") or 0.0), float(row.get("bayes_error") or 0.0))
    out = [("optimal risk >= Bayes risk", Comparison(float(row["risk"]), float(row["bayes_risk"]), se=se or None,
                                                     tolerance=OPTIMUM_PRECISION, kind="lower"))]
    if point["activation"] == "softmax":
        out.append(("softmax attains the Bayes risk", Comparison(float(row["risk"]), float(row["bayes_risk"]),
                                                                 se=se or None, tolerance=OPTIMUM_PRECISION)))
    return out


#: the keys of a population argmin that are overlaps; any other key is the activation's extra scalar (c or b)
_OVERLAPS = ("m_k", "q_k", "s_k", "m_v", "q_v")


def population_vs_mc(point, *, size, seed):
    """The optimal population risk of the theory (``attnlimits slr population``) against a Monte Carlo
    of the risk at the reported argmin: the projection estimator of §6.2
    (:func:`attnlimits.verify.slr.estimators.projection_risk`, fresh draws of the population
    projections, no dimension D), ``n`` sequences per length in ``batches`` batches (SE over batches,
    ``batches − 1`` degrees of freedom), the length law L (a fixed L or L uniform over a list) drawn
    with common random numbers per length.  Where the optimum is a limit (m_k → ∞, b → −∞) the theory
    side is the risk *at the search bound* (``risk_at_bound``), where the Monte Carlo is evaluated.
    The theory's own integration error enters the SE as a large-sample term.

    Power (``benchmarks/bench_property_power.py``, ``n`` = 400 000 in 40 batches): the minimum detectable
    deviation at a per-check level of 1 % (:func:`minimum_detectable_deviation`) is 0.9 % of the risk
    (softmax, spiked ν = 2, L = 2), 0.26 % (erf_learned, max ν = 8, L = 3), 0.2 % (linear_uncentred,
    L ~ U{1,2,3}); 0.4–5 s per point.  Where the risk itself is tiny (softmax at ν ≳ 30: e^(−ν/4)) the
    check is an absolute one, at the theory's integration error."""
    from attnlimits.verify.comparison import combine
    from attnlimits.verify.slr.estimators import projection_risk

    from attnlimits.verify.slr.population_command import argmin_of

    (row,) = _population_rows(point, seed)
    arg = argmin_of(row)
    extra = [v for k, v in arg.items() if k not in _OVERLAPS]
    theory = float(row["risk_at_bound"]) if row.get("limit") and row.get("risk_at_bound") is not None \
        else float(row["risk"])
    Ls = length_law(point["L"])
    law = Ls[0] if len(Ls) == 1 else {L: 1.0 / len(Ls) for L in Ls}
    batches = int(size.get("batches", 40))
    n = int(size.get("n", 400_000))
    est = projection_risk(point["activation"], arg["m_k"], arg["q_k"], arg["m_v"], arg["q_v"], model=point["model"],
                          nu=float(point["nu"]), L=law, n=n, generator=int(seed), extra=extra[0] if extra else None,
                          batches=batches, device=size.get("device", "cpu"))
    se, dof = combine([float(est.se), float(row.get("risk_error") or 0.0)], [est.n_draws - 1, None])
    where = "at the search bound" if row.get("limit") else "at the optimum"
    return [(f"MC risk {where} (n={n}) vs theory",
             Comparison(float(est.mean), theory, se=se, dof=dof))]


def _bo(model, nu, L, alphas, delta, size, seed):
    from attnlimits.verify.slr.bayes_optimal import bo_state_evolution

    return bo_state_evolution(model, nu, L, list(alphas), delta, points=int(size.get("points", 2 ** 11)),
                              replicates=int(size.get("replicates", 8)), seed=seed)


@functools.lru_cache(maxsize=None)
def _prior_stationarity():
    """q as the stationarity of the BO free entropy in q̂ gives it, 2 dψ_P/dq̂ (ψ_P the derived prior free entropy
    of §11), compiled once per process (an ``lru_cache``: cleared by the power benchmark's mutation hook)."""
    import sympy

    from attnlimits.derivations.slr import bayes_optimal as B

    return sympy.lambdify(B.qhat, 2 * sympy.diff(B.prior_free_entropy(), B.qhat), modules="math")


def _bo_stationarity(points):
    """At a state-evolution fixed point the free entropy is stationary in q̂: q_b = 2ψ_P′(q̂_b) for the key and the
    value block.  The update the solver iterates is a separate expression (the derived ``prior_update``), so
    this identity sees an error in it (or in ψ_P) at any α; tolerance 1e-9 plus ten times the fixed point's
    residual (measured: 3e-12 apart on correct code)."""
    f = _prior_stationarity()
    out = []
    for p in points:
        for b in ("k", "v"):
            q, qhat = float(getattr(p, f"q_{b}")), float(getattr(p, f"qhat_{b}"))
            out.append((f"q_{b} = 2 dpsi_P/dqhat at the fixed point (alpha={p.alpha:.3g})",
                        Comparison(q, float(f(qhat)), tolerance=1e-9 + 10 * float(p.residual))))
    return out


def bo_monotone(point, *, size, seed):
    """E_BO is non-increasing in α: E_BO(r·α) ≤ E_BO(α); at both fixed points the free entropy is stationary in
    q̂ (:func:`_bo_stationarity`)."""
    a1, a2 = point["alpha"], point["alpha"] * point["ratio"]
    p1, p2 = _bo("spiked", point["nu"], point["L"], (a1, a2), 0.1, size, seed)
    reps = int(size.get("replicates", 8))
    return [(f"E_BO(α={a2:.3g}) <= E_BO(α={a1:.3g})",
             Comparison(p2.E_BO, p1.E_BO, se=math.hypot(p1.E_BO_se, p2.E_BO_se), dof=reps - 1, kind="upper"))] \
        + _bo_stationarity((p1, p2))


def bo_below_rs(point, *, size, seed):
    """The Bayes-optimal error is a lower bound of the replica prediction of ridge ERM (equilibrium branch); at
    that RS fixed point, the identities of :func:`~attnlimits.verify.slr.replica.rs_identities` hold."""
    from attnlimits.verify.comparison import combine
    from attnlimits.verify.slr.replica import rs_identities, rs_problem

    nu, L, a, lam = 2.0, 2, point["alpha"], point["lam"]
    (bo,) = _bo("spiked", nu, L, (a,), 0.1, size, seed)
    rs_reps = int(size.get("rs_replicates", 4))
    problem = rs_problem(point["activation"], "spiked", nu, L, points=int(size.get("rs_points", 512)),
                         replicates=rs_reps, seed=seed)
    found = problem.all_branches([a], lam, 0.1)
    eq = [fp for _, fp, ph in found[a] if ph == "equilibrium"]
    if not eq:
        raise RuntimeError(f"no equilibrium RS fixed point at alpha={a:g}, lam={lam:g}")
    rs = eq[0]
    se, dof = combine([bo.E_BO_se, rs.E_test_error], [int(size.get("replicates", 8)) - 1, rs_reps - 1])
    identities = [(c["label"], Comparison(c["value"], c["reference"], tolerance=c["tolerance"]))
                  for c in rs_identities(problem, rs, L)]
    return [("E_BO <= E_RS (equilibrium)", Comparison(bo.E_BO, rs.E_test, se=se, dof=dof, kind="upper"))] + identities


def gamp_vs_state_evolution(point, *, size, seed):
    """GAMP on generated spiked-SLR data reaches the BO state evolution: its test error within 3 SE plus
    the finite-D allowance c/√D of claim C19-AMP (c = 0.1, measured), over ``seeds`` independent runs."""
    import numpy as np
    from attnlimits.verify.slr.claims.bayes_optimal import AMP_TEST_ERROR_C
    from attnlimits.verify.slr.amp import gamp_on_generated

    D = int(size.get("D", 300))
    n_seeds = int(size.get("seeds", 2))
    (se,) = _bo("spiked", point["nu"], point["L"], (point["alpha"],), 0.1, size, seed)
    runs = [gamp_on_generated(point["nu"], point["L"], point["alpha"], 0.1, D, seed * 101 + s,
                              n_test=int(size.get("n_test", 4000)), iterations=int(size.get("iterations", 400)),
                              device="cpu") for s in range(n_seeds)]
    te = np.array([r["test_error"] for r in runs])
    te_se = max(math.sqrt(sum(r["test_error_se"] ** 2 for r in runs)) / len(runs),
                float(te.std(ddof=1) / math.sqrt(len(runs))) if len(runs) > 1 else 0.0)
    stuck = [s for s, r in enumerate(runs) if not r["converged"]]
    if stuck:
        # GAMP's convergence is a precondition of the statement (the state evolution describes its fixed
        # point), random through the generated instance: a point where it is not met is not evaluable
        from attnlimits.symbolic.properties import NotEvaluable

        raise NotEvaluable(f"GAMP did not converge on {len(stuck)} of {len(runs)} instances (D = {D}, "
                           f"{int(size.get('iterations', 400))} iterations; residual "
                           f"{max(float(runs[s]['residual']) for s in stuck):.2g})")
    return [("GAMP test error vs E_BO", Comparison(float(te.mean()), se.E_BO, se=te_se,
                                                   dof=len(runs) - 1 if len(runs) > 1 else None,
                                                   allowance=AMP_TEST_ERROR_C / math.sqrt(D)))]


def replica_vs_erm(point, *, size, seed):
    """Where replica symmetry is stable, the equilibrium RS branch predicts ridge ERM: the test error of the
    lowest-objective ERM minimum (informed and uninformed starts on the same data, :func:`train_multistart`)
    at ``D`` against the RS E_test, within the combined SE plus a finite-size allowance measured from ``D``
    and ``D/2`` (2.5·|E(D) − E(D/2)|, the rule of ``rmt-vs-simulation``).  Spiked, ν = 2, L = 2, Δ = 0.1.
    Where the equilibrium branch's replicon is ≥ 1 (RS unstable, docs/slr.md §10.8) RS makes no claim and
    the point is reported as such (check "RS unstable"), not compared."""
    return replica_vs_erm_at(point["activation"], "spiked", 2.0, 2, float(point["alpha"]), float(point["lam"]),
                             size=size, seed=seed)


def replica_vs_erm_models(point, *, size, seed):
    """:func:`replica_vs_erm` over the data model (spiked, max), ν and L as well as α, λ and the
    activation: the same evaluation (:func:`replica_vs_erm_at`) and the same allowance rule,
    2.5·|E(D) − E(D/2)| (it bounds the remaining correction for any rate D^−r with r ≥ 1/2).  Sizes: D = 100
    and 50, 24 seeds, RS at 16 replicates (so the combined SE has ≳ 20 degrees of freedom); minimum
    detectable deviation, allowance included, 3.3 % of E_test (softmax, spiked ν = 2, L = 2, α = 4, λ = 0.1;
    40 s per point), 6.1 % (linear_uncentred, max ν = 4, L = 3, α = 8, λ = 0.3: the allowance 0.016 is a
    quarter of it; 65 s) — ``benchmarks/bench_property_power.py``."""
    return replica_vs_erm_at(point["activation"], point["model"], float(point["nu"]), int(point["L"]),
                             float(point["alpha"]), float(point["lam"]), size=size, seed=seed)


def replica_vs_erm_max(point, *, size, seed):
    """:func:`replica_vs_erm` at max-SLR (ν finite, or ``"inf"``: the argmax location), L = 2 or 3, with the
    sizes and allowance rule of :func:`replica_vs_erm_models`."""
    return replica_vs_erm_at(point["activation"], "max", float(point["nu"]), int(point["L"]),
                             float(point["alpha"]), float(point["lam"]), size=size, seed=seed)


def replica_vs_erm_at(act, model, nu, L, a, lam, *, size, seed, delta=0.1):
    """The comparison of :func:`replica_vs_erm` at one (activation, model, ν, L, α, λ): RS at ``rs_points`` ×
    ``rs_replicates`` (default 4) replicates; ERM at ``D`` and ``D/2`` with ``seeds`` seeds each (the SE of the mean over seeds,
    ``seeds − 1`` degrees of freedom, combined with the RS replicate SE by Welch–Satterthwaite), and the two
    identities of the RS theory at that fixed point (:func:`~attnlimits.verify.slr.replica.rs_identities`:
    test error = population risk at the overlaps, free energy = training objective), deterministic."""
    import numpy as np

    from attnlimits.verify.comparison import combine
    from attnlimits.verify.slr.replica import rs_identities, rs_problem
    from attnlimits.verify.slr.train import train_multistart

    reps = int(size.get("rs_replicates", 4))  # the RS SE's degrees of freedom are reps − 1
    problem = rs_problem(act, model, nu, L, points=int(size.get("rs_points", 1024)), replicates=reps, seed=seed)
    found = problem.all_branches([a], lam, delta)
    eq = [fp for _, fp, ph in found[a] if ph == "equilibrium"]
    if not eq:
        raise RuntimeError(f"no equilibrium RS fixed point at {model} nu={nu:g} L={L} alpha={a:g}, lam={lam:g}")
    rs = eq[0]
    if math.isnan(rs.replicon):  # never a silent pass: without a replicon the point cannot be judged
        raise RuntimeError(f"no replicon for the equilibrium RS branch at alpha={a:g}, lam={lam:g}")
    if rs.replicon >= 1.0:  # a precondition, not a verdict: there is no RS prediction to test here
        from attnlimits.symbolic.properties import NotEvaluable

        raise NotEvaluable(f"RS unstable (replicon {rs.replicon:.3g} >= 1): no RS prediction to test")
    D, seeds = int(size.get("D", 200)), int(size.get("seeds", 4))
    inits = tuple(size.get("inits", ("informed", "uninformed")))
    means = {}
    for d in (D // 2, D):
        rows = train_multistart(act, model=model, nu=nu, L=L, alpha=a, lam=lam, D=d, seeds=seeds,
                                seed=seed + d, delta=delta, inits=inits, n_test=int(size.get("n_test", 2000)),
                                device=size.get("device", "auto"))
        best = {}  # seed index -> the first row of its lowest-objective minimum (rows come sorted per seed)
        for r in rows:
            if r["equilibrium"]:
                best.setdefault(r["seed_index"], r)
        e = np.array([r["E_test_overlaps"] for r in best.values()], dtype=float)
        means[d] = (float(e.mean()), float(e.std(ddof=1) / math.sqrt(e.size)) if e.size > 1 else math.inf, e.size)
    (m, s, n), (m_half, _, _) = means[D], means[D // 2]
    se, dof = combine([s, float(rs.E_test_error)], [n - 1, reps - 1])
    identities = [(c["label"], Comparison(c["value"], c["reference"], tolerance=c["tolerance"]))
                  for c in rs_identities(problem, rs, L)]
    return [(f"ERM E_test (D={D}, equilibrium minimum) vs RS equilibrium E_test",
             Comparison(m, float(rs.E_test), se=se, dof=dof, allowance=2.5 * abs(m - m_half)))] + identities


def bo_large_alpha(point, *, size, seed):
    """E_BO(α) → E_B^pop like 1/α (§11; claim C19-order): the Richardson limit 2·E_BO(2α) − E_BO(α) equals the
    population Bayes risk (quadrature, §7) within the combined error of the state evolution plus an allowance
    |E_BO(2α) − E_BO(α)| for the remaining O(1/α²) term (the last correction itself, C/(2α), bounds it for
    α ≥ 50 by a margin of the order of α).  An error of the test-error map or of the state evolution that
    survives at α → ∞ — a factor on E_BO, a wrong prior or channel update — shows here at 0.1–0.5 % of the risk."""
    from attnlimits.verify.slr.problem import slr_problem
    from attnlimits.verify.slr.theory import theory_of

    a = float(point["alpha"])
    p1, p2 = _bo("spiked", point["nu"], point["L"], (a, 2 * a), 0.1, size, seed)
    eb = theory_of(slr_problem("spiked", float(point["nu"]), int(point["L"]))).bayes_risk()
    limit = 2 * p2.E_BO - p1.E_BO
    se = math.sqrt((2 * p2.E_BO_se) ** 2 + p1.E_BO_se ** 2 + float(eb.error or 0.0) ** 2)
    reps = int(size.get("replicates", 8))
    return [(f"2 E_BO(α={2 * a:.3g}) − E_BO(α={a:.3g}) vs E_B^pop",
             Comparison(limit, float(eb.value), se=se or None, dof=reps - 1 if se else None,
                        allowance=abs(p2.E_BO - p1.E_BO)))] + _bo_stationarity((p1, p2))


def risk_formula_vs_direct(point, *, size, seed):
    """The §6.1 risk formula for any realisable overlaps (:func:`population_risk_general`: Student fields
    χ = m_k χ* + m_kv* z* + a, z = m_vk* χ* + m_v z* + b with the residual covariance of a, b) against the
    direct Monte Carlo risk of a predictor (k, v) with exactly those overlaps, on sequences drawn at D = 16
    (:func:`direct_risk`; exact at any D for an orthonormal teacher).  k and v are built on the orthonormal
    (k̂*, v̂*, u₃, u₄) from the point's coefficients, so every one of the seven overlaps varies over the
    domain — the manifold (k₂ = k₃ = v₁ = v₃ = 0) included.  ``n`` sequences in ``batches`` batches."""
    from attnlimits.verify.comparison import combine
    from attnlimits.verify.slr import direct_risk, predictor_on_frame
    from attnlimits.verify.slr.problem import slr_problem
    from attnlimits.verify.slr.theory import theory_of

    D = 16
    k, v, (ks, vs), ov = predictor_on_frame((point["k1"], point["k2"], point["k3"], 0.0),
                                            (point["v1"], point["v2"], point["v3"], point["v4"]), D, int(seed),
                                            device="cpu")
    nu, L, act = float(point["nu"]), int(point["L"]), point["activation"]
    theory, terr = theory_of(slr_problem(point["model"], nu, L, activation=act)).population_risk_general(
        ov, points=int(size.get("points", 2 ** 15)))
    n, batches = int(size.get("n", 1_000_000)), int(size.get("batches", 20))
    est = direct_risk(act, k, v, model=point["model"], nu=nu, L=L, n=n, D=D, generator=int(seed) + 1,
                      teacher=(ks, vs), batch=-(-n // batches), device=size.get("device", "cpu"))
    se, dof = combine([float(est.se), float(terr)], [est.n_draws - 1, None])
    return [(f"direct MC risk (D={D}, n={n}) vs the §6.1 seven-overlap formula", Comparison(float(est.mean), theory,
                                                                                           se=se, dof=dof))]


def replica_vs_erm_loss(point, *, size, seed):
    """Where replica symmetry is stable, the RS theory of ERM with a per-sample loss other than the square one
    (``loss``: Huber, pseudo-Huber, log-cosh; docs/slr.md §10.3, the joint prox over keys and the residual)
    predicts ERM trained with that loss: the informed RS fixed point against L-BFGS ERM from the informed start
    (same loss, printed for torch from the same expression) at ``D``, within the combined SE plus the
    finite-size allowance 2.5·|E(D) − E(D/2)| of :func:`replica_vs_erm`.  Softmax, spiked, ν = 2, L = 2; the
    label noise Δ is a coordinate (a robust loss differs from the square one only where residuals pass its
    scale).  A point whose RS fixed point is RS-unstable or flagged is not evaluable."""
    import numpy as np

    from attnlimits.symbolic.properties import NotEvaluable
    from attnlimits.verify.comparison import combine
    from attnlimits.verify.slr.replica import rs_problem
    from attnlimits.verify.slr.train import train_erm

    a, lam, delta, loss = float(point["alpha"]), float(point["lam"]), float(point["delta"]), str(point["loss"])
    reps = int(size.get("rs_replicates", 4))
    rs = rs_problem("softmax", "spiked", 2.0, 2, points=int(size.get("rs_points", 1024)), replicates=reps,
                    seed=seed, loss=loss).fixed_point(a, lam, delta)
    if math.isnan(rs.replicon):
        raise RuntimeError(f"no replicon for the RS fixed point at alpha={a:g}, lam={lam:g}, loss {loss}")
    if rs.replicon >= 1.0 or "unstable" in rs.flags or "rsb_uncertain" in rs.flags:
        raise NotEvaluable(f"RS unstable or undecided (replicon {rs.replicon:.3g} ± {rs.replicon_error:.2g}, flags "
                           f"{','.join(rs.flags)}): no RS prediction to test")
    D, seeds = int(size.get("D", 200)), int(size.get("seeds", 4))
    means = {}
    for d in (D // 2, D):
        res = train_erm("softmax", model="spiked", nu=2.0, L=2, alpha=a, lam=lam, D=d, seeds=seeds, seed=seed + d,
                        delta=delta, loss=loss, n_test=int(size.get("n_test", 2000)), device=size.get("device", "auto"))
        e = np.array([r["E_test_overlaps"] for r in res.seeds], dtype=float)
        means[d] = (float(e.mean()), float(e.std(ddof=1) / math.sqrt(e.size)) if e.size > 1 else math.inf, e.size)
    (m, s, n), (m_half, _, _) = means[D], means[D // 2]
    se, dof = combine([s, float(rs.E_test_error)], [n - 1, reps - 1])
    return [(f"ERM E_test with loss {loss} (D={D}) vs RS E_test with that loss",
             Comparison(m, float(rs.E_test), se=se, dof=dof, allowance=2.5 * abs(m - m_half)))]


def predecessor_vs_mc(point, *, size, seed):
    """[M] Theorem 1 (docs/slr.md §13, claim C21 over a domain): the manifold excess risk of erf attention
    from the derived closed form against a Monte Carlo of the predictor on sequences (the projected law:
    each token's coordinates on the orthonormal frame (k*, v*, u, u′), the same law as full sequences in
    R^d), ``n`` sequences; SE over batches."""
    from attnlimits.verify.slr import predecessor_manifold_risk_mc
    from attnlimits.verify.slr import theory

    args = (int(point["d"]), int(point["L"]), float(point["gamma2"]), float(point["lam"]), float(point["kappa"]),
            float(point["nu_M"]))
    th = theory.predecessor_manifold_risk(*args)
    value, error = (float(th.value), float(th.error or 0.0)) if hasattr(th, "value") else (float(th), 0.0)
    est = predecessor_manifold_risk_mc(*args, int(size.get("n", 400_000)), int(seed), method="projected",
                                       device=size.get("device", "cpu"))
    return [("MC excess risk on the manifold vs [M] Theorem 1",
             Comparison(float(est.mean), value, se=float(est.se), dof=est.n_draws - 1, tolerance=3 * error))]
