"""The torch order emulator against the real torch.sum (CPU) with 1, 2 and 3 threads."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_orders_inputs import (
    BOUNDARY_SIZES,
    DISTRIBUTIONS,
    RERUN,
    numpy_dtype,
    same_bits,
    sample,
)

from fpexplore import orders

GRAIN_SIZES = [c + d for c in (32768, 65536, 98304) for d in (-1, 0, 1)]


@pytest.fixture
def threads():
    """Set torch's thread count inside a test and restore it afterwards."""
    before = torch.get_num_threads()
    yield torch.set_num_threads
    torch.set_num_threads(before)


def torch_sum(x: np.ndarray) -> np.generic:
    if x.dtype.name == "bfloat16":
        tensor = torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
        return torch.sum(tensor).view(torch.int16).numpy().view(x.dtype)[()]
    return torch.sum(torch.from_numpy(x)).numpy()[()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_torch_bit_exact_one_and_two_threads(distribution, dtype, threads):
    for count in (1, 2):
        threads(count)
        for n in BOUNDARY_SIZES:
            for seed in range(4) if n < 4096 else range(2):
                x = sample(distribution, n, dtype, seed)
                got = orders.emulate(x, "torch", threads=count)
                assert same_bits(got, torch_sum(x)), (count, distribution, n, seed, RERUN)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_torch_16_bit_formats(dtype, threads):
    for count in (1, 2):
        threads(count)
        for n in [*range(0, 40), 255, 256, 257, 4097, *GRAIN_SIZES[:6]]:
            for distribution in ("normal", "cancelling"):
                for seed in (3, 4):
                    x = sample(distribution, n, dtype, seed)
                    got = orders.emulate(x, "torch", threads=count)
                    assert got.dtype == numpy_dtype(dtype)
                    assert same_bits(got, torch_sum(x)), (count, distribution, n, seed, RERUN)


def test_torch_three_threads_and_thread_dependence(threads):
    differ = 0
    for n in (*GRAIN_SIZES, 100_000, 200_001):
        x = sample("normal", n, "float32", 4)
        threads(3)
        three = orders.emulate(x, "torch", threads=3)
        assert same_bits(three, torch_sum(x)), (n, RERUN)
        threads(1)
        differ += orders.emulate(x, "torch", threads=1) != three
    assert differ > 0  # the thread count changes the bits


def test_torch_shapes_are_summed_as_contiguous(threads):
    threads(1)
    matrix = sample("normal", 300 * 701, "float32", 6).reshape(300, 701)
    assert same_bits(orders.emulate(matrix, "torch"), torch_sum(matrix)), RERUN
    transposed = matrix.T  # emulate sums the C-order copy, like torch.sum(torch.tensor(x))
    expected = torch.sum(torch.tensor(np.ascontiguousarray(transposed))).numpy()[()]
    assert same_bits(orders.emulate(transposed, "torch"), expected)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_torch_large_sizes(dtype, threads):
    rng = np.random.default_rng(20)
    sizes = [999_999, 1_000_000, 1_048_577, 2_000_000, *rng.integers(100_000, 2_000_000, 4)]
    for count in (1, 2):
        threads(count)
        for n in sizes:
            for distribution in ("loguniform", "cancelling"):
                x = sample(distribution, int(n), dtype, 21)
                got = orders.emulate(x, "torch", threads=count)
                assert same_bits(got, torch_sum(x)), (n, count, RERUN)
