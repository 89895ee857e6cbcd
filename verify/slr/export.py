r"""``attnlimits export slr``: the finite-sample SLR solvers as standalone Python files.

``--solver replica`` writes the replica-symmetric solver of ridge ERM (docs/slr.md §10) for one
activation and length law; ``--solver bayes-optimal`` the Bayes-optimal state evolution (§11) of
spiked-SLR with the population Bayes risk :math:`E_B^{\rm pop}` it needs (§7), or (``--model max``)
of max-SLR (ν = inf allowed; its test error needs no population Bayes risk).  The file needs numpy and scipy
only and its command line is that of ``attnlimits slr replica`` / ``attnlimits slr bayes-optimal``
without the options fixed at export time (activation, L, extra scalar; ``--model`` and ``--nu``
keep the exported values as defaults).  It prints the same rows.

One source: the file is assembled by :mod:`attnlimits.numeric.export` from the *text* of the modules the
in-process command runs — :mod:`attnlimits.numeric.slr.rs` and :mod:`attnlimits.numeric.slr.rs_command` (or
:mod:`attnlimits.numeric.slr.bo_state_evolution`, :mod:`attnlimits.numeric.slr.bo_command`, :mod:`attnlimits.numeric.slr.bayes_risk`),
:mod:`attnlimits.numeric.portable_solver`, ``sobol_normal`` of :mod:`attnlimits.symbolic.gaussian`, ``load_module`` of
:mod:`attnlimits.symbolic.codegen`, ``Param``/``InputError`` of :mod:`attnlimits.symbolic.result` and the CLI's
``format_rows`` — with their project imports rewritten, plus the generated kernel modules
verbatim (the texts the in-process solver loads, printed by :class:`attnlimits.symbolic.codegen.ModuleBuilder`
from :mod:`attnlimits.derivations.slr.replica` / :mod:`attnlimits.derivations.slr.bayes_optimal` /
:mod:`attnlimits.derivations.slr.bayes`).  A change to any of those modules is in the next export.
"""
from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

from attnlimits.symbolic.result import InputError

__all__ = ["export_slr", "replica_source", "bayes_optimal_source", "SOLVERS"]

SOLVERS = ("replica", "bayes-optimal")


def _write(path, text) -> Path:
    from attnlimits.numeric.export import write_atomic

    return write_atomic(Path(path), text)  # a failing write leaves the previous file


def _common_chunks(gaussian=("sobol_normal",)):
    """Chunks every exported SLR solver carries: parameter specs, errors, Sobol points (and the further rules of
    symbolic/gaussian.py named in ``gaussian``), kernel loading, output."""
    import attnlimits.symbolic.codegen as SC
    import attnlimits.symbolic.gaussian as SG
    import attnlimits.symbolic.result as SR
    import attnlimits.verify.cli.output as CLI_OUTPUT
    import attnlimits.verify.cli.parser as CLI_PARSER
    from attnlimits.numeric import export as X
    from attnlimits.numeric import portable_solver

    return [
        ("command-line parameters and input errors (symbolic/result.py)",
         X.extract(SR, ["InputError", "Param", "REQUIRED"])),
        ("the solver's error class (numeric/portable_solver.py)", X.extract(portable_solver, ["ConvergenceError"])),
        ("scrambled Sobol points" + (" and Gauss–Hermite rules" if "gauss_hermite_rule" in gaussian else "")
         + " (symbolic/gaussian.py)", X.extract(SG, list(gaussian))),
        ("loading generated kernel text (symbolic/codegen.py)", X.extract(SC, ["load_module"])),
        ("options of the command line (verify/cli/parser.py)", X.extract(CLI_PARSER, ["_default_text", "_add_params"])),
        ("printing of rows (verify/cli/output.py)", X.extract(CLI_OUTPUT, ["format_rows"])),
    ]


def _embed(modules, chunks, stubs):
    """Chunks of whole modules, imports rewritten against everything the file defines."""
    import inspect

    from attnlimits.numeric import export as X

    provided = set()
    for _, text in chunks:
        provided |= X.top_level_names(text)
    for _, mod in modules:
        provided |= X.top_level_names(inspect.getsource(mod))
    return [(title, X.module_text(mod, provided=provided, stubs=stubs)) for title, mod in modules]


def _parameters(command, fixed, defaults):
    """The command's parameter specs minus ``fixed``, with ``defaults`` replacing the defaults."""
    out = []
    for p in command.parameters:
        if p.name in fixed:
            continue
        if p.name in defaults:
            v = defaults[p.name]
            if isinstance(v, float) and not math.isfinite(v):
                v = str(v)  # "inf": parsed by Param.parse like the command-line text (repr(inf) is no literal)
            p = dataclasses.replace(p, default=v)
        out.append(p)
    return tuple(out)


def _command_chunk(parameters, fixed, table, description, examples, run_source) -> str:
    from attnlimits.numeric import export as X

    lines = ["#: options of this file (the `attnlimits` command's, minus those fixed at export time)",
             "PARAMETERS = (\n" + "".join(f"    {p!r},\n" for p in parameters) + ")",
             "#: fixed at export time", f"FIXED = {fixed!r}", f"TABLE = {tuple(table)!r}",
             f"DESCRIPTION = {description!r}", f"EXAMPLES = {tuple(examples)!r}", "", "", run_source.strip(), "", "",
             X.extract(X, ["command_main"]).strip()]
    return "\n".join(lines) + "\n"


def _header(title, what, hashes, run_example, requires) -> str:
    import sympy

    from attnlimits.derivations.slr.result import RESULT

    refs = "\n".join(f"  {r}" for r in RESULT.references[:2])
    hash_lines = "\n".join(f"  {k}: {v}" for k, v in hashes.items())
    return f"""{title}

{what}

Generated by attnlimits (`attnlimits export slr`) from SymPy expressions (SymPy {sympy.__version__}).
Source-expression hash{'es' if len(hashes) > 1 else ''}:
{hash_lines}
Requires {', '.join(requires)} and the Python standard library (no attnlimits package).

How to run:
  python {run_example}
  python {run_example.split()[0]} --help

The solver below is the text of the attnlimits modules named in the section banners, copied when
this file was written (imports of the attnlimits packages replaced by the definitions in this
file); the generated kernel modules are verbatim the texts the in-process solver loads.

References:
{refs}
"""


# =============================================================================================
# replica (RS) solver
# =============================================================================================

_RS_RUN = '''
def load_kernels():
    """The generated kernels as :class:`RSKernels`, loaded as ``attnlimits.numeric.slr.rs.compile_rs_kernels`` loads them."""
    mods = {L: load_module(src, f"attnlimits_slr_rs_L{L}") for L, src in KERNEL_SOURCES.items()}
    return RSKernels(ACTIVATION, mods, all(hasattr(m, "affine_poly") for m in mods.values()), dict(KERNEL_SOURCES),
                     shift_invariant=all(hasattr(m, "shift_invariant") for m in mods.values()),
                     joint=any(hasattr(m, "joint_start") for m in mods.values()))


def run(params, *, progress=None):
    """The rows of ``attnlimits slr replica`` for this file's activation and length law."""
    return replica_run(load_kernels(), params, progress=progress)
'''


def replica_source(params: dict, name: str = "rs_solver.py") -> tuple:
    """Text of the standalone RS solver for ``params`` (activation, L, model, nu, extra) and a summary."""
    from attnlimits.derivations.slr.result import REPLICA_COMMAND, RESULT
    from attnlimits.numeric import export as X
    from attnlimits.numeric.slr import rs_command as RC
    from attnlimits.numeric.slr.rs import curves, fixed_point, map as rs_map_module, prox, rule, walk

    from attnlimits.numeric.slr import problem as PR

    from .problem import slr_problem
    from .replica import problem_kernels

    Ls = list(params.get("L") or [2])
    model, nu = params.get("model") or "spiked", params.get("nu")
    nu = REPLICA_COMMAND.param("nu").default if nu is None else nu
    # the canonical name (a user formula as SymPy prints it), never the text as typed: it is written
    # into comments, docstrings and literals of the exported file
    problem = slr_problem(model, nu, Ls if len(Ls) > 1 else Ls[0], activation=params.get("activation") or "softmax",
                          extra=params.get("extra"), loss=params.get("loss") or "square", min_length=2,
                          why=" for the RS theory")
    act, lengths, extra, loss = problem.activation.name, problem.lengths.items, problem.extra, problem.loss
    from ._guards import check_work, replica_seconds

    check_work(f"export slr at L = {max(Ls)} (generating its RS kernels, once)", seconds=replica_seconds(max(Ls)))
    kern = problem_kernels(problem)
    sources = {Lv: kern.sources[Lv] for Lv, _ in lengths}
    hashes = {f"L={Lv}": kern.modules[Lv].SOURCE_HASH for Lv, _ in lengths}
    stubs: set = set()
    chunks = _common_chunks()
    from attnlimits.numeric import frozen
    from attnlimits.symbolic import options

    rs_floors = [rule, prox, rs_map_module, walk, fixed_point, curves]  # bottom up, as they import each other
    chunks += _embed([("options objects with keyword overrides (symbolic/options.py)", options),
                      ("fixed points of frozen maps: the shared ladder (numeric/frozen.py)", frozen)]
                     + [(f"the RS solver: {m.__name__.split('.')[-1]} (numeric/slr/rs/{m.__name__.split('.')[-1]}.py)", m)
                        for m in rs_floors]
                     + [("the problem, validated once (numeric/slr/problem.py)", PR),
                        ("the command without names (numeric/slr/rs_command.py)", RC)], chunks, stubs)
    kern_lines = [f"#: activation {act}, lengths {[Lv for Lv, _ in lengths]}, extra scalar {extra}, loss {loss}",
                  f"ACTIVATION = {act!r}", "KERNEL_SOURCES = {"]
    for Lv, src in sources.items():
        kern_lines.append(f"    {Lv}: {X.literal(src)},")
    kern_lines.append("}")
    chunks.append(("generated kernels (derivations/slr/replica.py printed by attnlimits.symbolic.codegen.ModuleBuilder)",
                   "\n".join(kern_lines) + "\n"))
    fixed = {"activation": act, "L": Ls, "extra": extra, "loss": loss}
    parameters = _parameters(REPLICA_COMMAND, fixed, {"model": model, "nu": float(nu)})
    example = f"{name} --alpha 2,4,10 --lam 0.1 --delta 0.1 --json"
    desc = (f"Replica-symmetric theory of ridge ERM for single-location regression (docs/slr.md §10), "
            f"standalone: activation {act}, L = {','.join(map(str, Ls))}"
            + (f", extra = {extra:g}" if extra is not None else "") + (f", loss {loss}" if loss != "square" else "")
            + f"; defaults --model {model} --nu {nu:g}.\n\n"
            + REPLICA_COMMAND.description)
    chunks.append(("this file's command line (numeric/export.py command_main)",
                   _command_chunk(parameters, fixed, REPLICA_COMMAND.table, desc, [f"python {example}"], _RS_RUN)))
    head = _header(f"Standalone RS solver of ridge ERM for SLR — activation {act}, L = {','.join(map(str, Ls))}",
                   f"{RESULT.title}.\nThe same rows as `attnlimits slr replica --activation {act} --L "
                   f"{','.join(map(str, Ls))}" + (f" --extra {extra:g}" if extra is not None else "")
                   + (f" --loss {loss}" if loss != "square" else "") + " ...`.",
                   hashes, example, ["numpy", "scipy"])
    text = X.assemble(head, chunks, stubs=stubs, main='if __name__ == "__main__":\n    import sys\n\n'
                                                        '    sys.exit(command_main())')
    req = X.third_party_imports(text)
    if set(req) - {"numpy", "scipy"}:
        raise X.ExportError(f"the exported RS solver imports {', '.join(req)}")
    return text, f"RS solver, activation {act}, L={','.join(map(str, Ls))}" + (f", loss {loss}" if loss != "square"
                                                                               else "")


# =============================================================================================
# the command
# =============================================================================================

def export_slr(params: dict, path) -> str:
    """``attnlimits export slr``: write the standalone solver ``params["solver"]`` to ``path``."""
    solver = params.get("solver") or "replica"
    if solver not in SOLVERS:
        raise InputError(f"--solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
    name = os.path.basename(str(path)) or "solver.py"
    if solver == "replica":
        text, what = replica_source(params, name)
    else:
        text, what = bayes_optimal_source(params, name)
    out = _write(path, text)
    return f"wrote {out} ({what}; needs numpy and scipy; python {name} --help)"


_MPMATH_STAND_IN = """\
try:
    import mpmath
except ImportError:  # the float64 path below never calls mpmath; only its name is looked up
    class mpmath:  # noqa: N801 - stands in for the module
        class mpf:  # nothing is an instance: isinstance(nu, mpmath.mpf) is False
            pass

"""

_BO_RUN = '''
class KernelPart:
    """Stand-in for :class:`attnlimits.symbolic.bundle.KernelBundle` (one part): the generated numpy module and its metadata."""

    def __init__(self, name, source, meta):
        self.name, self.source, self.meta, self._module = name, source, meta, None

    def module(self, backend="numpy"):
        if backend != "numpy":
            raise ValueError(f"this exported file carries the numpy (float64) kernels only, not {backend!r}")
        if self._module is None:
            self._module = load_module(self.source, f"attnlimits_{self.name}_numpy")
        return self._module


class Kernels:
    """Stand-in for the SLR kernel bundle: the parts :mod:`attnlimits.numeric.slr.bayes_risk` needs (``bayes_spiked``)."""

    def __init__(self, parts):
        self.parts = parts

    def __getitem__(self, key):
        return self.parts[key]


SLR_KERNELS = Kernels({name: KernelPart(name, src, BAYES_META[name]) for name, src in BAYES_SOURCES.items()})


def population_bayes_risk(model, snr, L, **kw):
    """The population Bayes risk E_B^pop (attnlimits.numeric.slr.bayes_risk.bayes_risk with this file's kernels), as
    ``attnlimits.verify.slr.theory.SLRTheory.bayes_risk`` gives it in-process."""
    return bayes_risk(model, snr, L, kernels=SLR_KERNELS, **kw)


def run(params, *, progress=None):
    """The rows of ``attnlimits slr bayes-optimal`` for this file's length law."""
    mod = load_bo_module(BO_SOURCE)
    return bo_run(mod, LAW, params, population_bayes_risk=population_bayes_risk, progress=progress)
'''

_BO_MAX_RUN = '''
def run(params, *, progress=None):
    """The rows of ``attnlimits slr bayes-optimal --model max`` for this file's length law (the test error
    uses E_B^max(q_k) = 1 - B from the state evolution itself: no population Bayes risk needed)."""
    mod = load_bo_module(BO_SOURCE)
    return bo_run(mod, LAW, params, progress=progress)
'''


def bayes_optimal_source(params: dict, name: str = "bo_solver.py") -> tuple:
    """Text of the standalone BO state-evolution solver for ``params`` (model, L, nu) and a summary.

    ``--model spiked`` carries the spiked-SLR kernels and the population Bayes risk (numeric/slr/bayes_risk.py with
    the ``bayes_spiked`` kernels); ``--model max`` the max-SLR kernels (``max_module_source``) and the max
    path of :mod:`attnlimits.numeric.slr.bo_state_evolution` (inner rule, test-error rule), ν = inf allowed."""
    from attnlimits.derivations.slr.result import BAYES_OPTIMAL_COMMAND, RESULT
    from attnlimits.numeric.slr import bo_command as BC
    from attnlimits.numeric import export as X
    from attnlimits.numeric.slr import bayes_risk as NB
    from attnlimits.numeric import frozen as FZ
    from attnlimits.symbolic import options as SO
    from attnlimits.numeric.slr import bo_state_evolution as NBO

    from .bayes_optimal import bo_module_source, lengths_law
    from .theory import kernels

    for opt in ("activation", "extra"):
        if params.get(opt) is not None:
            raise InputError(f"--{opt} applies to --solver replica only (the Bayes-optimal error has no activation)")
    model = params.get("model") or "spiked"
    nu = params.get("nu")
    nu = BAYES_OPTIMAL_COMMAND.param("nu").default if nu is None else nu
    BC.check_bo_inputs(nu, [1.0], 1.0, model)
    Ls = list(params.get("L") or [2])
    from ._guards import bayes_optimal_seconds, check_work

    check_work(f"export slr --solver bayes-optimal at L = {max(Ls)} (generating its kernels, once)",
               seconds=bayes_optimal_seconds(max(Ls), 1, 2 ** 13))
    law = lengths_law(Ls if len(Ls) > 1 else Ls[0])
    Ltxt = ",".join(map(str, Ls))
    bo_src = bo_module_source([Lv for Lv, _ in law], model)
    bo_hash = NBO.load_bo_module(bo_src).SOURCE_HASH
    mtxt = "spiked-SLR" if model == "spiked" else "max-SLR"
    hashes = {f"BO state evolution{'' if model == 'spiked' else ' (max-SLR)'}, L={','.join(str(Lv) for Lv, _ in law)}":
              bo_hash}
    stubs: set = set()
    # max-SLR: the inner rule of the key smoothing is Gauss–Hermite (attnlimits.numeric.slr.bo_state_evolution.make_inner_rule)
    chunks = _common_chunks(("sobol_normal",) if model == "spiked" else ("sobol_normal", "gauss_hermite_rule"))
    kern_lines = [f"#: length law {law}", f"LAW = {tuple(law)!r}",
                  f"#: derivations/slr/bayes_optimal.py ({'module_source' if model == 'spiked' else 'max_module_source'}),"
                  f" printed by attnlimits.symbolic.codegen.ModuleBuilder",
                  f"BO_SOURCE = {X.literal(bo_src)}"]
    if model == "spiked":
        bundle = kernels()
        needed = ("bayes_spiked",)
        bayes_sources = {k: bundle[k].source("numpy") for k in needed}
        bayes_meta = {k: dict(bundle[k].meta) for k in needed}
        for k in needed:
            hashes[f"population Bayes risk ({k})"] = bundle[k].module("numpy").SOURCE_HASH
        chunks += _embed([("options objects with keyword overrides (symbolic/options.py)", SO),
                          ("the population Bayes risk E_B^pop (numeric/slr/bayes_risk.py)", NB),
                          ("fixed points of frozen maps: the shared ladder (numeric/frozen.py)", FZ),
                          ("the BO state evolution (numeric/slr/bo_state_evolution.py)", NBO),
                          ("the command without names (numeric/slr/bo_command.py)", BC)], chunks, stubs)
        # numeric/slr/bayes_risk.py imports mpmath for its mpmath path; this file runs the float64 path only
        i_nb = next(i for i, (t, _) in enumerate(chunks) if t.startswith("the population Bayes risk"))
        title, text = chunks[i_nb]
        if "\nimport mpmath\n" not in "\n" + text:
            raise X.ExportError("numeric/slr/bayes_risk.py no longer imports mpmath at the top level; update the exporter")
        chunks[i_nb] = (title, ("\n" + text).replace("\nimport mpmath\n", "\n" + _MPMATH_STAND_IN, 1).lstrip("\n"))
        kern_lines += ["#: derivations/slr/bayes.py (the SLR kernel bundle's Bayes parts), printed by ModuleBuilder",
                       "BAYES_SOURCES = {"]
        for k, src in bayes_sources.items():
            kern_lines.append(f"    {k!r}: {X.literal(src)},")
        kern_lines += ["}", f"BAYES_META = {bayes_meta!r}"]
        run_src, kern_what = _BO_RUN, "derivations/slr/bayes_optimal.py and derivations/slr/bayes.py"
        extra_what = "\nthe population Bayes risk E_B^pop it needs is computed by the float64 path of numeric/slr/bayes_risk.py."
    else:
        chunks += _embed([("options objects with keyword overrides (symbolic/options.py)", SO),
                          ("fixed points of frozen maps: the shared ladder (numeric/frozen.py)", FZ),
                          ("the BO state evolution (numeric/slr/bo_state_evolution.py)", NBO),
                          ("the command without names (numeric/slr/bo_command.py)", BC)], chunks, stubs)
        run_src, kern_what = _BO_MAX_RUN, "derivations/slr/bayes_optimal.py, max-SLR"
        extra_what = ("\nThe test error uses E_B^max(q_k) from the state evolution's own integrals (docs/slr.md §11, "
                      "max-SLR).")
    chunks.append((f"generated kernels ({kern_what})", "\n".join(kern_lines) + "\n"))
    fixed = {"model": model, "L": Ls}
    parameters = _parameters(BAYES_OPTIMAL_COMMAND, fixed, {"nu": float(nu)})
    example = f"{name} --alpha 1,4,10,20 --delta 0.1 --json"
    desc = (f"Bayes-optimal test error of {mtxt} at finite alpha (docs/slr.md §11), standalone: L = {Ltxt}; "
            f"default --nu {float(nu):g}.\n\n" + BAYES_OPTIMAL_COMMAND.description)
    chunks.append(("this file's command line (numeric/export.py command_main)",
                   _command_chunk(parameters, fixed, BAYES_OPTIMAL_COMMAND.table, desc, [f"python {example}"],
                                  run_src)))
    head = _header(f"Standalone Bayes-optimal state evolution of {mtxt} — L = {Ltxt}",
                   f"{RESULT.title}.\nThe same rows as `attnlimits slr bayes-optimal --model {model} --L {Ltxt} ...`;"
                   + extra_what, hashes, example, ["numpy", "scipy"])
    text = X.assemble(head, chunks, stubs=stubs, main='if __name__ == "__main__":\n    import sys\n\n'
                                                        '    sys.exit(command_main())')
    req = X.third_party_imports(text)
    if set(req) - {"numpy", "scipy", "mpmath"}:
        raise X.ExportError(f"the exported BO solver imports {', '.join(req)}")
    return text, f"BO state evolution, {model}, L={Ltxt}"
