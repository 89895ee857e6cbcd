r"""Finite-D spin-glass susceptibility of ERM minimisers against the RS replicon (docs/slr.md §10.8).

The replicon of the RS solution (:func:`attnlimits.numeric.slr.rs.rs_replicon`) is the gain of one turn of
a fluctuation uncorrelated with the teacher.  Its observable meaning at finite D: add a random linear
field :math:`h\sim\mathcal N(0,I_{2D})` to the ridge objective; the minimiser moves by
:math:`\delta w=\mathrm{Hess}^{-1}h` (to first order), and the *spin-glass susceptibility*

.. math:: \chi_{cd}=\frac1D\operatorname{tr}\big[(\mathrm{Hess}^{-2})_{cd}\big],\qquad c,d\in\{k,v\},

is the covariance of that response per coordinate.  RS predicts it by summing the replicon loop:
:math:`\chi=(I-\mathcal T)^{-1}(P_k^2,0,P_v^2)` on :math:`(kk,kv,vv)`, with :math:`\mathcal T` the replicon
operator and :math:`P_c=1/(\lambda+\hat V_c)` the prior response; it diverges as the replicon reaches 1.

- :func:`rs_susceptibility` — the RS side at the equilibrium branch (branch search, §10.7).
- :func:`erm_susceptibility` — the ERM side: per seed, teacher and sequences from the spec's samplers
  (explicit generators), L-BFGS (float64, strong Wolfe) from the informed start, the exact Hessian of
  the objective by autograd (a :math:`2D\times2D` matrix: D ≤ 400 keeps it at seconds on CPU), its
  smallest eigenvalue (a local minimum needs it > 0) and :math:`\chi`.

Cost (CPU, linear_uncentred, L = 2, D = 200): about 5–10 s per seed at α ≤ 8.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from attnlimits.verify.torch_device import draw_generator, draw_seed

from .estimators import torch_attention_weights
from .samplers import make_teacher, overlaps, sample_sequences

__all__ = ["rs_susceptibility", "erm_susceptibility", "BASIS"]

BASIS = ("kk", "kv", "vv")


def rs_susceptibility(activation, *, model, nu, L, alpha, lam, delta=0.1, points=1024, replicates=4, seed=0):
    """RS spin-glass susceptibility ``(kk, kv, vv)`` at the equilibrium branch, with the replicon.

    Returns a dict: ``chi`` (3,), ``replicon``, ``replicon_error``, ``E_test``, ``phase`` of the point used.
    """
    from attnlimits.numeric.slr.rs import UNKNOWNS, rs_branch_search, rs_replicon, rs_select_equilibrium
    from attnlimits.numeric.slr.rs_command import check_setting
    from attnlimits.verify.slr.replica import rs_problem

    check_setting(model, nu, alpha, lam, delta)
    rs = rs_problem(activation, model, nu, L, points=points, replicates=replicates, seed=seed)
    kern, rules = rs.kern, rs.rules
    found = rs_branch_search(kern, rules, [float(alpha)], float(lam), float(delta), model=model, nu=rs.nu,
                             lam_ladder=())
    labelled = rs_select_equilibrium(found[float(alpha)])
    eq = next(f for _, f, ph in labelled if ph == "equilibrium")
    x = [eq.values[k] for k in UNKNOWNS]
    rep, rep_err, T = rs_replicon(kern, rules, x, float(alpha), float(lam), float(delta), eq.hats)
    P0 = np.array([1.0 / (lam + eq.hats["V_hat_k"]) ** 2, 0.0, 1.0 / (lam + eq.hats["V_hat_v"]) ** 2])
    chi = np.linalg.solve(np.eye(3) - T, P0)
    return {"chi": chi, "replicon": rep, "replicon_error": rep_err, "E_test": eq.E_test,
            "E_test_error": eq.E_test_error, "n_branches": len(labelled)}


def _objective(activation, X, y, lam, D, extra=None):
    def f(theta):
        k, v = theta[:D], theta[D:2 * D]
        chi = X @ k / math.sqrt(D)
        z = X @ v / math.sqrt(D)
        sig = torch_attention_weights(activation, chi, extra)
        pred = (sig * z).sum(dim=-1)
        return 0.5 * ((y - pred) ** 2).sum() + 0.5 * lam * (theta * theta).sum()

    return f


#: L-BFGS iterations of the minimiser (tolerance_grad 1e-10 ends it first in the measured runs)
LBFGS_MAX_ITER = 4000


def erm_susceptibility(activation, *, model, nu, L, alpha, lam, D, seeds, delta=0.1, seed=0, start=None,
                       progress=None) -> list:
    """Per seed: the ERM minimiser from the informed start and its spin-glass susceptibility.

    ``start = (m_k0, m_v0)``: the informed start ``k = m_k0 k*``, ``v = m_v0 v*`` (default m_k0 = √ν(L−1)/L, m_v0 = 1,
    the ``linear_uncentred`` spiked population optimum of docs/slr.md §12).  Returns one dict per seed:
    ``chi`` (kk, kv, vv), ``lambda_min`` (smallest Hessian eigenvalue), the overlaps, the
    objective per sample and the final gradient norm.
    """
    N = int(math.floor(alpha * D))
    m_k0, m_v0 = (math.sqrt(nu) * (L - 1) / L, 1.0) if start is None else start
    out = []
    for s in range(int(seeds)):
        base = draw_seed(int(seed), s)
        ks, vs = make_teacher(D, draw_generator(base, 0), device="cpu")
        smp = sample_sequences(model, nu, L, N, D, generator=draw_generator(base, 100 + L), teacher=(ks, vs),
                               delta=delta, device="cpu")
        X, y = smp["X"].to(torch.float64), smp["y"].to(torch.float64)
        f = _objective(activation, X, y, float(lam), D)
        th = torch.cat([m_k0 * ks, m_v0 * vs]).to(torch.float64).clone().requires_grad_(True)
        opt = torch.optim.LBFGS([th], lr=1, max_iter=LBFGS_MAX_ITER, tolerance_grad=1e-10, tolerance_change=1e-14,
                                history_size=20, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            o = f(th)
            o.backward()
            return o

        opt.step(closure)
        thd = th.detach()
        tg = thd.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(f(tg), tg)
        H = torch.autograd.functional.hessian(f, thd)
        lam_min = float(torch.linalg.eigvalsh(H)[0])
        Hi = torch.linalg.inv(H)
        S = (Hi @ Hi).numpy()
        chi = np.array([np.trace(S[:D, :D]), np.trace(S[:D, D:]), np.trace(S[D:, D:])]) / D
        ov = overlaps(thd[:D], thd[D:], ks, vs)
        row = {"seed_index": s, "chi": chi, "lambda_min": lam_min, "objective_per_N": float(f(thd)) / N,
               "grad_norm": float(g.norm()), **{k: ov[k] for k in ("m_k", "q_k", "m_v", "q_v")}}
        out.append(row)
        if progress is not None:
            progress(f"  ERM susceptibility {activation} α={alpha:g} seed {s}: χ=({chi[0]:.4g}, {chi[1]:.3g}, "
                     f"{chi[2]:.4g}), λ_min(Hess)={lam_min:.3g}, |∇|={row['grad_norm']:.1e}")
    return out
