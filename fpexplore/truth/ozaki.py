"""Exact matrix and dot products of float32 arrays on top of float64 BLAS (the Ozaki scheme).

Each row of ``a`` (each column of ``b``) is split into integer digit matrices (`digits`, each
extracted exactly with the sigma trick) whose products keep every partial sum an integer
number of units below 2**53, so float64 arithmetic computes it exactly in any order, with or
without FMA. The exact product is an *expansion*: a list of float64 arrays whose elementwise
sum (in exact arithmetic) is the result.

float32 products and sums never overflow or underflow float64 here (|a*b| < 2**256 and units
stay above 2**-1000), which the splitting relies on; non-finite inputs are handled by the
caller.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

# -- wide exponent ranges: digit polynomials multiplied by Karatsuba -----------------------------
#
# Row i of ``a`` is the polynomial sum_p D_p[i] * X**p scaled by 2**(E_i - beta), X = 2**-beta,
# with integer digit matrices |D_p| <= 2**beta (column j of ``b`` likewise). The exact product
# is the polynomial product: coefficient s is sum_{p+q=s} D_p @ G_q, an integer matrix in unit
# 2**(E_i + F_j - (s + 2) * beta). Karatsuba's identity (P_lo + X**h P_hi)(Q_lo + X**h Q_hi) =
# L + X**h (M - L - H) + X**2h H with L = P_lo Q_lo, H = P_hi Q_hi, M = (P_lo + P_hi)(Q_lo +
# Q_hi) trades a product for digit growth; `plan` picks beta and the recursion with the fewest
# BLAS calls whose bound keeps every intermediate an integer below 2**53, so float64 BLAS and
# the additions that combine the products are exact in any order, with or without FMA. Rows
# spanning the whole float32 range (277 bits) take 75 calls; narrow rows (normal, uniform,
# log-normal data: 2 or 3 levels) 3 to 7. A BLAS call is exact only over terms that share one
# unit at each output, which follows rows and columns but not elements, so no digit pair can
# be skipped: `fpexplore.truth.matmul` computes wide products level by level instead
# (`fpexplore.truth.levels`), as a rounding needs only the top levels for nearly every output.

_EXACT = 2.0**53


def row_exponents(x: np.ndarray) -> tuple[np.ndarray, int]:
    """(E, R): |x[i, :]| < 2**E_i (E_i = 0 for zero rows), and R the most bits a row spans.

    R = max over rows of E_i minus the exponent of the row's lowest set bit (0 for zero rows).
    """
    if x.dtype == np.float32:  # from the bits: fewer passes than frexp on float64
        u = np.ascontiguousarray(x).view(np.uint32) & np.uint32(0x7FFFFFFF)
        ef = (u >> np.uint32(23)).astype(np.int32)
        man = (u & np.uint32(0x7FFFFF)) | np.where(ef > 0, np.uint32(0x800000), np.uint32(0))
        low = man & (~man + np.uint32(1))  # the lowest set bit of the significand
        tz = np.frexp(low.astype(np.float32))[1].astype(np.int32) - 1
        lowpos = np.where(man != 0, np.maximum(ef, 1) - 150 + tz, 1 << 30)  # its exponent
        umax = u.max(axis=1, initial=0)
        e = np.frexp(umax.view(np.float32).astype(np.float64))[1].astype(np.int64)
        lowest = lowpos.min(axis=1, initial=1 << 30)
        return e, int(np.where(umax > 0, e - lowest, 0).max(initial=0))
    v = np.asarray(x, dtype=np.float64)
    amax = np.max(np.abs(v), axis=1, initial=0.0)
    e = np.frexp(amax)[1].astype(np.int64)
    m, ex = np.frexp(v)
    mi = (m * 2.0**53).astype(np.int64)
    low = np.frexp((mi & -mi).astype(np.float64))[1].astype(np.int64) - 1  # trailing zeros
    low += ex.astype(np.int64) - 53
    low = np.where(mi != 0, low, np.int64(1 << 30))
    lowest = low.min(axis=1, initial=1 << 30)
    span = np.where(amax > 0, e - lowest, 0)
    return e, int(span.max(initial=0))


def digits(x: np.ndarray, e: np.ndarray, beta: int, levels: int) -> list[np.ndarray]:
    """Integer digit matrices D_0..D_{levels-1}: x[i] = sum_p D_p[i] * 2**(E_i - (p+1)*beta).

    |D_0| <= 2**beta, |D_p| <= 2**(beta - 1) for p > 0 (round to nearest at every level).
    ``levels`` must cover the rows' spans (`row_exponents`), and every element's digits must
    add up in magnitude to at most `digit_total` (what `plan` relies on); both are checked.
    """
    r = np.ldexp(np.asarray(x, dtype=np.float64), (-e)[:, None].astype(np.int32))
    out = []
    total = np.zeros_like(r)
    for p in range(levels):
        sigma = 1.5 * 2.0 ** (52 - (p + 1) * beta)
        d = r + sigma
        np.subtract(d, sigma, out=d)
        np.subtract(r, d, out=r)
        d *= 2.0 ** ((p + 1) * beta)
        total += np.abs(d)
        out.append(d)
    if r.any() or total.max(initial=0.0) > digit_total(beta, levels):
        raise AssertionError("digit levels do not cover the rows")  # a bug, never data
    return out


def digit_total(beta: int, levels: int, mbits: int = 24) -> float:
    """Bound on sum_p |D_p| of one element of ``mbits`` significant bits.

    Level p rounds the residual to a multiple of 2**-(p+1)*beta (scaled row), so an element
    whose top bit is 2**t has nonzero digits only at levels with (p+1)*beta >= -t-1 (else it
    is below half a unit) and p*beta < mbits-1-t (below, its residual is a multiple of the
    unit, hence zero): at most ceil(mbits/beta) + 1 levels. The first is at most 2**beta, later
    ones at most 2**(beta-1) (the residual after rounding to nearest).
    """
    c = min(levels, -(-mbits // beta) + 1)
    return 2.0**beta + (c - 1) * 2.0 ** (beta - 1)


@functools.lru_cache(maxsize=1 << 16)
def _cost(np_: int, nq: int, cut: int) -> int:
    """BLAS calls of `polymul` for digit polynomials of np_ and nq levels."""
    if np_ == 0 or nq == 0:
        return 0
    if min(np_, nq) <= cut:
        return np_ * nq
    h = (max(np_, nq) + 1) // 2
    if np_ <= h:
        return _cost(np_, h, cut) + _cost(np_, nq - h, cut)
    if nq <= h:
        return _cost(h, nq, cut) + _cost(np_ - h, nq, cut)
    return 2 * _cost(h, h, cut) + _cost(np_ - h, nq - h, cut)


@functools.lru_cache(maxsize=1 << 16)
def _bound(np_: int, nq: int, cut: int, k: int, a: float, b: float) -> float:
    """A bound on every magnitude `polymul` forms (digits bounded by a and b, in units).

    Every value formed is a sum of distinct pair products D_p @ G_q (each at most k*a*b per
    output) of one coefficient of a product the recursion forms: at most min(np_, nq) pairs
    for a coefficient and its partial sums, 3 * h for M - L (= P_lo Q_hi + P_hi Q_lo +
    P_hi Q_hi) and its further partial sums; the recursion adds the children's bounds (whose
    Karatsuba sums have digits up to 2a and 2b).
    """
    if np_ == 0 or nq == 0:
        return 0.0
    own = min(np_, nq) * k * a * b
    if min(np_, nq) <= cut:
        return own
    h = (max(np_, nq) + 1) // 2
    if np_ <= h:
        kids = (_bound(np_, h, cut, k, a, b), _bound(np_, nq - h, cut, k, a, b))
    elif nq <= h:
        kids = (_bound(h, nq, cut, k, a, b), _bound(np_ - h, nq, cut, k, a, b))
    else:
        kids = (
            _bound(h, h, cut, k, a, b),
            _bound(np_ - h, nq - h, cut, k, a, b),
            _bound(h, h, cut, k, 2 * a, 2 * b),
            3 * h * k * a * b,
        )
    return max(own, *kids)


@functools.lru_cache(maxsize=1 << 12)
def plan(k: int, span_a: int, span_b: int) -> tuple[int, int, int, int]:
    """(beta, levels of a, levels of b, cut) with the fewest BLAS calls whose bound holds.

    ``cut``: polynomials with at most this many levels on one side are multiplied pair by
    pair (schoolbook); longer ones split by Karatsuba. None fits when k > 2**51.

    Two bounds hold for every magnitude formed (either suffices): `_bound`, from the digit
    bounds and the recursion, and k * T_a * T_b with T the `digit_total`: every value formed
    is, at each output, a sum over k of products P_c Q_c' in which each digit of an element
    of ``a`` is used at most once (the Karatsuba sums P_lo + P_hi add disjoint levels, and a
    coefficient of a product pairs each c with one c'; M - L pairs a digit of P_hi with one
    digit of Q_lo and one of Q_hi, which together are at most T_b).
    """
    best: tuple[int, int, int, int, int] | None = None
    for beta in range(26, 0, -1):
        na = max(1, -(-span_a // beta))
        nb = max(1, -(-span_b // beta))
        whole = k * digit_total(beta, na) * digit_total(beta, nb) <= _EXACT
        # a Karatsuba step trades one product for a few passes over the arrays: below
        # k = 128 the products are too cheap for that to pay at two levels a side
        for cut in (1, 2, 3, 4, 6, 8, 1 << 30) if k >= 128 else (2, 3, 4, 6, 8, 1 << 30):
            if not whole and _bound(na, nb, cut, k, 2.0**beta, 2.0**beta) > _EXACT:
                continue
            calls = _cost(na, nb, cut)
            if best is None or calls < best[0]:
                best = (calls, beta, na, nb, cut)
        if whole:  # every cut fits; narrower digits only add levels
            break
    if best is None:
        raise ValueError(f"no exact plan for an inner dimension of {k}")
    return best[1], best[2], best[3], best[4]


def _acc(res: list, i: int, c: np.ndarray | None, sign: int = 1) -> None:
    """res[i] += sign * c in place, None standing for zero (c itself is taken, not copied)."""
    if c is None:
        return
    if res[i] is None:
        res[i] = c if sign > 0 else np.negative(c)
    elif sign > 0:
        res[i] += c
    else:
        res[i] -= c


def polymul(pa: list[np.ndarray], pb: list[np.ndarray], cut: int) -> list[np.ndarray | None]:
    """Coefficients of the product of two digit polynomials (matrix coefficients), exactly.

    Exact when `_bound` for the same shape is at most 2**53 (`plan` picks such a shape).
    Coefficients that are zero throughout come back as None.
    """
    na, nb = len(pa), len(pb)
    res: list[np.ndarray | None] = [None] * (na + nb - 1)
    if min(na, nb) <= cut:
        za = [not p.any() for p in pa]
        zb = [not q.any() for q in pb]
        for i, p in enumerate(pa):
            for j, q in enumerate(pb):
                if not (za[i] or zb[j]):
                    _acc(res, i + j, np.matmul(p, q))
        return res
    h = (max(na, nb) + 1) // 2
    if na <= h or nb <= h:  # one side short: split the long one, no Karatsuba step
        if na <= h:
            parts = [(0, polymul(pa, pb[:h], cut)), (h, polymul(pa, pb[h:], cut))]
        else:
            parts = [(0, polymul(pa[:h], pb, cut)), (h, polymul(pa[h:], pb, cut))]
        for off, coef in parts:
            for s, c in enumerate(coef):
                _acc(res, off + s, c)
        return res
    sa = [pa[i] + pa[h + i] if h + i < na else pa[i] for i in range(h)]
    sb = [pb[i] + pb[h + i] if h + i < nb else pb[i] for i in range(h)]
    low = polymul(pa[:h], pb[:h], cut)
    high = polymul(pa[h:], pb[h:], cut)
    mid = polymul(sa, sb, cut)
    del sa, sb
    for coef in (low, high):  # mid = M - L - H first: it reads L and H
        for s, c in enumerate(coef):
            _acc(mid, s, c, -1)
    for off, coef in ((0, low), (2 * h, high), (h, mid)):
        for s, c in enumerate(coef):
            if off + s < len(res):
                _acc(res, off + s, c)
    return res


class Plan(NamedTuple):
    """How `product` multiplies: digit width, row exponents and levels per side, recursion."""

    beta: int
    ea: np.ndarray
    eb: np.ndarray
    na: int
    nb: int
    cut: int
    span_a: int = 0  # the most bits a row of ``a`` (a column of ``b``) spans
    span_b: int = 0

    @property
    def calls(self) -> int:
        """BLAS calls (each an m x k by k x n float64 product)."""
        return _cost(self.na, self.nb, self.cut)


def plan_for(x: np.ndarray, y: np.ndarray) -> Plan:
    """The `Plan` for x @ y (finite float32 matrices): the caller guards its work with it."""
    ea, span_a = row_exponents(x)
    eb, span_b = row_exponents(y.T)
    beta, na, nb, cut = plan(x.shape[1], span_a, span_b)
    return Plan(beta, ea, eb, na, nb, cut, span_a, span_b)


def product(x: np.ndarray, y: np.ndarray, how: Plan | None = None) -> list[np.ndarray]:
    """The exact x @ y of finite float32 matrices as a float64 expansion (one term per level).

    Checks nothing about size; the caller guards the work (`plan_for`).
    """
    if x.shape[1] <= 2:  # a product of float32 values is exact in float64: one term per k
        xs, ys = x.astype(np.float64), y.astype(np.float64)
        return [xs[:, t : t + 1] * ys[t : t + 1, :] for t in range(x.shape[1])]
    how = plan_for(x, y) if how is None else how
    beta = how.beta
    pa = digits(x, how.ea, beta, how.na)
    pb = [np.ascontiguousarray(d.T) for d in digits(y.T, how.eb, beta, how.nb)]
    coef = polymul(pa, pb, how.cut)
    del pa, pb
    col = np.ldexp(1.0, how.eb.astype(np.int32))[None, :]
    out = []
    for s, c in enumerate(coef):
        c = np.zeros((x.shape[0], y.shape[1])) if c is None else c
        if s and not c.any():
            continue
        # exact: an integer below 2**53 times powers of two; the unit of a nonzero coefficient
        # is at least 2**(-149 - 149 - 2 * beta) (the lowest bits of float32), far above
        # float64's subnormals, and at most 2**256
        c *= np.ldexp(1.0, (how.ea - (s + 2) * beta).astype(np.int32))[:, None]
        c *= col
        out.append(c)
    return out
