"""Building blocks shared by the emulators; each works on float arrays and on object arrays
of :class:`~fpexplore.orders._symbolic.Node` alike (elementwise ``+``, indexing, reshaping)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._symbolic import NEG_ZERO, ZERO


def is_symbolic(x: np.ndarray) -> bool:
    """True for an object array of nodes."""
    return x.dtype == object


def zeros(like: np.ndarray, shape: tuple[int, ...] = (), negative: bool = False) -> np.ndarray:
    """An array of +0.0 (or -0.0) with the dtype of ``like`` (a node constant if symbolic)."""
    if is_symbolic(like):
        out = np.empty(shape, dtype=object)
        out[...] = NEG_ZERO if negative else ZERO
        return out
    return np.full(shape, -0.0 if negative else 0.0, dtype=like.dtype)


def zero(like: np.ndarray, negative: bool = False):
    """A scalar +0.0 (or -0.0) of the dtype of ``like``."""
    return zeros(like, (), negative)[()]


def running_sum(acc, rows):
    """``acc + rows[0] + rows[1] + ...`` left to right along axis 0 (a short Python loop over
    the rows, each addition vectorized over the remaining axes)."""
    for row in rows:
        acc = acc + row
    return acc


def cast(value, dtype: np.dtype):
    """Round a value (scalar or array) to ``dtype``; nodes pass through unchanged."""
    if not isinstance(value, np.ndarray | np.generic) or value.dtype == object:
        return value
    return np.asarray(value).astype(dtype)[()]


def gather(x: np.ndarray, starts: np.ndarray, length: int) -> np.ndarray:
    """Rows ``x[s : s + length]`` for every start ``s``: shape ``(len(starts), length)``."""
    return x[starts[:, None] + np.arange(length)]


SplitRule = Callable[[np.ndarray, np.ndarray], np.ndarray]
LeafRule = Callable[[np.ndarray, np.ndarray, int], np.ndarray]
CombineRule = Callable[[np.ndarray, np.ndarray], np.ndarray]


def split_tree(
    x: np.ndarray,
    first: int,
    count: int,
    leaf_size: int,
    split: SplitRule,
    leaf: LeafRule,
    combine: CombineRule,
):
    """Evaluate a recursive halving reduction of ``x[first : first + count]`` level by level.

    A range longer than ``leaf_size`` splits into a left part of ``split(firsts, counts)``
    elements and the rest; the leaves are reduced by ``leaf(x, firsts, count)`` (vectorized
    over all leaves of one length) and the two halves of each range by ``combine(l, r)``.
    """
    levels = []
    firsts, counts = np.array([first], dtype=np.int64), np.array([count], dtype=np.int64)
    while len(firsts):
        is_leaf = counts <= leaf_size
        levels.append((firsts, counts, is_leaf))
        inner_first, inner_count = firsts[~is_leaf], counts[~is_leaf]
        left = split(inner_first, inner_count)
        firsts = np.stack([inner_first, inner_first + left], axis=1).ravel()
        counts = np.stack([left, inner_count - left], axis=1).ravel()
    below = None
    for firsts, counts, is_leaf in reversed(levels):
        values = np.empty(len(firsts), dtype=x.dtype)
        where = np.flatnonzero(is_leaf)
        for length in np.unique(counts[where]):
            chosen = where[counts[where] == length]
            values[chosen] = leaf(x, firsts[chosen], int(length))
        if below is not None:
            values[~is_leaf] = combine(below[0::2], below[1::2])
        below = values
    return below[0]
