"""Train vs eval lesson: claims hold across settings; the BN reference is certified."""

from __future__ import annotations

import numpy as np
import pytest

import fpexplore
from fpexplore.errors import InvalidParameter
from fpexplore.lessons._bn_reference import batchnorm_truth


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"batch": 2, "p": 0.1, "eps": 1e-3, "momentum": 0.5, "seed": 3, "mode": "eval"},
        {"batch": 64, "p": 0.0, "runs": 5},
        {"batch": 1, "p": 0.9, "eps": 1e-8, "momentum": 0.01, "seed": 11, "runs": 10},
    ],
)
def test_claims_hold(params):
    c = fpexplore.run("train_vs_eval", **params)
    failed = [k for k, v in c.claims.items() if not v.holds]
    assert not failed, [c.claims[k].text for k in failed]


def test_dropout_removed_is_eval_bit_for_bit_on_many_seeds():
    for seed in range(5):
        c = fpexplore.run("train_vs_eval", seed=seed, runs=3, p=0.3)
        assert c.holds("dropout_removed_equals_eval")
        ev = c.outcome("torch MLP with Dropout, eval()").value
        plain = c.outcome("torch MLP without Dropout, copied weights").value
        assert (ev.view(np.uint32) == plain.view(np.uint32)).all()


def test_bn_reference_is_certified_and_matches_float64():
    g = np.random.default_rng(0)
    x = g.standard_normal((5, 3)).astype(np.float32)
    gamma, beta = np.float32([1, 2, 0.5]), np.float32([0, 1, -1])
    t = batchnorm_truth(x, gamma, beta, 1e-5)
    assert t.digits > 20
    m, v = x.astype(np.float64).mean(0), x.astype(np.float64).var(0)
    ref64 = (x - m) / np.sqrt(v + 1e-5) * gamma + beta
    assert np.allclose(t.split()[0], ref64, rtol=1e-12, atol=1e-12)


def test_bad_parameters_are_named():
    with pytest.raises(InvalidParameter, match="'p'"):
        fpexplore.run("train_vs_eval", p=1.0)
    with pytest.raises(InvalidParameter, match="'mode'"):
        fpexplore.run("train_vs_eval", mode="test")
