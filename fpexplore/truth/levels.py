"""Exact float32 matrix products computed level by level, as far as a question needs them.

Rows spanning the whole float32 range need 14 digit levels a side and 75 dense BLAS products
for the whole exact product (`fpexplore.truth.ozaki`). Most of those products only decide bits
far below what a rounding or an error measurement looks at. `LeveledProduct` computes the
digit product coefficient by coefficient from the top, exactly: after ``L`` coefficients
(``L * (L + 1) / 2`` BLAS products) it holds their exact sum and a rigorous bound on the rest,
``k * 2**(2 - L*beta) * 2**(E_i + F_j)`` at output (i, j), with E_i and F_j the exponents of
row i of ``a`` and column j of ``b``. A `Truth` holding one asks for a further level when many
outputs are still undecided, and for the exact values of the few that are (`exact_at`: their
dot products summed exactly term by term), so every answer it gives is exact.

Why the bound holds: with the digits of `ozaki.digits`, coefficient s collects D_p G_q with
p + q = s in unit 2**(E_i + F_j - (s+2)*beta). At each of the k terms the pairs with
p + q >= L weigh at most 2**(-(L+2)*beta) * (sum_p |D_p|) * (sum_q |G_q|), and an element's
digits add up to at most ``digit_total`` (2**(beta+1) for beta >= 12: 24 bits touch at most
3 levels).
"""

from __future__ import annotations

import math

import numpy as np

from . import ozaki

_EXACT = 2.0**53
# An exact dot product term by term (`exact_dots`) costs about as much as this many float64
# BLAS multiply-adds per term (a dozen numpy passes over the products against GEMM's speed).
ELEMENTWISE_COST = 1000.0
_PLAN_SAMPLE = 8192  # outputs looked at to plan the levels of a larger product


def beta_for(k: int) -> int:
    """The widest digits whose coefficients stay exact in float64 at an inner dimension k."""
    for beta in range(26, 0, -1):
        t = ozaki.digit_total(beta, 1 << 20)
        if k * t * t <= _EXACT:
            return beta
    raise ValueError(f"no exact digit width for an inner dimension of {k}")


def exact_dots(x: np.ndarray, y: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> list:
    """Exact x[rows[t]] @ y[:, cols[t]] for each t, as an expansion (list of 1-D float64 arrays).

    The k products of each output are exact in float64 (float32 inputs); each output's terms
    are cut into fixed-point digits of w bits at offsets from its largest term, so every digit
    column sums exactly (k * 2**w <= 2**52 units).
    """
    k = x.shape[1]
    w = 52 - max(1, math.ceil(math.log2(max(k, 2))))
    xs = np.asarray(x, dtype=np.float64)
    ys = np.ascontiguousarray(np.asarray(y, dtype=np.float64).T)
    step = max(1, (1 << 21) // max(k, 1))
    chunks = []
    for c0 in range(0, rows.size, step):
        p = xs[rows[c0 : c0 + step]] * ys[cols[c0 : c0 + step]]
        amax = np.max(np.abs(p), axis=1, initial=0.0)
        e = np.frexp(amax)[1].astype(np.int64)[:, None]
        sums = []
        level = 0
        while True:
            level += 1
            sigma = np.ldexp(1.5, (e - level * w + 52).astype(np.int32))
            d = p + sigma
            d -= sigma
            p -= d
            sums.append(d.sum(axis=1))
            if not p.any():
                break
        chunks.append(sums)
    if not chunks:
        return [np.zeros(0)]
    zero = [np.zeros(c[0].size) for c in chunks]  # a chunk that needed fewer digit levels
    return [
        np.concatenate([c[lev] if lev < len(c) else z for c, z in zip(chunks, zero, strict=True)])
        for lev in range(max(len(c) for c in chunks))
    ]


class LeveledProduct:
    """The exact product of finite float32 matrices x (m, k) and y (k, n), top levels first."""

    def __init__(
        self, x: np.ndarray, y: np.ndarray, how: ozaki.Plan | None = None, levels: int = 1
    ) -> None:
        self.x, self.y = x, y
        self.m, self.k = x.shape
        self.n = y.shape[1]
        self.beta = beta_for(self.k)
        how = ozaki.plan_for(x, y) if how is None else how
        self.ea, self.span_a, self.eb, self.span_b = how.ea, how.span_a, how.eb, how.span_b
        self.whole_calls = how.calls  # BLAS products of the whole expansion in one go
        # powers of two as factors: scaling by them is exact (float32 values stay normal)
        pa = np.ldexp(1.0, self.ea.astype(np.int32))
        pb = np.ldexp(1.0, self.eb.astype(np.int32))
        self._res_a = x.astype(np.float64)
        self._res_a *= (1.0 / pa)[:, None]
        self._res_b = y.T.astype(np.float64)
        self._res_b *= (1.0 / pb)[:, None]
        self._pa, self._pb = pa, pb
        self._da: list[np.ndarray] = []
        self._db: list[np.ndarray] = []
        self.na = max(1, -(-self.span_a // self.beta))  # levels that hold every digit
        self.nb = max(1, -(-self.span_b // self.beta))
        self.coefficients: list[np.ndarray] = []  # exact values of coefficients 0..L-1
        # a zero row or column: exact zeros, with a bound of 0
        live_a = np.where(np.any(x != 0, axis=1), pa, 0.0)
        live_b = np.where(np.any(y != 0, axis=0), pb, 0.0)
        self._scale = live_a[:, None] * live_b[None, :]  # 2**(E_i + F_j)
        self._bound: np.ndarray | None = None
        for _ in range(levels):
            self.extend()

    @property
    def levels(self) -> int:
        return len(self.coefficients)

    @property
    def complete(self) -> bool:
        """True when the coefficients computed hold the whole product."""
        return self.levels >= self.na + self.nb - 1

    def _digit(self, side: str, p: int) -> np.ndarray:
        ds, res = (self._da, self._res_a) if side == "a" else (self._db, self._res_b)
        while len(ds) <= p:
            q = len(ds)
            sigma = 1.5 * 2.0 ** (52 - (q + 1) * self.beta)
            d = res + sigma
            d -= sigma
            res -= d
            d *= 2.0 ** ((q + 1) * self.beta)
            ds.append(d if side == "a" else d.T)  # BLAS takes the transpose as it is
        return ds[p]

    def extend(self) -> None:
        """Compute the next coefficient (s + 1 BLAS products for coefficient s)."""
        s = self.levels
        c: np.ndarray | None = None
        for p in range(max(0, s - self.nb + 1), min(s, self.na - 1) + 1):
            prod = self._digit("a", p) @ self._digit("b", s - p)
            if c is None:
                c = prod
            else:
                c += prod
        if c is None:
            c = np.zeros((self.m, self.n))
        # exact: an integer below 2**53 times a power of two (see ozaki.product)
        c *= (self._pa * 2.0 ** (-(s + 2) * self.beta))[:, None]
        c *= self._pb[None, :]
        self.coefficients.append(c)
        self._bound = None

    def bound(self) -> np.ndarray:
        """|product - sum of the coefficients computed| <= bound, elementwise (exact floats)."""
        if self._bound is None:
            if self.complete:
                self._bound = np.zeros((self.m, self.n))
            else:
                t = ozaki.digit_total(self.beta, 1 << 20)
                unit = 2.0 ** (-(self.levels + 2) * self.beta)
                self._bound = self._scale * (self.k * t * t * unit)
        return self._bound

    def extend_cost(self, ahead: int = 0) -> float:
        """BLAS multiply-adds of the next level (``ahead``: of the level that many after)."""
        s = self.levels + ahead
        pairs = min(s, self.na - 1) - max(0, s - self.nb + 1) + 1
        return float(max(pairs, 0)) * self.m * self.n * self.k

    def deepen(
        self, tol: np.ndarray, idx: np.ndarray | None = None, *, rigorous: bool = False
    ) -> None:
        """Compute the levels that the outputs ``idx`` (all when None) are expected to need.

        An output stays undecided with a probability of about (what is left) / ``tol`` (for
        a rounding: ``tol`` the gap between the format's values there). What is left is at
        most the bound, and in practice near the last coefficient computed times 2**-beta:
        the bound holds whatever the signs and digits, the rest of a sum of many terms of
        both signs is far smaller. Each further level divides both by 2**beta. Levels are
        added up to the depth that minimises their BLAS work plus `exact_cost` of the outputs
        expected to stay undecided. This only plans work: every answer is still decided by
        the bound, or exactly. ``rigorous``: the bound itself must fall below ``tol``.
        """
        if self.complete:
            return
        b = self.bound().reshape(-1)
        last = self.coefficients[-1].reshape(-1) if self.coefficients else b
        if idx is not None:
            b, last = b[idx], last[idx]
        # a plan needs no more than a sample: every 2**j-th output of the large arrays
        step = max(1, b.size // _PLAN_SAMPLE)
        if step > 1:
            b, last, tol = b[::step], last[::step], tol[::step]
        last = np.abs(last)
        left = self.na + self.nb - 1 - self.levels  # levels until the product is complete
        rest = b if rigorous else 2 * np.minimum(b, last * 2.0**-self.beta + b * 2.0**-16)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lq = np.log2(rest / tol)
        lq = np.where(b == 0, -np.inf, np.where(tol > 0, lq, np.inf))
        bins = np.clip(np.ceil(lq), -64, (left + 1) * self.beta).astype(np.int64) + 64
        hist = np.bincount(bins, minlength=1).astype(np.float64) * step
        at = np.arange(hist.size, dtype=np.float64) - 64  # log2 of rest / tol in each bin
        best, best_cost, work = 0, np.inf, 0.0
        for t in range(left + 1):
            if t:
                work += self.extend_cost(t - 1)
            over = at - self.beta * t  # log2 of what is left / tol, after t more levels
            stay = float(hist @ (over > 0 if rigorous else np.exp2(np.minimum(0.0, over))))
            cost = work + (self.exact_cost(round(stay)) if t < left else 0.0)
            if cost < best_cost:
                best, best_cost = t, cost
        for _ in range(best):
            self.extend()

    def exact_at(self, idx: np.ndarray) -> list[np.ndarray]:
        """The whole exact product at flat output indices ``idx``, as an expansion."""
        rows, cols = np.divmod(np.asarray(idx, dtype=np.int64), self.n)
        return exact_dots(self.x, self.y, rows, cols)

    def whole_cost(self) -> float:
        """The whole exact expansion in one go (`ozaki.product`), in BLAS multiply-adds."""
        return float(self.whole_calls) * self.m * self.n * self.k

    def exact_cost(self, count: int) -> float:
        """`exact_at` for ``count`` outputs, in BLAS multiply-adds."""
        return ELEMENTWISE_COST * count * self.k
