"""Summing one float32 vector per rank: the data, the orders an all-reduce may use, and the
correctly rounded exact sum (vectorized with numpy: it runs inside the worker processes).

The exact sum of a few float32 values per element is an integer times a power of two: each
value is ``M * 2**E`` with a 24-bit ``M``; when the exponents of an element span at most 36
bits the sum fits an int64 and is rounded to float32 (to nearest, ties to even) with integer
operations. The rare elements with a wider span are summed as Fractions. The tests check this
against `fpexplore.truth.sum`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from ...formats import round_exact, ulp_distance

_SPAN = 36


def rank_data(seed: int, rank: int, n: int) -> np.ndarray:
    """Rank ``rank``'s vector: ``n`` standard-normal float32 values from PCG64([seed, rank])."""
    return np.random.default_rng([seed, rank]).standard_normal(n, dtype=np.float32)


def checksum(x: np.ndarray) -> int:
    """A position-weighted sum of the bit patterns (same bits, same checksum; else almost
    surely not)."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    w = np.arange(1, b.size + 1, dtype=np.uint64) * np.uint64(2654435761)
    return int((b * w).sum(dtype=np.uint64) & np.uint64((1 << 62) - 1))


def _round_f32(total: np.ndarray, e: np.ndarray) -> np.ndarray:
    """float32 nearest to ``total * 2**e`` (int64 totals, normal range), ties to even."""
    a = np.abs(total)
    bl = np.frexp(a.astype(np.float64))[1].astype(np.int64)
    one = np.ones_like(a)
    too_big = (one << np.maximum(bl - 1, 0)) > a
    bl = np.where(too_big & (a > 0), bl - 1, bl)
    sh = np.maximum(bl - 24, 0)
    q = a >> sh
    r = a & ((one << sh) - 1)
    half = np.where(sh > 0, one << np.maximum(sh - 1, 0), 0)
    up = (sh > 0) & ((r > half) | ((r == half) & ((q & 1) == 1)))
    q = q + up
    v = np.ldexp(q.astype(np.float64), (e + sh).astype(np.int32)) * np.sign(total)
    return v.astype(np.float32)


def exact_rounded(data: np.ndarray) -> np.ndarray:
    """The exact column sums of ``data`` (ranks x n, float32), correctly rounded to float32."""
    d = np.asarray(data, dtype=np.float32)
    mant, ex = np.frexp(d.astype(np.float64))
    m = (mant * 2.0**24).astype(np.int64)
    e = ex.astype(np.int64) - 24
    nz = m != 0
    big = np.int64(1 << 40)
    emin = np.where(nz, e, big).min(axis=0)
    emax = np.where(nz, e, -big).max(axis=0)
    allzero = ~nz.any(axis=0)
    emin = np.where(allzero, 0, emin)
    fast = allzero | (emax - emin <= _SPAN)
    shift = np.where(nz, e - emin, 0)
    shift = np.where(fast[None, :], shift, 0)
    total = (m << shift).sum(axis=0)
    out = _round_f32(total, emin)
    small = np.abs(out) < np.float32(2.0**-126)
    slow = np.flatnonzero(~fast | (small & (total != 0)))
    for i in slow.tolist():  # wide exponent spans, results near the subnormal range
        s = sum((Fraction(float(v)) for v in d[:, i]), Fraction(0))
        out[i] = np.float32(round_exact(s, "float32"))
    return out


def orders(data: np.ndarray) -> dict[str, np.ndarray]:
    """float32 sums of the rows in named orders: rank order, pairwise, and every ring start
    in both directions (a ring all-reduce adds each chunk along the ring from some rank)."""
    d = np.asarray(data, dtype=np.float32)
    w = d.shape[0]

    def chain(idx: list[int]) -> np.ndarray:
        s = d[idx[0]].copy()
        for i in idx[1:]:
            s = s + d[i]
        return s

    out = {"rank order": chain(list(range(w)))}
    if w == 4:
        out["pairwise (a+b)+(c+d)"] = (d[0] + d[1]) + (d[2] + d[3])
    for s in range(w):
        out[f"ring from rank {s}"] = chain([(s + j) % w for j in range(w)])
        out[f"reverse ring from rank {s}"] = chain([(s - j) % w for j in range(w)])
    return out


def compare(got: np.ndarray, data: np.ndarray) -> dict[str, Any]:
    """How ``got`` (an all-reduce result) relates to the exact sum and to each order."""
    exact = exact_rounded(data)
    dist = ulp_distance(got, exact)
    named = orders(data)
    same = {k: int((v.view(np.uint32) == got.view(np.uint32)).sum()) for k, v in named.items()}
    stack = np.stack([v.view(np.uint32) for v in named.values()])
    any_order = int((stack == got.view(np.uint32)).any(axis=0).sum())
    ordered = named["rank order"]
    ordered_dist = ulp_distance(ordered, exact)
    return {
        "n": int(got.size),
        "n_differ_rank_ordered": int((got.view(np.uint32) != ordered.view(np.uint32)).sum()),
        "n_differ_exact": int((dist != 0).sum()),
        "max_ulp_exact": int(dist.max(initial=0)),
        "rank_ordered_n_differ_exact": int((ordered_dist != 0).sum()),
        "rank_ordered_max_ulp_exact": int(ordered_dist.max(initial=0)),
        "n_equal_order": same,
        "n_explained_by_some_order": any_order,
    }
