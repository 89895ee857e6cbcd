"""The attention-vs-ridge result as a plug-in: commands, parameters, references (plain data).

Registered under the ``attnlimits.results`` entry-point group (``pyproject.toml``).  Reading
this module imports no SymPy; the equations are :mod:`attnlimits.derivations.attention_rmt.equations`.
"""
from attnlimits.symbolic.properties import Choice, Expression, IntRange, Property, Range
from attnlimits.symbolic.result import Command, Panel, Param, Result

__all__ = ["RESULT", "REFERENCES", "RMT_COMMAND", "BUILTIN_ACTIVATION_NAMES"]

#: What a computation with this result rests on (printed by ``attnlimits.verify.claims.citation``).
REFERENCES = (
    "Liao, Liu, Hou, Zou, Ling. On the Interpolation Error of Nonlinear Attention versus "
    "Linear Regression. arXiv:2506.18656 (v1: A Random Matrix Analysis of In-context Memorization for "
    "Nonlinear Attention).",
    "R. Couillet, Z. Liao. Random Matrix Methods for Machine Learning. Cambridge University Press, 2022.",
    "X. Cheng, A. Singer. The spectrum of random inner-product kernel matrices. 2013.",
    "Z. Fan, A. Montanari. The spectral norm of random inner-product kernel matrices. 2019.",
    "V. A. Marchenko, L. A. Pastur. Distribution of eigenvalues for some sets of random matrices. 1967.",
)

#: Names accepted by ``--activation`` besides SymPy expressions in ``t`` (checked against
#: :data:`attnlimits.symbolic.hermite.BUILTIN_ACTIVATIONS` by a test).
BUILTIN_ACTIVATION_NAMES = ("abs", "cos", "erf", "he2", "he3", "identity", "relu", "sigmoid", "sin", "tanh")

#: Bounds of ``--nodes`` and ``--digits``, for the command and the exported solver alike (the file's
#: options carry them: :func:`attnlimits.derivations.attention_rmt.equations.driver_data`)
NODES_CHECK = ">=16,<=1000000"
DIGITS_CHECK = ">=5,<=200"

_ACTIVATION = Param("activation", "str", default="tanh",
                    help="built-in (" + ", ".join(BUILTIN_ACTIVATION_NAMES) + ") or a SymPy expression in t; centred automatically")

RMT_COMMAND = Command(
    # small runs that print every column (the output-schema test runs them)
    smoke=(
        "rmt --activation tanh --c 0.5 --gamma 0.1,1 --snr 1 --wk 1,0 --wq 1,0",
        "rmt --activation relu --c 2 --gamma 0.1 --diagonal keep --kappa 0.991 --digits 20",
    ),
    name="",
    help="limiting interpolation error of attention vs ridge regression",
    run="attnlimits.verify.rmt.commands:run_rmt",
    formatter="attnlimits.verify.rmt.commands:format_rmt",
    description=(
        "Limiting interpolation error E(gamma) of nonlinear attention (docs/attention_rmt.md §6)\n"
        "and of ridge regression (Proposition 2, §7) for p/n -> c.  Tokens X = mu y^T + Z with\n"
        "SNR = ||mu||^2; W = I + w_K w_Q^T with w_K, w_Q given by coordinates in an orthonormal\n"
        "basis whose first vector is mu/||mu||.  E = -gamma^2 d ybar/d gamma, with the derivative\n"
        "from the implicit-function theorem.  float64 by default; --digits N uses mpmath."),
    examples=(
        "attnlimits rmt --activation tanh --c 0.5 --gamma 0.01,0.1,1 --snr 1 --wk 1,0,0 --wq 1,0,0 --json",
        "attnlimits rmt --activation relu --c 3 --snr 1.2 --gamma 0.5 --wk -0.5,0.5,0 --wq 0.8,0,0",
        "attnlimits rmt --activation relu --c 2 --gamma 0.1 --diagonal keep --kappa 0.991",
        "attnlimits rmt --activation '0.6*t + 0.3*(t**2-1)/sqrt(2)' --c 0.5 --gamma 1 --digits 40",
    ),
    parameters=(
        _ACTIVATION,
        Param("c", "float", check="positive", raw=True, help="aspect ratio p/n (> 0)"),
        Param("gamma", "floats", check="positive", raw=True, help="comma-separated ridge parameters, e.g. 0.01,0.1,1"),
        Param("snr", "float", default="0", check="nonnegative", raw=True, help="signal strength ||mu||^2 (default 0)"),
        Param("wk", "floats", default=(), raw=True, help="w_K coordinates (first may be negative), e.g. -0.5,0.5,0"),
        Param("wq", "floats", default=(), raw=True, help="w_Q coordinates in the same basis, e.g. 1,0,0"),
        Param("diagonal", "choice", default="zero", choices=("zero", "keep"),
              help="diagonal convention of K_X (docs/attention_rmt.md §4.3): zero (kappa = 0, default) or keep"),
        Param("kappa", "float", default=None, raw=True, help="diagonal constant with --diagonal keep (e.g. a measured mean)"),
        Param("p", "int", default=None, check=">=1",
              help="with --diagonal keep and no --kappa: kappa = E f(sqrt(p) + sqrt(2) xi)/sqrt(p) (docs/attention_rmt.md §4.3)"),
        Param("nodes", "int", default=3000, check=NODES_CHECK, help="midpoint nodes of the MP quadrature in float64 (default 3000)"),
        Param("digits", "int", default=None, check=DIGITS_CHECK, help="compute with mpmath at N significant digits and print N digits"),
    ),
    table=("gamma", "E_attention", "E_ridge", "quadrature_error"),
    expensive=("gamma",),
)

_EXPLORE = "attnlimits.verify.rmt.properties"

#: Properties of the result (``attnlimits explore``, docs/explore.md).
PROPERTIES = (
    Property("rmt-vs-simulation", "rmt", "the deterministic equivalents of E_attention and E_ridge match simulation "
             "(w = 0; a finite-size allowance measured from n and n/2)",
             {"activation": Choice(("tanh", "relu", "erf", "sin")), "c": Range(0.25, 4.0, scale="log"),
              "gamma": Range(0.01, 1.0, scale="log"), "snr": Range(0.0, 2.0)},
             evaluate=f"{_EXPLORE}:rmt_vs_simulation", kind="simulation", quick={"n": 256, "draws": 12},
             confirm={"n": 512, "draws": 24}, map=("c", "gamma"), seconds=60.0),
    Property("rmt-exported-equals-inprocess", "rmt", "the standalone solver of `attnlimits export rmt` gives the "
             "in-process numbers (to 1e-12)",
             {"activation": Choice(("tanh", "relu", "erf", "sin")), "c": Range(0.1, 10.0, scale="log"),
              "gamma": Range(1e-3, 10.0, scale="log"), "snr": Range(0.0, 4.0),
              "wk": Range(-2.0, 2.0), "wq": Range(-2.0, 2.0)},
             evaluate=f"{_EXPLORE}:exported_equals_inprocess", kind="theory", map=("c", "gamma"), seconds=60.0),
    Property("rmt-noise-kernel-vs-simulation", "rmt", "the Stieltjes transform of the noise kernel (§4.2 law) "
             "matches the simulated kernel's, extrapolated from n/2 and n (V19 over a domain)",
             {"activation": Choice(("tanh", "erf", "sin")), "c": Range(0.5, 4.0, scale="log"),
              "x": Range(-1.5, 2.5), "y": Range(0.1, 1.0, scale="log")},
             evaluate=f"{_EXPLORE}:noise_kernel_vs_simulation", kind="simulation",
             quick={"n": 256, "draws": 24}, confirm={"n": 512, "draws": 48}, map=("x", "c"), seconds=120.0,
             doc="Smooth activations: for ReLU the finite-n correction is not of order 1/n (one of six points, "
                 "c = 0.48, z = -0.89 + 0.84i, stood 5.7 SE beyond the 1/n extrapolation from n = 128, 256). c >= 0.5: at "
                 "c = 0.29 (p = 37 at n/2 = 128) the screen flagged sin at -3 to -5.8 SE, which the confirmation at "
                 "n = 512 did not (p = 0.12): the 1/n rate needs p of some 64 at the smaller size."),
    Property("rmt-kappa-vs-measured", "rmt", "the kept-diagonal constant kappa(p) of §4.3 equals the mean "
             "diagonal of K_X it stands for (Monte Carlo of |x|^2 ~ chi^2_p; monotone activations)",
             {"activation": Choice(("tanh", "relu", "sigmoid", "erf")), "p": IntRange(100, 2000)},
             evaluate=f"{_EXPLORE}:kappa_vs_measured", kind="simulation", quick={"n": 2_000_000},
             confirm={"n": 8_000_000}, seconds=30.0),
    Property("rmt-derivative-identity", "rmt", "E = -gamma^2 d ybar/d gamma for attention and ridge: the engine's "
             "error equals a central difference of its ybar (1e-6 relative; §6, §7, ID-derivative)",
             {"activation": Choice(("tanh", "relu", "erf", "sin")), "c": Range(0.1, 10.0, scale="log"),
              "gamma": Range(1e-3, 10.0, scale="log"), "snr": Range(0.0, 4.0),
              "wk": Range(-2.0, 2.0), "wq": Range(-2.0, 2.0)},
             evaluate=f"{_EXPLORE}:derivative_identity", kind="theory", map=("c", "gamma"), seconds=30.0),
    Property("rmt-mpmath-equals-float64", "rmt", "the mpmath solver (30 digits) and the float64 solver agree to "
             "float64's error (1e-9 relative)",
             {"activation": Choice(("tanh", "relu", "erf", "sin")), "c": Range(0.1, 10.0, scale="log"),
              "gamma": Range(1e-3, 10.0, scale="log"), "snr": Range(0.0, 4.0),
              "wk": Range(-2.0, 2.0), "wq": Range(-2.0, 2.0)},
             evaluate=f"{_EXPLORE}:mpmath_equals_float64", kind="theory", quick={"digits": 30},
             confirm={"digits": 40}, map=("c", "gamma"), seconds=60.0),
    Property("rmt-vs-simulation-weights", "rmt", "E_attention and E_ridge match simulation with key and query "
             "weights along the signal and either diagonal convention (zero; keep, at the measured kappa)",
             {"activation": Choice(("tanh", "relu", "erf", "sin")), "c": Range(0.25, 4.0, scale="log"),
              "gamma": Range(0.01, 1.0, scale="log"), "snr": Range(0.0, 2.0), "wk": Range(-1.5, 1.5),
              "wq": Range(-1.5, 1.5), "diagonal": Choice(("zero", "keep"))},
             evaluate=f"{_EXPLORE}:simulation_general", kind="simulation", quick={"n": 256, "draws": 128},
             confirm={"n": 512, "draws": 64}, map=("wk", "wq"), seconds=120.0),
    Property("rmt-frobenius-vs-m1", "rmt", "||X K_X||_F^2/n^2 -> M1 = nu + a1^2/c + 2 kappa a1 + c kappa^2 on "
             "simulation at mu = 0, any weights, either diagonal convention (§8 E, V5)",
             {"activation": Choice(("tanh", "relu", "erf", "sin", "sigmoid", "cos")),
              "c": Range(0.25, 4.0, scale="log"), "wk": Range(-2.0, 2.0), "wq": Range(-2.0, 2.0),
              "diagonal": Choice(("zero", "keep"))},
             evaluate=f"{_EXPLORE}:frobenius_vs_m1", kind="simulation", quick={"n": 256, "draws": 64},
             confirm={"n": 512, "draws": 32}, map=("c", "wk"), seconds=60.0),
    Property("rmt-bulk-traces", "rmt", "the bulk fixed point's traces q0..q5 match the traces simulated on the "
             "Gaussian-equivalent kernel (Proposition 1, §5)",
             {"activation": Choice(("tanh", "relu", "erf", "sin")), "c": Range(0.25, 4.0, scale="log"),
              "gamma": Range(0.05, 2.0, scale="log")},
             evaluate=f"{_EXPLORE}:bulk_traces_vs_simulation", kind="simulation", quick={"n": 192, "draws": 24},
             confirm={"n": 384, "draws": 24}, map=("c", "gamma"), seconds=120.0),
    Property("rmt-large-gamma-m1", "rmt", "for random inputs 1 - E = 2 M1/gamma + O(gamma^-2): the engine's "
             "Richardson-extrapolated (two steps) gamma(1 - E)/2 at gamma <= 1e4 equals the derived M1 (1e-4 relative), and c "
             "for ridge (§8 E)",
             {"activation": Choice(("tanh", "relu", "erf", "sin", "sigmoid", "cos", "abs")),
              "c": Range(0.1, 10.0, scale="log"), "kappa": Range(0.0, 1.0)},
             evaluate=f"{_EXPLORE}:large_gamma_m1", kind="theory", map=("c", "kappa"), seconds=60.0),
    Property("rmt-sqrt-gamma-law", "rmt", "for random inputs, kappa = 0 and c > 1, E_attention ~ C sqrt(gamma) "
             "(local log-log slope 1/2 +- 0.01 on [1e-5, 1e-4]) while ridge decays like gamma^2 (§8 F)",
             {"activation": Choice(("tanh", "relu", "erf", "sin", "sigmoid")), "c": Range(1.5, 8.0, scale="log")},
             evaluate=f"{_EXPLORE}:sqrt_gamma_law", kind="theory", seconds=60.0),
    Property("grammar-answers", "rmt", "every formula of the grammar gets an answer (finite Hermite data obeying "
             "Bessel's inequality) or a one-line refusal from `attnlimits hermite` within 30 s",
             {"expression": Expression()}, evaluate=f"{_EXPLORE}:grammar_answers", kind="theory",
             quick={"timeout": 30.0}, confirm={"timeout": 60.0}, seconds=45.0),
)

_FIGURES = "attnlimits.verify.figures.rmt"

#: The figure panels of the result (``attnlimits figure``): arXiv:2506.18656, Fig. 1a-c.
FIGURES = (
    Panel("rmt-1a", "interpolation error vs γ, ridge and attention (c = 4, SNR 1)", "arXiv:2506.18656 Fig. 1a",
          f"{_FIGURES}:rmt_1a", 0.5, examples=("attnlimits figure rmt-1a --out figures/",)),
    Panel("rmt-1b", "interpolation error vs c = p/n at γ = 1e-5", "arXiv:2506.18656 Fig. 1b", f"{_FIGURES}:rmt_1b", 1.0),
    Panel("rmt-1c", "interpolation error vs SNR at c = 1/4, γ = 1e-5", "arXiv:2506.18656 Fig. 1c", f"{_FIGURES}:rmt_1c",
          1.0),
)

RESULT = Result(
    name="rmt",
    title="Interpolation error of nonlinear attention vs ridge regression (p/n -> c)",
    references=REFERENCES,
    commands=(RMT_COMMAND,),
    # one module per part of the spec; importing any of them registers all, in the package's order
    claims=tuple(f"attnlimits.verify.rmt.claims.{part}" for part in
                 ("exact", "ridge", "random_inputs", "geometry", "activation", "kernels", "numerics")),
    model="attnlimits.derivations.attention_rmt.equations:model",
    properties=PROPERTIES,
    items="attnlimits.derivations.attention_rmt.items:ITEMS",
    export="attnlimits.verify.rmt.commands:export_rmt",
    export_parameters=(
        _ACTIVATION,
        Param("backend", "choice", default="numpy", choices=("numpy", "mpmath"), help="numpy (default) or mpmath"),
    ),
    export_examples=(
        "attnlimits export rmt --activation tanh --backend numpy -o rmt_tanh.py",
        "python rmt_tanh.py --c 0.5 --gamma 0.01,0.1 --snr 1 --wk 1,0 --wq 1,0 --json",
        "attnlimits export rmt --activation erf --backend mpmath -o rmt_erf_mp.py",
    ),
    description="Liao, Liu, Hou, Zou, Ling, arXiv:2506.18656 (docs/attention_rmt.md).",
    doc="docs/attention_rmt.md",
    figures=FIGURES,
)
