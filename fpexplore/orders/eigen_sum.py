"""TensorFlow ``tf.reduce_sum`` on the CPU: Eigen's full reduction (``TensorReduction.h``).

``InnerMostDimReducer`` splits a range longer than ``P*1024`` elements (``P`` = packet
lanes: 8 floats / 4 doubles in the x86 TensorFlow wheel) in two at a packet-aligned point and
returns ``(0 + left) + right``; a leaf sums four packet accumulators over strides of ``4P``,
then the remaining whole packets, then adds the scalar tail's sum to the packet's horizontal
sum. ``FullReducer`` on the thread pool asks Eigen's cost model how many threads pay off; with
``k > 1`` it reduces ``k`` shards of ``floor(n/k)`` elements and the remainder, and adds the
shard sums to the remainder's sum in order.
"""

from __future__ import annotations

import numpy as np

from ..errors import NotEmulated
from ._core import gather, running_sum, split_tree, zero, zeros

PACKET = {"float32": 8, "float64": 4}
LEAF_PACKETS = 1024  # Eigen's LeafSize<T>() for float and double

# Eigen's TensorCostModel<ThreadPoolDevice>
STARTUP_CYCLES = 100_000
PER_THREAD_CYCLES = 100_000
# Cycles per element the cost model charges a tf.reduce_sum, measured against TensorFlow 2.21
# (the first size split over two threads is n = 108388 for float32 and 54194 for float64;
# the "11/64 per byte + 1/P" of the plain Eigen formula, 0.8125, would give 258462).
COST_PER_ELEMENT = {"float32": 1.9375, "float64": 3.875}


def cost_threads(n: int, dtype_name: str, max_threads: int) -> int:
    """``TensorCostModel::numThreads``: how many threads Eigen's full reducer uses for ``n``
    elements when the pool has ``max_threads``."""
    threads = (n * COST_PER_ELEMENT[dtype_name] - STARTUP_CYCLES) / PER_THREAD_CYCLES + 0.9
    return min(max_threads, max(1, int(threads)))


def _hsum(p, lanes: int):
    """Eigen's ``predux``: fold the high half of the packet onto the low half, repeatedly."""
    if lanes == 8:
        b = p[..., :4] + p[..., 4:]
        return (b[..., 0] + b[..., 2]) + (b[..., 1] + b[..., 3])
    if lanes == 4:
        b = p[..., :2] + p[..., 2:]
        return b[..., 0] + b[..., 1]
    raise NotEmulated(f"no horizontal sum for {lanes}-lane packets")


def _leaf_rule(lanes: int):
    def leaf(x: np.ndarray, firsts: np.ndarray, count: int) -> np.ndarray:
        rows = gather(x, firsts, count)
        m = len(firsts)
        p = zeros(x, (m, lanes))
        start = 0
        if count >= 4 * lanes:
            stop = count // (4 * lanes) * (4 * lanes)
            quads = rows[:, :stop].reshape(m, stop // (4 * lanes), 4, lanes)
            acc = running_sum(zeros(x, (m, 4, lanes)), np.moveaxis(quads, 1, 0))
            p = ((acc[:, 0] + acc[:, 1]) + acc[:, 2]) + acc[:, 3]
            start = stop
        if start <= count - lanes:
            stop = count // lanes * lanes
            packets = rows[:, start:stop].reshape(m, (stop - start) // lanes, lanes)
            p = running_sum(p, np.moveaxis(packets, 1, 0))
            start = stop
        s = running_sum(zeros(x, (m,)), rows[:, start:].T)
        return s + _hsum(p, lanes)

    return leaf


def inner_most_dim_reduce(x: np.ndarray, first: int, count: int, lanes: int):
    """``InnerMostDimReducer<..., Vectorizable, UseTreeReduction>::reduce(first, count)``."""

    def split(firsts: np.ndarray, counts: np.ndarray) -> np.ndarray:
        point = lanes * -(-(firsts + -(-counts // 2)) // lanes)
        return np.minimum(point - firsts, counts)

    return split_tree(
        x,
        first,
        count,
        lanes * LEAF_PACKETS,
        split,
        _leaf_rule(lanes),
        lambda a, b: (zeros(a, a.shape) + a) + b,
    )


def tensorflow_sum(x: np.ndarray, threads: int = 1, dtype_name: str | None = None):
    """Emulate ``tf.reduce_sum`` of ``x`` with ``threads`` intra-op threads."""
    name = dtype_name or x.dtype.name
    if name not in PACKET:
        raise NotEmulated(
            f"tf.reduce_sum of {name} is not emulated (only float32 and float64 are verified "
            "bit for bit against TensorFlow); use x.astype(np.float32) for the float32 order."
        )
    flat = x.reshape(-1)
    n = len(flat)
    lanes = PACKET[name]
    if n == 0:
        return zero(flat)
    shards = cost_threads(n, name, threads)
    if shards == 1:
        return inner_most_dim_reduce(flat, 0, n, lanes)
    block = int(np.floor(np.float32(n) / np.float32(shards)))
    count = n // block if block > 0 else 0
    if count * block < n:
        total = inner_most_dim_reduce(flat, count * block, n - count * block, lanes)
    else:
        total = zero(flat)
    for i in range(count):
        total = total + inner_most_dim_reduce(flat, i * block, block, lanes)
    return total
