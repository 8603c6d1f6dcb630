"""Textbook summation orders, each in the input's own format unless said otherwise."""

from __future__ import annotations

import numpy as np

from ..errors import NotEmulated
from ._core import gather, is_symbolic, split_tree, zero, zeros


def sequential(x: np.ndarray):
    """``((x0 + x1) + x2) + ...`` left to right (``np.cumsum`` is exactly this running sum);
    +0.0 for an empty array."""
    if len(x) == 0:
        return zero(x)
    return np.cumsum(x)[-1]


def java_loop(x: np.ndarray):
    """A Java loop ``float s = 0; for (float v : x) s += v;`` (``double`` for float64):
    strictly sequential from +0.0 (Java 17 floating point is strict IEEE)."""
    if not is_symbolic(x) and x.dtype.name not in ("float32", "float64"):
        raise NotEmulated(
            f"Java has no {x.dtype.name} type: a Java loop sums float or double. Convert the "
            "array with x.astype(np.float32) to emulate a float loop over the widened values."
        )
    return zero(x) + sequential(x)


def reversed_order(x: np.ndarray):
    """Sequential from the last element to the first."""
    return sequential(x[::-1])


def magnitude_order(key: np.ndarray, descending: bool = False) -> np.ndarray:
    """Indices sorting ``key`` by magnitude; equal magnitudes keep their original order."""
    magnitude = -np.abs(key) if descending else np.abs(key)
    order = np.argsort(magnitude)  # the fast (SIMD) sort; it is stable when no two tie
    ranked = magnitude[order]
    if np.any(ranked[1:] == ranked[:-1]):
        order = np.argsort(magnitude, kind="stable")
    return order


def sorted_ascending(x: np.ndarray, key: np.ndarray):
    """Sequential by increasing magnitude of ``key`` (`magnitude_order`)."""
    return sequential(x[magnitude_order(key)])


def sorted_descending(x: np.ndarray, key: np.ndarray):
    """Sequential by decreasing magnitude of ``key`` (`magnitude_order`)."""
    return sequential(x[magnitude_order(key, descending=True)])


def _pairwise_leaf(x: np.ndarray, firsts: np.ndarray, count: int) -> np.ndarray:
    if count == 0:
        return zeros(x, (len(firsts),))
    return gather(x, firsts, 1)[:, 0]


def pairwise(x: np.ndarray):
    """Textbook recursive pairwise sum: ``pw(x[:n//2]) + pw(x[n//2:])`` down to single
    elements (+0.0 for an empty array)."""
    return split_tree(x, 0, len(x), 1, lambda f, c: c // 2, _pairwise_leaf, lambda a, b: a + b)


def _no_tree(name: str, x: np.ndarray) -> None:
    if is_symbolic(x):
        raise NotEmulated(
            f"The {name!r} order subtracts as well as adds (it carries a compensation term), "
            "so it has no tree of additions to draw."
        )


def _scalars(x: np.ndarray):
    """The elements as scalars whose arithmetic rounds like the array's format: Python floats
    for float64 (the same IEEE double operations, faster), numpy scalars otherwise."""
    if x.dtype == np.float64:
        return x.tolist(), float
    return x, x.dtype.type


def kahan(x: np.ndarray):
    """Kahan's compensated sum in the input format (a Python loop: about 0.1-0.2 s per 10^6
    elements, because every step depends on the previous one)."""
    _no_tree("kahan", x)
    values, kind = _scalars(x)
    s = c = kind(0.0)
    for v in values:
        y = v - c
        t = s + y
        c = (t - s) - y
        s = t
    return x.dtype.type(s)


def neumaier(x: np.ndarray):
    """Neumaier's improved Kahan sum (Kahan-Babuska) in the input format.

    The loop ``t = s + v; c += (s - t) + v if |s| >= |v| else (v - t) + s; s = t`` keeps
    ``s`` a plain running sum, so it vectorizes: the running sums come from ``np.cumsum``,
    every step's rounding error from elementwise operations, and ``c`` is their running sum.
    """
    _no_tree("neumaier", x)
    start = np.zeros(1, dtype=x.dtype)
    running = np.cumsum(np.concatenate([start, x]))  # 0, 0 + x0, (0 + x0) + x1, ...
    before, after = running[:-1], running[1:]
    errors = np.where(np.abs(before) >= np.abs(x), (before - after) + x, (x - after) + before)
    compensation = np.cumsum(np.concatenate([start, errors]))[-1]
    return x.dtype.type(running[-1] + compensation)


def float64_accumulation(x: np.ndarray):
    """A float64 running sum from +0.0, left to right, rounded once to the input format."""
    if is_symbolic(x):
        return zero(x) + sequential(x)
    wide = x.astype(np.float64)
    total = np.float64(0.0) + (np.cumsum(wide)[-1] if len(wide) else np.float64(0.0))
    return total.astype(x.dtype)[()] if x.dtype != np.float64 else total
