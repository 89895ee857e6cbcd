"""Compile and export solver modules for results described by a :class:`~symbolic.model.GeneratedModel`.

:func:`compile_model` assembles, for one backend, the generated kernels of a result, the backend
runtime, the portable fixed-point solver (:mod:`numeric._portable_solver`) and the result's
portable driver into one module text, and loads it.  :func:`export_model` writes the same text to
a standalone file (runnable with only numpy, or only mpmath, installed).  The exported file and
the in-process module are therefore the same program.
"""
from __future__ import annotations

import inspect
import os
import threading
import types
from pathlib import Path

from symbolic.codegen import BACKENDS, ModuleBuilder, load_module, strip_module_header
from symbolic.model import GeneratedModel

from . import _portable_solver

__all__ = ["compile_model", "model_source", "export_model", "compile_system", "CompiledSystem", "cache_dir"]

_CACHE: dict = {}
_LOCK = threading.Lock()


def model_source(model: GeneratedModel, backend: str = "numpy", *, constants: dict | None = None,
                 main: bool = False) -> str:
    """The full module text for ``model`` on ``backend`` ("numpy" or "mpmath").

    ``constants`` (name → Python source) are emitted after the model's own constants, e.g. the
    Hermite data of the activation an exported file is specialised to.  With ``main=True`` the
    module ends in ``if __name__ == "__main__": sys.exit(main())``.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    mb = ModuleBuilder(title=model.title, backend=backend, source_hash=model.source_hash(),
                       description=model.description)
    for name, val in {**model.constants, **(constants or {})}.items():
        mb.add_constant(name, val)
    for k in model.kernels():
        mb.add_kernel(k)
    mb.add_source(strip_module_header(inspect.getsource(_portable_solver)))
    mb.add_source(strip_module_header(model.driver_source()))
    tail = 'if __name__ == "__main__":\n    sys.exit(main())\n' if main else None
    return mb.source(main=tail)


def cache_dir() -> Path | None:
    """Folder of the on-disk cache of generated sources (outside the repository).

    ``$ATTNLIMITS_CACHE_DIR``, else ``$XDG_CACHE_HOME/attnlimits`` or ``~/.cache/attnlimits``;
    ``ATTNLIMITS_NO_CACHE=1`` disables it.
    """
    if os.environ.get("ATTNLIMITS_NO_CACHE"):
        return None
    root = os.environ.get("ATTNLIMITS_CACHE_DIR")
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "attnlimits")
    return Path(root)


def _cache_key(model: GeneratedModel, backend: str) -> str:
    """Hash of everything the generated text depends on: the SymPy expressions, the code of the
    engine and of the derivation module, the driver, the backend and the SymPy version."""
    import hashlib

    import sympy

    h = hashlib.sha256()
    h.update(f"{model.name}|{backend}|{sympy.__version__}|{model.source_hash()}".encode())
    files = sorted(Path(__file__).parent.glob("*.py")) + sorted(Path(inspect.getfile(ModuleBuilder)).parent.glob("*.py"))
    files += [Path(inspect.getfile(model.build_kernels)), Path(model.driver_path)]
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()[:24]


def _cached_source(model: GeneratedModel, backend: str) -> str:
    folder = cache_dir()
    if folder is None:
        return model_source(model, backend)
    path = folder / f"{model.name}-{backend}-{_cache_key(model, backend)}.py"
    try:
        return path.read_text()
    except OSError:
        pass
    src = model_source(model, backend)
    try:  # best effort: a read-only home only costs the regeneration next time
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(src)
        os.replace(tmp, path)
    except OSError:
        pass
    return src


def _share_error_classes(mod) -> None:
    """In-process modules raise :class:`numeric.ConvergenceError`/``InvariantError`` themselves.

    The generated text carries its own copy of the solver (so that exported files stand alone);
    its ``raise`` statements look the class names up in the module's globals at run time, so
    pointing those names at the package's classes makes ``except numeric.ConvergenceError`` work.
    """
    mod.ConvergenceError = _portable_solver.ConvergenceError
    mod.InvariantError = _portable_solver.InvariantError


def compile_model(model: GeneratedModel, backend: str = "numpy") -> types.ModuleType:
    """Generate and load the solver module of ``model`` for ``backend``.

    Cached per process, and on disk (:func:`cache_dir`) keyed by a hash of the expressions, the
    engine and derivation code and the SymPy version: generating the kernels takes about a second
    the first time, loading a cached text a few milliseconds.
    """
    key = (model.name, model.source_hash(), backend)
    with _LOCK:
        mod = _CACHE.get(key)
        if mod is None:
            if backend not in BACKENDS:
                raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
            mod = load_module(_cached_source(model, backend), name=f"attnlimits_{model.name}_{backend}")
            _share_error_classes(mod)
            _CACHE[key] = mod
    return mod


def export_model(model: GeneratedModel, path: str | os.PathLike, backend: str = "numpy", *,
                 constants: dict | None = None) -> Path:
    """Write a standalone solver for ``model`` to ``path``; returns the path.

    The file needs only the Python standard library plus numpy (``backend="numpy"``) or mpmath
    (``backend="mpmath"``); ``python FILE --help`` documents its command line.
    """
    src = model_source(model, backend, constants=constants, main=True)
    path = Path(path)
    try:
        path.write_text(src)
    except OSError as exc:
        raise OSError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


class CompiledSystem:
    """A generated solver for one :class:`~symbolic.system.EquationSystem`.

    Attributes
    ----------
    module : module
        The generated module (kernels, runtime, portable solver).
    kernels : SystemKernels
        Kernel handles for :func:`numeric.solve_fixed_point`.

    Examples
    --------
    >>> import sympy as sp
    >>> from symbolic.system import EquationSystem
    >>> x, a = sp.symbols("x a")
    >>> dottie = EquationSystem("dottie", [x], [a], [a * sp.cos(x)], {"x": x}, initial_guess=[0])
    >>> round(float(compile_system(dottie).solve({"a": 1}).values[x]), 12)
    0.739085133215
    """

    def __init__(self, system, backend: str, derivative_params=()):
        from symbolic.spectral import spectral_averages
        from symbolic.codegen import Kernel
        import sympy as sp

        self.system, self.backend = system, backend
        mb = ModuleBuilder(title=f"Generated solver for {system.name}", backend=backend,
                           source_hash=system.source_hash(), description=system.source)
        laws = {a.law for e in (*system.updates, *system.observables.values()) for a in spectral_averages(e)}
        if len(laws) > 1:
            raise ValueError(f"{system.name}: averages over more than one law are not supported")
        self.law = next(iter(laws), None)
        if self.law is not None:
            theta = sp.Symbol("theta", real=True)
            (c,) = self.law.args
            csym = c if isinstance(c, sp.Symbol) else sp.Symbol("c_law")
            mb.add_kernel(Kernel("law_theta", [csym, theta], [self.law.theta_to_t(theta).subs(c, csym),
                                                              self.law.theta_weight(theta).subs(c, csym)]))
            mb.add_kernel(Kernel("law_masses", [csym], [self.law.continuous_mass().subs(c, csym),
                                                       self.law.atom_mass().subs(c, csym)]))
        for k in system.kernels(derivative_params):
            mb.add_kernel(k)
        mb.add_source(strip_module_header(inspect.getsource(_portable_solver)))
        self.source = mb.source()
        self.module = load_module(self.source, name=f"attnlimits_{system.name}_{backend}")
        _share_error_classes(self.module)
        self.kernels = _portable_solver.SystemKernels(
            self.module, system.name, system.unknowns, system.parameters,
            [i.name for i in system.invariants])

    def _params(self, params):
        rt = self.module
        by_name = {str(k): v for k, v in params.items()}
        missing = [p.name for p in self.system.parameters if p.name not in by_name]
        if missing:
            raise ValueError(f"{self.system.name}: missing parameter(s) {', '.join(missing)}")
        return [rt.num(by_name[p.name]) for p in self.system.parameters]

    def nodes(self, params, level=None):
        """Quadrature nodes of the system's spectral law (``None`` if it has none)."""
        if self.law is None:
            return None
        (c,) = self.law.args
        cval = dict(zip(self.system.parameters, self._params(params)))[c]
        if level is None:
            level = 3000 if self.backend == "numpy" else 8
        return self.module.law_nodes(cval, level)

    def solve(self, params, *, x0=None, nodes=None, **options):
        """Solve at ``params`` (name → value); options go to :func:`solve_fixed_point`."""
        p = self._params(params)
        nodes = self.nodes(params) if nodes is None and self.law is not None else nodes
        return _portable_solver.solve_fixed_point(self.kernels, p, nodes, x0=x0, **options)

    def sweep(self, params, param, values, **options):
        """Solve along ``values`` of one parameter with continuation (warm starts).

        Each point starts from the previous solution, moved by the exact slope ``dx/dθ`` when the
        system was compiled with ``derivative_params`` containing ``param`` (a first-order
        predictor), and falls back to a cold start by itself when that fails.  Returns the list of
        :class:`FixedPointResult` in the order of ``values``.

        Examples
        --------
        >>> import sympy as sp
        >>> from symbolic.system import EquationSystem
        >>> x, a = sp.symbols("x a")
        >>> s = EquationSystem("dottie", [x], [a], [a * sp.cos(x)], {"x": x}, initial_guess=[0])
        >>> res = compile_system(s, derivative_params=[a]).sweep({"a": 1}, "a", [0.5, 0.6, 0.7])
        >>> [round(float(r.values[x]), 6) for r in res]
        [0.450184, 0.520533, 0.583989]
        """
        rt = self.module
        n = len(self.system.unknowns)
        psyms = {p.name: p for p in self.system.parameters}
        if param not in psyms:
            raise ValueError(f"{param} is not a parameter of {self.system.name}")
        has_rate = hasattr(rt, f"{self.system.name}_dparam_{param}")
        out, prev = [], None
        for v in values:
            pt = {**{str(k): val for k, val in params.items()}, param: v}
            p = self._params(pt)
            nodes = self.nodes(pt) if self.law is not None else None
            x0 = None
            if prev is not None:
                v_prev, x_prev, J_prev, p_prev = prev
                x0 = list(x_prev)
                if has_rate and J_prev is not None:
                    dF = getattr(rt, f"{self.system.name}_dparam_{param}")(*x_prev, *p_prev, _nodes=nodes)
                    try:
                        dx = rt.solve(J_prev, [-f for f in dF])
                        x0 = [a + d * (rt.num(v) - rt.num(v_prev)) for a, d in zip(x_prev, dx)]
                    except Exception:  # singular Jacobian: plain warm start
                        pass
            res = _portable_solver.solve_fixed_point(self.kernels, p, nodes, x0=x0, **options)
            out.append(res)
            prev = (v, res.x, res.jacobian, p)
        assert all(len(r.x) == n for r in out)
        return out

    def observable_derivatives(self, params, param, result=None, nodes=None):
        """Exact ``dO/dθ`` at the solution by the implicit-function theorem (name → value)."""
        rt = self.module
        p = self._params(params)
        nodes = self.nodes(params) if nodes is None and self.law is not None else nodes
        result = result or self.solve(params, nodes=nodes)
        x = result.x
        _, J = self.kernels.F_J(x, p, nodes)
        dF = getattr(rt, f"{self.system.name}_dparam_{param}")(*x, *p, _nodes=nodes)
        dx = rt.solve(J, [-f for f in dF])
        rates = getattr(rt, f"{self.system.name}_observable_rates_{param}")(*x, *p, *dx, _nodes=nodes)
        return dict(zip(self.system.observables, rates))


def compile_system(system, backend: str = "numpy", derivative_params=()) -> CompiledSystem:
    """Generate and load a solver for ``system`` (see :class:`CompiledSystem`)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    return CompiledSystem(system, backend, tuple(derivative_params))
