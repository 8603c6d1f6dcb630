"""PyTorch ``torch.sum`` on the CPU: the cascade sum of ``aten/src/ATen/native/cpu/SumKernel.cpp``.

A contiguous 1-D (or any contiguous) tensor is summed by ``vectorized_inner_sum``: the first
``W*floor(n/W)`` elements are rows of ``W`` lanes (``W`` = 8 floats / 4 doubles: the AVX2
kernel), reduced by ``row_sum`` (4 interleaved streams of rows, each summed by
``multi_row_sum``'s 4-level cascade), then a scalar accumulator from 0 takes the scalar tail
and the ``W`` lanes in order. With ``T > 1`` threads and ``n >= 32768`` the range is split
into ``min(T, ceil(n/32768))`` chunks whose sums go to a buffer of ``T`` slots, which is summed
again. float16/bfloat16 load 2W values at a time, add the two halves in float32 and accumulate
in float32; every sum lands in the 16-bit output (or buffer slot) with one rounding.
"""

from __future__ import annotations

import numpy as np

from ._core import cast, running_sum, zero, zeros

GRAIN_SIZE = 32768
ILP = 4
LEVELS = 4
WIDTH = {"float32": 8, "float64": 4, "float16": 8, "bfloat16": 8}
REDUCED = ("float16", "bfloat16")


def ceil_log2(x: int) -> int:
    """``c10::utils::CeilLog2``: 0 for 1, else the bit length of ``x - 1``."""
    return 0 if x <= 1 else int(x - 1).bit_length()


def _groups(values: np.ndarray, step: int):
    """Sums of consecutive full groups of ``step`` values (each from +0.0, left to right), and
    the running sum (from +0.0) of the incomplete group left at the end."""
    full = len(values) // step
    grouped = values[: full * step].reshape(full, step, *values.shape[1:])
    sums = running_sum(zeros(values, (full, *values.shape[1:])), np.moveaxis(grouped, 1, 0))
    rest = running_sum(zeros(values, values.shape[1:]), values[full * step :])
    return sums, rest


def multi_row_sum(rows: np.ndarray) -> np.ndarray:
    """``multi_row_sum``: the column sums of ``rows`` (shape ``(size, ...)``) by the cascade of
    4 accumulator levels, each collecting ``2**p`` values of the level below."""
    size = rows.shape[0]
    power = max(4, ceil_log2(size) // LEVELS)
    step = 1 << power
    blocks, acc0 = _groups(rows, step)  # acc[0]: leftover rows
    level1, acc1 = _groups(blocks, step)
    level2, acc2 = _groups(level1, step)
    acc3 = running_sum(zeros(rows, rows.shape[1:]), level2)
    return ((acc0 + acc1) + acc2) + acc3


def row_sum(rows: np.ndarray) -> np.ndarray:
    """``row_sum``: 4 interleaved streams of ``rows`` summed by :func:`multi_row_sum`, the
    leftover rows added to stream 0, then ``s0 + s1 + s2 + s3``."""
    size = rows.shape[0]
    size_ilp = size // ILP
    streams = multi_row_sum(rows[: size_ilp * ILP].reshape(size_ilp, ILP, *rows.shape[1:]))
    first = running_sum(streams[0], rows[size_ilp * ILP :])
    return ((first + streams[1]) + streams[2]) + streams[3]


def inner_sum(x: np.ndarray, dtype_name: str):
    """``vectorized_inner_sum`` (or the scalar ``row_sum`` when fewer than one vector) of a
    contiguous 1-D array already converted to the accumulation type."""
    width = WIDTH[dtype_name]
    load = 2 * width if dtype_name in REDUCED else width  # elements per vector load
    n = len(x)
    if n < load:
        return row_sum(x)
    vectors = n // load
    rows = x[: vectors * load].reshape(vectors, load)
    if load != width:  # InnerSumCastLoadPolicy: load_to_float gives two halves, added
        rows = rows[:, :width] + rows[:, width:]
    lanes = row_sum(rows)
    acc = running_sum(zero(x), x[vectors * load :])
    return running_sum(acc, lanes)


def torch_sum(x: np.ndarray, threads: int = 1, dtype_name: str | None = None):
    """Emulate ``torch.sum`` of a contiguous CPU tensor holding ``x`` with
    ``torch.set_num_threads(threads)``."""
    flat = x.reshape(-1)
    name = dtype_name or flat.dtype.name
    out_dtype = flat.dtype
    acc_x = flat.astype(np.float32) if name in REDUCED and flat.dtype != object else flat
    n = len(flat)
    if n < GRAIN_SIZE or threads == 1:
        return cast(zero(acc_x) + inner_sum(acc_x, name), out_dtype)
    chunks = min(threads, -(-n // GRAIN_SIZE))
    size = -(-n // chunks)
    slots = zeros(flat, (threads,))  # the buffer, in the output dtype
    for t in range(chunks):
        part = acc_x[t * size : (t + 1) * size]
        slots[t] = cast(zero(acc_x) + inner_sum(part, name), out_dtype)
    wide = slots.astype(np.float32) if name in REDUCED and flat.dtype != object else slots
    return cast(zero(acc_x) + inner_sum(wide, name), out_dtype)
