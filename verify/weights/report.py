r"""Report of the pretrained-weight diagnostics (docs/attention_rmt.md §13): :func:`analyze_checkpoint` and :class:`WeightsReport`.

:func:`analyze_checkpoint` loads a checkpoint (:mod:`.checkpoint`), extracts the heads (:mod:`.heads`),
runs :func:`attnlimits.verify.weights.fit.head_diagnostics` on every head product and layer sum, and returns a
:class:`WeightsReport` (tidy CSV, JSON with parameters and versions, a PNG, a text table).
"""
from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from attnlimits.symbolic.options import resolve_options

import numpy as np

from .checkpoint import CheckpointError, load_state_dict, read_config
from .fit import DEFAULT_RANKS, FitResult, head_diagnostics, resolve_ranks
from .heads import GenericLayout, embedding_mean, extract_heads

__all__ = ["WeightsReport", "analyze_checkpoint"]

_N_TOP = 4  # singular values / alignments of L put in each tidy row
_TABLE_RANKS = (0, 1, 16, 64)  # preferred rho_r columns of the text table


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for dist in ("attnlimits", "numpy", "scipy", "torch", "safetensors", "matplotlib"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _clean(x: Any) -> Any:
    """JSON-safe value: numpy scalars to Python, NaN/inf to None."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return _clean(x.tolist())
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


@dataclass
class WeightsReport:
    """Result of :func:`analyze_checkpoint` (docs/attention_rmt.md §13).

    Attributes
    ----------
    rows : list of dict
        Tidy rows, one per (layer, head or ``"sum"``, r): ``layer``, ``head``, ``r``, ``p``, ``n_heads``,
        ``d_head``, ``fro_norm``, ``spectral_norm``, ``trace_over_p``, ``numerical_rank``,
        ``participation_ratio``, ``sym_fro_ratio``, ``sym_eig_min``, ``sym_eig_max``,
        ``sym_frac_negative``, ``s_star``, ``rho``, ``identity_share``, ``fit_iterations``, ``fit_method``,
        ``L_sv_1..4``, ``query_bias_norm``, ``key_bias_norm`` (and ``align_1..4``, ``mu_L_mu`` with
        ``mu_hat``). Missing values are ``None``.
    spectra : dict
        ``"{layer}/{head}"`` -> singular values of :math:`B` (all :math:`p`).
    top_pairs : dict
        ``"{layer}/sum/{r}"`` -> the leading singular pair(s) ``{"sigma", "u", "v"}`` of :math:`L` for the
        layer sums.
    parameters : dict
        The arguments of the run.
    meta : dict
        ``path``, ``layout``, ``p``, ``n_heads``, ``d_head``, ``layers``, ``prefix``.
    fits : dict
        ``(layer, head, r)`` -> :class:`FitResult`.
    """

    rows: list[dict]
    spectra: dict[str, list[float]]
    parameters: dict
    meta: dict
    top_pairs: dict = field(default_factory=dict)
    fits: dict = field(default_factory=dict, repr=False)

    # ---- tidy outputs -----------------------------------------------------------------------------
    def _with_threads(self, threads: int) -> "WeightsReport":
        self.parameters["threads"] = threads
        return self

    def columns(self) -> list[str]:
        cols: list[str] = []
        for row in self.rows:
            for k in row:
                if k not in cols:
                    cols.append(k)
        return cols

    def to_csv(self, path: str | os.PathLike) -> Path:
        """Write the tidy rows as CSV (``None`` -> empty cell)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        cols = self.columns()

        def write(tmp):  # atomically, the umask honoured, a link in its place replaced (verify/outputs.py)
            with open(tmp, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(cols)
                for row in self.rows:
                    w.writerow(["" if row.get(c) is None else row.get(c) for c in cols])
        from attnlimits.verify.outputs import write_atomically

        return write_atomically(path, write)

    def to_dict(self) -> dict:
        return _clean(
            {
                "spec": "docs/attention_rmt.md §13 (real pretrained weights)",
                "parameters": self.parameters,
                **self.meta,
                "versions": _versions(),
                "rows": self.rows,
                "spectra": self.spectra,
                "top_pairs": self.top_pairs,
            }
        )

    def to_json(self, path: str | os.PathLike) -> Path:
        """Write parameters, layout, p, H, d_h, versions, rows, spectra and top pairs as JSON."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        from attnlimits.verify.outputs import write_text

        return write_text(path, json.dumps(self.to_dict(), indent=1, allow_nan=False))

    # ---- summaries --------------------------------------------------------------------------------
    def _value(self, layer: int, head: Any, r: int, key: str) -> Any:
        for row in self.rows:
            if row["layer"] == layer and row["head"] == head and row["r"] == r:
                return row.get(key)
        return None

    def _head_median(self, layer: int, r: int, key: str = "rho") -> float | None:
        vals = [
            row[key]
            for row in self.rows
            if row["layer"] == layer and row["head"] != "sum" and row["r"] == r and row.get(key) is not None
        ]
        return float(np.median(vals)) if vals else None

    def layer_summary(self) -> list[dict]:
        """Per layer: layer-sum ``fro_norm``, ``trace_over_p``, ``rho_{0,1,16,64}``, ``sym_fro_ratio`` and the
        per-head median :math:`\\rho_1`."""
        out = []
        for l in self.meta["layers"]:
            r0 = min((row["r"] for row in self.rows if row["layer"] == l), default=0)
            d = {
                "layer": l,
                "fro_norm": self._value(l, "sum", r0, "fro_norm"),
                "trace_over_p": self._value(l, "sum", r0, "trace_over_p"),
            }
            for r in (0, 1, 16, 64):
                d[f"rho_{r}"] = self._value(l, "sum", r, "rho")
            d["sym_fro_ratio"] = self._value(l, "sum", r0, "sym_fro_ratio")
            d["head_median_rho_1"] = self._head_median(l, 1)
            out.append(d)
        return out

    def table_ranks(self) -> list[int]:
        """Ranks shown by :meth:`format_table`: those of (0, 1, 16, 64) that were fitted, topped up to four
        with the other fitted ranks."""
        fitted = sorted({row["r"] for row in self.rows})
        cols = [r for r in _TABLE_RANKS if r in fitted]
        for r in fitted:
            if len(cols) >= 4:
                break
            if r not in cols:
                cols.append(r)
        return sorted(cols)

    def format_table(self) -> str:
        """Compact text table, one line per layer (layer sums at the :meth:`table_ranks`; last column: the
        per-head median of the smallest positive one)."""

        def fmt(x: Any, spec: str) -> str:
            return "—".rjust(int(spec.split(".")[0])) if x is None else format(x, spec)

        ranks = self.table_ranks()
        hr = next((r for r in ranks if r > 0), ranks[0] if ranks else 1)
        rho_head = "".join(f" {'rho_' + str(r):>6}" for r in ranks)
        med = f"head med rho_{hr}"
        head = f"{'layer':>5} {'||B||_F':>9} {'trB/p':>8}{rho_head} {'||S||/||B||':>11} {med:>14}"
        m = self.meta
        lines = [
            f"{m['layout']} layout, p={m['p']}, H={m['n_heads']}, d_h={m['d_head']}, "
            f"LN folded={self.parameters.get('fold_layernorm')}  ({m.get('path')})",
            head,
            "-" * len(head),
        ]
        for d in self.layer_summary():
            l = d["layer"]
            rhos = "".join(" " + fmt(self._value(l, "sum", r, "rho"), "6.3f") for r in ranks)
            lines.append(
                f"{l:>5} {fmt(d['fro_norm'], '9.2f')} {fmt(d['trace_over_p'], '8.3f')}{rhos} "
                f"{fmt(d['sym_fro_ratio'], '11.3f')} {fmt(self._head_median(l, hr), '14.3f')}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format_table()

    def plot(self, path: str | os.PathLike) -> Path:
        """PNG: left, :math:`\\rho_r` against :math:`r` per layer (solid: layer sum, dashed: per-head median);
        right, singular-value spectra of the layer sums (matplotlib Agg, no global backend change)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig = Figure(figsize=(11, 4.2))
        FigureCanvasAgg(fig)
        ax1, ax2 = fig.subplots(1, 2)
        layers = self.meta["layers"]
        import matplotlib

        cmap = matplotlib.colormaps["viridis"]
        for i, l in enumerate(layers):
            color = cmap(i / max(len(layers) - 1, 1))
            rs = sorted({row["r"] for row in self.rows if row["layer"] == l})
            sums = [(r, self._value(l, "sum", r, "rho")) for r in rs]
            sums = [(r, v) for r, v in sums if v is not None]
            if sums:
                ax1.plot([r for r, _ in sums], [v for _, v in sums], "-o", ms=3, color=color, label=f"layer {l}")
            med = [(r, self._head_median(l, r)) for r in rs]
            med = [(r, v) for r, v in med if v is not None]
            if med:
                ax1.plot([r for r, _ in med], [v for _, v in med], "--", color=color, lw=1,
                         label=None if sums else f"layer {l} (heads)")
            sv = self.spectra.get(f"{l}/sum")
            if sv:
                ax2.semilogy(np.arange(1, len(sv) + 1), np.maximum(sv, 1e-300), color=color, label=f"layer {l}")
        ax1.set_xscale("symlog", linthresh=1)
        ax1.set_xlabel("rank r")
        ax1.set_ylabel(r"$\rho_r$")
        ax1.set_ylim(0, 1.05)
        ax1.set_title(r"identity + rank-$r$ fit (solid: layer sum, dashed: head median)", fontsize=9)
        ax1.legend(fontsize=7)
        ax2.set_xlabel("k")
        ax2.set_ylabel(r"$\sigma_k(B)$")
        ax2.set_title("singular values of the layer sums", fontsize=9)
        if any(f"{l}/sum" in self.spectra for l in layers):
            ax2.legend(fontsize=7)
        fig.suptitle(
            f"{self.meta['layout']}: p={self.meta['p']}, H={self.meta['n_heads']}, d_h={self.meta['d_head']}"
            f", LN folded={self.parameters.get('fold_layernorm')}",
            fontsize=10,
        )
        fig.tight_layout()
        from attnlimits.verify.outputs import save_figure

        return save_figure(fig, path, dpi=120)

    def write(self, out_dir: str | os.PathLike) -> dict[str, Path]:
        """Write ``weights.csv``, ``weights.json`` and ``weights.png`` into ``out_dir`` (created)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        return {
            "csv": self.to_csv(out / "weights.csv"),
            "json": self.to_json(out / "weights.json"),
            "png": self.plot(out / "weights.png"),
        }


def _blas_threads() -> int | None:
    """Threads of the BLAS/OpenMP pools in use (threadpoolctl), or ``None`` if unknown."""
    try:
        from threadpoolctl import threadpool_info

        counts = [int(p["num_threads"]) for p in threadpool_info() if p.get("user_api") in ("blas", "openmp")]
    except Exception:  # pragma: no cover - threadpoolctl missing or failing
        return None
    return max(counts) if counts else None


def _norm_or_none(a: np.ndarray | None) -> float | None:
    return None if a is None else float(np.sqrt(np.sum(np.asarray(a) ** 2)))


@dataclass(frozen=True)
class WeightsOptions:
    """What :func:`analyze_checkpoint` fits and how (every field is described there)."""

    ranks: Iterable[int | str] = DEFAULT_RANKS
    fold_layernorm: bool = False
    per_head: bool = True
    layer_sum: bool = True
    mu_hat: Any = None
    config: Any = None
    layout: Literal["auto", "bert", "gpt2", "generic"] = "auto"
    n_heads: int | None = None
    layers: Sequence[int] | None = None
    prefix: str | None = None
    generic: GenericLayout | None = None
    n_top_pairs: int = 1
    tol: float = 1e-10
    max_iter: int = 500
    scan_points: int | None = None
    threads: int | None = None


def analyze_checkpoint(path: str | os.PathLike, *, options: WeightsOptions | None = None,
                       progress: Callable[[str], None] | None = None, **overrides) -> WeightsReport:
    r"""Run the docs/attention_rmt.md §13 diagnostics on a local checkpoint.

    Parameters
    ----------
    path : path-like
        Checkpoint file or folder (see :func:`load_state_dict`). Nothing is downloaded.
    ranks : iterable of int or "d_h"
        Ranks of the identity-plus-rank-r fits, each :math:`0\le r\le p` (default
        :math:`\{0,1,2,4,8,16,d_h,64\}`, without the entries above :math:`p`).
    fold_layernorm : bool
        Use :math:`\operatorname{diag}(g)B\operatorname{diag}(g)` with the gain of the LayerNorm feeding
        the block (raises :class:`CheckpointError` if absent).
    per_head, layer_sum : bool
        Analyse each :math:`B_h` and/or :math:`B=\sum_hB_h`.
    mu_hat : ndarray (p,), mapping layer -> ndarray, or "embedding_mean", optional
        Data direction(s) for the alignment item 4; ``"embedding_mean"`` uses :func:`embedding_mean`.
    config : mapping or path, optional
        Model config; by default ``config.json`` next to the checkpoint.
    layout, n_heads, prefix, generic
        See :func:`extract_heads`.
    progress : callable(str), optional
        Called with a short message before each layer.
    layers : sequence of int, optional
        Analyse only these layers.
    n_top_pairs : int
        Leading singular pairs of :math:`L` stored in the JSON per layer-sum fit.
    tol, max_iter, scan_points
        Passed to :func:`fit_identity_plus_low_rank`.
    threads : int, optional
        BLAS/OpenMP threads for the analysis (``threadpoolctl``, restored afterwards); ``None`` keeps
        the process setting. Recorded in the report's parameters.
    options : WeightsOptions, optional
        Every parameter above except ``path`` and ``progress`` is a field of :class:`WeightsOptions`; keyword
        arguments override its fields.

    Returns
    -------
    WeightsReport

    Notes
    -----
    Cost: per layer sum one :math:`p\times p` SVD, a 25-point scan (``eigvalsh`` only) shared by all ranks
    and a few symmetric eigendecompositions per rank (safeguarded Newton); each head costs two thin QR
    factorisations and problems of size :math:`2d_h`. All-MiniLM-L6-v2 (:math:`p=384`, 6 layers × 12 heads,
    default ranks) takes a few seconds in all on one core, about 4–5× less than the previous alternating-SVD
    implementation (``benchmarks/bench_weights.py``); a GPT-2-sized model (12 layers, :math:`p=768`) about a
    minute. Multithreaded BLAS on an oversubscribed machine can be many times slower: pass ``threads=1``
    (or set ``OMP_NUM_THREADS=1``) there.
    """
    o = resolve_options(WeightsOptions, options, overrides)
    n_heads, threads = o.n_heads, o.threads
    if n_heads is not None and (isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1):
        raise CheckpointError(f"the number of heads must be a positive integer, got {n_heads!r}")
    o = dataclasses.replace(o, ranks=list(o.ranks))
    try:
        resolve_ranks(o.ranks, None)  # type and sign errors before any loading
    except ValueError as exc:
        raise CheckpointError(str(exc)) from None
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise CheckpointError(f"threads must be a positive integer, got {threads!r}")
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=int(threads)):
            return analyze_checkpoint(path, options=dataclasses.replace(o, threads=None),
                                      progress=progress)._with_threads(int(threads))
    state = load_state_dict(path)
    config = read_config(path) if o.config is None else o.config
    heads = extract_heads(state, config, o.layout, n_heads, prefix=o.prefix, generic=o.generic)
    chosen = heads.layers if o.layers is None else [int(l) for l in o.layers]
    unknown = [l for l in chosen if l not in heads.wq]
    if unknown:
        raise CheckpointError(f"layers {unknown} not in the checkpoint (has {heads.layers})")
    rank_list = _rank_list(o.ranks, heads)
    mu_hat = o.mu_hat
    if isinstance(mu_hat, str):
        if mu_hat != "embedding_mean":
            raise ValueError(f"mu_hat must be an array, a mapping or 'embedding_mean', not {mu_hat!r}")
        mu_hat = embedding_mean(state)
    del state
    col = _Collector(heads, rank_list, mu_hat, o)
    for l in chosen:
        if progress is not None:
            progress(f"layer {l} ({chosen.index(l) + 1}/{len(chosen)})")
        col.layer(l)
    parameters = {
        "ranks": [r for r in o.ranks],
        "ranks_resolved": rank_list,
        "fold_layernorm": o.fold_layernorm,
        "per_head": o.per_head,
        "layer_sum": o.layer_sum,
        "mu_hat": None if mu_hat is None else ("per-layer mapping" if isinstance(mu_hat, Mapping) else "vector"),
        "layout_requested": o.layout,
        "n_heads_argument": n_heads,
        "layers": chosen,
        "scaling": "B_h = sqrt(p/d_h) W_K^h^T W_Q^h (rows keys, columns queries)",
        "tol": o.tol,
        "max_iter": o.max_iter,
        "scan_points": o.scan_points,
        "threads": None,
        "blas_threads": _blas_threads(),
    }
    meta = {
        "path": str(Path(path).resolve()),
        "layout": heads.layout,
        "p": heads.p,
        "n_heads": heads.n_heads,
        "d_head": heads.d_head,
        "layers": chosen,
        "prefix": heads.prefix,
    }
    return WeightsReport(col.rows, col.spectra, parameters, meta, col.top_pairs, col.fits)


def _rank_list(ranks, heads) -> list:
    """The ranks to fit, resolved against d_h and p (the defaults drop the ranks above p of a small model)."""
    try:
        if tuple(ranks) == tuple(DEFAULT_RANKS):
            rank_list = [r for r in resolve_ranks(ranks, heads.d_head) if r <= heads.p]
        else:
            rank_list = resolve_ranks(ranks, heads.d_head, heads.p)
    except ValueError as exc:
        raise CheckpointError(str(exc)) from None
    if not rank_list:
        raise CheckpointError("no ranks to fit (give at least one rank)")
    return rank_list


class _Collector:
    """The report's tables, filled block by block: one row per (layer, head, rank), the spectra, the leading
    singular pairs of the layer-sum fits and the fits themselves."""

    def __init__(self, heads, rank_list, mu_hat, o: WeightsOptions):
        self.heads, self.rank_list, self.mu_hat, self.o = heads, rank_list, mu_hat, o
        self.rows: list[dict] = []
        self.spectra: dict[str, list[float]] = {}
        self.top_pairs: dict[str, dict] = {}
        self.fits: dict = {}
        self.base = {"p": heads.p, "n_heads": heads.n_heads, "d_head": heads.d_head}

    def layer(self, l: int) -> None:
        heads, o = self.heads, self.o
        bn = heads.bias_norms.get(l, {})
        bq, bk = bn.get("query"), bn.get("key")
        if o.layer_sum:
            self.emit(l, "sum", heads.layer_sum(l, fold_layernorm=o.fold_layernorm), _norm_or_none(bq),
                      _norm_or_none(bk))
        if o.per_head:
            for h in range(heads.n_heads):
                self.emit(
                    l, h, heads.head_product(l, h, fold_layernorm=o.fold_layernorm),
                    None if bq is None else float(bq[h]), None if bk is None else float(bk[h]),
                    factors=heads.head_factors(l, h, fold_layernorm=o.fold_layernorm),
                )

    def emit(self, l: int, head: Any, B: np.ndarray, bias_q: float | None, bias_k: float | None,
             factors=None) -> None:
        o = self.o
        mu = self.mu_hat.get(l) if isinstance(self.mu_hat, Mapping) else self.mu_hat
        if not np.all(np.isfinite(B)):
            raise CheckpointError(f"layer {l}, head {head}: the query/key weights contain NaN or inf")
        diag = head_diagnostics(
            B, self.rank_list, d_head=self.heads.d_head, mu_hat=mu, tol=o.tol, max_iter=o.max_iter,
            scan_points=o.scan_points, factors=factors,
        )
        self.spectra[f"{l}/{head}"] = diag["singular_values"]
        for fe in diag["fits"]:
            self.rows.append(self._row(l, head, diag, fe, bias_q, bias_k))
            fit: FitResult = fe["fit"]
            self.fits[(l, head, fe["r"])] = fit
            if head == "sum" and o.n_top_pairs > 0 and len(fit.L_s):
                k = min(o.n_top_pairs, len(fit.L_s))
                self.top_pairs[f"{l}/sum/{fe['r']}"] = {
                    "sigma": fit.L_s[:k].tolist(),
                    "u": fit.L_u[:, :k].T.tolist(),
                    "v": fit.L_v[:, :k].T.tolist(),
                }

    def _row(self, l, head, diag, fe, bias_q, bias_k) -> dict:
        fit: FitResult = fe["fit"]
        row = {"layer": l, "head": head, "r": fe["r"], **self.base}
        for k in (
            "fro_norm", "spectral_norm", "trace_over_p", "numerical_rank", "participation_ratio",
            "sym_fro_ratio", "sym_eig_min", "sym_eig_max", "sym_frac_negative",
        ):
            row[k] = diag[k]
        row.update(
            s_star=fit.s, rho=fit.rho, identity_share=fit.identity_share,
            fit_iterations=fit.iterations, fit_method=fit.method,
        )
        for k in range(_N_TOP):
            row[f"L_sv_{k + 1}"] = float(fit.L_s[k]) if k < len(fit.L_s) else None
        row["query_bias_norm"] = bias_q
        row["key_bias_norm"] = bias_k
        if "alignment" in fe:
            for k in range(_N_TOP):
                row[f"align_{k + 1}"] = fe["alignment"][k] if k < len(fe["alignment"]) else None
            row["mu_L_mu"] = fe["mu_L_mu"]
        return row

