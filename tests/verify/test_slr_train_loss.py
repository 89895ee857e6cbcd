"""ERM of SLR with a per-sample loss and separate ridges (attnlimits.verify.slr.train, docs/slr.md §10.3a).

Independent expectations: the textbook Huber loss written here with ``torch.where`` (not the package's
expression), autograd of that hand-written objective for the gradient, and the square loss's own training for a
Huber loss whose kink no residual reaches.
"""
import math

import pytest
import torch

from attnlimits.symbolic.result import InputError
from attnlimits.verify.slr import train as T
from attnlimits.verify.slr.erm_solver import StackedObjective


def _problem(loss, lam_v=None, S=2, n=30, L=2, D=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(S, n, L, D, generator=g, dtype=torch.float64)
    y = 2.0 * torch.randn(S, n, generator=g, dtype=torch.float64)  # residuals beyond the kink
    return StackedObjective("softmax", D, 0.3, [(X, y)], False, None, torch.float64, torch.device("cpu"), n,
                      loss=T.resolve_loss(loss), lam_v=lam_v), X, y


def _by_hand(theta, X, y, D, delta, lam_k, lam_v):
    k, v = theta[:, :D], theta[:, D:]
    chi = torch.einsum("snld,sd->snl", X, k) / math.sqrt(D)
    z = torch.einsum("snld,sd->snl", X, v) / math.sqrt(D)
    r = y - (torch.softmax(chi, dim=-1) * z).sum(-1)
    a = r.abs()
    rho = torch.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))
    return rho.sum(1) + 0.5 * lam_k * (k * k).sum(1) + 0.5 * lam_v * (v * v).sum(1)


def test_huber_objective_and_gradient_with_two_ridges_match_a_hand_written_one():
    prob, X, y = _problem("huber:1", lam_v=0.7)
    th = torch.randn(2, 24, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    val, grad = prob.value_and_grad(th)
    t2 = th.clone().requires_grad_(True)
    want = _by_hand(t2, X, y, 12, 1.0, 0.3, 0.7)
    (g2,) = torch.autograd.grad(want.sum(), t2)
    assert torch.allclose(val, want.detach(), rtol=1e-13)
    assert torch.allclose(grad, g2, rtol=1e-11, atol=1e-12)
    # train_mse stays the mean squared residual whatever the loss
    r2 = 2 * prob._data_term(th, X, y, squared=True) / prob.N
    assert torch.allclose(prob.train_mse(th), r2)


def test_a_huber_kink_beyond_every_residual_trains_exactly_as_the_square_loss():
    common = dict(model="spiked", nu=2.0, L=2, alpha=2.0, lam=0.1, D=40, seeds=2, n_test=500, overlap_points=2 ** 10)
    a = T.train_erm("softmax", **common)
    b = T.train_erm("softmax", loss="huber:1000", **common)
    assert b.settings["loss"] == "huber:1000" and "loss" not in a.settings
    for ra, rb in zip(a.seeds, b.seeds):
        assert rb["objective"] == pytest.approx(ra["objective"], rel=1e-12)
        assert rb["E_test"] == pytest.approx(ra["E_test"], rel=1e-10)


def test_two_equal_ridges_are_the_one_ridge():
    common = dict(model="spiked", nu=2.0, L=2, alpha=2.0, D=30, seeds=1, n_test=300, overlap_points=2 ** 10)
    a = T.train_erm("softmax", lam=0.2, **common)
    b = T.train_erm("softmax", lam=0.2, lam_v=0.2, **common)
    assert b.seeds[0]["objective"] == pytest.approx(a.seeds[0]["objective"], rel=1e-12)
    assert b.settings["lam_k"] == 0.2 and b.settings["lam_v"] == 0.2


@pytest.mark.parametrize("kw, msg", [({"loss": "huber:0"}, "> 0"), ({"lam_v": -1.0}, "--lam-v"),
                                     ({"loss": "q + 1"}, "unknown name")])
def test_bad_loss_or_ridge_refused(kw, msg):
    with pytest.raises(InputError, match=msg):
        T.train_erm("softmax", model="spiked", nu=2.0, L=2, alpha=2.0, lam=0.1, D=10, seeds=1, **kw)
