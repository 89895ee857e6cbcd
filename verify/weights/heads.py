r"""Per-head query/key matrices of a state dict (docs/attention_rmt.md §13 "Layouts").

:func:`extract_heads` finds :math:`W_Q^h, W_K^h\in\mathbb R^{d_h\times p}` in BERT, GPT-2 or a
user-described (:class:`GenericLayout`) naming scheme and returns them as :class:`AttentionHeads`, which
forms the scaled products :math:`B_h=\sqrt{p/d_h}\,(W_K^h)^\top W_Q^h` and the layer sum
:math:`B=\sum_hB_h`. :func:`embedding_mean` gives a data direction for the alignment diagnostic.
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .checkpoint import CheckpointError, read_config

__all__ = ["GenericLayout", "AttentionHeads", "extract_heads", "embedding_mean"]


@dataclass(frozen=True)
class GenericLayout:
    """User-described layout of query/key weights (docs/attention_rmt.md §13, *Generic*).

    Parameters
    ----------
    query : str
        Name pattern of the query weight with ``{l}`` for the layer index, e.g.
        ``"model.layers.{l}.self_attn.q_proj.weight"``. When ``key`` is ``None`` it names a *fused* QKV
        weight whose output axis holds Q, K, V as three consecutive equal blocks (e.g. PyTorch
        ``in_proj_weight``). Interleaved per-head fusions (GPT-NeoX, BLOOM) are not supported.
    key : str, optional
        Name pattern of the key weight.
    orientation : {"out_in", "in_out"}
        ``"out_in"``: ``y = W x + b``, weight shape ``(H d_h, p)`` (``torch.nn.Linear``);
        ``"in_out"``: ``y = x W + b``, shape ``(p, H d_h)`` (GPT-2's ``Conv1D``).
    query_bias, key_bias : str, optional
        Bias name patterns (only their norms are reported). For a fused weight give ``query_bias``.
    ln_gain : str or callable, optional
        Gain of the LayerNorm feeding layer ``l``: a pattern formatted with ``l`` and ``l_prev = l - 1``,
        or a callable ``l -> name or None``.

    Notes
    -----
    Head :math:`h` is the block ``[h d_h, (h+1) d_h)`` of the output axis, as in BERT and GPT-2.
    Rotary position embeddings (LLaMA-type models) make :math:`W_K^\top W_Q` only part of the logit.
    """

    query: str
    key: str | None = None
    orientation: Literal["out_in", "in_out"] = "out_in"
    query_bias: str | None = None
    key_bias: str | None = None
    ln_gain: str | Callable[[int], str | None] | None = None


@dataclass
class AttentionHeads:
    """Per-head query/key weights of a checkpoint (docs/attention_rmt.md §13 "Layouts").

    Attributes
    ----------
    layout : {"bert", "gpt2", "generic"}
    p : int
        Embedding dimension.
    n_heads : int
        :math:`H`.
    d_head : int
        :math:`d_h`.
    layers : list of int
        Layer indices, ascending.
    wq, wk : dict int -> ndarray, shape (H, d_h, p), float64
        :math:`W_Q^h`, :math:`W_K^h` of layer ``l`` (``y = W x`` orientation).
    ln_gain : dict int -> ndarray of shape (p,) or None
        Gain of the LayerNorm feeding the attention block of layer ``l`` (``None`` if absent).
    bias_norms : dict int -> dict
        ``{"query": ndarray (H,) or None, "key": ndarray (H,) or None}``: per-head Euclidean norms of
        the query and key biases (biases are otherwise ignored).
    prefix : str
        Common name prefix found (``""``, ``"bert."``, ``"transformer."``, ...).
    """

    layout: str
    p: int
    n_heads: int
    d_head: int
    layers: list[int]
    wq: dict[int, np.ndarray]
    wk: dict[int, np.ndarray]
    ln_gain: dict[int, np.ndarray | None]
    bias_norms: dict[int, dict[str, np.ndarray | None]]
    prefix: str = ""

    def head_product(self, layer: int, head: int, *, fold_layernorm: bool = False) -> np.ndarray:
        r"""Scaled product :math:`B_h=\sqrt{p/d_h}\,(W_K^h)^\top W_Q^h` (rows keys, columns queries).

        With ``fold_layernorm`` the result is :math:`\operatorname{diag}(g)B_h\operatorname{diag}(g)`.
        """
        b = math.sqrt(self.p / self.d_head) * (self.wk[layer][head].T @ self.wq[layer][head])
        return self._fold(layer, b) if fold_layernorm else b

    def head_factors(self, layer: int, head: int, *, fold_layernorm: bool = False) -> tuple[np.ndarray, np.ndarray]:
        r"""Thin factors :math:`(F_K, F_Q)`, each :math:`p\times d_h`, with :meth:`head_product` :math:`=F_KF_Q^\top`:
        :math:`F_K=\sqrt{p/d_h}\,(W_K^h)^\top`, :math:`F_Q=(W_Q^h)^\top` (times :math:`\operatorname{diag}(g)`
        with ``fold_layernorm``). They let the fit take the SVD of a head in :math:`O(pd_h^2)`."""
        fk = math.sqrt(self.p / self.d_head) * self.wk[layer][head].T
        fq = self.wq[layer][head].T
        if fold_layernorm:
            g = self._gain(layer)
            fk, fq = g[:, None] * fk, g[:, None] * fq
        return fk, fq

    def layer_sum(self, layer: int, *, fold_layernorm: bool = False) -> np.ndarray:
        r"""Layer sum :math:`B=\sum_hB_h=\sqrt{p/d_h}\,W_K^\top W_Q` (stacked heads)."""
        wk = self.wk[layer].reshape(-1, self.p)
        wq = self.wq[layer].reshape(-1, self.p)
        b = math.sqrt(self.p / self.d_head) * (wk.T @ wq)
        return self._fold(layer, b) if fold_layernorm else b

    def _gain(self, layer: int) -> np.ndarray:
        g = self.ln_gain.get(layer)
        if g is None:
            raise CheckpointError(
                f"fold_layernorm: no LayerNorm gain found for layer {layer} ({self.layout} layout)"
            )
        return g

    def _fold(self, layer: int, b: np.ndarray) -> np.ndarray:
        g = self._gain(layer)
        return g[:, None] * b * g[None, :]


def _config_int(config: Mapping | None, *keys: str) -> int | None:
    if not config:
        return None
    for k in keys:
        v = config.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


_BERT_RE = re.compile(r"^(?P<prefix>(?:.*\.)?)encoder\.layer\.(?P<l>\d+)\.attention\.self\.query\.weight$")
_GPT2_RE = re.compile(r"^(?P<prefix>(?:.*\.)?)h\.(?P<l>\d+)\.attn\.c_attn\.weight$")


def _find(state: Mapping, regex: re.Pattern, prefix: str | None) -> dict[str, list[int]]:
    """prefix -> sorted layer indices of the names matching ``regex``."""
    found: dict[str, set[int]] = {}
    for name in state:
        m = regex.match(name)
        if m and (prefix is None or m["prefix"] == prefix):
            found.setdefault(m["prefix"], set()).add(int(m["l"]))
    return {k: sorted(v) for k, v in found.items()}


def _choose_prefix(found: dict[str, list[int]], layout: str) -> tuple[str, list[int]]:
    if len(found) > 1:
        raise CheckpointError(
            f"several {layout} attention stacks with prefixes {sorted(found)}; pass prefix=... to choose one"
        )
    ((prefix, layers),) = found.items()
    return prefix, layers


def _as_f64(a: Any) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def _head_norms(bias: np.ndarray | None, n_heads: int) -> np.ndarray | None:
    if bias is None:
        return None
    b = _as_f64(bias).reshape(n_heads, -1)
    return np.sqrt(np.sum(b * b, axis=1))


def _resolve_heads(config: Mapping | None, n_heads: int | None, width: int, p: int, what: str) -> tuple[int, int]:
    if n_heads is not None and (isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1):
        raise CheckpointError(f"the number of heads must be a positive integer, got {n_heads!r}")
    h = n_heads if n_heads is not None else _config_int(config, "num_attention_heads", "n_head", "num_heads", "n_heads")
    if h is None:
        raise CheckpointError(
            f"number of attention heads unknown for {what}: no config.json with num_attention_heads/n_head; "
            "pass n_heads=..."
        )
    hidden = _config_int(config, "hidden_size", "n_embd", "d_model")
    if hidden is not None and hidden != p:
        raise CheckpointError(f"config says hidden size {hidden} but the {what} weights have p = {p}")
    if width % h:
        raise CheckpointError(f"{what}: query width {width} is not divisible by {h} heads")
    d_head = width // h
    cfg_dh = _config_int(config, "head_dim", "attention_head_size")
    if cfg_dh is not None and cfg_dh != d_head and n_heads is None:
        raise CheckpointError(f"config says head_dim {cfg_dh} but weights give {width}/{h} = {d_head}")
    return h, d_head


def _get(state: Mapping, name: str) -> np.ndarray | None:
    return state[name] if name in state else None


def extract_heads(
    state: Mapping[str, Any],
    config: Mapping | str | os.PathLike | None = None,
    layout: Literal["auto", "bert", "gpt2", "generic"] = "auto",
    n_heads: int | None = None,
    *,
    prefix: str | None = None,
    generic: GenericLayout | None = None,
) -> AttentionHeads:
    """Extract per-head :math:`W_Q^h, W_K^h\\in\\mathbb R^{d_h\\times p}` from a state dict (docs/attention_rmt.md §13).

    Parameters
    ----------
    state : mapping of str -> array
        A state dict (NumPy arrays or anything ``np.asarray`` accepts).
    config : mapping or path, optional
        The model's ``config.json`` (dict or path to the file or its folder). :math:`H` is read from
        ``num_attention_heads`` (BERT) or ``n_head`` (GPT-2); ``hidden_size``/``n_embd`` is checked
        against :math:`p`.
    layout : {"auto", "bert", "gpt2", "generic"}
        * ``"bert"``: ``{prefix}encoder.layer.{l}.attention.self.query.weight`` and ``.key.weight``, shape
          :math:`(Hd_h,p)`, ``y = W x + b``; head :math:`h` = rows :math:`[hd_h,(h+1)d_h)`. LayerNorm
          feeding layer :math:`l` (post-LN): ``embeddings.LayerNorm.weight`` for :math:`l=0`, else
          ``encoder.layer.{l-1}.output.LayerNorm.weight``.
        * ``"gpt2"``: ``{prefix}h.{l}.attn.c_attn.weight`` (prefix e.g. ``transformer.``), shape
          :math:`(p,3p)`, ``y = x W + b``; Q = columns :math:`[0,p)`, K = :math:`[p,2p)`; head :math:`h`
          = column block :math:`[hd_h,(h+1)d_h)` of each, transposed. LayerNorm: ``h.{l}.ln_1.weight``.
        * ``"generic"``: described by ``generic``.
        * ``"auto"``: BERT or GPT-2 names, whichever are present.
    n_heads : int, optional
        :math:`H`, overriding the config.
    prefix : str, optional
        Name prefix to use when several attention stacks are present.
    generic : GenericLayout, optional
        Required for ``layout="generic"``.

    Returns
    -------
    AttentionHeads

    Raises
    ------
    CheckpointError
        Unrecognised layout, ambiguous prefix, unknown :math:`H`, inconsistent shapes.
    """
    if config is not None and not isinstance(config, Mapping):
        config = read_config(config)
    if layout not in ("auto", "bert", "gpt2", "generic"):
        raise ValueError(f"layout must be 'auto', 'bert', 'gpt2' or 'generic', not {layout!r}")
    if layout == "generic" or (layout == "auto" and generic is not None):
        if generic is None:
            raise CheckpointError("layout='generic' needs generic=GenericLayout(...)")
        return _extract_generic(state, config, n_heads, generic)
    bert = _find(state, _BERT_RE, prefix) if layout in ("auto", "bert") else {}
    gpt2 = _find(state, _GPT2_RE, prefix) if layout in ("auto", "gpt2") else {}
    if layout == "auto" and bert and gpt2:
        raise CheckpointError("both BERT and GPT-2 attention names found; pass layout='bert' or 'gpt2'")
    if bert:
        return _extract_bert(state, config, n_heads, *_choose_prefix(bert, "BERT"))
    if gpt2:
        return _extract_gpt2(state, config, n_heads, *_choose_prefix(gpt2, "GPT-2"))
    wanted = {"auto": "BERT or GPT-2", "bert": "BERT", "gpt2": "GPT-2"}[layout]
    sample = ", ".join(list(state)[:3])
    raise CheckpointError(
        f"no {wanted} attention weights recognised (e.g. encoder.layer.0.attention.self.query.weight or "
        f"h.0.attn.c_attn.weight); first names: {sample}; use layout='generic'"
    )


def _extract_bert(state, config, n_heads, prefix, layers) -> AttentionHeads:
    wq, wk, gains, biases = {}, {}, {}, {}
    p = h = d_head = None
    for l in layers:
        base = f"{prefix}encoder.layer.{l}.attention.self."
        q = _as_f64(state[base + "query.weight"])
        k = _get(state, base + "key.weight")
        if k is None:
            raise CheckpointError(f"missing {base}key.weight")
        k = _as_f64(k)
        if q.ndim != 2 or q.shape != k.shape:
            raise CheckpointError(f"BERT layer {l}: query {q.shape} and key {k.shape} weights differ in shape")
        if p is None:
            p = q.shape[1]
            h, d_head = _resolve_heads(config, n_heads, q.shape[0], p, "BERT")
        if q.shape != (h * d_head, p):
            raise CheckpointError(f"BERT layer {l}: query weight shape {q.shape} != {(h * d_head, p)}")
        wq[l] = q.reshape(h, d_head, p)
        wk[l] = k.reshape(h, d_head, p)
        ln = f"{prefix}embeddings.LayerNorm" if l == 0 else f"{prefix}encoder.layer.{l - 1}.output.LayerNorm"
        g = _get(state, ln + ".weight")
        g = _get(state, ln + ".gamma") if g is None else g
        gains[l] = None if g is None else _as_f64(g).reshape(p)
        biases[l] = {
            "query": _head_norms(_get(state, base + "query.bias"), h),
            "key": _head_norms(_get(state, base + "key.bias"), h),
        }
    return AttentionHeads("bert", p, h, d_head, list(layers), wq, wk, gains, biases, prefix)


def _extract_gpt2(state, config, n_heads, prefix, layers) -> AttentionHeads:
    wq, wk, gains, biases = {}, {}, {}, {}
    p = h = d_head = None
    for l in layers:
        w = _as_f64(state[f"{prefix}h.{l}.attn.c_attn.weight"])
        if w.ndim != 2 or w.shape[1] != 3 * w.shape[0]:
            raise CheckpointError(f"GPT-2 layer {l}: c_attn.weight has shape {w.shape}, expected (p, 3p)")
        if p is None:
            p = w.shape[0]
            h, d_head = _resolve_heads(config, n_heads, p, p, "GPT-2")
        if w.shape != (p, 3 * p):
            raise CheckpointError(f"GPT-2 layer {l}: c_attn.weight shape {w.shape} != {(p, 3 * p)}")
        # y = x W: column block j of W is output coordinate j; head h = columns [h d, (h+1) d), transposed.
        wq[l] = w[:, :p].T.reshape(h, d_head, p).copy()
        wk[l] = w[:, p : 2 * p].T.reshape(h, d_head, p).copy()
        g = _get(state, f"{prefix}h.{l}.ln_1.weight")
        gains[l] = None if g is None else _as_f64(g).reshape(p)
        b = _get(state, f"{prefix}h.{l}.attn.c_attn.bias")
        b = None if b is None else _as_f64(b).reshape(-1)
        biases[l] = {
            "query": None if b is None else _head_norms(b[:p], h),
            "key": None if b is None else _head_norms(b[p : 2 * p], h),
        }
    return AttentionHeads("gpt2", p, h, d_head, list(layers), wq, wk, gains, biases, prefix)


def _pattern_regex(pattern: str) -> re.Pattern:
    if "{l}" not in pattern:
        raise CheckpointError(f"generic pattern {pattern!r} lacks the layer placeholder {{l}}")
    parts = pattern.split("{l}")
    return re.compile("^" + r"(\d+)".join(re.escape(s) for s in parts) + "$")


def _extract_generic(state, config, n_heads, spec: GenericLayout) -> AttentionHeads:
    rx = _pattern_regex(spec.query)
    layers = sorted({int(m.group(1)) for n in state if (m := rx.match(n))})
    if not layers:
        raise CheckpointError(f"no tensor matches the generic query pattern {spec.query!r}")
    if spec.orientation not in ("out_in", "in_out"):
        raise ValueError(f"orientation must be 'out_in' or 'in_out', not {spec.orientation!r}")
    wq, wk, gains, biases = {}, {}, {}, {}
    p = h = d_head = None

    def out_in(a: np.ndarray) -> np.ndarray:
        a = _as_f64(a)
        if a.ndim != 2:
            raise CheckpointError(f"generic layout: expected a matrix, got shape {a.shape}")
        return a if spec.orientation == "out_in" else a.T

    for l in layers:
        q = out_in(state[spec.query.format(l=l)])
        qb = _get(state, spec.query_bias.format(l=l)) if spec.query_bias else None
        kb = None
        if spec.key is None:
            if q.shape[0] % 3:
                raise CheckpointError(f"generic fused weight of layer {l}: output size {q.shape[0]} not 3 blocks")
            n = q.shape[0] // 3
            q, k = q[:n], q[n : 2 * n]
            if qb is not None:
                qb = _as_f64(qb).reshape(-1)
                qb, kb = qb[:n], qb[n : 2 * n]
        else:
            kname = spec.key.format(l=l)
            if kname not in state:
                raise CheckpointError(f"generic layout: missing key weight {kname}")
            k = out_in(state[kname])
            kb = _get(state, spec.key_bias.format(l=l)) if spec.key_bias else None
        if q.shape != k.shape:
            raise CheckpointError(f"generic layer {l}: query {q.shape} and key {k.shape} shapes differ")
        if p is None:
            p = q.shape[1]
            h, d_head = _resolve_heads(config, n_heads, q.shape[0], p, "generic")
        if q.shape != (h * d_head, p):
            raise CheckpointError(f"generic layer {l}: query shape {q.shape} != {(h * d_head, p)}")
        wq[l] = q.reshape(h, d_head, p).copy()
        wk[l] = k.reshape(h, d_head, p).copy()
        gname = None
        if callable(spec.ln_gain):
            gname = spec.ln_gain(l)
        elif spec.ln_gain:
            gname = spec.ln_gain.format(l=l, l_prev=l - 1)
        g = _get(state, gname) if gname else None
        gains[l] = None if g is None else _as_f64(g).reshape(p)
        biases[l] = {"query": _head_norms(qb, h), "key": _head_norms(kb, h)}
    return AttentionHeads("generic", p, h, d_head, layers, wq, wk, gains, biases, "")



def embedding_mean(state: Mapping[str, Any]) -> np.ndarray:
    """Mean token embedding (a data direction for item 4): ``*word_embeddings.weight`` or ``*wte.weight``.

    Raises
    ------
    CheckpointError
        No token-embedding matrix found.
    """
    for name in state:
        if name.endswith("word_embeddings.weight") or name.endswith("wte.weight") or name == "wte.weight":
            return _as_f64(state[name]).mean(axis=0)
    raise CheckpointError("no token embedding (word_embeddings.weight / wte.weight) to compute mu_hat from")

