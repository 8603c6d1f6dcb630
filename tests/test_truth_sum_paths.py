"""The float32 whole-array sum's paths against Fraction arithmetic, chunk by chunk.

``exact.sum_f32`` picks a path per chunk from the chunk's exponent span: one sigma level
(within 27 binades), two levels with the residuals added in float64 or on a second grid
(within 78), or bins by exponent (wider, and the chunks after such a one). With small chunks
and rows (monkeypatched), one array of a few thousand values crosses every path, its chunk
tails and rows, ties at the rounding of the first level, zeros, +-max and subnormals;
thousands of arrays run in a few seconds. The oracle adds integer mantissas exactly.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from exact_oracles import frac_sum

import fpexplore.truth as T
from fpexplore.truth import exact

F32_MAX = float(np.finfo(np.float32).max)
TINY = 2.0**-149


def ieee_sum(v: np.ndarray) -> float | None:
    """The IEEE result of a sum with a special term, or None when every term is finite."""
    v = np.asarray(v, dtype=np.float64)
    if np.isnan(v).any():
        return math.nan
    pos, neg = bool((v == np.inf).any()), bool((v == -np.inf).any())
    if pos and neg:
        return math.nan
    if pos or neg:
        return math.inf if pos else -math.inf
    return None


def chunk(rng: np.random.Generator, n: int, kind: int, extra: int | None = None) -> np.ndarray:
    """n finite float32 values whose exponent span picks one path of ``sum_f32``.

    Spans: 0-27 binades (kinds 0, 1), 28-62 (2, 3), 72-78 (4, 5: beyond the float64
    residual sum for chunks of 1000 values or more), 79-277 (6, 7); odd kinds mix signs.
    ``extra`` adds zeros, ties, +-max and subnormals, or cancellation (random when None).
    """
    top = int(rng.integers(-149, 129))
    sign = rng.choice([-1.0, 1.0], n) if kind % 2 else np.ones(n) * rng.choice([-1.0, 1.0])
    mant = rng.uniform(1, 2, n)
    if kind in (0, 1):  # within 27 binades: one level
        span = int(rng.integers(0, 28))
    elif kind in (2, 3):  # 28 to 62: two levels, residuals in float64
        span = int(rng.integers(28, 63))
    elif kind in (4, 5):  # 72 to 78: two levels on two grids
        span = int(rng.integers(72, 79))
    else:  # anything up to the whole range: the bins
        span = int(rng.integers(79, 278))
    e = top - rng.integers(0, span + 1, n)
    with np.errstate(over="ignore", under="ignore"):
        x = (sign * np.ldexp(mant, e)).astype(np.float32)
    x[~np.isfinite(x)] = np.float32(F32_MAX)
    # the span's ends exactly, so the chunk takes the intended path more often
    x[0] = np.float32(min(math.ldexp(1.99, top), F32_MAX))
    x[-1] = np.float32(min(max(math.ldexp(1.0, top - span), TINY), F32_MAX))
    extra = int(rng.integers(0, 6)) if extra is None else extra
    if extra == 1:  # zeros beside the values
        x[rng.integers(0, n, max(1, n // 10))] = 0
    elif extra == 2:  # ties at the first level's rounding: odd multiples of 2**(g - 1)
        g = max(top + 1, -125) - 51
        odd = rng.integers(0, 1 << 20, n // 4) * 2 + 1
        with np.errstate(over="ignore", under="ignore"):
            ties = (odd * 2.0 ** (g - 1) * rng.choice([-1.0, 1.0], n // 4)).astype(np.float32)
        x[1 : 1 + n // 4] = np.where(np.isfinite(ties), ties, 0)
    elif extra == 3:  # +-max and the smallest subnormals
        x[rng.integers(0, n, 3)] = np.float32(F32_MAX) * rng.choice([-1, 1], 3)
        x[rng.integers(0, n, 3)] = np.float32(TINY) * rng.choice([-1, 1], 3)
    elif extra == 4:  # cancellation to exactly zero
        h = n // 2
        x[h : 2 * h] = -x[:h]
    return x


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 1000 values, rows of 256 (3 rows and a tail), 2 chunks after a binned one."""
    monkeypatch.setattr(exact, "_CHUNK32", 1000)
    monkeypatch.setattr(exact, "_ROW", 256)
    monkeypatch.setattr(exact, "_STICKY", 2)


def test_every_path_against_fractions(small_chunks):
    rng = np.random.default_rng(101)
    for i in range(1500):
        nchunks = int(rng.integers(1, 5))
        parts = [chunk(rng, 1000, int(rng.integers(0, 8))) for _ in range(nchunks)]
        parts.append(chunk(rng, int(rng.integers(1, 1000)), i % 8))  # a tail chunk
        x = np.concatenate(parts)
        assert exact.sum_f32(x) == frac_sum(x), i


def test_paths_are_taken(small_chunks, monkeypatch):
    """The generator reaches each path: count the grids and bins used per chunk kind."""
    calls: dict[str, int] = {"grid": 0, "float": 0, "bins": 0}
    grid, pair, bins = exact._grid_sum, exact._float_pair, np.bincount

    def count(name, f):
        def wrapped(*a, **k):
            calls[name] += 1
            return f(*a, **k)

        return wrapped

    monkeypatch.setattr(exact, "_grid_sum", count("grid", grid))
    monkeypatch.setattr(exact, "_float_pair", count("float", pair))
    monkeypatch.setattr(exact.np, "bincount", count("bins", bins))
    rng = np.random.default_rng(102)
    seen = {}
    for kind in range(8):
        for name in calls:
            calls[name] = 0
        for _ in range(40):
            x = chunk(rng, 1000, kind, extra=0)
            assert exact.sum_f32(x) == frac_sum(x)
        seen[kind] = dict(calls)
    assert seen[0]["grid"] == 40 and seen[0]["float"] == seen[0]["bins"] == 0
    assert seen[2]["float"] > 20 and seen[2]["bins"] == 0
    assert seen[4]["grid"] > 60 and seen[4]["float"] < 20 and seen[4]["bins"] == 0
    assert seen[6]["bins"] > 10


def test_bins_then_narrow_chunks_and_back(small_chunks):
    """Narrow chunks right after a wide one go to the bins; later ones to the levels again."""
    rng = np.random.default_rng(103)
    for i in range(150):
        kinds = [6] + [int(k) for k in rng.integers(0, 6, 5)] + [7, 0, 2, 4]
        x = np.concatenate([chunk(rng, 1000, k) for k in kinds])
        assert exact.sum_f32(x) == frac_sum(x), i
        assert exact.sum_f32(x[::-1]) == frac_sum(x), i


def test_specials_in_every_path(small_chunks):
    rng = np.random.default_rng(104)
    specials = np.float32([np.inf, -np.inf, np.nan])
    for i in range(600):
        kinds = [int(k) for k in rng.integers(0, 8, 4)]
        x = np.concatenate([chunk(rng, 1000, k) for k in kinds])
        pos = rng.integers(0, x.size, int(rng.integers(1, 4)))
        x[pos] = rng.choice(specials, pos.size)
        got = exact.sum_f32(x)
        want = ieee_sum(x)
        assert isinstance(got, float) and want is not None
        assert (math.isnan(got) and math.isnan(want)) or got == want, (i, got, want)


def test_default_chunks_on_long_arrays():
    """The real chunk and row sizes: arrays over two chunks, every family of paths."""
    rng = np.random.default_rng(105)
    n = exact._CHUNK32
    for kinds in ((0, 2), (4, 6), (6, 1), (3, 5)):
        parts = [chunk(rng, n, kinds[0]), chunk(rng, n // 3 + 17, kinds[1])]
        x = np.concatenate(parts)
        assert exact.sum_f32(x) == frac_sum(x), kinds
    for same in (F32_MAX, -F32_MAX, 1.75 * 2.0**-100, 2.0**-149):  # rows of equal signs at the top
        x = np.full(n + 3, np.float32(same))
        assert exact.sum_f32(x) == frac_sum(x) == (n + 3) * Fraction(float(np.float32(same)))
    lognormal = (rng.lognormal(0.0, 3.0, n + 5) * rng.choice([-1.0, 1.0], n + 5)).astype(np.float32)
    assert exact.sum_f32(lognormal) == frac_sum(lognormal)


def test_half_formats_and_axis_sums_take_the_same_paths(small_chunks):
    rng = np.random.default_rng(106)
    for i in range(200):
        h = (rng.standard_normal(2500) * np.exp2(rng.integers(-24, 14, 2500))).astype(np.float16)
        h = h[np.isfinite(h)]
        assert T.sum(h).exact == frac_sum(h.astype(np.float32)), i
    rows = np.stack([chunk(rng, 5000, k) for k in range(8)])  # long rows: one sum_f32 each
    got = T.sum(rows, axis=1).exact
    assert [got[r] for r in range(8)] == [frac_sum(r) for r in rows]
    assert T.mean(rows[2]).exact == frac_sum(rows[2]) / rows.shape[1]


def test_float64_huge_values_beside_every_field(monkeypatch):
    """float64 high parts of fields >= 1984 go to scaled bins: picked by their field bits."""
    monkeypatch.setattr(exact, "_CHUNK", 1000)
    rng = np.random.default_rng(107)
    m = float(np.finfo(np.float64).max)
    for i in range(400):
        n = int(rng.integers(1, 3000))
        fields = rng.choice([1983, 1984, 1985, 2046, 1, 0, int(rng.integers(0, 2047))], n)
        bits = (fields.astype(np.uint64) << np.uint64(52)) | rng.integers(
            0, 1 << 52, n, dtype=np.uint64
        )
        x = bits.view(np.float64) * rng.choice([-1.0, 1.0], n)
        if i % 4 == 0:  # many equal signs near the top in one chunk: float64 bins would overflow
            x[: n // 2] = m * rng.uniform(0.5, 1.0, n // 2)
        assert exact.sum_f64(x) == frac_sum(x), i
    x = np.array([m, 2.0**960, 2.0**960 * (1 - 2.0**-53), -(2.0**-1074)] * 777)
    assert exact.sum_f64(x) == frac_sum(x)
