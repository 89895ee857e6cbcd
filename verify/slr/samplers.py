r"""SLR samplers (docs/slr.md §2, §3.6): argument checks, generators, length laws, the
population projection sampler, teachers and finite-D sequences, overlaps.

Every random number comes from an explicit :class:`torch.Generator` (or an ``int`` seed); sub-streams
are seeded with integers drawn from it (common random numbers across parameter values).  The
posterior :math:`p=\mathrm{softmax}(c_\nu\chi^*)` and the max-SLR location law are the derived
softmax attention weights (:func:`attnlimits.verify.slr.estimators.torch_attention_weights`) at the generated
:math:`c_\nu`.
"""
from __future__ import annotations

import math
from typing import Mapping

import torch

from attnlimits.verify.torch_device import resolve_device

from .streams import as_generator, as_tensor, check_model, rand, randint, randn, single_length

__all__ = ["c_nu", "posterior_weights", "sample_projections", "make_teacher", "predictor_on_frame", "sample_sequences", "overlaps", "distance_to_manifold"]

def c_nu(model: str, nu: float) -> float:
    r"""Posterior inverse temperature :math:`c_\nu` (docs/slr.md §3.5), from the generated kernel of
    :func:`attnlimits.derivations.slr.c_nu`: :math:`\sqrt\nu` spiked, :math:`\nu` max."""
    from .theory import population_module

    nu = check_model(model, nu)
    return float(getattr(population_module(), f"c_nu_{model}")(nu)[0])


# =============================================================================================
# samplers (docs/slr.md §2, §3.6)
# =============================================================================================


def _softmax_weights(logits: torch.Tensor) -> torch.Tensor:
    from .attention import torch_attention_weights

    return torch_attention_weights("softmax", logits)


def posterior_weights(model: str, nu: float, chi_star: torch.Tensor) -> torch.Tensor:
    """:math:`p=\\mathrm{softmax}(c_\\nu\\chi^*)`; one-hot argmax at max-SLR :math:`\\nu=\\infty`."""
    if math.isinf(nu):
        idx = chi_star.argmax(dim=-1)
        return torch.nn.functional.one_hot(idx, chi_star.shape[-1]).to(chi_star.dtype)
    return _softmax_weights(c_nu(model, nu) * chi_star)


def _draw_max_location(nu: float, chi_star, gen, dev) -> torch.Tensor:
    """ε* ~ Categorical(softmax(ν χ*)) by inverse CDF (one uniform per sample); argmax at ν=∞."""
    if math.isinf(nu):
        return chi_star.argmax(dim=-1)
    p = _softmax_weights(nu * chi_star)
    u = rand((chi_star.shape[0], 1), gen, dev)
    eps = (torch.cumsum(p, dim=-1) < u).sum(dim=-1)
    return torch.clamp(eps, max=chi_star.shape[-1] - 1)


def sample_projections(model: str, nu: float, L: int, n: int, *, generator, device="auto",
                       location: str = "sample") -> dict[str, torch.Tensor]:
    r"""Population projection sampler (docs/slr.md §3.6).

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
    nu = check_model(model, nu)
    length = single_length(L)
    n = int(n)
    if location not in ("sample", "first"):
        raise ValueError(f"location must be 'sample' or 'first', got {location!r}")
    if location == "first" and model != "spiked":
        raise ValueError("location='first' is valid for spiked-SLR only")
    dev = resolve_device(device)
    gen = as_generator(generator, dev)
    chi_star = randn((n, length), gen, dev)
    if model == "spiked":
        if location == "sample":
            eps = randint(length, (n,), gen, dev)
        else:
            eps = torch.zeros(n, dtype=torch.long, device=dev)
        chi_star[torch.arange(n, device=dev), eps] += math.sqrt(nu)
    else:
        eps = _draw_max_location(nu, chi_star, gen, dev)
    z_star = randn((n, length), gen, dev)
    eta = randn((n, length), gen, dev)
    eta_prime = randn((n, length), gen, dev)
    return {
        "eps": eps,
        "chi_star": chi_star,
        "z_star": z_star,
        "eta": eta,
        "eta_prime": eta_prime,
        "posterior": posterior_weights(model, nu, chi_star),
    }


def make_teacher(D: int, generator, device="auto") -> tuple[torch.Tensor, torch.Tensor]:
    r"""Teacher :math:`(k^*,v^*)` of docs/slr.md §2: Gaussian, Gram–Schmidt, rescaled to norm :math:`\sqrt D`.

    :math:`k^*=\sqrt D\,a/\|a\|`; :math:`b\leftarrow b-(b\cdot\hat k)\hat k` applied twice
    (re-orthogonalisation), :math:`v^*=\sqrt D\,b/\|b\|`. Hence :math:`\|k^*\|^2=\|v^*\|^2=D` and
    :math:`k^*\cdot v^*=0` to float64 round-off (:math:`|k^*\cdot v^*|/D\lesssim10^{-16}`).
    Cost: ``2D`` normals.
    """
    D = int(D)
    if D < 2:
        raise ValueError(f"the teacher needs D >= 2, got {D}")
    dev = resolve_device(device)
    gen = as_generator(generator, dev)
    a = randn(D, gen, dev)
    b = randn(D, gen, dev)
    k_hat = a / torch.linalg.vector_norm(a)
    for _ in range(2):
        b = b - (b @ k_hat) * k_hat
    v_hat = b / torch.linalg.vector_norm(b)
    v_hat = v_hat - (v_hat @ k_hat) * k_hat
    v_hat = v_hat / torch.linalg.vector_norm(v_hat)
    root = math.sqrt(D)
    return root * k_hat, root * v_hat


def predictor_on_frame(k_coef, v_coef, D: int, generator, device="auto"):
    r"""A teacher and a predictor :math:`(k, v)` with prescribed overlaps, on an orthonormal frame.

    The frame is :math:`(\hat k^*, \hat v^*, u_3, u_4)`: the teacher of :func:`make_teacher` and two unit vectors
    orthogonal to it and to each other (Gram–Schmidt, twice).  :math:`k=\sqrt D\sum_i k_i e_i`,
    :math:`v=\sqrt D\sum_i v_i e_i` for the coefficient 4-tuples ``k_coef``, ``v_coef``, so the seven overlaps of
    docs/slr.md §6.1 are exact: :math:`m_k=k_1`, :math:`m_{kv^*}=k_2`, :math:`m_{vk^*}=v_1`, :math:`m_v=v_2`,
    :math:`q_k=\|k\|^2`, :math:`q_v=\|v\|^2`, :math:`q_{kv}=k\cdot v` (coefficients).  Needs ``D >= 4``.
    Returns ``(k, v, (k_star, v_star), overlaps)``.
    """
    D = int(D)
    if D < 4:
        raise ValueError(f"the frame needs D >= 4, got {D}")
    dev = resolve_device(device)
    gen = as_generator(generator, dev)
    ks, vs = make_teacher(D, gen, device=dev)
    basis = [ks / math.sqrt(D), vs / math.sqrt(D)]
    for _ in range(2):
        w = randn(D, gen, dev)
        for _twice in range(2):
            for b in basis:
                w = w - (w @ b) * b
        basis.append(w / torch.linalg.vector_norm(w))
    ck, cv = (tuple(float(x) for x in c) + (0.0,) * (4 - len(c)) for c in (k_coef, v_coef))
    k = math.sqrt(D) * sum(c * u for c, u in zip(ck, basis))
    v = math.sqrt(D) * sum(c * u for c, u in zip(cv, basis))
    ov = {"m_k": ck[0], "m_kvstar": ck[1], "q_k": sum(x * x for x in ck), "m_vkstar": cv[0], "m_v": cv[1],
          "q_v": sum(x * x for x in cv), "q_kv": sum(a * b for a, b in zip(ck, cv))}
    return k, v, (ks, vs), ov


def sample_sequences(model: str, nu: float, L: int, n: int, D: int, *, generator, teacher=None,
                     delta: float = 0.0, device="auto") -> dict[str, torch.Tensor]:
    r"""Finite-:math:`D` sequence sampler (docs/slr.md §3.6).

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
    nu = check_model(model, nu)
    length = single_length(L)
    n, D = int(n), int(D)
    dev = resolve_device(device)
    gen = as_generator(generator, dev)
    if teacher is None:
        k_star, v_star = make_teacher(D, gen, device=dev)
    else:
        k_star, v_star = (as_tensor(t, dev) for t in teacher)
        if k_star.shape != (D,) or v_star.shape != (D,):
            raise ValueError(f"teacher vectors must have shape ({D},)")
    root = math.sqrt(D)
    X = randn((n, length, D), gen, dev)
    rows = torch.arange(n, device=dev)
    if model == "spiked":
        eps = randint(length, (n,), gen, dev)
        X[rows, eps] += (math.sqrt(nu) / root) * k_star
        chi_star = X @ k_star / root
    else:
        chi_star = X @ k_star / root
        eps = _draw_max_location(nu, chi_star, gen, dev)
    z_star = X @ v_star / root
    xi = randn(n, gen, dev)
    y = z_star[rows, eps] + float(delta) * xi
    return {"X": X, "eps": eps, "y": y, "chi_star": chi_star, "z_star": z_star,
            "k_star": k_star, "v_star": v_star}


def overlaps(k, v, k_star, v_star) -> dict[str, float]:
    r"""The seven overlaps of docs/slr.md §5, all divided by :math:`D`.

    ``m_k`` :math:`=k\cdot k^*/D`, ``m_v`` :math:`=v\cdot v^*/D`, ``q_k`` :math:`=\|k\|^2/D`,
    ``q_v`` :math:`=\|v\|^2/D`, ``m_kvstar`` :math:`=k\cdot v^*/D`, ``m_vkstar`` :math:`=v\cdot k^*/D`,
    ``q_kv`` :math:`=k\cdot v/D`. Inputs: tensors or arrays of shape (D,).
    """
    k, v, ks, vs = (as_tensor(t, "cpu") for t in (k, v, k_star, v_star))
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
    r""":math:`\sqrt{m_{kv^*}^2+m_{vk^*}^2+q_{kv}^2}` (docs/slr.md §12 report)."""
    return math.sqrt(ov["m_kvstar"] ** 2 + ov["m_vkstar"] ** 2 + ov["q_kv"] ** 2)


