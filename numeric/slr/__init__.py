"""Solvers specific to single-location regression (docs/slr.md); the generic engine (fixed points, code generation,
export) stays in :mod:`attnlimits.numeric`.

- :mod:`.population` — population risks and their optimum (§5–§8);
- :mod:`.bayes_risk` — the Bayes risk (§9);
- :mod:`.bo_state_evolution` — Bayes-optimal state evolution, spiked and max-SLR (§11), and :mod:`.bo_command`;
- :mod:`.rs` — the replica-symmetric fixed point of ridge ERM (§10), and :mod:`.rs_command`.

Nothing here imports :mod:`attnlimits.derivations`: kernels are generated there and passed in.
"""
