"""A result as a unit of code generation: kernels, constants and its portable driver.

A :class:`GeneratedModel` gathers everything the numeric layer needs to build a solver module for
one result without importing the result's package: the generated kernels (from the derivation's
:class:`attnlimits.symbolic.system.EquationSystem` and closed forms), named constants, and the text of a
*portable driver* — plain Python that runs inside the generated module and strings the kernels
together (solve, implicit derivative, observables, presentation).  The same module text is loaded
in-process and written out by :func:`attnlimits.numeric.export_model`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .codegen import Kernel, expression_hash

__all__ = ["GeneratedModel"]


@dataclass
class GeneratedModel:
    """Everything needed to generate a solver module for one result.

    Parameters
    ----------
    name : str
        Short name (``"attention_rmt"``).
    title : str
        One-line description used as the generated module's docstring title.
    description : str
        Longer docstring text (formulas, references).
    build_kernels : callable
        Returns the list of :class:`attnlimits.symbolic.codegen.Kernel` (called once, lazily).
    driver_path : pathlib.Path
        File holding the portable driver source (read as text, never imported).
    constants : dict
        Name → Python source of a value, emitted before the kernels.
    expressions : callable
        Returns the SymPy expressions whose hash identifies the generated code.
    """

    name: str
    title: str
    description: str
    build_kernels: Callable[[], list]
    driver_path: Path
    constants: dict = field(default_factory=dict)
    expressions: Callable[[], list] | None = None
    _kernels: list | None = field(default=None, init=False, repr=False)
    _hash: str | None = field(default=None, init=False, repr=False)

    def kernels(self) -> list[Kernel]:
        if self._kernels is None:
            self._kernels = list(self.build_kernels())
        return self._kernels

    def source_hash(self) -> str:
        if self._hash is None:
            exprs = self.expressions() if self.expressions else [o for k in self.kernels() for o in k.outputs]
            self._hash = expression_hash(*exprs)
        return self._hash

    def driver_source(self) -> str:
        return Path(self.driver_path).read_text()
