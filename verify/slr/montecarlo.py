r"""Monte Carlo and online training for single-location regression (SLR), in PyTorch.

Spec ``slr.md`` §2–§8, §12–§15. Everything is float64, device ``"auto"`` (CUDA when available,
else CPU), and every random number comes from an explicit :class:`torch.Generator`: each public
function takes ``generator=`` (a generator, or an ``int`` seed from which one is made on the
compute device). Sub-streams (teacher, data, held-out data, each sequence length) are seeded
with integers drawn from that generator, so two calls with equally seeded generators see the
same numbers (common random numbers: differences between parameter values are *paired*).

Model (spec §3)
---------------
Sequences :math:`X=(x_1,\dots,x_L)`, :math:`x_\ell\in\mathbb R^D`; hidden location
:math:`\varepsilon^*` (0-based here: ``eps`` in ``0..L-1``); teacher :math:`\|k^*\|^2=\|v^*\|^2=D`,
:math:`k^*\cdot v^*=0`; projections :math:`\chi^*=Xk^*/\sqrt D`, :math:`z^*=Xv^*/\sqrt D`.

* spiked-SLR: :math:`\varepsilon^*` uniform, :math:`x_{\varepsilon^*}=\sqrt\nu\,k^*/\sqrt D+\mathcal N(0,I_D)`;
* max-SLR: :math:`X` i.i.d. Gaussian, :math:`\varepsilon^*\sim\mathrm{softmax}(\nu\chi^*)`
  (argmax at :math:`\nu=\infty`).

Posterior (§3.5): :math:`p=\mathrm{softmax}(c_\nu\chi^*)`, :math:`c_\nu=\sqrt\nu` (spiked), :math:`\nu` (max).
Predictor (§4): :math:`f(X)=\sigma(\chi)^\top z`, :math:`\chi=Xk/\sqrt D`, :math:`z=Xv/\sqrt D`.
Excess risk (§2): :math:`E=\mathbb E[(z^*_{\varepsilon^*}-f(X))^2]`; population form on the manifold
(§6.2): :math:`E=1-2m_vA+q_vB`.

Cost (2 CPU cores, float64): drawing Gaussians dominates, about 6·10⁷ normals/s, i.e. a
direct-risk estimate costs ``n·L·D`` normals (C5 at 2·10⁵ sequences, L=3, D=500: ≈5 s);
projection estimators cost ``4·n·L`` normals (10⁶ samples at L=3: ≈0.3 s).

References
----------
O. Duranthon, P. Marion, C. Boyer, B. Loureiro, L. Zdeborová, arXiv:2509.21936 ([D]);
P. Marion, R. Berthier, G. Biau, C. Boyer, ICLR 2025, arXiv:2410.01537 ([M]).
"""
from __future__ import annotations

import functools
import math
import time
from typing import Any, Mapping

import numpy as np
import torch

from verify._torchutil import DTYPE, draw_seed, resolve_device
from verify.stats import MCEstimate, mean_se

__all__ = [
    "ACTIVATIONS",
    "NORMALISED_ACTIVATIONS",
    "TRAINING_ALLOWANCE",
    "TRAINING_PRESET",
    "bayes_mc",
    "c_nu",
    "direct_risk",
    "distance_to_manifold",
    "informed_overlaps",
    "make_teacher",
    "overlap_risk",
    "overlaps",
    "posterior_calibration",
    "predecessor_ls_risk",
    "predecessor_manifold_risk_mc",
    "predecessor_sequences",
    "projection_AB",
    "projection_risk",
    "sample_projections",
    "sample_sequences",
    "torch_attention_weights",
    "train_population",
]

#: Activation variants of spec §4, always named in full.
ACTIVATIONS: tuple[str, ...] = (
    "softmax",
    "linear_uncentred",
    "linear_centred",
    "linear_pure",
    "erf_fixed",
    "erf_learned",
    "softplus_norm",
    "softplus_norm_bias",
)
#: Variants whose weights sum to one (length 1 gives σ = 1, §4).
NORMALISED_ACTIVATIONS: tuple[str, ...] = ("softmax", "softplus_norm", "softplus_norm_bias")
#: Variants with an extra scalar (c for erf, b for softplus), §4.
_EXTRA = {"erf_fixed": "c", "erf_learned": "c", "softplus_norm": "b", "softplus_norm_bias": "b"}
#: Variants whose extra scalar is learned by default.
_LEARNED = ("erf_learned", "softplus_norm_bias")
_MODELS = ("spiked", "max")
#: Below this argument log sp(x) is replaced by x (spec §4 "Numerics"; error < e^-30/2).
_SOFTPLUS_LOG_CUT = -30.0
#: Default memory cap of one batch of sequences (float64 entries of X).
_BATCH_ENTRIES = 2**22

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
# argument checking, generators, length laws
# =============================================================================================


def _check_activation(name: str) -> str:
    if name not in ACTIVATIONS:
        hint = ""
        if name in ("linear", "erf", "softplus"):
            hint = f" (a bare {name!r} is ambiguous, spec §2)"
        raise ValueError(f"unknown activation {name!r}{hint}; variants: {', '.join(ACTIVATIONS)}")
    return name


def _check_model(model: str, nu: float) -> float:
    if model not in _MODELS:
        raise ValueError(f"unknown model {model!r}; use 'spiked' or 'max'")
    nu = float(nu)
    if math.isnan(nu) or nu < 0:
        raise ValueError(f"nu must be >= 0, got {nu}")
    if math.isinf(nu) and model != "max":
        raise ValueError("nu = inf is accepted for max-SLR only (spec §2)")
    return nu


def c_nu(model: str, nu: float) -> float:
    r"""Posterior inverse temperature :math:`c_\nu` (spec §3.5): :math:`\sqrt\nu` spiked, :math:`\nu` max."""
    nu = _check_model(model, nu)
    return math.sqrt(nu) if model == "spiked" else nu


def _as_generator(generator, device: torch.device) -> torch.Generator:
    """A :class:`torch.Generator` as given, or one made on ``device`` from an ``int`` seed."""
    if isinstance(generator, torch.Generator):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        g = torch.Generator(device=device)
        g.manual_seed(int(generator))
        return g
    raise TypeError(
        "generator must be a torch.Generator or an int seed (explicit randomness is required), "
        f"got {type(generator).__name__}"
    )


def _child_seed(gen: torch.Generator) -> int:
    """A non-negative 62-bit integer drawn from ``gen`` (seed of an independent sub-stream)."""
    return int(torch.randint(0, 2**62, (1,), generator=gen, device=gen.device).item())


def _seeded(seed: int, device) -> torch.Generator:
    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    return g


def _child(gen: torch.Generator) -> torch.Generator:
    """An independent generator on ``gen``'s device, seeded from ``gen``."""
    return _seeded(_child_seed(gen), gen.device)


def _randn(shape, gen: torch.Generator, dev: torch.device) -> torch.Tensor:
    return torch.randn(shape, generator=gen, dtype=DTYPE, device=gen.device).to(dev)


def _rand(shape, gen: torch.Generator, dev: torch.device) -> torch.Tensor:
    return torch.rand(shape, generator=gen, dtype=DTYPE, device=gen.device).to(dev)


def _randint(high: int, shape, gen: torch.Generator, dev: torch.device) -> torch.Tensor:
    return torch.randint(0, high, shape, generator=gen, device=gen.device).to(dev)


def _length_law(L) -> list[tuple[int, float]]:
    """``int`` → ``[(L, 1.0)]``; ``{L: prob}`` → sorted ``[(L, prob)]`` (probabilities sum to 1)."""
    if isinstance(L, Mapping):
        items = []
        for length, prob in L.items():
            length_i = int(length)
            if length_i != length or length_i < 1:
                raise ValueError(f"lengths must be positive integers, got {length!r}")
            prob_f = float(prob)
            if not prob_f >= 0:
                raise ValueError(f"probabilities must be >= 0, got {prob!r}")
            if prob_f > 0:
                items.append((length_i, prob_f))
        total = sum(p for _, p in items)
        if not items or abs(total - 1.0) > 1e-9:
            raise ValueError(f"length law must have probabilities summing to 1, got {dict(L)}")
        return sorted(items)
    length_i = int(L)
    if length_i != L or length_i < 1:
        raise ValueError(f"L must be a positive integer or a dict {{L: prob}}, got {L!r}")
    return [(length_i, 1.0)]


def _single_length(L) -> int:
    """A single positive integer length (length laws are refused with a clear message)."""
    if isinstance(L, Mapping):
        raise ValueError("this function takes one length; group variable lengths by L (§3.4)")
    return _length_law(L)[0][0]


def _per_length_generators(gen: torch.Generator, law) -> dict[int, torch.Generator]:
    """Common random numbers per length (spec §3.4): one base seed drawn from ``gen``, then the
    stream of length ``L`` is seeded with ``draw_seed(base, L)``."""
    base = _child_seed(gen)
    return {length: _seeded(draw_seed(base, length), gen.device) for length, _ in law}


def _combine(law, per_length: dict[int, np.ndarray]) -> np.ndarray:
    """``Σ_L P(L)·samples_L`` (equal numbers of batches per length, so samples pair up)."""
    return sum(prob * per_length[length] for length, prob in law)


def _as_tensor(x, dev) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.detach().to(device=dev, dtype=DTYPE)
    return torch.as_tensor(np.asarray(x, dtype=float), dtype=DTYPE, device=dev)


def _batches(n: int, batch: int) -> tuple[int, int]:
    """``(number of batches, batch size)`` covering at least ``n`` samples."""
    n, batch = int(n), int(batch)
    if n < 1 or batch < 1:
        raise ValueError(f"n and batch must be positive, got {n}, {batch}")
    batch = min(batch, n)
    return -(-n // batch), batch


# =============================================================================================
# activations (spec §4)
# =============================================================================================


def _log_softplus(x: torch.Tensor) -> torch.Tensor:
    """:math:`\\log\\mathrm{sp}(x)=\\log\\log(1+e^x)`, stable: ``x`` below −30, else
    ``log(max(x,0) + log1p(exp(−|x|)))``; gradients stay finite everywhere."""
    xs = torch.clamp(x, min=_SOFTPLUS_LOG_CUT)
    sp = torch.clamp(xs, min=0.0) + torch.log1p(torch.exp(-torch.abs(xs)))
    return torch.where(x < _SOFTPLUS_LOG_CUT, x, torch.log(sp))


def torch_attention_weights(name: str, chi: torch.Tensor, extra=None) -> torch.Tensor:
    r"""Attention weights :math:`\sigma(\chi)` along the last dimension (spec §4).

    Parameters
    ----------
    name : str
        One of :data:`ACTIVATIONS`; a bare ``"linear"``, ``"erf"`` or ``"softplus"`` is refused.
    chi : Tensor (..., L)
        Key projections :math:`\chi=Xk/\sqrt D`.
    extra : float or Tensor, optional
        The scalar :math:`c` (erf variants) or :math:`b` (softplus variants), default 0. May be
        a 0-d tensor that requires grad (learned scalars). Refused for variants without one.

    Returns
    -------
    Tensor (..., L)

    Notes
    -----
    ======================  =====================================================================
    ``softmax``             :math:`e^{\chi_\ell-\mathrm{lse}(\chi)}` (log-sum-exp)
    ``linear_uncentred``    :math:`1+\chi_\ell`
    ``linear_centred``      :math:`1+\chi_\ell-\bar\chi`
    ``linear_pure``         :math:`\chi_\ell`
    ``erf_*``               :math:`1+\mathrm{erf}(c+\chi_\ell)=\mathrm{erfc}(-c-\chi_\ell)`
    ``softplus_norm*``      :math:`\exp(\ell_\ell-\mathrm{lse}(\ell))`, :math:`\ell=\log\mathrm{sp}(\chi+b)`
    ======================  =====================================================================

    Cost: O(size of ``chi``).
    """
    _check_activation(name)
    if extra is not None and name not in _EXTRA:
        raise ValueError(f"activation {name!r} takes no extra scalar (got extra={extra!r})")
    e = 0.0 if extra is None else extra
    if name == "softmax":
        return torch.exp(chi - torch.logsumexp(chi, dim=-1, keepdim=True))
    if name == "linear_uncentred":
        return 1.0 + chi
    if name == "linear_centred":
        return 1.0 + chi - chi.mean(dim=-1, keepdim=True)
    if name == "linear_pure":
        return chi
    if name in ("erf_fixed", "erf_learned"):
        return torch.special.erfc(-(chi + e))
    logs = _log_softplus(chi + e)
    return torch.exp(logs - torch.logsumexp(logs, dim=-1, keepdim=True))


# =============================================================================================
# samplers (spec §2, §3.6)
# =============================================================================================


def _posterior(model: str, nu: float, chi_star: torch.Tensor) -> torch.Tensor:
    """:math:`p=\\mathrm{softmax}(c_\\nu\\chi^*)`; one-hot argmax at max-SLR :math:`\\nu=\\infty`."""
    if math.isinf(nu):
        idx = chi_star.argmax(dim=-1)
        return torch.nn.functional.one_hot(idx, chi_star.shape[-1]).to(chi_star.dtype)
    return torch.softmax(c_nu(model, nu) * chi_star, dim=-1)


def _draw_max_location(nu: float, chi_star, gen, dev) -> torch.Tensor:
    """ε* ~ Categorical(softmax(ν χ*)) by inverse CDF (one uniform per sample); argmax at ν=∞."""
    if math.isinf(nu):
        return chi_star.argmax(dim=-1)
    p = torch.softmax(nu * chi_star, dim=-1)
    u = _rand((chi_star.shape[0], 1), gen, dev)
    eps = (torch.cumsum(p, dim=-1) < u).sum(dim=-1)
    return torch.clamp(eps, max=chi_star.shape[-1] - 1)


def sample_projections(model: str, nu: float, L: int, n: int, *, generator, device="auto",
                       location: str = "sample") -> dict[str, torch.Tensor]:
    r"""Population projection sampler (spec §3.6).

    Draws, in this order: :math:`g\sim\mathcal N(0,I_L)` per sample; the location; then
    :math:`z^*`, :math:`\eta`, :math:`\eta'` i.i.d. :math:`\mathcal N(0,I_L)`.

    * spiked: :math:`\varepsilon^*` uniform (or 0 with ``location="first"``; every listed
      activation is permutation-equivariant), :math:`\chi^*=g+\sqrt\nu\,e_{\varepsilon^*}`;
    * max: :math:`\chi^*=g`, :math:`\varepsilon^*\sim\mathrm{Categorical}(\mathrm{softmax}(\nu\chi^*))`
      (inverse CDF), argmax at :math:`\nu=\infty`.

    Parameters
    ----------
    model : {"spiked", "max"}
    nu : float
        Spike strength; ``math.inf`` for max-SLR only.
    L, n : int
        Sequence length and number of samples.
    generator : torch.Generator or int
    device : str, default "auto"
    location : {"sample", "first"}
        ``"first"`` fixes :math:`\varepsilon^*=0` (spiked only).

    Returns
    -------
    dict
        ``eps`` (n,) int64 (0-based), ``chi_star``, ``z_star``, ``eta``, ``eta_prime`` (n, L)
        float64, and ``posterior`` (n, L) :math:`=\mathrm{softmax}(c_\nu\chi^*)` (one-hot argmax
        at :math:`\nu=\infty`).

    Cost: ``4nL`` normals (+ n uniforms or integers).
    """
    nu = _check_model(model, nu)
    length = _single_length(L)
    n = int(n)
    if location not in ("sample", "first"):
        raise ValueError(f"location must be 'sample' or 'first', got {location!r}")
    if location == "first" and model != "spiked":
        raise ValueError("location='first' is valid for spiked-SLR only")
    dev = resolve_device(device)
    gen = _as_generator(generator, dev)
    chi_star = _randn((n, length), gen, dev)
    if model == "spiked":
        if location == "sample":
            eps = _randint(length, (n,), gen, dev)
        else:
            eps = torch.zeros(n, dtype=torch.long, device=dev)
        chi_star[torch.arange(n, device=dev), eps] += math.sqrt(nu)
    else:
        eps = _draw_max_location(nu, chi_star, gen, dev)
    z_star = _randn((n, length), gen, dev)
    eta = _randn((n, length), gen, dev)
    eta_prime = _randn((n, length), gen, dev)
    return {
        "eps": eps,
        "chi_star": chi_star,
        "z_star": z_star,
        "eta": eta,
        "eta_prime": eta_prime,
        "posterior": _posterior(model, nu, chi_star),
    }


def make_teacher(D: int, generator, device="auto") -> tuple[torch.Tensor, torch.Tensor]:
    r"""Teacher :math:`(k^*,v^*)` of spec §2: Gaussian, Gram–Schmidt, rescaled to norm :math:`\sqrt D`.

    :math:`k^*=\sqrt D\,a/\|a\|`; :math:`b\leftarrow b-(b\cdot\hat k)\hat k` applied twice
    (re-orthogonalisation), :math:`v^*=\sqrt D\,b/\|b\|`. Hence :math:`\|k^*\|^2=\|v^*\|^2=D` and
    :math:`k^*\cdot v^*=0` to float64 round-off (:math:`|k^*\cdot v^*|/D\lesssim10^{-16}`).
    Cost: ``2D`` normals.
    """
    D = int(D)
    if D < 2:
        raise ValueError(f"the teacher needs D >= 2, got {D}")
    dev = resolve_device(device)
    gen = _as_generator(generator, dev)
    a = _randn(D, gen, dev)
    b = _randn(D, gen, dev)
    k_hat = a / torch.linalg.vector_norm(a)
    for _ in range(2):
        b = b - (b @ k_hat) * k_hat
    v_hat = b / torch.linalg.vector_norm(b)
    v_hat = v_hat - (v_hat @ k_hat) * k_hat
    v_hat = v_hat / torch.linalg.vector_norm(v_hat)
    root = math.sqrt(D)
    return root * k_hat, root * v_hat


def sample_sequences(model: str, nu: float, L: int, n: int, D: int, *, generator, teacher=None,
                     delta: float = 0.0, device="auto") -> dict[str, torch.Tensor]:
    r"""Finite-:math:`D` sequence sampler (spec §3.6).

    Draw order: the teacher (only if ``teacher`` is None, via :func:`make_teacher`), then
    :math:`X` i.i.d. :math:`\mathcal N(0,1)` of shape (n, L, D), then the location (spiked:
    uniform, and :math:`\sqrt\nu\,k^*/\sqrt D` is added to token :math:`\varepsilon^*`; max:
    :math:`\chi^*=Xk^*/\sqrt D` first, then :math:`\varepsilon^*\sim\mathrm{softmax}(\nu\chi^*)`),
    then the label noise :math:`\xi` (always drawn, so ``delta`` does not shift the stream);
    :math:`y=z^*_{\varepsilon^*}+\Delta\xi`.

    Returns
    -------
    dict
        ``X`` (n, L, D), ``eps`` (n,) 0-based, ``y`` (n,), ``chi_star``, ``z_star`` (n, L),
        ``k_star``, ``v_star`` (D,).

    Cost: ``nLD`` normals (≈ 6·10⁷/s on 2 CPU cores) and two (nL × D) matrix–vector products.
    """
    nu = _check_model(model, nu)
    length = _single_length(L)
    n, D = int(n), int(D)
    dev = resolve_device(device)
    gen = _as_generator(generator, dev)
    if teacher is None:
        k_star, v_star = make_teacher(D, gen, device=dev)
    else:
        k_star, v_star = (_as_tensor(t, dev) for t in teacher)
        if k_star.shape != (D,) or v_star.shape != (D,):
            raise ValueError(f"teacher vectors must have shape ({D},)")
    root = math.sqrt(D)
    X = _randn((n, length, D), gen, dev)
    rows = torch.arange(n, device=dev)
    if model == "spiked":
        eps = _randint(length, (n,), gen, dev)
        X[rows, eps] += (math.sqrt(nu) / root) * k_star
        chi_star = X @ k_star / root
    else:
        chi_star = X @ k_star / root
        eps = _draw_max_location(nu, chi_star, gen, dev)
    z_star = X @ v_star / root
    xi = _randn(n, gen, dev)
    y = z_star[rows, eps] + float(delta) * xi
    return {"X": X, "eps": eps, "y": y, "chi_star": chi_star, "z_star": z_star,
            "k_star": k_star, "v_star": v_star}


def overlaps(k, v, k_star, v_star) -> dict[str, float]:
    r"""The seven overlaps of spec §5, all divided by :math:`D`.

    ``m_k`` :math:`=k\cdot k^*/D`, ``m_v`` :math:`=v\cdot v^*/D`, ``q_k`` :math:`=\|k\|^2/D`,
    ``q_v`` :math:`=\|v\|^2/D`, ``m_kvstar`` :math:`=k\cdot v^*/D`, ``m_vkstar`` :math:`=v\cdot k^*/D`,
    ``q_kv`` :math:`=k\cdot v/D`. Inputs: tensors or arrays of shape (D,).
    """
    k, v, ks, vs = (_as_tensor(t, "cpu") for t in (k, v, k_star, v_star))
    D = k.numel()
    return {
        "m_k": float(k @ ks) / D,
        "m_v": float(v @ vs) / D,
        "q_k": float(k @ k) / D,
        "q_v": float(v @ v) / D,
        "m_kvstar": float(k @ vs) / D,
        "m_vkstar": float(v @ ks) / D,
        "q_kv": float(k @ v) / D,
    }


def distance_to_manifold(ov: Mapping[str, float]) -> float:
    r""":math:`\sqrt{m_{kv^*}^2+m_{vk^*}^2+q_{kv}^2}` (spec §12 report)."""
    return math.sqrt(ov["m_kvstar"] ** 2 + ov["m_vkstar"] ** 2 + ov["q_kv"] ** 2)


# =============================================================================================
# direct finite-D risk (spec §2, §6.1, claim C5)
# =============================================================================================


def _predict(name, X, k, v, extra, root):
    chi = X @ k / root
    z = X @ v / root
    return (torch_attention_weights(name, chi, extra) * z).sum(dim=-1)


def direct_risk(name: str, k, v, *, model: str, nu: float, L, n: int, D: int, generator,
                teacher, extra=None, batch: int | None = None, metric: str = "excess",
                delta: float = 0.0, device="auto") -> MCEstimate:
    r"""Direct Monte Carlo risk of the predictor :math:`(k,v)` on finite-:math:`D` sequences.

    .. math::

        E=\mathbb E\big[(z^*_{\varepsilon^*}-\sigma(Xk/\sqrt D)^\top(Xv/\sqrt D))^2\big]
        \quad(+\Delta^2\text{ under }\texttt{metric="noisy"})

    (spec §2, §6.1). Exactly equal, at any :math:`D`, to the overlap formula of §6.1 when the
    teacher is exactly orthonormal (claim C5).

    Parameters
    ----------
    name : str
        Activation variant (:data:`ACTIVATIONS`).
    k, v : array_like or Tensor (D,)
    model, nu :
        Data model (§3).
    L : int or dict
        Length, or a law ``{L: prob}``; then the :math:`P(L)`-weighted mean of per-length
        estimates with common random numbers per length (§3.4), batches paired across lengths.
    n : int
        Sequences per length (rounded up to a whole number of batches).
    D : int
    generator : torch.Generator or int
    teacher : (k_star, v_star)
        Required (the risk is defined relative to a fixed teacher).
    extra : float, optional
        :math:`c` or :math:`b`.
    batch : int, optional
        Sequences per batch; default ``min(ceil(n/20), 2**22 // (L_max D))`` (≥ 20 batches,
        ≤ 32 MB per batch).
    metric : {"excess", "noisy"}
        ``noisy`` adds :math:`\Delta^2` exactly (``delta``); the target is always noise-free.

    Returns
    -------
    MCEstimate
        Mean and SE over batches (per-batch mean squared errors).

    Cost: ``n·Σ_L L·D`` normals.
    """
    _check_activation(name)
    nu = _check_model(model, nu)
    if metric not in ("excess", "noisy"):
        raise ValueError(f"metric must be 'excess' or 'noisy', got {metric!r}")
    law = _length_law(L)
    dev = resolve_device(device)
    gen = _as_generator(generator, dev)
    D = int(D)
    k_t, v_t = _as_tensor(k, dev), _as_tensor(v, dev)
    teacher = tuple(_as_tensor(t, dev) for t in teacher)
    if k_t.shape != (D,) or v_t.shape != (D,):
        raise ValueError(f"k and v must have shape ({D},)")
    l_max = max(length for length, _ in law)
    if batch is None:
        batch = max(1, min(-(-int(n) // 20), _BATCH_ENTRIES // (l_max * D)))
    nb, bs = _batches(n, batch)
    gens = _per_length_generators(gen, law)
    root = math.sqrt(D)
    per_length = {}
    with torch.no_grad():
        for length, _ in law:
            vals = np.empty(nb)
            for i in range(nb):
                s = sample_sequences(model, nu, length, bs, D, generator=gens[length],
                                     teacher=teacher, device=dev)
                f = _predict(name, s["X"], k_t, v_t, extra, root)
                target = s["z_star"][torch.arange(bs, device=dev), s["eps"]]
                vals[i] = float(((target - f) ** 2).mean())
            per_length[length] = vals
    samples = _combine(law, per_length)
    if metric == "noisy":
        samples = samples + float(delta) ** 2
    return mean_se(samples)


# =============================================================================================
# population (projection) estimators (spec §6)
# =============================================================================================


def _projection_batches(law, gen, n, batches, model, nu, dev, fn):
    """Run ``fn(proj) -> tuple of per-batch scalars`` over ``batches`` batches per length with
    common random numbers per length; return P(L)-combined per-batch arrays (one per output)."""
    nb, bs = _batches(n, -(-int(n) // int(batches)))
    gens = _per_length_generators(gen, law)
    per_length: list[dict[int, np.ndarray]] = []
    with torch.no_grad():
        for length, _ in law:
            rows = []
            for _ in range(nb):
                proj = sample_projections(model, nu, length, bs, generator=gens[length], device=dev)
                rows.append([float(x) for x in fn(proj)])
            arr = np.asarray(rows)
            if not per_length:
                per_length = [dict() for _ in range(arr.shape[1])]
            for j in range(arr.shape[1]):
                per_length[j][length] = arr[:, j]
    return [_combine(law, d) for d in per_length]


def _ab_samples(name, m_k, q_k, *, model, nu, L, n, generator, extra, batches, device):
    _check_activation(name)
    nu = _check_model(model, nu)
    m_k, q_k = float(m_k), float(q_k)
    var = q_k - m_k**2
    if var < -1e-12 * max(1.0, q_k):
        raise ValueError(f"need q_k >= m_k^2, got m_k={m_k}, q_k={q_k}")
    s_k = math.sqrt(max(var, 0.0))
    law = _length_law(L)
    dev = resolve_device(device)
    gen = _as_generator(generator, dev)

    def fn(proj):
        chi = m_k * proj["chi_star"] + s_k * proj["eta"]
        sig = torch_attention_weights(name, chi, extra)
        rows = torch.arange(sig.shape[0], device=sig.device)
        return sig[rows, proj["eps"]].mean(), (sig**2).sum(dim=-1).mean()

    return _projection_batches(law, gen, n, batches, model, nu, dev, fn)


def projection_AB(name: str, m_k: float, q_k: float, *, model: str, nu: float, L, n: int,
                  generator, extra=None, batches: int = 20,
                  device="auto") -> tuple[MCEstimate, MCEstimate]:
    r"""Monte Carlo of :math:`A=\mathbb E[\sigma(\chi)_{\varepsilon^*}]` and :math:`B=\mathbb E\|\sigma(\chi)\|^2`
    on the manifold (spec §6.2), :math:`\chi=m_k\chi^*+\sqrt{q_k-m_k^2}\,\eta`.

    ``L`` may be a length law (then :math:`A=\sum_LP(L)A_L`, same for :math:`B`, common random
    numbers per length). Mean and SE over ``batches`` batches of ``ceil(n/batches)`` samples.
    Cost: ``4nL`` normals per length.
    """
    a, b = _ab_samples(name, m_k, q_k, model=model, nu=nu, L=L, n=n, generator=generator,
                       extra=extra, batches=batches, device=device)
    return mean_se(a), mean_se(b)


def projection_risk(name: str, m_k: float, q_k: float, m_v: float, q_v: float, *, model: str,
                    nu: float, L, n: int, generator, extra=None, batches: int = 20,
                    device="auto") -> MCEstimate:
    r"""On-manifold population risk :math:`E=1-2m_vA+q_vB` (spec §6.2) with its SE from the
    per-batch values of :math:`(A,B)` (paired, so the SE includes their covariance).
    Same arguments and cost as :func:`projection_AB`."""
    a, b = _ab_samples(name, m_k, q_k, model=model, nu=nu, L=L, n=n, generator=generator,
                       extra=extra, batches=batches, device=device)
    return mean_se(_manifold_risk()(float(m_v), float(q_v), a, b))


@functools.lru_cache(maxsize=1)
def _manifold_risk():
    """The §6.2 risk 1 − 2m_vA + q_vB, generated from :func:`derivations.slr.risk_on_manifold`."""
    import sympy as sp

    from derivations import slr as S

    return sp.lambdify((S.m_v, S.q_v, S.A_sym, S.B_sym), S.risk_on_manifold(), "numpy")


def overlap_risk(name: str, ov: Mapping[str, float], *, model: str, nu: float, L, n: int,
                 generator, extra=None, batches: int = 20, device="auto") -> MCEstimate:
    r"""General population risk from all seven overlaps (spec §6.1).

    .. math::

        \chi_\ell=m_k\chi^*_\ell+m_{kv^*}z^*_\ell+a_\ell,\qquad
        z_\ell=m_{vk^*}\chi^*_\ell+m_vz^*_\ell+b_\ell,

    :math:`(a,b)` centred Gaussian, :math:`\mathrm{Var}\,a=q_k-m_k^2-m_{kv^*}^2`,
    :math:`\mathrm{Var}\,b=q_v-m_{vk^*}^2-m_v^2`, :math:`\mathrm{Cov}=q_{kv}-m_km_{vk^*}-m_{kv^*}m_v`
    (built from :math:`\eta,\eta'`); :math:`E=\mathbb E(z^*_{\varepsilon^*}-\sigma(\chi)^\top z)^2`.
    Missing cross overlaps default to 0 (the manifold). Overlaps making the covariance
    indefinite (beyond round-off) raise ``ValueError``. Cost: ``4nL`` normals per length.
    """
    _check_activation(name)
    nu = _check_model(model, nu)
    g = {key: float(ov.get(key, 0.0)) for key in ("m_kvstar", "m_vkstar", "q_kv")}
    m_k, q_k, m_v, q_v = (float(ov[key]) for key in ("m_k", "q_k", "m_v", "q_v"))
    var_a = q_k - m_k**2 - g["m_kvstar"] ** 2
    var_b = q_v - g["m_vkstar"] ** 2 - m_v**2
    cov = g["q_kv"] - m_k * g["m_vkstar"] - g["m_kvstar"] * m_v
    tol = 1e-10 * max(1.0, q_k, q_v)
    if var_a < -tol or var_b < -tol or var_a * var_b - cov**2 < -tol * max(1.0, q_k * q_v):
        raise ValueError(f"overlaps give an indefinite covariance: {dict(ov)}")
    var_a, var_b = max(var_a, 0.0), max(var_b, 0.0)
    s_a = math.sqrt(var_a)
    c_ab = cov / s_a if s_a > 0 else 0.0
    s_b = math.sqrt(max(var_b - c_ab**2, 0.0))
    law = _length_law(L)
    dev = resolve_device(device)
    gen = _as_generator(generator, dev)

    def fn(proj):
        cs, zs, eta, eta2 = proj["chi_star"], proj["z_star"], proj["eta"], proj["eta_prime"]
        chi = m_k * cs + g["m_kvstar"] * zs + s_a * eta
        z = g["m_vkstar"] * cs + m_v * zs + c_ab * eta + s_b * eta2
        f = (torch_attention_weights(name, chi, extra) * z).sum(dim=-1)
        rows = torch.arange(cs.shape[0], device=cs.device)
        return (((zs[rows, proj["eps"]] - f) ** 2).mean(),)

    (samples,) = _projection_batches(law, gen, n, batches, model, nu, dev, fn)
    return mean_se(samples)


# =============================================================================================
# Bayes (spec §7, claims C2, C3, C8) and calibration (§3.5, claim C1)
# =============================================================================================


def bayes_mc(model: str, nu: float, L, n: int, generator, *, batches: int = 20,
             device="auto") -> dict[str, MCEstimate]:
    r"""Monte Carlo of the Bayes quantities (spec §7, §8; claims C2, C3, C8, C23).

    With :math:`p=\mathrm{softmax}(c_\nu\chi^*)` from :func:`sample_projections`:

    ===================  ===================================================================
    ``p_true``           :math:`\mathbb E\,p_{\varepsilon^*}`
    ``p_sq``             :math:`\mathbb E\|p\|^2`
    ``p_max``            :math:`\mathbb E\max_\ell p_\ell`
    ``argmax_freq``      :math:`P(\varepsilon^*=\arg\max_\ell p_\ell)`
    ``chi_true``         :math:`\mathbb E\chi^*_{\varepsilon^*}` (:math:`\mu_L(\nu)` at max-SLR;
                         :math:`\sqrt\nu` at spiked)
    ``bayes_risk``       :math:`1-\mathbb E\,p_{\varepsilon^*}`
    ``bayes_risk_nishimori``  :math:`1-\mathbb E\|p\|^2`
    ``nishimori_diff``   paired :math:`\mathbb E[p_{\varepsilon^*}-\|p\|^2]` (Nishimori: 0)
    ``stein_diff``       max-SLR, finite ν only: paired
                         :math:`\mathbb E[\chi^*_{\varepsilon^*}-\nu(1-\|p\|^2)]` (Stein: 0)
    ===================  ===================================================================

    ``L`` may be a length law (weighted per-length estimates, common random numbers per
    length). Mean and SE over ``batches`` batches. Cost: ``4nL`` normals (10⁶ samples at L=3
    in ≈ 0.3 s on 2 CPU cores).
    """
    nu = _check_model(model, nu)
    law = _length_law(L)
    dev = resolve_device(device)
    gen = _as_generator(generator, dev)
    stein = model == "max" and not math.isinf(nu)

    def fn(proj):
        p, eps, cs = proj["posterior"], proj["eps"], proj["chi_star"]
        rows = torch.arange(p.shape[0], device=p.device)
        p_true = p[rows, eps]
        p_sq = (p**2).sum(dim=-1)
        chi_true = cs[rows, eps]
        out = [p_true.mean(), p_sq.mean(), p.max(dim=-1).values.mean(),
               (p.argmax(dim=-1) == eps).to(DTYPE).mean(), chi_true.mean()]
        if stein:
            out.append((chi_true - nu * (1.0 - p_sq)).mean())
        return out

    cols = _projection_batches(law, gen, n, batches, model, nu, dev, fn)
    p_true, p_sq, p_max, hit, chi_true = cols[:5]
    out = {
        "p_true": mean_se(p_true),
        "p_sq": mean_se(p_sq),
        "p_max": mean_se(p_max),
        "argmax_freq": mean_se(hit),
        "chi_true": mean_se(chi_true),
        "bayes_risk": mean_se(1.0 - p_true),
        "bayes_risk_nishimori": mean_se(1.0 - p_sq),
        "nishimori_diff": mean_se(p_true - p_sq),
    }
    if stein:
        out["stein_diff"] = mean_se(cols[5])
    return out


def posterior_calibration(model: str, nu: float, L: int, n: int, D: int, generator,
                          bins: int = 10, *, batch: int | None = None,
                          device="auto") -> dict[str, Any]:
    r"""Posterior = softmax check on finite-:math:`D` sequences (spec §3.5, claim C1).

    A teacher is drawn (:func:`make_teacher`, exactly orthonormalised), sequences from
    :func:`sample_sequences`; from :math:`X` and :math:`k^*` alone, :math:`\chi^*=Xk^*/\sqrt D` and
    :math:`p=\mathrm{softmax}(c_\nu\chi^*)`. If :math:`p` is the posterior then
    :math:`P(\varepsilon^*=\arg\max p)=\mathbb E\max_\ell p_\ell` and, for every bin of :math:`p_\ell`
    values, the frequency of :math:`\ell=\varepsilon^*` matches the mean :math:`p_\ell`.

    Returns
    -------
    dict
        ``argmax_freq``, ``mean_max_p``, ``difference`` (paired per batch): MCEstimates;
        ``table``: one dict per non-empty bin ``{lo, hi, count, mean_p, freq, se, z}``
        (``se`` binomial :math:`\sqrt{f(1-f)/\mathrm{count}}`, ``z=(freq-mean_p)/se``);
        ``max_abs_z``; ``teacher_check`` ``{norm_k: ‖k*‖²/D−1, norm_v, kv: k*·v*/D}``;
        ``n`` (sequences used).

    Cost: ``nLD`` normals (C1 size, n=2·10⁴, L=3, D=500: ≈ 0.6 s).
    """
    nu = _check_model(model, nu)
    length = _single_length(L)
    dev = resolve_device(device)
    gen = _as_generator(generator, dev)
    D = int(D)
    teacher = make_teacher(D, _child(gen), device=dev)
    data_gen = _child(gen)
    if batch is None:
        batch = max(1, min(-(-int(n) // 20), _BATCH_ENTRIES // (length * D)))
    nb, bs = _batches(n, batch)
    root = math.sqrt(D)
    k_star = teacher[0]
    hits, pmax = np.empty(nb), np.empty(nb)
    all_p, all_hit = [], []
    with torch.no_grad():
        for i in range(nb):
            s = sample_sequences(model, nu, length, bs, D, generator=data_gen, teacher=teacher,
                                 device=dev)
            chi_star = s["X"] @ k_star / root  # recomputed from X and k* alone
            p = _posterior(model, nu, chi_star)
            eps = s["eps"]
            hits[i] = float((p.argmax(dim=-1) == eps).to(DTYPE).mean())
            pmax[i] = float(p.max(dim=-1).values.mean())
            all_p.append(p.reshape(-1).cpu())
            all_hit.append(torch.nn.functional.one_hot(eps, length).to(DTYPE).reshape(-1).cpu())
    pv = torch.cat(all_p).numpy()
    hv = torch.cat(all_hit).numpy()
    edges = np.linspace(0.0, 1.0, int(bins) + 1)
    idx = np.clip(np.searchsorted(edges, pv, side="right") - 1, 0, int(bins) - 1)
    table = []
    for j in range(int(bins)):
        mask = idx == j
        count = int(mask.sum())
        if count == 0:
            continue
        mp, fr = float(pv[mask].mean()), float(hv[mask].mean())
        se = math.sqrt(max(fr * (1 - fr), 0.0) / count)
        z = (fr - mp) / se if se > 0 else (0.0 if fr == mp else math.inf)
        table.append({"lo": float(edges[j]), "hi": float(edges[j + 1]), "count": count,
                      "mean_p": mp, "freq": fr, "se": se, "z": z})
    kk, vv = teacher
    return {
        "argmax_freq": mean_se(hits),
        "mean_max_p": mean_se(pmax),
        "difference": mean_se(hits - pmax),
        "table": table,
        "max_abs_z": max(abs(r["z"]) for r in table),
        "teacher_check": {"norm_k": float(kk @ kk) / D - 1.0, "norm_v": float(vv @ vv) / D - 1.0,
                          "kv": float(kk @ vv) / D},
        "n": nb * bs,
    }


# =============================================================================================
# online training (population level)
# =============================================================================================


def _linear_spiked_optimum(name: str, nu: float, L: int) -> tuple[float, float]:
    """(m_k, m_v) at the optimum of a linear variant, spiked-SLR: the closed forms derived in
    :func:`derivations.slr.linear_closed_form` (spec §8), evaluated; m_v = A/B.
    ``linear_pure`` identifies only m_k m_v: m_k = 1 is taken."""
    import sympy as sp

    from derivations import slr as S

    if L == 1:
        d = S.linear_closed_form_varlen(name, "spiked", {1: 1}, nu_value=sp.nsimplify(nu))
        sub = {}
    else:
        d = S.linear_closed_form(name, "spiked")
        sub = {S.L: L, S.nu: float(nu)}
    m = 1.0 if d["argmin_m_k"] is None else float(sp.sympify(d["argmin_m_k"]).subs(sub))
    a = float(sp.sympify(d["A"]).subs(sub).subs(S.m, m))
    b = float(sp.sympify(d["B"]).subs(sub).subs(S.m, m))
    return m, a / b


def informed_overlaps(name: str, *, model: str, nu: float, L, extra=None, n: int = 20_000,
                      generator=0, device="auto") -> dict[str, float]:
    r"""Population-optimal :math:`(m_k, m_v)` used for informed initialisation (spec §12),
    with :math:`q_k=m_k^2`, :math:`q_v=m_v^2`.

    * ``softmax``: :math:`m_k=c_\nu`, :math:`m_v=1` (exact, §7); at max-SLR :math:`\nu=\infty`
      the optimum is a limit, :math:`m_k=10` is used;
    * linear variants, spiked-SLR, fixed :math:`L`: the §8 closed forms;
    * otherwise: :math:`m_k` maximising :math:`A^2/B` (with ``extra`` fixed) on a log grid of 25
      points in :math:`[0.05, 20]` followed by a golden-section refinement, common random
      numbers (``n`` projection samples), :math:`m_v=A/B`. Accuracy about ±0.01 in
      :math:`m_k` (the objective is flat at its maximum).

    Returns ``{"m_k", "m_v", "q_k", "q_v"}``.
    """
    _check_activation(name)
    nu = _check_model(model, nu)
    law = _length_law(L)
    if name == "softmax":
        m_k, m_v = (10.0 if math.isinf(nu) else c_nu(model, nu)), 1.0
    elif name.startswith("linear") and model == "spiked" and len(law) == 1:
        m_k, m_v = _linear_spiked_optimum(name, nu, law[0][0])
    else:
        dev = resolve_device(device)
        seed = _child_seed(_as_generator(generator, dev))

        def ab(m):
            a, b = projection_AB(name, m, m * m, model=model, nu=nu, L=L, n=n,
                                 generator=_seeded(seed, dev), extra=extra, batches=4, device=dev)
            return float(a.mean), float(b.mean)

        def score(m):
            a, b = ab(m)
            return a * a / b

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
        a, b = ab(m_k)
        m_v = a / b
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


def train_population(name: str, *, model: str, nu: float, L, D: int, steps: int, batch: int,
                     lr: float, generator, init: str = "informed", optimizer: str = "adam",
                     extra_init=None, learn_extra: bool | None = None, log_every: int = 100,
                     schedule: str = "cosine", final_lr_ratio: float = 0.01,
                     final_fraction: float = 0.25, final_batch_factor: int = 4,
                     init_scale: float = 0.1, delta: float = 0.0, n_test: int = 100_000,
                     n_overlap: int = 400_000, threads: int | None = 1,
                     device="auto") -> dict[str, Any]:
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
        Informed: :math:`k=m_kk^*`, :math:`v=m_vv^*` at :func:`informed_overlaps` (spec §12),
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
    _check_activation(name)
    nu = _check_model(model, nu)
    law = _length_law(L)
    if init not in ("informed", "random"):
        raise ValueError(f"init must be 'informed' or 'random', got {init!r}")
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {optimizer!r}")
    _lr_factor(schedule, 0, 1, final_lr_ratio)
    has_extra = name in _EXTRA
    if learn_extra is None:
        learn_extra = name in _LEARNED
    if learn_extra and not has_extra:
        raise ValueError(f"activation {name!r} has no extra scalar to learn")
    dev = resolve_device(device)
    gen = _as_generator(generator, dev)
    D = int(D)
    seeds = [_child_seed(gen) for _ in range(4)]
    teacher = make_teacher(D, _seeded(seeds[0], gen.device), device=dev)
    k_star, v_star = teacher
    extra0 = float(extra_init) if extra_init is not None else 0.0
    optimum = informed_overlaps(name, model=model, nu=nu, L=L,
                                extra=extra0 if has_extra else None,
                                generator=seeds[1], device=dev)
    if init == "informed":
        k0 = optimum["m_k"] * k_star
        v0 = optimum["m_v"] * v_star
    else:
        g_init = _seeded(seeds[1], gen.device)
        k0 = init_scale * _randn(D, g_init, dev)
        v0 = init_scale * _randn(D, g_init, dev)
    k = k0.clone().requires_grad_(True)
    v = v0.clone().requires_grad_(True)
    params = [k, v]
    extra_t = None
    if has_extra:
        extra_t = torch.tensor(extra0, dtype=DTYPE, device=dev, requires_grad=bool(learn_extra))
        if learn_extra:
            params.append(extra_t)
    opt = (torch.optim.Adam(params, lr=lr) if optimizer == "adam"
           else torch.optim.SGD(params, lr=lr))
    data_gen = _seeded(seeds[2], gen.device)
    probs = torch.tensor([p for _, p in law], dtype=DTYPE, device=gen.device)
    root = math.sqrt(D)
    steps = int(steps)
    final_start = steps - int(round(final_fraction * steps))
    trace, window = [], []
    t0 = time.perf_counter()
    with _Threads(threads if dev.type == "cpu" else None):
        for t in range(steps):
            factor = _lr_factor(schedule, t, steps, final_lr_ratio)
            for group in opt.param_groups:
                group["lr"] = lr * factor
            bsz = int(batch) * (int(final_batch_factor) if t >= final_start else 1)
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
                s = sample_sequences(model, nu, length, cnt, D, generator=data_gen,
                                     teacher=teacher, delta=delta, device=dev)
                f = _predict(name, s["X"], k, v, extra_t, root)
                loss = loss + ((s["y"] - f) ** 2).sum()
            loss = loss / bsz
            loss.backward()
            opt.step()
            window.append(float(loss.detach()))
            if (t + 1) % int(log_every) == 0 or t + 1 == steps:
                with torch.no_grad():
                    ov = overlaps(k, v, k_star, v_star)
                trace.append({"step": t + 1, "loss": float(np.mean(window)),
                              "lr": lr * factor, "batch": bsz, "m_k": ov["m_k"],
                              "q_k": ov["q_k"], "m_v": ov["m_v"], "q_v": ov["q_v"],
                              "extra": None if extra_t is None else float(extra_t.detach())})
                window = []
    time_s = time.perf_counter() - t0
    k_f, v_f = k.detach(), v.detach()
    extra_f = None if extra_t is None else float(extra_t.detach())
    ov = overlaps(k_f, v_f, k_star, v_star)
    test_gen = _seeded(seeds[3], gen.device)
    test_seed, ov_seed = _child_seed(test_gen), _child_seed(test_gen)
    dkw = dict(model=model, nu=nu, L=L, n=n_test, D=D, teacher=teacher, device=dev)
    risk = direct_risk(name, k_f, v_f, generator=_seeded(test_seed, gen.device), extra=extra_f,
                       **dkw)
    risk_opt = direct_risk(name, optimum["m_k"] * k_star, optimum["m_v"] * v_star,
                           generator=_seeded(test_seed, gen.device),
                           extra=extra0 if has_extra else None, **dkw)
    kw = dict(model=model, nu=nu, L=L, n=n_overlap, extra=extra_f, device=dev)
    learned = overlap_risk(name, ov, generator=_seeded(ov_seed, gen.device), **kw)
    at_opt = overlap_risk(name, optimum, generator=_seeded(ov_seed, gen.device),
                          **{**kw, "extra": extra0 if has_extra else None})
    gap = mean_se(learned.samples - at_opt.samples)
    return {
        "k": k_f.cpu(),
        "v": v_f.cpu(),
        "extra": extra_f,
        "overlaps": ov,
        "distance": distance_to_manifold(ov),
        "risk": risk,
        "risk_optimum": risk_opt,
        "gap_direct": mean_se(risk.samples - risk_opt.samples),
        "risk_overlaps": learned,
        "gap_overlaps": gap,
        "optimum": optimum,
        "trace": trace,
        "time_s": time_s,
        "settings": {"name": name, "model": model, "nu": nu,
                     "L": L if not isinstance(L, Mapping) else dict(L), "D": D, "steps": steps,
                     "batch": int(batch), "lr": lr, "init": init, "optimizer": optimizer,
                     "schedule": schedule, "final_lr_ratio": final_lr_ratio,
                     "final_fraction": final_fraction, "final_batch_factor": final_batch_factor,
                     "learn_extra": bool(learn_extra), "extra_init": extra0 if has_extra else None,
                     "delta": delta, "seeds": seeds, "device": str(dev), "threads": threads,
                     "torch": torch.__version__},
    }


# =============================================================================================
# the predecessor [M] (spec §13; claims C20, C21)
# =============================================================================================


def _unit_teacher(d: int, gen, dev):
    k_star, v_star = make_teacher(d, gen, device=dev)
    root = math.sqrt(d)
    return k_star / root, v_star / root


def predecessor_sequences(d: int, L: int, gamma2: float, eps: float, n: int, generator, *,
                          teacher=None, device="auto") -> dict[str, torch.Tensor]:
    r"""Sequences of [M]'s model (spec §13.1).

    :math:`J_0` uniform (0-based), tokens :math:`\mathcal N(0,I_d)` except
    :math:`X_{J_0}=\sqrt{d/2}\,k^*+\gamma g`; :math:`k^*,v^*` unit and orthogonal (drawn by
    :func:`make_teacher` and divided by :math:`\sqrt d`, unless given); :math:`Y=X_{J_0}\cdot v^*+\epsilon\xi`.
    Draw order: teacher (if None), X, J0, ξ.

    Returns
    -------
    dict
        ``X`` (n, L, d), ``J0`` (n,), ``Y`` (n,), ``target`` :math:`X_{J_0}\cdot v^*` (n,),
        ``k_star``, ``v_star`` (d,).

    Cost: ``nLd`` normals.
    """
    d, n, L = int(d), int(n), int(L)
    dev = resolve_device(device)
    gen = _as_generator(generator, dev)
    if teacher is None:
        k_star, v_star = _unit_teacher(d, gen, dev)
    else:
        k_star, v_star = (_as_tensor(t, dev) for t in teacher)
    X = _randn((n, L, d), gen, dev)
    J0 = _randint(L, (n,), gen, dev)
    rows = torch.arange(n, device=dev)
    X[rows, J0] = math.sqrt(gamma2) * X[rows, J0] + math.sqrt(d / 2) * k_star
    target = X[rows, J0] @ v_star
    xi = _randn(n, gen, dev)
    return {"X": X, "J0": J0, "Y": target + float(eps) * xi, "target": target,
            "k_star": k_star, "v_star": v_star}


def predecessor_ls_risk(d: int, L: int, gamma2: float, eps: float, n: int, generator, *,
                        n_test: int | None = None, batch: int | None = None,
                        device="auto") -> MCEstimate:
    r"""Test risk of least squares of :math:`Y` on :math:`S=\sum_\ell X_\ell` ([M] Prop. 3, claim C20).

    :math:`\hat\beta=(\sum S S^\top)^{-1}\sum SY` on ``n`` training sequences (noisy labels),
    then :math:`\mathbb E(Y-\hat\beta\cdot S)^2=\mathbb E(X_{J_0}\cdot v^*-\hat\beta\cdot S)^2+\epsilon^2`
    on ``n_test`` (default ``n``) fresh sequences, the noise added exactly. Theory:
    :math:`\epsilon^2+\gamma^2-\gamma^4/(\gamma^2+L-1)` (0.48368 at γ²=0.5, ε=0.1, L=10), plus an
    estimation excess :math:`\approx d\,\sigma^2/n` (1.2·10⁻⁴ at d=50, n=2·10⁵).
    The SE is over test batches (the fitted :math:`\hat\beta` is held fixed).

    Cost: ``(n + n_test)·L·d`` normals (C20 size ≈ 3.5 s on 2 CPU cores).
    """
    d, L, n = int(d), int(L), int(n)
    n_test = n if n_test is None else int(n_test)
    dev = resolve_device(device)
    gen = _as_generator(generator, dev)
    teacher = _unit_teacher(d, _child(gen), dev)
    if batch is None:
        batch = max(1, min(-(-n_test // 20), _BATCH_ENTRIES // (L * d)))
    train_gen, test_gen = _child(gen), _child(gen)
    G = torch.zeros((d, d), dtype=DTYPE, device=dev)
    c = torch.zeros(d, dtype=DTYPE, device=dev)
    nb, bs = _batches(n, min(batch, n))
    done = 0
    with torch.no_grad():
        for _ in range(nb):
            size = min(bs, n - done)
            s = predecessor_sequences(d, L, gamma2, eps, size, train_gen, teacher=teacher,
                                      device=dev)
            S = s["X"].sum(dim=1)
            G += S.T @ S
            c += S.T @ s["Y"]
            done += size
        beta = torch.linalg.solve(G, c)
        nbt, bst = _batches(n_test, batch)
        vals = np.empty(nbt)
        for i in range(nbt):
            s = predecessor_sequences(d, L, gamma2, eps, bst, test_gen, teacher=teacher,
                                      device=dev)
            S = s["X"].sum(dim=1)
            vals[i] = float(((s["target"] - S @ beta) ** 2).mean()) + float(eps) ** 2
    return mean_se(vals)


def predecessor_manifold_risk_mc(d: int, L: int, gamma2: float, lam: float, kappa: float,
                                 nu_M: float, n: int, generator, *, method: str = "direct",
                                 batch: int | None = None, device="auto") -> MCEstimate:
    r"""Excess risk of [M]'s erf attention on the manifold (spec §13.2, claim C21).

    .. math::

        \mathcal E=\mathbb E\big[(X_{J_0}\cdot v^*-T_\lambda(X))^2\big],\qquad
        T_\lambda(X)=\sum_\ell\mathrm{erf}(\lambda X_\ell\cdot k)\,X_\ell\cdot v,

    :math:`k=\kappa k^*+\sqrt{1-\kappa^2}\,u`, :math:`v=\nu_Mv^*+\sqrt{1-\nu_M^2}\,u'` with unit
    :math:`u,u'` orthogonal to :math:`k^*,v^*` and each other (so :math:`\theta=\eta=\rho=0`). The
    label noise :math:`\epsilon^2` is *not* included (the excess risk of [M]); the spec's
    closed form gives 0.29364 at d=400, L=10, γ²=0.5, λ=0.1, κ=0.6, ν_M=0.8.

    Parameters
    ----------
    method : {"direct", "projected"}
        ``direct`` draws full sequences in :math:`\mathbb R^d` (``nLd`` normals; C21 size,
        4·10⁵ × 10 × 400, ≈ 30 s on 2 CPU cores). ``projected`` draws only the coordinates of
        each token on the orthonormal frame :math:`(k^*,v^*,u,u')`, which is exactly the same law
        (``4nL`` normals, ≈ 0.3 s), useful for quick runs; it presumes the rotation invariance
        that ``direct`` tests.

    Returns
    -------
    MCEstimate
        Mean and SE over batches.
    """
    d, L, n = int(d), int(L), int(n)
    if not (-1 <= kappa <= 1 and -1 <= nu_M <= 1):
        raise ValueError("kappa and nu_M must lie in [-1, 1] (unit k, v)")
    if method not in ("direct", "projected"):
        raise ValueError(f"method must be 'direct' or 'projected', got {method!r}")
    dev = resolve_device(device)
    gen = _as_generator(generator, dev)
    gamma = math.sqrt(gamma2)
    sk, sv = math.sqrt(1 - kappa**2), math.sqrt(1 - nu_M**2)
    if method == "direct":
        k_star, v_star = _unit_teacher(d, _child(gen), dev)
        g_u = _child(gen)
        basis = [k_star, v_star]
        for _ in range(2):  # u, u': Gram–Schmidt against the frame so far (twice)
            w = _randn(d, g_u, dev)
            for _ in range(2):
                for b in basis:
                    w = w - (w @ b) * b
            basis.append(w / torch.linalg.vector_norm(w))
        u, u2 = basis[2], basis[3]
        k = kappa * k_star + sk * u
        v = nu_M * v_star + sv * u2
        W = torch.stack([k, v, v_star], dim=1)  # (d, 3)
        entries = L * d
    else:
        entries = 4 * L
    if batch is None:
        batch = max(1, min(-(-n // 20), _BATCH_ENTRIES // entries))
    nb, bs = _batches(n, batch)
    data_gen = _child(gen)
    vals = np.empty(nb)
    rows = torch.arange(bs, device=dev)
    with torch.no_grad():
        for i in range(nb):
            if method == "direct":
                s = predecessor_sequences(d, L, gamma2, 0.0, bs, data_gen,
                                          teacher=(k_star, v_star), device=dev)
                P = s["X"] @ W  # (bs, L, 3): X·k, X·v, X·v*
                xk, xv, target = P[..., 0], P[..., 1], s["target"]
            else:
                C = _randn((bs, L, 4), data_gen, dev)  # coordinates on (k*, v*, u, u')
                J0 = _randint(L, (bs,), data_gen, dev)
                C[rows, J0] = gamma * C[rows, J0]
                C[rows, J0, 0] += math.sqrt(d / 2)
                xk = kappa * C[..., 0] + sk * C[..., 2]
                xv = nu_M * C[..., 1] + sv * C[..., 3]
                target = C[rows, J0, 1]
            T = (torch.special.erf(lam * xk) * xv).sum(dim=-1)
            vals[i] = float(((target - T) ** 2).mean())
    return mean_se(vals)
