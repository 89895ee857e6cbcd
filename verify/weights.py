r"""Diagnostics of real pretrained attention weights: is :math:`W_K^\top W_Q` a scaled identity plus low rank?

Spec §13 ("Real pretrained weights") tests the paper's *Assumption 1* (spec §2),
:math:`W_K^\top W_Q = I_p + L` with :math:`L` of fixed rank, on checkpoints the user has locally.
Nothing is ever downloaded.

Pipeline
--------
1. :func:`load_state_dict` reads a checkpoint (``.safetensors`` with NumPy alone or the ``safetensors``
   package; ``.bin``/``.pt`` with ``torch.load(..., weights_only=True)`` on CPU; a Hugging Face folder).
2. :func:`extract_heads` finds the per-head query/key matrices
   :math:`W_Q^h, W_K^h\in\mathbb R^{d_h\times p}` (BERT, GPT-2 or a user-described generic layout).
3. The scaled per-head product (rows = keys, columns = queries)

   .. math::

       B_h = \sqrt{p/d_h}\,(W_K^h)^\top W_Q^h ,\qquad
       \frac{(W_K^h x_i)^\top (W_Q^h x_j)}{\sqrt{d_h}} = \frac{x_i^\top B_h x_j}{\sqrt p},

   i.e. the paper's normalisation for tokens with unit-variance coordinates, and the layer sum
   :math:`B=\sum_h B_h` (a proxy: :math:`W_O` mixes the heads). Optionally the gain :math:`g` of the
   LayerNorm feeding the block is folded in, :math:`B\leftarrow\operatorname{diag}(g)\,B\,\operatorname{diag}(g)`.
4. :func:`head_diagnostics` computes spec §13 items 1–4 for one matrix; :func:`fit_identity_plus_low_rank`
   is item 3,

   .. math::

       \rho_r=\min_{s\in\mathbb R,\ \operatorname{rank}L\le r}\frac{\|B-sI-L\|_F}{\|B\|_F}
             =\min_s\frac{\sqrt{\phi_r(s)}}{\|B\|_F},\qquad
       \phi_r(s)=\sum_{k>r}\sigma_k(B-sI)^2 .

5. :func:`analyze_checkpoint` runs everything and returns a :class:`WeightsReport`
   (tidy CSV, JSON with parameters and versions, a PNG, a text table).

Example
-------
>>> from verify.weights import analyze_checkpoint            # doctest: +SKIP
>>> rep = analyze_checkpoint("path/to/gpt2")                    # doctest: +SKIP
>>> print(rep.format_table()); rep.write("out/gpt2-weights")    # doctest: +SKIP

References
----------
Liao, Liu, Hou, Zou, Ling, *On the Interpolation Error of Nonlinear Attention versus Linear Regression*,
arXiv:2506.18656 (Assumption 1 and its check on GPT-2). Eckart–Young–Mirsky theorem for the rank-r step.
"""
from __future__ import annotations

import csv
import importlib.util
import json
import math
import os
import platform
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from verify import _safetensors

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
    "DEFAULT_RANKS",
]

#: Default ranks of the identity-plus-rank-r fit (spec §13 item 3); ``"d_h"`` is the head dimension.
DEFAULT_RANKS: tuple[int | str, ...] = (0, 1, 2, 4, 8, 16, "d_h", 64)

_EPS = np.finfo(np.float64).eps
_N_GRID_LARGE = 41  # points of the guard scan of phi_r(s) when B - sI costs a p x p SVD (m > 64)
_N_GRID_SMALL = 201  # ... when the (reduced) problem has size m <= 64 (single heads, small p)
_N_TOP = 4  # singular values / alignments of L put in each tidy row


# --------------------------------------------------------------------------------------------------
# errors and loading
# --------------------------------------------------------------------------------------------------
class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable or not recognised.

    The message is always a single line (whitespace, newlines included, is collapsed).
    """

    def __init__(self, message: object) -> None:
        super().__init__(" ".join(str(message).split()))


def read_safetensors(
    path: str | os.PathLike,
    *,
    names: Iterable[str] | None = None,
    backend: Literal["auto", "numpy", "safetensors"] = "auto",
) -> dict[str, np.ndarray]:
    """Read a ``.safetensors`` file into NumPy arrays.

    Parameters
    ----------
    path : path-like
        The file.
    names : iterable of str, optional
        Read only these tensors.
    backend : {"auto", "numpy", "safetensors"}
        ``"numpy"``: the dependency-free reader of :mod:`verify._safetensors` (8-byte little-endian header
        length :math:`N`, :math:`N` bytes of JSON, raw buffer). ``"safetensors"``: the ``safetensors``
        package (BF16 tensors, which NumPy cannot hold, are decoded by the NumPy reader). ``"auto"``: the
        package when importable, else NumPy. Both give identical arrays.

    Returns
    -------
    dict of str -> ndarray
        ``F32``/``F64``/``F16`` keep their dtype, ``BF16`` becomes ``float32`` (exact), integers stay
        integers.

    Raises
    ------
    CheckpointError
        Missing, truncated or corrupt file, or an unsupported dtype (spec §13 "Loading").
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"safetensors file not found: {path}")
    if backend not in ("auto", "numpy", "safetensors"):
        raise ValueError(f"backend must be 'auto', 'numpy' or 'safetensors', not {backend!r}")
    use_package = backend == "safetensors"
    if backend == "auto":
        use_package = importlib.util.find_spec("safetensors") is not None
    try:
        if not use_package:
            return _safetensors.read_safetensors_numpy(path, names)
        return _read_with_package(path, names)
    except CheckpointError:
        raise
    except (_safetensors.SafetensorsFormatError, OSError) as exc:
        raise CheckpointError(f"cannot read {path}: {exc}") from None
    except Exception as exc:  # errors of the safetensors package (SafetensorError, TypeError, ...)
        raise CheckpointError(f"cannot read {path}: {type(exc).__name__}: {exc}") from None


def _read_with_package(path: Path, names: Iterable[str] | None) -> dict[str, np.ndarray]:
    from safetensors import safe_open

    # The package memory-maps without checking the file length first: validate the header ourselves so
    # that a truncated file fails cleanly.
    header, _, _ = _safetensors.read_header(path)
    wanted = list(header) if names is None else list(names)
    for n in wanted:
        if n not in header:
            raise CheckpointError(f"{path.name}: no tensor named {n!r}")
    native = [n for n in wanted if header[n]["dtype"] != "BF16"]
    out: dict[str, np.ndarray] = {}
    with safe_open(os.fspath(path), framework="numpy") as f:
        for n in native:
            out[n] = np.array(f.get_tensor(n))
    bf16 = [n for n in wanted if header[n]["dtype"] == "BF16"]
    if bf16:
        out.update(_safetensors.read_safetensors_numpy(path, bf16))
    return {n: out[n] for n in wanted}


def _torch_load(path: Path) -> dict[str, np.ndarray]:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency of the project
        raise CheckpointError(f"reading {path.name} needs PyTorch, which is not installed") from None
    try:
        obj = torch.load(os.fspath(path), map_location="cpu", weights_only=True)
    except Exception as exc:
        raise CheckpointError(f"cannot read {path} with torch.load: {type(exc).__name__}: {exc}") from None
    for key in ("state_dict", "model_state_dict", "model"):
        if isinstance(obj, Mapping) and key in obj and isinstance(obj[key], Mapping):
            if not any(isinstance(v, torch.Tensor) for v in obj.values()):
                obj = obj[key]
                break
    if not isinstance(obj, Mapping):
        raise CheckpointError(f"{path} does not hold a state dict (got {type(obj).__name__})")
    out: dict[str, np.ndarray] = {}
    for k, v in obj.items():
        if isinstance(v, torch.Tensor):
            t = v.detach().cpu()
            if t.dtype in (torch.bfloat16,) or (t.is_floating_point() and t.element_size() == 1):
                t = t.float()
            out[str(k)] = t.numpy().copy()
    if not out:
        raise CheckpointError(f"{path} holds no tensors")
    return out


def _load_index(path: Path) -> dict[str, np.ndarray]:
    """Sharded checkpoint: ``*.index.json`` with a ``weight_map`` name -> shard file."""
    try:
        index = json.loads(path.read_text())
        shards = sorted(set(index["weight_map"].values()))
    except Exception as exc:
        raise CheckpointError(f"cannot read shard index {path}: {type(exc).__name__}: {exc}") from None
    out: dict[str, np.ndarray] = {}
    for shard in shards:
        out.update(load_state_dict(path.parent / shard))
    return out


def load_state_dict(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Load a checkpoint into a dict of NumPy arrays (CPU only).

    Parameters
    ----------
    path : path-like
        * ``*.safetensors``: :func:`read_safetensors`;
        * ``*.bin``, ``*.pt``, ``*.pth``, ``*.ckpt``: ``torch.load(path, map_location="cpu",
          weights_only=True)``; a ``{"state_dict": ...}``/``{"model": ...}`` wrapper is unwrapped; bfloat16
          and FP8 tensors are converted to float32;
        * ``*.index.json``: a sharded checkpoint (every shard is read);
        * a directory: the first of ``model.safetensors``, ``model.safetensors.index.json``,
          ``pytorch_model.bin``, ``pytorch_model.bin.index.json`` found in it.

    Returns
    -------
    dict of str -> ndarray

    Raises
    ------
    CheckpointError
        Missing path, unknown extension, nothing recognisable in a directory, or a corrupt file.
    """
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint not found: {path}")
    if path.is_dir():
        for name in (
            "model.safetensors",
            "model.safetensors.index.json",
            "pytorch_model.bin",
            "pytorch_model.bin.index.json",
        ):
            if (path / name).is_file():
                return load_state_dict(path / name)
        raise CheckpointError(
            f"no model.safetensors or pytorch_model.bin (or their .index.json) in directory {path}"
        )
    name = path.name.lower()
    if name.endswith(".safetensors"):
        return read_safetensors(path)
    if name.endswith(".index.json"):
        return _load_index(path)
    if name.endswith((".bin", ".pt", ".pth", ".ckpt")):
        return _torch_load(path)
    raise CheckpointError(
        f"unrecognised checkpoint file {path.name} (expected .safetensors, .bin, .pt, .pth, .ckpt or a folder)"
    )


def read_config(path: str | os.PathLike) -> dict | None:
    """Return the ``config.json`` next to a checkpoint (inside it, for a directory), or ``None``.

    Raises
    ------
    CheckpointError
        The file exists but is not a JSON object.
    """
    path = Path(path)
    cfg = path / "config.json" if path.is_dir() else path.parent / "config.json"
    if path.is_file() and path.name == "config.json":
        cfg = path
    if not cfg.is_file():
        return None
    try:
        out = json.loads(cfg.read_text())
    except Exception as exc:
        raise CheckpointError(f"cannot parse {cfg}: {type(exc).__name__}: {exc}") from None
    if not isinstance(out, dict):
        raise CheckpointError(f"{cfg} is not a JSON object")
    return out


# --------------------------------------------------------------------------------------------------
# layouts
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GenericLayout:
    """User-described layout of query/key weights (spec §13, *Generic*).

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
    """Per-head query/key weights of a checkpoint (spec §13 "Layouts").

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

    def layer_sum(self, layer: int, *, fold_layernorm: bool = False) -> np.ndarray:
        r"""Layer sum :math:`B=\sum_hB_h=\sqrt{p/d_h}\,W_K^\top W_Q` (stacked heads)."""
        wk = self.wk[layer].reshape(-1, self.p)
        wq = self.wq[layer].reshape(-1, self.p)
        b = math.sqrt(self.p / self.d_head) * (wk.T @ wq)
        return self._fold(layer, b) if fold_layernorm else b

    def _fold(self, layer: int, b: np.ndarray) -> np.ndarray:
        g = self.ln_gain.get(layer)
        if g is None:
            raise CheckpointError(
                f"fold_layernorm: no LayerNorm gain found for layer {layer} ({self.layout} layout)"
            )
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
    """Extract per-head :math:`W_Q^h, W_K^h\\in\\mathbb R^{d_h\\times p}` from a state dict (spec §13).

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


# --------------------------------------------------------------------------------------------------
# identity-plus-low-rank fit (spec §13 item 3)
# --------------------------------------------------------------------------------------------------
@dataclass
class FitResult:
    r"""Best identity-plus-rank-r fit :math:`B\approx s^\star I+L` (spec §13 item 3).

    Attributes
    ----------
    s : float
        :math:`s^\star`.
    rho : float
        :math:`\rho_r=\|B-s^\star I-L\|_F/\|B\|_F` (0 for :math:`B=0`).
    identity_share : float
        :math:`|s^\star|\sqrt p/\|B\|_F` (the share of :math:`\|B\|_F` carried by the identity part).
    L_u, L_s, L_v : ndarray, shapes (p, k), (k,), (p, k)
        :math:`L=L_u\operatorname{diag}(L_s)L_v^\top`, :math:`k=\min(r,p)`; columns are the singular pairs
        :math:`(u_k,v_k)` of :math:`L` ordered by decreasing :math:`\sigma_k`.
    iterations : int
        Alternation steps (SVDs) of the run that produced the result (0 for closed forms).
    r : int
        The rank constraint.
    method : str
        ``"closed-form"`` (:math:`r=0`: :math:`s^\star=\operatorname{tr}B/p`), ``"exact-rank"``
        (:math:`r\ge\operatorname{rank}B`: :math:`s^\star=0`, :math:`\rho_r=0`), ``"alternation"`` (from
        :math:`\operatorname{tr}B/p`), ``"scan"`` (the guard scan found a better basin), ``"warm-start"``
        (started from the fit at a lower rank), ``"zero"`` (:math:`s=0` ties the optimum); a suffix
        ``"+brent"`` marks a final bounded Brent polish of :math:`\phi_r` after an alternation that hit
        ``max_iter``.
    converged : bool
        The alternation stopped on the relative-decrease tolerance (or the Brent polish succeeded).
    phi : float
        :math:`\phi_r(s^\star)=\|B-s^\star I-L\|_F^2`.
    """

    s: float
    rho: float
    identity_share: float
    L_u: np.ndarray
    L_s: np.ndarray
    L_v: np.ndarray
    iterations: int
    r: int = 0
    method: str = "alternation"
    converged: bool = True
    phi: float = 0.0

    @property
    def L(self) -> np.ndarray:
        """The low-rank part :math:`L` as a dense matrix."""
        return (self.L_u * self.L_s) @ self.L_v.T


class _ShiftedSpectrum:
    r"""Singular triplets of :math:`B-sI` for many shifts :math:`s`, cheaply when :math:`B` is low rank.

    If :math:`\operatorname{rank}B=k` and :math:`\mathcal V=\operatorname{span}(U_k,V_k)` has dimension
    :math:`m<p`, then :math:`\mathcal V` and :math:`\mathcal V^\perp` are invariant under :math:`B-sI`,
    which acts as :math:`-sI` on :math:`\mathcal V^\perp`. In a basis :math:`Q=[Q_m,Q_\perp]`,
    :math:`Q^\top(B-sI)Q=\operatorname{diag}(C-sI_m,\,-sI_{p-m})` with :math:`C=Q_m^\top BQ_m`, so the
    singular values are those of :math:`C-sI_m` plus :math:`|s|` with multiplicity :math:`p-m`.
    A single head (:math:`m\le2d_h`) then costs :math:`O(d_h^3)` per shift instead of :math:`O(p^3)`.
    """

    def __init__(self, B: np.ndarray) -> None:
        B = np.asarray(B, dtype=np.float64)
        if B.ndim != 2 or B.shape[0] != B.shape[1] or B.shape[0] == 0:
            raise ValueError(f"B must be a non-empty square matrix, got shape {B.shape}")
        if not np.all(np.isfinite(B)):
            raise ValueError("B has non-finite entries")
        self.B = B
        self.p = p = B.shape[0]
        U, sv, Vt = np.linalg.svd(B)
        self.singular_values = sv
        self.norm = float(np.sqrt(np.sum(sv * sv)))
        self.trace = float(np.trace(B))
        tol = sv[0] * p * _EPS if sv[0] > 0 else 0.0
        self.rank = k = int(np.sum(sv > tol))
        self.Q: np.ndarray | None = None
        self.m = p
        self.C = B
        if 0 < k and 2 * k < p:
            basis = np.concatenate([U[:, :k], Vt[:k].T], axis=1)
            Ub, sb, _ = np.linalg.svd(basis, full_matrices=True)
            m = int(np.sum(sb > 1e-8 * sb[0]))
            if m < p:
                self.Q, self.m = Ub, m
                self.C = Ub[:, :m].T @ B @ Ub[:, :m]

    def svals(self, s: float) -> np.ndarray:
        """All :math:`p` singular values of :math:`B-sI`, descending."""
        c = np.linalg.svd(self.C - s * np.eye(self.m), compute_uv=False)
        if self.Q is None:
            return c
        return np.sort(np.concatenate([c, np.full(self.p - self.m, abs(s))]))[::-1]

    def phi(self, s: float, r: int) -> float:
        r"""Profile objective :math:`\phi_r(s)=\sum_{k>r}\sigma_k(B-sI)^2`."""
        sv = self.svals(s)
        return float(np.sum(sv[r:] ** 2))

    def top(self, s: float, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """Top-``r`` singular triplets ``(U, sigma, V)`` of :math:`B-sI` and :math:`\\phi_r(s)`."""
        Uc, c, Vtc = np.linalg.svd(self.C - s * np.eye(self.m))
        if self.Q is None:
            return Uc[:, :r], c[:r], Vtc[:r].T, float(np.sum(c[r:] ** 2))
        values = np.concatenate([c, np.full(self.p - self.m, abs(s))])
        order = np.argsort(-values, kind="stable")
        sel = order[:r]
        Qm = self.Q[:, : self.m]
        U = np.empty((self.p, len(sel)))
        V = np.empty((self.p, len(sel)))
        sign = -1.0 if s > 0 else 1.0
        for j, idx in enumerate(sel):
            if idx < self.m:
                U[:, j] = Qm @ Uc[:, idx]
                V[:, j] = Qm @ Vtc[idx]
            else:  # (B - sI) w = -s w on the complement
                w = self.Q[:, idx]
                U[:, j] = sign * w
                V[:, j] = w
        return U, values[sel], V, float(np.sum(values[order[r:]] ** 2))


def _alternate(prob: _ShiftedSpectrum, r: int, s: float, tol: float, max_iter: int):
    """Alternating minimisation from ``s``; returns ``(phi, s, U, sig, V, iterations, converged)``.

    Each step: :math:`L\\leftarrow` rank-r truncated SVD of :math:`B-sI` (Eckart–Young), then
    :math:`s\\leftarrow\\operatorname{tr}(B-L)/p`. The objective is non-increasing; the best pair
    :math:`(s, L(s))` seen is returned.
    """
    floor = (prob.p * _EPS * prob.norm) ** 2
    best = None
    prev = None
    converged = False
    it = 0
    while it < max_iter:
        U, sig, V, phi = prob.top(s, r)
        it += 1
        if best is None or phi < best[0]:
            best = (phi, s, U, sig, V)
        if phi <= floor or (prev is not None and prev - phi <= tol * prev):
            converged = True
            break
        prev = phi
        tr_L = float(np.sum(sig * np.einsum("ij,ij->j", U, V)))
        s = (prob.trace - tr_L) / prob.p
    return (*best, it, converged)


def _grid(prob: _ShiftedSpectrum, r_max: int, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Shifts and singular values for the guard scan.

    Any minimiser obeys :math:`|s^\star|\le2\|B\|_F/\sqrt{p-r}` (Weyl: :math:`\sigma_{i}(B-sI)\ge|s|-
    \sigma_{p+1-i}(B)`, so :math:`\sqrt{\phi_r(s)}\ge\sqrt{p-r}\,|s|-\|B\|_F`, while
    :math:`\phi_r(s^\star)\le\phi_r(0)\le\|B\|_F^2`); the grid spans that interval for ``r_max``.
    """
    if n is None:
        n = _N_GRID_SMALL if prob.m <= 64 else _N_GRID_LARGE
    if n < 3:
        raise ValueError(f"scan_points must be >= 3, got {n}")
    b = 2.0 * prob.norm / math.sqrt(max(prob.p - r_max, 1))
    grid = np.linspace(-b, b, int(n))
    return grid, np.array([prob.svals(g) for g in grid])


def _make_fit(prob: _ShiftedSpectrum, r: int, phi, s, U, sig, V, it, conv, method) -> FitResult:
    nb = prob.norm
    phi = max(float(phi), 0.0)
    return FitResult(
        s=float(s),
        rho=math.sqrt(phi) / nb if nb > 0 else 0.0,
        identity_share=abs(s) * math.sqrt(prob.p) / nb if nb > 0 else 0.0,
        L_u=U,
        L_s=np.asarray(sig, dtype=np.float64),
        L_v=V,
        iterations=int(it),
        r=int(r),
        method=method,
        converged=bool(conv),
        phi=phi,
    )


def _fit(
    prob: _ShiftedSpectrum,
    r: int,
    tol: float,
    max_iter: int,
    scan: tuple[np.ndarray, np.ndarray] | None = None,
    warm: float | None = None,
    scan_points: int | None = None,
) -> FitResult:
    from scipy.optimize import minimize_scalar

    p = prob.p
    if r < 0:
        raise ValueError(f"rank r must be >= 0, got {r}")
    r = min(int(r), p)
    if r == 0:  # phi_0(s) = ||B||^2 - 2 s tr B + p s^2: closed form
        s = prob.trace / p
        phi = prob.norm**2 - p * s * s
        e = np.empty((p, 0))
        return _make_fit(prob, 0, phi, s, e, np.empty(0), e, 0, True, "closed-form")
    if r >= prob.rank:  # s = 0 and L = truncation of B is exact
        U, sig, V, phi = prob.top(0.0, r)
        return _make_fit(prob, r, phi, 0.0, U, sig, V, 0, True, "exact-rank")

    cands = []
    res = _alternate(prob, r, prob.trace / p, tol, max_iter)
    cands.append((res, "alternation"))
    best_phi = res[0]

    # guard: bounded 1-D scan of phi_r
    if scan is None:
        scan = _grid(prob, r, scan_points)
    grid, gsv = scan
    gphi = np.sum(gsv[:, r:] ** 2, axis=1)
    n = len(grid)
    local = [i for i in range(n) if (i == 0 or gphi[i] <= gphi[i - 1]) and (i == n - 1 or gphi[i] <= gphi[i + 1])]
    local.sort(key=lambda i: gphi[i])
    tried = 0
    for i in local:
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, n - 1)]
        if lo <= res[1] <= hi:
            continue  # the alternation already sits in this basin
        if gphi[i] > 1.1 * best_phi + (p * _EPS * prob.norm) ** 2 or tried >= 3:
            break
        tried += 1
        opt = minimize_scalar(
            lambda x: prob.phi(x, r), bounds=(lo, hi), method="bounded",
            options={"xatol": 1e-12 * (1.0 + abs(grid[i]))},
        )
        r2 = _alternate(prob, r, float(opt.x), tol, max_iter)
        cands.append((r2, "scan"))
        best_phi = min(best_phi, r2[0])

    if warm is not None and prob.phi(warm, r) < best_phi:
        r3 = _alternate(prob, r, float(warm), tol, max_iter)
        cands.append((r3, "warm-start"))

    (phi, s, U, sig, V, it, conv), method = min(cands, key=lambda c: c[0][0])
    if not conv:  # slow linear convergence (e.g. phi -> 0 at a real eigenvalue): polish phi_r by Brent
        h = grid[1] - grid[0]
        opt = minimize_scalar(
            lambda x: prob.phi(x, r), bounds=(s - h, s + h), method="bounded",
            options={"xatol": 1e-14 * (1.0 + abs(s)), "maxiter": 200},
        )
        if opt.fun < phi:
            U, sig, V, phi = prob.top(float(opt.x), r)
            s, method, conv = float(opt.x), method + "+brent", bool(opt.success)
    if s != 0.0 and prob.phi(0.0, r) <= phi + (p * _EPS * prob.norm) ** 2:  # ties go to s = 0
        U, sig, V, phi = prob.top(0.0, r)
        s, method = 0.0, "zero"
    return _make_fit(prob, r, phi, s, U, sig, V, it, conv, method)


def fit_identity_plus_low_rank(
    B: np.ndarray, r: int, *, tol: float = 1e-10, max_iter: int = 500, scan_points: int | None = None
) -> FitResult:
    r"""Best fit :math:`B\approx sI+L`, :math:`\operatorname{rank}L\le r`, in Frobenius norm (spec §13 item 3).

    .. math::

        \rho_r=\min_{s,\ \operatorname{rank}L\le r}\frac{\|B-sI-L\|_F}{\|B\|_F}
              =\frac{\min_s\sqrt{\phi_r(s)}}{\|B\|_F},\qquad
        \phi_r(s)=\sum_{k>r}\sigma_k(B-sI)^2 .

    Parameters
    ----------
    B : ndarray, shape (p, p)
    r : int
        Rank of :math:`L` (values :math:`\ge p` are treated as :math:`p`).
    tol : float
        Relative-decrease tolerance of the alternation.
    max_iter : int
        Maximal alternation steps per start.
    scan_points : int, optional
        Points of the guard scan; default 201 when the (reduced) problem has size :math:`m\le64`, else 41.

    Returns
    -------
    FitResult

    Notes
    -----
    Algorithm (spec §13 item 3):

    1. Alternate :math:`L\leftarrow` rank-:math:`r` truncated SVD of :math:`B-sI` (Eckart–Young) and
       :math:`s\leftarrow\operatorname{tr}(B-L)/p`, from :math:`s=\operatorname{tr}B/p`, until the relative
       decrease of :math:`\phi_r` is below ``tol`` (monotone: each half-step minimises exactly). A fixed
       point satisfies :math:`\phi_r'(s)=-2\sum_{k>r}\sigma_k u_k^\top v_k=0`.
    2. Guard against local minima: a uniform scan of :math:`\phi_r` on
       :math:`|s|\le2\|B\|_F/\sqrt{p-r}` (an interval containing every minimiser), then a bounded Brent
       refinement (``scipy.optimize.minimize_scalar``) in the brackets of the best grid minima outside
       the alternation's basin (at most 3, within 10 % of its value), each polished by step 1.
    3. Keep the best; :math:`s=0` is preferred when it ties (to rounding).

    Special cases are exact: :math:`r=0` gives :math:`s^\star=\operatorname{tr}B/p`;
    :math:`r\ge\operatorname{rank}B` gives :math:`s^\star=0,\ \rho_r=0` (e.g. a single head and
    :math:`r\ge d_h`).

    The scan is a guard, not a proof of global optimality: two basins of :math:`\phi_r` closer than the
    grid spacing can be confused (this happens for nearly symmetric matrices with clustered eigenvalues).

    Cost: one SVD of :math:`B`, the scan (singular values only) and a few full SVDs of :math:`B-sI` per
    start; for a rank-:math:`k` matrix with :math:`2k<p` every SVD is of size :math:`m\le2k` (a single head:
    :math:`2d_h`). Accuracy: :math:`\phi_r` to the relative tolerance ``tol``; :math:`s^\star` to the
    flatness of :math:`\phi_r` near its minimum.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); u, v = rng.standard_normal((2, 30))
    >>> fit = fit_identity_plus_low_rank(0.7 * np.eye(30) + np.outer(u, v), 1)
    >>> round(fit.s, 8), fit.rho < 1e-8
    (0.7, True)
    """
    return _fit(_ShiftedSpectrum(B), int(r), tol, max_iter, scan_points=scan_points)


def _resolve_ranks(ranks: Iterable[int | str], d_head: int | None) -> list[int]:
    out = set()
    for r in ranks:
        if isinstance(r, str):
            if r != "d_h":
                raise ValueError(f"rank entries must be integers or 'd_h', not {r!r}")
            if d_head is not None:
                out.add(int(d_head))
        else:
            if int(r) < 0:
                raise ValueError(f"ranks must be >= 0, got {r}")
            out.add(int(r))
    return sorted(out)


def _unit(mu: Any, p: int) -> np.ndarray:
    mu = _as_f64(mu).reshape(-1)
    if mu.shape != (p,):
        raise ValueError(f"mu_hat must have shape ({p},), got {mu.shape}")
    n = np.linalg.norm(mu)
    if not n > 0:
        raise ValueError("mu_hat must be non-zero")
    return mu / n


def head_diagnostics(
    B: np.ndarray,
    ranks: Iterable[int | str] = DEFAULT_RANKS,
    *,
    d_head: int | None = None,
    mu_hat: np.ndarray | None = None,
    tol: float = 1e-10,
    max_iter: int = 500,
    scan_points: int | None = None,
) -> dict:
    r"""Spec §13 diagnostics 1–4 of one matrix (a head's :math:`B_h` or a layer sum :math:`B`).

    Parameters
    ----------
    B : ndarray, shape (p, p)
    ranks : iterable of int or "d_h"
        Ranks of the identity-plus-rank-r fit; ``"d_h"`` becomes ``d_head`` (dropped when ``d_head`` is
        ``None``). Deduplicated and sorted; each fit is warm-started from the previous rank's
        :math:`s^\star` when that is better, so :math:`\rho_r` is non-increasing in :math:`r` by construction.
    d_head : int, optional
    mu_hat : ndarray, shape (p,), optional
        Data direction :math:`\hat\mu` (normalised here) for item 4.
    tol, max_iter, scan_points
        Passed to :func:`fit_identity_plus_low_rank` (the scan is computed once and shared by all ranks).

    Returns
    -------
    dict
        ``p``, ``fro_norm`` :math:`\|B\|_F`, ``spectral_norm``, ``singular_values`` (all :math:`p`, descending),
        ``numerical_rank`` (:math:`\sigma_k>p\,\varepsilon\,\sigma_1`), ``participation_ratio``
        :math:`(\sum\sigma)^2/\sum\sigma^2`, ``trace_over_p`` :math:`\operatorname{tr}B/p`,
        ``sym_fro_ratio`` :math:`\|S\|_F/\|B\|_F` with :math:`S=(B+B^\top)/2`, ``sym_eig_min``,
        ``sym_eig_max``, ``sym_frac_negative`` (eigenvalues of :math:`S`), and ``fits``: a list of dicts,
        one per rank, with ``r``, ``s_star``, ``rho``, ``identity_share``, ``L_singular_values``,
        ``iterations``, ``method``, ``fit`` (the :class:`FitResult`) and, with ``mu_hat``, ``alignment``
        :math:`[(\hat\mu^\top u_k)(\hat\mu^\top v_k)]_k` (the analogue of :math:`\rho_K\rho_Q`) and
        ``mu_L_mu`` :math:`\hat\mu^\top L\hat\mu=\sum_k\sigma_k(\hat\mu^\top u_k)(\hat\mu^\top v_k)`.
    """
    prob = _ShiftedSpectrum(B)
    p = prob.p
    sv = prob.singular_values
    nb = prob.norm
    S = 0.5 * (prob.B + prob.B.T)
    eig = np.linalg.eigvalsh(S)
    rs = _resolve_ranks(ranks, d_head)
    mu = None if mu_hat is None else _unit(mu_hat, p)
    out: dict[str, Any] = {
        "p": p,
        "fro_norm": nb,
        "spectral_norm": float(sv[0]),
        "singular_values": sv.tolist(),
        "numerical_rank": prob.rank,
        "participation_ratio": float(np.sum(sv) ** 2 / np.sum(sv**2)) if nb > 0 else 0.0,
        "trace_over_p": prob.trace / p,
        "sym_fro_ratio": float(np.linalg.norm(S) / nb) if nb > 0 else float("nan"),
        "sym_eig_min": float(eig[0]),
        "sym_eig_max": float(eig[-1]),
        "sym_frac_negative": float(np.mean(eig < 0)),
        "fits": [],
    }
    need_scan = [r for r in rs if 0 < min(r, p) < prob.rank]
    scan = _grid(prob, max(need_scan), scan_points) if need_scan else None
    warm = None
    for r in rs:
        fit = _fit(prob, r, tol, max_iter, scan=scan, warm=warm, scan_points=scan_points)
        warm = fit.s
        entry = {
            "r": r,
            "s_star": fit.s,
            "rho": fit.rho,
            "identity_share": fit.identity_share,
            "L_singular_values": fit.L_s.tolist(),
            "iterations": fit.iterations,
            "method": fit.method,
            "fit": fit,
        }
        if mu is not None:
            a = (mu @ fit.L_u) * (mu @ fit.L_v)
            entry["alignment"] = a.tolist()
            entry["mu_L_mu"] = float(np.sum(fit.L_s * a))
        out["fits"].append(entry)
    return out


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


# --------------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------------
def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for dist in ("attnlimits", "numpy", "scipy", "torch", "safetensors", "matplotlib"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _clean(x: Any) -> Any:
    """JSON-safe value: numpy scalars to Python, NaN/inf to None."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return _clean(x.tolist())
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


@dataclass
class WeightsReport:
    """Result of :func:`analyze_checkpoint` (spec §13).

    Attributes
    ----------
    rows : list of dict
        Tidy rows, one per (layer, head or ``"sum"``, r): ``layer``, ``head``, ``r``, ``p``, ``n_heads``,
        ``d_head``, ``fro_norm``, ``spectral_norm``, ``trace_over_p``, ``numerical_rank``,
        ``participation_ratio``, ``sym_fro_ratio``, ``sym_eig_min``, ``sym_eig_max``,
        ``sym_frac_negative``, ``s_star``, ``rho``, ``identity_share``, ``fit_iterations``, ``fit_method``,
        ``L_sv_1..4``, ``query_bias_norm``, ``key_bias_norm`` (and ``align_1..4``, ``mu_L_mu`` with
        ``mu_hat``). Missing values are ``None``.
    spectra : dict
        ``"{layer}/{head}"`` -> singular values of :math:`B` (all :math:`p`).
    top_pairs : dict
        ``"{layer}/sum/{r}"`` -> the leading singular pair(s) ``{"sigma", "u", "v"}`` of :math:`L` for the
        layer sums.
    parameters : dict
        The arguments of the run.
    meta : dict
        ``path``, ``layout``, ``p``, ``n_heads``, ``d_head``, ``layers``, ``prefix``.
    fits : dict
        ``(layer, head, r)`` -> :class:`FitResult`.
    """

    rows: list[dict]
    spectra: dict[str, list[float]]
    parameters: dict
    meta: dict
    top_pairs: dict = field(default_factory=dict)
    fits: dict = field(default_factory=dict, repr=False)

    # ---- tidy outputs -----------------------------------------------------------------------------
    def columns(self) -> list[str]:
        cols: list[str] = []
        for row in self.rows:
            for k in row:
                if k not in cols:
                    cols.append(k)
        return cols

    def to_csv(self, path: str | os.PathLike) -> Path:
        """Write the tidy rows as CSV (``None`` -> empty cell)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        cols = self.columns()
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(cols)
            for row in self.rows:
                w.writerow(["" if row.get(c) is None else row.get(c) for c in cols])
        return path

    def to_dict(self) -> dict:
        return _clean(
            {
                "spec": "docs/attention_rmt.md §13 (real pretrained weights)",
                "parameters": self.parameters,
                **self.meta,
                "versions": _versions(),
                "rows": self.rows,
                "spectra": self.spectra,
                "top_pairs": self.top_pairs,
            }
        )

    def to_json(self, path: str | os.PathLike) -> Path:
        """Write parameters, layout, p, H, d_h, versions, rows, spectra and top pairs as JSON."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1, allow_nan=False))
        return path

    # ---- summaries --------------------------------------------------------------------------------
    def _value(self, layer: int, head: Any, r: int, key: str) -> Any:
        for row in self.rows:
            if row["layer"] == layer and row["head"] == head and row["r"] == r:
                return row.get(key)
        return None

    def _head_median(self, layer: int, r: int, key: str = "rho") -> float | None:
        vals = [
            row[key]
            for row in self.rows
            if row["layer"] == layer and row["head"] != "sum" and row["r"] == r and row.get(key) is not None
        ]
        return float(np.median(vals)) if vals else None

    def layer_summary(self) -> list[dict]:
        """Per layer: layer-sum ``fro_norm``, ``trace_over_p``, ``rho_{0,1,16,64}``, ``sym_fro_ratio`` and the
        per-head median :math:`\\rho_1`."""
        out = []
        for l in self.meta["layers"]:
            r0 = min((row["r"] for row in self.rows if row["layer"] == l), default=0)
            d = {
                "layer": l,
                "fro_norm": self._value(l, "sum", r0, "fro_norm"),
                "trace_over_p": self._value(l, "sum", r0, "trace_over_p"),
            }
            for r in (0, 1, 16, 64):
                d[f"rho_{r}"] = self._value(l, "sum", r, "rho")
            d["sym_fro_ratio"] = self._value(l, "sum", r0, "sym_fro_ratio")
            d["head_median_rho_1"] = self._head_median(l, 1)
            out.append(d)
        return out

    def format_table(self) -> str:
        """Compact text table, one line per layer (layer sums; last column: per-head median rho_1)."""

        def fmt(x: Any, spec: str) -> str:
            return "—".rjust(int(spec.split(".")[0])) if x is None else format(x, spec)

        head = (
            f"{'layer':>5} {'||B||_F':>9} {'trB/p':>8} {'rho_0':>6} {'rho_1':>6} {'rho_16':>6} "
            f"{'rho_64':>6} {'||S||/||B||':>11} {'head med rho_1':>14}"
        )
        m = self.meta
        lines = [
            f"{m['layout']} layout, p={m['p']}, H={m['n_heads']}, d_h={m['d_head']}, "
            f"LN folded={self.parameters.get('fold_layernorm')}  ({m.get('path')})",
            head,
            "-" * len(head),
        ]
        for d in self.layer_summary():
            lines.append(
                f"{d['layer']:>5} {fmt(d['fro_norm'], '9.2f')} {fmt(d['trace_over_p'], '8.3f')} "
                f"{fmt(d['rho_0'], '6.3f')} {fmt(d['rho_1'], '6.3f')} {fmt(d['rho_16'], '6.3f')} "
                f"{fmt(d['rho_64'], '6.3f')} {fmt(d['sym_fro_ratio'], '11.3f')} "
                f"{fmt(d['head_median_rho_1'], '14.3f')}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format_table()

    def plot(self, path: str | os.PathLike) -> Path:
        """PNG: left, :math:`\\rho_r` against :math:`r` per layer (solid: layer sum, dashed: per-head median);
        right, singular-value spectra of the layer sums (matplotlib Agg, no global backend change)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig = Figure(figsize=(11, 4.2))
        FigureCanvasAgg(fig)
        ax1, ax2 = fig.subplots(1, 2)
        layers = self.meta["layers"]
        import matplotlib

        cmap = matplotlib.colormaps["viridis"]
        for i, l in enumerate(layers):
            color = cmap(i / max(len(layers) - 1, 1))
            rs = sorted({row["r"] for row in self.rows if row["layer"] == l})
            sums = [(r, self._value(l, "sum", r, "rho")) for r in rs]
            sums = [(r, v) for r, v in sums if v is not None]
            if sums:
                ax1.plot([r for r, _ in sums], [v for _, v in sums], "-o", ms=3, color=color, label=f"layer {l}")
            med = [(r, self._head_median(l, r)) for r in rs]
            med = [(r, v) for r, v in med if v is not None]
            if med:
                ax1.plot([r for r, _ in med], [v for _, v in med], "--", color=color, lw=1,
                         label=None if sums else f"layer {l} (heads)")
            sv = self.spectra.get(f"{l}/sum")
            if sv:
                ax2.semilogy(np.arange(1, len(sv) + 1), np.maximum(sv, 1e-300), color=color, label=f"layer {l}")
        ax1.set_xscale("symlog", linthresh=1)
        ax1.set_xlabel("rank r")
        ax1.set_ylabel(r"$\rho_r$")
        ax1.set_ylim(0, 1.05)
        ax1.set_title(r"identity + rank-$r$ fit (solid: layer sum, dashed: head median)", fontsize=9)
        ax1.legend(fontsize=7)
        ax2.set_xlabel("k")
        ax2.set_ylabel(r"$\sigma_k(B)$")
        ax2.set_title("singular values of the layer sums", fontsize=9)
        if any(f"{l}/sum" in self.spectra for l in layers):
            ax2.legend(fontsize=7)
        fig.suptitle(
            f"{self.meta['layout']}: p={self.meta['p']}, H={self.meta['n_heads']}, d_h={self.meta['d_head']}"
            f", LN folded={self.parameters.get('fold_layernorm')}",
            fontsize=10,
        )
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        return path

    def write(self, out_dir: str | os.PathLike) -> dict[str, Path]:
        """Write ``weights.csv``, ``weights.json`` and ``weights.png`` into ``out_dir`` (created)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        return {
            "csv": self.to_csv(out / "weights.csv"),
            "json": self.to_json(out / "weights.json"),
            "png": self.plot(out / "weights.png"),
        }


def _norm_or_none(a: np.ndarray | None) -> float | None:
    return None if a is None else float(np.sqrt(np.sum(np.asarray(a) ** 2)))


def analyze_checkpoint(
    path: str | os.PathLike,
    *,
    ranks: Iterable[int | str] = DEFAULT_RANKS,
    fold_layernorm: bool = False,
    per_head: bool = True,
    layer_sum: bool = True,
    mu_hat: np.ndarray | Mapping[int, np.ndarray] | Literal["embedding_mean"] | None = None,
    config: Mapping | str | os.PathLike | None = None,
    layout: Literal["auto", "bert", "gpt2", "generic"] = "auto",
    n_heads: int | None = None,
    progress: Callable[[str], None] | None = None,
    layers: Sequence[int] | None = None,
    prefix: str | None = None,
    generic: GenericLayout | None = None,
    n_top_pairs: int = 1,
    tol: float = 1e-10,
    max_iter: int = 500,
    scan_points: int | None = None,
) -> WeightsReport:
    r"""Run the spec §13 diagnostics on a local checkpoint.

    Parameters
    ----------
    path : path-like
        Checkpoint file or folder (see :func:`load_state_dict`). Nothing is downloaded.
    ranks : iterable of int or "d_h"
        Ranks of the identity-plus-rank-r fits (default :math:`\{0,1,2,4,8,16,d_h,64\}`).
    fold_layernorm : bool
        Use :math:`\operatorname{diag}(g)B\operatorname{diag}(g)` with the gain of the LayerNorm feeding
        the block (raises :class:`CheckpointError` if absent).
    per_head, layer_sum : bool
        Analyse each :math:`B_h` and/or :math:`B=\sum_hB_h`.
    mu_hat : ndarray (p,), mapping layer -> ndarray, or "embedding_mean", optional
        Data direction(s) for the alignment item 4; ``"embedding_mean"`` uses :func:`embedding_mean`.
    config : mapping or path, optional
        Model config; by default ``config.json`` next to the checkpoint.
    layout, n_heads, prefix, generic
        See :func:`extract_heads`.
    progress : callable(str), optional
        Called with a short message before each layer.
    layers : sequence of int, optional
        Analyse only these layers.
    n_top_pairs : int
        Leading singular pairs of :math:`L` stored in the JSON per layer-sum fit.
    tol, max_iter, scan_points
        Passed to :func:`fit_identity_plus_low_rank`.

    Returns
    -------
    WeightsReport

    Notes
    -----
    Cost: per matrix one :math:`p\times p` SVD and eigendecomposition, a 41-point scan (singular values
    only) shared by all ranks and a few full SVDs per rank; heads are reduced to problems of size
    :math:`2d_h`. All-MiniLM-L6-v2 (:math:`p=384`, 6 layers × 12 heads, default ranks) takes about 4 s
    per layer on one CPU core, mostly the layer sums. Multithreaded BLAS on an oversubscribed machine can
    be many times slower; set ``OPENBLAS_NUM_THREADS=1`` (or ``OMP_NUM_THREADS=1``) there.
    """
    state = load_state_dict(path)
    if config is None:
        config = read_config(path)
    heads = extract_heads(state, config, layout, n_heads, prefix=prefix, generic=generic)
    chosen = heads.layers if layers is None else [int(l) for l in layers]
    unknown = [l for l in chosen if l not in heads.wq]
    if unknown:
        raise CheckpointError(f"layers {unknown} not in the checkpoint (has {heads.layers})")
    rank_list = _resolve_ranks(ranks, heads.d_head)
    if isinstance(mu_hat, str):
        if mu_hat != "embedding_mean":
            raise ValueError(f"mu_hat must be an array, a mapping or 'embedding_mean', not {mu_hat!r}")
        mu_hat = embedding_mean(state)
    del state

    rows: list[dict] = []
    spectra: dict[str, list[float]] = {}
    top_pairs: dict[str, dict] = {}
    fits: dict = {}
    base = {"p": heads.p, "n_heads": heads.n_heads, "d_head": heads.d_head}

    def emit(l: int, head: Any, B: np.ndarray, bias_q: float | None, bias_k: float | None) -> None:
        mu = mu_hat.get(l) if isinstance(mu_hat, Mapping) else mu_hat
        if not np.all(np.isfinite(B)):
            raise CheckpointError(f"layer {l}, head {head}: the query/key weights contain NaN or inf")
        diag = head_diagnostics(
            B, rank_list, d_head=heads.d_head, mu_hat=mu, tol=tol, max_iter=max_iter, scan_points=scan_points
        )
        spectra[f"{l}/{head}"] = diag["singular_values"]
        for fe in diag["fits"]:
            fit: FitResult = fe["fit"]
            row = {"layer": l, "head": head, "r": fe["r"], **base}
            for k in (
                "fro_norm", "spectral_norm", "trace_over_p", "numerical_rank", "participation_ratio",
                "sym_fro_ratio", "sym_eig_min", "sym_eig_max", "sym_frac_negative",
            ):
                row[k] = diag[k]
            row.update(
                s_star=fit.s, rho=fit.rho, identity_share=fit.identity_share,
                fit_iterations=fit.iterations, fit_method=fit.method,
            )
            for k in range(_N_TOP):
                row[f"L_sv_{k + 1}"] = float(fit.L_s[k]) if k < len(fit.L_s) else None
            row["query_bias_norm"] = bias_q
            row["key_bias_norm"] = bias_k
            if "alignment" in fe:
                for k in range(_N_TOP):
                    row[f"align_{k + 1}"] = fe["alignment"][k] if k < len(fe["alignment"]) else None
                row["mu_L_mu"] = fe["mu_L_mu"]
            rows.append(row)
            fits[(l, head, fe["r"])] = fit
            if head == "sum" and n_top_pairs > 0 and len(fit.L_s):
                k = min(n_top_pairs, len(fit.L_s))
                top_pairs[f"{l}/sum/{fe['r']}"] = {
                    "sigma": fit.L_s[:k].tolist(),
                    "u": fit.L_u[:, :k].T.tolist(),
                    "v": fit.L_v[:, :k].T.tolist(),
                }

    for l in chosen:
        if progress is not None:
            progress(f"layer {l} ({chosen.index(l) + 1}/{len(chosen)})")
        bn = heads.bias_norms.get(l, {})
        bq, bk = bn.get("query"), bn.get("key")
        if layer_sum:
            emit(l, "sum", heads.layer_sum(l, fold_layernorm=fold_layernorm), _norm_or_none(bq), _norm_or_none(bk))
        if per_head:
            for h in range(heads.n_heads):
                emit(
                    l, h, heads.head_product(l, h, fold_layernorm=fold_layernorm),
                    None if bq is None else float(bq[h]), None if bk is None else float(bk[h]),
                )

    parameters = {
        "ranks": [r for r in ranks],
        "ranks_resolved": rank_list,
        "fold_layernorm": fold_layernorm,
        "per_head": per_head,
        "layer_sum": layer_sum,
        "mu_hat": None if mu_hat is None else ("per-layer mapping" if isinstance(mu_hat, Mapping) else "vector"),
        "layout_requested": layout,
        "n_heads_argument": n_heads,
        "layers": chosen,
        "scaling": "B_h = sqrt(p/d_h) W_K^h^T W_Q^h (rows keys, columns queries)",
        "tol": tol,
        "max_iter": max_iter,
        "scan_points": scan_points,
    }
    meta = {
        "path": str(Path(path).resolve()),
        "layout": heads.layout,
        "p": heads.p,
        "n_heads": heads.n_heads,
        "d_head": heads.d_head,
        "layers": chosen,
        "prefix": heads.prefix,
    }
    return WeightsReport(rows, spectra, parameters, meta, top_pairs, fits)
