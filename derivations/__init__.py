"""Results, one module each: the model and its equations written once in SymPy.

- :mod:`attnlimits.derivations.attention_rmt` — interpolation error of nonlinear attention vs ridge
  regression (Liao et al., arXiv:2506.18656; docs/attention_rmt.md).
- :mod:`attnlimits.derivations.slr` — single-location regression (package): data
  models, attention variants, risks, linear closed forms, Bayes risk and the predecessor [M]
  (Duranthon et al., arXiv:2509.21936; Marion et al., arXiv:2410.01537; docs/slr.md).

Modules are imported on demand (``from attnlimits.derivations import slr``).
"""
__all__ = ["attention_rmt", "slr"]
