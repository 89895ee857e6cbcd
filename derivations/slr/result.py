"""Single-location regression as a plug-in: commands, parameters, references (plain data).

Registered under the ``attnlimits.results`` entry-point group (``pyproject.toml``) as ``slr``;
``attnlimits slr <command>`` is built from :data:`RESULT`.  Reading this module imports no
SymPy; the equations are in :mod:`attnlimits.derivations.slr.population`, :mod:`attnlimits.derivations.slr.bayes` and
:mod:`attnlimits.derivations.slr.predecessor`.
"""
from attnlimits.symbolic.properties import Choice, IntRange, Property, Range
from attnlimits.symbolic.result import Command, Panel, Param, Result

__all__ = ["RESULT", "REFERENCES", "ACTIVATION_NAMES", "MODELS", "POPULATION_COMMAND", "REPLICA_COMMAND",
           "TRAIN_COMMAND", "BAYES_OPTIMAL_COMMAND", "AMP_COMMAND"]

#: What a computation with this result rests on (printed by ``attnlimits.verify.claims.citation``).
REFERENCES = (
    "O. Duranthon, P. Marion, C. Boyer, B. Loureiro, L. Zdeborová. Statistical Advantage of Softmax "
    "Attention: Insights from Single-Location Regression. arXiv:2509.21936.",
    "P. Marion, R. Berthier, G. Biau, C. Boyer. Attention Layers Provably Solve Single-Location "
    "Regression. ICLR 2025, arXiv:2410.01537.",
    "H. Nishimori. Statistical Physics of Spin Glasses and Information Processing. Oxford University "
    "Press, 2001.",
    "C. Stein. Estimation of the mean of a multivariate normal distribution. Annals of Statistics, 1981.",
    "L. Isserlis. On a formula for the product-moment coefficient of any order of a normal frequency "
    "distribution in any number of variables. Biometrika, 1918.",
)

MODELS = ("spiked", "max")

#: Activation names and one-line descriptions, for ``--help`` (the registry of record is
#: :data:`attnlimits.derivations.slr.population.ACTIVATIONS`; a test checks that both agree).
ACTIVATION_NAMES = {
    "softmax": "e^{χ_ℓ}/Σ e^{χ_ℓ'}: exponential, normalised, shift-invariant",
    "linear_uncentred": "1 + χ_ℓ",
    "linear_centred": "1 + χ_ℓ − χ̄ (L × the first-order expansion of softmax)",
    "linear_pure": "χ_ℓ (scale-degenerate: only m_k m_v is identified)",
    "erf_fixed": "1 + erf(c + χ_ℓ), c fixed (default 0)",
    "erf_learned": "1 + erf(c + χ_ℓ), c learned",
    "softplus_norm": "sp(χ_ℓ + b)/Σ sp(χ_ℓ' + b), b fixed (default 0: no bias)",
    "softplus_norm_bias": "sp(χ_ℓ + b)/Σ sp(χ_ℓ' + b), b learned (contains softmax as b → −∞)",
}

_ACTIVATION_HELP = "\n".join(f"  {k:<20} {v}" for k, v in ACTIVATION_NAMES.items()) + (
    "\n  elementwise:<expr in t>, normalised:<positive expr in t>   user expressions")

DEFAULT_ACTIVATIONS = ("softmax", "linear_uncentred", "erf_learned", "softplus_norm")

_MODEL = Param("model", "choice", choices=MODELS, help="spiked or max")
_NU = Param("nu", "float", check="nonnegative,inf", help="spike strength nu >= 0 (inf allowed for --model max)")
_L = Param("L", "ints", check=">=1", flag="--L",
           help="sequence length, or a comma-separated list for L uniform over it (variable length)")
_ACTS = Param("activation", "strs", default=DEFAULT_ACTIVATIONS,
              help=f"comma-separated activation names (default {','.join(DEFAULT_ACTIVATIONS)})",
              validator="attnlimits.derivations.slr.population:activation")

POPULATION_COMMAND = Command(
    # small runs that print every column (the output-schema test runs them)
    smoke=(
        "slr population --model spiked --nu 2 --L 3 --activation softmax,linear_uncentred,erf_learned",
        "slr population --model max --nu inf --L 1,2 --per-length --metric noisy --delta 0.1",
    ),
    name="population",
    help="optimal population risk of each activation, with the Bayes risk",
    run="attnlimits.verify.slr.population_command:run_population",
    formatter="attnlimits.verify.slr.population_command:format_population",
    description=(
        "Population optimum E* = 1 - sup A^2/B of attention f(X) = sigma(Xk)^T (Xv) on\n"
        "single-location regression (docs/slr.md §6), for each activation, and the Bayes risk\n"
        "(§7; softmax attains it).  Linear variants use the derived closed forms (§8); the others\n"
        "are optimised over (m_k, extra scalar) with exact gradients on a fixed integration rule\n"
        "(Gauss-Hermite where smooth, randomised QMC otherwise).  risk_error is the integration\n"
        "error estimate; limit=true means the optimum is a limit (m_k -> inf, b -> -inf).\n\n"
        "activations (full names; a bare linear/erf/softplus is refused):\n" + _ACTIVATION_HELP),
    examples=(
        "attnlimits slr population --model spiked --nu 2 --L 3 "
        "--activation softmax,linear_uncentred,erf_learned,softplus_norm --json",
        "attnlimits slr population --model max --nu inf --L 1,2,3 --per-length",
        "attnlimits slr population --model max --nu 2 --L 2 --activation erf_fixed --extra 0.5",
        "attnlimits slr population --model spiked --nu 1 --L 2 --activation 'elementwise:1+tanh(t)'",
    ),
    parameters=(
        _MODEL, _NU, _L, _ACTS,
        Param("extra", "float", default=None,
              help="value of a fixed extra scalar (erf_fixed's c, softplus_norm's b; default 0); "
                   "learned scalars (erf_learned, softplus_norm_bias) are optimised regardless"),
        Param("orthogonal_noise", "flag", default=False, help="also optimise s_k = sqrt(q_k - m_k^2) >= 0 (claim C14)"),
        Param("per_length", "flag", default=False, help="variable length: also the per-length tuned risks"),
        Param("metric", "choice", default="excess", choices=("excess", "noisy"),
              help="excess (default; f = 0 gives 1) or noisy (adds --delta^2)"),
        Param("delta", "float", default=None, check="nonnegative", help="label noise Delta (only with --metric noisy)"),
        Param("tol", "float", default=1e-6, check="positive,<=0.1", help="target integration error (Gauss-Hermite)"),
        Param("seed", "int", default=0, check=">=0", help="seed of the QMC scrambling"),
    ),
    table=("activation", "risk", "risk_error", "bayes_risk", "argmin_m_k", "argmin_m_v", "limit"),
    expensive=("activation",),
)

_BO_COMMON = (
    Param("model", "choice", "spiked", "data model: spiked (docs/slr.md §3.2) or max (§3.3; ν = inf allowed)",
          choices=("spiked", "max")),
    Param("nu", "float", 2.0, "spike strength ν (spiked) or inverse temperature ν (max; inf = argmax)",
          check="nonnegative,inf"),
    Param("L", "ints", [2], "sequence length, or a comma list for L uniform over it (variable length)",
          check=">=1"),
)

BAYES_OPTIMAL_COMMAND = Command(
    # small runs that print every column (the output-schema test runs them)
    smoke=(
        "slr bayes-optimal --model spiked --nu 2 --L 2 --alpha 4 --points 1024",
    ),
    name="bayes-optimal",
    help="Bayes-optimal test error E_BO(α) by the RS state evolution (docs/slr.md §11)",
    run="attnlimits.verify.slr.bayes_optimal:run_bayes_optimal",
    parameters=(
        Param("model", "choice", "spiked", "data model: spiked (docs/slr.md §3.2) or max (§3.3; ν = inf allowed)",
              choices=("spiked", "max")),
        Param("nu", "float", 2.0, "spike strength ν (spiked) or inverse temperature ν (max; inf = argmax)",
              check="nonnegative,inf"),
        _BO_COMMON[2],
        Param("alpha", "floats", [1.0, 4.0, 10.0, 20.0], "sample ratios α = N/D (comma list)", check="positive"),
        Param("delta", "float", 0.1, "label noise Δ", check="positive"),
        Param("points", "int", 2 ** 13, "Sobol points per replicate (power of 2)", check=">=64"),
        Param("replicates", "int", 8, "independent scramblings (error estimate)", check=">=2"),
        Param("seed", "int", 0, "seed of the scramblings", check="nonnegative"),
        Param("inner_points", "int", 24, "max-SLR: Gauss–Hermite nodes per dimension of the key smoothing "
              "E softmax(ν h) (unused for spiked and for ν = inf with L ≤ 2)", check=">=4"),
    ),
    description="Frozen scrambled-Sobol rule, informed and uninformed starts with continuation in α; the "
                "reported fixed point maximises the RS free entropy (all distinct ones in branch_E_BO). "
                "max-SLR adds a frozen inner Gauss–Hermite rule whose error (change on a 3/2 finer rule) is "
                "included in E_BO_se.",
    examples=("attnlimits slr bayes-optimal --model spiked --nu 2 --L 2 --alpha 1,4,10,20 --delta 0.1 --json",
              "attnlimits slr bayes-optimal --model max --nu inf --L 2 --alpha 2,4,10 --delta 0.1"),
    table=("alpha", "E_BO", "E_BO_error", "q_k", "q_v", "phi", "n_branches"),
    expensive=("alpha",),
)

AMP_COMMAND = Command(
    # small runs that print every column (the output-schema test runs them)
    smoke=(
        "slr amp --D 100 --n-test 200",
    ),
    name="amp",
    help="GAMP on generated SLR data (spiked or max) vs the BO state evolution (docs/slr.md §11, C19)",
    run="attnlimits.verify.slr.bayes_optimal:run_amp",
    parameters=_BO_COMMON + (
        Param("alpha", "float", 4.0, "sample ratio α = N/D", check="positive"),
        Param("delta", "float", 0.1, "label noise Δ", check="positive"),
        Param("D", "int", 1000, "dimension", check=">=10"),
        Param("seeds", "ints", [0], "seeds (teacher and data redrawn)", check="nonnegative"),
        Param("damping", "float", 0.5, "GAMP damping (weight of the new iterate)", check="positive,<=1"),
        Param("iterations", "int", 60, "GAMP iterations", check=">=1"),
        Param("n_test", "int", 20000, "fresh test sequences", check=">=100"),
        Param("device", "str", "auto", "torch device (auto, cpu, cuda)"),
    ),
    examples=("attnlimits slr amp --model spiked --nu 2 --L 2 --alpha 4 --delta 0.1 --D 1000 --seeds 0,1",),
    # fits 80 columns, the flag (converged) first; --columns and --json give theory_q_k, theory_q_v, iterations
    table=("seed", "converged", "q_k", "q_v", "test_error", "test_error_se", "theory_E_BO"),
)


POSTERIOR_COMMAND = Command(
    # small runs that print every column (the output-schema test runs them)
    smoke=(
        "slr posterior --nu 2 --L 2 --alpha 4 --D 30 --seeds 0 --sweeps 20 --burn-in 10",
    ),
    name="posterior",
    help="collapsed Gibbs posterior sampling of spiked-SLR at finite D vs the BO state evolution (docs/slr.md §11)",
    run="attnlimits.verify.slr.posterior:run_posterior",
    parameters=(
        Param("model", "choice", "spiked", "data model (spiked only)", choices=("spiked",)),
        Param("nu", "float", 2.0, "spike strength ν", check="nonnegative"),
        Param("L", "int", 2, "sequence length", check=">=2"),
        Param("alpha", "float", 4.0, "sample ratio α = N/D", check="positive"),
        Param("delta", "float", 0.1, "label noise Δ", check="positive"),
        Param("D", "int", 50, "dimension (the cost is O(α D³ L) per sweep)", check=">=2"),
        Param("seeds", "ints", [0, 1, 2], "seeds (teacher and data redrawn)", check="nonnegative"),
        Param("chains_per_start", "int", 1, "chains from the true and from random locations, each", check=">=1"),
        Param("sweeps", "int", 50, "Gibbs sweeps", check=">=4"),
        Param("burn_in", "int", 15, "sweeps left out of the averages", check="nonnegative"),
    ),
    description="k and v integrated out exactly; locations resampled one at a time with rank-one updates; "
                "Rao–Blackwellised posterior means; split-R̂ over chains from true and random locations.",
    examples=("attnlimits slr posterior --nu 2 --L 2 --alpha 4 --D 100 --seeds 0,1,2",),
    table=("seed", "m_k", "q_k", "m_v", "q_v", "E_test", "theory_E_BO", "rhat_max"),
)

PHASE_COMMAND = Command(
    # small runs that print every column (the output-schema test runs them)
    smoke=(
        "slr bo-phase --L 2 --nu 2 --alpha 1,4 --points 1024",
    ),
    name="bo-phase",
    help="informed vs uninformed BO fixed points of spiked- or max-SLR over an (α, ν) grid per L (docs/slr.md §11)",
    run="attnlimits.verify.slr.phase:run_phase",
    parameters=(
        Param("model", "choice", "spiked", "data model: spiked (docs/slr.md §3.2) or max (§3.3; ν = inf allowed)",
              choices=("spiked", "max")),
        Param("L", "ints", [2, 3, 5], "sequence lengths (one panel each)", check=">=2"),
        Param("nu", "floats", [0.5, 1.0, 2.0, 3.0, 5.0, 8.0], "spike strengths ν (max-SLR: inverse temperatures, "
              "inf = argmax)", check="positive,inf"),
        Param("alpha", "floats", [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0], "sample ratios α", check="positive"),
        Param("delta", "float", 0.1, "label noise Δ", check="positive"),
        Param("points", "int", 2 ** 12, "Sobol points per replicate of the state evolution", check=">=64"),
        Param("continuation", "choice", "up", "up: both starts continued upward in α from the smallest α (the "
              "informed start is cold only there); none: both cold starts at every α (sees an informed branch "
              "that appears at larger α)", choices=("up", "none")),
        Param("plot", "str", "", "write the phase-diagram PNG to this path", writes=True),
    ),
    description="Hard phase = two distinct fixed points with the informed one of larger free entropy. "
                "Continuation in α from both starts; the figure says 'no hard phase found in this range' "
                "when that is the result.",
    examples=("attnlimits slr bo-phase --L 2,3,5 --plot phase.png",
              "attnlimits slr bo-phase --model max --L 2 --nu 0.5,1,2,5,inf --plot phase_max.png"),
    table=("model", "L", "nu", "alpha", "E_BO", "E_informed", "E_uninformed", "distinct", "hard"),
    expensive=("alpha",),
)


TRAIN_COMMAND = Command(
    # small runs that print every column (the output-schema test runs them)
    smoke=(
        "slr train --model spiked --nu 2 --L 2 --activation softmax --alpha 4 --lam 0.1 --D 40 --seeds 2",
    ),
    name="train",
    help="ridge ERM at finite D (L-BFGS, GD, Adam/SGD), batched over seeds, against the theory",
    run="attnlimits.verify.slr.train:run_train",
    parameters=(
        Param("model", "choice", "spiked", "data model (docs/slr.md §3)", choices=("spiked", "max")),
        Param("nu", "float", 2.0, "spike strength ν (inf for max-SLR)", check="nonnegative,inf"),
        Param("L", "ints", [2], "sequence length, or a comma list for uniform variable length", check="positive"),
        Param("activation", "choices", ["softmax"], "activation variants (docs/slr.md §4), comma-separated",
              choices=tuple(ACTIVATION_NAMES)),
        Param("alpha", "floats", [4.0], "sample ratios α = N/D", check="positive"),
        Param("lam", "strs", ["0.1"], "ridge λ values (half_sum), or rs-tuned"),
        Param("lam_k", "float", None, "ridge on the key k (default: --lam)", check="nonnegative"),
        Param("lam_v", "float", None, "ridge on the value v (default: --lam)", check="nonnegative"),
        Param("loss", "str", "square", "per-sample loss of the residual r = y - f: square (default), huber:DELTA, "
              "pseudo_huber:DELTA, logcosh, or a formula in r, e.g. 'log(cosh(2*r))/4'"),
        Param("delta", "float", 0.1, "label noise Δ", check="nonnegative"),
        Param("D", "int", 400, "dimension", check=">=2"),
        Param("seeds", "int", 3, "independent teachers/datasets, trained together", check="positive"),
        Param("optimizer", "choice", "lbfgs", "full-batch lbfgs or gd, minibatch adam or sgd", choices=("lbfgs", "gd", "adam", "sgd")),
        Param("init", "choice", "informed", "informed (population optimum), random, or multistart (every start "
              "of docs/slr.md §10.7 on the same data: one row per seed and start with its distinct minimum, "
              "the lowest marked equilibrium)", choices=("informed", "random", "multistart")),
        Param("seed", "int", 0, "master seed", check="nonnegative"),
        Param("device", "str", "auto", "auto, cpu or cuda"),
        Param("dtype", "choice", "float64", "training precision", choices=("float64", "float32")),
        Param("max_iter", "int", 0, "iteration cap (0: optimiser default)", check="nonnegative"),
        Param("lr", "float", 0.0, "GD/SGD dimensionless step (η = lr·D/N) or Adam step; 0: default",
              check="nonnegative"),
        Param("n_test", "int", 20000, "fresh test sequences per seed", check="positive"),
        Param("plot", "str", "", "write the learning-curve figure (PNG) here", writes=True),
        Param("theory", "choice", "rs", "RS lines on the figure (rs: one RS fixed point per α and activation, "
              "minutes, plus the Bayes-optimal E_BO(α) line; none: ERM, population and Bayes only)", choices=("rs", "none")),
        Param("log", "str", "", "append each finished seed as a JSON line here", writes=True),
    ),
    description="Trains the predictor of docs/slr.md §4 on N = αD sequences by ridge ERM (§12), several "
                "seeds at once, and reports E_test (fresh sequences and the §6.1 formula from the "
                "learned overlaps), the seven overlaps, the distance to the manifold and the optimiser status.",
    examples=("attnlimits slr train --model spiked --nu 2 --L 2 --activation softmax,linear_uncentred "
              "--alpha 2,4,10 --lam 0.1 --D 400 --seeds 3 --plot curve.png",
              "attnlimits slr train --activation softmax --alpha 4 --lam 2 --loss huber:1 --delta 1 --D 400 "
              "--seeds 4",),
    # the default table fits 80 columns; --columns and --json give the rest (distance, overlaps, ...)
    table=("activation", "alpha", "lam", "row", "seed_index", "E_test", "E_test_se", "flag", "status"),
    expensive=("seeds",),
)


REPLICA_COMMAND = Command(
    # small runs that print every column (the output-schema test runs them)
    smoke=(
        "slr replica --model spiked --nu 2 --L 2 --activation linear_centred --alpha 4 --lam 1 --points 128",
        "slr replica --model spiked --nu 2 --L 2 --activation linear_centred --alpha 4 --lam tune --points 128",
    ),
    name="replica",
    help="replica-symmetric theory of ridge ERM at finite sample ratio alpha (docs/slr.md §10)",
    run="attnlimits.verify.slr.replica:run_replica",
    parameters=(
        Param("model", "choice", "spiked", "data model", choices=("spiked", "max")),
        Param("nu", "float", 2.0, "spike strength nu (inf allowed for max-SLR)", check="nonnegative,inf"),
        Param("L", "ints", [2], "sequence length; a list gives a uniform variable-length law", check=">=2",
              flag="--L"),
        Param("activation", "strs", ["softmax"], "comma list of activation variants (docs/slr.md §4 full names)",
              validator="attnlimits.derivations.slr.population:activation"),
        Param("alpha", "floats", [1.0, 2.0, 4.0, 10.0, 20.0], "sample ratios alpha = N/D", check="positive"),
        Param("lam", "strs", ["0.1"], "ridge strengths lambda (comma list) or 'tune' (log grid 1e-3..10 + refinement)"),
        Param("lam_k", "float", None, "ridge on the key k (default: each --lam)", check="positive"),
        Param("lam_v", "float", None, "ridge on the value v (default: each --lam)", check="positive"),
        Param("loss", "str", "square", "per-sample loss of the residual r = y - f: square (default), huber:DELTA, "
              "pseudo_huber:DELTA, logcosh, or a formula in r, e.g. 'log(cosh(2*r))/4'; a loss other than square "
              "solves the prox over keys and the residual jointly (docs/slr.md §10.3a)"),
        Param("delta", "float", 0.1, "label noise Delta", check="nonnegative"),
        Param("branches", "choice", "equilibrium", "equilibrium: search every branch (informed, small-overlap, "
              "large-lambda and alpha-continuation starts) and report the equilibrium one (lowest RS training "
              "objective among the RS-stable, docs/slr.md §10.7); all: every distinct fixed point with its phase; "
              "informed: no search, continuation from the informed start (fast)",
              choices=("equilibrium", "all", "informed")),
        Param("extra", "float", None, "value of a fixed extra scalar (erf_fixed c, softplus_norm b)"),
        Param("metric", "choice", "excess", "error metric (docs/slr.md §2)", choices=("excess", "noisy")),
        Param("points", "int", 1024, "Sobol points per replicate (power of 2)", check=">=64"),
        Param("replicates", "int", 4, "independent scrambled replicates (error estimate)", check=">=2"),
        Param("seed", "int", 0, "seed of the scramblings"),
        Param("form", "choice", "stein", "form of the conjugate update (docs/slr.md §10.4): stein = the derivative of the RS "
              "free energy (default); jacobian = after Stein's lemma with the prox Jacobian, which misses the "
              "jumps of the prox selection (docs/slr.md §10.6; to reproduce references made with it)",
              choices=("stein", "jacobian")),
    ),
    description=("Solves the RS saddle-point equations of ridge ERM (half_sum loss) for single-location regression "
                 "on a frozen scrambled-Sobol rule with a multistart safeguarded-Newton prox, damped -> Anderson -> "
                 "Newton outer iteration and continuation in alpha; searches every fixed point (informed, small-overlap, "
                 "large-lambda and alpha-continuation starts) and reports the equilibrium one (lowest RS training "
                 "objective among the RS-stable) or all of them; reports E_test with its integration error, the "
                 "training objective (zero-temperature free energy), the replicon (RS stable below 1; rsb flag), "
                 "all order parameters, stability and the non-PD fraction."),
    examples=("attnlimits slr replica --model spiked --nu 2 --L 2 --activation softmax --alpha 4,10 --lam 0.1 "
              "--delta 0.1",
              "attnlimits slr replica --model max --nu inf --L 3 --activation linear_uncentred,softmax --alpha 4 "
              "--lam tune --json",
              "attnlimits slr replica --model spiked --nu 2 --L 2 --activation linear_uncentred --lam 0.1 "
              "--alpha 2,3,4,5,8 --branches all",
              "attnlimits slr replica --activation softmax --alpha 4 --lam 2 --loss huber:1 --delta 1 "
              "--branches informed",
              "attnlimits slr replica --activation softmax --alpha 4 --lam-k 0.1 --lam-v 0.3"),
    # the default table fits 80 columns (flag carries rsb, unstable, rough, unconverged); --columns and
    # --json give the rest (branch, phase, order parameters, stability, method, ...)
    table=("activation", "alpha", "lam", "E_test", "E_test_error", "flag", "replicon", "m_k", "m_v"),
    expensive=("alpha",),
)


_EXPLORE = "attnlimits.verify.slr.properties"

#: Properties of the result (``attnlimits explore``, docs/explore.md): statements over a domain.
PROPERTIES = (
    Property("slr-bayes-bound", "slr", "optimal population risk >= Bayes risk; softmax attains it (§7, C2-C4)",
             {"model": Choice(("spiked", "max")), "nu": Range(0.25, 8.0, scale="log"), "L": IntRange(2, 4),
              "activation": Choice(tuple(ACTIVATION_NAMES))},
             evaluate=f"{_EXPLORE}:bayes_bound", kind="theory", map=("nu", "activation"), seconds=120.0),
    Property("slr-bo-monotone", "slr", "the Bayes-optimal error E_BO is non-increasing in alpha (§11)",
             {"alpha": Range(0.5, 20.0, scale="log"), "ratio": Range(1.2, 3.0), "nu": Range(0.5, 5.0, scale="log"),
              "L": IntRange(2, 3)},
             evaluate=f"{_EXPLORE}:bo_monotone", kind="theory", quick={"points": 2 ** 10, "replicates": 16},
             confirm={"points": 2 ** 12, "replicates": 16}, seconds=60.0),
    Property("slr-gamp-vs-se", "slr", "GAMP on generated data reaches the Bayes-optimal state evolution (§11, C19-AMP)",
             {"alpha": Range(1.0, 20.0, scale="log"), "nu": Range(0.5, 5.0, scale="log"), "L": IntRange(2, 3)},
             evaluate=f"{_EXPLORE}:gamp_vs_state_evolution", kind="simulation",
             quick={"D": 300, "seeds": 8, "n_test": 4000, "points": 2 ** 11, "iterations": 400},
             confirm={"D": 600, "seeds": 16, "n_test": 8000, "points": 2 ** 12, "iterations": 400}, seconds=300.0,
             doc="Found by its first run: at α = 1, ν = 1 GAMP needs about 130 iterations (undamped residual "
                 "1e-7 on q); the command's default of 60 stops before, which `slr amp` now flags as not "
                 "converged instead of reporting convergence."),
    Property("slr-replica-vs-erm", "slr", "where RS is stable, the equilibrium RS branch predicts the test error of "
             "the lowest-objective ERM minimum (§10, §12; spiked nu = 2, L = 2)",
             {"alpha": Range(1.0, 20.0, scale="log"), "lam": Range(0.01, 3.0, scale="log"),
              "activation": Choice(("softmax", "linear_uncentred", "linear_centred"))},
             evaluate=f"{_EXPLORE}:replica_vs_erm", kind="simulation",
             quick={"D": 200, "seeds": 6, "rs_points": 512, "rs_replicates": 8},
             confirm={"D": 400, "seeds": 12, "rs_points": 1024, "rs_replicates": 16},
             map=("alpha", "lam"), seconds=300.0),
    Property("slr-replica-vs-erm-loss", "slr", "where RS is stable, the RS theory of ERM with a robust per-sample "
             "loss (Huber, pseudo-Huber, log-cosh; joint prox over keys and the residual) predicts ERM trained with "
             "that loss (§10.3, §12; softmax, spiked nu = 2, L = 2)",
             {"alpha": Range(1.0, 16.0, scale="log"), "lam": Range(0.3, 3.0, scale="log"), "delta": Range(0.3, 1.5),
              "loss": Choice(("huber:1", "huber:0.5", "pseudo_huber:1", "logcosh"))},
             evaluate=f"{_EXPLORE}:replica_vs_erm_loss", kind="simulation",
             quick={"D": 200, "seeds": 6, "rs_points": 512, "rs_replicates": 8},
             confirm={"D": 400, "seeds": 12, "rs_points": 1024, "rs_replicates": 16},
             map=("alpha", "lam"), seconds=300.0),
    Property("slr-population-vs-mc", "slr", "the optimal population risk equals a Monte Carlo of the risk at its "
             "argmin (fresh projection draws, §6.2), for every model, nu, fixed or variable length L and activation",
             {"model": Choice(("spiked", "max")), "nu": Range(0.25, 32.0, scale="log"),
              "L": Choice(("2", "1", "3", "4", "1,2", "1,2,3", "2,3,4", "1,2,3,4")),
              "activation": Choice(tuple(ACTIVATION_NAMES))},
             evaluate=f"{_EXPLORE}:population_vs_mc", kind="simulation", quick={"n": 400_000, "batches": 40},
             confirm={"n": 1_600_000, "batches": 40}, map=("nu", "activation"), seconds=180.0,
             doc="L is a fixed length or a comma list (L uniform over it, as `slr population --L 1,2,3`). "
                 "SE 0.1-0.8 % of the risk at quick size: a 1-2 % deviation is detected at one point."),
    Property("slr-replica-vs-erm-models", "slr", "where RS is stable, the equilibrium RS branch predicts the test "
             "error of the lowest-objective ERM minimum, over the data model, nu and L as well as alpha, lambda "
             "(§10, §12)",
             {"model": Choice(("spiked", "max")), "nu": Range(0.5, 8.0, scale="log"), "L": IntRange(2, 4),
              "alpha": Range(1.0, 20.0, scale="log"), "lam": Range(0.01, 3.0, scale="log"),
              "activation": Choice(("softmax", "linear_uncentred", "linear_centred"))},
             evaluate=f"{_EXPLORE}:replica_vs_erm_models", kind="simulation",
             quick={"D": 100, "seeds": 24, "rs_points": 1024, "rs_replicates": 16},
             confirm={"D": 200, "seeds": 24, "rs_points": 2048, "rs_replicates": 16},
             map=("alpha", "nu"), seconds=600.0),
    Property("slr-bo-large-alpha", "slr", "E_BO(alpha) -> the population Bayes risk like 1/alpha: the Richardson "
             "limit 2 E_BO(2 alpha) - E_BO(alpha) equals E_B^pop (§11, §7; C19-order)",
             {"alpha": Range(50.0, 400.0, scale="log"), "nu": Range(0.5, 5.0, scale="log"), "L": IntRange(2, 3)},
             evaluate=f"{_EXPLORE}:bo_large_alpha", kind="theory", quick={"points": 2 ** 10, "replicates": 16},
             confirm={"points": 2 ** 12, "replicates": 16}, seconds=60.0),
    Property("slr-risk-formula-vs-direct", "slr", "the §6.1 risk formula for any seven overlaps (off the manifold "
             "in every direction) equals the direct Monte Carlo risk of a predictor with those overlaps (C5)",
             {"model": Choice(("spiked", "max")), "nu": Range(0.5, 8.0, scale="log"), "L": IntRange(2, 4),
              "activation": Choice(tuple(ACTIVATION_NAMES)),
              "k1": Range(0.0, 2.0), "k2": Range(-1.0, 1.0), "k3": Range(0.0, 1.5),
              "v1": Range(-1.0, 1.0), "v2": Range(0.0, 1.5), "v3": Range(-1.5, 1.5), "v4": Range(0.1, 1.0)},
             evaluate=f"{_EXPLORE}:risk_formula_vs_direct", kind="simulation",
             quick={"n": 1_000_000, "batches": 20, "points": 2 ** 15},
             confirm={"n": 4_000_000, "batches": 40, "points": 2 ** 16}, seconds=60.0,
             doc="D = 16: the direct risk equals the formula at any D for an orthonormal teacher, so the size "
                 "buys sequences, not dimension."),
    Property("slr-predecessor-vs-mc", "slr", "[M] Theorem 1: the manifold excess risk of erf attention equals a "
             "Monte Carlo of the predictor (projected law; C21 over a domain)",
             {"d": IntRange(50, 1000), "L": IntRange(2, 12), "gamma2": Range(0.1, 1.0),
              "lam": Range(0.02, 1.0, scale="log"), "kappa": Range(0.0, 1.0), "nu_M": Range(0.0, 1.0)},
             evaluate=f"{_EXPLORE}:predecessor_vs_mc", kind="simulation", quick={"n": 400_000},
             confirm={"n": 1_600_000}, seconds=30.0),
    Property("slr-replica-vs-erm-max", "slr", "where RS is stable, the equilibrium RS branch predicts the test "
             "error of the lowest-objective ERM minimum at max-SLR, nu finite or infinite, L = 2, 3 (§10, §12)",
             {"nu": Choice(("inf", "2", "5")), "L": IntRange(2, 3), "alpha": Range(1.0, 20.0, scale="log"),
              "lam": Range(0.01, 3.0, scale="log"), "activation": Choice(("softmax", "linear_uncentred"))},
             evaluate=f"{_EXPLORE}:replica_vs_erm_max", kind="simulation",
             quick={"D": 100, "seeds": 24, "rs_points": 1024, "rs_replicates": 16},
             confirm={"D": 200, "seeds": 24, "rs_points": 2048, "rs_replicates": 16},
             map=("alpha", "lam"), seconds=600.0,
             doc="The max-SLR finite-sample panel's setting (nu = inf, L = 3) inside a region: nu = inf, where the "
                 "inputs carry no information on the key and the population optimum of softmax is a limit, is "
                 "reached by the Choice, which the models property's log range of nu cannot."),
    Property("slr-bo-below-rs", "slr", "E_BO(alpha) <= the replica prediction of ridge ERM at any lambda (§10-§11)",
             {"alpha": Range(1.0, 20.0, scale="log"), "lam": Range(0.03, 3.0, scale="log"),
              "activation": Choice(("softmax", "linear_uncentred", "linear_centred"))},
             evaluate=f"{_EXPLORE}:bo_below_rs", kind="theory",
             quick={"points": 2 ** 10, "replicates": 16, "rs_points": 256, "rs_replicates": 8},
             confirm={"points": 2 ** 12, "replicates": 16, "rs_points": 1024, "rs_replicates": 16}, seconds=180.0),
)

_FIGURES = "attnlimits.verify.figures.slr"
_FINITE_FIGURE = "arXiv:2509.21936 finite-sample figure"

#: The figure panels of the result (``attnlimits figure``): the population and finite-sample figures.
FIGURES = (
    Panel("slr-risk-nu", "optimal population risks and Bayes risk vs ν (spiked, L = 2), with MC",
          "arXiv:2509.21936 population figure", f"{_FIGURES}:risk_nu", 2.0,
          examples=("attnlimits figure slr-risk-nu --out figures/",)),
    Panel("slr-risk-L", "optimal population risks and Bayes risk vs L (spiked, ν = 2), with MC",
          "arXiv:2509.21936 population figure", f"{_FIGURES}:risk_L", 2.0),
    Panel("slr-risk-L-max", "optimal population risks vs L at max-SLR ν = ∞ (Bayes risk 0)",
          "arXiv:2509.21936 population figure (max-SLR)", f"{_FIGURES}:risk_L_max", 3.0),
    Panel("slr-varlen", "variable length L ~ U{1,2,3}, max-SLR ν = ∞: shared vs per-length optimum",
          "arXiv:2509.21936 variable-length figure", f"{_FIGURES}:varlen", 1.0),
    Panel("slr-finite-alpha", "test error vs α, spiked ν = 2, L = 2: RS at tuned λ, ERM, Bayes-optimal, population",
          _FINITE_FIGURE, f"{_FIGURES}:finite_alpha", 8.0, options=True,
          examples=("attnlimits figure slr-finite-alpha --full --device cuda --out figures/",
                    "attnlimits figure slr-finite-alpha --full --seeds 4 --alpha 2,4,10 --workers 1 --out run/  "
                    "# rerun the same line to resume")),
    Panel("slr-finite-alpha-spiked-nu1-L3", "test error vs α, spiked ν = 1, L = 3 (same curves)", _FINITE_FIGURE,
          f"{_FIGURES}:finite_alpha_spiked_nu1_L3", 1.0, options=True),
    Panel("slr-finite-alpha-spiked-nu2-L3", "test error vs α, spiked ν = 2, L = 3 (same curves)", _FINITE_FIGURE,
          f"{_FIGURES}:finite_alpha_spiked_nu2_L3", 1.0, options=True),
    Panel("slr-finite-alpha-max-L3", "test error vs α, max-SLR ν = ∞, L = 3 (same curves)", _FINITE_FIGURE,
          f"{_FIGURES}:finite_alpha_max_L3", 2.0, options=True),
)

RESULT = Result(
    name="slr",
    title="Single-location regression: softmax vs linear attention, Bayes optimality, finite samples",
    references=REFERENCES,
    commands=(POPULATION_COMMAND, REPLICA_COMMAND, TRAIN_COMMAND, BAYES_OPTIMAL_COMMAND, AMP_COMMAND,
              POSTERIOR_COMMAND, PHASE_COMMAND),
    claims=("attnlimits.verify.slr.claims.population", "attnlimits.verify.slr.claims.population_limits",
            "attnlimits.verify.slr.claims.finite", "attnlimits.verify.slr.claims.bayes_optimal"),
    doc="docs/slr.md",
    properties=PROPERTIES,
    items="attnlimits.derivations.slr.items:ITEMS",
    export="attnlimits.verify.slr.export:export_slr",
    export_help=(
        "Write the finite-sample SLR solver --solver replica (RS theory of ridge ERM, docs/slr.md §10) or\n"
        "--solver bayes-optimal (BO state evolution of spiked-SLR with the population Bayes risk, §11, §7,\n"
        "or of max-SLR with --model max, nu = inf allowed) as one readable Python file that needs only numpy\n"
        "and scipy.  Activation, L and the extra scalar (and, for bayes-optimal, the model) are fixed in the\n"
        "file (its kernels are printed for them); --model/--nu otherwise become its defaults.  The\n"
        "file's options are those of 'attnlimits slr replica' / 'attnlimits slr bayes-optimal' and it prints\n"
        "the same rows (table, --json or --csv)."),
    export_examples=(
        "attnlimits export slr --solver replica --activation softmax --L 2 -o rs_softmax.py",
        "python rs_softmax.py --alpha 2,4,10 --lam 0.1 --delta 0.1 --json",
        "attnlimits export slr --solver replica --activation linear_uncentred --L 3 --model max --nu inf -o rs_lin.py",
        "attnlimits export slr --solver replica --activation softmax --L 2 --loss huber:1 -o rs_huber.py",
        "attnlimits export slr --solver bayes-optimal --L 2 --nu 2 -o bo_L2.py",
        "python bo_L2.py --alpha 1,4,10,20 --delta 0.1 --json",
        "attnlimits export slr --solver bayes-optimal --model max --nu inf --L 2 -o bo_max.py",
    ),
    export_parameters=(
        Param("solver", "choice", "replica", "replica (RS theory of ridge ERM, docs/slr.md §10) or bayes-optimal (BO state "
              "evolution, §11)", choices=("replica", "bayes-optimal")),
        Param("activation", "str", None, "replica: one activation variant (docs/slr.md §4 full name, no learned scalar; "
              "default softmax)"),
        Param("L", "ints", [2], "sequence length; a list gives a uniform variable-length law (fixed in the file)",
              check=">=1", flag="--L"),
        Param("model", "choice", "spiked", "replica: default --model of the exported file; bayes-optimal: the "
              "model fixed in the file (spiked or max)", choices=("spiked", "max")),
        Param("nu", "float", None, "default --nu of the exported file (default: the command's, 2)",
              check="nonnegative,inf"),
        Param("extra", "float", None, "replica: value of a fixed extra scalar (erf_fixed c, softplus_norm b)"),
        Param("loss", "str", "square", "replica: per-sample loss fixed in the file (square, huber:DELTA, "
              "pseudo_huber:DELTA, logcosh, or a formula in r)"),
    ),
    description="Duranthon et al., arXiv:2509.21936; Marion et al., arXiv:2410.01537 (docs/slr.md).",
    group_help="single-location regression: population risks, Bayes risk, finite-sample theory",
    figures=FIGURES,
)
