"""Options objects: one way to combine an options dataclass with keyword overrides.

Every solver and estimator of the package takes its tuning knobs as a frozen dataclass
(``options=``) and lets a caller replace single fields by keyword (``tol=1e-12``).  The merge is
done here and nowhere else, so that every entry point treats an unknown keyword the same way:
a one-line :class:`~attnlimits.symbolic.result.InputError` naming the options class and its
fields, instead of the ``TypeError`` of :func:`dataclasses.replace`.

    >>> import dataclasses
    >>> @dataclasses.dataclass(frozen=True)
    ... class Opts:
    ...     tol: float = 1e-8
    ...     max_iter: int = 100
    >>> resolve_options(Opts, None, {"tol": 1e-12})
    Opts(tol=1e-12, max_iter=100)
    >>> resolve_options(Opts, Opts(max_iter=5), {})
    Opts(tol=1e-08, max_iter=5)
    >>> resolve_options(Opts, None, {"tolerance": 1})
    Traceback (most recent call last):
    ...
    attnlimits.symbolic.result.InputError: Opts has no option 'tolerance' (its options: max_iter, tol)
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from .result import InputError

__all__ = ["resolve_options"]

T = TypeVar("T")


def resolve_options(cls: type[T], options: T | None, overrides: Mapping[str, Any] | None = None) -> T:
    """``options`` (a default ``cls()`` when None) with the fields named in ``overrides`` replaced.

    ``options`` must be an instance of ``cls`` (or None); an override that is not a field of ``cls``
    raises :class:`InputError` listing the fields.  With no overrides the object is returned as is
    (options objects are frozen, so sharing it is safe).
    """
    if options is None:
        options = cls()
    elif not isinstance(options, cls):
        raise InputError(f"options must be a {cls.__name__}, not {type(options).__name__}")
    if not overrides:
        return options
    fields = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        names = ", ".join(repr(u) for u in unknown)
        plural = "options" if len(unknown) > 1 else "option"
        raise InputError(f"{cls.__name__} has no {plural} {names} (its options: {', '.join(sorted(fields))})")
    return dataclasses.replace(options, **overrides)
