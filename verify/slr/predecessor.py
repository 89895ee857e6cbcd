r"""The predecessor [M] in PyTorch (docs/slr.md §13; claims C20, C21): sequences, least squares,
the erf attention on the manifold."""
from __future__ import annotations

import math

import numpy as np
import torch

from attnlimits.verify.torch_device import DTYPE
from attnlimits.verify.stats import MCEstimate, mean_se
from attnlimits.verify.torch_device import resolve_device

from attnlimits.derivations.slr.predecessor import ACTIVATION as _M_ACTIVATION

from .estimators import torch_attention_weights
from .streams import BATCH_ENTRIES, as_generator, as_tensor, batch_count, child, randint, randn
from .samplers import make_teacher

__all__ = ["predecessor_sequences", "predecessor_ls_risk", "predecessor_manifold_risk_mc"]


# =============================================================================================
# the predecessor [M] (docs/slr.md §13; claims C20, C21)
# =============================================================================================


def _unit_teacher(d: int, gen, dev):
    k_star, v_star = make_teacher(d, gen, device=dev)
    root = math.sqrt(d)
    return k_star / root, v_star / root


def predecessor_sequences(d: int, L: int, gamma2: float, eps: float, n: int, generator, *,
                          teacher=None, device="auto") -> dict[str, torch.Tensor]:
    r"""Sequences of [M]'s model (docs/slr.md §13.1).

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
    gen = as_generator(generator, dev)
    if teacher is None:
        k_star, v_star = _unit_teacher(d, gen, dev)
    else:
        k_star, v_star = (as_tensor(t, dev) for t in teacher)
    X = randn((n, L, d), gen, dev)
    J0 = randint(L, (n,), gen, dev)
    rows = torch.arange(n, device=dev)
    X[rows, J0] = math.sqrt(gamma2) * X[rows, J0] + math.sqrt(d / 2) * k_star
    target = X[rows, J0] @ v_star
    xi = randn(n, gen, dev)
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
    gen = as_generator(generator, dev)
    teacher = _unit_teacher(d, child(gen), dev)
    if batch is None:
        batch = max(1, min(-(-n_test // 20), BATCH_ENTRIES // (L * d)))
    train_gen, test_gen = child(gen), child(gen)
    G = torch.zeros((d, d), dtype=DTYPE, device=dev)
    c = torch.zeros(d, dtype=DTYPE, device=dev)
    nb, bs = batch_count(n, min(batch, n))
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
        nbt, bst = batch_count(n_test, batch)
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
    r"""Excess risk of [M]'s erf attention on the manifold (docs/slr.md §13.2, claim C21).

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
    gen = as_generator(generator, dev)
    gamma = math.sqrt(gamma2)
    sk, sv = math.sqrt(1 - kappa**2), math.sqrt(1 - nu_M**2)
    if method == "direct":
        k_star, v_star = _unit_teacher(d, child(gen), dev)
        g_u = child(gen)
        basis = [k_star, v_star]
        for _ in range(2):  # u, u': Gram–Schmidt against the frame so far (twice)
            w = randn(d, g_u, dev)
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
        batch = max(1, min(-(-n // 20), BATCH_ENTRIES // entries))
    nb, bs = batch_count(n, batch)
    data_gen = child(gen)
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
                C = randn((bs, L, 4), data_gen, dev)  # coordinates on (k*, v*, u, u')
                J0 = randint(L, (bs,), data_gen, dev)
                C[rows, J0] = gamma * C[rows, J0]
                C[rows, J0, 0] += math.sqrt(d / 2)
                xk = kappa * C[..., 0] + sk * C[..., 2]
                xv = nu_M * C[..., 1] + sv * C[..., 3]
                target = C[rows, J0, 1]
            T = (torch_attention_weights(_M_ACTIVATION, lam * xk) * xv).sum(dim=-1)
            vals[i] = float(((target - T) ** 2).mean())
    return mean_se(vals)

