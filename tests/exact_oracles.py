"""Exact oracles the truth tests compare against."""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def frac_sum(v: np.ndarray) -> Fraction:
    """Exact sum of finite floats: integer mantissas shifted to a common exponent."""
    v = np.asarray(v, dtype=np.float64).ravel()
    if v.size == 0:
        return Fraction(0)
    m, e = np.frexp(v)
    mi = (m * 2.0**53).astype(np.int64).tolist()
    ei = (e.astype(np.int64) - 53).tolist()
    emin = min(ei)
    n = sum(a << (b - emin) for a, b in zip(mi, ei, strict=True))
    return Fraction(n) * Fraction(2) ** emin
