"""Exact sums of float arrays with vectorized integer arithmetic.

A finite binary float is ``M * 2**e`` with an integer mantissa ``M``. The exact sum of many
floats is found by adding the mantissas that share an exponent (``np.bincount`` over exponent
buckets, exact while every bucket stays below 2**53), then combining the few bucket totals as
Python integers. Results are dyadic rationals, returned as ``fractions.Fraction``.

Non-finite terms follow IEEE 754: any NaN, or +inf together with -inf, gives NaN; otherwise an
infinity wins. Such results are returned as the Python floats ``nan``/``inf``/``-inf``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

_HALF = 26  # float64 mantissas (53 bits) are split into a 27-bit high and a 26-bit low part
_BLOCK = 1 << 21  # elements per block: intermediates stay small
_MAX_BINS = 1 << 23
_CHUNK_BITS = 16  # float32 fast path: 2**16 elements per chunk keep int64 partial sums exact
_CHUNK_F32 = 1 << _CHUNK_BITS


def _special(v: np.ndarray) -> float:
    """IEEE sum of a set of terms of which at least one is not finite."""
    if np.isnan(v).any():
        return math.nan
    pos, neg = bool((v == np.inf).any()), bool((v == -np.inf).any())
    if pos and neg:
        return math.nan
    return math.inf if pos else -math.inf


def _dyadic(n: int, e: int) -> Fraction:
    return Fraction(n << e) if e >= 0 else Fraction(n, 1 << -e)


def _block_rows(v: np.ndarray, off: np.ndarray | None) -> tuple[np.ndarray, int]:
    """Exact row sums of a finite float64 block as (object array of ints N, exponent E)."""
    nseg = v.shape[0]
    mant, ex = np.frexp(v)
    m = (mant * 2.0**53).astype(np.int64)  # exact: |m| < 2**53
    e = ex.astype(np.int64)
    if off is not None:
        e += off
    nz = m != 0
    if not nz.any():
        return np.zeros(nseg, dtype=object), 0
    emin = int(e[nz].min())
    emax = int(e[nz].max())
    np.clip(e, emin, emax, out=e)
    nbin = emax - emin + _HALF + 1
    if nseg > 1 and nseg * nbin > _MAX_BINS:
        h = nseg // 2
        n1, e1 = _block_rows(v[:h], None if off is None else off[:h])
        n2, e2 = _block_rows(v[h:], None if off is None else off[h:])
        em = min(e1, e2)
        return np.concatenate([n1 * (1 << (e1 - em)), n2 * (1 << (e2 - em))]), em
    idx = (e - emin) + (np.arange(nseg, dtype=np.int64) * nbin)[:, None]
    hi = (m >> _HALF).astype(np.float64)  # |hi| < 2**27
    lo = (m & ((1 << _HALF) - 1)).astype(np.float64)  # 0 <= lo < 2**26
    # Each bucket gets at most v.size terms below 2**27: exact in float64 (v.size <= 2**21).
    c = np.bincount(idx.ravel(), weights=lo.ravel(), minlength=nseg * nbin)
    c[_HALF:] += np.bincount(idx.ravel(), weights=hi.ravel(), minlength=nseg * nbin - _HALF)[
        : nseg * nbin - _HALF
    ]
    c = c.astype(np.int64).reshape(nseg, nbin)
    cols = np.flatnonzero(c.any(axis=0))
    pow2 = np.array([1 << int(b) for b in cols], dtype=object)
    n = (c[:, cols].astype(object) * pow2).sum(axis=1)
    return n, emin - 53


def row_sums(v: np.ndarray, off: np.ndarray | None = None) -> np.ndarray:
    """Exact sums of the rows of a 2-D float array, each term ``v * 2**off``.

    Returns an object array of ``Fraction`` (finite rows) or float nan/inf (IEEE specials).
    ``v`` is float32 or float64; ``off`` an optional int64 array of exponent offsets.
    """
    v = np.asarray(v)
    if v.dtype != np.float64:
        v = v.astype(np.float64)
    nseg, length = v.shape
    out = np.empty(nseg, dtype=object)
    if length == 0 or nseg == 0:
        out[:] = [Fraction(0)] * nseg
        return out
    fin = np.isfinite(v)
    bad_rows = np.flatnonzero(~fin.all(axis=1))
    specials = {int(i): _special(v[i]) for i in bad_rows}
    if bad_rows.size:
        v = np.where(fin, v, 0.0)
    acc_n = np.zeros(nseg, dtype=object)
    acc_e: int | None = None
    cb = min(length, _BLOCK)
    rb = max(1, _BLOCK // cb)
    for c0 in range(0, length, cb):
        for r0 in range(0, nseg, rb):
            vb = v[r0 : r0 + rb, c0 : c0 + cb]
            ob = None if off is None else off[r0 : r0 + rb, c0 : c0 + cb]
            n, e = _block_rows(vb, ob)
            part = np.zeros(nseg, dtype=object)
            part[r0 : r0 + rb] = n
            if acc_e is None:
                acc_n, acc_e = part, e
            else:
                em = min(acc_e, e)
                acc_n = acc_n * (1 << (acc_e - em)) + part * (1 << (e - em))
                acc_e = em
    assert acc_e is not None
    for i in range(nseg):
        out[i] = _dyadic(int(acc_n[i]), acc_e)
    for i, val in specials.items():
        out[i] = val
    return out


def sum_f32(x: np.ndarray) -> Fraction | float:
    """Exact sum of a float32 array (fast path).

    Per chunk of 2**16 elements with largest magnitude below 2**E, every element is rounded
    to a multiple of 2**g (g = E - 46) by adding sigma = 1.5 * 2**(g+52) in float64; the bit
    patterns of the sums, minus sigma's, are those multiples as integers, so one int64 sum of
    the bit patterns (exact modulo 2**64, and the true value is far below 2**63) gives the
    rounded part. The few elements below 2**(g+23) leave a residual, computed exactly on just
    those elements and summed with the general method.
    """
    x = np.ascontiguousarray(x, dtype=np.float32).ravel()
    n = x.size
    if n == 0:
        return Fraction(0)
    ab = np.empty(min(n, _CHUNK_F32), dtype=np.float32)
    t = np.empty(min(n, _CHUNK_F32), dtype=np.float64)
    mask = np.empty(min(n, _CHUNK_F32), dtype=bool)
    parts: list[tuple[int, int]] = []
    residuals: list[np.ndarray] = []
    for c0 in range(0, n, _CHUNK_F32):
        xc = x[c0 : c0 + _CHUNK_F32]
        k = xc.size
        a, tt, mk = ab[:k], t[:k], mask[:k]
        np.abs(xc, out=a)
        amax = float(a.max())
        if not math.isfinite(amax):
            return _special(x)
        if amax == 0.0:
            continue
        big_e = math.frexp(amax)[1]  # amax < 2**big_e
        g = big_e - (62 - _CHUNK_BITS)  # chunk total < 2**62 units of 2**g
        sigma = np.float64(1.5 * 2.0 ** (g + 52))
        np.copyto(tt, xc)  # exact widening; then a same-type add (faster than a mixed one)
        np.add(tt, sigma, out=tt)
        s = int(tt.view(np.int64).sum(dtype=np.int64)) - k * int(sigma.view(np.int64))
        s = ((s + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)
        parts.append((s, g))
        thr = g + 23
        if thr >= -149 and float(a.min()) < 2.0**thr:
            np.less(a, np.float32(2.0**thr), out=mk)
            idx = np.flatnonzero(mk)
            if idx.size:
                xs = xc[idx].astype(np.float64)
                r = xs - ((xs + sigma) - sigma)
                residuals.append(r[r != 0])
    total = Fraction(0)
    if parts:
        em = min(g for _, g in parts)
        total = _dyadic(sum(s << (g - em) for s, g in parts), em)
    if residuals:
        r = np.concatenate(residuals)
        if r.size:
            total += row_sums(r[None, :])[0]
    return total
