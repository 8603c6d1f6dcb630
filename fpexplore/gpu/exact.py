"""Exact sums and dot products of float arrays (numpy only), and float32 ULP measures.

A float64 array is summed exactly by splitting every value into an integer mantissa and an
exponent, adding the mantissas per exponent in int64 (split in two halves so nothing overflows)
and combining the few per-exponent totals as Python integers. Products of two float32 numbers
are exact in float64, so exact dot products of float32 vectors reduce to exact sums.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

_LO_BITS = 27


def exact_sum(values: np.ndarray) -> Fraction:
    """The exact sum of finite float64 (or float32) values, as a Fraction."""
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0:
        return Fraction(0)
    if not np.all(np.isfinite(x)):
        raise ValueError("exact_sum needs finite values")
    mant, expo = np.frexp(x)
    m = (mant * 2.0**53).astype(np.int64)  # exact: |mant| < 1 has 53 significant bits
    e = expo.astype(np.int64) - 53
    keep = m != 0
    m, e = m[keep], e[keep]
    if m.size == 0:
        return Fraction(0)
    order = np.argsort(e, kind="stable")
    m, e = m[order], e[order]
    starts = np.flatnonzero(np.r_[True, e[1:] != e[:-1]])
    hi = np.add.reduceat(m >> _LO_BITS, starts)  # < 2**26 each: sums of 2**37 values fit
    lo = np.add.reduceat(m & ((1 << _LO_BITS) - 1), starts)
    e0 = int(e[0])
    total = 0
    for h, lo_, ex in zip(hi.tolist(), lo.tolist(), e[starts].tolist(), strict=True):
        total += ((h << _LO_BITS) + lo_) << (ex - e0)
    return Fraction(total) * Fraction(2) ** e0


def exact_dot(a: np.ndarray, b: np.ndarray) -> Fraction:
    """The exact dot product of two float32 vectors (products are exact in float64)."""
    a = np.asarray(a, dtype=np.float32).astype(np.float64).ravel()
    b = np.asarray(b, dtype=np.float32).astype(np.float64).ravel()
    return exact_sum(a * b)


def exact_sums_by_group(values: np.ndarray, groups: np.ndarray, n_groups: int) -> list[Fraction]:
    """Exact per-group sums (``groups[i]`` says which group ``values[i]`` goes to)."""
    values = np.asarray(values, dtype=np.float64).ravel()
    groups = np.asarray(groups).ravel()
    order = np.argsort(groups, kind="stable")
    v, g = values[order], groups[order]
    bounds = np.searchsorted(g, np.arange(n_groups + 1))
    return [exact_sum(v[bounds[i] : bounds[i + 1]]) for i in range(n_groups)]


def to_float64(values: list[Fraction] | Fraction) -> np.ndarray:
    """Correctly rounded float64 of exact value(s) (Fraction.__float__ rounds to nearest)."""
    if isinstance(values, Fraction):
        return np.float64(float(values))
    return np.array([float(v) for v in values], dtype=np.float64)


def ulp32(x: np.ndarray) -> np.ndarray:
    """The float32 ULP of each value (the gap to the next float32 away from zero)."""
    return np.spacing(np.abs(np.asarray(x, dtype=np.float32))).astype(np.float64)


def ulp_error(got: np.ndarray, truth: np.ndarray, fmt: str = "float32") -> np.ndarray:
    """(got - truth) / ulp(got) in the result's own format, fractional (sub-ULP stays visible)."""
    got64 = np.asarray(got, dtype=np.float64)
    dtype = {"float32": np.float32, "float16": np.float16, "float64": np.float64}[fmt]
    ulp = np.spacing(np.abs(np.asarray(got, dtype=dtype))).astype(np.float64)
    return (got64 - np.asarray(truth, dtype=np.float64)) / ulp


def bits32(x: np.ndarray) -> list[int]:
    """The float32 bit patterns as Python ints (uint32), for JSON records."""
    return np.asarray(x, dtype=np.float32).ravel().view(np.uint32).astype(np.int64).tolist()


def from_bits32(bits: list[int]) -> np.ndarray:
    """Inverse of `bits32`."""
    return np.asarray(bits, dtype=np.uint32).view(np.float32)
