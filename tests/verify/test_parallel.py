"""``verify --workers``: groups of claims, and a parallel run that gives the serial run's results."""
from __future__ import annotations

import dataclasses
import math

import pytest

from attnlimits.verify.claims import REGISTRY, Context, run_claims
from attnlimits.verify.claims.base import Claim
from attnlimits.verify.claims.parallel import groups_of, portable, repeated_computations, run_claims_parallel


def _claim(name, group=""):
    return Claim(name, name, "", "", lambda ctx, size: ([], [], {}), group=group)


def test_groups_partition_the_claims_in_their_order():
    claims = [_claim("a", "g"), _claim("b"), _claim("c", "g"), _claim("d", "h"), _claim("e")]
    groups = groups_of(claims)
    assert [[c.name for c in g] for g in groups] == [["a", "c"], ["b"], ["d"], ["e"]]


def test_every_declared_group_has_two_claims():
    """A group of one is a misspelt group name: the claim it meant to join would run in another worker and
    repeat the shared computation."""
    members: dict[str, list[str]] = {}
    for c in REGISTRY.values():
        if c.group:
            members.setdefault(c.group, []).append(c.name)
    assert members, "no claim declares a group"
    assert not {g: m for g, m in members.items() if len(m) < 2}


def test_registered_claims_are_portable_and_a_test_claim_is_not():
    """Every claim of the installed results runs in a worker (a fresh process finds it); one registered by
    hand does not, and ``verify`` then runs in one process."""
    ours = [c for c in REGISTRY.values() if c.run.__module__.startswith("attnlimits.")]
    assert len(ours) >= 71 and all(portable(c) for c in ours)
    assert not portable(_claim("local"))


def test_repeated_computations_names_the_claims_and_the_time_lost():
    rep = repeated_computations({"('mc', 1)": [("V4", 3.0), ("V5", 2.5)], "('mc', 2)": [("V6", 1.0)],
                                 "('erm', 3)": [("C15", 10.0), ("C16", 12.0), ("C17", 11.0)]})
    assert [r["key"] for r in rep] == ["('erm', 3)", "('mc', 1)"]
    assert rep[0]["claims"] == ["C15", "C16", "C17"] and rep[0]["seconds"] == pytest.approx(21.0)
    assert rep[1]["seconds"] == pytest.approx(2.5)
    assert [r["key"] for r in repeated_computations({"k": [("a", 0.1), ("b", 0.2)]}, min_seconds=0.5)] == []


def _fields(results):
    """Everything a report shows of each result except the time it took."""
    out = {}
    for r in results:
        checks = [sorted(dataclasses.asdict(ch).items()) for ch in r.checks]
        out[r.claim] = (r.verdict, checks, sorted((k, repr(v)) for k, v in r.params.items()))
    return out


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def test_parallel_run_gives_the_serial_results():
    """Cheap claims (a group of five sharing Bayes-risk computations, and three alone) on two workers: the
    verdicts and every check's numbers are those of the serial run, bit for bit, in registry order, and no
    cached computation ran in two workers."""
    names = ["C2", "C4", "C10", "Q2", "Q3", "ID-derivative", "V1", "C1"]
    claims = [REGISTRY[n] for n in REGISTRY if n in names]  # registry order
    assert len({c.group for c in claims if c.group}) == 1 and len(groups_of(claims)) == 4
    serial = run_claims(claims, Context("quick", device="cpu", seed=2))
    ctx = Context("quick", device="cpu", seed=2)
    seen = []
    parallel, disks = run_claims_parallel(claims, ctx, workers=2, threads=1,
                                          on_claim=lambda done, not_run: seen.append(len(done)))
    assert [r.claim for r in parallel] == [c.name for c in claims]
    a, b = _fields(serial), _fields(parallel)
    assert a.keys() == b.keys()
    for name in a:
        assert _same(list(a[name]), list(b[name])), (name, a[name], b[name])
    assert disks == [] and ctx.repeated == []
    assert seen == sorted(seen) and seen[-1] < len(claims)  # progress as groups finish, never the whole run
