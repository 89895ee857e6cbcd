"""The SymPy symbols shared by the modules of single-location regression, defined once.

Every module of :mod:`attnlimits.derivations.slr` takes these from here, so that a name always carries one
set of assumptions (``tests/derivations/test_symbols.py``): two symbols ``nu`` with different
assumptions print alike and never cancel.
"""
import sympy as sp

__all__ = ["nu", "L", "m_k", "m_v", "q_k", "q_v", "Delta", "alpha"]

nu = sp.Symbol("nu", positive=True)  #: spike strength ν (ν = 0 is handled exactly where it is allowed)
L = sp.Symbol("L", positive=True, integer=True)  #: sequence length
m_k, m_v = sp.symbols("m_k m_v", real=True)  #: key and value overlaps with the teacher (§5)
q_k, q_v = sp.symbols("q_k q_v", nonnegative=True)  #: self-overlaps (§5)
Delta = sp.Symbol("Delta", nonnegative=True)  #: label noise Δ
alpha = sp.Symbol("alpha", positive=True)  #: sample ratio α = N/D
