"""Results, one module each: the model and its equations written once in SymPy.

- :mod:`derivations.attention_rmt` — interpolation error of nonlinear attention vs ridge
  regression (Liao et al., arXiv:2506.18656; spec attention_rmt.md).

Modules are imported on demand (``from derivations import attention_rmt``).
"""
__all__ = ["attention_rmt"]
