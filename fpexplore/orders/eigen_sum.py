"""TensorFlow ``tf.reduce_sum`` on the CPU: Eigen's full reduction (``TensorReduction.h``).

``InnerMostDimReducer`` splits a range longer than ``P*1024`` elements (``P`` = packet
lanes: 8 floats / 4 doubles in the x86 TensorFlow wheel) in two at a packet-aligned point and
returns ``(0 + left) + right``; a leaf sums four packet accumulators over strides of ``4P``,
then the remaining whole packets, then adds the scalar tail's sum to the packet's horizontal
sum. ``FullReducer`` on the thread pool asks Eigen's cost model how many threads pay off; with
``k > 1`` it reduces ``k`` shards of ``floor(n/k)`` elements and the remainder, and adds the
shard sums to the remainder's sum in order.

float16 sums in half packets of 8 lanes (every addition rounded to half) with leaves of
200 packets, and each leaf's horizontal sum taken in float32 and rounded to half once;
bfloat16 is cast to float32, summed exactly like float32 and rounded once at the end.
"""

from __future__ import annotations

import numpy as np

from ..errors import NotEmulated
from ._core import cast, gather, running_sum, split_tree, zero, zeros

# Per format summed: packet lanes P, Eigen's LeafSize<T>() (a leaf holds P * LeafSize
# elements), and the format a half packet is widened to for its horizontal sum.
FORMATS = {
    "float32": (8, 1024, None),
    "float64": (4, 1024, None),
    "float16": (8, 200, np.dtype(np.float32)),
}

# Eigen's TensorCostModel<ThreadPoolDevice>
STARTUP_CYCLES = 100_000
PER_THREAD_CYCLES = 100_000
# Cycles per element the cost model charges a tf.reduce_sum, measured against TensorFlow 2.21
# by the first size it splits over two threads: 108388 (float32), 54194 (float64), 131765
# (float16), 148100 (bfloat16). The first three fit 11/64 per byte loaded + 10/P per add;
# bfloat16 (cast to float32 first) fits 363/256. The reference's "258,462" for float32 (the
# textbook 11/64 per byte + 1/P, 0.8125 per element) does not hold for TensorFlow 2.21.
COST_PER_ELEMENT = {"float32": 1.9375, "float64": 3.875, "float16": 1.59375, "bfloat16": 1.41796875}


def cost_threads(n: int, dtype_name: str, max_threads: int) -> int:
    """``TensorCostModel::numThreads``: how many threads Eigen's full reducer uses for ``n``
    elements when the pool has ``max_threads``."""
    threads = (n * COST_PER_ELEMENT[dtype_name] - STARTUP_CYCLES) / PER_THREAD_CYCLES + 0.9
    return min(max_threads, max(1, int(threads)))


def _hsum(p, lanes: int, wide: np.dtype | None):
    """Eigen's ``predux``: fold the high half of the packet onto the low half, repeatedly.
    For half packets (``wide`` = float32) the lanes are widened, summed in float32 and the
    result rounded back to half once."""
    if wide is not None and p.dtype != object:
        return cast(_hsum(p.astype(wide), lanes, None), p.dtype)
    if lanes == 8:
        b = p[..., :4] + p[..., 4:]
        return (b[..., 0] + b[..., 2]) + (b[..., 1] + b[..., 3])
    if lanes == 4:
        b = p[..., :2] + p[..., 2:]
        return b[..., 0] + b[..., 1]
    raise NotEmulated(f"no horizontal sum for {lanes}-lane packets (4 or 8 lanes are emulated)")


def _leaf_rule(lanes: int, wide: np.dtype | None):
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
        return s + _hsum(p, lanes, wide)

    return leaf


def inner_most_dim_reduce(x: np.ndarray, first: int, count: int, dtype_name: str):
    """``InnerMostDimReducer<..., Vectorizable, UseTreeReduction>::reduce(first, count)``."""
    lanes, leaf_packets, wide = FORMATS[dtype_name]

    def split(firsts: np.ndarray, counts: np.ndarray) -> np.ndarray:
        point = lanes * -(-(firsts + -(-counts // 2)) // lanes)
        return np.minimum(point - firsts, counts)

    return split_tree(
        x,
        first,
        count,
        lanes * leaf_packets,
        split,
        _leaf_rule(lanes, wide),
        lambda a, b: (zeros(a, a.shape) + a) + b,
    )


def full_reduce(x: np.ndarray, threads: int, dtype_name: str, cost_name: str):
    """``FullReducer<..., ThreadPoolDevice>::run``: the cost model picks ``k`` threads; with
    ``k > 1``, ``k`` shards of ``floor(n/k)`` elements (float division) and the remainder
    are reduced separately and the shard sums added to the remainder's in order."""
    n = len(x)
    if n == 0:
        return zero(x)
    shards = cost_threads(n, cost_name, threads) if threads > 1 else 1
    if shards == 1:
        return inner_most_dim_reduce(x, 0, n, dtype_name)
    block = int(np.floor(np.float32(n) / np.float32(shards)))
    count = n // block if block > 0 else 0
    if count * block < n:
        total = inner_most_dim_reduce(x, count * block, n - count * block, dtype_name)
    else:
        total = zero(x)
    for i in range(count):
        total = total + inner_most_dim_reduce(x, i * block, block, dtype_name)
    return total


def tensorflow_sum(x: np.ndarray, threads: int = 1, dtype_name: str | None = None):
    """Emulate ``tf.reduce_sum`` of ``x`` with ``threads`` intra-op threads. float16 adds in
    half packets (every addition rounded to half); bfloat16 is cast to float32, summed as
    float32 and rounded once (TensorFlow's casting specialization of the sum)."""
    flat = x.reshape(-1)
    name = dtype_name or flat.dtype.name
    if name not in FORMATS and name != "bfloat16":
        raise NotEmulated(f"tf.reduce_sum of {name} values is not emulated.")
    if name == "bfloat16":
        wide = flat if flat.dtype == object else flat.astype(np.float32)
        return cast(full_reduce(wide, threads, "float32", name), flat.dtype)
    return full_reduce(flat, threads, name, name)
