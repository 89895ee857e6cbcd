r"""Online (population-level) training of SLR attention in PyTorch (docs/slr.md §12)."""
from __future__ import annotations

import dataclasses
from attnlimits.symbolic.options import resolve_options

import math
import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import torch

from attnlimits.verify.torch_device import DTYPE
from attnlimits.verify.stats import mean_se
from attnlimits.verify.torch_device import resolve_device

from .estimators import activation_bundle, predict_sequences, direct_risk, overlap_risk, projection_AB
from .streams import as_generator, check_model, child_seed, length_law, randn, seeded
from .samplers import c_nu, make_teacher, overlaps, distance_to_manifold, sample_sequences

__all__ = ["TRAINING_ALLOWANCE", "TRAINING_PRESET", "informed_overlaps", "train_population"]

#: Online-training settings validated on spiked ν=2, L∈{2,3}, softmax and linear_uncentred,
#: random and informed initialisation (see :func:`train_population`): ≈ 6–9 s of training on
#: one CPU thread, 1.5·10⁶ sequences in all.
TRAINING_PRESET: dict[str, Any] = {
    "D": 64, "steps": 2000, "batch": 256, "lr": 0.05, "schedule": "cosine",
    "final_lr_ratio": 0.01, "final_fraction": 0.25, "final_batch_factor": 4,
    "n_test": 100_000, "n_overlap": 400_000,
}
#: Allowance for the SGD noise floor of :data:`TRAINING_PRESET`: the paired gap of the learned
#: parameters to the optimum measured 2–7·10⁻⁴ (it grows like D/(steps·batch): 5·10⁻⁴ at D=128,
#: 1.2·10⁻³ at batch 128 with 1000 steps); the allowance is 10⁻³.
TRAINING_ALLOWANCE = 1e-3


# =============================================================================================
# online training (population level)
# =============================================================================================


def _linear_spiked_optimum(name: str, nu: float, L: int) -> tuple[float, float]:
    """(m_k, m_v) at the optimum of a linear variant, spiked-SLR: the generated §8 closed forms
    (:meth:`attnlimits.verify.slr.theory.SLRTheory.optimal_population_risk`); ``linear_pure`` identifies only
    m_k m_v: m_k = 1 is taken."""
    from .problem import slr_problem
    from .theory import theory_of

    r = theory_of(slr_problem("spiked", nu, L, activation=name)).optimal_population_risk()
    return r.argmin["m_k"], r.argmin["m_v"]


def informed_overlaps(name: str, *, model: str, nu: float, L, extra=None, n: int = 20_000,
                      generator=0, device="auto") -> dict[str, float]:
    r"""Population-optimal :math:`(m_k, m_v)` used for informed initialisation (docs/slr.md §12),
    with :math:`q_k=m_k^2`, :math:`q_v=m_v^2`.

    * ``softmax``: :math:`m_k=c_\nu`, :math:`m_v=1` (exact, §7); at max-SLR :math:`\nu=\infty`
      the optimum is a limit, :math:`m_k=10` is used;
    * linear variants, spiked-SLR, fixed :math:`L`: the §8 closed forms;
    * otherwise: :math:`m_k` maximising :math:`A^2/B` (with ``extra`` fixed) on a log grid of 25
      points in :math:`[0.05, 20]` followed by a golden-section refinement, common random
      numbers (``n`` projection samples), :math:`m_v=A/B` (the generated ``optimal_value`` kernel). Accuracy about ±0.01 in
      :math:`m_k` (the objective is flat at its maximum).

    Returns ``{"m_k", "m_v", "q_k", "q_v"}``.
    """
    activation_bundle(name)
    nu = check_model(model, nu)
    law = length_law(L)
    if name == "softmax":
        m_k, m_v = (10.0 if math.isinf(nu) else c_nu(model, nu)), 1.0
    elif name.startswith("linear") and model == "spiked" and len(law) == 1:
        m_k, m_v = _linear_spiked_optimum(name, nu, law[0][0])
    else:
        dev = resolve_device(device)
        seed = child_seed(as_generator(generator, dev))

        def ab(m):
            a, b = projection_AB(name, m, m * m, model=model, nu=nu, L=L, n=n,
                                 generator=seeded(seed, dev), extra=extra, batches=4, device=dev)
            return float(a.mean), float(b.mean)

        from .theory import population_module

        optimal_value = population_module().optimal_value  # (m_v*, E*) = (A/B, 1 − A²/B), generated

        def score(m):
            return -optimal_value(*ab(m))[1]

        grid = np.geomspace(0.05, 20.0, 25)
        vals = [score(m) for m in grid]
        j = int(np.argmax(vals))
        lo, hi = grid[max(j - 1, 0)], grid[min(j + 1, len(grid) - 1)]
        phi = (math.sqrt(5) - 1) / 2
        x1, x2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
        f1, f2 = score(x1), score(x2)
        for _ in range(30):
            if f1 > f2:
                hi, x2, f2 = x2, x1, f1
                x1 = hi - phi * (hi - lo)
                f1 = score(x1)
            else:
                lo, x1, f1 = x1, x2, f2
                x2 = lo + phi * (hi - lo)
                f2 = score(x2)
        m_k = 0.5 * (lo + hi)
        m_v = optimal_value(*ab(m_k))[0]
    return {"m_k": float(m_k), "m_v": float(m_v), "q_k": float(m_k) ** 2, "q_v": float(m_v) ** 2}


class _Threads:
    """Context manager: run with ``n`` intra-op CPU threads (``None``: unchanged), then restore."""

    def __init__(self, n: int | None):
        self.n = n
        self.saved = None

    def __enter__(self):
        if self.n is not None:
            self.saved = torch.get_num_threads()
            torch.set_num_threads(int(self.n))
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            torch.set_num_threads(self.saved)
        return False


def _lr_factor(schedule: str, t: int, steps: int, final_ratio: float) -> float:
    if schedule == "constant":
        return 1.0
    if schedule == "cosine":
        return final_ratio + (1 - final_ratio) * 0.5 * (1 + math.cos(math.pi * t / steps))
    if schedule == "step":
        return 1.0 if t < steps // 2 else (0.1 if t < 3 * steps // 4 else 0.01)
    raise ValueError(f"schedule must be 'cosine', 'step' or 'constant', got {schedule!r}")


@dataclass(frozen=True)
class OnlineOptions:
    """How :func:`train_population` starts, steps and measures (every field is described there)."""

    init: str = "informed"
    optimizer: str = "adam"
    extra_init: float | None = None
    learn_extra: bool | None = None
    log_every: int = 100
    schedule: str = "cosine"
    final_lr_ratio: float = 0.01
    final_fraction: float = 0.25
    final_batch_factor: int = 4
    init_scale: float = 0.1
    delta: float = 0.0
    n_test: int = 100_000
    n_overlap: int = 400_000
    threads: int | None = 1
    device: Any = "auto"


def train_population(name: str, *, model: str, nu: float, L, D: int, steps: int, batch: int, lr: float, generator,
                     options: OnlineOptions | None = None, **overrides) -> dict[str, Any]:
    r"""Online (population-level) training of :math:`(k, v)` and the extra scalar.

    Every step draws a fresh batch of sequences (:func:`sample_sequences`, one fixed teacher) and
    takes one optimiser step on the mean squared error :math:`\frac1B\sum_\mu(y_\mu-f(X_\mu))^2`
    (float64, autograd). With infinitely many fresh samples the minimiser is the population
    optimum (§6), which at finite :math:`D` and exactly orthonormal teacher equals the
    :math:`D=\infty` value (claim C5); what remains is the SGD noise floor.

    Parameters
    ----------
    name : str
        Activation variant.
    model, nu, L :
        Data model; ``L`` may be a length law (each step splits the batch multinomially by
        length, §3.4).
    D, steps, batch : int
        Dimension, optimiser steps, sequences per step.
    lr : float
        Peak learning rate (Adam: per-coordinate step; SGD: plain step on the loss).
    generator : torch.Generator or int
        Seeds the teacher, the initialisation, the training stream and the held-out stream
        (four independent child seeds, in that order).
    init : {"informed", "random"}
        Informed: :math:`k=m_kk^*`, :math:`v=m_vv^*` at :func:`informed_overlaps` (docs/slr.md §12),
        computed with the extra scalar fixed at ``extra_init``; for learned extras this reference
        is not the joint optimum, so ``gap_*`` may be negative.
        Random: :math:`k,v\sim\mathcal N(0,\texttt{init\_scale}^2I_D)` (risk ≈ 1 at start).
    optimizer : {"adam", "sgd"}
    extra_init : float, optional
        Initial :math:`c`/:math:`b` (default 0) for variants that have one.
    learn_extra : bool, optional
        Default: True for ``erf_learned`` and ``softplus_norm_bias``, else False.
    schedule : {"cosine", "step", "constant"}
        Learning-rate factor over the steps (cosine from 1 to ``final_lr_ratio``).
    final_fraction, final_batch_factor :
        The last ``final_fraction`` of the steps use ``final_batch_factor × batch`` sequences.
    n_test : int
        Held-out sequences for :func:`direct_risk`.
    n_overlap : int
        Projection samples for :func:`overlap_risk` at the learned overlaps, paired (same seed)
        with the informed optimum overlaps: ``gap_overlaps`` has a small SE.
    options : OnlineOptions, optional
        Every parameter from ``init`` on is a field of :class:`OnlineOptions`; keyword arguments override them.
    threads : int or None, default 1
        Intra-op CPU threads during the training loop (restored afterwards; ``None`` leaves
        PyTorch's setting). Per-step tensors are small (``batch·L·D`` ≈ 3·10⁴–2·10⁵), so a second
        thread gains little, and under CPU contention OpenMP threads slowed the loop 5–8×.
        The held-out estimates run with PyTorch's setting.

    Returns
    -------
    dict
        ``k``, ``v`` (CPU tensors), ``extra`` (float or None), ``overlaps`` (7), ``distance``
        (to the manifold), ``risk`` (held-out :func:`direct_risk`, MCEstimate),
        ``risk_optimum`` (the same held-out sequences at :math:`k=m_kk^*`, :math:`v=m_vv^*` of
        ``optimum``), ``gap_direct`` (paired per-batch difference of the two), ``risk_overlaps``
        (MCEstimate of §6.1 at the learned overlaps), ``gap_overlaps`` (paired MCEstimate of
        risk(learned) − risk(optimum overlaps)), ``optimum`` (informed overlaps),
        ``trace`` (rows ``{step, loss, lr, batch, m_k, q_k, m_v, q_v, extra}``),
        ``time_s`` (training only), ``settings``.

    Cost: ``steps·batch·L·D`` normals plus the backward pass (≈ 1.5× the sampling).
    """
    o = resolve_options(OnlineOptions, options, overrides)
    nu, law, has_extra, learn_extra = _check_online(name, model, nu, L, o)
    dev = resolve_device(o.device)
    gen = as_generator(generator, dev)
    D = int(D)
    seeds = [child_seed(gen) for _ in range(4)]
    run = _OnlineRun(name, model, nu, L, law, D, dev, gen, seeds, has_extra, learn_extra, o)
    run.start()
    trace, time_s = run.train(int(steps), int(batch), lr)
    out = run.evaluate()
    out.update(trace=trace, time_s=time_s, settings={
        "name": name, "model": model, "nu": nu, "L": L if not isinstance(L, Mapping) else dict(L), "D": D,
        "steps": int(steps), "batch": int(batch), "lr": lr, "init": o.init, "optimizer": o.optimizer,
        "schedule": o.schedule, "final_lr_ratio": o.final_lr_ratio, "final_fraction": o.final_fraction,
        "final_batch_factor": o.final_batch_factor, "learn_extra": bool(learn_extra),
        "extra_init": run.extra0 if has_extra else None, "delta": o.delta, "seeds": seeds, "device": str(dev),
        "threads": o.threads, "torch": torch.__version__})
    return out


def _check_online(name, model, nu, L, o: OnlineOptions):
    """Validated (ν, length law, has an extra scalar, learns it) — ValueError on bad input."""
    activation_bundle(name)
    nu = check_model(model, nu)
    law = length_law(L)
    if o.init not in ("informed", "random"):
        raise ValueError(f"init must be 'informed' or 'random', got {o.init!r}")
    if o.optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {o.optimizer!r}")
    _lr_factor(o.schedule, 0, 1, o.final_lr_ratio)
    meta = activation_bundle(name).meta
    has_extra = meta["has_extra"]
    learn_extra = meta["extra_learned"] if o.learn_extra is None else o.learn_extra
    if learn_extra and not has_extra:
        raise ValueError(f"activation {name!r} has no extra scalar to learn")
    return nu, law, has_extra, learn_extra


@dataclass
class _OnlineRun:
    """One online training run: the teacher and start (:meth:`start`, seeds[0] and seeds[1]), the training
    stream (:meth:`train`, seeds[2]) and the held-out measurements (:meth:`evaluate`, seeds[3])."""

    name: str
    model: str
    nu: float
    L: Any
    law: Any
    D: int
    dev: Any
    gen: Any
    seeds: list
    has_extra: bool
    learn_extra: bool
    o: OnlineOptions
    teacher: Any = None
    optimum: Any = None
    k: Any = None
    v: Any = None
    extra_t: Any = None
    extra0: float = 0.0

    def start(self):
        o, dev, gen, D = self.o, self.dev, self.gen, self.D
        self.teacher = make_teacher(D, seeded(self.seeds[0], gen.device), device=dev)
        k_star, v_star = self.teacher
        self.extra0 = float(o.extra_init) if o.extra_init is not None else 0.0
        self.optimum = informed_overlaps(self.name, model=self.model, nu=self.nu, L=self.L,
                                         extra=self.extra0 if self.has_extra else None,
                                         generator=self.seeds[1], device=dev)
        if o.init == "informed":
            k0 = self.optimum["m_k"] * k_star
            v0 = self.optimum["m_v"] * v_star
        else:
            g_init = seeded(self.seeds[1], gen.device)
            k0 = o.init_scale * randn(D, g_init, dev)
            v0 = o.init_scale * randn(D, g_init, dev)
        self.k = k0.clone().requires_grad_(True)
        self.v = v0.clone().requires_grad_(True)
        if self.has_extra:
            self.extra_t = torch.tensor(self.extra0, dtype=DTYPE, device=dev, requires_grad=bool(self.learn_extra))

    def train(self, steps, batch, lr):
        """The optimiser loop: ``(trace, seconds)``."""
        o, dev, law, k, v, extra_t = self.o, self.dev, self.law, self.k, self.v, self.extra_t
        params = [k, v] + ([extra_t] if self.has_extra and self.learn_extra else [])
        opt = (torch.optim.Adam(params, lr=lr) if o.optimizer == "adam" else torch.optim.SGD(params, lr=lr))
        data_gen = seeded(self.seeds[2], self.gen.device)
        probs = torch.tensor([p for _, p in law], dtype=DTYPE, device=self.gen.device)
        root = math.sqrt(self.D)
        final_start = steps - int(round(o.final_fraction * steps))
        trace, window = [], []
        t0 = time.perf_counter()
        with _Threads(o.threads if dev.type == "cpu" else None):
            for t in range(steps):
                factor = _lr_factor(o.schedule, t, steps, o.final_lr_ratio)
                for group in opt.param_groups:
                    group["lr"] = lr * factor
                bsz = batch * (int(o.final_batch_factor) if t >= final_start else 1)
                if len(law) == 1:
                    counts = [bsz]
                else:
                    draws = torch.multinomial(probs, bsz, replacement=True, generator=data_gen)
                    counts = torch.bincount(draws, minlength=len(law)).tolist()
                opt.zero_grad(set_to_none=True)
                loss = torch.zeros((), dtype=DTYPE, device=dev)
                for (length, _), cnt in zip(law, counts):
                    if cnt == 0:
                        continue
                    s = sample_sequences(self.model, self.nu, length, cnt, self.D, generator=data_gen,
                                         teacher=self.teacher, delta=o.delta, device=dev)
                    f = predict_sequences(self.name, s["X"], k, v, extra_t, root)
                    loss = loss + ((s["y"] - f) ** 2).sum()
                loss = loss / bsz
                loss.backward()
                opt.step()
                window.append(float(loss.detach()))
                if (t + 1) % int(o.log_every) == 0 or t + 1 == steps:
                    with torch.no_grad():
                        ov = overlaps(k, v, *self.teacher)
                    trace.append({"step": t + 1, "loss": float(np.mean(window)),
                                  "lr": lr * factor, "batch": bsz, "m_k": ov["m_k"],
                                  "q_k": ov["q_k"], "m_v": ov["m_v"], "q_v": ov["q_v"],
                                  "extra": None if extra_t is None else float(extra_t.detach())})
                    window = []
        return trace, time.perf_counter() - t0

    def evaluate(self) -> dict:
        """Held-out risks of the learned (k, v) and of the informed optimum on the same sequences (paired), and
        the §6.1 risk at the learned and optimum overlaps (paired)."""
        o, dev, gen, name, optimum = self.o, self.dev, self.gen, self.name, self.optimum
        k_star, v_star = self.teacher
        k_f, v_f = self.k.detach(), self.v.detach()
        extra_f = None if self.extra_t is None else float(self.extra_t.detach())
        extra_opt = self.extra0 if self.has_extra else None
        ov = overlaps(k_f, v_f, k_star, v_star)
        test_gen = seeded(self.seeds[3], gen.device)
        test_seed, ov_seed = child_seed(test_gen), child_seed(test_gen)
        dkw = dict(model=self.model, nu=self.nu, L=self.L, n=o.n_test, D=self.D, teacher=self.teacher, device=dev)
        risk = direct_risk(name, k_f, v_f, generator=seeded(test_seed, gen.device), extra=extra_f, **dkw)
        risk_opt = direct_risk(name, optimum["m_k"] * k_star, optimum["m_v"] * v_star,
                               generator=seeded(test_seed, gen.device), extra=extra_opt, **dkw)
        kw = dict(model=self.model, nu=self.nu, L=self.L, n=o.n_overlap, extra=extra_f, device=dev)
        learned = overlap_risk(name, ov, generator=seeded(ov_seed, gen.device), **kw)
        at_opt = overlap_risk(name, optimum, generator=seeded(ov_seed, gen.device), **{**kw, "extra": extra_opt})
        return {"k": k_f.cpu(), "v": v_f.cpu(), "extra": extra_f, "overlaps": ov, "distance": distance_to_manifold(ov),
                "risk": risk, "risk_optimum": risk_opt, "gap_direct": mean_se(risk.samples - risk_opt.samples),
                "risk_overlaps": learned, "gap_overlaps": mean_se(learned.samples - at_opt.samples),
                "optimum": optimum}


