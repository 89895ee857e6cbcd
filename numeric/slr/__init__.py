"""Solvers specific to single-location regression (docs/slr.md): :mod:`.rs`, the replica-symmetric fixed point of
ridge ERM.  The generic engine (rules, ladders, code generation, export) stays in :mod:`attnlimits.numeric`."""
