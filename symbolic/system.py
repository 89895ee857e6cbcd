"""Equation systems: unknowns, parameters, fixed-point equations and observables.

An :class:`EquationSystem` is the one object from which a result's solver is generated:

- the fixed-point map ``x = G(x; θ)`` (and its residual ``F = x − G``) defines the solution;
- :meth:`EquationSystem.jacobian` is the symbolic Jacobian ``∂F/∂x`` for Newton and the stability
  check (spectral radius of ``∂G/∂x``);
- :meth:`EquationSystem.parameter_derivative` is ``∂F/∂θ``; with the Jacobian it gives the implicit
  derivative ``dx/dθ = −(∂F/∂x)⁻¹ ∂F/∂θ`` and, by the chain rule, exact derivatives of observables
  (:meth:`EquationSystem.observable_derivatives`) — no finite differences;
- :meth:`EquationSystem.kernels` turns all of it into generated code (:mod:`attnlimits.symbolic.codegen`).

Spectral averages (:class:`attnlimits.symbolic.spectral.SpectralAverage`) may appear anywhere; derivatives
pass under them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import sympy as sp

from .codegen import Kernel, assert_exact, expression_hash

__all__ = ["EquationSystem", "Invariant"]


@dataclass(frozen=True)
class Invariant:
    """A relation that must hold at every solution (``expr`` is a SymPy relational)."""

    name: str
    expr: sp.Basic
    description: str = ""


@dataclass
class EquationSystem:
    """A fixed-point system ``x = G(x; θ)`` with observables.

    Parameters
    ----------
    name : str
        Name used in messages and generated code (a Python identifier).
    unknowns : sequence of Symbol
        ``x``, the order parameters.
    parameters : sequence of Symbol
        ``θ``, everything else the equations depend on.
    updates : sequence of Expr
        ``G(x; θ)``, one per unknown, in the same order.
    observables : mapping str → Expr
        Quantities computed at the solution (functions of ``x`` and ``θ``).
    initial_guess : sequence of Expr
        Cold start, as expressions in the parameters.
    invariants : sequence of Invariant
        Relations asserted at every solution (in terms of unknowns, parameters and observables).
    source : str
        Where the equations come from (paper, section, spec section).
    """

    name: str
    unknowns: Sequence[sp.Symbol]
    parameters: Sequence[sp.Symbol]
    updates: Sequence[sp.Expr]
    observables: Mapping[str, sp.Expr] = field(default_factory=dict)
    initial_guess: Sequence[sp.Expr] = ()
    invariants: Sequence[Invariant] = ()
    source: str = ""

    def __post_init__(self):
        self.unknowns = tuple(self.unknowns)
        self.parameters = tuple(self.parameters)
        self.updates = tuple(sp.sympify(u) for u in self.updates)
        self.observables = {k: sp.sympify(v) for k, v in dict(self.observables).items()}
        self.initial_guess = tuple(sp.sympify(g) for g in self.initial_guess)
        if len(self.updates) != len(self.unknowns):
            raise ValueError(f"{self.name}: {len(self.unknowns)} unknowns but {len(self.updates)} equations")
        if self.initial_guess and len(self.initial_guess) != len(self.unknowns):
            raise ValueError(f"{self.name}: initial guess has the wrong length")
        known = set(self.unknowns) | set(self.parameters)
        for e in (*self.updates, *self.observables.values(), *self.initial_guess):
            extra = e.free_symbols - known
            if extra:
                raise ValueError(f"{self.name}: undeclared symbols {sorted(map(str, extra))} in {e}")
        assert_exact(*self.updates, *self.observables.values(), *self.initial_guess)

    # ------------------------------------------------------------------ symbolic pieces
    @property
    def residuals(self) -> sp.Matrix:
        """``F(x; θ) = x − G(x; θ)``."""
        return sp.Matrix([x - g for x, g in zip(self.unknowns, self.updates)])

    def jacobian(self) -> sp.Matrix:
        """``∂F/∂x`` (symbolic; derivatives pass under spectral averages)."""
        return self.residuals.jacobian(sp.Matrix(self.unknowns))

    def update_jacobian(self) -> sp.Matrix:
        """``∂G/∂x``: its spectral radius at the solution is the local rate of plain iteration."""
        return sp.Matrix(self.updates).jacobian(sp.Matrix(self.unknowns))

    def parameter_derivative(self, param: sp.Symbol) -> sp.Matrix:
        """``∂F/∂θ`` for one parameter."""
        self._check_param(param)
        return sp.Matrix([sp.diff(r, param) for r in self.residuals])

    def observable_partials(self, param: sp.Symbol) -> tuple[sp.Matrix, sp.Matrix]:
        """``(∂O/∂x, ∂O/∂θ)`` for all observables (rows in :attr:`observables` order)."""
        self._check_param(param)
        obs = sp.Matrix(list(self.observables.values()))
        return obs.jacobian(sp.Matrix(self.unknowns)), obs.diff(param)

    def observable_derivatives(self, param: sp.Symbol) -> dict[str, sp.Expr]:
        r"""Exact ``dO/dθ`` as expressions in ``x``, ``θ`` and the symbols ``d<x>_d<θ>``.

        .. math:: \frac{dO}{d\theta} = \partial_\theta O + \partial_x O\,\frac{dx}{d\theta},
                  \qquad \frac{dx}{d\theta} = -(\partial_x F)^{-1}\partial_\theta F .

        The numeric layer obtains ``dx/dθ`` by one linear solve with the generated Jacobian.
        """
        dO_dx, dO_dp = self.observable_partials(param)
        rates = sp.Matrix(self.rate_symbols(param))
        total = dO_dp + dO_dx * rates
        return dict(zip(self.observables, total))

    def rate_symbols(self, param: sp.Symbol) -> tuple[sp.Symbol, ...]:
        """Symbols standing for ``dx_i/dθ`` in :meth:`observable_derivatives`."""
        return tuple(sp.Symbol(f"d{x.name}_d{param.name}", real=True) for x in self.unknowns)

    def invariant_kernel_outputs(self) -> list[sp.Expr]:
        """The invariants as numeric ``margin ≥ 0`` expressions (``lhs − rhs`` oriented)."""
        out = []
        for inv in self.invariants:
            rel = inv.expr
            if isinstance(rel, (sp.StrictGreaterThan, sp.GreaterThan)):
                out.append(rel.lhs - rel.rhs)
            elif isinstance(rel, (sp.StrictLessThan, sp.LessThan)):
                out.append(rel.rhs - rel.lhs)
            else:
                raise ValueError(f"invariant {inv.name}: use >, >=, < or <=")
        return out

    def source_hash(self) -> str:
        """Hash of every expression of the system (identity of generated code)."""
        return expression_hash(
            *self.unknowns, *self.parameters, *self.updates, *self.observables.values(),
            *self.initial_guess, *[i.expr for i in self.invariants]
        )

    # ------------------------------------------------------------------ rendering
    def formula(self, *, jacobian: bool = False, observables: bool = True):
        """The system as a :class:`attnlimits.symbolic.render.Formula` (text, LaTeX, markdown, JSON)."""
        from .render import system_formula

        return system_formula(self, jacobian=jacobian, observables=observables)

    def to_latex(self) -> str:
        """The fixed-point equations and observables as LaTeX lines ``lhs = rhs``."""
        return self.formula().to_latex()

    def _repr_latex_(self) -> str:
        return self.formula()._repr_latex_()

    def _check_param(self, param):
        if param not in self.parameters:
            raise ValueError(f"{param} is not a parameter of {self.name}")

    # ------------------------------------------------------------------ code generation
    def kernels(self, derivative_params: Sequence[sp.Symbol] = ()) -> list[Kernel]:
        """Generated kernels: ``<name>_update``, ``_residual_jacobian``, ``_observables``,
        ``_invariants``, and per parameter θ in ``derivative_params`` ``_dparam_<θ>`` (∂F/∂θ),
        ``_observable_rates_<θ>`` (dO/dθ given dx/dθ) and ``_sensitivity_<θ>`` (observables and all
        partial derivatives in one pass, sharing common subexpressions)."""
        args = [*self.unknowns, *self.parameters]
        n = len(self.unknowns)
        J = self.jacobian()
        ks = [
            Kernel(f"{self.name}_initial_guess", list(self.parameters), list(self.initial_guess),
                   doc=f"Cold start of {self.name}."),
            Kernel(f"{self.name}_update", args, list(self.updates),
                   doc=f"Fixed-point map G(x; θ) of {self.name}.\n\n{self.source}"),
            Kernel(f"{self.name}_residual_jacobian", args,
                   list(self.residuals) + [J[i, j] for i in range(n) for j in range(n)],
                   doc=f"Residual F = x − G and its Jacobian ∂F/∂x (row-major) for {self.name}."),
            Kernel(f"{self.name}_update_jacobian", args, list(self.update_jacobian()),
                   doc="∂G/∂x (row-major): its spectral radius is the rate of plain iteration."),
            Kernel(f"{self.name}_observables", args, list(self.observables.values()),
                   doc="Observables: " + ", ".join(self.observables)),
        ]
        if self.invariants:
            ks.append(Kernel(f"{self.name}_invariants", args, self.invariant_kernel_outputs(),
                             doc="Invariant margins (each must be ≥ 0): "
                             + ", ".join(i.name for i in self.invariants)))
        for p in derivative_params:
            ks.append(Kernel(f"{self.name}_dparam_{p.name}", args, list(self.parameter_derivative(p)),
                             doc=f"∂F/∂{p.name}."))
            dO_dx, dO_dp = self.observable_partials(p)
            nobs = len(self.observables)
            sens = [*self.observables.values(), *self.parameter_derivative(p), *dO_dp,
                    *[dO_dx[i, j] for i in range(nobs) for j in range(n)]]
            ks.append(Kernel(
                f"{self.name}_newton_sensitivity_{p.name}", args,
                list(self.residuals) + [J[i, j] for i in range(n) for j in range(n)] + sens,
                doc=f"F, ∂F/∂x (row-major) and the {p.name}-sensitivity outputs in one pass: the last "
                    "Newton evaluation also yields everything the implicit derivative needs."))
            ks.append(Kernel(
                f"{self.name}_sensitivity_{p.name}", args, sens,
                doc=f"One pass for the implicit derivative in {p.name}: observables O, ∂F/∂{p.name}, "
                    f"∂O/∂{p.name}, ∂O/∂x (row-major); dO/d{p.name} = ∂O/∂{p.name} + ∂O/∂x · dx/d{p.name}."))
            rates = self.rate_symbols(p)
            ks.append(Kernel(f"{self.name}_observable_rates_{p.name}", [*args, *rates],
                             list(self.observable_derivatives(p).values()),
                             doc=f"dO/d{p.name} by the chain rule, given dx/d{p.name}."))
        return ks
