"""Exact values held as float64 expansions: lists of float64 arrays whose exact sum is the value.

The Ozaki products return their results this way; turning a million results into Fractions
costs far more than computing them, so a `Truth` keeps the expansion and rounds, splits and
materializes Fractions from it on demand. Every operation here is exact: error-free
transformations (TwoSum) with a rigorous bound on what they leave out, and exact Fraction
arithmetic for the elements the bound cannot decide (ties, values next to a rounding boundary).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fractions(parts: Sequence[np.ndarray]) -> np.ndarray:
    """The exact values as an object array of Fractions (dyadic rationals)."""
    from . import limits

    shape = parts[0].shape
    count = int(np.prod(shape, dtype=np.int64))
    limits.check(
        "Truth.exact",
        nbytes=count * limits.FRACTION_BYTES,
        what=f"{count} Fractions; .round(), .split() and metrics.measure need none",
    )
    mans, exps = [], []
    for p in parts:
        m, e = np.frexp(np.asarray(p, dtype=np.float64).ravel())
        mans.append((m * 2.0**53).astype(np.int64).tolist())
        exps.append((e.astype(np.int64) - 53).tolist())
    out = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=object)
    for i in range(out.size):
        terms = [(ms[i], es[i]) for ms, es in zip(mans, exps, strict=True) if ms[i]]
        if not terms:
            out[i] = Fraction(0)
            continue
        emin = min(e for _, e in terms)
        n = sum(m << (e - emin) for m, e in terms)
        out[i] = Fraction(n << emin) if emin >= 0 else Fraction(n, 1 << -emin)
    return out.reshape(shape)


def approx(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hi, lo, margin): hi = fl(hi + lo), and |value - (hi + lo)| <= margin elementwise."""
    s = np.array(parts[0], dtype=np.float64, copy=True)
    errs = []
    for p in parts[1:]:
        s, e = _two_sum(s, p)
        errs.append(e)
    if not errs:
        z = np.zeros_like(s)
        return s, z, z
    t = np.zeros_like(s)
    tabs = np.zeros_like(s)
    for e in errs:
        t += e
        tabs += np.abs(e)
    hi, lo = _two_sum(s, t)
    # recursive summation of L terms errs by at most (L - 1) * 2**-53 * sum|e| (additions
    # that underflow are exact); a factor of 4 covers the rounding of this bound itself
    margin = tabs * (len(errs) * 2.0**-51)
    return hi, lo, margin


def round_parts(parts: Sequence[np.ndarray], fmt: Any) -> np.ndarray:
    """The correctly rounded values (round half to even) in ``fmt`` of finite expansions.

    float64: ``hi`` unless the bound leaves it open (a tie, or a value within the margin of a
    half-gap). A narrower format: the exact value lies strictly between hi's float64
    neighbours, so it rounds as they do whenever they round alike (rounding is monotonic).
    Open elements are rounded from their exact Fraction values.
    """
    from .. import formats

    f = formats.get(fmt)
    hi, lo, margin = approx(parts)
    with np.errstate(over="ignore", invalid="ignore"):
        up = np.nextafter(hi, np.inf) - hi
        down = hi - np.nextafter(hi, -np.inf)
    at_max = np.abs(hi) == np.finfo(np.float64).max
    up = np.where(at_max & (hi > 0), 2.0**970, up)
    down = np.where(at_max & (hi < 0), 2.0**970, down)
    gap = np.minimum(up, down)
    known = (lo == 0) & (margin == 0)  # hi is the exact value
    # v lies strictly between hi's float64 neighbours unless the margin is not small
    open_ = ~np.isfinite(hi) | ((hi == 0) & (margin > 0)) | (margin >= gap / 4)
    if f.mbits >= 52:
        # hi is v's float64 rounding unless v may lie on or across a half-gap
        open_ |= np.where(
            lo > 0,
            lo + margin >= up / 2,
            np.where(lo < 0, margin - lo >= down / 2, margin >= gap / 2),
        )
        out = hi.copy()
    else:
        # rounding is monotonic: v between hi's neighbours rounds as they do when they agree;
        # they disagree only where hi is a midpoint of the narrower format (or next to one)
        out = np.asarray(formats.round_array(hi, f), dtype=np.float64)
        with np.errstate(over="ignore"):
            r_up = np.asarray(formats.round_array(np.nextafter(hi, np.inf), f), np.float64)
            r_dn = np.asarray(formats.round_array(np.nextafter(hi, -np.inf), f), np.float64)
        open_ |= (r_up != r_dn) & ~known
    idx = np.flatnonzero(open_.ravel())
    if idx.size:
        flat = out.reshape(-1)
        sub = [np.asarray(p).reshape(-1)[idx] for p in parts]
        for j, v in zip(idx.tolist(), fractions(sub).tolist(), strict=True):
            flat[j] = float(formats.round_exact(v, f))
    with np.errstate(over="ignore"):
        res = out.astype(f.storage)
    return res if res.shape else res[()]
