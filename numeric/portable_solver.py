"""Fixed-point solving for generated systems — portable source.

This module depends on nothing but the standard library: the numbers, linear solves and kernels
come from a generated module ``rt`` (see :mod:`attnlimits.symbolic.codegen`) whose runtime provides ``num``,
``solve``, ``isfinite``, ``absval``, ``spectral_radius`` and the kernels
``<name>_initial_guess/_update/_residual_jacobian/_update_jacobian/_invariants``.  The text of this
file is copied verbatim into exported solvers, so the exported solver and the in-process one run
the same algorithm.

Strategy (docs/attention_rmt.md §9; GUIDE §2): a warm start (from a neighbouring sweep point) goes
straight to Newton with the symbolic Jacobian; a cold start runs damped iteration, escalates to
Anderson acceleration when damping stalls, and always finishes with a Newton polish.  Every
solution is checked against the system's invariants.  Failure raises :class:`ConvergenceError`
naming the system, the parameters, the residual and what to try — never a NaN.
"""
from __future__ import annotations

import dataclasses as _dataclasses
import time as _time


class ConvergenceError(RuntimeError):
    """A fixed-point solve failed; the message names system, parameters, residual and a remedy."""

    def __init__(self, system, params, residual, reason, hint):
        self.system, self.params, self.residual, self.reason, self.hint = system, params, residual, reason, hint
        ptxt = ", ".join(f"{k}={_fmt(v)}" for k, v in params.items())
        super().__init__(
            f"{system}: {reason} at {ptxt} (residual {_fmt(residual)}). Try: {hint}"
        )


class InvariantError(ConvergenceError):
    """A solution violates an invariant of the system (a wrong branch or a broken input)."""


def _fmt(v):
    try:
        return f"{float(v):.6g}"
    except Exception:  # pragma: no cover - defensive
        return str(v)


class FixedPointResult:
    """Typed outcome of a solve.

    Attributes
    ----------
    values : dict
        Unknown name → value (float or mpf).
    converged : bool
        Always ``True`` for a returned result (failures raise).
    iterations : int
        Total iterations over all stages.
    residual : number
        Max-norm of ``F(x) = x − G(x)`` at the returned point.
    method : str
        Stages used, e.g. ``"damped+newton"`` or ``"newton(warm)"``.
    stability : number or None
        Spectral radius of ``∂G/∂x`` at the solution (< 1: plain iteration is locally stable);
        ``None`` when not computed (``compute_stability=False``).
    jacobian : list of lists
        ``∂F/∂x`` at the returned point (for implicit derivatives), from the last Newton step.
    extra : list or None
        Outputs of the system's sensitivity kernel at the point of ``jacobian``, when the
        :class:`SystemKernels` was given ``sensitivity_param`` (saves one pass over the nodes).
    """

    __slots__ = ("values", "converged", "iterations", "residual", "method", "stability", "x", "jacobian", "extra")

    def __init__(self, names, x, iterations, residual, method, stability):
        self.x = list(x)
        self.values = dict(zip(names, x))
        self.converged = True
        self.iterations = iterations
        self.residual = residual
        self.method = method
        self.stability = stability
        self.jacobian = None
        self.extra = None

    def __repr__(self):
        vals = ", ".join(f"{k}={_fmt(v)}" for k, v in self.values.items())
        return (f"FixedPointResult({vals}; iterations={self.iterations}, residual={_fmt(self.residual)}, "
                f"method={self.method!r}, stability={_fmt(self.stability)})")


class SystemKernels:
    """The generated kernels of one equation system, looked up by name in module ``rt``."""

    def __init__(self, rt, name, unknowns, parameters, invariant_names=(), sensitivity_param=None):
        self.rt, self.name = rt, name
        self.unknowns, self.parameters = tuple(unknowns), tuple(parameters)
        self.invariant_names = tuple(invariant_names)
        get = lambda suffix: getattr(rt, f"{name}_{suffix}", None)  # noqa: E731
        self.initial_guess = get("initial_guess")
        self.update = get("update")
        self.residual_jacobian = get("residual_jacobian")
        self.update_jacobian = get("update_jacobian")
        self.invariants = get("invariants")
        self.observables = get("observables")
        self.newton_sensitivity = get(f"newton_sensitivity_{sensitivity_param}") if sensitivity_param else None

    def F_J(self, x, p, nodes):
        n = len(x)
        out = self.residual_jacobian(*x, *p, _nodes=nodes)
        F = list(out[:n])
        J = [list(out[n + i * n: n + (i + 1) * n]) for i in range(n)]
        return F, J

    def F_J_extra(self, x, p, nodes):
        """``(F, J, S)``: with a sensitivity kernel, S holds the implicit-derivative inputs at x."""
        if self.newton_sensitivity is None:
            F, J = self.F_J(x, p, nodes)
            return F, J, None
        n = len(x)
        out = self.newton_sensitivity(*x, *p, _nodes=nodes)
        F = list(out[:n])
        J = [list(out[n + i * n: n + (i + 1) * n]) for i in range(n)]
        return F, J, list(out[n + n * n:])


def _maxabs(rt, v):
    """Max-norm; non-finite if any entry is (NaN propagates as NaN)."""
    vals = [rt.absval(x) for x in v]
    for a in vals:
        if not rt.isfinite(a):
            return a
    return max(vals) if vals else rt.num(0)


#: Options of :func:`solve_fixed_point` (frozen; keywords of the call replace its fields).
#: Built with ``make_dataclass`` and field types given as objects: this text also runs inside
#: generated modules (``from __future__ import annotations``, not in ``sys.modules``), where
#: ``@dataclass`` cannot resolve string annotations.
SolveOptions = _dataclasses.make_dataclass(
    "SolveOptions",
    [
        ("tol", object, None),
        ("damping", float, 0.5),
        ("max_damped", int, 400),
        ("max_anderson", int, 400),
        ("anderson_memory", int, 5),
        ("max_newton", int, 60),
        ("time_limit", object, 60.0),
        ("check_invariants", bool, True),
        ("invariant_tol", object, None),
        ("compute_stability", bool, True),
    ],
    frozen=True,
    namespace={
        "__module__": __name__,
        "__doc__": """Options of :func:`solve_fixed_point`.

    Attributes
    ----------
    tol : number, optional
        Stop when the max-norm of the residual is below ``tol·(1 + max|x|)``; default ``1e-13``
        in float64 and ``10^(−dps+3)`` under mpmath (read from ``rt.num`` precision).
    damping : number
        Weight of ``G(x)`` in the damped iteration ``x ← (1−d)x + d·G(x)`` (and in Anderson).
    max_damped, max_anderson, max_newton : int
        Iteration caps of the damped, Anderson and Newton stages.
    anderson_memory : int
        Number of past differences Anderson acceleration keeps.
    time_limit : float or None
        Wall-clock cap in seconds for one solve (mpmath solves can be slow).
    check_invariants : bool
        Check the solution against the system's invariants (a warm start on a wrong branch falls
        back to a cold start; a cold solution that fails raises :class:`InvariantError`).
    invariant_tol : number, optional
        Slack of the invariant check (default ``1e-12``).
    compute_stability : bool
        Compute the spectral radius of ∂G/∂x at the solution (one extra kernel call).
    """,
    },
)


def solve_fixed_point(sk, params, nodes, *, x0=None, J0=None, options=None, **overrides):
    """Solve ``x = G(x; θ)`` for one parameter point.

    Parameters
    ----------
    sk : SystemKernels
    params : sequence
        Parameter values in ``sk.parameters`` order (backend numbers).
    nodes : tuple
        Quadrature nodes of the spectral law (from the runtime's ``law_nodes``).
    x0 : sequence, optional
        Warm start (e.g. predicted from the neighbouring sweep points): Newton directly.
    J0 : nested list, optional
        With ``x0``, a Jacobian to reuse (the neighbouring point's): chord steps first, which cost
        one evaluation of G each; full Newton if they stall.
    options : SolveOptions, optional
        Tolerances, iteration and time caps, checks (default ``SolveOptions()``); keywords
        (``tol``, ``damping``, ``max_damped``, ``max_anderson``, ``anderson_memory``,
        ``max_newton``, ``time_limit``, ``check_invariants``, ``invariant_tol``,
        ``compute_stability``) replace its fields.

    Returns
    -------
    FixedPointResult

    Raises
    ------
    ConvergenceError
        No stage converged, a non-finite value appeared, or the time cap was hit.
    InvariantError
        The converged point violates an invariant of the system.
    """
    o = SolveOptions() if options is None else options
    if overrides:
        o = _dataclasses.replace(o, **overrides)
    solve = _FixedPointSolve(sk, params, nodes, o)
    x_sol, res = solve.warm(x0, J0)
    if x_sol is None:
        x_sol, res = solve.cold()
    return solve.result(x_sol, res)


class _FixedPointSolve:
    """One solve of :func:`solve_fixed_point`: the point, the options and the running state
    (stages, iteration count, last Jacobian and sensitivity outputs)."""

    def __init__(self, sk, params, nodes, options):
        rt = self.rt = sk.rt
        self.sk, self.params, self.nodes, self.o = sk, params, nodes, options
        self.pdict = dict(zip(sk.parameters, params))
        self.t_start = _time.monotonic()
        tol = options.tol
        if tol is None:
            tol = rt.default_tol() if hasattr(rt, "default_tol") else rt.num("1e-13")
        self.tol = tol
        self.stages, self.iters = [], 0
        self.small_step = rt.num("1e-5")
        self.last_J = None
        self.last_extra = None  # sensitivity outputs at the point of last_J (see SystemKernels.F_J_extra)

    # -- small helpers ------------------------------------------------------------------------

    def scale(self, x):
        return 1 + _maxabs(self.rt, x)

    def finite(self, v):
        isfinite = self.rt.isfinite
        return all(isfinite(a) for a in v)

    def timed_out(self):
        time_limit = self.o.time_limit
        return time_limit is not None and _time.monotonic() - self.t_start > time_limit

    def residual(self, x):
        gx = self.sk.update(*x, *self.params, _nodes=self.nodes)
        return [a - b for a, b in zip(x, gx)]

    def invariants_ok(self, x):
        return _invariants_ok(self.sk, x, self.params, self.nodes, self.o.invariant_tol)

    # -- the stages ---------------------------------------------------------------------------

    def warm(self, x0, J0):
        """Chord steps with ``J0``, then Newton, from ``x0``; ``(None, res)`` when neither gives
        a converged point that passes the invariants (or there is no ``x0``)."""
        x_sol, res = None, None
        if x0 is not None and J0 is not None:
            x_sol, res = self.chord(list(x0), J0)
            if x_sol is not None:
                self.stages.append("chord(warm)")
                if self.o.check_invariants and not self.invariants_ok(x_sol)[0]:
                    x_sol = None
        if x_sol is None and x0 is not None:
            x_sol, res = self.newton(list(x0))
            if x_sol is not None:
                self.stages.append("newton(warm)")
                if self.o.check_invariants and not self.invariants_ok(x_sol)[0]:
                    x_sol = None  # wrong branch from the warm start: fall back to a cold start
        return x_sol, res

    def cold(self):
        """Damped iteration, Anderson when it stalls, Newton polish; raises when nothing converged."""
        sk, rt = self.sk, self.rt
        x = list(sk.initial_guess(*self.params))
        # 1. damped iteration
        x, converged = self.damped(x)
        self.stages.append("damped")
        # 2. Anderson acceleration when damping stalled or ran out
        if not converged and self.finite(x) and not self.timed_out():
            o = self.o
            x = _anderson(sk, x, self.params, self.nodes, self.tol, o.max_anderson, o.anderson_memory,
                          o.damping, self.timed_out)
            self.stages.append("anderson")
        # 3. Newton polish (always: it is cheap and sharpens the last digits)
        x_sol, res = None, None
        if self.finite(x):
            x_sol, res = self.newton(x)
            self.stages.append("newton")
        if x_sol is None:
            F, _ = sk.F_J(x, self.params, self.nodes) if self.finite(x) else ([float("nan")], None)
            res = _maxabs(rt, F) if self.finite(x) else float("nan")
            reason = "time limit reached" if self.timed_out() else "no convergence after " + "+".join(self.stages)
            raise ConvergenceError(
                sk.name, self.pdict, res, reason,
                "a warm start from a nearby parameter point (sweep from large gamma), more quadrature "
                "nodes, or check that the parameters are in range (gamma in [1e-5, 1e4], c in [0.05, 10])",
            )
        return x_sol, res

    def damped(self, x):
        """``x ← (1−d)x + d·G(x)`` until the change is below tolerance (``converged``), it stalls
        10 times, G is not finite, the iteration cap or the time cap; returns ``(x, converged)``."""
        rt, damping = self.rt, self.o.damping
        prev_change, stalls = None, 0
        for _k in range(self.o.max_damped):
            gx = list(self.sk.update(*x, *self.params, _nodes=self.nodes))
            if not self.finite(gx):
                break
            change = sum(rt.absval(a - b) for a, b in zip(gx, x))
            x = [(1 - damping) * a + damping * b for a, b in zip(x, gx)]
            self.iters += 1
            if change <= self.tol * self.scale(x):
                return x, True
            if prev_change is not None and change > prev_change * rt.num("0.999"):
                stalls += 1
                if stalls >= 10:
                    break
            prev_change = change
            if self.timed_out():
                break
        return x, False

    def polish(self, x, F, J, res):
        """One more full Newton step from a converged point (quadratic convergence sharpens the
        last digits); kept only if it lowers the residual.  The Jacobian at x serves the polished
        point too: the step is tiny."""
        rt = self.rt
        try:
            xn = [a + d for a, d in zip(x, rt.solve(J, [-f for f in F]))]
        except Exception:
            return x, res
        Fn = self.residual(xn)
        rn = _maxabs(rt, Fn)
        return (xn, rn) if self.finite(Fn) and rn < res else (x, res)

    def newton(self, x):
        """Newton with the symbolic Jacobian and backtracking; ``(None, res)`` on failure."""
        sk, rt, params, nodes, tol = self.sk, self.rt, self.params, self.nodes, self.tol
        F, J = sk.F_J(x, params, nodes)
        self.last_extra = None
        res = _maxabs(rt, F)
        for _ in range(self.o.max_newton):
            if not self.finite(F):
                return None, res
            sx = self.scale(x)
            if res <= tol * sx:
                # unless already far below tolerance, one extra full step sharpens the last digits
                # (quadratic convergence); keep it only if it lowers the residual
                if res > tol * sx / 1000:
                    x, res = self.polish(x, F, J, res)
                self.last_J = J
                return x, res
            try:
                step = rt.solve(J, [-f for f in F])
            except Exception:
                return None, res
            found = self._line_search(x, step, res, sx)
            if found is None:
                return None, res
            x, F, J, res = found
            self.iters += 1
            if self.timed_out():
                return None, res
        return (x, res) if res <= tol * self.scale(x) else (None, res)

    def _line_search(self, x, step, res, sx):
        """Backtracking on the residual norm along ``step``: ``(xn, Fn, Jn, rn)``, or ``None``
        after 30 halvings."""
        sk, rt, params, nodes = self.sk, self.rt, self.params, self.nodes
        lam = rt.num(1)
        # quadratic convergence: a step this small lands (almost surely) on the solution, so
        # evaluate the sensitivity outputs there in the same pass
        final = _maxabs(rt, step) <= self.small_step * sx
        for _ls in range(30):
            xn = [a + lam * s for a, s in zip(x, step)]
            if final:
                Fn, Jn, Sn = sk.F_J_extra(xn, params, nodes)
            else:
                (Fn, Jn), Sn = sk.F_J(xn, params, nodes), None
            self.last_extra = Sn
            rn = _maxabs(rt, Fn)
            if self.finite(Fn) and rn < res * (1 - lam / 10) or rn <= self.tol * self.scale(xn):
                return xn, Fn, Jn, rn
            lam = lam / 2
        return None

    def chord(self, x, J0):
        """Newton steps with a fixed Jacobian ``J0`` (e.g. the previous sweep point's): each step
        costs one evaluation of G only; the exact Jacobian is computed once, at the end."""
        sk, rt, tol = self.sk, self.rt, self.tol
        F = self.residual(x)
        res = _maxabs(rt, F)
        for _ in range(40):
            if not self.finite(F):
                return None, res
            if res <= tol * self.scale(x):
                F, J, self.last_extra = sk.F_J_extra(x, self.params, self.nodes)
                if res > tol * self.scale(x) / 1000:
                    x, res = self.polish(x, F, J, res)
                self.last_J = J
                return x, res
            try:
                step = rt.solve(J0, [-f for f in F])
            except Exception:
                return None, res
            xn = [a + d for a, d in zip(x, step)]
            Fn = self.residual(xn)
            rn = _maxabs(rt, Fn)
            self.iters += 1
            if not (self.finite(Fn) and rn < res / 2):
                return None, res
            x, F, res = xn, Fn, rn
        return None, res

    # -- the result ---------------------------------------------------------------------------

    def result(self, x_sol, res):
        """Invariant check, stability, and the :class:`FixedPointResult`."""
        sk, params, nodes = self.sk, self.params, self.nodes
        if self.o.check_invariants:
            ok, failed = self.invariants_ok(x_sol)
            if not ok:
                raise InvariantError(
                    sk.name, self.pdict, res, f"solution violates invariant(s) {', '.join(failed)}",
                    "this is a wrong branch of the fixed point: continue from large gamma (a sweep) "
                    "or report the parameters",
                )
        stability = None
        if self.o.compute_stability and sk.update_jacobian is not None:
            n = len(x_sol)
            flat = sk.update_jacobian(*x_sol, *params, _nodes=nodes)
            stability = self.rt.spectral_radius([list(flat[i * n:(i + 1) * n]) for i in range(n)])
        out = FixedPointResult(sk.unknowns, x_sol, self.iters, res, "+".join(self.stages), stability)
        out.jacobian = self.last_J
        out.extra = self.last_extra
        return out


def _invariants_ok(sk, x, params, nodes, invariant_tol):
    if sk.invariants is None:
        return True, []
    rt = sk.rt
    tol = invariant_tol if invariant_tol is not None else rt.num("1e-12")
    margins = sk.invariants(*x, *params, _nodes=nodes)
    failed = [name for name, mval in zip(sk.invariant_names, margins) if not (mval >= -tol)]
    return (not failed), failed


def _anderson(sk, x, params, nodes, tol, max_iter, memory, damping, timed_out):
    """Anderson acceleration (type II) of the damped map; returns the best iterate found."""
    rt = sk.rt
    X, Fh = [], []
    best, best_res = list(x), None
    for _ in range(max_iter):
        gx = list(sk.update(*x, *params, _nodes=nodes))
        if not all(rt.isfinite(a) for a in gx):
            break
        f = [a - b for a, b in zip(gx, x)]
        res = _maxabs(rt, f)
        if best_res is None or res < best_res:
            best, best_res = list(x), res
        if res <= tol * (1 + _maxabs(rt, x)) or timed_out():
            break
        X.append(list(x))
        Fh.append(f)
        if len(X) > memory + 1:
            X.pop(0)
            Fh.pop(0)
        mk = len(X) - 1
        if mk == 0:
            x = [a + damping * b for a, b in zip(x, f)]
            continue
        dF = [[Fh[j + 1][i] - Fh[j][i] for j in range(mk)] for i in range(len(x))]
        dX = [[X[j + 1][i] - X[j][i] for j in range(mk)] for i in range(len(x))]
        # least squares min ||f − dF a|| by regularised normal equations
        A = [[sum(dF[i][a] * dF[i][b] for i in range(len(x))) for b in range(mk)] for a in range(mk)]
        reg = rt.num("1e-14") * (1 + max(A[a][a] for a in range(mk)))
        for a in range(mk):
            A[a][a] = A[a][a] + reg
        rhs = [sum(dF[i][a] * f[i] for i in range(len(x))) for a in range(mk)]
        try:
            coef = rt.solve(A, rhs)
        except Exception:
            X, Fh = X[-1:], Fh[-1:]
            x = [a + damping * b for a, b in zip(x, f)]
            continue
        x = [x[i] + damping * f[i] - sum((dX[i][j] + damping * dF[i][j]) * coef[j] for j in range(mk))
             for i in range(len(x))]
    return best
