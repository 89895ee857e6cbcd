"""Monte Carlo side: ridge regression trained on generated data (PyTorch, seeded, device ``auto``)."""
from __future__ import annotations

import math

import torch


def simulate(gamma: float, lam: float, *, d: int, seeds: int, seed: int, r2: float = 1.0, sigma2: float = 0.25,
             device: str = "cpu") -> tuple[float, float, int]:
    """Mean and standard error over ``seeds`` independent draws of ``||beta_hat - beta||^2`` at
    ``n = round(d / gamma)`` samples; returns ``(mean, se, dof)``."""
    n = max(2, round(d / gamma))
    gen = torch.Generator(device=device).manual_seed(int(seed))
    errs = []
    for _ in range(int(seeds)):
        X = torch.randn(n, d, generator=gen, device=device, dtype=torch.float64)
        beta = torch.randn(d, generator=gen, device=device, dtype=torch.float64)
        beta *= math.sqrt(r2) / beta.norm()
        y = X @ beta + math.sqrt(sigma2) * torch.randn(n, generator=gen, device=device, dtype=torch.float64)
        A = X.T @ X / n + lam * torch.eye(d, device=device, dtype=torch.float64)
        bhat = torch.linalg.solve(A, X.T @ y / n)
        errs.append(float(((bhat - beta) ** 2).sum()))
    t = torch.tensor(errs, dtype=torch.float64)
    return float(t.mean()), float(t.std() / math.sqrt(len(errs))), len(errs) - 1
