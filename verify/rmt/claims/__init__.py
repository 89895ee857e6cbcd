r"""Claims of the attention-vs-ridge random-matrix result (``docs/attention_rmt.md`` §12).

Source: Liao, Liu, Hou, Zou, Ling, *On the Interpolation Error of Nonlinear Attention versus
Linear Regression*, arXiv:2506.18656, as derived independently in ``docs/attention_rmt.md``.

Every claim compares three things:

1. **theory vs spec** — the generated solver (:func:`attnlimits.numeric.compile_model` of
   :data:`attnlimits.derivations.attention_rmt.model`) reproduces the number the spec states, to the spec's
   precision (tables of §11/§12 are given to 4 decimals: tolerance ``5e-4``).  These checks are
   deterministic, need no Monte Carlo, carry labels starting with ``"docs: "`` and no SE;
   :func:`spec_checks` runs them alone.
2. **MC vs theory** — the PyTorch simulator of :mod:`attnlimits.verify.rmt.montecarlo` against the engine, by
   the rule of :mod:`attnlimits.verify.comparison`: a p-value from Student t with ``draws − 1``
   degrees of freedom, decided with the run's family by Holm.  The theory side is always the
   engine's value, never the spec's number, so no flat tolerance applies (the ± bands of §12 are
   the precision of the *quoted* numbers, used by the spec checks of 1.).  Claims about a limit
   whose finite-n correction shows at the quick sizes (V4–V11, V14, V16, V17, V19, V20) run at two sizes and
   compare the MC − theory difference extrapolated to n → ∞ at rate 1/n
   (:func:`attnlimits.verify.comparison.extrapolate`); the fitted correction is in the check's note.
3. **qualitative statements** (signs, orderings, bands) where the claim makes one.

Monte Carlo runs are cached in the :class:`attnlimits.verify.claims.base.Context` under a key made of all
their arguments, so claims that share a setting simulate once: V4, V5, V6, V7 and V14 share the
random-input runs; V8–V11 and V17 share one paired run (w = 0, orthogonal, aligned, anti-aligned,
key-only, query-only, general-rank L); V15 reuses V2's SNR-4 run.  Seeds are derived from ``ctx.seed`` and the
run's name by :meth:`attnlimits.verify.claims.base.Context.seed_for`.

Claims registered here: ``V1`` … ``V20`` (§12), ``mixed-geometry`` (§12, after the table), the
identities ``ID-parseval`` (§4.1), ``ID-backends`` (§1, §9: NumPy vs mpmath), ``ID-export`` and
``ID-derivative`` (§6, §9: implicit derivative vs central difference), and the paper's headlines
``H-random``, ``H-aligned`` and ``P1-traces``.

The claims sit in one module per part of the spec they verify, each importing only :mod:`.common`:
:mod:`.exact` (§3), :mod:`.ridge` (§7), :mod:`.random_inputs` (§8 with μ = 0), :mod:`.geometry` (§6,
structured inputs and weights), :mod:`.activation` (§4, Hermite facts), :mod:`.kernels` (§4.2, §5) and
:mod:`.numerics` (§1, §9).
This module registers them in the registry's order.
"""
from __future__ import annotations

from attnlimits.verify.claims.base import Check, register

from . import activation, exact, geometry, kernels, numerics, random_inputs, ridge
from .common import ACTIVATIONS, SPEC_TOLERANCE, hermite, theory_curve
from .kernels import bulk_traces, simulate_bulk_traces, solve_noise_kernel_stieltjes

__all__ = ["SPEC_TOLERANCE", "ACTIVATIONS", "spec_checks", "SPEC_CHECKS", "CLAIM_ORDER",
           "theory_curve", "hermite", "solve_noise_kernel_stieltjes", "bulk_traces", "simulate_bulk_traces"]

_PARTS = (exact, ridge, random_inputs, geometry, activation, kernels, numerics)

#: The claims' names in the order they are registered (and listed by ``attnlimits verify --list``).
CLAIM_ORDER = ("V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8", "V9", "V10", "V11", "V12", "V13", "V14", "V15",
               "V16", "V17", "V18", "V19", "V20", "mixed-geometry", "ID-parseval", "ID-backends", "ID-export",
               "ID-derivative", "H-random", "H-aligned", "P1-traces")

_SPEC_ORDER = ("V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8", "V9", "V10", "V11", "V12", "V13", "V14", "V15",
               "V16", "V17", "V18", "V19", "V20", "mixed-geometry")

#: claim name → deterministic theory-vs-spec checks (no Monte Carlo); see :func:`spec_checks`.
SPEC_CHECKS: dict = {name: fn for name in _SPEC_ORDER for part in _PARTS for key, fn in part.SPEC_CHECKS.items()
                     if key == name}


def spec_checks(name: str, ctx=None) -> list[Check]:
    """The deterministic theory-vs-spec checks of claim ``name`` (no Monte Carlo)."""
    from attnlimits.verify.claims.base import Context

    return SPEC_CHECKS[name](ctx or Context("quick"))


def _references():
    from attnlimits.derivations import attention_rmt as R

    return tuple(R.REFERENCES)


def _register_all() -> None:
    claims = {c.name: c for part in _PARTS for c in part.CLAIMS}
    if set(claims) != set(CLAIM_ORDER) or len(claims) != sum(len(part.CLAIMS) for part in _PARTS):
        raise RuntimeError(f"the rmt claim modules declare {sorted(claims)}, the order lists {sorted(CLAIM_ORDER)}")
    for name in CLAIM_ORDER:
        claims[name].references = _references()
        register(claims[name])


_register_all()
