"""A data-only encoding of cached claim results: JSON plus a ``.npz`` of arrays, never pickle.

``verify --cache DIR`` keeps training runs and RS tunings across runs; the folder may be shared
between processes or users.  Reading it must never execute code: values are written as JSON (with
tags for tuples, dicts with non-string keys, arrays, tensors and the project's own dataclasses) and
arrays as a ``.npz`` read with ``allow_pickle=False``.  A dataclass is rebuilt only when its class is
a dataclass defined in the ``attnlimits`` package (its fields are set, no constructor or
``__post_init__`` runs); anything else in a file is refused and the entry recomputed.
"""
from __future__ import annotations

import dataclasses
import importlib
import math

import numpy as np

__all__ = ["encode", "decode", "load_arrays", "CacheFormatError", "SCHEMA", "MAX_ARRAY_BYTES"]

#: Most bytes the arrays of one entry may hold once read (the members' uncompressed sizes, checked
#: before anything is inflated): a small planted ``.npz`` that inflates to gigabytes is refused
MAX_ARRAY_BYTES = 1 << 30

SCHEMA = 1


class CacheFormatError(ValueError):
    """A value that cannot be stored as data, or a file that is not a valid entry."""


def encode(obj, arrays: dict):
    """``obj`` as JSON-able data; arrays go to ``arrays`` (name → ndarray) and are referenced by name."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else {"__float__": repr(obj)}
    if isinstance(obj, np.generic):
        return encode(obj.item(), arrays)
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            raise CacheFormatError("object arrays are not data")
        name = f"a{len(arrays)}"
        arrays[name] = obj
        return {"__array__": name}
    if type(obj).__module__.startswith("torch") and hasattr(obj, "detach"):
        name = f"a{len(arrays)}"
        arrays[name] = obj.detach().cpu().numpy()
        return {"__tensor__": name}
    if isinstance(obj, tuple):
        return {"__tuple__": [encode(x, arrays) for x in obj]}
    if isinstance(obj, list):
        return [encode(x, arrays) for x in obj]
    if isinstance(obj, dict):
        return {"__dict__": [[encode(k, arrays), encode(v, arrays)] for k, v in obj.items()]}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        cls = type(obj)
        if not cls.__module__.startswith("attnlimits."):
            raise CacheFormatError(f"{cls.__module__}.{cls.__qualname__} is not a dataclass of attnlimits")
        getstate = getattr(cls, "__getstate__", None)
        state = obj.__getstate__() if getstate is not None and getstate is not object.__getstate__ else None
        values = state if isinstance(state, dict) else {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
        names = {f.name for f in dataclasses.fields(obj)}
        return {"__dataclass__": f"{cls.__module__}:{cls.__qualname__}",
                "fields": {k: encode(v, arrays) for k, v in values.items() if k in names}}
    raise CacheFormatError(f"a {type(obj).__name__} is not stored in the cache")


def load_arrays(path) -> dict:
    """The arrays of an entry's ``.npz`` (``allow_pickle=False``), after checking on the zip directory
    that they inflate to at most :data:`MAX_ARRAY_BYTES` (:class:`CacheFormatError` otherwise)."""
    import zipfile

    with zipfile.ZipFile(path) as zf:
        total = sum(i.file_size for i in zf.infolist())
    if total > MAX_ARRAY_BYTES:
        raise CacheFormatError(f"arrays of {total / 2 ** 30:.3g} GiB once inflated (at most "
                               f"{MAX_ARRAY_BYTES / 2 ** 30:.3g} GiB)")
    with np.load(path, allow_pickle=False) as npz:
        return {k: np.array(npz[k]) for k in npz.files}


def decode(data, arrays):
    """Inverse of :func:`encode`; ``arrays`` is the entry's ``np.load(..., allow_pickle=False)``."""
    if data is None or isinstance(data, (bool, str, int, float)):
        return data
    if isinstance(data, list):
        return [decode(x, arrays) for x in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise CacheFormatError("not an entry of this cache")
    if "__float__" in data:
        text = data["__float__"]
        if text not in ("nan", "inf", "-inf"):
            raise CacheFormatError("bad float")
        return float(text)
    if "__array__" in data:
        return np.array(arrays[data["__array__"]])
    if "__tensor__" in data:
        import torch

        return torch.from_numpy(np.array(arrays[data["__tensor__"]]))
    if "__tuple__" in data:
        return tuple(decode(x, arrays) for x in data["__tuple__"])
    if "__dict__" in data:
        return {_hashable(decode(k, arrays)): decode(v, arrays) for k, v in data["__dict__"]}
    if "__dataclass__" in data:
        mod, _, qual = str(data["__dataclass__"]).partition(":")
        if not mod.startswith("attnlimits.") or not qual.isidentifier():
            raise CacheFormatError(f"class {data['__dataclass__']!r} is not an attnlimits dataclass")
        cls = getattr(importlib.import_module(mod), qual, None)
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise CacheFormatError(f"{data['__dataclass__']!r} is not a dataclass")
        obj = cls.__new__(cls)
        names = {f.name: f for f in dataclasses.fields(cls)}
        for name, f in names.items():  # defaults first, then the stored values
            if f.default is not dataclasses.MISSING:
                object.__setattr__(obj, name, f.default)
            elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
                object.__setattr__(obj, name, f.default_factory())  # type: ignore[misc]
        for k, v in dict(data["fields"]).items():
            if k not in names:
                raise CacheFormatError(f"{qual} has no field {k!r}")
            object.__setattr__(obj, k, decode(v, arrays))
        return obj
    raise CacheFormatError("not an entry of this cache")


def _hashable(k):
    return tuple(_hashable(x) for x in k) if isinstance(k, list) else k
