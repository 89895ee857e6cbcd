"""ERM from several starts on the same data, distinct minima per seed (attnlimits.verify.slr.train.train_multistart)."""
import pytest

from attnlimits.symbolic.result import InputError
from attnlimits.verify.slr.train import MULTISTART_INITS, train_multistart


def test_every_start_on_the_same_data_and_the_lowest_minimum_marked():
    """Four starts × 2 seeds of L-BFGS at D = 30 plus the test errors (2 s idle, up to 30 s on a loaded CPU)."""
    rows = train_multistart("linear_uncentred", model="spiked", nu=2.0, L=2, alpha=4.0, lam=0.1, D=30, seeds=2,
                            seed=5, n_test=200, overlap_points=2 ** 9, lam_ladder=(1.0,))
    assert len(rows) == 2 * len(MULTISTART_INITS)
    for s in (0, 1):
        per = [r for r in rows if r["seed_index"] == s]
        assert {r["start"] for r in per} == set(MULTISTART_INITS)
        lowest = min(r["objective"] for r in per)
        for r in per:
            assert r["equilibrium"] == (r["minimum"] == 0)
            assert r["n_minima"] == len({x["minimum"] for x in per})
            if r["objective"] == lowest:
                assert r["equilibrium"]
            else:
                assert r["objective"] >= lowest
        # objectives are of the same data: the ridge objective per sample is comparable across starts
        assert all(r["objective_per_N"] == pytest.approx(r["objective"] / 120) for r in per)


def test_unknown_start_is_refused():
    with pytest.raises(InputError, match="unknown start"):
        train_multistart("linear_uncentred", model="spiked", nu=2.0, L=2, alpha=4.0, lam=0.1, D=20, seeds=1,
                         inits=("informed", "nowhere"))


def test_train_command_multistart(capsys):
    """``slr train --init multistart``: one row per seed and start, the minima labelled."""
    import json

    from attnlimits.verify import cli

    rc = cli.main(["slr", "train", "--init", "multistart", "--D", "30", "--seeds", "1", "--alpha", "4", "--json"])
    assert rc == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted(r["start"] for r in rows) == sorted(["informed", "uninformed", "random", "lambda_continuation"])
    assert all(r["n_minima"] >= 1 and r["minimum"] < r["n_minima"] for r in rows)
    assert sum(r["equilibrium"] for r in rows) >= 1
    assert cli.main(["slr", "train", "--init", "multistart", "--plot", "c.png"]) == 2
