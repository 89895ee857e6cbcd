"""A bundle of generated kernels with plain metadata: what a derivation hands to ``numeric/``.

The numeric layer never imports a derivation.  A derivation builds a :class:`KernelBundle` — named
:class:`attnlimits.symbolic.codegen.Kernel` objects (SymPy in, one output tuple out) plus plain metadata
(numbers, strings, tuples) and sub-bundles — and passes it as an argument; the numeric code calls
``bundle.module(backend).<kernel>(...)``.  Every module is generated once per backend by
:class:`attnlimits.symbolic.codegen.ModuleBuilder` (the one code-generation route) and cached on the
bundle.

>>> import sympy as sp
>>> from attnlimits.symbolic.codegen import Kernel
>>> x = sp.Symbol("x", real=True)
>>> b = KernelBundle("square", (Kernel("sq", [x], [x**2]),))
>>> b.module("numpy").sq(3.0)
(9.0,)
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Mapping

from .codegen import ALL_BACKENDS, ModuleBuilder, expression_hash, load_module

__all__ = ["KernelBundle"]

_LOCK = threading.Lock()


@dataclass(frozen=True, eq=False)
class KernelBundle:
    """Named generated kernels, metadata and sub-bundles (``parts``).

    Parameters
    ----------
    name : str
        Identifier (also the generated module's name).
    kernels : tuple of Kernel
    meta : mapping
        Plain data the numeric code needs (kind of an activation, bounds, structure of a formula).
    parts : mapping of str to KernelBundle
        Sub-bundles (``bundle["spiked"]``).
    title, description : str
        Docstring of the generated modules.
    """

    name: str
    kernels: tuple = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    parts: Mapping[str, "KernelBundle"] = field(default_factory=dict)
    title: str = ""
    description: str = ""
    _modules: dict = field(default_factory=dict, init=False, repr=False)

    def __getitem__(self, key: str) -> "KernelBundle":
        try:
            return self.parts[key]
        except KeyError:
            raise KeyError(f"bundle {self.name!r} has no part {key!r}; parts: {', '.join(self.parts)}") from None

    def source(self, backend: str = "numpy") -> str:
        """The generated module text for ``backend``."""
        mb = ModuleBuilder(self.title or f"generated kernels: {self.name}", backend,
                           expression_hash(*[o for k in self.kernels for o in k.outputs]),
                           description=self.description)
        for k in self.kernels:
            mb.add_kernel(k)
        if backend == "numpy":
            mb.add_source("import scipy.special  # noqa: E402,F401  (erf, expit, ndtr)")
        return mb.source()

    def module(self, backend: str = "numpy"):
        """The generated module for ``backend`` (generated on first use, then cached)."""
        if backend not in ALL_BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {ALL_BACKENDS}")
        mod = self._modules.get(backend)
        if mod is None:
            with _LOCK:
                mod = self._modules.get(backend)
                if mod is None:
                    safe = "".join(c if c.isalnum() else "_" for c in self.name)
                    mod = load_module(self.source(backend), f"attnlimits_{safe}_{backend}")
                    self._modules[backend] = mod
        return mod
