"""Tolerance advice: a-priori bounds, measured errors inside them, usable rtol/atol."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fpexplore import backends, tolerance
from fpexplore.errors import InvalidParameter


def test_gamma():
    u = 2.0**-24
    assert tolerance.unit_roundoff("float32") == u
    assert tolerance.gamma(10, "float32") == pytest.approx(10 * u / (1 - 10 * u), rel=1e-15)
    assert tolerance.gamma(256, "bfloat16") == math.inf  # n*u >= 1: no bound
    assert tolerance.accumulation_format("bfloat16") == "binary32"
    assert tolerance.probabilistic_gamma(10**6) < tolerance.gamma(10**6)


@pytest.mark.parametrize(
    ("op", "fmt", "size"),
    [
        ("matmul", "float32", 512),
        ("conv2d", "bfloat16", 144),
        ("softmax", "float16", 64),
        ("layer_norm", "float32", 64),
        ("gelu", "float32", 256),
        ("sum", "float64", 1000),
    ],
)
def test_measured_error_inside_bound(op, fmt, size):
    backends.load("torch")
    a = tolerance.advise(op, fmt, size)
    assert a.within_bound, a.text()
    assert a.measured_max_abs <= a.bound_max_abs
    assert a.rtol > 0 and a.atol >= 0 and math.isfinite(a.atol)
    assert a.rtol_probabilistic <= a.rtol
    assert "rtol=" in a.text()


def test_advice_passes_two_real_implementations():
    """numpy's and torch's float32 matmuls (different BLAS, different order) pass
    assert_close with the advised tolerances, on the advice's own data."""
    torch = backends.load("torch")
    a = tolerance.advise("matmul", "float32", 512)
    data = tolerance.sample("matmul", 512, 0)
    x, y = (v.astype(np.float32) for v in (data["a"], data["b"]))
    n = x @ y
    t = (torch.from_numpy(x) @ torch.from_numpy(y)).numpy()
    torch.testing.assert_close(torch.from_numpy(t), torch.from_numpy(n), **a.assert_close_kwargs())
    np.testing.assert_allclose(t, n, **a.assert_close_kwargs())


def test_bad_input():
    with pytest.raises(InvalidParameter, match="'op'"):
        tolerance.advise("fft")
    with pytest.raises(InvalidParameter, match="'size'"):
        tolerance.advise("conv2d", size=10)
    with pytest.raises(InvalidParameter, match="'fmt'"):
        tolerance.advise("sum", fmt="int8")
