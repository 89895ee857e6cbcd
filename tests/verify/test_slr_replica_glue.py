"""The ``slr replica`` command and the name-level API (attnlimits.verify.slr.replica): contract and bad input."""
import math

import pytest

from attnlimits.symbolic.result import InputError
from attnlimits.verify.slr import replica as V


def test_command_contract_rows():
    params = V.REPLICA_COMMAND.parse({"model": "spiked", "nu": "2", "L": "2", "activation": "linear_uncentred",
                                      "alpha": "10", "lam": "1", "delta": "0.1", "points": "128"})
    msgs = []
    rows = list(V.run_replica(params, progress=msgs.append))
    assert len(rows) == 1 and msgs
    r = rows[0]
    for k in V.REPLICA_COMMAND.table + ("E_test_error", "training_objective", "model", "nu", "L", "branch"):
        assert k in r, k
    assert r["branch"] == "informed" and r["informed"] is True
    for v in r.values():
        assert v is None or isinstance(v, (int, float, str, bool))
    assert math.isfinite(r["E_test"])


@pytest.mark.parametrize("kw,match", [
    (dict(alpha=0.0), "alpha"), (dict(alpha=-1.0), "alpha"), (dict(lam=0.0), "lam"), (dict(lam=-0.1), "lam"),
    (dict(delta=-0.1), "delta"), (dict(model="spiked", nu=math.inf), "max-SLR only"), (dict(L=1), "L must be"),
    (dict(activation="erf_learned"), "learned scalar"), (dict(activation="softplus_norm_bias"), "learned scalar"),
    (dict(activation="linear"), "ambiguous"), (dict(model="other"), "model"),
])
def test_bad_input_is_one_line_input_error(kw, match):
    args = dict(activation="linear_uncentred", model="spiked", nu=2.0, L=2, alpha=4.0, lam=0.1, delta=0.1)
    args.update(kw)
    with pytest.raises(InputError, match=match) as exc:
        V.rs_problem(args.pop("activation"), args.pop("model"), args.pop("nu"), args.pop("L"),
                     points=128).fixed_point(args.pop("alpha"), args.pop("lam"), args.pop("delta"))
    assert "\n" not in str(exc.value)


def test_lam_parse():
    assert V.parse_lams(["tune"]) == "tune"
    with pytest.raises(InputError):
        V.parse_lams(["0"])
    with pytest.raises(InputError):
        V.parse_lams(["abc"])


def test_branches_all_reports_every_branch_with_its_phase():
    params = V.REPLICA_COMMAND.parse({"model": "spiked", "nu": "2", "L": "2", "activation": "linear_centred",
                                      "alpha": "10", "lam": "1", "branches": "all", "points": "128"})
    rows = list(V.run_replica(params))
    assert [r["phase"] for r in rows].count("equilibrium") == 1
    assert all(r["n_branches"] == len(rows) for r in rows)
    for r in rows:
        for k in ("replicon", "rsb", "only_unstable_fixed_points", "training_objective", "free_energy", "branch"):
            assert k in r, k
    # rows sorted by training objective; the equilibrium one is the lowest RS-stable
    objs = [r["training_objective"] for r in rows]
    assert objs == sorted(objs)


def test_branches_modes_and_the_former_flag():
    from attnlimits.numeric.slr.rs_command import branch_mode

    assert V.REPLICA_COMMAND.parse({})["branches"] == "equilibrium"
    assert branch_mode(True) == "all" and branch_mode("true") == "all" and branch_mode(None) == "equilibrium"
    with pytest.raises(InputError, match="--branches"):
        V.REPLICA_COMMAND.parse({"branches": "some"})
    params = V.REPLICA_COMMAND.parse({"model": "spiked", "nu": "2", "L": "2", "activation": "linear_centred",
                                      "alpha": "10", "lam": "1", "branches": "informed", "points": "128"})
    (row,) = list(V.run_replica(params))
    assert row["phase"] == "unsearched" and row["branch"] == "informed"


def test_form_option_reaches_the_solver():
    # --form jacobian gives the API's form="jacobian" fixed point (to reproduce references made with it)
    args = {"model": "spiked", "nu": "2", "L": "2", "activation": "linear_centred", "alpha": "4", "lam": "0.1",
            "delta": "0.1", "points": "256", "branches": "informed"}
    rows = {f: list(V.run_replica(V.REPLICA_COMMAND.parse({**args, "form": f})))[0] for f in ("stein", "jacobian")}
    api = V.rs_problem("linear_centred", "spiked", 2.0, 2, points=256).fixed_point(4.0, 0.1, 0.1, form="jacobian")
    assert rows["jacobian"]["E_test"] == pytest.approx(api.E_test, rel=1e-9)
    assert rows["jacobian"]["E_test"] != rows["stein"]["E_test"]
    assert rows["jacobian"]["form"] == "jacobian" and rows["stein"]["form"] == "stein"  # provenance in every row
    assert V.REPLICA_COMMAND.parse(args)["form"] == "stein"


def test_rs_all_branches_name_level():
    out = V.rs_problem("linear_centred", "spiked", 2.0, 2, points=128).all_branches([10.0], 1.0, 0.1, lam_ladder=())
    (rows,) = out.values()
    assert [ph for _, _, ph in rows].count("equilibrium") == 1
    with pytest.raises(InputError, match="alpha"):
        V.rs_problem("linear_centred", "spiked", 2.0, 2).all_branches([0.0], 1.0)


def test_rs_problem_resolves_names_once():
    rs = V.rs_problem("linear_centred", "spiked", 2, 2, points=128)
    assert rs.activation == "linear_centred" and rs.nu == 2.0 and rs.rules[0].points == 128
    assert V.rs_problem("linear_centred", "spiked", 2, 2, points=128).kern is rs.kern  # compiled once (cached)
    fp = rs.fixed_point(10.0, 1.0, 0.1)
    curve = rs.learning_curve([10.0], 1.0, 0.1)
    assert curve[0].E_test == fp.E_test  # the same solver at the same point
    with pytest.raises(Exception):
        rs.nu = 3.0  # frozen: a resolved setting does not change under its users


def test_one_replica_call_resolves_activation_and_length_law_once():
    """One ``slr replica`` call turns the activation name into its object once and
    parses the length law once: every layer below takes the :class:`SLRProblem` built at the command's edge.
    Counted by a profile hook on the code objects, so that calls through any imported alias count too."""
    import sys
    from collections import Counter

    from attnlimits.derivations.slr import population as P
    from attnlimits.numeric.slr.problem import LengthLaw, check_model_nu
    from attnlimits.verify.cli import main

    named = Counter()
    codes = {P.activation.__code__: "activation", LengthLaw.parse.__func__.__code__: "length law",
             check_model_nu.__code__: "model and nu"}

    def hook(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            what = codes[frame.f_code]
            first = frame.f_locals.get("name", frame.f_locals.get("L"))
            if not isinstance(first, (P.Activation, LengthLaw)):  # an object passed on is no resolution
                named[what] += 1

    sys.setprofile(hook)
    try:
        main(["slr", "replica", "--activation", "linear_uncentred", "--L", "2", "--alpha", "4", "--lam", "1",
              "--points", "64", "--replicates", "2", "--branches", "informed", "--json"])
    finally:
        sys.setprofile(None)
    assert named == Counter({"activation": 1, "length law": 1, "model and nu": 1}), named
