r"""Monte Carlo of the Bayes quantities of SLR (docs/slr.md §3.5, §7, §8; claims C1–C3, C8, C23)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from attnlimits.verify.torch_device import DTYPE
from attnlimits.verify.stats import MCEstimate, mean_se
from attnlimits.verify.torch_device import resolve_device

from .streams import BATCH_ENTRIES, as_generator, batch_count, check_model, child, length_law, single_length
from .samplers import posterior_weights, make_teacher, sample_sequences
from .estimators import projection_batches

__all__ = ["bayes_mc", "posterior_calibration"]


# =============================================================================================
# Bayes (docs/slr.md §7, claims C2, C3, C8) and calibration (§3.5, claim C1)
# =============================================================================================


def bayes_mc(model: str, nu: float, L, n: int, generator, *, batches: int = 20,
             device="auto") -> dict[str, MCEstimate]:
    r"""Monte Carlo of the Bayes quantities (docs/slr.md §7, §8; claims C2, C3, C8, C23).

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
    nu = check_model(model, nu)
    law = length_law(L)
    dev = resolve_device(device)
    gen = as_generator(generator, dev)
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

    cols = projection_batches(law, gen, n, batches, model, nu, dev, fn)
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
    r"""Posterior = softmax check on finite-:math:`D` sequences (docs/slr.md §3.5, claim C1).

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
    nu = check_model(model, nu)
    length = single_length(L)
    dev = resolve_device(device)
    gen = as_generator(generator, dev)
    D = int(D)
    teacher = make_teacher(D, child(gen), device=dev)
    data_gen = child(gen)
    if batch is None:
        batch = max(1, min(-(-int(n) // 20), BATCH_ENTRIES // (length * D)))
    nb, bs = batch_count(n, batch)
    root = math.sqrt(D)
    k_star = teacher[0]
    hits, pmax = np.empty(nb), np.empty(nb)
    all_p, all_hit = [], []
    with torch.no_grad():
        for i in range(nb):
            s = sample_sequences(model, nu, length, bs, D, generator=data_gen, teacher=teacher,
                                 device=dev)
            chi_star = s["X"] @ k_star / root  # recomputed from X and k* alone
            p = posterior_weights(model, nu, chi_star)
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


