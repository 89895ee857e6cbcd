"""Dependency-free *safetensors* reader (NumPy only), used by :mod:`attnlimits.verify.weights.checkpoint` (docs/attention_rmt.md §13).

File format
-----------
A ``.safetensors`` file is

1. 8 bytes: the header length :math:`N` as an unsigned little-endian 64-bit integer;
2. :math:`N` bytes of UTF-8 JSON mapping each tensor name to
   ``{"dtype": ..., "shape": [...], "data_offsets": [begin, end]}`` (an optional ``"__metadata__"``
   entry holds string metadata and is skipped);
3. the raw little-endian byte buffer; ``data_offsets`` are relative to its start (byte ``8 + N``).

Supported dtypes: ``F64``, ``F32``, ``F16`` (kept as ``float16``), ``BF16`` (decoded to ``float32``:
a bfloat16 is the upper 16 bits of an IEEE float32, so ``float32_bits = bf16_bits << 16``) and the
integer/boolean types ``I64 I32 I16 I8 U64 U32 U16 U8 BOOL``. The FP8 types are refused.

Errors are reported as :class:`SafetensorsFormatError` (a :class:`ValueError`) with a one-line message;
:func:`attnlimits.verify.weights.checkpoint.read_safetensors` turns them into ``CheckpointError``.
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable

import numpy as np

__all__ = ["SafetensorsFormatError", "read_header", "read_safetensors_numpy", "decode_bf16", "DTYPES"]

#: safetensors dtype code -> NumPy dtype of the *stored* bytes (BF16 is stored as uint16 and decoded).
DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"),
    "U32": np.dtype("<u4"),
    "U16": np.dtype("<u2"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}

#: Largest header accepted (the reference implementation uses 100 MB).
MAX_HEADER_BYTES = 100_000_000


class SafetensorsFormatError(ValueError):
    """A file that is not a readable safetensors file (one-line message)."""


def decode_bf16(bits: np.ndarray) -> np.ndarray:
    """Decode raw bfloat16 bit patterns into float32.

    Parameters
    ----------
    bits : ndarray of uint16
        The stored 16-bit patterns.

    Returns
    -------
    ndarray of float32
        ``(bits.astype(uint32) << 16).view(float32)``: bfloat16 is the upper half of a float32, so the
        conversion is exact (NaN payloads and infinities included).
    """
    bits = np.asarray(bits, dtype=np.uint16)
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def read_header(path: str | os.PathLike) -> tuple[dict, int, int]:
    """Read and validate the JSON header of a safetensors file.

    Returns
    -------
    header : dict
        name -> ``{"dtype", "shape", "data_offsets"}``; ``"__metadata__"`` removed.
    data_start : int
        Absolute byte offset of the data buffer (``8 + N``).
    file_size : int
        Size of the file in bytes.

    Raises
    ------
    SafetensorsFormatError
        Short file, impossible header length, invalid JSON, unknown dtype, inconsistent shape/offsets,
        or offsets beyond the end of the file (a truncated download).
    """
    path = os.fspath(path)
    size = os.path.getsize(path)
    name = os.path.basename(path)
    if size < 8:
        raise SafetensorsFormatError(f"{name}: file of {size} bytes is too short to be safetensors")
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little", signed=False)
        if n == 0 or n > MAX_HEADER_BYTES or 8 + n > size:
            raise SafetensorsFormatError(
                f"{name}: header length {n} is impossible for a file of {size} bytes "
                "(truncated or not a safetensors file)"
            )
        raw = f.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SafetensorsFormatError(f"{name}: header is not valid UTF-8 JSON ({type(exc).__name__})") from None
    if not isinstance(header, dict):
        raise SafetensorsFormatError(f"{name}: header is not a JSON object")
    header.pop("__metadata__", None)
    data_start = 8 + n
    buffer_size = size - data_start
    for key, info in header.items():
        if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= info.keys():
            raise SafetensorsFormatError(f"{name}: header entry {key!r} lacks dtype/shape/data_offsets")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(dtype, str):
            raise SafetensorsFormatError(f"{name}: tensor {key!r} has a non-string dtype")
        if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)):
            raise SafetensorsFormatError(f"{name}: tensor {key!r} has an invalid shape {shape!r}")
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(isinstance(o, int) for o in offsets)
            and 0 <= offsets[0] <= offsets[1]
        ):
            raise SafetensorsFormatError(f"{name}: tensor {key!r} has invalid data_offsets {offsets!r}")
        if offsets[1] > buffer_size:
            raise SafetensorsFormatError(
                f"{name}: tensor {key!r} ends at byte {offsets[1]} of a {buffer_size}-byte buffer "
                "(file truncated)"
            )
        if dtype in DTYPES:
            expected = math.prod(shape) * DTYPES[dtype].itemsize
            if offsets[1] - offsets[0] != expected:
                raise SafetensorsFormatError(
                    f"{name}: tensor {key!r} ({dtype}, shape {shape}) needs {expected} bytes, "
                    f"data_offsets give {offsets[1] - offsets[0]}"
                )
    return header, data_start, size


def read_safetensors_numpy(
    path: str | os.PathLike, names: Iterable[str] | None = None
) -> dict[str, np.ndarray]:
    """Read tensors of a safetensors file with NumPy alone.

    Parameters
    ----------
    path : path-like
        The ``.safetensors`` file.
    names : iterable of str, optional
        Read only these tensors (all when ``None``); unknown names raise.

    Returns
    -------
    dict of str -> ndarray
        Writable, native arrays in file order. ``F16`` stays ``float16``; ``BF16`` becomes ``float32``.

    Raises
    ------
    SafetensorsFormatError
        See :func:`read_header`; also for a requested name that is absent and for unsupported dtypes
        (FP8 variants) among the tensors read.

    Notes
    -----
    Cost: one read of each requested tensor's bytes; memory: one copy of the requested tensors.
    """
    header, data_start, _ = read_header(path)
    fname = os.path.basename(os.fspath(path))
    if names is None:
        wanted = list(header)
    else:
        wanted = list(names)
        missing = [n for n in wanted if n not in header]
        if missing:
            raise SafetensorsFormatError(f"{fname}: no tensor named {missing[0]!r}")
    out: dict[str, np.ndarray] = {}
    with open(os.fspath(path), "rb") as f:
        for key in wanted:
            info = header[key]
            code = info["dtype"]
            if code not in DTYPES:
                raise SafetensorsFormatError(f"{fname}: tensor {key!r} has unsupported dtype {code}")
            stored = DTYPES[code]
            begin, end = info["data_offsets"]
            buf = bytearray(end - begin)
            f.seek(data_start + begin)
            if f.readinto(buf) != len(buf):
                raise SafetensorsFormatError(f"{fname}: tensor {key!r} is cut short (file truncated)")
            arr = np.frombuffer(buf, dtype=stored).reshape(info["shape"])
            if code == "BF16":
                arr = decode_bf16(arr)
            else:
                arr = arr.astype(stored.newbyteorder("="), copy=False)
            out[key] = arr
    return out
