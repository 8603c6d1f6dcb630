"""Exact values held as float64 expansions: lists of float64 arrays whose exact sum is the value.

The Ozaki products return their results this way; turning a million results into Fractions
costs far more than computing them, so a `Truth` keeps the expansion and rounds, splits and
materializes Fractions from it on demand. Every operation here is exact: error-free
transformations (TwoSum) with a rigorous bound on what they leave out, and exact Fraction
arithmetic for the elements the bound cannot decide (ties, values next to a rounding boundary).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .exact import _dyadic


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
    out = np.empty(count, dtype=object)
    for i in range(count):
        terms = [(ms[i], es[i]) for ms, es in zip(mans, exps, strict=True) if ms[i]]
        emin = min((e for _, e in terms), default=0)
        out[i] = _dyadic(sum(m << (e - emin) for m, e in terms), emin)
    return out.reshape(shape)


def approx(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hi, lo, margin): hi = fl(hi + lo), and |value - (hi + lo)| <= margin elementwise."""
    *errs, s = _vecsum([np.array(parts[0], dtype=np.float64, copy=True), *parts[1:]])
    if not errs:
        z = np.zeros_like(s)
        return s, z, z
    hi, lo = _two_sum(s, sum(errs, np.zeros_like(s)))
    # recursive summation of L terms errs by at most (L - 1) * 2**-53 * sum|e| (additions
    # that underflow are exact); a factor of 4 covers the rounding of this bound itself
    return hi, lo, sum(map(np.abs, errs), np.zeros_like(s)) * (len(errs) * 2.0**-51)


def _vecsum(parts: Sequence[np.ndarray]) -> list[np.ndarray]:
    """One error-free pass: the same exact sums, as [errors..., running sum]."""
    s = parts[0]
    out = []
    for p in parts[1:]:
        s, e = _two_sum(s, p)
        out.append(e)
    out.append(s)
    return out


_MAX_PASSES = 64


def signs(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(sign, decided): the exact sign (-1, 0, 1) of finite 1-D expansions, without Fractions.

    Error-free passes (TwoSum cascades) until the running sum outweighs a rigorous bound on
    the errors (then its sign is the value's) or every term is zero. Each pass keeps the exact
    value and moves it into the running sum, so a few passes decide almost everything;
    ``decided`` is False for what ``_MAX_PASSES`` passes left open.
    """
    cur = [np.asarray(p, dtype=np.float64) for p in parts]
    n = cur[0].size
    sign = np.zeros(n, dtype=np.int8)
    decided = np.zeros(n, dtype=bool)
    idx = np.arange(n)
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(_MAX_PASSES):
            if idx.size == 0:
                break
            cur = _vecsum(cur)
            s = cur[-1]
            err = sum(map(np.abs, cur[:-1]), np.zeros_like(s))
            # the float sum of |e| errs by at most L * 2**-53 of itself, plus underflow
            err = err * (1 + len(cur) * 2.0**-52) + 2.0**-1074 * len(cur)
            nonzero = np.any([e != 0 for e in cur], axis=0)
            bad = ~(np.isfinite(s) & np.isfinite(err))  # overflow: left to the caller
            done = ((np.abs(s) > err) | ~nonzero) & ~bad
            if done.any() or bad.any():
                sign[idx[done]] = np.sign(s[done]).astype(np.int8)
                decided[idx[done]] = True
                keep = ~(done | bad)
                idx = idx[keep]
                cur = [c[keep] for c in cur]
    return sign, decided


def _even(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Of two neighbouring float64 values, the one with an even last mantissa bit."""
    odd_a = (np.abs(a).view(np.int64) & 1) == 1
    return np.where(odd_a, b, a)


def _round_interval(hi: np.ndarray, radius: np.ndarray, f: Any) -> tuple[np.ndarray, np.ndarray]:
    """Roundings to a format narrower than float64 of values within ``radius`` of ``hi``.

    The ends of the interval are widened outward by one float64 step (each is computed with
    one rounding), so it holds the value; where both ends round alike (bit for bit: -0 and
    +0 differ) so does the value, rounding being monotonic. Returns (values, undecided).
    """
    from .. import formats

    with np.errstate(over="ignore", invalid="ignore"):
        r = radius * (1 + 2.0**-50)
        lo_end = np.nextafter(hi - r, -np.inf)
        hi_end = np.nextafter(hi + r, np.inf)
        a = np.asarray(formats.round_array(lo_end, f), dtype=np.float64)
        b = np.asarray(formats.round_array(hi_end, f), dtype=np.float64)
    same = (a.view(np.int64) == b.view(np.int64)) & np.isfinite(hi) & np.isfinite(r)
    return a, np.flatnonzero(~same.ravel())


def _round64_interval(
    hi: np.ndarray, lo: np.ndarray, margin: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Float64 roundings of values within ``margin`` of ``hi + lo`` (hi = fl(hi + lo)).

    hi is the rounding wherever the whole interval lies strictly inside hi's rounding cell:
    |lo| + margin below half the gap to hi's neighbour on that side (with slack for the
    float arithmetic of the test). Returns (values, undecided).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        up = np.nextafter(hi, np.inf) - hi
        down = hi - np.nextafter(hi, -np.inf)
        # margin, plus more than the rounding error of lo + slack and slack - lo
        slack = margin * (1 + 2.0**-50) + np.abs(lo) * 2.0**-51
        inside = (lo + slack < up / 2) & (slack - lo < down / 2)
    # beside float64's subnormals or its largest values, or at zero, leave it to the exact path
    inside &= np.isfinite(hi) & (np.abs(hi) > 2.0**-1000) & (np.abs(hi) < 2.0**1000)
    return hi.astype(np.float64), np.flatnonzero(~inside.ravel())


def _round64(parts: list[np.ndarray], split: tuple, hard: Any, near: tuple) -> np.ndarray:
    """float64 roundings of (hi, lo, margin), hi's neighbours and gaps ``near``: hi = fl(v)
    exactly when margin = 0; else v may lie on or across a half-gap, and exact signs decide."""
    (hi, lo, margin), (hi_up, hi_dn, up, down) = split, near
    close = (margin > 0) & ~hard
    close &= np.where(
        lo > 0,
        lo + margin >= up / 2,
        np.where(lo < 0, margin - lo >= down / 2, margin >= np.minimum(up, down) / 2),
    )
    out = hi.copy()
    idx = np.flatnonzero(close.ravel())
    if idx.size:
        h = hi.reshape(-1)[idx]
        hu, hd = hi_up.reshape(-1)[idx], hi_dn.reshape(-1)[idx]
        sub = [p[idx] for p in parts]
        above, ok_a = signs([*sub, -h, -(up.reshape(-1)[idx] / 2)])
        below, ok_b = signs([*sub, -h, down.reshape(-1)[idx] / 2])
        r = np.select(
            [above > 0, above == 0, below < 0, below == 0],
            [hu, _even(h, hu), hd, _even(h, hd)],
            h,
        )
        out.reshape(-1)[idx] = r
        hard.reshape(-1)[idx[~(ok_a & ok_b)]] = True
    return out


def _round_narrow(
    parts: list[np.ndarray], hi: np.ndarray, near: tuple, open_: Any, hard: Any, f: Any
) -> np.ndarray:
    """Roundings to a narrower format: v rounds as hi's neighbours ``near`` where they agree;
    elsewhere (where ``open_``) as hi (a tie), hi_up or hi_dn, by the exact sign of v - hi."""
    from .. import formats

    hi_up, hi_dn = near
    out = np.asarray(formats.round_array(hi, f), dtype=np.float64)
    with np.errstate(over="ignore"):
        r_up = np.asarray(formats.round_array(hi_up, f), np.float64)
        r_dn = np.asarray(formats.round_array(hi_dn, f), np.float64)
    idx = np.flatnonzero(((r_up != r_dn) & open_).ravel())
    if idx.size:
        sub = [p[idx] for p in parts]
        sg, ok = signs([*sub, -hi.reshape(-1)[idx]])
        r = np.where(sg > 0, r_up.reshape(-1)[idx], r_dn.reshape(-1)[idx])
        out.reshape(-1)[idx] = np.where(sg == 0, out.reshape(-1)[idx], r)
        hard.reshape(-1)[idx[~ok]] = True
    return out


def round_parts(parts: Sequence[np.ndarray], fmt: Any, bound: np.ndarray | None = None) -> Any:
    """The correctly rounded values (round half to even) in ``fmt`` of finite expansions.

    With ``bound`` (the parts then hold the value only to within ``bound``, elementwise),
    returns ``(values, open)``: ``open`` the flat indices whose rounding the parts and the
    bound leave undecided (their entries in ``values`` are meaningless).

    float64: ``hi`` unless the bound leaves it open (a tie, or a value within the margin of a
    half-gap); open values are decided by the exact signs of v - hi -+ half a gap (`signs`).
    A narrower format: the exact value lies strictly between hi's float64 neighbours, so it
    rounds as they do whenever they round alike (rounding is monotonic); where they do not, hi
    is a midpoint of the narrower format and the exact sign of v - hi decides. What neither
    settles (a value next to float64's overflow or subnormal gaps, or an expansion the passes
    of `signs` leave open) is rounded from its exact Fraction value.
    """
    from .. import formats

    f = formats.get(fmt)
    hi, lo, margin = approx(parts)
    if bound is not None:  # rounding up the sum of two bounds: one ulp of slack is plenty
        margin = (margin + np.asarray(bound, dtype=np.float64)) * (1 + 2.0**-50)
        if f.mbits < 52:
            return _round_interval(hi, np.abs(lo) + margin, f)
        return _round64_interval(hi, lo, margin)
    with np.errstate(over="ignore", invalid="ignore"):
        hi_up = np.nextafter(hi, np.inf)
        hi_dn = np.nextafter(hi, -np.inf)
        up = hi_up - hi
        down = hi - hi_dn
    at_max = np.abs(hi) == np.finfo(np.float64).max
    up = np.where(at_max & (hi > 0), 2.0**970, up)
    down = np.where(at_max & (hi < 0), 2.0**970, down)
    gap = np.minimum(up, down)
    known = (lo == 0) & (margin == 0)  # hi is the exact value
    # v lies strictly between hi's float64 neighbours unless the margin is not small; beside
    # float64's subnormals half a gap is not a float64 number
    hard = ~np.isfinite(hi) | ((hi == 0) & (margin > 0)) | (margin >= gap / 4)
    hard |= (gap < 2.0**-1070) & (margin > 0)
    flat_parts = [np.asarray(p, dtype=np.float64).reshape(-1) for p in parts]
    if f.mbits >= 52:
        out = _round64(flat_parts, (hi, lo, margin), hard, (hi_up, hi_dn, up, down))
    else:
        out = _round_narrow(flat_parts, hi, (hi_up, hi_dn), ~known & ~hard, hard, f)
    idx = np.flatnonzero(hard.ravel())
    if idx.size:
        flat = out.reshape(-1)
        sub = [p[idx] for p in flat_parts]
        for j, v in zip(idx.tolist(), fractions(sub).tolist(), strict=True):
            flat[j] = float(formats.round_exact(v, f))
    with np.errstate(over="ignore"):
        res = out.astype(f.storage)
    return res if res.shape else res[()]
