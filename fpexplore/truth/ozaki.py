"""Exact matrix and dot products of float32 arrays on top of float64 BLAS (the Ozaki scheme).

Each row of ``a`` (each column of ``b``) is split into slices: slice ``s`` holds the digits of
the row between 2**(E - s*beta) and 2**(E - (s+1)*beta), E being the row's exponent, so its
entries are integers of at most ``beta`` bits in units of 2**(E - (s+1)*beta) (extracted
exactly with the sigma trick). A product of an ``a`` slice and a ``b`` slice then has, at
every output, k terms of at most 2*beta bits in one common unit; with
``2*beta + ceil(log2 k) <= 53`` every partial sum is an integer number of units below 2**53,
so float64 arithmetic computes it exactly in any order, with or without FMA. The exact
product is the exact sum of the slice products: an *expansion*, a list of float64 arrays
whose elementwise sum (in exact arithmetic) is the result.

float32 products and sums never overflow or underflow float64 here (|a*b| < 2**256 and units
stay above 2**-1000), which the splitting relies on; non-finite inputs are handled by the
caller.
"""

from __future__ import annotations

import math

import numpy as np


def beta_for(k: int) -> int:
    """Bits per slice for an inner dimension of ``k``: 2*beta + ceil(log2 k) <= 53."""
    return (53 - max(1, math.ceil(math.log2(max(k, 2))))) // 2


def slices(x: np.ndarray, beta: int) -> list[np.ndarray]:
    """Split the rows of a finite 2-D float array (values of at most 24 bits) into slices.

    Returns float64 arrays of x's shape, summing exactly to x; in slice s every entry of row i
    is an integer multiple of 2**(E_i - (s+1)*beta) of magnitude at most 2**(E_i - s*beta),
    where |x[i, :]| < 2**E_i.
    """
    r = x.astype(np.float64)
    amax = np.max(np.abs(r), axis=1, initial=0.0)
    e = np.frexp(amax)[1].astype(np.int64)  # amax < 2**e (0 for zero rows)
    out: list[np.ndarray] = []
    s = 0
    while True:
        unit_exp = e - (s + 1) * beta
        sigma = np.ldexp(1.5, (unit_exp + 52).astype(np.int32))[:, None]
        d = r + sigma
        np.subtract(d, sigma, out=d)
        out.append(d)
        np.subtract(r, d, out=r)
        s += 1
        if not r.any():
            return out
