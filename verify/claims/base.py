"""Claims: one object per verifiable statement of a result, with its comparison rule.

A :class:`Claim` says what is asserted, where it comes from (paper and spec section), how to
compute the theory side and the Monte Carlo side at ``--quick`` and ``--full`` sizes, and how to
compare them.  Running it returns a :class:`ClaimResult`: a list of :class:`Check` (theory, MC mean
± SE, threshold, verdict), plot series for the report, and the parameters and seeds that made it.

Comparison rule (:mod:`attnlimits.verify.comparison`, stated there once): a check with a Monte
Carlo standard error yields a statistic — the deviation beyond its ``tolerance`` (a quoted number's
precision, never a flat allowance for MC offsets) and ``allowance`` (a documented finite-size
allowance), in SEs — and a p-value from the normal law, or Student t with ``dof`` degrees of
freedom when the SE comes from few replicates or seeds.  :func:`run_claims` treats all such checks
of a run as one family and fails them by Holm's procedure at the family-wise level ``level``
(default 1 %); each check then carries its raw p, its Holm-adjusted p and the adjusted threshold
it was compared with.  A check without SE is deterministic: it passes iff
``|value − theory| ≤ tolerance + allowance``.  A check evaluated outside a run (no family yet) is
judged alone at the per-check level ``2·Φ(−k)`` (k = 3: 0.27 %).

Power: every quantitative check states its *minimum detectable deviation* (:attr:`Check.mdd`, and
:attr:`Check.mdd_relative` relative to its headline quantity): ``t(1 − a/2, dof)·SE + tolerance +
allowance`` with ``a`` the level a lone deviating check needs to fail the run's Holm procedure
(level/m for m checks; see :func:`attnlimits.verify.comparison.minimum_detectable_deviation`).
A claim's MDD (:attr:`ClaimResult.mdd`) is the largest of its checks'; the sizes of ``--quick`` and
``--full`` are chosen to bring it to :data:`attnlimits.verify.claims.power.TARGET` (5 %, 1 %), and
:data:`attnlimits.verify.claims.power.EXCEPTIONS` says why a claim cannot.

Verdicts of a claim:

- ``pass``         every check passes;
- ``fail``         some check fails, or the claim raised (the error is reported);
- ``discrepancy``  a statement *as quoted* by a paper that the derivation contradicts: reported
  with both numbers, never hidden and never counted as a failure of the run.
"""
from __future__ import annotations

import math
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable

__all__ = [
    "Check", "PlotSeries", "PlotSpec", "ClaimResult", "Claim", "Context",
    "REGISTRY", "register", "select", "run_claims", "RunInterrupted", "apply_family_rule", "citation", "K_DEFAULT",
    "TOLERANCE_REASONS",
]

K_DEFAULT = 3.0  #: standard errors of the per-check level of a check judged alone (2·Φ(−3) = 0.27 %)

#: Why a check has a nonzero tolerance: ``"quoted"`` — the precision of a number quoted by a paper
#: or the spec (e.g. four decimals: ±5e-5); ``"numerical"`` — the accuracy of a deterministic
#: computation (quadrature, solver tolerance); ``""`` — not stated (the report flags it when the check
#: also has an SE: a flat tolerance must not absorb a Monte Carlo offset).
TOLERANCE_REASONS = ("quoted", "numerical", "")


@dataclass
class Check:
    """One comparison inside a claim (the rule: :mod:`attnlimits.verify.comparison`).

    ``kind``: ``"abs"`` (|value − theory|), ``"rel"`` (tolerance relative to |theory|),
    ``"upper"`` (value ≤ theory), ``"lower"`` (value ≥ theory), ``"interval"`` (lo ≤ value ≤ hi
    with ``theory = (lo, hi)``).  ``se``: the standard error of ``value`` (``None``: deterministic);
    ``dof``: its degrees of freedom (``None``: large sample, normal law; ``R − 1`` for an SE from
    ``R`` replicates or seeds); ``tolerance``: a quoted number's precision or a numerical accuracy,
    with ``tolerance_reason`` saying which (:data:`TOLERANCE_REASONS`); ``allowance``: a documented
    finite-size allowance.  :func:`run_claims` sets ``level``, ``p_adjusted`` and
    ``holm_threshold`` when it applies the family-wise rule.
    """

    label: str
    theory: float | tuple
    value: float
    se: float | None = None
    tolerance: float = 0.0
    k: float = K_DEFAULT
    allowance: float = 0.0
    kind: str = "abs"
    note: str = ""
    dof: float | None = None
    tolerance_reason: str = ""
    level: float | None = None
    p_adjusted: float | None = None
    holm_threshold: float | None = None
    #: the magnitude of the headline quantity the MDD is relative to (default ``|theory|``; for an
    #: interval the larger |bound|)
    scale: float | None = None
    #: a statement without a deviation to size (a qualitative property, a sign established at 3 SE,
    #: a rate excluded by the band): no MDD
    qualitative: bool = False
    #: the level at which :attr:`mdd` is computed: level/m in a run of m checks with an SE (set by
    #: :func:`apply_family_rule`), else :attr:`single_level`
    mdd_level: float | None = None

    # --- the check kinds every claims module builds (one construction each) -----------------------

    @classmethod
    def spec(cls, label: str, documented: float, engine: float, tol: float, note: str = "") -> "Check":
        """Deterministic: the engine reproduces a number the documentation states, within its quoted precision."""
        return cls(f"docs: {label}", theory=float(documented), value=float(engine), se=None, tolerance=tol,
                   tolerance_reason="quoted", note=note)

    @classmethod
    def mc(cls, label: str, theory: float, est, i=None, *, k: float = K_DEFAULT, allowance: float = 0.0,
           kind: str = "abs", note: str = "") -> "Check":
        """Monte Carlo mean ± SE (entry ``i`` of an :class:`attnlimits.verify.stats.MCEstimate`) against a theory
        value; the SE has ``draws − 1`` degrees of freedom (Student t), normal without draws."""
        import numpy as np

        mean, se = np.asarray(est.mean), np.asarray(est.se)
        n = int(getattr(est, "n_draws", 0) or 0)
        return cls(label, theory=float(theory), value=float(mean if i is None else mean[i]),
                   se=float(se if i is None else se[i]), k=k, allowance=allowance, kind=kind, note=note,
                   dof=n - 1 if n >= 2 else None)

    @classmethod
    def holds(cls, label: str, ok: bool, note: str = "") -> "Check":
        """A qualitative statement: value 1 if it holds, else 0 (theory 1, tolerance 0)."""
        return cls(label, 1.0, 1.0 if ok else 0.0, None, 0.0, note=note, qualitative=True)

    @classmethod
    def sign(cls, label: str, est, i, sign: int, note: str = "") -> "Check":
        """``sign·mean − 3·SE ≥ 0``: the Monte Carlo establishes the sign of entry ``i`` at 3 SE."""
        import numpy as np

        m, s = float(np.asarray(est.mean)[i]), float(np.asarray(est.se)[i])
        return cls(label, theory=0.0, value=sign * m - 3.0 * s, se=None, tolerance=0.0, kind="lower",
                   note=note or f"{'+' if sign > 0 else '−'}(MC mean) − 3·SE must be ≥ 0", qualitative=True)

    def comparison(self):
        from attnlimits.verify.comparison import Comparison

        theory = tuple(self.theory) if isinstance(self.theory, (tuple, list)) else self.theory
        return Comparison(self.value, theory, self.se, self.dof, float(self.tolerance), float(self.allowance),
                          self.kind)

    @property
    def stochastic(self) -> bool:
        """Whether the check has a finite positive SE, hence a p-value and a place in the family."""
        se = self.se
        return se is not None and math.isfinite(float(se)) and float(se) > 0 and self._finite_value()

    def _finite_value(self) -> bool:
        v = self.value
        try:
            return v is not None and math.isfinite(float(v))
        except (TypeError, ValueError):
            return False

    @property
    def statistic(self) -> float | None:
        """z (or t with ``dof``): the deviation beyond tolerance + allowance, in SEs; ``None`` without SE."""
        return self.comparison().statistic if self.stochastic else None

    @property
    def p_value(self) -> float | None:
        """Raw p-value (two-sided for abs/rel, one-sided for bounds); ``None`` without SE."""
        return self.comparison().p_value if self.stochastic else None

    @property
    def law(self) -> str:
        return "" if not self.stochastic else self.comparison().law

    @property
    def single_level(self) -> float:
        """Per-check level of a check judged alone: ``2·Φ(−k)``."""
        return math.erfc(self.k / math.sqrt(2.0))

    @property
    def threshold(self) -> float:
        """The largest |value − theory| that passes (excess over the bound for one-sided kinds):
        tolerance + allowance + (critical statistic)·SE at this check's level (its Holm threshold
        in a run, else :attr:`single_level`)."""
        from attnlimits.verify.comparison import critical_value

        margin = self.tolerance * abs(self.theory) if self.kind == "rel" and not isinstance(
            self.theory, (tuple, list)) else self.tolerance
        margin += self.allowance
        if not self.stochastic:
            return margin
        alpha = self.holm_threshold if self.holm_threshold is not None else self.single_level
        sided = 2 if self.kind in ("abs", "rel") else 1
        return margin + critical_value(alpha, self.dof, sided=sided) * float(self.se)

    @property
    def margin(self) -> float:
        """tolerance (scaled by |theory| for ``kind="rel"``) + allowance, in the value's units."""
        tol = self.tolerance * abs(self.theory) if self.kind == "rel" and not isinstance(
            self.theory, (tuple, list)) else self.tolerance
        return float(tol) + float(self.allowance)

    @property
    def mdd(self) -> float | None:
        """Minimum detectable deviation in the value's units: ``t(1 − a/s, dof)·SE + margin`` with ``a`` =
        :attr:`mdd_level` (level/m in a run) or :attr:`single_level` alone, ``s`` = 2 two-sided, 1 for
        bounds; the margin alone for a deterministic check; ``None`` for a qualitative one."""
        from attnlimits.verify.comparison import minimum_detectable_deviation

        if self.qualitative:
            return None
        if self.se is not None and not math.isfinite(float(self.se)):
            return math.inf
        if not self.stochastic:
            return self.margin
        alpha = self.mdd_level if self.mdd_level is not None else self.single_level
        return minimum_detectable_deviation(self.se, self.dof, alpha, sided=2 if self.kind in ("abs", "rel") else 1,
                                            margin=self.margin)

    @property
    def headline(self) -> float | None:
        """The magnitude :attr:`mdd_relative` is relative to: :attr:`scale`, else ``|theory|`` (the larger
        |bound| of an interval)."""
        if self.scale is not None:
            return abs(float(self.scale))
        th = self.theory
        try:
            return max(abs(float(x)) for x in th) if isinstance(th, (tuple, list)) else abs(float(th))
        except (TypeError, ValueError):
            return None

    @property
    def mdd_relative(self) -> float | None:
        """:attr:`mdd` relative to :attr:`headline` (``None`` when either is missing or the headline is 0)."""
        m, h = self.mdd, self.headline
        if m is None or h is None or not math.isfinite(h) or h == 0:
            return None
        return m / h

    @property
    def passed(self) -> bool:
        if not self._finite_value():
            return False
        if self.se is not None and not math.isfinite(float(self.se)):
            return False  # one draw: no error bar, no verdict
        comp = self.comparison()
        if not self.stochastic:
            return comp.within_margin
        if self.p_adjusted is not None and self.level is not None:
            return self.p_adjusted > self.level
        return comp.p_value > self.single_level

    def to_dict(self) -> dict:
        d = asdict(self)
        d["theory"] = list(self.theory) if isinstance(self.theory, tuple) else self.theory
        d["threshold"] = self.threshold
        d["statistic"] = self.statistic
        d["z"] = self.statistic  # the comparison column's name (results.csv, explore, figures)
        d["law"] = self.law
        d["p_value"] = self.p_value
        d["passed"] = self.passed
        d["mdd"] = self.mdd
        d["mdd_relative"] = self.mdd_relative
        return d


@dataclass
class PlotSeries:
    label: str
    x: list
    y: list
    yerr: list | None = None
    #: "line" (theory; with ``yerr`` drawn as a shaded ±yerr band), "points" (MC with error bars) or
    #: "dashed" (a reference level, e.g. a population optimum or the Bayes risk)
    kind: str = "line"
    #: series of one group (e.g. one activation) share a colour; a "dashed" series without a group is black
    group: str | None = None
    #: per point, the value's ``flag`` (docs/output.md; ``""`` or ``None`` when clean): a flagged theory point is
    #: drawn hollow and off the line, a flagged measurement with an ``x`` (:mod:`attnlimits.verify.flags`)
    flags: list | None = None


@dataclass
class PlotSpec:
    title: str
    xlabel: str
    ylabel: str
    series: list = field(default_factory=list)
    xscale: str = "log"
    yscale: str = "linear"


@dataclass
class ClaimResult:
    claim: str
    title: str
    verdict: str
    checks: list = field(default_factory=list)
    plots: list = field(default_factory=list)
    params: dict = field(default_factory=dict)
    notes: str = ""
    elapsed: float = 0.0
    source: str = ""
    tags: tuple = ()
    #: the run's mode (``quick``/``full``): the MDD target the claim is held to
    mode: str = ""

    @property
    def mdd(self) -> float | None:
        """The claim's minimum detectable relative deviation: the largest :attr:`Check.mdd_relative` of its
        quantitative checks (``None`` when it has none).  Checks of a quoted number within its quoted
        precision (``tolerance_reason="quoted"``) are left out: their MDD is the precision of the quote
        (shown per check), which no size of the run can change."""
        vals = [c.mdd_relative for c in self.checks if isinstance(c, Check) and c.tolerance_reason != "quoted"]
        vals = [v for v in vals if v is not None]
        return max(vals) if vals else None

    def to_dict(self) -> dict:
        from .power import mdd_status

        return {
            "claim": self.claim, "title": self.title, "verdict": self.verdict, "source": self.source,
            "tags": list(self.tags), "elapsed_s": round(self.elapsed, 3), "notes": self.notes,
            "mdd": self.mdd, "mdd_status": mdd_status(self),
            "params": self.params, "checks": [c.to_dict() for c in self.checks],
        }


@dataclass
class Claim:
    """A registered claim.

    ``run(ctx, size)`` receives the :class:`Context` and the size dict of the mode (``quick`` or
    ``full``) and returns ``(checks, plots, params)`` or a :class:`ClaimResult`.  ``quoted=True``
    marks a statement as quoted from a paper: failing checks then give ``discrepancy``.

    ``group`` names the claims that reuse one another's cached computations (the training runs of
    C15 that C16 and C17 analyse again; one simulation shared by paired claims).  ``verify --workers``
    runs a group in one worker process, in registry order, so each claim sees what a serial run gives
    it; a claim without a group is a group of its own.
    """

    name: str
    title: str
    statement: str
    source: str
    run: Callable
    quick: dict = field(default_factory=dict)
    full: dict = field(default_factory=dict)
    tags: tuple = ()
    quoted: bool = False
    references: tuple = ()
    group: str = ""

    def size(self, mode: str) -> dict:
        return dict(self.full if mode == "full" else self.quick)


REGISTRY: dict[str, Claim] = {}


def citation(claims: Iterable) -> list[str]:
    """The references behind ``claims`` (Claim objects, results or names), de-duplicated in order."""
    out: list[str] = []
    for c in claims:
        name = c if isinstance(c, str) else getattr(c, "name", None) or getattr(c, "claim", None)
        for ref in getattr(REGISTRY.get(name), "references", ()):
            if ref not in out:
                out.append(ref)
    return out


def register(claim: Claim) -> Claim:
    if claim.name in REGISTRY:
        raise ValueError(f"claim {claim.name} registered twice")
    REGISTRY[claim.name] = claim
    return claim


def select(names: Iterable[str] = (), tags: Iterable[str] = ()) -> list[Claim]:
    """Claims by name (case-insensitive) and/or tag; all when neither is given."""
    names, tags = [n.lower() for n in names], set(tags)
    by_lower = {k.lower(): v for k, v in REGISTRY.items()}
    unknown = [n for n in names if n not in by_lower]
    if unknown:
        raise KeyError(f"unknown claim(s) {', '.join(unknown)}; see `attnlimits verify --list`")
    chosen = [by_lower[n] for n in names] if names else list(REGISTRY.values())
    if tags:
        chosen = [c for c in chosen if tags & set(c.tags)]
        if not chosen:
            raise KeyError(f"no claim has tag(s) {', '.join(sorted(tags))}; see `attnlimits verify --list`")
    return chosen


class Context:
    """What claims share during one run: mode, device, seed, and caches (theory solvers, Hermite
    data, Monte Carlo runs keyed by their arguments so paired claims reuse one simulation)."""

    def __init__(self, mode: str = "quick", device: str = "auto", seed: int = 0, progress=None, cache_dir=None):
        if mode not in ("quick", "full"):
            raise ValueError("mode must be 'quick' or 'full'")
        self.mode, self.device, self.seed = mode, device, int(seed)
        self.progress = progress or (lambda msg: None)
        self._cache: dict = {}
        self.disk = None if cache_dir is None else DiskCache(cache_dir)
        #: the claim running now (set by :func:`run_one`)
        self.claim = ""
        #: ``repr(key)`` → (claim, seconds) of each cached computation this context ran (not those read
        #: from the disk cache): how ``verify --workers`` finds a computation repeated in two workers
        self.computed: dict[str, tuple[str, float]] = {}
        #: after ``verify --workers``: the computations that ran in more than one worker
        #: (:func:`attnlimits.verify.claims.parallel.repeated_computations`)
        self.repeated: list[dict] = []

    def seed_for(self, name: str, *extra) -> int:
        """A reproducible seed for the Monte Carlo run ``name`` (and ``extra`` indices), derived from
        the master seed by hashing: no hand-kept table of offsets, and distinct names never share
        draws unless they are meant to (same name, same draws: paired comparisons)."""
        import hashlib

        text = "|".join([str(self.seed), str(name), *map(str, extra)])
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little") & 0x7FFFFFFF

    def cached(self, key, fn: Callable, *, persist: bool = False, expect=None):
        """``fn()`` once per ``key`` and run; with ``persist`` and a cache folder (``verify --cache``)
        also across runs: the result is read from / written to :class:`DiskCache` under ``key`` plus
        the run's mode, seed and device, so an interrupted long run resumes where it stopped.

        ``expect`` (a type, a tuple of types, or a predicate) is what a value must be: a disk entry that
        decodes to anything else is rejected (counted in ``cache.rejected``) and recomputed, never handed
        to the claim."""
        if key not in self._cache:
            if persist and self.disk is not None:
                full_key = (key, self.mode, self.seed, self.device)
                hit, value = self.disk.get(full_key)
                if hit and expect is not None and not _conforms(value, expect):
                    self.disk.hits -= 1
                    self.disk._reject(self.disk._path(full_key), f"holds a {type(value).__name__}, not what the "
                                      "claim stores there")
                    hit = False
                if hit:
                    text = " ".join(map(str, key)) if isinstance(key, tuple) else str(key)
                    self.progress(f"  from the cache: {text[:110]}")
                else:
                    value = self._compute(key, fn)
                    self.disk.put(full_key, value)
                self._cache[key] = value
            else:
                self._cache[key] = self._compute(key, fn)
        return self._cache[key]

    def _compute(self, key, fn: Callable):
        t0 = time.perf_counter()
        value = fn()
        self.computed[repr(key)] = (self.claim, time.perf_counter() - t0)
        return value


def _conforms(value, expect) -> bool:
    """Whether ``value`` is what ``expect`` (a type, a tuple of types, or a predicate) asks for."""
    if isinstance(expect, type) or (isinstance(expect, tuple) and all(isinstance(t, type) for t in expect)):
        return isinstance(value, expect)
    try:
        return bool(expect(value))
    except Exception:  # noqa: BLE001 - a predicate that cannot read the value rejects it
        return False


def _plain(key) -> bool:
    """Keys the disk cache accepts: nested tuples of str, int, float, bool and None (a stable repr)."""
    if isinstance(key, tuple):
        return all(_plain(k) for k in key)
    return key is None or isinstance(key, (str, int, float, bool))


def code_fingerprint() -> str:
    """SHA-256 (16 hex digits) of the source of the packages whose code makes a claim's numbers."""
    import hashlib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for pkg in ("derivations", "symbolic", "numeric", "verify"):
        for f in sorted((root / pkg).rglob("*.py")):
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


class DiskCache:
    """Results of expensive claim runs (training, RS tunings) in a folder: data only, never code.

    One entry per key: ``<hash>.json`` (schema version, key, attnlimits version, the
    :func:`code_fingerprint` of the code that made it, the value encoded by
    :mod:`attnlimits.verify.claims._datacache`) and, for arrays, ``<hash>.npz`` read with
    ``allow_pickle=False``.  Nothing in the folder is executed: an entry that does not parse, has
    another schema, names another key or holds anything but data — a planted pickle, an object
    array — is recomputed and counted in :attr:`rejected` (reported in results.json and on stderr).
    An entry made by other code is still used — reruns after an edit that does not touch the numbers
    should not cost hours — but counted in :attr:`stale` and reported (delete the folder to
    recompute).  Files are written atomically (the ``.npz`` first, the ``.json`` last).
    """

    def __init__(self, folder):
        from pathlib import Path

        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"cache folder {folder}: {exc.strerror or exc}") from None
        self.fingerprint = code_fingerprint()
        self.hits = self.misses = 0
        self.stale: list = []
        self.rejected: list = []  # (file name, reason)
        # files of the old pickle format (or planted ones) are never opened: counted once
        for legacy in sorted(self.folder.glob("*.pkl")):
            self.rejected.append((legacy.name, "a pickle file: never loaded (pickle runs code)"))

    def _path(self, key, suffix=".json"):
        import hashlib

        return self.folder / (hashlib.sha256(repr(key).encode()).hexdigest()[:24] + suffix)

    def _reject(self, path, why):
        self.rejected.append((path.name, why))
        self.misses += 1
        return False, None

    def get(self, key):
        import json

        import numpy as np

        from ._datacache import SCHEMA, decode, load_arrays

        if not _plain(key):
            return False, None
        path = self._path(key)
        if not path.exists():
            self.misses += 1
            return False, None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(entry, dict) or entry.get("schema") != SCHEMA:
                return self._reject(path, "not an entry of this schema")
            if entry.get("key") != repr(key):
                return self._reject(path, "another key")
            arrays = {}
            if entry.get("arrays"):
                arrays = load_arrays(self._path(key, ".npz"))  # size-checked before inflating
            value = decode(entry["value"], arrays)
        except Exception as exc:  # noqa: BLE001 - an unreadable or non-data entry is recomputed, never run
            return self._reject(path, f"{type(exc).__name__}: {str(exc)[:120]}")
        self.hits += 1
        if entry.get("fingerprint") != self.fingerprint:
            self.stale.append((repr(key), entry.get("fingerprint")))
        return True, value

    def put(self, key, value) -> bool:
        import json

        import numpy as np

        from ._datacache import SCHEMA, CacheFormatError, encode

        if not _plain(key):
            return False
        from importlib import metadata

        try:
            version = metadata.version("attnlimits")
        except metadata.PackageNotFoundError:  # a bare checkout
            version = "unknown"
        arrays: dict = {}
        try:
            data = encode(value, arrays)
            text = json.dumps({"schema": SCHEMA, "key": repr(key), "fingerprint": self.fingerprint,
                               "version": version, "arrays": bool(arrays), "value": data})
        except (CacheFormatError, TypeError, ValueError):
            return False  # not data: kept for this run only
        from attnlimits.symbolic.files import atomic_write, write_text_atomic

        path, npz = self._path(key), self._path(key, ".npz")
        try:  # each file atomically (the shared writer: no partial file, the umask honoured)
            if arrays:
                def write_npz(tmp):
                    with open(tmp, "wb") as fh:
                        np.savez(fh, **arrays)
                atomic_write(npz, write_npz)
            write_text_atomic(path, text)
        except OSError:
            return False
        return True

    def counters(self) -> dict:
        """Hits, misses and the stale and rejected entries seen by this object (to be absorbed by another)."""
        return {"hits": self.hits, "misses": self.misses, "stale": list(self.stale), "rejected": list(self.rejected)}

    def absorb(self, counters: list[dict]) -> None:
        """Add the :meth:`counters` of other objects on the same folder (the workers of a parallel run)."""
        for c in counters:
            self.hits += c["hits"]
            self.misses += c["misses"]
            self.stale += [tuple(x) for x in c["stale"]]
            self.rejected += [tuple(x) for x in c["rejected"] if tuple(x) not in self.rejected]

    def summary(self) -> dict:
        return {"folder": str(self.folder), "fingerprint": self.fingerprint, "hits": self.hits,
                "misses": self.misses, "stale_hits": len(self.stale),
                "stale_fingerprints": sorted({f for _, f in self.stale if f}),
                "rejected": len(self.rejected), "rejected_entries": [f"{n}: {w}" for n, w in self.rejected[:20]]}


def apply_family_rule(results: list, level: float | None = None):
    """Holm's procedure at family-wise ``level`` over every check with an SE in ``results``
    (:class:`ClaimResult` list): sets each such check's ``level``, ``p_adjusted`` and
    ``holm_threshold``; returns the :class:`attnlimits.verify.comparison.HolmResult`."""
    from attnlimits.verify.comparison import LEVEL, holm

    level = LEVEL if level is None else float(level)
    members = [c for r in results for c in r.checks if isinstance(c, Check) and c.stochastic]
    h = holm([c.p_value for c in members], level)
    for c, adj, thr in zip(members, h.adjusted, h.thresholds):
        c.level, c.p_adjusted, c.holm_threshold = level, float(adj), float(thr)
    # the MDD of every check (deterministic ones included) at the level a lone deviation needs: level/m
    for r in results:
        for c in r.checks:
            if isinstance(c, Check):
                c.mdd_level = level / max(h.m, 1)
    return h


def _decide(out: list, quoted: list, level, *, provisional: bool = True) -> list:
    """Holm over the checks of ``out`` (the claims run so far), then each claim's verdict; on copies
    when ``provisional`` (the claims run on and are decided again), in place for the final family."""
    import copy

    if provisional:
        out = [copy.copy(r) for r in out]
        for r in out:
            r.checks = [copy.copy(c) for c in r.checks]
    apply_family_rule(out, level)
    for res, is_quoted in zip(out, quoted):
        if not res.verdict:
            ok = all(c.passed for c in res.checks) and bool(res.checks)
            res.verdict = "pass" if ok else ("discrepancy" if is_quoted else "fail")
    return out


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_claims`: ``results`` holds the finished claims, decided as a family
    of their own, and ``not_run`` the names of the claims that did not finish."""

    def __init__(self, results: list, not_run: list):
        super().__init__(f"interrupted after {len(results)} claim(s); {len(not_run)} did not run")
        self.results, self.not_run = results, not_run


def run_one(claim: Claim, ctx: Context) -> ClaimResult:
    """Run one claim at ``ctx``'s mode: its :class:`ClaimResult`, undecided (the verdict is set by the
    family rule over the whole run), or ``fail`` with the error when the claim raises.  Ctrl-C propagates."""
    t0 = time.perf_counter()
    ctx.claim = claim.name
    try:
        res = claim.run(ctx, claim.size(ctx.mode))
        if not isinstance(res, ClaimResult):
            checks, plots, params = res
            res = ClaimResult(claim.name, claim.title, "", list(checks), list(plots), dict(params))
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - reported, never swallowed silently
        res = ClaimResult(claim.name, claim.title, "fail",
                          notes=f"error: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}")
    res.elapsed = time.perf_counter() - t0
    res.source, res.tags, res.mode = claim.source, tuple(claim.tags), ctx.mode
    res.title = res.title or claim.title
    return res


def decide(results: list, quoted: list, level=None, *, provisional: bool = True) -> list:
    """The verdicts of ``results`` (claims in run order; ``quoted`` their flags) under the family rule:
    see :func:`run_claims`."""
    return _decide(results, quoted, level, provisional=provisional)


def run_claims(claims: list[Claim], ctx: Context, *, level: float | None = None,
               on_claim=None) -> list[ClaimResult]:
    """Run claims in order; a claim that raises is reported as ``fail`` with its error.

    The checks with an SE of all claims form one family: after the last claim, Holm's procedure at
    family-wise ``level`` (default :data:`attnlimits.verify.comparison.LEVEL`, 1 %) decides them
    (:func:`apply_family_rule`), and only then are the verdicts set.

    ``on_claim(results, not_run)``, when given, is called after each claim with the claims finished
    so far — decided as a family of their own (*provisional*: the final family is larger, so its
    thresholds are stricter) — and the names of the claims still to run: ``verify`` prints each
    verdict as it comes and rewrites its report.  Ctrl-C is never swallowed: it ends the run with
    :class:`RunInterrupted` carrying the finished claims, decided, and the names of the others."""
    out, quoted = [], []
    for i, claim in enumerate(claims, 1):
        ctx.progress(f"[{i}/{len(claims)}] {claim.name}: {claim.title}")
        try:
            res = run_one(claim, ctx)
        except KeyboardInterrupt:
            raise RunInterrupted(_decide(out, quoted, level), [c.name for c in claims[i - 1:]]) from None
        out.append(res)
        quoted.append(claim.quoted)
        if on_claim is not None and i < len(claims):
            try:
                on_claim(_decide(out, quoted, level), [c.name for c in claims[i:]])
            except KeyboardInterrupt:
                raise RunInterrupted(_decide(out, quoted, level), [c.name for c in claims[i:]]) from None
    return _decide(out, quoted, level, provisional=False)
