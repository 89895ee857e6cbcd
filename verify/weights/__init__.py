r"""Diagnostics of real pretrained attention weights: is :math:`W_K^\top W_Q` a scaled identity plus low rank?

docs/attention_rmt.md §13 ("Real pretrained weights") tests the paper's *Assumption 1* (docs/attention_rmt.md §2),
:math:`W_K^\top W_Q = I_p + L` with :math:`L` of fixed rank, on checkpoints the user has locally.
Nothing is ever downloaded.

Modules
-------
:mod:`attnlimits.verify.weights.checkpoint`
    :func:`load_state_dict` reads a checkpoint (``.safetensors`` with NumPy alone or the ``safetensors``
    package; ``.bin``/``.pt`` with ``torch.load(..., weights_only=True)`` on CPU; a Hugging Face folder);
    :func:`read_config`; :class:`CheckpointError`. The NumPy safetensors reader is
    :mod:`attnlimits.verify.weights._safetensors`.
:mod:`attnlimits.verify.weights.heads`
    :func:`extract_heads` finds the per-head query/key matrices
    :math:`W_Q^h, W_K^h\in\mathbb R^{d_h\times p}` (BERT, GPT-2 or a :class:`GenericLayout`) and forms the
    scaled per-head product (rows = keys, columns = queries)

    .. math::

        B_h = \sqrt{p/d_h}\,(W_K^h)^\top W_Q^h ,\qquad
        \frac{(W_K^h x_i)^\top (W_Q^h x_j)}{\sqrt{d_h}} = \frac{x_i^\top B_h x_j}{\sqrt p},

    i.e. the paper's normalisation for tokens with unit-variance coordinates, and the layer sum
    :math:`B=\sum_h B_h` (a proxy: :math:`W_O` mixes the heads). Optionally the gain :math:`g` of the
    LayerNorm feeding the block is folded in, :math:`B\leftarrow\operatorname{diag}(g)\,B\,\operatorname{diag}(g)`.
:mod:`attnlimits.verify.weights.fit`
    :func:`head_diagnostics` computes docs/attention_rmt.md §13 items 1–4 for one matrix; :func:`fit_identity_plus_low_rank`
    is item 3,

    .. math::

        \rho_r=\min_{s\in\mathbb R,\ \operatorname{rank}L\le r}\frac{\|B-sI-L\|_F}{\|B\|_F}
              =\min_s\frac{\sqrt{\phi_r(s)}}{\|B\|_F},\qquad
        \phi_r(s)=\sum_{k>r}\sigma_k(B-sI)^2 .
:mod:`attnlimits.verify.weights.report`
    :func:`analyze_checkpoint` runs everything and returns a :class:`WeightsReport`
    (tidy CSV, JSON with parameters and versions, a PNG, a text table).

Example
-------
>>> from attnlimits.verify.weights import analyze_checkpoint            # doctest: +SKIP
>>> rep = analyze_checkpoint("path/to/gpt2")                    # doctest: +SKIP
>>> print(rep.format_table()); rep.write("out/gpt2-weights")    # doctest: +SKIP

References
----------
Liao, Liu, Hou, Zou, Ling, *On the Interpolation Error of Nonlinear Attention versus Linear Regression*,
arXiv:2506.18656 (Assumption 1 and its check on GPT-2). Eckart–Young–Mirsky theorem for the rank-r step.
"""
from __future__ import annotations

from .checkpoint import CheckpointError, load_state_dict, read_config, read_safetensors
from .fit import DEFAULT_RANKS, FitResult, fit_identity_plus_low_rank, head_diagnostics
from .heads import AttentionHeads, GenericLayout, embedding_mean, extract_heads
from .report import WeightsOptions, WeightsReport, analyze_checkpoint

__all__ = [
    "CheckpointError",
    "read_safetensors",
    "load_state_dict",
    "read_config",
    "GenericLayout",
    "AttentionHeads",
    "extract_heads",
    "FitResult",
    "fit_identity_plus_low_rank",
    "head_diagnostics",
    "embedding_mean",
    "WeightsReport",
    "analyze_checkpoint",
    "WeightsOptions",
    "DEFAULT_RANKS",
]
