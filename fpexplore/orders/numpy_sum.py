"""NumPy ``np.sum`` on the CPU: pairwise summation in blocks of 128 with 8 accumulators.

Source: ``numpy/_core/src/umath/loops_utils.h.src`` (``pairwise_sum``). A reduction hands the
inner loop one chunk at a time and adds each chunk's pairwise sum to the output, which starts
at +0.0. Emulated here: the whole array as ONE chunk, which is what ``np.sum(x)`` does for a
1-D array (any stride) or a C- or Fortran-contiguous N-d array without a dtype cast.
float16 is summed in float32 and rounded back to float16 once per chunk. ``ml_dtypes``'
bfloat16 has no pairwise loop: NumPy adds it one element at a time in bfloat16 from +0.0.
"""

from __future__ import annotations

import numpy as np

from ..errors import NotEmulated
from ._core import gather, running_sum, split_tree, zero

BLOCK = 128
UNROLL = 8


def _split(firsts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    half = counts // 2
    return half - half % UNROLL


def _leaf(x: np.ndarray, firsts: np.ndarray, count: int) -> np.ndarray:
    rows = gather(x, firsts, count)
    if count < UNROLL:
        return running_sum(zero(x, negative=True), rows.T)
    full = count - count % UNROLL
    r = rows[:, :UNROLL]
    for i in range(UNROLL, full, UNROLL):
        r = r + rows[:, i : i + UNROLL]
    res = ((r[:, 0] + r[:, 1]) + (r[:, 2] + r[:, 3])) + ((r[:, 4] + r[:, 5]) + (r[:, 6] + r[:, 7]))
    return running_sum(res, rows[:, full:].T)


def pairwise_sum(x: np.ndarray):
    """NumPy's ``pairwise_sum`` of a 1-D array (the value of one inner-loop call)."""
    return split_tree(x, 0, len(x), BLOCK, _split, _leaf, lambda a, b: a + b)


def memory_order(x: np.ndarray) -> np.ndarray:
    """The elements in the order ``np.sum(x)`` visits them when it is one chunk, or raise
    :class:`NotEmulated` for the layouts where NumPy's iterator buffers in several chunks."""
    if x.ndim <= 1 or x.flags.c_contiguous:
        return x.reshape(-1)
    if x.flags.f_contiguous:
        return x.ravel(order="K")
    raise NotEmulated(
        f"np.sum of a non-contiguous {x.ndim}-d array (shape {x.shape}, strides {x.strides}) "
        "is buffered by NumPy's iterator in chunks of whole rows; only a 1-D array (any stride) "
        "or a C/Fortran-contiguous array is emulated. Pass np.ascontiguousarray(x) to emulate "
        "np.sum of the contiguous copy."
    )


def numpy_sum(x: np.ndarray, dtype_name: str | None = None):
    """Emulate ``np.sum(x)`` (axis=None, no dtype argument) bit for bit; ``dtype_name`` says
    which format an object array of nodes stands for."""
    flat = memory_order(x)
    name = dtype_name or flat.dtype.name
    if name == "bfloat16":
        # ml_dtypes registers a plain elementwise add: the reduction is sequential from +0.0.
        return zero(flat) + np.cumsum(flat)[-1] if len(flat) else zero(flat)
    if name == "float16" and flat.dtype != object:
        # HALF_add: io1 = float(out) + pairwise_sum in float32; out = half(io1), once per chunk.
        wide = flat.astype(np.float32)
        return np.float16(zero(wide) + pairwise_sum(wide))
    return zero(flat) + pairwise_sum(flat)
