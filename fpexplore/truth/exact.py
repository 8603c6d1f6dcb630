"""Exact sums of float arrays with vectorized integer and float64 arithmetic.

Whole arrays (`sum_f32`, `sum_f64`) and dot products of float32 vectors (`dot_f32`) at a
cost that does not depend on the exponent range: every finite float is a multiple of the unit
of its (sign, exponent field) and below 2**(mantissa bits + 1) such units, so float64 sums
the values of one bin exactly; narrow chunks take the sigma trick instead (each function says
how). Rows (`row_sums`): mantissas that share an exponent are added per row (``np.bincount``
over exponent buckets, exact while every bucket stays below 2**53), and the few bucket totals
combined as Python integers.

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


def dyadic_ints(a: np.ndarray) -> tuple[np.ndarray, int]:
    """Finite floats as Python ints X (an object array) and one exponent E: a == X * 2**E."""
    mant, ex = np.frexp(np.asarray(a, dtype=np.float64))
    ints = (mant * 2.0**53).astype(np.int64)  # value = int * 2**(ex - 53), exactly
    nz = ints != 0
    e = int(ex[nz].min()) - 53 if nz.any() else 0
    shifts = np.where(nz, ex.astype(np.int64) - 53 - e, 0)
    pow2 = np.array([1 << int(v) for v in range(int(shifts.max(initial=0)) + 1)], dtype=object)
    return ints.astype(object) * pow2[shifts], e


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
    v = np.asarray(v, dtype=np.float64)
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


# -- range-independent exact sums of whole arrays (see the module docstring) ----------------

_CHUNK = 1 << 16  # float64 elements per chunk
_F32_FLUSH = 1 << 28  # elements per float32 bin accumulator: 2**24 units * 2**28 < 2**53
_CHUNK32 = 1 << 18  # float32 elements per chunk: fewer numpy calls
_ROW = 1 << 12  # int64 patterns summed per row: 2**12 values below 2**51 units each
_LEVEL = 51  # binades between the grids of two float32 levels
_STICKY = 8  # chunks sent to the bins without a look, after one that needed them
_F64_FLUSH = 1 << 25  # float64 high/low parts: below 2**27 units each, 2**27 * 2**25 < 2**53
_LANES = 4
_HI_MASK = np.uint64(~((1 << 27) - 1) & ((1 << 64) - 1))


def _bins_total(acc: np.ndarray, scale: int = 0) -> tuple[int, int]:
    """Exact sum of float64 bin totals times 2**scale as (integer N, exponent E): N * 2**E."""
    ints, e = dyadic_ints(acc[acc != 0])
    return int(ints.sum()), e + scale


def _add(total: tuple[int, int], part: tuple[int, int]) -> tuple[int, int]:
    (n1, e1), (n2, e2) = total, part
    if n2 == 0:
        return total
    if n1 == 0:
        return part
    em = min(e1, e2)
    return (n1 << (e1 - em)) + (n2 << (e2 - em)), em


def _grid_sum(t: np.ndarray, u: np.ndarray, g: int) -> int:
    """Sum of the values of ``t`` rounded to multiples of 2**g, in units of 2**g.

    Needs |t| <= 2**(g + 51): ``u = t + sigma`` (sigma = 1.5 * 2**(g + 52)) then lies in
    [2**(g + 52), 2**(g + 53)), where the float64 spacing is 2**g, so its bit pattern is that of
    sigma plus the rounded value in units (`_pattern_sum`).
    """
    np.add(t, 1.5 * 2.0 ** (g + 52), out=u)
    return _pattern_sum(u, g)


def _pattern_sum(u: np.ndarray, g: int) -> int:
    """Sum of ``(u - sigma) / 2**g`` over float64 values ``u`` in [2**(g + 52), 2**(g + 53)).

    sigma = 1.5 * 2**(g + 52); each term is an integer of magnitude at most 2**51, read off the
    bit patterns. The patterns are summed as int64 in rows of ``_ROW`` (below 2**63 in
    magnitude once sigma's pattern is taken off, whatever wraps).
    """
    k = u.size
    full = k - k % _ROW
    b = u.view(np.int64)
    sb = ((g + 1075) << 52) | (1 << 51)  # the bit pattern of sigma
    s = 0
    if full:
        rows = b[:full].reshape(-1, _ROW).sum(axis=1)
        rows -= np.int64(_wrap(_ROW * sb))  # int64 arrays wrap: each row's true sum is left
        s = sum(rows.tolist())
    if k > full:
        s += _wrap(int(b[full:].sum()) - (k - full) * sb)
    return s


def _scratch(n: int, chunk: int, *dtypes: type) -> list[np.ndarray]:
    """Empty arrays of ``min(n, chunk)`` elements, one per dtype: reused for every chunk."""
    return [np.empty(min(n, chunk), dtype=d) for d in dtypes]


def _float_pair(v: float) -> tuple[int, int]:
    """A finite float as (integer N, exponent E): value N * 2**E."""
    m, e = math.frexp(v)
    return int(m * 2.0**53), e - 53


def _wrap(v: int) -> int:
    """``v`` reduced modulo 2**64 into [-2**63, 2**63)."""
    return ((v + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def sum_f32(x: np.ndarray) -> Fraction | float:
    """Exact sum of a float32 array; the cost does not depend on the exponent range.

    Per chunk of 2**18 elements, the bit patterns give the largest magnitude (below 2**E) and
    the smallest nonzero one (a multiple of 2**U; every value of the chunk is then one too).
    Level 1 rounds every value to a multiple of 2**g (g = E - 51) by adding
    sigma = 1.5 * 2**(g + 52) in float64 and sums the bit patterns as int64 (`_grid_sum`):
    exact when g <= U (a chunk within 27 binades). Otherwise, when a second level 51 binades
    lower reaches U (a chunk within 78 binades), the residuals x - round(x) (exact, below
    2**(g - 1), multiples of 2**U) are summed by float64 itself where no partial sum can reach
    2**(U + 53) (within 63 binades), else the same way on the grid 2**(g - 51). Wider chunks
    are summed in bins of their float64 (sign, exponent field) by ``np.bincount``: every value
    of a bin is a multiple of the bin's unit and below 2**24 units, exact whatever the range;
    the next ``_STICKY`` chunks then go to the bins without looking at their range.
    Infinities and NaN are found from the largest magnitude, or in the bins of field 2047.
    """
    x = np.ascontiguousarray(x, dtype=np.float32).ravel()
    n = x.size
    if n == 0:
        return Fraction(0)
    bits = x.view(np.uint32)
    t, u, idx, ab = _scratch(n, _CHUNK32, np.float64, np.float64, np.int64, np.uint32)
    acc = np.zeros(4096)
    in_acc = 0
    total = (0, 0)
    binned = 0  # chunks left that go to the bins without a look at their range
    for c0 in range(0, n, _CHUNK32):
        xc = x[c0 : c0 + _CHUNK32]
        k = xc.size
        tt, uu = t[:k], u[:k]
        levels = 0
        if binned:
            binned -= 1
        else:
            a = ab[:k]
            np.bitwise_and(bits[c0 : c0 + _CHUNK32], np.uint32(0x7FFFFFFF), out=a)
            amax = int(a.max())
            if amax >= 0x7F800000:
                return _special(x)  # exponent field 255: infinities and NaN
            if amax == 0:
                continue
            amin = int(a.min())
            if amin == 0:  # zeros: wrap them to the top to find the smallest nonzero magnitude
                np.subtract(a, np.uint32(1), out=a)
                amin = int(a.min()) + 1
            e_top = max(amax >> 23, 1) - 126  # every |x| < 2**e_top
            e_ulp = max(amin >> 23, 1) - 150  # every x a multiple of 2**e_ulp
            g = e_top - _LEVEL
            if g <= e_ulp:
                levels = 1
            elif g - _LEVEL <= e_ulp:
                levels = 2
            else:
                binned = _STICKY
        np.copyto(tt, xc)
        if levels:
            total = _add(total, (_grid_sum(tt, uu, g), g))
            if levels == 2:
                np.subtract(uu, 1.5 * 2.0 ** (g + 52), out=uu)  # x rounded to 2**g: exact
                np.subtract(tt, uu, out=tt)  # the residuals, exact
                if k << (g - 1 - e_ulp) <= 1 << 53:  # float64 adds them exactly
                    total = _add(total, _float_pair(float(tt.sum())))
                else:
                    total = _add(total, (_grid_sum(tt, uu, g - _LEVEL), g - _LEVEL))
            continue
        if in_acc + k > _F32_FLUSH:
            total = _add(total, _bins_total(acc))
            acc[:] = 0
            in_acc = 0
        ix = idx[:k]  # preallocated: bincount would allocate (and fault) per call
        np.right_shift(tt.view(np.uint64), np.uint64(52), out=ix.view(np.uint64))
        acc += np.bincount(ix, weights=tt, minlength=4096)
        in_acc += k
    if acc[2047] != 0 or acc[4095] != 0 or np.isnan(acc[2047]) or np.isnan(acc[4095]):
        return _special(x)
    return _dyadic(*_add(total, _bins_total(acc)))


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
    idx, hi, lo, fields, huge = _scratch(n, c, np.uint64, np.float64, np.float64, np.uint64, bool)
    lanes = (np.arange(c, dtype=np.uint64) % np.uint64(_LANES)) << np.uint64(12)
    nb = 4096 * _LANES
    top = np.arange(nb) % 2048 >= 1984  # bins of exponent fields >= 1984, any sign and lane
    acc_hi, acc_lo, acc_big = np.zeros(nb), np.zeros(nb), np.zeros(nb)
    in_acc = 0
    total = (0, 0)

    def flush(total: tuple[int, int]) -> tuple[int, int]:
        total = _add(total, _bins_total(acc_hi))
        total = _add(total, _bins_total(acc_big, 64))
        return _add(total, _bins_total(acc_lo))

    for c0 in range(0, n, _CHUNK):
        bc = bits[c0 : c0 + _CHUNK]
        k = bc.size
        ix, h, lw, fld, big = idx[:k], hi[:k], lo[:k], fields[:k], huge[:k]
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
            np.bitwise_and(ix, np.uint64(0x7C0), out=fld)  # fields >= 1984: 0b11111xxxxxx
            np.equal(fld, np.uint64(0x7C0), out=big)
            sel = np.flatnonzero(big)
            acc_big += np.bincount(ii[sel], weights=h[sel] * 2.0**-64, minlength=nb)
        acc_hi += rh
        acc_lo += np.bincount(ii, weights=lw, minlength=nb)
        in_acc += k
    return _dyadic(*flush(total))


# -- exact dot products of float32 vectors (see the module docstring and `dot_f32`) ---------

_DOT_CHUNK = 1 << 17  # products per chunk
_BIN_BLOCK = 1 << 16  # significands (below 2**48) added to uint64 bins between flushes
_DOT_LEVELS = 3  # sigma levels at most (a fourth costs more than the bins)
_DOT_STICKY = 4  # chunks sent to the bins without a look, after one that needed them


def _dot_special(x: np.ndarray, y: np.ndarray) -> float:
    """IEEE value of a dot product with a NaN or infinite product (inf * 0 is NaN)."""
    with np.errstate(invalid="ignore"):
        return _special(np.multiply(x, y, dtype=np.float64))


def _dot_span(p: np.ndarray, w: np.ndarray) -> tuple[int, int] | None:
    """(F_max, F_min): float64 exponent fields of the largest and smallest nonzero |p|.

    None when every product is zero. ``w`` is a uint64 scratch array of p's size.
    """
    np.left_shift(p.view(np.uint64), np.uint64(1), out=w)  # 2|p|: the sign dropped
    top = int(np.maximum.reduce(w))
    if top == 0:
        return None
    low = int(np.minimum.reduce(w))
    if low == 0:  # zeros: wrap them to the top to find the smallest nonzero magnitude
        np.subtract(w, np.uint64(2), out=w)
        low = int(np.minimum.reduce(w)) + 2
    return top >> 53, low >> 53


def _dot_levels(p: np.ndarray, u: np.ndarray, e_top: int, levels: int) -> tuple[int, int]:
    """Exact sum of the products ``p`` (|p| < 2**e_top) by sigma levels, as (N, E).

    Level j rounds what is left to multiples of 2**g_j (g_j = e_top - 51 * j) and sums the
    rounded values from the bit patterns (`_pattern_sum`); the caller picks ``levels`` so
    that every product is a multiple of 2**g_levels, which leaves nothing. The residual
    r = p - round(p) is formed only when two more levels follow: the last level adds
    sigma_j directly as ``p + ((sigma_{j-1} + sigma_j) - u_{j-1})``, every step exact.
    ``p`` is overwritten.
    """
    g = e_top - _LEVEL
    sig = 1.5 * 2.0 ** (g + 52)
    total = (_grid_sum(p, u, g), g)
    for lev in range(1, levels):
        g2 = g - _LEVEL
        sig2 = 1.5 * 2.0 ** (g2 + 52)
        if lev < levels - 1:  # keep the residual for the levels below
            np.subtract(sig, u, out=u)
            np.add(p, u, out=p)
            np.add(p, sig2, out=u)
        else:
            np.subtract(sig + sig2, u, out=u)  # sigma_{j-1} + sigma_j is exact
            np.add(p, u, out=u)
        total = _add(total, (_pattern_sum(u, g2), g2))
        g, sig = g2, sig2
    return total


def _weighted_int(w: np.ndarray) -> int:
    """sum(w[i] * 2**i) for an int64 array with |w| < 2**62, as a Python integer.

    The fields i = 64 m + r (one r) do not overlap: each residue r is one ``int.from_bytes``
    of the (biased, so non-negative) values, no loop over the elements. In `dot_f32`, |w|
    grows by less than 2**33 per flush of the bins: below 2**62 up to 2**45 products.
    """
    nz = np.flatnonzero(w)
    if nz.size == 0:
        return 0
    lo = int(nz[0])
    v = w[lo : int(nz[-1]) + 1]
    rows = -(-v.size // 64)
    bias = 1 << 62
    u = np.full(64 * rows, bias, dtype=np.uint64)
    u[: v.size] = (v + bias).astype(np.uint64)
    b = u.reshape(rows, 64).T.copy().tobytes()  # row r: the fields 64 m + r
    step = 8 * rows
    total = sum(int.from_bytes(b[r * step : (r + 1) * step], "little") << r for r in range(64))
    return (total - bias * ((1 << (64 * rows)) - 1)) << lo


def dot_f32(x: np.ndarray, y: np.ndarray) -> Fraction | float:
    """Exact dot product of two float32 vectors of equal length.

    Per chunk of ``_DOT_CHUNK`` products (float64, exact), the span from the largest to the
    smallest nonzero magnitude picks the path: within 51 * ``_DOT_LEVELS`` binades, sigma
    levels (`_dot_levels`: one float64 add and one int64 sum for the first level, three or
    four passes for each further one); wider chunks go to 4096 bins of the products' (sign,
    exponent field), their 48-bit significands added as uint64 by ``np.add.at`` (2**16 of
    them fit a bin) and flushed into two uint64 accumulators of 32-bit halves; the next
    ``_DOT_STICKY`` chunks then go to the bins without a look at their span. NaN and
    infinite products (IEEE, inf * 0 giving NaN) are found from the span or in the bins of
    field 2047.
    """
    x = np.ascontiguousarray(x, dtype=np.float32).ravel()
    y = np.ascontiguousarray(y, dtype=np.float32).ravel()
    n = x.size
    if n == 0:
        return Fraction(0)
    c = min(n, _DOT_CHUNK)
    p, u = _scratch(n, c, np.float64, np.float64)
    total = (0, 0)
    acc: list[np.ndarray] = []  # bins of the chunk, then accumulators of 32-bit halves
    binned = 0  # chunks left that go to the bins without a look at their span
    with np.errstate(invalid="ignore"):  # inf * 0 is NaN, as IEEE says
        for c0 in range(0, n, _DOT_CHUNK):
            xc, yc = x[c0 : c0 + _DOT_CHUNK], y[c0 : c0 + _DOT_CHUNK]
            k = xc.size
            pp, uu = p[:k], u[:k]
            np.multiply(xc, yc, out=pp, dtype=np.float64)  # exact
            if binned:
                binned -= 1
            else:
                span = _dot_span(pp, uu.view(np.uint64))
                if span is None:
                    continue
                f_top, f_low = span
                if f_top == 2047:
                    return _dot_special(x, y)
                e_top = f_top - 1022  # every |p| < 2**e_top
                # every p a multiple of 2**e_ulp: 48-bit significands, float32 ulps >= 2**-149
                e_ulp = max(f_low - 1070, -298)
                levels = max(1, -((e_ulp - e_top) // _LEVEL))
                if levels <= _DOT_LEVELS:
                    total = _add(total, _dot_levels(pp, uu, e_top, levels))
                    continue
                binned = _DOT_STICKY
            if not acc:
                acc = [np.zeros(4096, dtype=np.uint64) for _ in range(4)]
                ix = np.empty(c, dtype=np.uint64)
            bins, acc_hi, acc_lo, scratch = acc
            bits, m, ii = pp.view(np.uint64), uu.view(np.uint64), ix[:k]
            np.right_shift(bits, np.uint64(52), out=ii)  # (sign, exponent field)
            np.left_shift(bits, np.uint64(12), out=m)
            np.right_shift(m, np.uint64(17), out=m)  # the fraction; its low 5 bits are zero
            np.bitwise_or(m, np.uint64(1 << 47), out=m)  # the 48-bit significand
            iv = ii.view(np.int64)
            for s0 in range(0, k, _BIN_BLOCK):
                # a bin stays below 2**64: at most 2**16 significands below 2**48
                np.add.at(bins, iv[s0 : s0 + _BIN_BLOCK], m[s0 : s0 + _BIN_BLOCK])
                np.right_shift(bins, np.uint64(32), out=scratch)
                acc_hi += scratch
                np.bitwise_and(bins, np.uint64(0xFFFFFFFF), out=scratch)
                acc_lo += scratch
                bins[:] = 0
    if acc:
        _, acc_hi, acc_lo, _ = acc
        if acc_hi[2047] or acc_lo[2047] or acc_hi[4095] or acc_lo[4095]:
            return _dot_special(x, y)
        for a in (acc_hi, acc_lo):
            a[0] = a[2048] = 0  # zero products
        # field F holds significands in units of 2**(F - 1070); positive minus negative,
        # the high halves 32 fields up: sum(w[F] * 2**F) is the total in units of 2**-1070
        w = np.zeros(2048 + 32, dtype=np.int64)
        w[:2048] = acc_lo[:2048].astype(np.int64) - acc_lo[2048:].astype(np.int64)
        w[32:] += acc_hi[:2048].astype(np.int64) - acc_hi[2048:].astype(np.int64)
        total = _add(total, (_weighted_int(w), -1070))
    return _dyadic(*total)
