r"""Random streams and argument checks shared by the SLR samplers, estimators and trainers (docs/slr.md §2, §3.4).

Every random number comes from an explicit :class:`torch.Generator` (or an ``int`` seed, :func:`as_generator`);
sub-streams are seeded with integers drawn from it (:func:`child`, :func:`child_seed`), and each length of a length
law gets its own stream (:func:`per_length_generators`: common random numbers across parameter values).  Draws are
made on the generator's device and moved to the target device (:func:`randn`, :func:`rand`, :func:`randint`).
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import torch

from attnlimits.verify.torch_device import DTYPE, draw_seed

__all__ = ["BATCH_ENTRIES", "MODELS", "as_generator", "as_tensor", "batch_count", "check_model", "child", "child_seed",
           "combine", "length_law", "per_length_generators", "rand", "randint", "randn", "seeded", "single_length"]

MODELS = ("spiked", "max")
#: Default memory cap of one batch of sequences (float64 entries of X).
BATCH_ENTRIES = 2**22


# =============================================================================================
# argument checking, generators, length laws
# =============================================================================================


def check_model(model: str, nu: float) -> float:
    """Validate the data model and ν (ν = ∞ for max-SLR only, docs/slr.md §2); returns ν as a float."""
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; use 'spiked' or 'max'")
    nu = float(nu)
    if math.isnan(nu) or nu < 0:
        raise ValueError(f"nu must be >= 0, got {nu}")
    if math.isinf(nu) and model != "max":
        raise ValueError("nu = inf is accepted for max-SLR only (docs/slr.md §2)")
    return nu


def as_generator(generator, device: torch.device) -> torch.Generator:
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


def child_seed(gen: torch.Generator) -> int:
    """A non-negative 62-bit integer drawn from ``gen`` (seed of an independent sub-stream)."""
    return int(torch.randint(0, 2**62, (1,), generator=gen, device=gen.device).item())


def seeded(seed: int, device) -> torch.Generator:
    """A generator on ``device`` seeded with ``seed``."""
    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    return g


def child(gen: torch.Generator) -> torch.Generator:
    """An independent generator on ``gen``'s device, seeded from ``gen``."""
    return seeded(child_seed(gen), gen.device)


def randn(shape, gen: torch.Generator, dev: torch.device) -> torch.Tensor:
    """Standard normals of ``shape`` drawn from ``gen`` (on its device), moved to ``dev``."""
    return torch.randn(shape, generator=gen, dtype=DTYPE, device=gen.device).to(dev)


def rand(shape, gen: torch.Generator, dev: torch.device) -> torch.Tensor:
    """Uniforms on [0, 1) of ``shape`` drawn from ``gen`` (on its device), moved to ``dev``."""
    return torch.rand(shape, generator=gen, dtype=DTYPE, device=gen.device).to(dev)


def randint(high: int, shape, gen: torch.Generator, dev: torch.device) -> torch.Tensor:
    """Integers in [0, ``high``) of ``shape`` drawn from ``gen`` (on its device), moved to ``dev``."""
    return torch.randint(0, high, shape, generator=gen, device=gen.device).to(dev)


def length_law(L) -> list[tuple[int, float]]:
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


def single_length(L) -> int:
    """A single positive integer length (length laws are refused with a clear message)."""
    if isinstance(L, Mapping):
        raise ValueError("this function takes one length; group variable lengths by L (§3.4)")
    return length_law(L)[0][0]


def per_length_generators(gen: torch.Generator, law) -> dict[int, torch.Generator]:
    """Common random numbers per length (docs/slr.md §3.4): one base seed drawn from ``gen``, then the
    stream of length ``L`` is seeded with ``draw_seed(base, L)``."""
    base = child_seed(gen)
    return {length: seeded(draw_seed(base, length), gen.device) for length, _ in law}


def combine(law, per_length: dict[int, np.ndarray]) -> np.ndarray:
    """``Σ_L P(L)·samples_L`` (equal numbers of batches per length, so samples pair up)."""
    return sum(prob * per_length[length] for length, prob in law)


def as_tensor(x, dev) -> torch.Tensor:
    """``x`` as a float64 tensor on ``dev`` (detached when already a tensor)."""
    if isinstance(x, torch.Tensor):
        return x.detach().to(device=dev, dtype=DTYPE)
    return torch.as_tensor(np.asarray(x, dtype=float), dtype=DTYPE, device=dev)


def batch_count(n: int, batch: int) -> tuple[int, int]:
    """``(number of batches, batch size)`` covering at least ``n`` samples."""
    n, batch = int(n), int(batch)
    if n < 1 or batch < 1:
        raise ValueError(f"n and batch must be positive, got {n}, {batch}")
    batch = min(batch, n)
    return -(-n // batch), batch
