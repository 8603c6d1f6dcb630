"""Exact sums of float arrays with vectorized integer and float64 arithmetic.

Whole arrays (`sum_f32`, `sum_f64`): a cost that does not depend on the exponent range.
Every finite float is a multiple of the unit of its (sign, exponent field) and below
2**(mantissa bits + 1) such units, so float64 sums the values of one bin exactly; one
``np.bincount`` per chunk does all bins at once. float32 chunks within 23 binades of their
largest (but for a few values) take the sigma trick instead (one add, one int64 sum).

Rows (`row_sums`, with optional exponent offsets for split float64 products): mantissas that
share an exponent are added per row (``np.bincount`` over exponent buckets, exact while every
bucket stays below 2**53), and the few bucket totals combined as Python integers.

Results are dyadic rationals, returned as ``fractions.Fraction``. Non-finite terms follow
IEEE 754: any NaN, or +inf together with -inf, gives NaN; otherwise an infinity wins. Such
results are returned as the Python floats ``nan``/``inf``/``-inf``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

_HALF = 26  # float64 mantissas (53 bits) are split into a 27-bit high and a 26-bit low part
_BLOCK = 1 << 21  # elements per block: intermediates stay small
_MAX_BINS = 1 << 23


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


# -- range-independent exact sums of whole arrays -----------------------------------------------
#
# Every finite float is a multiple of the unit of its exponent field E (2**(max(E, 1) - bias -
# mbits)) and below 2**(mbits + 1) such units. Values that share (sign, E) are therefore summed
# exactly by float64 as long as the partial sums stay below 2**53 units: one ``np.bincount``
# over the (sign, E) field of the bit pattern does it for a whole chunk, whatever the exponent
# range. float32 values (24 bits) go in as they are; float64 values (53 bits) are split into a
# high part (the top 26 bits, by masking the pattern) and a low part (x - high, 27 bits), both
# multiples of their bin's unit. Chunks whose float32 values all lie within 23 binades of the
# chunk's largest take a faster path (the sigma trick: one float64 add and one int64 sum).

_CHUNK = 1 << 16
_F32_FLUSH = 1 << 28  # elements per float32 bin accumulator: 2**24 units * 2**28 < 2**53
_F64_FLUSH = 1 << 25  # float64 high/low parts: below 2**27 units each, 2**27 * 2**25 < 2**53
_LANES = 4
_HI_MASK = np.uint64(~((1 << 27) - 1) & ((1 << 64) - 1))


def _bins_total(acc: np.ndarray, scale_exp: np.ndarray | None = None) -> tuple[int, int]:
    """Exact sum of float64 bin totals as (integer N, exponent E): value N * 2**E."""
    nz = np.flatnonzero(acc)
    if nz.size == 0:
        return 0, 0
    mant, ex = np.frexp(acc[nz])
    m = (mant * 2.0**53).astype(np.int64).tolist()
    e = (ex.astype(np.int64) - 53 + (0 if scale_exp is None else scale_exp[nz])).tolist()
    emin = min(e)
    return sum(mi << (ei - emin) for mi, ei in zip(m, e, strict=True)), emin


def _add(total: tuple[int, int], part: tuple[int, int]) -> tuple[int, int]:
    (n1, e1), (n2, e2) = total, part
    if n2 == 0:
        return total
    if n1 == 0:
        return part
    em = min(e1, e2)
    return (n1 << (e1 - em)) + (n2 << (e2 - em)), em


def sum_f32(x: np.ndarray) -> Fraction | float:
    """Exact sum of a float32 array; the cost does not depend on the exponent range.

    Per chunk of 2**16 elements with largest magnitude below 2**E: every value at or above
    2**(E - 23) is a multiple of 2**g (g = E - 46) below 2**46 units, so adding
    sigma = 1.5 * 2**(g + 52) in float64 and summing the bit patterns as int64 gives those
    values' sum exactly (the sigma trick, one dense pass). Values below 2**(E - 23) are rounded
    by it too; when they are few, their exact residuals are summed on the side, and when they
    are many (a chunk spanning more than 23 binades), the chunk is summed instead in
    (sign, exponent field) bins by ``np.bincount``, exact whatever the range.
    """
    x = np.ascontiguousarray(x, dtype=np.float32).ravel()
    n = x.size
    if n == 0:
        return Fraction(0)
    bits = x.view(np.uint32)
    c = min(n, _CHUNK)
    t = np.empty(c, dtype=np.float64)
    idx = np.empty(c, dtype=np.int64)
    ab = np.empty(c, dtype=np.uint32)
    mk = np.empty(c, dtype=bool)
    acc = np.zeros(512)
    in_acc = 0
    total = (0, 0)
    residuals: list[np.ndarray] = []
    for c0 in range(0, n, _CHUNK):
        xc = x[c0 : c0 + _CHUNK]
        k = xc.size
        tt = t[:k]
        hi, lo = float(xc.max()), float(xc.min())
        big = max(abs(hi), abs(lo))
        if big == 0:
            continue
        if math.isfinite(big):
            g = math.frexp(big)[1] - 46  # big < 2**(g + 46)
            thr = 2.0 ** (g + 23)  # values at or above it are multiples of 2**g
            few = None
            if (lo > 0 or hi < 0) and min(abs(hi), abs(lo)) >= thr:
                few = np.empty(0, dtype=np.int64)
            elif thr > 2.0**-149:
                a, m = ab[:k], mk[:k]
                np.bitwise_and(bits[c0 : c0 + _CHUNK], np.uint32(0x7FFFFFFF), out=a)
                np.subtract(a, np.uint32(1), out=a)  # zeros wrap to the top
                np.less(a, np.float32(thr).view(np.uint32) - np.uint32(1), out=m)
                cnt = int(np.count_nonzero(m))
                if cnt <= k >> 4:
                    few = np.flatnonzero(m) if cnt else np.empty(0, dtype=np.int64)
            else:
                few = np.empty(0, dtype=np.int64)
            if few is not None:
                sigma = np.float64(1.5 * 2.0 ** (g + 52))
                np.copyto(tt, xc)
                np.add(tt, sigma, out=tt)
                s = int(tt.view(np.int64).sum(dtype=np.int64)) - k * int(sigma.view(np.int64))
                s = ((s + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)
                total = _add(total, (s, g))
                if few.size:
                    xs = xc[few].astype(np.float64)
                    residuals.append(xs - ((xs + sigma) - sigma))  # exact
                continue
        if in_acc + k > _F32_FLUSH:
            total = _add(total, _bins_total(acc))
            acc[:] = 0
            in_acc = 0
        ix = idx[:k]  # preallocated: bincount would allocate (and fault) per call
        np.right_shift(bits[c0 : c0 + _CHUNK], np.uint32(23), out=ix, casting="unsafe")
        np.copyto(tt, xc)
        acc += np.bincount(ix, weights=tt, minlength=512)
        in_acc += k
    if acc[255] != 0 or acc[511] != 0 or np.isnan(acc[255]) or np.isnan(acc[511]):
        return _special(x)  # exponent field 255: infinities and NaN
    total = _add(total, _bins_total(acc))
    if residuals:
        r = sum_f64(np.concatenate(residuals))
        return _dyadic(*total) + r
    return _dyadic(*total)


def sum_f64(x: np.ndarray) -> Fraction | float:
    """Exact sum of a float64 array; the cost does not depend on the exponent range.

    Each value is split into a high part (pattern with the low 27 mantissa bits cleared) and a
    low part (x - high, exact); both are summed per (sign, exponent field of x) bin with
    ``np.bincount``, over four interleaved lanes so equal neighbours do not serialize. High
    parts at or above 2**960 are summed again scaled by 2**-64 (exact), so no bin overflows.
    """
    x = np.ascontiguousarray(x, dtype=np.float64).ravel()
    n = x.size
    if n == 0:
        return Fraction(0)
    bits = x.view(np.uint64)
    c = min(n, _CHUNK)
    idx = np.empty(c, dtype=np.uint64)
    hi = np.empty(c, dtype=np.float64)
    lo = np.empty(c, dtype=np.float64)
    lanes = (np.arange(c, dtype=np.uint64) % np.uint64(_LANES)) << np.uint64(12)
    nb = 4096 * _LANES
    top = np.zeros(nb, dtype=bool)  # bins of exponent fields >= 1984, either sign, every lane
    for base in range(0, nb, 2048):
        top[base + 1984 : base + 2048] = True
    acc_hi, acc_lo, acc_big = np.zeros(nb), np.zeros(nb), np.zeros(nb)
    in_acc = 0
    total = (0, 0)

    def flush(total: tuple[int, int]) -> tuple[int, int]:
        total = _add(total, _bins_total(acc_hi))
        total = _add(total, _bins_total(acc_big, np.full(nb, 64, dtype=np.int64)))
        return _add(total, _bins_total(acc_lo))

    for c0 in range(0, n, _CHUNK):
        bc = bits[c0 : c0 + _CHUNK]
        k = bc.size
        ix, h, lw = idx[:k], hi[:k], lo[:k]
        if in_acc + k > _F64_FLUSH:
            total = flush(total)
            acc_hi[:] = acc_lo[:] = acc_big[:] = 0
            in_acc = 0
        np.right_shift(bc, np.uint64(52), out=ix)
        np.bitwise_and(bc, _HI_MASK, out=h.view(np.uint64))
        with np.errstate(invalid="ignore"):
            np.subtract(x[c0 : c0 + _CHUNK], h, out=lw)
        np.bitwise_or(ix, lanes[:k], out=ix)
        ii = ix.view(np.int64)
        rh = np.bincount(ii, weights=h, minlength=nb)
        if rh[top].any():  # huge values (or inf/NaN): their high parts again, scaled
            if (rh[2047::2048] != 0).any() or np.isnan(rh[2047::2048]).any():
                return _special(x)
            rh[top] = 0
            sel = np.flatnonzero(top[ii])
            acc_big += np.bincount(ii[sel], weights=h[sel] * 2.0**-64, minlength=nb)
        acc_hi += rh
        acc_lo += np.bincount(ii, weights=lw, minlength=nb)
        in_acc += k
    return _dyadic(*flush(total))
