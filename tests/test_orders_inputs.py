"""Random arrays and sizes shared by the order-emulator tests (tests/test_orders*.py).

Every test session draws arrays never seen before: ``sample`` mixes a fresh run seed into
each array's seed. A failure message names it (``RERUN``); set ``FPEXPLORE_TEST_SEED`` to it
to draw the very same arrays again.
"""

from __future__ import annotations

import os
import secrets

import numpy as np
import pytest

RUN_SEED = int(os.environ.get("FPEXPLORE_TEST_SEED") or secrets.randbits(32))
RERUN = f"(arrays of this run: FPEXPLORE_TEST_SEED={RUN_SEED})"

DISTRIBUTIONS = ("uniform", "normal", "loguniform", "alternating", "cancelling")
# log10 of the widest magnitude per format: large enough to make rounding errors, small
# enough that sums of 2*10^6 terms stay finite.
SPREAD = {"float16": 1.0, "bfloat16": 10.0, "float32": 15.0, "float64": 100.0}

# Sizes around every boundary of the emulated algorithms: numpy's 8 accumulators and blocks
# of 128; torch's vectors (8 floats / 4 doubles, 16 halves), 4 streams, cascade steps of 16
# rows and its 32768-element thread grain; Eigen's packets, 8192-element leaves (1600 for
# half) and the sizes from which TensorFlow splits a sum over 2 threads.
BOUNDARY_SIZES = sorted(
    set(range(0, 41))
    | {c + d for c in (64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384) for d in (-1, 0, 1)}
    | {127 + 8, 1599, 1600, 1601, 3200, 3201, 8200, 16391, 24577}
    | {c + d for c in (32768, 65536, 98304, 131072) for d in (-1, 0, 1)}
)
# The first size TensorFlow sums over two threads, per format (measured; see eigen_sum.py).
TF_TWO_THREADS = {"float32": 108388, "float64": 54194, "float16": 131765, "bfloat16": 148100}


def tf_threshold_sizes(dtype: str) -> list[int]:
    first = TF_TWO_THREADS[dtype]
    return [first - 2, first - 1, first, first + 1, first + 2]


def numpy_dtype(dtype: str) -> np.dtype:
    if dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


def sample(distribution: str, n: int, dtype: str, seed: int) -> np.ndarray:
    """``n`` values of ``distribution`` rounded to ``dtype``, reproducible from ``seed`` and
    the session's `RUN_SEED`."""
    rng = np.random.default_rng([RUN_SEED, seed, n, DISTRIBUTIONS.index(distribution)])
    spread = SPREAD[dtype]
    if distribution == "uniform":
        x = rng.random(n)
    elif distribution == "normal":
        x = rng.standard_normal(n)
    elif distribution == "loguniform":
        x = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-spread, spread, n)
    elif distribution == "alternating":
        x = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) * rng.uniform(1.0, 2.0, n)
    elif distribution == "cancelling":
        # pairs +h, -h of wide magnitudes plus a few small values, shuffled: the exact sum
        # is small, so every rounding of the order shows in the result
        h = rng.choice([-1.0, 1.0], n // 2) * 10.0 ** rng.uniform(-spread, spread, n // 2)
        x = rng.permutation(np.concatenate([h, -h, rng.standard_normal(n % 2)]))
    else:
        raise ValueError(distribution)
    if dtype == "float16":
        x = x / max(1.0, n / 1000.0)  # keep half sums finite
    return x.astype(numpy_dtype(dtype))


def same_bits(a: np.generic, b: np.generic) -> bool:
    return np.asarray(a).dtype == np.asarray(b).dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_samples_are_finite_and_reproducible(distribution, dtype):
    x = sample(distribution, 10_001, dtype, seed=3)
    assert x.dtype == np.dtype(dtype) and x.shape == (10_001,)
    assert np.isfinite(x).all()
    assert np.isfinite(x.astype(np.float64).sum())
    assert same_bits(np.sum(x), np.sum(sample(distribution, 10_001, dtype, seed=3)))
    assert not np.array_equal(x, sample(distribution, 10_001, dtype, seed=4))


def test_boundary_sizes_cover_the_block_edges():
    for size in (7, 8, 9, 127, 128, 129, 255, 256, 257, 8191, 8192, 8193, 32767, 32768, 32769):
        assert size in BOUNDARY_SIZES
