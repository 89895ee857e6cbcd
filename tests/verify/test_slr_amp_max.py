"""GAMP for max-SLR (attnlimits.verify.slr.amp, max part) and the bayes-optimal command with --model max."""
import math

import pytest
import torch

from attnlimits.symbolic.result import InputError
from attnlimits.verify.slr.amp import bo_predict_max, gamp_max, gamp_on_generated_max
from attnlimits.verify.slr.bayes_optimal import BAYES_OPTIMAL_COMMAND, bo_state_evolution


@pytest.fixture(scope="module")
def se_inf():
    return bo_state_evolution("max", math.inf, 2, [4.0], 0.1, points=2 ** 12, test_points=2 ** 13,
                              starts=("uninformed",))[0]


def test_gamp_max_reaches_state_evolution(se_inf):
    """nu = inf, L = 2, alpha = 4, D = 400: Nishimori diagnostics and test error within 3 SE + 5/D."""
    torch.set_num_threads(1)
    D = 400
    r = gamp_on_generated_max(math.inf, 2, 4.0, 0.1, D, 7, n_test=5000, device="cpu", iterations=150)
    assert abs((1 - r["V_k"]) - se_inf.q_k) < 0.02
    assert abs((1 - r["V_v"]) - se_inf.q_v) < 0.01
    assert r["Ahat_k"] == pytest.approx(se_inf.qhat_k, rel=0.1)
    assert abs(r["m_k"] - se_inf.q_k) < 2 / math.sqrt(D)
    assert abs(r["test_error"] - se_inf.E_BO) <= 3 * r["test_error_se"] + 5 / D


def test_bo_predictor_weights_sum_to_one_and_validate():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(50, 2, 20, generator=g, dtype=torch.float64)
    k = torch.randn(20, generator=g, dtype=torch.float64)
    ones = torch.ones(20, dtype=torch.float64)
    # with v such that every z_eps is the same number c, the prediction is c (weights sum to 1)
    Xc = X.clone()
    Xc[:, :, :] = Xc[:, :1, :]
    pred = bo_predict_max(Xc, k, ones, 0.3, 2.0, inner_points=12)
    z = (Xc @ ones / math.sqrt(20))[:, 0]
    assert torch.allclose(pred, z, atol=1e-9)
    with pytest.raises(ValueError):
        gamp_max(torch.zeros(10, 2), torch.zeros(10), math.inf, 0.1)
    with pytest.raises(ValueError):
        gamp_max(torch.zeros(10, 2, 5), torch.zeros(10), math.inf, 0.0)


def test_bayes_optimal_command_max():
    fn = BAYES_OPTIMAL_COMMAND.function()
    params = BAYES_OPTIMAL_COMMAND.parse({"model": "max", "nu": "inf", "alpha": "4", "L": "2", "points": "1024"})
    rows = fn(params)
    assert len(rows) == 1 and rows[0]["model"] == "max"
    # independent closed form at nu = inf, L = 2: E_BO = 1 - q_v (1/2 + arcsin(q_k)/pi)
    r = rows[0]
    closed = 1 - r["q_v"] * (0.5 + math.asin(r["q_k"]) / math.pi)
    assert abs(r["E_BO"] - closed) <= 4 * r["E_BO_error"]
    for k, v in r.items():
        assert isinstance(v, (int, float, str, bool, type(None))), k
    with pytest.raises(InputError):
        fn(BAYES_OPTIMAL_COMMAND.parse({"model": "spiked", "nu": "inf"}))
