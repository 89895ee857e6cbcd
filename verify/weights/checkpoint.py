r"""Checkpoint I/O for the pretrained-weight diagnostics (docs/attention_rmt.md §13 "Loading").

Reads a local checkpoint into a dict of NumPy arrays: ``.safetensors`` (the NumPy reader of
:mod:`attnlimits.verify.weights._safetensors` or the ``safetensors`` package), ``.bin``/``.pt`` through
``torch.load(..., weights_only=True)`` on the CPU, sharded ``*.index.json`` files and Hugging Face folders,
plus the ``config.json`` beside them. Nothing is ever downloaded. Every failure is a
:class:`CheckpointError` with a one-line message.
"""
from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

import numpy as np

from . import _safetensors

__all__ = ["CheckpointError", "read_safetensors", "load_state_dict", "read_config"]


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
        ``"numpy"``: the dependency-free reader of :mod:`attnlimits.verify.weights._safetensors` (8-byte little-endian header
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
        Missing, truncated or corrupt file, or an unsupported dtype (docs/attention_rmt.md §13 "Loading").
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

