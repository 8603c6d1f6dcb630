"""The exact float32 dot product (`fpexplore.truth.exact.dot_f32`) on every path it takes.

Each chunk of products is summed by one, two or three sigma levels or in exponent bins (then
the next chunks go to the bins without a look); shrinking the chunk and the level limit makes
short vectors cross many chunks and every path, next to each other. The oracle is Fraction
arithmetic: the float32 products are integers in units of 2**-298, summed as Python ints (equal
to summing ``Fraction(x) * Fraction(y)``, checked on the short cases). Inputs: the full
exponent range, subnormals, +-max, cancellation to exactly zero, mixed signs, NaN/inf beside
finite values, float16/bfloat16/float64, lengths 0, 1, 2, odd and around chunk boundaries.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import fpexplore.truth as T
from fpexplore.truth import exact

F32 = np.finfo(np.float32)


def oracle(x: np.ndarray, y: np.ndarray) -> Fraction | float:
    """Exact dot product of float32 vectors; IEEE nan/inf when a product is not finite."""
    with np.errstate(invalid="ignore", over="ignore"):
        p = x.astype(np.float64) * y.astype(np.float64)
    if not np.isfinite(p).all():
        if np.isnan(p).any() or ((p == np.inf).any() and (p == -np.inf).any()):
            return math.nan
        return math.inf if (p == np.inf).any() else -math.inf

    def ints(v: np.ndarray) -> list[int]:  # v * 2**149, exact integers
        m, e = np.frexp(v.astype(np.float64))
        mi = (m * 2.0**24).astype(np.int64).tolist()
        ex = (e.astype(np.int64) + 125).tolist()  # subnormals: m has trailing zeros
        return [a << s if s >= 0 else a >> -s for a, s in zip(mi, ex, strict=True)]

    total = sum(a * b for a, b in zip(ints(x), ints(y), strict=True))
    return Fraction(total, 1 << 298)


def fraction_dot(x: np.ndarray, y: np.ndarray) -> Fraction:
    return sum(
        (Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, y, strict=True)), Fraction(0)
    )


def same(got: Fraction | float, want: Fraction | float) -> bool:
    if isinstance(want, float):
        return isinstance(got, float) and (math.isnan(got) if math.isnan(want) else got == want)
    return isinstance(got, Fraction) and got == want


def family(rng: np.random.Generator, n: int, kind: int) -> np.ndarray:
    """n finite float32 values of one of ten hard families."""
    if kind == 0:  # random bit patterns: every exponent, subnormals, both signs
        x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
        with np.errstate(invalid="ignore"):  # NaN patterns, set to 0 below
            x = x.astype(np.float64)
    elif kind == 1:  # full exponent range, uniform in the exponent
        x = np.ldexp(rng.uniform(1, 2, n), rng.integers(-149, 128, n)) * rng.choice([-1, 1], n)
    elif kind == 2:  # subnormals and the smallest normals
        x = rng.integers(-(2**23), 2**23, n) * float(F32.smallest_subnormal)
        x = x * rng.choice([1, 1, 2**3, 2**24], n)
    elif kind == 3:  # +-max next to tiny values and ones
        x = rng.choice([float(F32.max), -float(F32.max), float(F32.smallest_subnormal), 1.0], n)
    elif kind == 4:  # log-normal magnitudes, mixed signs
        x = rng.lognormal(0, 3, n) * rng.choice([-1, 1], n)
    elif kind == 5:  # normal, with zeros
        x = rng.standard_normal(n) * (rng.random(n) < 0.7)
    elif kind == 6:  # one sign, narrow range
        x = rng.uniform(1, 1000, n)
    elif kind == 7:  # runs of equal values
        x = np.repeat(rng.standard_normal(max(1, n // 7 + 1)), 7)[:n]
    elif kind == 8:  # a few binades apart, in blocks (levels change from chunk to chunk)
        x = rng.standard_normal(n) * np.exp2(np.repeat(rng.integers(-120, 120, n // 5 + 1), 5)[:n])
    else:  # integers (exact float sums would do; tests the all-on-one-grid case)
        x = rng.integers(-50, 50, n).astype(np.float64)
    with np.errstate(all="ignore"):
        out = np.asarray(x, dtype=np.float64).astype(np.float32)
    out[~np.isfinite(out)] = 0
    return out


def pair(rng: np.random.Generator, n: int, i: int) -> tuple[np.ndarray, np.ndarray]:
    x = family(rng, n, i % 10)
    y = family(rng, n, (i * 7 + 3) % 10)
    if i % 5 == 0 and n >= 2:  # cancellation to exactly zero: (x, y) next to (-x, y)
        h = n // 2
        x = np.concatenate([x[:h], -x[:h], x[2 * h :]])
        y = np.concatenate([y[:h], y[:h], y[2 * h :]])
        if n % 2:
            x[-1] = 0
        perm = rng.permutation(n)
        x, y = x[perm], y[perm]
    return x, y


SMALL = [  # chunk, bin block, level limit, sticky: every path within a few dozen products
    (4, 4, 3, 1),
    (7, 3, 2, 2),
    (16, 16, 1, 1),
    (16, 8, 0, 4),  # every chunk to the bins
    (5, 5, 3, 0),
]


@pytest.fixture
def paths(monkeypatch: pytest.MonkeyPatch):
    """Set the chunking of `dot_f32` and count the paths taken."""
    seen: dict[str, int] = {}
    levels = exact._dot_levels

    def counted(p, u, e_top, n):
        seen[f"levels {n}"] = seen.get(f"levels {n}", 0) + 1
        return levels(p, u, e_top, n)

    weighted_int = exact._weighted_int

    def finished(w):  # called when the bins are read out
        seen["bins"] = seen.get("bins", 0) + 1
        return weighted_int(w)

    monkeypatch.setattr(exact, "_dot_levels", counted)
    monkeypatch.setattr(exact, "_weighted_int", finished)

    def setup(chunk: int, block: int, most: int, sticky: int) -> dict[str, int]:
        monkeypatch.setattr(exact, "_DOT_CHUNK", chunk)
        monkeypatch.setattr(exact, "_BIN_BLOCK", block)
        monkeypatch.setattr(exact, "_DOT_LEVELS", most)
        monkeypatch.setattr(exact, "_DOT_STICKY", sticky)
        return seen

    return setup


def test_oracle_is_fraction_arithmetic():
    rng = np.random.default_rng(0)
    for i in range(300):
        x, y = pair(rng, int(rng.integers(0, 12)), i)
        assert oracle(x, y) == fraction_dot(x, y), i


def test_small_chunks_every_path(paths):
    rng = np.random.default_rng(1)
    seen: dict[str, int] = {}
    cases = 0
    for setting in SMALL:
        seen = paths(*setting)
        for i in range(800):
            n = int(rng.choice([0, 1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 64, 101]))
            x, y = pair(rng, n, i)
            want = oracle(x, y)
            got = exact.dot_f32(x, y)
            assert same(got, want), (setting, i, n, got, want)
            cases += 1
    assert cases == 4000
    assert {"levels 1", "levels 2", "levels 3", "bins"} <= set(seen), seen


def test_specials_beside_finite_values(paths):
    rng = np.random.default_rng(2)
    specials = [np.nan, np.inf, -np.inf, 0.0]
    for setting in SMALL[:4]:
        paths(*setting)
        for i in range(300):
            n = int(rng.integers(1, 60))
            x, y = pair(rng, n, i)
            k = int(rng.integers(1, 4))
            x[rng.integers(0, n, k)] = rng.choice(specials, k)
            if i % 2:
                y[rng.integers(0, n, k)] = rng.choice(specials, k)
            want = oracle(x, y)
            assert same(exact.dot_f32(x, y), want), (setting, i)
    # inf * 0 is NaN; inf + -inf is NaN; one infinity wins over finite values
    inf = np.float32(np.inf)
    assert math.isnan(exact.dot_f32(np.float32([inf, 1]), np.float32([0, 1])))
    assert math.isnan(exact.dot_f32(np.float32([inf, inf]), np.float32([1, -1])))
    assert exact.dot_f32(np.float32([-inf, F32.max]), np.float32([2, F32.max])) == -math.inf


def test_long_vectors_across_real_chunks():
    rng = np.random.default_rng(3)
    c = exact._DOT_CHUNK
    for i, n in enumerate([c - 1, c, c + 1, 2 * c + 3]):
        x, y = pair(rng, n, i + 1)
        assert exact.dot_f32(x, y) == oracle(x, y), n


def test_wide_chunk_between_narrow_ones(paths):
    """Levels, one wide chunk (bins), sticky chunks in the bins, levels again, then a NaN."""
    seen = paths(1 << 12, 1 << 10, 3, 4)
    c = 1 << 12
    rng = np.random.default_rng(6)
    x = family(rng, 8 * c + 5, 5)
    y = family(rng, x.size, 6)
    x[c + 5] = F32.max
    x[c + 6] = F32.smallest_subnormal
    assert exact.dot_f32(x, y) == oracle(x, y)
    # chunks 0 and 6 to 8 by levels; 1 to 5 in the bins, read out once
    assert seen.get("bins") == 1 and seen.get("levels 2", 0) + seen.get("levels 1", 0) == 4
    x[7 * c] = np.float32(np.inf)
    y[7 * c] = 0
    assert math.isnan(exact.dot_f32(x, y))
    y[7 * c] = -1
    assert exact.dot_f32(x, y) == -math.inf
    x[3 * c] = np.float32(np.inf)  # in a sticky chunk: found in the bins of field 2047
    y[3 * c] = 2
    assert math.isnan(exact.dot_f32(x, y))


def test_cancellation_to_exact_zero_and_extremes():
    rng = np.random.default_rng(4)
    for kind in range(10):
        x = family(rng, 5001, kind)
        y = family(rng, 5001, (kind + 1) % 10)
        xx, yy = np.concatenate([x, -x]), np.concatenate([y, y])
        perm = rng.permutation(xx.size)
        assert exact.dot_f32(xx[perm], yy[perm]) == 0
    big = np.full(1001, F32.max, dtype=np.float32)
    assert exact.dot_f32(big, big) == Fraction(float(F32.max)) ** 2 * 1001
    tiny = np.full(1001, F32.smallest_subnormal, dtype=np.float32)
    assert exact.dot_f32(tiny, -tiny) == -Fraction(1, 1 << 298) * 1001
    assert exact.dot_f32(np.float32([]), np.float32([])) == 0


def test_products_on_the_finest_grid():
    """Subnormal times subnormal (multiples of 2**-298) beside a product up to 2**-128."""
    rng = np.random.default_rng(7)
    tiny = float(F32.smallest_subnormal)
    for i in range(1500):
        top = -298 + int(rng.integers(20, 170))  # the largest product's binade
        e1 = int(rng.integers(-149, 128))
        e2 = int(np.clip(top - e1, -149, 127))
        r1, r2 = np.ldexp(rng.uniform(1, 2, 2), [e1, e2]) * rng.choice([-1, 1], 2)
        k = int(rng.integers(0, 2**22)) * 2 + 1
        x = np.float32([tiny, r1, -tiny][: 2 + i % 2])
        y = np.float32([k * tiny, r2, tiny][: 2 + i % 2])
        assert exact.dot_f32(x, y) == oracle(x, y), (i, x, y)


def test_truth_dot_formats():
    rng = np.random.default_rng(5)
    for i in range(200):
        n = int(rng.integers(0, 40))
        x, y = pair(rng, n, i)
        with np.errstate(over="ignore"):  # beyond the narrow formats' range: set to 0
            h32 = x.astype(np.float16).astype(np.float32)
            b32 = y.astype(ml_dtypes.bfloat16).astype(np.float32)
        h32[~np.isfinite(h32)] = 0
        b32[~np.isfinite(b32)] = 0
        h, b = h32.astype(np.float16), b32.astype(ml_dtypes.bfloat16)
        t = T.dot(h, b)
        assert t.exact == fraction_dot(h32, b32) and t.input_format == "bfloat16", i
        assert T.dot(h, h).input_format == "float16"
        assert T.dot(b, b).input_format == "bfloat16"
        x64 = x.astype(np.float64) * rng.choice([1.0, 2.0**-600, 2.0**600, 3.0], n)
        assert T.dot(x64, y).exact == fraction_dot(x64, y), i
        assert T.dot(x, y).exact == oracle(x, y), i


def test_weighted_int_is_the_weighted_sum():
    rng = np.random.default_rng(8)
    for i in range(300):
        n = int(rng.integers(0, 300))
        w = rng.integers(-(2**61), 2**61, n) >> int(rng.integers(0, 62))
        w[rng.random(n) < 0.3] = 0
        want = sum(int(v) << j for j, v in enumerate(w.tolist()))
        assert exact._weighted_int(w) == want, i
