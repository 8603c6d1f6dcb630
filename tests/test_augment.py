"""DJL's flip decisions against torchvision's (`rng_seeds.augment`): the claim follows the
streams, over several seeds."""

import numpy as np
import pytest

from fpexplore.lessons.rng_seeds import augment as au
from fpexplore.rng.java import JavaRandom

torch = pytest.importorskip("torch")
transforms = pytest.importorskip("torchvision.transforms")
SEEDS = (0, 7, 42)


def _emulated(seed, k):
    return JavaRandom(seed).floats(k)


@pytest.mark.parametrize("seed", SEEDS)
def test_torchvision_flips_follow_torch_rand(seed):
    got = au.torchvision_decisions(torch, transforms, seed, 16)
    torch.manual_seed(seed)
    assert got == [bool(torch.rand(1) < 0.5) for _ in range(16)]


def test_djl_rule_is_strictly_above_one_half():
    assert au.djl_decisions(np.array([0.5, 0.50000006, 0.0, 0.99], np.float32)) == [
        False,
        True,
        False,
        True,
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_streams_differ_and_equal_streams_flip_the_claim(seed):
    claims, f = au.run(torch, seed, _emulated)
    assert claims["djl_flips_differ"].holds is True
    same = au.Flips(f.seeds, f.djl, dict(f.djl))
    assert au.decide_claims(same)["djl_flips_differ"].holds is False
    assert all(same.agree(s) == au.IMAGES for s in f.seeds)


def test_a_failing_jvm_is_not_checked():
    from fpexplore.errors import WorkerError

    def broken(seed, k):
        raise WorkerError("the JVM worker died")

    claims, f = au.run(torch, 0, broken)
    assert f is None and claims["djl_flips_differ"].holds is None
