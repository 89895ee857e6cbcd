"""GAMP for spiked-SLR (attnlimits.verify.slr.amp) and the bayes-optimal / amp commands."""
import math

import pytest
import torch

from attnlimits.symbolic.result import InputError
from attnlimits.verify.slr.amp import gamp, gamp_on_generated
from attnlimits.verify.slr.bayes_optimal import AMP_COMMAND, BAYES_OPTIMAL_COMMAND, bo_state_evolution


@pytest.fixture(scope="module")
def se_point():
    return bo_state_evolution("spiked", 2.0, 2, [4.0], 0.1, points=2 ** 12, starts=("uninformed",))[0]


def test_gamp_reaches_state_evolution(se_point):
    torch.set_num_threads(1)
    D = 400
    r = gamp_on_generated(2.0, 2, 4.0, 0.1, D, 7, n_test=5000, device="cpu")
    assert r["converged"]
    # Nishimori diagnostics: 1 - V = q and Ahat = qhat of the state evolution
    assert abs((1 - r["V_k"]) - se_point.q_k) < 0.01
    assert abs((1 - r["V_v"]) - se_point.q_v) < 0.01
    assert r["Ahat_k"] == pytest.approx(se_point.qhat_k, rel=0.05)
    # overlaps fluctuate at O(D^-1/2) per run; test error within 3 SE + 5/D
    assert abs(r["m_k"] - se_point.q_k) < 2 / math.sqrt(D)
    assert abs(r["test_error"] - se_point.E_BO) <= 3 * r["test_error_se"] + 5 / D


def test_gamp_is_reproducible_and_validates():
    a = gamp_on_generated(2.0, 2, 2.0, 0.1, 100, 3, iterations=5, n_test=200, device="cpu")
    b = gamp_on_generated(2.0, 2, 2.0, 0.1, 100, 3, iterations=5, n_test=200, device="cpu")
    assert a["q_k"] == b["q_k"] and a["test_error"] == b["test_error"]
    with pytest.raises(ValueError):
        gamp(torch.zeros(10, 2), torch.zeros(10), 2.0, 0.1)
    with pytest.raises(ValueError):
        gamp(torch.zeros(10, 2, 5), torch.zeros(10), 2.0, 0.0)


def test_bayes_optimal_command_rows():
    fn = BAYES_OPTIMAL_COMMAND.function()
    params = BAYES_OPTIMAL_COMMAND.parse({"alpha": "4", "nu": "2", "L": "2", "points": "1024"})
    rows = fn(params)
    assert len(rows) == 1 and abs(rows[0]["E_BO"] - 0.247) < 0.005
    assert rows[0]["n_branches"] >= 1 and rows[0]["alpha"] == 4.0
    for k, v in rows[0].items():
        assert isinstance(v, (int, float, str, bool, type(None))), k


def test_commands_refuse_bad_input():
    fn = BAYES_OPTIMAL_COMMAND.function()
    with pytest.raises(InputError):
        fn(BAYES_OPTIMAL_COMMAND.parse({"model": "spiked", "nu": "inf"}))
    with pytest.raises(InputError):
        BAYES_OPTIMAL_COMMAND.parse({"alpha": "-1"})
    with pytest.raises(InputError):
        AMP_COMMAND.function()(AMP_COMMAND.parse({"L": "1,2"}))


def test_tiny_damping_is_not_convergence(capsys):
    """A damping of 1e-9 moves q by ~1e-9 per step: that is no fixed point. The
    residual is the undamped map's, so the run is reported unconverged, flagged and warned about."""
    torch.set_num_threads(1)
    r = gamp_on_generated(2.0, 2, 4.0, 0.1, 200, 3, n_test=1000, device="cpu", damping=1e-9, iterations=10)
    assert not r["converged"] and r["iterations"] == 10 and r["residual"] > 1e-3
    from attnlimits.verify import cli

    rc = cli.main(["slr", "amp", "--D", "100", "--damping", "1e-9", "--iterations", "5", "--n-test", "200"])
    out, err = capsys.readouterr()
    head, row = out.splitlines()[0].split(), out.splitlines()[1].split()
    assert rc == 0 and "converged" in head and row[head.index("converged")] == "no"
    assert [ln for ln in err.splitlines() if ln.startswith("warning:")][0].count("did not converge") == 1
