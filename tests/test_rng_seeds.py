"""The RNG lesson: every claim holds on several seeds; missing parts degrade with a reason."""

from __future__ import annotations

import numpy as np
import pytest

import fpexplore
from fpexplore.errors import InvalidParameter
from fpexplore.lessons import rng_seeds


@pytest.mark.parametrize("seed", [0, 42, 123_456_789])
def test_claims_hold_without_heavy_parts(seed):
    c = fpexplore.run("rng_seeds", seed=seed, n=300, tensorflow=False, java=False, weights=False)
    failed = [k for k, v in c.claims.items() if not v.holds]
    assert not failed, failed
    assert c.data["matches"] == {"rand32": True, "rand64": True, "randn32": True, "randn64": True}
    assert c.data["relation"]["related"] is True


@pytest.mark.slow
def test_full_lesson_claims_hold():
    c = fpexplore.run("rng_seeds", seed=1234, n=100)
    failed = [k for k, v in c.claims.items() if not v.holds]
    assert not failed, failed
    for key in ("tf_stateless_repeats", "transfer_agrees", "own_init_outputs_disagree"):
        assert key in c.claims
    assert c.truth is not None and c.truth.is_exact


def test_cuda_outcome_is_live_recorded_or_missing_with_fix():
    c = fpexplore.run("rng_seeds", seed=42, tensorflow=False, java=False, weights=False)
    cuda = c.outcome("torch CUDA")
    if not cuda.ran:
        assert "record-gpu" in cuda.unavailable or "seeds" in cuda.unavailable
    else:
        assert cuda.kind in ("recorded", "framework")
        assert "cuda_differs_from_cpu" in c.claims and c.holds("cuda_differs_from_cpu")


def test_relation_of_unrelated_streams():
    c = fpexplore.run(
        "rng_seeds",
        seed=5,
        a="torch CPU",
        b="Python random",
        tensorflow=False,
        java=False,
        weights=False,
    )
    assert c.data["relation"]["related"] is False


def test_bits_of_formats_fields():
    assert rng_seeds.bits_of(np.float32([1.0]))[0] == "0 01111111 " + "0" * 23
    assert rng_seeds.bits_of(np.float64([-2.0]))[0] == "1 10000000000 " + "0" * 52


def test_bad_parameters_are_named():
    with pytest.raises(InvalidParameter, match="'seed'"):
        fpexplore.run("rng_seeds", seed=-1)
    with pytest.raises(InvalidParameter, match="'a'"):
        fpexplore.run("rng_seeds", a="matlab")
