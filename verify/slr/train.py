r"""Ridge ERM of single-location regression at finite :math:`D`, batched over seeds (``docs/slr.md`` §12).

Several independent problems (teacher, training set, initialisation; one per *seed*) are trained
at once: the parameters are stacked, ``theta`` of shape ``(S, P)`` with ``P = 2D`` (+1 for a
learned scalar), the data of shape ``(S, N_L, L, D)``, and one forward/backward pass evaluates the
``S`` objectives and their gradients together (the objectives do not interact, so the gradient of
their sum is the stack of their gradients).

Objective (docs/slr.md §2, ``half_sum``), per seed:

.. math::

    \mathcal L(k,v,c)=\tfrac12\sum_{\mu=1}^N\big(y_\mu-\sigma(X_\mu k/\sqrt D;c)^\top X_\mu v/\sqrt D\big)^2
    +\tfrac\lambda2\big(\|k\|^2+\|v\|^2\big),

learned scalars (``erf_learned``'s :math:`c`, ``softplus_norm_bias``'s :math:`b`) trained jointly and
unpenalised (§12).  Any per-sample loss :math:`\rho` of the residual replaces :math:`\tfrac12r^2` (``loss``:
``huber:δ``, ``pseudo_huber:δ``, ``logcosh`` or a formula in ``r``, printed for torch from its SymPy expression) and
the ridge may differ on the two blocks (``lam`` on k, ``lam_v`` on v): see :func:`train_erm`.

The optimisers (batched L-BFGS, GD, Adam, SGD) and the stacked objective are in
:mod:`attnlimits.verify.slr.erm_solver`; the learning-curve figure in :mod:`attnlimits.verify.slr.erm_plots`.

Initialisation (§12): ``informed`` puts :math:`k=m_k^{\rm pop}k^*`, :math:`v=m_v^{\rm pop}v^*` (and the learned
scalar at its population optimum) from :func:`attnlimits.numeric.slr.population.optimal_population_risk`; softmax uses
the exact :math:`m_k=c_\nu`, :math:`m_v=1` (§7). When the optimum is a limit (softmax at max-SLR
:math:`\nu=\infty`, :math:`b\to-\infty`) the start is capped (:math:`m_k\le3`, the RS start of §10.6; :math:`|b|\le30`)
and the row says so. ``random``: :math:`k,v\sim\mathcal N(0,\texttt{init\_scale}^2I_D)`, a separate, labelled
experiment.

Reports (§12), per seed and as mean ± sd over seeds: ``E_test`` on ``n_test`` fresh sequences of the
same teacher (mean ± SE over 20 batches, :func:`attnlimits.verify.slr.direct_risk`); ``E_test_overlaps``,
the same error computed from the seven learned overlaps by the population formula of §6.1
(:func:`attnlimits.numeric.slr.population.population_risk_general`; exact given the weights when the teacher is
orthonormal, claim C5); the seven overlaps; the distance to the manifold
:math:`\sqrt{m_{kv^*}^2+m_{vk^*}^2+q_{kv}^2}`; the objective, the training MSE; optimiser status,
iterations, evaluations and final gradient norm.

Randomness: seed index ``s`` under master ``seed`` has base ``draw_seed(seed, s)`` and streams
``draw_generator(base, j)`` — ``j = 0`` teacher, ``1`` random init, ``2`` test sequences, ``3``
minibatch order, ``100 + L`` training sequences of length ``L``. All draws are on CPU generators
and then moved to the device, so a run gives the same data on every device, and training seed
``s`` alone (``seed_indices=[s]``) reproduces seed ``s`` of a batched run. The same ``(seed, s)``
gives the same teacher and data for every activation and λ (paired comparisons).

Variable length (§3.4): the training set is stratified, :math:`N_L=` the largest-remainder rounding of
:math:`P(L)N` sequences of each length (the same split for every seed).

Memory: the training data take ``S·N·L·D`` floats; a run that does not fit is split into seed
batches, and one that cannot fit one seed is refused with the number of bytes needed.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping
from attnlimits.symbolic.options import resolve_options

import numpy as np
import torch

from attnlimits.symbolic.result import InputError
from attnlimits.derivations.slr.result import TRAIN_COMMAND  # noqa: F401  (declared with the result)
from attnlimits.verify.flags import seed_flag, summary_flag
from attnlimits.verify.torch_device import draw_generator, draw_seed
from attnlimits.verify.torch_device import resolve_device

from .estimators import ACTIVATIONS, direct_risk
from attnlimits.numeric.slr.problem import LengthLaw, SLRProblem

from .erm_solver import StackedObjective, batched_lbfgs, resolve_loss, run_gd, run_minibatch
from .samplers import c_nu, distance_to_manifold, make_teacher, overlaps, sample_sequences


def _extra_scalars():
    """Activation name → name of its extra scalar, and the names whose scalar is learned (the registry's)."""
    from attnlimits.derivations.slr import ACTIVATIONS as REG

    extra = {a.name: a.extra_name for a in REG.values() if a.extra is not None}
    return extra, tuple(a.name for a in REG.values() if a.extra_learned)


_EXTRA, _LEARNED = _extra_scalars()

__all__ = [
    "MULTISTART_INITS",
    "train_multistart",
    "OPTIMIZERS",
    "OVERLAP_KEYS",
    "TRAIN_COMMAND",
    "ERMJob",
    "ERMOptions",
    "TrainResult",
    "length_split",
    "memory_needed",
    "run_train",
    "summarize",
    "train_erm",
]

OPTIMIZERS = ("lbfgs", "gd", "adam", "sgd")
OVERLAP_KEYS = ("m_k", "q_k", "m_v", "q_v", "m_kvstar", "m_vkstar", "q_kv")
#: Default λ grid of the RS tuning (docs/slr.md §12: log grid 1e-3 … 10, at least 9 points).
LAMBDA_GRID = tuple(float(x) for x in np.geomspace(1e-3, 10.0, 9))
_DTYPES = {"float64": torch.float64, "float32": torch.float32}


# =============================================================================================
# small helpers
# =============================================================================================


def _law(L) -> list[tuple[int, float]]:
    """Length law: int → [(L, 1)]; list → uniform over it; dict → itself (sorted)."""
    if isinstance(L, Mapping):
        items = [(int(k), float(p)) for k, p in L.items() if float(p) > 0]
    elif isinstance(L, (list, tuple)) and L and all(isinstance(x, tuple) for x in L):
        items = [(int(a), float(p)) for a, p in L]
    elif isinstance(L, (list, tuple)):
        vals = [int(x) for x in L]
        if len(set(vals)) != len(vals):
            raise InputError(f"--L has a repeated length: {list(L)}")
        items = [(x, 1.0 / len(vals)) for x in vals]
    else:
        items = [(int(L), 1.0)]
    if not items or any(Lv < 1 for Lv, _ in items):
        raise InputError(f"--L must be positive integers, got {L!r}")
    if abs(sum(p for _, p in items) - 1.0) > 1e-9:
        raise InputError(f"length probabilities must sum to 1, got {L!r}")
    return sorted(items)


def length_split(N: int, law) -> list[tuple[int, int]]:
    """Stratified split ``[(L, N_L)]`` of ``N`` sequences by the law (largest remainder)."""
    law = _law(law)
    raw = [N * p for _, p in law]
    base = [int(math.floor(r)) for r in raw]
    rest = N - sum(base)
    order = sorted(range(len(law)), key=lambda i: -(raw[i] - base[i]))
    for i in order[:rest]:
        base[i] += 1
    return [(Lv, n) for (Lv, _), n in zip(law, base) if n > 0]


def _law_arg(law):
    """The length argument of :mod:`attnlimits.verify.slr` (int, or dict for variable length)."""
    return law[0][0] if len(law) == 1 else {Lv: p for Lv, p in law}


def _theory(model, nu, law, activation):
    """The :class:`attnlimits.verify.slr.theory.SLRTheory` of the run (the activation resolved once)."""
    from attnlimits.verify.slr.problem import slr_problem
    from attnlimits.verify.slr.theory import theory_of

    return theory_of(slr_problem(model, nu, {Lv: p for Lv, p in law}, activation=activation))


def memory_needed(S: int, N: int, L_mean: float, D: int, dtype: str = "float64") -> int:
    """Bytes of the training data of ``S`` seeds: ``S·N·L·D`` floats, plus one seed's float64
    draw buffer and 10% for the projections and gradients."""
    item = 8 if dtype == "float64" else 4
    x = S * N * L_mean * D
    return int(1.1 * x * item + N * L_mean * D * 8)


def _available_bytes(dev: torch.device) -> int:
    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        return int(free)
    from ._guards import available_bytes

    return available_bytes()


def _gb(x: float) -> str:
    return f"{x / 2**30:.3g} GiB"


def _mean_sd_se(vals) -> tuple[float | None, float | None, float | None]:
    v = np.asarray([x for x in vals if x is not None and math.isfinite(x)], dtype=float)
    if v.size == 0:
        return None, None, None
    if v.size == 1:
        return float(v[0]), None, None
    sd = float(v.std(ddof=1))
    return float(v.mean()), sd, sd / math.sqrt(v.size)


# =============================================================================================
# informed initialisation
# =============================================================================================


@functools.lru_cache(maxsize=64)
def _population_start(name: str, model: str, nu: float, law: tuple, extra) -> dict:
    """(m_k, m_v, extra, note) of the population optimum used for the informed start."""
    if name == "softmax":
        if math.isinf(nu):
            return {"m_k": 3.0, "m_v": 1.0, "extra": None,
                    "note": "population optimum is the limit m_k→∞; start capped at m_k=3"}
        return {"m_k": c_nu(model, nu), "m_v": 1.0, "extra": None, "note": "exact (§7)"}
    fixed = extra if (name in _EXTRA and name not in _LEARNED) else None
    opt = _theory(model, nu, list(law), name).optimal_population_risk(extra=fixed)
    a = opt.argmin
    m_k = float(a["m_k"])
    m_v = float(a["m_v"])
    ex = None
    note = "population optimum"
    if name in _LEARNED:
        ex = float(a.get("c", a.get("b", 0.0)))
    if opt.limit:
        if m_k > 3.0 * max(c_nu(model, nu) if not math.isinf(nu) else 1.0, 1.0):
            m_k = 3.0 * max(c_nu(model, nu) if not math.isinf(nu) else 1.0, 1.0)
        if ex is not None and abs(ex) > 30:
            ex = math.copysign(30.0, ex)
        note = f"population optimum is a limit ({opt.limit_reason}); start capped"
    if name == "linear_pure" and abs(m_k) < 1e-12:
        m_k, m_v = 1.0, m_v
    return {"m_k": m_k, "m_v": m_v, "extra": ex, "note": note}


# =============================================================================================
# the trainer
# =============================================================================================


@dataclass
class TrainResult:
    """Rows of one trained configuration: ``seeds`` (one dict per seed) and ``summary``
    (mean, sd and SE over seeds), plus the settings that made them."""

    seeds: list
    summary: dict
    settings: dict = field(default_factory=dict)
    #: Final parameters, one row per seed (float64, CPU): ``k = theta[:, :D]``, ``v = theta[:, D:2D]``
    #: and the learned scalar in the last column when there is one; a warm start (``init_theta``) of
    #: another run, e.g. the next λ of a continuation.
    theta: Any = None

    def rows(self) -> list[dict]:
        return list(self.seeds) + [self.summary]


def _check_inputs(activation, model, nu, alpha, lam, D, seeds, optimizer, init, dtype):
    if activation not in ACTIVATIONS:
        hint = " (name the variant in full, docs/slr.md §2)" if activation in ("linear", "erf", "softplus") else ""
        raise InputError(f"unknown activation {activation!r}{hint}; variants: {', '.join(ACTIVATIONS)}")
    if model not in ("spiked", "max"):
        raise InputError(f"--model must be 'spiked' or 'max', got {model!r}")
    if not (isinstance(nu, (int, float)) and nu >= 0) or (math.isinf(nu) and model != "max"):
        raise InputError(f"--nu must be >= 0 (inf for max-SLR only), got {nu!r}")
    if not (math.isfinite(alpha) and alpha > 0):
        raise InputError(f"--alpha must be > 0, got {alpha!r}")
    if not (math.isfinite(lam) and lam >= 0):
        raise InputError(f"--lam must be >= 0, got {lam!r}")
    if int(D) != D or D < 2:
        raise InputError(f"--D must be an integer >= 2, got {D!r}")
    if int(seeds) != seeds or seeds < 1:
        raise InputError(f"--seeds must be a positive integer, got {seeds!r}")
    if optimizer not in OPTIMIZERS:
        raise InputError(f"--optimizer must be one of {', '.join(OPTIMIZERS)}, got {optimizer!r}")
    if init not in ("informed", "random"):
        raise InputError(f"--init must be 'informed' or 'random', got {init!r}")
    if dtype not in _DTYPES:
        raise InputError(f"--dtype must be float64 or float32, got {dtype!r}")


@dataclass(frozen=True)
class ERMOptions:
    """How :func:`train_erm` trains and measures (every field is described there): the seeds, the optimiser and
    its stopping rule, the precision, device and memory, the test measurement and the JSON-lines log."""

    seeds: int = 3
    seed: int = 0
    seed_indices: Iterable[int] | None = None
    optimizer: str = "lbfgs"
    init: str = "informed"
    init_scale: float = 1.0
    dtype: str = "float64"
    device: Any = "auto"
    max_iter: int | None = None
    tol_grad: float = 1e-8
    lr: float | None = None
    batch: int = 256
    history: int = 10
    n_test: int = 20_000
    test: bool = True
    overlap_points: int = 2 ** 14
    max_memory_bytes: int | None = None
    log_path: str | None = None
    batched: bool = True


def train_erm(activation: str, *, model: str, nu: float, L, alpha: float, lam: float, D: int, delta: float = 0.1,
              extra=None, init_theta: torch.Tensor | None = None, options: ERMOptions | None = None, progress=None,
              loss: str = "square", lam_v: float | None = None, **overrides) -> TrainResult:
    r"""Train ridge ERM for ``seeds`` independent problems at once (docs/slr.md §12).

    Parameters
    ----------
    activation : str
        §4 variant (named in full).
    model, nu, L :
        Data model (§3); ``L`` an int, a list (uniform variable length) or a dict law.
    alpha, lam, D :
        :math:`N=\lfloor\alpha D\rfloor`, ridge λ (``half_sum``; on k only when ``lam_v`` is given), dimension.
    loss : str
        Per-sample loss of the residual :math:`r=y-f`: ``square`` (default, ½r²), ``huber:δ``,
        ``pseudo_huber:δ``, ``logcosh`` or a formula in ``r``
        (:func:`attnlimits.derivations.slr.losses.parse_loss`); the objective is
        :math:`\sum_\mu\rho(r_\mu)+\tfrac{\lambda_k}2\|k\|^2+\tfrac{\lambda_v}2\|v\|^2`, ρ printed for torch from the
        same SymPy expression as the replica equations.  ``train_mse`` stays the mean squared residual.
    lam_v : float, optional
        Ridge on v (default: ``lam``, one ridge on both).
    seeds, seed, seed_indices :
        Number of problems; master seed; or explicit seed indices (default ``range(seeds)``).
    delta : float
        Label noise Δ (default 0.1, §12).
    optimizer : {"lbfgs", "gd", "adam", "sgd"}
    init : {"informed", "random"}
    init_scale : float
        Random start :math:`k,v\sim\mathcal N(0,\texttt{init\_scale}^2I)`.
    extra : float, optional
        Value of a fixed scalar (``erf_fixed``'s c, ``softplus_norm``'s b; default 0) or the
        start of a learned one (default: its population optimum under ``informed``, 0 otherwise).
    dtype : {"float64", "float32"}
        Training precision. float32 is for speed only; the benchmark measures its gap.
    max_iter : int, optional
        Default 5000 (L-BFGS), 3000 (GD), 20000 (Adam/SGD).
    tol_grad : float
        Stop when :math:`\|\nabla\mathcal L\|_2\le` tol_grad (L-BFGS, GD).
    lr : float, optional
        GD/SGD: dimensionless, step :math:`\eta=\texttt{lr}\,D/N` (default 0.5); Adam: its step (default 0.01).
    batch : int
        Minibatch size (Adam/SGD).
    n_test : int
        Fresh test sequences per seed (default 2·10⁴, §12).
    test : bool
        Compute the test errors (``False``: training only, for benchmarks).
    overlap_points : int
        QMC points per replicate of the §6.1 population formula (8 replicates).
    max_memory_bytes : int, optional
        Memory the data may use; default 80% of what the device has free.
    init_theta : Tensor (S, P), optional
        Explicit start (overrides ``init``; used for λ continuation and C17).
    log_path : str, optional
        Append each finished seed's row as a JSON line (survives Ctrl-C).
    batched : bool
        ``False`` trains the seeds one after the other (the baseline of the benchmark).
    options : ERMOptions, optional
        Every parameter above except the problem (activation, model, nu, L, alpha, lam, D, delta, extra,
        init_theta) is a field of :class:`ERMOptions`; keyword arguments override its fields.

    Returns
    -------
    TrainResult

    Raises
    ------
    InputError
        Bad input, or the data of one seed do not fit into memory (the message says how much).
    """
    o = resolve_options(ERMOptions, options, overrides)
    seeds, seed, seed_indices, optimizer, init, dtype = o.seeds, o.seed, o.seed_indices, o.optimizer, o.init, o.dtype
    max_iter, lr = o.max_iter, o.lr
    nu = float(nu)
    alpha, lam = float(alpha), float(lam)
    _check_inputs(activation, model, nu, alpha, lam, D, seeds, optimizer, init, dtype)
    loss = resolve_loss(loss)
    if lam_v is not None:
        lam_v = float(lam_v)
        if not (math.isfinite(lam_v) and lam_v >= 0):
            raise InputError(f"--lam-v must be >= 0, got {lam_v!r}")
    law = _law(L)
    # the problem as training sees it: the activation by name (training draws the registry's torch weights), the law
    # already normalised here, the extra scalar as given
    problem = SLRProblem(model, nu, LengthLaw(tuple(law), ",".join(str(x) for x, _ in law)), float(delta), activation,
                         extra, loss)
    D = int(D)
    N = int(math.floor(alpha * D))
    if N < 1:
        raise InputError(f"alpha·D = {alpha * D:g} gives no training sequence")
    split = length_split(N, law)
    idx = list(range(int(seeds))) if seed_indices is None else [int(s) for s in seed_indices]
    S = len(idx)
    dev = resolve_device(o.device)
    tdtype = _DTYPES[dtype]
    L_mean = sum(Lv * n for Lv, n in split) / N
    avail = int(0.8 * _available_bytes(dev)) if o.max_memory_bytes is None else int(o.max_memory_bytes)
    one = memory_needed(1, N, L_mean, D, dtype)
    if one > avail:
        raise InputError(f"N·L·D = {N}·{L_mean:g}·{D} needs {_gb(one)} per seed on {dev.type} "
                         f"({dtype}), only {_gb(avail)} available: reduce --D or --alpha, or use --dtype float32")
    per_seed = memory_needed(1, N, L_mean, D, dtype) - int(N * L_mean * D * 8)
    per_batch = max(1, min(S, (avail - int(N * L_mean * D * 8)) // max(1, per_seed)))
    if not o.batched:
        per_batch = 1
    if per_batch < S and progress is not None and o.batched:
        progress(f"memory: {S} seeds need {_gb(memory_needed(S, N, L_mean, D, dtype))}; training in batches of {per_batch}")
    has_extra = activation in _EXTRA
    learn_extra = activation in _LEARNED
    fixed_extra = (0.0 if extra is None else float(extra)) if (has_extra and not learn_extra) else None
    if max_iter is None:
        max_iter = {"lbfgs": 5000, "gd": 3000}.get(optimizer, 20000)
    if lr is None:
        lr = 0.01 if optimizer == "adam" else 0.5
    if init_theta is not None and tuple(torch.as_tensor(init_theta).shape) != (S, 2 * D + (1 if learn_extra else 0)):
        raise InputError(f"init_theta must have shape ({S}, {2 * D + (1 if learn_extra else 0)}), "
                         f"got {tuple(torch.as_tensor(init_theta).shape)}")
    start = None
    if init == "informed" and init_theta is None:
        start = _population_start(activation, model, nu, tuple(law), fixed_extra)
    settings = {"activation": activation, "model": model, "nu": nu,
                "L": ",".join(str(x) for x, _ in law),  # text, as in every command: "2", or "1,2,3" (uniform)
                "alpha": alpha, "lam": lam, "delta": delta, "D": D, "N": N,
                "optimizer": optimizer, "init": "explicit" if init_theta is not None else init,
                "dtype": dtype, "device": str(dev), "seed": int(seed), "max_iter": int(max_iter),
                "tol_grad": o.tol_grad}
    if loss != "square":
        settings["loss"] = loss
    if lam_v is not None:
        settings["lam_k"], settings["lam_v"] = lam, lam_v
    if optimizer in ("gd", "sgd", "adam"):
        settings["lr"] = lr
    if optimizer in ("sgd", "adam"):
        settings["batch"] = int(o.batch)
    job = ERMJob(problem, alpha=alpha, lam=lam, D=D, N=N, split=tuple(split), seed=int(seed),
                 options=dataclasses.replace(o, max_iter=int(max_iter), lr=lr), settings=settings, dtype=tdtype,
                 device=dev, start=start, learn_extra=learn_extra, fixed_extra=fixed_extra, lam_v=lam_v)
    seed_rows: list[dict] = []
    thetas: list = []
    interrupted = False
    for b0 in range(0, S, per_batch):
        chunk = idx[b0:b0 + per_batch]
        rows, interrupted, th_chunk = _train_chunk(
            job, chunk, None if init_theta is None else torch.as_tensor(init_theta)[b0:b0 + per_batch], progress)
        for r in rows:
            if o.log_path:
                with open(o.log_path, "a") as fh:
                    fh.write(json.dumps(r) + "\n")
        seed_rows.extend(rows)
        thetas.append(th_chunk)
        if interrupted:
            break
    res = TrainResult(seed_rows, summarize(seed_rows, settings), settings,
                      theta=torch.cat(thetas) if thetas else None)
    if interrupted:
        res.summary["interrupted"] = True
    return res


@dataclass(frozen=True)
class ERMJob:
    """One ERM configuration, resolved once by :func:`train_erm` and passed whole to its seed chunks.

    ``problem`` is the :class:`attnlimits.numeric.slr.problem.SLRProblem` (model, ν, length law, Δ, the activation's
    name, the extra scalar as given, the loss); then the sample point (``alpha``, ``lam`` on k or both blocks,
    ``lam_v`` on v when separate, ``D``, ``N`` and its stratified ``split`` ``[(L, N_L)]``), the master ``seed``, the
    informed ``start`` (or ``None``), how the extra scalar is handled (``learn_extra``, ``fixed_extra``), the torch
    ``dtype`` and ``device``, the options with ``max_iter`` and ``lr`` filled in, and the ``settings`` every row
    carries."""

    problem: SLRProblem
    alpha: float
    lam: float
    D: int
    N: int
    split: tuple
    seed: int
    options: ERMOptions
    settings: dict
    dtype: Any = torch.float64
    device: Any = None
    start: Any = None
    learn_extra: bool = False
    fixed_extra: float | None = None
    lam_v: float | None = None

    @property
    def activation(self) -> str:
        return self.problem.activation

    @property
    def model(self) -> str:
        return self.problem.model

    @property
    def nu(self) -> float:
        return self.problem.nu

    @property
    def law(self) -> list:
        return list(self.problem.lengths.items)

    @property
    def delta(self) -> float:
        return self.problem.delta

    @property
    def extra(self):
        return self.problem.extra

    @property
    def loss(self) -> str:
        return self.problem.loss


def _train_chunk(job: ERMJob, chunk, init_theta, progress):
    """Train the seeds ``chunk`` of ``job`` at once: ``(seed rows, interrupted, θ)``."""
    interrupted, theta, trained = _train_only(job, chunk, init_theta, progress)
    return _seed_rows(job, chunk, theta, trained, interrupted, progress), interrupted, theta.to(torch.float64).cpu()


def _train_only(job: ERMJob, chunk, init_theta, progress):
    """Data, start and optimiser for the seeds ``chunk``: ``(interrupted, θ, (states, train MSE, teachers, seed
    bases, init note, training seconds))``."""
    activation, model, nu, split, D, N, lam, delta = (job.activation, job.model, job.nu, job.split, job.D, job.N,
                                                      job.lam, job.delta)
    seed, start, extra, learn_extra, fixed_extra, tdtype, dev = (job.seed, job.start, job.extra, job.learn_extra,
                                                                 job.fixed_extra, job.dtype, job.device)
    o = job.options
    optimizer, init, init_scale, max_iter, tol_grad, lr, batch, history = (o.optimizer, o.init, o.init_scale,
                                                                           o.max_iter, o.tol_grad, o.lr, o.batch,
                                                                           o.history)
    S = len(chunk)
    bases = [draw_seed(seed, s) for s in chunk]
    teachers = [make_teacher(D, draw_generator(b, 0), device="cpu") for b in bases]
    groups = []
    for Lv, n in split:
        X = torch.empty((S, n, Lv, D), dtype=tdtype, device=dev)
        y = torch.empty((S, n), dtype=tdtype, device=dev)
        for i, b in enumerate(bases):
            smp = sample_sequences(model, nu, Lv, n, D, generator=draw_generator(b, 100 + Lv),
                                   teacher=teachers[i], delta=delta, device="cpu")
            X[i] = smp["X"].to(device=dev, dtype=tdtype)
            y[i] = smp["y"].to(device=dev, dtype=tdtype)
            del smp
        groups.append((X, y))
    prob = StackedObjective(activation, D, lam, groups, learn_extra, fixed_extra, tdtype, dev, N, loss=job.loss,
                    lam_v=job.lam_v)
    P = prob.P
    theta0 = torch.zeros((S, P), dtype=tdtype, device=dev)
    init_note = ""
    if init_theta is not None:
        rows_t = torch.as_tensor(init_theta, dtype=tdtype)
        if rows_t.shape != (S, P):
            raise InputError(f"init_theta must have shape ({S}, {P}), got {tuple(rows_t.shape)}")
        theta0 = rows_t.to(dev).clone()
        init_note = "explicit start"
    elif init == "informed":
        for i, (ks, vs) in enumerate(teachers):
            theta0[i, :D] = start["m_k"] * ks.to(dev, tdtype)
            theta0[i, D:2 * D] = start["m_v"] * vs.to(dev, tdtype)
        if learn_extra:
            theta0[:, 2 * D] = start["extra"] if extra is None else float(extra)
        init_note = f"informed: m_k={start['m_k']:.4g}, m_v={start['m_v']:.4g}" + (
            f", extra={start['extra']:.4g}" if learn_extra and start["extra"] is not None else "") + f" ({start['note']})"
    else:
        for i, b in enumerate(bases):
            gi = draw_generator(b, 1)
            theta0[i, :2 * D] = (init_scale * torch.randn(2 * D, generator=gi, dtype=torch.float64)).to(dev, tdtype)
        if learn_extra:
            theta0[:, 2 * D] = 0.0 if extra is None else float(extra)
        init_note = f"random: N(0, {init_scale:g}²)"
    t0 = time.perf_counter()
    if optimizer == "lbfgs":
        states = batched_lbfgs(prob.value_and_grad, theta0, history=history, max_iter=max_iter,
                               tol_grad=tol_grad, progress=progress)
    elif optimizer == "gd":
        states = run_gd(prob, theta0, lr=lr, max_iter=max_iter, tol_grad=tol_grad, progress=progress)
    else:
        gens = [draw_generator(b, 3) for b in bases]
        states = run_minibatch(prob, theta0, optimizer=optimizer, lr=lr, max_iter=max_iter,
                                batch=batch, gens=gens, progress=progress)
    train_s = time.perf_counter() - t0
    interrupted = any(st.get("status") == "interrupted" for st in states)
    theta = torch.stack([st["x"] for st in states]).to(tdtype)
    mse = prob.train_mse(theta).tolist()
    del groups, prob
    return interrupted, theta, (states, mse, teachers, bases, init_note, train_s)


def _seed_rows(job: ERMJob, chunk, theta, trained, interrupted, progress) -> list:
    """One row per seed of ``chunk``: overlaps, distance, objective, status, and (unless ``test`` is off or the
    run was interrupted) the test error by direct simulation and by the §6.1 formula at the learned overlaps."""
    states, mse, teachers, bases, init_note, train_s = trained
    activation, model, nu, law, D, lam = job.activation, job.model, job.nu, job.law, job.D, job.lam
    learn_extra, fixed_extra, settings = job.learn_extra, job.fixed_extra, job.settings
    S = len(chunk)
    test, n_test, overlap_points = job.options.test, job.options.n_test, job.options.overlap_points
    rows = []
    theory = _theory(model, nu, law, activation)
    for i, s in enumerate(chunk):
        st = states[i]
        th = theta[i].to(torch.float64).cpu()
        k, v = th[:D], th[D:2 * D]
        ex = float(th[2 * D]) if learn_extra else fixed_extra
        ks, vs = teachers[i]
        ov = overlaps(k, v, ks, vs)
        row = {**settings, "row": "seed", "seed_index": int(s), **{o: ov[o] for o in OVERLAP_KEYS},
               "distance": distance_to_manifold(ov), "extra": ex, "objective": float(st["f"]),
               "train_mse": float(mse[i]), "status": st.get("status"), "flag": seed_flag(st.get("status")),
               "iterations": int(st.get("iterations", 0)),
               "evals": int(st.get("evals", 0)), "grad_norm": float(st.get("grad_norm", math.nan)),
               "step_size": st.get("step_size"), "init_note": init_note, "train_s": train_s / 1.0,
               "batched_seeds": S}
        if test and not interrupted:
            r = direct_risk(activation, k, v, model=model, nu=nu, L=_law_arg(law), n=n_test, D=D,
                            generator=draw_generator(bases[i], 2), teacher=(ks, vs), extra=ex, device="cpu")
            row["E_test"], row["E_test_se"] = float(r.mean), float(r.se)
            try:
                e6, se6 = theory.population_risk_general(ov, extra=ex, points=overlap_points, replicates=8,
                                                         seed=int(bases[i] % 2**31))
                row["E_test_overlaps"], row["E_test_overlaps_se"] = e6, se6
            except (ValueError, ArithmeticError) as exc:  # indefinite / overflow: said, not hidden
                row["E_test_overlaps"], row["E_test_overlaps_se"] = None, None
                row["E_test_overlaps_error"] = str(exc).splitlines()[0]
        else:
            row["E_test"] = row["E_test_se"] = row["E_test_overlaps"] = row["E_test_overlaps_se"] = None
        rows.append(row)
        if progress is not None:
            e = row["E_test"]
            progress(f"{activation} α={settings['alpha']:g} λ={lam:g} seed {s}: {row['status']} after "
                     f"{row['iterations']} it, E_test={'—' if e is None else f'{e:.4f}'}, dist={row['distance']:.3f}")
    return rows


def summarize(rows: list[dict], settings: dict | None = None) -> dict:
    """Mean, sd and SE (= sd/√S) over the seed rows of one configuration."""
    settings = settings or {}
    out = {**settings, "row": "summary", "seeds": len(rows)}
    keys = ("E_test", "E_test_overlaps", *OVERLAP_KEYS, "distance", "objective", "train_mse", "grad_norm",
            "iterations", "extra")
    for key in keys:
        m, sd, se = _mean_sd_se([r.get(key) for r in rows])
        out[key], out[key + "_sd"], out[key + "_se"] = m, sd, se
    st = sorted({str(r.get("status")) for r in rows})
    out["status"] = ",".join(st)
    # a mean over seeds some of which did not converge is flagged with their statuses (docs/output.md)
    out["flag"] = summary_flag(r.get("flag", seed_flag(r.get("status"))) for r in rows)
    out["seeds_flagged"] = sum(bool(r.get("flag", seed_flag(r.get("status")))) for r in rows)
    return out


# =============================================================================================
# λ tuned by the replica theory
# =============================================================================================


def _replica():
    """The replica wrappers (:mod:`attnlimits.verify.slr.replica`), or InputError when they are missing."""
    try:
        from attnlimits.verify.slr import replica
    except ImportError:
        raise InputError("the RS theory (attnlimits.verify.slr.replica) is not available in this installation") from None
    return replica


def rs_tuned_lambda(activation, model, nu, L, alpha, delta, grid=LAMBDA_GRID, loss="square") -> dict:
    """λ minimising the RS test error (docs/slr.md §12: log grid 10⁻³…10, 9 points, then a 1-D refinement) of the RS
    theory for the per-sample ``loss``, with the grid and the RS point at the chosen λ (a row of
    :class:`attnlimits.numeric.slr.rs.RSFixedPoint`)."""
    rep = _replica()
    best, pts = rep.rs_problem(activation, model, nu, L, loss=loss).tune_lambda(float(alpha), float(delta),
                                                                              grid=list(grid))
    return {"lam": float(best.lam), "grid": [float(p.lam) for p in pts], "E_test_grid": [float(p.E_test) for p in pts],
            "rs": best.as_row()}


# =============================================================================================
# the command
# =============================================================================================


def _parse_lams(items) -> list:
    out = []
    for it in items:
        s = str(it).strip()
        if s == "rs-tuned":
            out.append("rs-tuned")
            continue
        try:
            v = float(s)
        except ValueError:
            raise InputError(f"--lam must be numbers >= 0 or 'rs-tuned', got {s!r}") from None
        if not (math.isfinite(v) and v >= 0):
            raise InputError(f"--lam must be >= 0, got {s}")
        out.append(v)
    return out


#: Starts of :func:`train_multistart` .
MULTISTART_INITS = ("informed", "uninformed", "random", "lambda_continuation")


def train_multistart(activation: str, *, model: str, nu: float, L, alpha: float, lam: float, D: int,
                     delta: float = 0.1, inits=MULTISTART_INITS, lam_ladder=(10.0, 1.0), rel_objective: float = 1e-7,
                     progress=None, **kw) -> list[dict]:
    r"""ERM from several starts on the same data, and the distinct minima per seed (docs/slr.md §10.7).

    Starts: ``informed`` (population optimum), ``uninformed`` (k, v ~ N(0, 0.05²): no overlap with the
    teacher), ``random`` (N(0, 1)), ``lambda_continuation`` (informed at the first λ of ``lam_ladder``,
    each minimiser the start of the next λ, then λ).  Every start sees the same teachers and data (same
    ``seed``).  Two end points of a seed are one minimum when their objectives agree within
    ``rel_objective`` (relative) — L-BFGS stops at a gradient norm far below what separates distinct
    minima (measured: ≥ 1e-5 relative in objective where they differ).

    Returns one row per (seed, start) with ``objective``, ``objective_per_N``, ``E_test_overlaps``, the
    overlaps, ``minimum`` (index of the distinct minimum within the seed, 0 = lowest objective) and
    ``equilibrium`` (True for the lowest-objective minimum: the one paired with the RS equilibrium branch),
    and ``n_minima``.
    """
    unknown = [i for i in inits if i not in MULTISTART_INITS]
    if unknown:
        raise InputError(f"unknown start(s) {unknown}; choose from {', '.join(MULTISTART_INITS)}")
    N = int(math.floor(alpha * D))
    seeds = kw.get("seeds", ERMOptions.seeds)  # the ERM options (seeds, seed, optimiser…) pass through ``kw``
    common = dict(model=model, nu=nu, L=L, alpha=alpha, D=D, delta=delta, progress=progress, **kw)
    results = {}
    for init in inits:
        if init == "informed":
            res = train_erm(activation, lam=lam, init="informed", **common)
        elif init == "uninformed":
            res = train_erm(activation, lam=lam, init="random", init_scale=0.05, **common)
        elif init == "random":
            res = train_erm(activation, lam=lam, init="random", init_scale=1.0, **common)
        else:
            theta = None
            for lam_c in tuple(lam_ladder) + (lam,):
                res = train_erm(activation, lam=lam_c, init="informed", init_theta=theta,
                                test=lam_c == lam, **common)
                theta = res.theta
        results[init] = res
    rows = []
    for s in range(int(seeds)):
        per = []
        for init, res in results.items():
            r = dict(res.seeds[s])
            r["start"] = init
            r["objective_per_N"] = r["objective"] / N
            per.append(r)
        per.sort(key=lambda r: r["objective"])
        reps = []
        for r in per:
            for i, o in enumerate(reps):
                if abs(r["objective"] - o) <= rel_objective * max(1.0, abs(o)):
                    r["minimum"] = i
                    break
            else:
                reps.append(r["objective"])
                r["minimum"] = len(reps) - 1
        for r in per:
            r["n_minima"] = len(reps)
            r["equilibrium"] = r["minimum"] == 0
        rows += per
    return rows


def run_train(params: dict, *, progress=None) -> list[dict]:
    """Run function of :data:`TRAIN_COMMAND`: one row per seed and one summary row per
    (activation, α, λ); Ctrl-C returns the rows finished so far (and the interrupted batch's
    last iterates, status ``interrupted``)."""
    acts = params["activation"]
    alphas = params["alpha"]
    lams = _parse_lams(params["lam"])
    L = params["L"]
    L = L[0] if len(L) == 1 else list(L)
    rows: list[dict] = []
    loss = resolve_loss(params.get("loss") or "square")
    lam_k_opt, lam_v_opt = params.get("lam_k"), params.get("lam_v")
    blocks = lam_k_opt is not None or lam_v_opt is not None
    if (blocks or loss != "square") and params.get("init") == "multistart":
        raise InputError("--init multistart trains the square loss with one ridge; drop --loss/--lam-k/--lam-v "
                         "or use --init informed/random")
    if blocks and "rs-tuned" in lams:
        raise InputError("--lam rs-tuned tunes one ridge on both blocks; give numbers with --lam-k/--lam-v")
    from attnlimits.verify.outputs import check_output_file

    if params.get("plot") and params.get("init") == "multistart":
        raise InputError("--plot draws mean learning curves; --init multistart gives the minima per seed: "
                         "use one of them")
    if params.get("plot"):  # output paths are checked before any training, not after it
        check_output_file(params["plot"], option="--plot", suffixes=(".png", ".pdf", ".svg"))
    if params.get("log"):  # appended to, as the help says: never truncated
        log = check_output_file(params["log"], option="--log", suffixes=())
        try:
            with open(log, "a"):
                pass
        except OSError as exc:
            raise InputError(f"--log {params['log']}: cannot append ({exc.strerror or exc})") from None
    try:
        for act in acts:
            for alpha in alphas:
                for lam in lams:
                    extra_cols = {}
                    if lam == "rs-tuned":  # by the RS theory of the same loss
                        tuned = rs_tuned_lambda(act, params["model"], params["nu"], L, alpha, params["delta"],
                                                loss=loss)
                        lam_val = tuned["lam"]
                        extra_cols = {"lam_rule": "rs-tuned", "rs_E_test": tuned["rs"]["E_test"],
                                      "lam_grid": ",".join(f"{x:g}" for x in tuned["grid"])}
                    else:
                        lam_val = lam
                    if params["init"] == "multistart":  # every start on the same data (§10.7)
                        per = train_multistart(act, model=params["model"], nu=params["nu"], L=L, alpha=alpha,
                                               lam=lam_val, D=params["D"], seeds=params["seeds"], seed=params["seed"],
                                               delta=params["delta"], dtype=params["dtype"],
                                               device=params["device"], n_test=params["n_test"], progress=progress)
                        for r in per:
                            r.update(extra_cols, activation=act, row="seed", lam=lam_val)
                        rows.extend(per)
                        continue
                    res = train_erm(act, model=params["model"], nu=params["nu"], L=L, alpha=alpha,
                                    lam=lam_val if lam_k_opt is None else lam_k_opt, loss=loss,
                                    lam_v=(lam_val if lam_v_opt is None else lam_v_opt) if blocks else None,
                                    D=params["D"], seeds=params["seeds"], seed=params["seed"],
                                    delta=params["delta"], optimizer=params["optimizer"], init=params["init"],
                                    dtype=params["dtype"], device=params["device"],
                                    max_iter=params.get("max_iter") or None, lr=params.get("lr") or None,
                                    n_test=params["n_test"], progress=progress, log_path=params.get("log"))
                    for r in res.rows():
                        r.update(extra_cols)
                    rows.extend(res.rows())
                    if res.summary.get("interrupted"):
                        raise KeyboardInterrupt
    except KeyboardInterrupt:
        if progress is not None:
            progress(f"interrupted: returning {len(rows)} finished rows")
        for r in rows:
            r.setdefault("interrupted", True)
    if params.get("plot") and rows:
        rs_on = params.get("theory", "rs") == "rs" and loss == "square" and not blocks
        if params.get("theory", "rs") == "rs" and not rs_on and progress is not None:
            progress("figure: the RS lines are drawn for the square loss with one ridge only; none drawn")
        from .erm_plots import plot_learning_curve

        path = plot_learning_curve(rows, params["plot"], theory=rs_on, bayes_optimal=rs_on)
        if progress is not None:
            progress(f"figure: {path}")
    return rows
