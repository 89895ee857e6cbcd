

def _fp(alpha, E, obj, rep, stab_d):
    from attnlimits.numeric.replica import UNKNOWNS, RSFixedPoint

    vals = dict(zip(UNKNOWNS, (0.5, 0.8, 1.0, 0.4, 0.3, 0.2)))
    return RSFixedPoint(vals, {k: 0.0 for k in UNKNOWNS}, E, 0.01, obj, 0.0, obj, {}, 1.5, 0.0, 0.0, 0.0, 0.0, 1, 1,
                        "m", "r", 0.0, 0.0, alpha, 0.1, 0.1, (), free_energy=obj, training_objective_error=0.0,
                        stability_damped=stab_d, replicon=rep, replicon_error=0.0)


@pytest.mark.parametrize("fps,only_unstable,rsb,warn", [
    ([(1.0, 0.05, 0.5, 0.7), (2.0, 0.06, 0.4, 1.2)], False, False, None),
    ([(1.0, 0.05, 0.5, 1.1), (2.0, 0.06, 0.4, 1.2)], True, False, "unstable under the damped map"),
    ([(1.0, 0.05, 1.5, 0.7)], False, True, "replica symmetry broken"),
])
def test_rows_flag_points_without_a_stable_fixed_point(monkeypatch, capsys, fps, only_unstable, rsb, warn):
    """The table's own column ``only_unstable_fixed_points`` (every fixed point has a damped-map eigenvalue
    with real part ≥ 1), ``rsb`` of the equilibrium row, and one stderr line when either holds."""
    from attnlimits.numeric import _replica_command as RC

    fake = {4.0: [(f"s{i}", _fp(4.0, *p)) for i, p in enumerate(fps)]}
    monkeypatch.setattr(RC, "rs_branch_search", lambda *a, **k: fake)
    params = {"activation": "x", "model": "spiked", "nu": 2.0, "L": 2, "alpha": [4.0], "lam": [0.1], "delta": 0.1,
              "branches": "equilibrium"}
    (row,) = RC.replica_rows(None, None, params)
    assert row["phase"] == "equilibrium" and row["n_branches"] == len(fps)
    assert row["only_unstable_fixed_points"] is only_unstable and row["rsb"] is rsb
    err = capsys.readouterr().err.strip().splitlines()
    if warn is None:
        assert err == []
    else:
        assert len(err) == 1 and warn in err[0] and "alpha=4" in err[0]
    rows = RC.replica_rows(None, None, {**params, "branches": "all"})
    assert len(rows) == len(fps) and sum(r["phase"] == "equilibrium" for r in rows) == 1
