r"""Monte Carlo simulators of the random-matrix result: the interpolation error of nonlinear attention
(docs/attention_rmt.md §2, §3, §10).

Estimates (:class:`attnlimits.verify.stats.MCEstimate`, :func:`attnlimits.verify.stats.mean_se`) live in :mod:`attnlimits.verify.stats`,
device and seed helpers (:func:`attnlimits.verify.torch_device.resolve_device`, :func:`attnlimits.verify.torch_device.draw_seed`)
in :mod:`attnlimits.verify.torch_device`; both are shared with the SLR simulators.

Everything runs in PyTorch, float64, on device ``"auto"`` (CUDA when available, else CPU). Every
random number comes from an explicit :class:`torch.Generator`: draw ``i`` under master seed ``s``
uses one CPU generator seeded with a hash of ``(s, i)`` (:func:`draw_seed`), so results do not
depend on how draws are batched, nor (beyond round-off) on the device.

Model (docs/attention_rmt.md §2, §10)
--------------------
Tokens :math:`X = Z + \mu y^\top \in \mathbb R^{p\times n}` with :math:`y_i=\pm1` Rademacher and
:math:`Z_{ai}\sim\mathcal N(0,1)` i.i.d.; weight product :math:`W = W_K^\top W_Q = I_p + w_K w_Q^\top`
(or :math:`I_p + L`); attention kernel

.. math::

    K = f\big(X^\top W X/\sqrt p\big)/\sqrt p,\qquad K_{ij} = x_i^\top W x_j/\sqrt p\ \text{(key $i$, query $j$)},

with its diagonal zeroed (``diagonal="zero"``, :math:`\kappa=0`), kept (``"keep"``) or set to a
constant (``"set"`` with ``kappa``), docs/attention_rmt.md §4.3. Features :math:`\Phi = XK`, Gram matrix
:math:`G = \Phi^\top\Phi/n`, resolvent :math:`Q(\gamma) = (G+\gamma I_n)^{-1}`. The ridge probe
error obeys the exact identity of docs/attention_rmt.md §3

.. math::

    E(\gamma) = \frac1n\|y-\Phi^\top w_V^\star\|^2 = \frac{\gamma^2}{n}\,y^\top Q(\gamma)^2 y
    = \frac{\gamma^2}{n}\sum_k \frac{(v_k^\top y)^2}{(\lambda_k+\gamma)^2},

where :math:`G = \sum_k\lambda_k v_kv_k^\top`. One eigendecomposition per draw therefore serves the
whole :math:`\gamma` grid (``estimator="quadratic"``). For random inputs (:math:`\mu=0`) the
trace estimator :math:`\frac1n\sum_k(\gamma/(\lambda_k+\gamma))^2` has the same limit and an
:math:`O(1/n)` fluctuation (``estimator="trace"``). The ridge baseline is the same with
:math:`\Phi = X`, computed on the same draw (paired).

References
----------
Liao, Liu, Hou, Zou, Ling, arXiv:2506.18656 (§2 model, Proposition 2 ridge baseline);
``docs/attention_rmt.md`` §2, §3, §4.2–4.3, §10, §12 (claims V1, V4–V20).
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping
from attnlimits.symbolic.options import resolve_options

import numpy as np
import torch

from attnlimits.verify.torch_device import (
    DTYPE,
    TORCH_NAMESPACE,
    bytes_per_draw,
    draw_generator,
    draw_seed,
    make_torch_printer,
    memory_budget_bytes,
    resolve_device,
)
from attnlimits.verify.stats import MCEstimate, mean_se

__all__ = [
    "AttentionMCResult",
    "MCOptions",
    "attention_kernel",
    "draw_seed",
    "draw_tokens",
    "noise_kernel_stieltjes",
    "probe_error_curve",
    "probe_error_curve_features",
    "probe_error_explicit",
    "probe_errors_cholesky",
    "simulate_attention",
    "torch_activation",
]

#: Kept-diagonal mode is refused when the measured mean diagonal exceeds this (docs/attention_rmt.md §4.3, He₂).
KAPPA_REFUSE = 10.0

_DIAGONAL_MODES = ("zero", "keep", "set")
_ESTIMATORS = ("quadratic", "trace")


# =============================================================================================
# activations
# =============================================================================================


def torch_activation(expr) -> Callable[[torch.Tensor], torch.Tensor]:
    """Convert a SymPy expression of one variable into an elementwise PyTorch function.

    Parameters
    ----------
    expr : sympy.Expr or str
        The **centred** activation (the caller has already subtracted :math:`a_0=\\mathbb E f(\\xi)`),
        e.g. ``tanh(t)``, ``Max(t, 0) - 1/sqrt(2*pi)``, ``(t**2 - 1)/sqrt(2)``. Its single free
        symbol is the argument (normally ``attnlimits.symbolic.hermite.t``); a constant expression gives a
        constant function. Strings are parsed with :func:`sympy.sympify`.

    Returns
    -------
    callable
        ``g(x: Tensor) -> Tensor`` of the same shape, dtype and device as ``x``.

    Notes
    -----
    Built with :func:`sympy.lambdify` and a module mapping to PyTorch: ``sin, cos, tan, tanh, sinh,
    cosh, exp, log, sqrt, erf, erfc, atan, …``; ``Abs → torch.abs``; ``Max/Min →
    torch.maximum/minimum`` with the constants turned into tensors; ``sign``; ``Heaviside(x, H0)
    → torch.heaviside``; ``Piecewise → torch.where``; ``pi`` and ``E``. Rational constants are
    printed as Python divisions and evaluated in float64. Unknown functions raise
    ``sympy.printing.codeprinter.PrintMethodNotImplementedError`` (a ``NotImplementedError``)
    rather than silently falling back to scalar code.

    Examples
    --------
    >>> import sympy, torch
    >>> t = sympy.Symbol("t")
    >>> relu = torch_activation(sympy.Max(t, 0) - 1 / sympy.sqrt(2 * sympy.pi))
    >>> relu(torch.tensor([-1.0, 2.0], dtype=torch.float64))
    tensor([-0.3989,  1.6011], dtype=torch.float64)
    """
    import sympy

    if isinstance(expr, str):
        expr = sympy.sympify(expr)
    expr = sympy.sympify(expr)
    free = sorted(expr.free_symbols, key=lambda s: s.name)
    if len(free) > 1:
        raise ValueError(f"activation must have one free symbol, got {free} in {expr}")
    if not free:
        value = float(expr)

        def constant(x: torch.Tensor) -> torch.Tensor:
            return torch.full_like(x, value)

        constant.__doc__ = f"constant activation {expr}"
        return constant

    (sym,) = free
    fn = sympy.lambdify(sym, expr, modules=[TORCH_NAMESPACE], printer=make_torch_printer())

    def activation(x: torch.Tensor) -> torch.Tensor:
        out = fn(x)
        if not isinstance(out, torch.Tensor):
            return torch.full_like(x, float(out))
        if out.shape != x.shape:
            out = out.expand_as(x).clone()
        return out

    activation.__doc__ = f"elementwise torch activation for {expr} (argument {sym})"
    activation.expr = expr  # type: ignore[attr-defined]
    return activation


def _as_activation(f) -> tuple[Callable[[torch.Tensor], torch.Tensor], str]:
    """SymPy expression / string → torch function; a Python callable is used as is."""
    if callable(f) and not _is_sympy(f):
        return f, getattr(f, "__name__", repr(f))
    return torch_activation(f), str(f)


def _is_sympy(obj) -> bool:
    try:
        import sympy
    except ImportError:  # pragma: no cover
        return False
    return isinstance(obj, sympy.Basic)


@dataclass
class AttentionMCResult:
    """Output of :func:`simulate_attention` (docs/attention_rmt.md §10).

    Attributes
    ----------
    gammas : numpy.ndarray
        Ridge parameters :math:`\\gamma` (length ``G``).
    errors : dict[str, numpy.ndarray]
        Setting name → ``draws × G`` probe errors :math:`E(\\gamma)` of attention.
    ridge : numpy.ndarray or None
        ``draws × G`` ridge-regression errors :math:`E_{RR}(\\gamma)` on the same draws.
    kappa_hat : dict[str, numpy.ndarray]
        Setting → per-draw mean of :math:`\\operatorname{diag}K` *before* the diagonal mode.
    frob : dict[str, numpy.ndarray]
        Setting → per-draw :math:`\\|XK\\|_F^2/n^2` (after the diagonal mode); its limit at
        :math:`\\mu=0` is :math:`M_1=\\nu+a_1^2/c+2\\kappa a_1+c\\kappa^2` (§8 E, V5).
    meta : dict
        Parameters, master seed, per-draw seeds, device, dtype, versions (for tidy output).
    """

    gammas: np.ndarray
    errors: dict[str, np.ndarray]
    ridge: np.ndarray | None
    kappa_hat: dict[str, np.ndarray]
    frob: dict[str, np.ndarray]
    meta: dict[str, Any] = field(default_factory=dict)

    def _samples(self, name: str) -> np.ndarray:
        if name == "ridge":
            if self.ridge is None:
                raise KeyError("ridge baseline was not computed (ridge=False)")
            return self.ridge
        if name not in self.errors:
            raise KeyError(f"unknown setting {name!r}; have {sorted(self.errors)} and 'ridge'")
        return self.errors[name]

    @property
    def n_draws(self) -> int:
        return int(next(iter(self.errors.values())).shape[0])

    def estimate(self, name: str) -> MCEstimate:
        """Mean ± SE over draws of the error curve of setting ``name`` (or ``"ridge"``)."""
        return mean_se(self._samples(name), axis=0)

    def paired_difference(self, a: str, b: str) -> MCEstimate:
        """Mean ± SE of the per-draw difference ``E_a − E_b`` on shared draws; ``b`` (or ``a``)
        may be ``"ridge"``. Pairing removes most of the y-specific fluctuation (§10)."""
        return mean_se(self._samples(a) - self._samples(b), axis=0)

    def kappa_estimate(self, name: str) -> MCEstimate:
        """Mean ± SE of :math:`\\hat\\kappa` for setting ``name``."""
        return mean_se(self.kappa_hat[name])

    def frob_estimate(self, name: str) -> MCEstimate:
        """Mean ± SE of :math:`\\|XK\\|_F^2/n^2` for setting ``name``."""
        return mean_se(self.frob[name])

    def to_records(self) -> list[dict]:
        """Tidy rows ``{setting, gamma, mean, se, n_draws}`` (attention settings and ridge)."""
        rows = []
        names = list(self.errors) + (["ridge"] if self.ridge is not None else [])
        for name in names:
            est = self.estimate(name)
            for g, m, s in zip(self.gammas, est.mean, est.se):
                rows.append(
                    {"setting": name, "gamma": float(g), "mean": float(m), "se": float(s),
                     "n_draws": est.n_draws}
                )
        return rows


# =============================================================================================
# sampling and kernels
# =============================================================================================


def _padded(vec, p: int, what: str, device) -> torch.Tensor:
    """Vector given on the first k ≤ p coordinates (zero padding is implicit)."""
    v = torch.as_tensor(np.asarray(vec, dtype=float).ravel(), dtype=DTYPE, device=device)
    if v.numel() > p:
        raise ValueError(f"{what} has {v.numel()} coordinates but p = {p}")
    return v


def draw_tokens(
    n: int,
    p: int,
    *,
    mu=None,
    seed: int = 0,
    index: int = 0,
    device="auto",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``(X, y)`` of draw ``index`` under master ``seed`` (docs/attention_rmt.md §2, §10).

    :math:`y\\in\\{\\pm1\\}^n` Rademacher, then :math:`Z\\in\\mathbb R^{p\\times n}` i.i.d.
    :math:`\\mathcal N(0,1)`, both from one CPU generator seeded with ``draw_seed(seed, index)``;
    :math:`X = Z + \\mu y^\\top` with ``mu`` given on the first ``len(mu)`` coordinates (``None``:
    :math:`\\mu=0`, then ``X = Z``). The same ``(seed, index)`` gives the same draw in
    :func:`simulate_attention`, :func:`probe_error_explicit` and :func:`noise_kernel_stieltjes`.

    Returns
    -------
    X : Tensor (p, n), float64, on ``device``
    y : Tensor (n,), float64, on ``device``
    """
    dev = resolve_device(device)
    g = draw_generator(seed, index)
    y = torch.randint(0, 2, (n,), generator=g, dtype=DTYPE) * 2.0 - 1.0
    X = torch.randn((p, n), generator=g, dtype=DTYPE)
    if mu is not None:
        m = _padded(mu, p, "mu", "cpu")
        k = m.numel()
        X[:k] += m[:, None] * y[None, :]
    return X.to(dev), y.to(dev)


@dataclass
class _Weights:
    """Parsed weight spec: W = I (identity), I + w_K w_Qᵀ (rank1) or I + L (block)."""

    kind: str
    wk: torch.Tensor | None = None
    wq: torch.Tensor | None = None
    L: torch.Tensor | None = None

    def describe(self) -> dict:
        if self.kind == "rank1":
            return {"wk": self.wk.cpu().tolist(), "wq": self.wq.cpu().tolist()}
        if self.kind == "block":
            return {"L": self.L.cpu().tolist()}
        return {}

    def apply(self, X: torch.Tensor) -> torch.Tensor:
        """``W X`` for X of shape (..., p, n) without forming a p×p matrix."""
        if self.kind == "identity":
            return X
        WX = X.clone()
        if self.kind == "rank1":
            kq = self.wq.numel()
            proj = torch.einsum("k,...kn->...n", self.wq, X[..., :kq, :])  # w_Qᵀ X
            kk = self.wk.numel()
            WX[..., :kk, :] += self.wk[:, None] * proj[..., None, :]
        else:
            k = self.L.shape[0]
            WX[..., :k, :] += torch.matmul(self.L, X[..., :k, :])
        return WX


def _parse_weights(spec: Mapping | None, p: int, device) -> _Weights:
    spec = dict(spec or {})
    if not spec:
        return _Weights("identity")
    if set(spec) == {"L"}:
        L = torch.as_tensor(np.asarray(spec["L"], dtype=float), dtype=DTYPE, device=device)
        if L.ndim != 2 or L.shape[0] != L.shape[1]:
            raise ValueError(f"L must be a square k×k matrix, got shape {tuple(L.shape)}")
        if L.shape[0] > p:
            raise ValueError(f"L acts on {L.shape[0]} coordinates but p = {p}")
        return _Weights("block", L=L)
    if set(spec) == {"wk", "wq"}:
        wk = _padded(spec["wk"], p, "wk", device)
        wq = _padded(spec["wq"], p, "wq", device)
        return _Weights("rank1", wk=wk, wq=wq)
    raise ValueError(f"weight spec must be {{}}, {{'wk','wq'}} or {{'L'}}, got keys {sorted(spec)}")


def attention_kernel(
    X: torch.Tensor,
    f,
    weights: Mapping | None = None,
    *,
    diagonal: str = "zero",
    kappa: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention kernel :math:`K = f(X^\\top W X/\\sqrt p)/\\sqrt p` and its raw mean diagonal.

    Parameters
    ----------
    X : Tensor (..., p, n)
        Tokens (a leading batch dimension is allowed).
    f : sympy.Expr or callable
        Centred activation (see :func:`torch_activation`).
    weights : mapping
        ``{}`` (W = I), ``{"wk": vec, "wq": vec}`` (W = I + w_K w_Qᵀ) or ``{"L": k×k}``
        (W = I + L on the first k coordinates); vectors are zero-padded to length p.
    diagonal : {"zero", "keep", "set"}
        Diagonal convention of docs/attention_rmt.md §4.3: zero it (κ = 0), keep it, or set it to ``kappa``.
    kappa : float, optional
        Diagonal value for ``diagonal="set"``.

    Returns
    -------
    K : Tensor (..., n, n)
        Entry (i, j) is :math:`f(x_i^\\top W x_j/\\sqrt p)/\\sqrt p` (key i, query j), after the
        diagonal mode.
    kappa_hat : Tensor (...,)
        Mean of :math:`\\operatorname{diag}K` *before* the diagonal mode.
    """
    fn = f if (callable(f) and not _is_sympy(f)) else torch_activation(f)
    _check_diagonal(diagonal, kappa)
    W = weights if isinstance(weights, _Weights) else _parse_weights(weights, X.shape[-2], X.device)
    return _kernel(X, fn, W, diagonal, kappa)


def _check_diagonal(diagonal: str, kappa) -> None:
    if diagonal not in _DIAGONAL_MODES:
        raise ValueError(f"diagonal must be one of {_DIAGONAL_MODES}, got {diagonal!r}")
    if diagonal == "set" and kappa is None:
        raise ValueError('diagonal="set" needs a value for kappa')
    if kappa is not None and diagonal != "set":
        raise ValueError(
            f'kappa={kappa} given with diagonal={diagonal!r}; use diagonal="set" to impose a '
            'diagonal constant ("keep" keeps the measured diagonal, "zero" zeroes it)'
        )


def _kernel(X, fn, W: _Weights, diagonal: str, kappa):
    p = X.shape[-2]
    sp = math.sqrt(p)
    S = torch.matmul(X.transpose(-1, -2), W.apply(X))  # x_iᵀ W x_j
    S.div_(sp)
    K = fn(S)
    del S
    K.div_(sp)
    if not torch.isfinite(K).all():
        raise FloatingPointError("activation produced non-finite kernel entries")
    diag = torch.diagonal(K, dim1=-2, dim2=-1)
    kappa_hat = diag.mean(dim=-1).clone()
    if diagonal == "zero":
        diag.zero_()
    elif diagonal == "set":
        diag.fill_(float(kappa))
    elif diagonal == "keep":
        worst = kappa_hat.abs().max().item()
        if worst > KAPPA_REFUSE:
            raise ValueError(
                f"kept-diagonal mode refused: mean diagonal {worst:.3g} exceeds {KAPPA_REFUSE} "
                "(docs/attention_rmt.md §4.3; e.g. He2 has kappa ~ sqrt(p))"
            )
    return K, kappa_hat


# =============================================================================================
# error curves
# =============================================================================================


def probe_error_curve(
    G: torch.Tensor,
    y: torch.Tensor | None,
    gammas,
    *,
    estimator: str = "quadratic",
    solver: str = "eigh",
) -> torch.Tensor:
    """Probe error :math:`E(\\gamma)` on a grid from a Gram matrix :math:`G = \\Phi^\\top\\Phi/n`.

    Parameters
    ----------
    G : Tensor (..., n, n)
        Symmetric positive semi-definite Gram matrices.
    y : Tensor (..., n) or None
        Labels (not needed by the trace estimator).
    gammas : array_like, positive
    estimator : {"quadratic", "trace"}
        ``quadratic``: :math:`\\frac{\\gamma^2}n y^\\top(G+\\gamma I)^{-2}y`;
        ``trace``: :math:`\\frac1n\\operatorname{tr}[\\gamma^2(G+\\gamma I)^{-2}]` (valid for μ = 0).
    solver : {"eigh", "cholesky"}
        ``eigh``: one ``torch.linalg.eigh`` (``eigvalsh`` for the trace estimator) for the whole
        grid, eigenvalues clipped at 0; cost :math:`O(n^3)` once plus :math:`O(n\\,|\\gamma|)`.
        ``cholesky``: one Cholesky factorisation and solve per γ, :math:`O(n^3|\\gamma|/3)`.

    Returns
    -------
    Tensor (..., len(gammas))
    """
    if estimator not in _ESTIMATORS:
        raise ValueError(f"estimator must be one of {_ESTIMATORS}, got {estimator!r}")
    n = G.shape[-1]
    gam = torch.as_tensor(np.asarray(gammas, dtype=float).ravel(), dtype=G.dtype, device=G.device)
    if not bool((gam > 0).all()):
        raise ValueError("all gammas must be positive")
    if estimator == "quadratic" and y is None:
        raise ValueError("the quadratic estimator needs y")

    if solver == "eigh":
        if estimator == "trace":
            lam = torch.linalg.eigvalsh(G).clamp_min(0.0)
            r = gam[:, None] / (lam[..., None, :] + gam[:, None])  # (..., G, n)
            return (r * r).mean(dim=-1)
        lam, V = torch.linalg.eigh(G)
        lam = lam.clamp_min(0.0)
        a = torch.matmul(V.transpose(-1, -2), y[..., :, None]).squeeze(-1) ** 2  # (v_kᵀy)²
        r = gam[:, None] / (lam[..., None, :] + gam[:, None])
        return (a[..., None, :] * r * r).sum(dim=-1) / n
    if solver == "cholesky":
        if G.device.type == "cpu" and G.ndim > 2:
            # batched CPU Cholesky is slower than a loop over the matrices (torch 2.x)
            batch_shape = G.shape[:-2]
            Gs = G.reshape(-1, n, n)
            ys = None if y is None else y.reshape(-1, n)
            rows = [
                probe_error_curve(Gs[b], None if ys is None else ys[b], gam.cpu().numpy(),
                                  estimator=estimator, solver="cholesky")
                for b in range(Gs.shape[0])
            ]
            return torch.stack(rows).reshape(*batch_shape, gam.numel())
        A = torch.empty_like(G)
        out = []
        for g in gam:
            A.copy_(G)
            A.diagonal(dim1=-2, dim2=-1).add_(g)
            Lc = torch.linalg.cholesky(A)
            if estimator == "quadratic":
                u = torch.cholesky_solve(y[..., :, None], Lc).squeeze(-1)
                out.append(g * g * (u * u).sum(dim=-1) / n)
            else:
                Qi = torch.cholesky_inverse(Lc)
                out.append(g * g * (Qi * Qi).sum(dim=(-2, -1)) / n)
        return torch.stack(out, dim=-1)
    raise ValueError(f"solver must be 'eigh' or 'cholesky', got {solver!r}")


_ROUTES = ("auto", "pxp", "nxn")


def probe_error_curve_features(
    Phi: torch.Tensor,
    y: torch.Tensor | None,
    gammas,
    *,
    estimator: str = "quadratic",
    route: str = "auto",
) -> torch.Tensor:
    r"""Probe error :math:`E(\gamma)` on a grid from the features :math:`\Phi\in\mathbb R^{p\times n}`.

    :math:`G=\Phi^\top\Phi/n` (:math:`n\times n`) has rank at most :math:`p`, and its non-zero eigenvalues
    are those of :math:`H=\Phi\Phi^\top/n=\sum_{k\le p}\lambda_ku_ku_k^\top` (:math:`p\times p`), with
    :math:`v_k=\Phi^\top u_k/\sqrt{n\lambda_k}`. With :math:`b_k=(u_k^\top\Phi y)^2/n=\lambda_k(v_k^\top y)^2`
    and :math:`\|y\|^2-\sum_{k\le p}(v_k^\top y)^2` on the null space of :math:`G` (eigenvalue 0),
    the identity of docs/attention_rmt.md §3 becomes

    .. math::

        E(\gamma)=\frac1n\Big[\|y\|^2-\sum_{k\le p}b_k\,\frac{\lambda_k+2\gamma}{(\lambda_k+\gamma)^2}\Big],
        \qquad
        E_{\rm trace}(\gamma)=\frac1n\Big[n-p+\sum_{k\le p}\Big(\frac{\gamma}{\lambda_k+\gamma}\Big)^2\Big]

    (no division by :math:`\lambda_k`, so a rank-deficient :math:`\Phi` is fine).

    Parameters
    ----------
    Phi : Tensor (..., p, n)
    y : Tensor (..., n) or None
        Labels (not needed by the trace estimator).
    gammas : array_like, positive
    estimator : {"quadratic", "trace"}
        As in :func:`probe_error_curve`.
    route : {"auto", "pxp", "nxn"}
        ``"pxp"``: one :math:`p\times p` eigendecomposition of :math:`H` (cost :math:`\approx np^2+9p^3`);
        ``"nxn"``: :func:`probe_error_curve` on :math:`G` (:math:`\approx n^2p+9n^3`); ``"auto"``: ``"pxp"``
        when :math:`p<n`, else ``"nxn"``. Both give the same curve to round-off.

    Returns
    -------
    Tensor (..., len(gammas))
    """
    if route not in _ROUTES:
        raise ValueError(f"route must be one of {_ROUTES}, got {route!r}")
    if estimator not in _ESTIMATORS:
        raise ValueError(f"estimator must be one of {_ESTIMATORS}, got {estimator!r}")
    p, n = Phi.shape[-2], Phi.shape[-1]
    if route == "auto":
        route = "pxp" if p < n else "nxn"
    if route == "nxn":
        G = torch.matmul(Phi.transpose(-1, -2), Phi).div_(n)
        return probe_error_curve(G, y, gammas, estimator=estimator, solver="eigh")
    gam = torch.as_tensor(np.asarray(gammas, dtype=float).ravel(), dtype=Phi.dtype, device=Phi.device)
    if not bool((gam > 0).all()):
        raise ValueError("all gammas must be positive")
    if estimator == "quadratic" and y is None:
        raise ValueError("the quadratic estimator needs y")
    H = torch.matmul(Phi, Phi.transpose(-1, -2)).div_(n)
    if estimator == "trace":
        lam = torch.linalg.eigvalsh(H).clamp_min(0.0)
        r = gam[:, None] / (lam[..., None, :] + gam[:, None])  # (..., G, p)
        return ((r * r).sum(dim=-1) + (n - p)) / n
    lam, U = torch.linalg.eigh(H)
    lam = lam.clamp_min(0.0)
    z = torch.matmul(Phi, y[..., :, None]).squeeze(-1)  # Φy, (..., p)
    b = torch.matmul(U.transpose(-1, -2), z[..., :, None]).squeeze(-1) ** 2 / n  # (u_kᵀΦy)²/n
    lg = lam[..., None, :] + gam[:, None]  # (..., G, p)
    w = (lg + gam[:, None]) / (lg * lg)
    yy = (y * y).sum(dim=-1)
    return (yy[..., None] - (b[..., None, :] * w).sum(dim=-1)) / n


# =============================================================================================
# the simulator
# =============================================================================================


def _curve(Phi, y, gam, estimator: str, solver: str, route: str) -> torch.Tensor:
    """Error curve of one batch: eigen routes by :func:`probe_error_curve_features`, Cholesky on G."""
    if solver == "cholesky":
        G = torch.matmul(Phi.transpose(-1, -2), Phi).div_(Phi.shape[-1])
        return probe_error_curve(G, y, gam, estimator=estimator, solver="cholesky")
    return probe_error_curve_features(Phi, y, gam, estimator=estimator, route=route)


def _default_batch(n: int, p: int, draws: int, device: torch.device) -> int:
    return int(max(1, min(draws, memory_budget_bytes(device) // bytes_per_draw(n, p))))


@dataclass(frozen=True)
class MCOptions:
    """Monte Carlo knobs of :func:`simulate_attention` and :func:`probe_errors_cholesky` (docs/attention_rmt.md §10).

    Both functions take ``options=`` (an ``MCOptions``) and keywords that replace its fields
    (:func:`dataclasses.replace`), so ``simulate_attention(f, n, p, gammas, draws=8)`` and
    ``simulate_attention(f, n, p, gammas, options=MCOptions(draws=8))`` are the same call.

    Attributes
    ----------
    draws, seed : int
        Number of independent draws and master seed (draw ``i`` uses :func:`draw_seed` ``(seed, i)``).
    ridge : bool
        Also compute the ridge baseline (``result.ridge``).
    estimator : {"quadratic", "trace"}
        Probe-error estimator; ``"trace"`` with μ ≠ 0 warns.
    device : "auto", str or torch.device
        Compute device; samples are always drawn on the CPU generator and moved.
    batch : int, optional
        Draws stacked per batched matmul/eigh (default: all draws within a memory budget).
    route : {"auto", "pxp", "nxn"}
        Eigendecomposition route of :func:`probe_error_curve_features`; the Cholesky solver always
        works on the n×n matrix.
    """

    draws: int = 4
    seed: int = 0
    ridge: bool = True
    estimator: str = "quadratic"
    device: Any = "auto"
    batch: int | None = None
    route: str = "auto"


def _mc_options(options: MCOptions | None, overrides: Mapping[str, Any]) -> MCOptions:
    """``options`` (default :class:`MCOptions`) with ``overrides`` replacing its fields."""
    return resolve_options(MCOptions, options, overrides)


def _validated_inputs(n: int, p: int, draws: int, gammas, mu, diagonal: str, kappa,
                      o: MCOptions) -> tuple[np.ndarray, np.ndarray | None]:
    """Check the inputs of a simulation; return the γ grid and μ as float arrays (μ may be ``None``)."""
    if o.route not in _ROUTES:
        raise ValueError(f"route must be one of {_ROUTES}, got {o.route!r}")
    if n < 2 or p < 1 or draws < 1:
        raise ValueError(f"need n ≥ 2, p ≥ 1, draws ≥ 1; got n={n}, p={p}, draws={draws}")
    if o.estimator not in _ESTIMATORS:
        raise ValueError(f"estimator must be one of {_ESTIMATORS}, got {o.estimator!r}")
    _check_diagonal(diagonal, kappa)
    gam = np.asarray(gammas, dtype=float).ravel()
    if gam.size == 0 or np.any(gam <= 0) or not np.all(np.isfinite(gam)):
        raise ValueError("gammas must be a non-empty array of positive finite numbers")
    mu_arr = None if mu is None else np.asarray(mu, dtype=float).ravel()
    if mu_arr is not None and mu_arr.size > p:
        raise ValueError(f"mu has {mu_arr.size} coordinates but p = {p}")
    if o.estimator == "trace" and mu_arr is not None and np.any(mu_arr != 0):
        warnings.warn(
            "the trace estimator targets random inputs (mu = 0); with mu != 0 it does not "
            "estimate the probe error (docs/attention_rmt.md §10)",
            stacklevel=5,  # the caller of simulate_attention / probe_errors_cholesky
        )
    return gam, mu_arr


@dataclass
class _MCRun:
    """One simulation with its inputs resolved: validated grid and μ, device, activation, weights."""

    fn: Callable[[torch.Tensor], torch.Tensor]
    fname: str
    n: int
    p: int
    draws: int
    gam: np.ndarray
    mu_arr: np.ndarray | None
    parsed: dict[str, _Weights]
    diagonal: str
    kappa: Any
    solver: str
    options: MCOptions
    dev: torch.device
    batch: int

    @classmethod
    def resolve(cls, f, n, p, gammas, *, mu, settings, diagonal, kappa, options, solver) -> _MCRun:
        n, p, draws = int(n), int(p), int(options.draws)
        gam, mu_arr = _validated_inputs(n, p, draws, gammas, mu, diagonal, kappa, options)
        dev = resolve_device(options.device)
        fn, fname = _as_activation(f)
        settings = {"w0": {}} if settings is None else dict(settings)
        if not settings:
            raise ValueError("settings must name at least one weight spec")
        parsed = {name: _parse_weights(spec, p, dev) for name, spec in settings.items()}
        batch = options.batch
        if batch is None:
            batch = _default_batch(n, p, draws, dev)
        batch = int(max(1, min(int(batch), draws)))
        return cls(fn=fn, fname=fname, n=n, p=p, draws=draws, gam=gam, mu_arr=mu_arr, parsed=parsed,
                   diagonal=diagonal, kappa=kappa, solver=solver, options=options, dev=dev, batch=batch)

    def run(self) -> AttentionMCResult:
        """All draws, batch by batch; then the result with its metadata."""
        draws, G = self.draws, self.gam.size
        errors = {name: np.empty((draws, G)) for name in self.parsed}
        kap = {name: np.empty(draws) for name in self.parsed}
        frob = {name: np.empty(draws) for name in self.parsed}
        ridge_err = np.empty((draws, G)) if self.options.ridge else None
        t0 = time.perf_counter()
        for start in range(0, draws, self.batch):
            idx = range(start, min(draws, start + self.batch))
            self._run_batch(idx, errors, kap, frob, ridge_err)
        elapsed = time.perf_counter() - t0
        return AttentionMCResult(gammas=self.gam, errors=errors, ridge=ridge_err, kappa_hat=kap,
                                 frob=frob, meta=self.meta(elapsed))

    def _run_batch(self, idx: range, errors, kap, frob, ridge_err) -> None:
        """Draws ``idx`` stacked: the ridge curve, then per setting κ̂, ‖Φ‖²_F/n² and the curve."""
        n, p, o = self.n, self.p, self.options
        pairs = [draw_tokens(n, p, mu=self.mu_arr, seed=o.seed, index=i, device=self.dev) for i in idx]
        X = torch.stack([P[0] for P in pairs])  # (B, p, n)
        y = torch.stack([P[1] for P in pairs])  # (B, n)
        del pairs
        sl = slice(idx.start, idx.stop)
        if o.ridge:
            ridge_err[sl] = _curve(X, y, self.gam, o.estimator, self.solver, o.route).cpu().numpy()
        for name, W in self.parsed.items():
            K, kh = _kernel(X, self.fn, W, self.diagonal, self.kappa)
            Phi = torch.matmul(X, K)
            del K
            frob[name][sl] = ((Phi * Phi).sum(dim=(-2, -1)) / (n * n)).cpu().numpy()  # tr G / n
            kap[name][sl] = kh.cpu().numpy()
            errors[name][sl] = _curve(Phi, y, self.gam, o.estimator, self.solver, o.route).cpu().numpy()
            del Phi

    def meta(self, elapsed: float) -> dict[str, Any]:
        """Parameters, seeds, device and versions of the run (``AttentionMCResult.meta``)."""
        n, p, o, mu_arr, seed = self.n, self.p, self.options, self.mu_arr, self.options.seed
        return {
            "model": "attention_rmt §10",
            "f": self.fname,
            "n": n,
            "p": p,
            "c": p / n,
            "mu": None if mu_arr is None else mu_arr.tolist(),
            "snr": 0.0 if mu_arr is None else float(mu_arr @ mu_arr),
            "settings": {name: W.describe() for name, W in self.parsed.items()},
            "draws": self.draws,
            "seed": int(seed),
            "draw_seeds": [draw_seed(seed, i) for i in range(self.draws)],
            "diagonal": self.diagonal,
            "kappa": self.kappa,
            "estimator": o.estimator,
            "solver": self.solver,
            "route": ("nxn" if self.solver == "cholesky" or o.route == "nxn" or p >= n else "pxp"),
            "ridge": bool(o.ridge),
            "device": str(self.dev),
            "dtype": "float64",
            "batch": self.batch,
            "elapsed_s": elapsed,
            "torch_version": torch.__version__,
            "numpy_version": np.__version__,
        }


def _simulate(f, n: int, p: int, gammas, *, mu, settings, diagonal: str, kappa, options: MCOptions,
              solver: str) -> AttentionMCResult:
    return _MCRun.resolve(f, n, p, gammas, mu=mu, settings=settings, diagonal=diagonal, kappa=kappa,
                          options=options, solver=solver).run()


def simulate_attention(
    f,
    n: int,
    p: int,
    gammas,
    *,
    mu=None,
    settings: Mapping[str, Mapping] | None = None,
    diagonal: str = "zero",
    kappa: float | None = None,
    options: MCOptions | None = None,
    **overrides,
) -> AttentionMCResult:
    r"""Monte Carlo probe errors of nonlinear attention and of ridge regression (docs/attention_rmt.md §10).

    For each draw :math:`i` (randomness from :func:`draw_seed` ``(seed, i)`` only):

    1. :math:`y\sim` Rademacher, :math:`Z\sim\mathcal N(0,1)^{p\times n}`, :math:`X=Z+\mu y^\top`;
    2. for each weight setting: :math:`WX = X + w_K(w_Q^\top X)` (or :math:`X + LX`),
       :math:`K = f(X^\top WX/\sqrt p)/\sqrt p`, record :math:`\hat\kappa=\operatorname{mean}\operatorname{diag}K`,
       apply the diagonal mode, :math:`\Phi = XK`, :math:`G=\Phi^\top\Phi/n`, record
       :math:`\|\Phi\|_F^2/n^2=\operatorname{tr}G/n`;
    3. one eigendecomposition :math:`G=\sum_k\lambda_kv_kv_k^\top` gives the whole grid (taken, when
       :math:`p<n`, from the :math:`p\times p` matrix :math:`\Phi\Phi^\top/n`, see
       :func:`probe_error_curve_features`):
       :math:`E(\gamma)=\frac{\gamma^2}n\sum_k\frac{(v_k^\top y)^2}{(\lambda_k+\gamma)^2}`
       (quadratic, exact by §3) or :math:`\frac1n\sum_k\big(\frac{\gamma}{\lambda_k+\gamma}\big)^2`
       (trace; random inputs only);
    4. ridge baseline: the same with :math:`\Phi=X` on the same draw.

    All settings share the same :math:`(Z, y)` per draw, so differences are paired.

    Parameters
    ----------
    f : sympy.Expr, str or callable
        Centred activation (:func:`torch_activation`), or a torch-elementwise callable.
    n, p : int
        Number of tokens and embedding dimension (:math:`c = p/n`).
    gammas : array_like
        Positive ridge parameters; one eigendecomposition per draw and setting serves them all.
    mu : array_like, optional
        Coordinates of :math:`\mu` in :math:`e_1,\dots,e_k` (zero-padded to p); ``None``: μ = 0.
    settings : dict[str, dict], optional
        Name → ``{}`` (W = I), ``{"wk": vec, "wq": vec}`` (W = I + w_K w_Qᵀ, zero-padded) or
        ``{"L": k×k}`` (W = I + L on the first k coordinates). Default ``{"w0": {}}``.
    diagonal : {"zero", "keep", "set"}
        §4.3 convention. ``"keep"`` is refused when :math:`|\hat\kappa|>10` (He₂). ``"set"``
        imposes ``kappa`` on the diagonal.
    kappa : float, optional
        Only with ``diagonal="set"``.
    options : MCOptions, optional
        The Monte Carlo knobs (default ``MCOptions()``); keywords replace its fields:

        - ``draws``, ``seed`` (int): number of independent draws (default 4) and master seed (0);
        - ``ridge`` (bool): also compute the ridge baseline (``result.ridge``), default ``True``;
        - ``estimator`` ({"quadratic", "trace"}): see above; ``"trace"`` with μ ≠ 0 warns;
        - ``device`` ("auto", str or torch.device): compute device; samples are always drawn on the
          CPU generator and moved;
        - ``batch`` (int, optional): draws stacked per batched matmul/eigh; default all draws within
          a memory budget (CPU: min(RAM/4, 4 GiB); CUDA: half the free memory). Results do not
          depend on it beyond float round-off;
        - ``route`` ({"auto", "pxp", "nxn"}): eigendecomposition of :math:`\Phi\Phi^\top/n`
          (``"pxp"``) or of :math:`G` (``"nxn"``); ``"auto"``: the smaller one
          (:func:`probe_error_curve_features`). Recorded in ``meta["route"]``.

    Returns
    -------
    AttentionMCResult

    Notes
    -----
    Cost per draw and setting: :math:`2n^2p` (kernel) + :math:`2n^2p` (Φ) flops, plus for
    :math:`p<n` :math:`np^2` and one :math:`p\times p` eigendecomposition (:math:`\approx 9p^3`), else
    :math:`n^2p` and one :math:`n\times n` eigendecomposition (:math:`\approx 9n^3`); memory
    :math:`\approx 8(4pn+6n^2)` bytes per draw in a batch. Per-draw fluctuation of the quadratic
    estimator is ≈0.017 at n = 1000 (§10): use ≥ 4 draws or paired differences. Finite-size bias
    for strong spikes (θ ≳ 4, p ≤ 1000) is 5–40% (§10).

    Examples
    --------
    >>> import sympy
    >>> t = sympy.Symbol("t")
    >>> res = simulate_attention(sympy.tanh(t), 200, 100, [0.1, 1.0], mu=[1.0], draws=2)
    >>> res.estimate("w0").mean.shape, res.paired_difference("w0", "ridge").n_draws
    ((2,), 2)
    """
    return _simulate(f, n, p, gammas, mu=mu, settings=settings, diagonal=diagonal, kappa=kappa,
                     options=_mc_options(options, overrides), solver="eigh")


def probe_errors_cholesky(
    f,
    n: int,
    p: int,
    gammas,
    *,
    mu=None,
    settings: Mapping[str, Mapping] | None = None,
    diagonal: str = "zero",
    kappa: float | None = None,
    options: MCOptions | None = None,
    **overrides,
) -> AttentionMCResult:
    r"""Same as :func:`simulate_attention`, but one Cholesky solve per γ (docs/attention_rmt.md §10 literally).

    :math:`u = (G+\gamma I)^{-1}y` by ``torch.linalg.cholesky`` + ``cholesky_solve``,
    :math:`E = \gamma^2\|u\|^2/n`. Identical draws for identical ``seed``; used as the baseline of
    the benchmark and as a cross-check of the eigendecomposition path (they agree to ~1e-12).
    Cost: :math:`n^3/3` per γ instead of one :math:`\approx 9n^3` eigendecomposition per grid.
    Takes the same ``options`` (:class:`MCOptions`, keywords override its fields); ``route`` is
    checked but unused (the solve is always on the n×n matrix).
    """
    return _simulate(f, n, p, gammas, mu=mu, settings=settings, diagonal=diagonal, kappa=kappa,
                     options=_mc_options(options, overrides), solver="cholesky")


def probe_error_explicit(
    f,
    n: int,
    p: int,
    gamma: float,
    *,
    mu=None,
    wk=None,
    wq=None,
    seed: int = 0,
    diagonal: str = "zero",
    kappa: float | None = None,
    device="auto",
) -> tuple[float, float]:
    r"""The two sides of the exact identity of docs/attention_rmt.md §3 on one draw (claim V1).

    Returns
    -------
    explicit : float
        :math:`\frac1n\|y-\Phi^\top w_V^\star\|^2` with
        :math:`w_V^\star=(\Phi\Phi^\top+n\gamma I_p)^{-1}\Phi y` (p×p Cholesky solve).
    resolvent : float
        :math:`\frac{\gamma^2}n\|Q y\|^2`, :math:`Q=(\Phi^\top\Phi/n+\gamma I_n)^{-1}` (n×n Cholesky).

    Notes
    -----
    Uses draw 0 of ``seed`` (the same draw as ``simulate_attention(..., seed=seed)``'s first
    draw). ``wk``/``wq`` both ``None`` means W = I. Push-through gives equality; in float64 the
    two agree to ~1e-13 relative for well-conditioned γ.
    """
    if (wk is None) != (wq is None):
        raise ValueError("give both wk and wq, or neither")
    dev = resolve_device(device)
    fn, _ = _as_activation(f)
    _check_diagonal(diagonal, kappa)
    X, y = draw_tokens(n, p, mu=mu, seed=seed, index=0, device=dev)
    W = _parse_weights({} if wk is None else {"wk": wk, "wq": wq}, p, dev)
    K, _ = _kernel(X, fn, W, diagonal, kappa)
    Phi = X @ K
    A = Phi @ Phi.T + n * gamma * torch.eye(p, dtype=DTYPE, device=dev)
    w = torch.cholesky_solve((Phi @ y)[:, None], torch.linalg.cholesky(A)).squeeze(-1)
    r = y - Phi.T @ w
    explicit = float((r @ r).item() / n)
    G = Phi.T @ Phi / n + gamma * torch.eye(n, dtype=DTYPE, device=dev)
    u = torch.cholesky_solve(y[:, None], torch.linalg.cholesky(G)).squeeze(-1)
    resolvent = float(gamma * gamma * (u @ u).item() / n)
    return explicit, resolvent


def noise_kernel_stieltjes(
    f,
    n: int,
    p: int,
    zs,
    *,
    seed: int = 0,
    draws: int = 1,
    device="auto",
) -> np.ndarray:
    r"""Empirical Stieltjes transform of the noise kernel (docs/attention_rmt.md §4.2, claim V19).

    :math:`K_N = f(Z^\top Z/\sqrt p)/\sqrt p` with its diagonal zeroed, :math:`Z` the noise of
    draw ``i`` of ``seed`` (same stream as :func:`draw_tokens`), and

    .. math:: \hat m(z) = \frac1n\operatorname{tr}(K_N - zI_n)^{-1} = \frac1n\sum_k\frac1{\lambda_k-z}.

    Its limit solves :math:`m=-\big(z+\frac{a_1^2m}{c+a_1m}+\frac{(\nu-a_1^2)m}{c}\big)^{-1}`.

    Parameters
    ----------
    f : sympy.Expr, str or callable
        Centred activation.
    n, p : int
    zs : array_like of complex
        Evaluation points (use :math:`\operatorname{Im}z>0` or points off the spectrum).
    seed, draws : int
    device : "auto", str or torch.device

    Returns
    -------
    numpy.ndarray, complex128, shape ``(draws, len(zs))``
        One row per draw (average with ``.mean(axis=0)``).
    """
    dev = resolve_device(device)
    fn, _ = _as_activation(f)
    z = np.atleast_1d(np.asarray(zs, dtype=complex)).ravel()
    out = np.empty((int(draws), z.size), dtype=complex)
    ident = _Weights("identity")
    for i in range(int(draws)):
        Z, _y = draw_tokens(n, p, mu=None, seed=seed, index=i, device=dev)
        K, _ = _kernel(Z, fn, ident, "zero", None)
        K = 0.5 * (K + K.T)  # exact symmetry (K_N is symmetric up to round-off)
        lam = torch.linalg.eigvalsh(K).cpu().numpy()
        out[i] = (1.0 / (lam[None, :] - z[:, None])).mean(axis=1)
    return out
