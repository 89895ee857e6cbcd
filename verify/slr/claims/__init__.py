"""The claims of single-location regression (docs/slr.md §14): :mod:`.population` (population level, §5–§9),
:mod:`.finite` (finite sample ratio: replica theory, ERM, §10–§12) and :mod:`.bayes_optimal` (Bayes-optimal state
evolution, GAMP, posterior sampling, §11).  Importing a module registers its claims with
:mod:`attnlimits.verify.claims` (the engine); the result's manifest names the modules."""
