"""Every exact path against Fraction arithmetic, on generated adversarial inputs.

Inputs cover the full exponent range, cancellation to zero, subnormals, +-max, mixed signs,
runs of equal values, NaN/inf beside finite values, integers above 2**53 and long doubles.
The oracles are plain Fraction arithmetic (vectorized where it can be); thousands of cases
per function, in numpy-generated batches plus hypothesis examples.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from exact_oracles import frac_sum
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fpexplore.truth as T
from fpexplore import formats, metrics
from fpexplore.truth import expansion, ozaki

FORMATS = ("binary16", "bfloat16", "tf32", "binary32", "binary64")


# -- oracles ------------------------------------------------------------------------------------


def frac_array(a: np.ndarray) -> np.ndarray:
    out = np.empty(a.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(np.asarray(a, dtype=np.float64).reshape(-1).tolist()):
        flat[i] = Fraction(v)
    return out


def ieee_sum(v: np.ndarray) -> float:
    """What IEEE says a sum with NaN/inf is (None when all terms are finite)."""
    if np.isfinite(v).all():
        return None
    if np.isnan(v).any() or ((v == np.inf).any() and (v == -np.inf).any()):
        return math.nan
    return math.inf if (v == np.inf).any() else -math.inf


# -- adversarial generators ---------------------------------------------------------------------


def adversarial(rng: np.random.Generator, n: int, dt: type, kind: int) -> np.ndarray:
    """One of nine families of hard inputs (finite), of dtype ``dt``."""
    fi = np.finfo(dt)
    lo_e, hi_e = (-149, 128) if dt == np.float32 else (-1074, 1024)
    nbits = 32 if dt == np.float32 else 64
    ut = np.uint32 if dt == np.float32 else np.uint64
    if kind == 0:  # random bit patterns: every exponent, subnormals, both signs
        x = rng.integers(0, 2**nbits, n, dtype=np.uint64).astype(ut).view(dt)
    elif kind == 1:  # full exponent range, uniform in the exponent
        x = np.ldexp(rng.uniform(1, 2, n), rng.integers(lo_e, hi_e, n)) * rng.choice([-1, 1], n)
    elif kind == 2:  # cancellation to exactly zero plus a few tiny survivors
        h = rng.standard_normal(n // 2) * np.exp2(rng.integers(-60, 60, n // 2))
        x = np.concatenate([h, -h, np.ldexp(rng.choice([-1.0, 1.0], n % 2 + 1), lo_e)])
    elif kind == 3:  # subnormals and the smallest normals
        x = rng.integers(-(2**20), 2**20, n) * float(fi.smallest_subnormal)
        x = x * rng.choice([1, 2**10, 2**30], n)
    elif kind == 4:  # +-max next to tiny values
        x = rng.choice([float(fi.max), -float(fi.max), float(fi.smallest_subnormal), 1.0], n)
    elif kind == 5:  # runs of equal values
        x = np.repeat(rng.standard_normal(max(1, n // 50)), 50)[:n]
    elif kind == 6:  # log-normal magnitudes, mixed signs
        x = rng.lognormal(0, 3, n) * rng.choice([-1, 1], n)
    elif kind == 7:  # one sign, narrow range (the float32 sigma path)
        x = rng.uniform(1, 1000, n)
    else:  # huge cancellation: 2**k, -2**k with low bits
        x = np.concatenate([[float(fi.max) / 2, -float(fi.max) / 2], rng.standard_normal(n)])
    with np.errstate(all="ignore"):
        x = np.asarray(x, dtype=np.float64).astype(dt)
    x[~np.isfinite(x)] = 0
    rng.shuffle(x)
    return x


def with_specials(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    y = x.copy()
    k = int(rng.integers(1, 4))
    y[rng.integers(0, y.size, k)] = rng.choice([np.nan, np.inf, -np.inf], k)
    return y


# -- sums -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_sums_on_adversarial_batches(dt):
    rng = np.random.default_rng(11 if dt == np.float32 else 12)
    cases = 0
    for i in range(1800):
        n = int(rng.choice([1, 2, 3, 17, 200, 1000]))
        x = adversarial(rng, n, dt, i % 9)
        want = frac_sum(x)
        assert T.sum(x).exact == want, (i, x[:8])
        if i % 3 == 0:
            assert T.sum(x[::-1]).exact == want  # order-free
        cases += 1
    assert cases == 1800


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_sums_across_chunk_boundaries_every_family(dt):
    """Arrays longer than a chunk mix the sigma and bin paths in one sum."""
    rng = np.random.default_rng(13)
    for kind in range(9):
        parts = [adversarial(rng, 70_000, dt, k) for k in (kind, 7, (kind + 4) % 9)]
        x = np.concatenate(parts)
        assert T.sum(x).exact == frac_sum(x), kind


def test_float32_sigma_path_with_a_few_small_values():
    """Mixed signs, most values near the top, a few far below: the residuals are summed aside."""
    rng = np.random.default_rng(24)
    for few in (0, 1, 7, 4000, 5000):
        x = rng.standard_normal(70_000).astype(np.float32)
        x[rng.integers(0, x.size, 50)] = 0
        pos = rng.integers(0, x.size, few)
        x[pos] = (rng.standard_normal(few) * np.exp2(rng.integers(-149, -20, few))).astype(
            np.float32
        )
        assert T.sum(x).exact == frac_sum(x), few


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_axis_sums_of_long_and_short_rows(dt):
    rng = np.random.default_rng(25)
    for length in (5000, 40):
        x = np.stack([adversarial(rng, length, dt, k)[:length] for k in range(9)])
        exact_rows = T.sum(x, axis=1).exact
        assert [exact_rows[r] for r in range(9)] == [frac_sum(row) for row in x]
        x[4, 3] = np.inf
        t = T.sum(x.T, axis=0)
        for r in range(9):
            got = float(t.round("float64")[r])
            want = ieee_sum(x[r])
            if want is None:
                want = float(formats.round_exact(frac_sum(x[r]), "float64"))
                assert t.mp()[r] == t.mp()[r]  # a number, not NaN
            assert got == want or (math.isnan(got) and math.isnan(want)), (length, r)


def test_float64_bins_never_overflow():
    m = float(np.finfo(np.float64).max)
    for reps in (1, 3, 70_000):
        x = np.array([m, m, -m, 5e-324] * reps)
        assert T.sum(x).exact == frac_sum(x)
    assert T.sum(np.array([m, m])).round("float64") == np.inf


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_specials_beside_finite_values(dt):
    rng = np.random.default_rng(14)
    for i in range(300):
        x = with_specials(rng, adversarial(rng, int(rng.integers(2, 300)), dt, i % 9))
        t = T.sum(x)
        want = ieee_sum(x)
        got = float(t.round("float64"))
        assert (math.isnan(got) and math.isnan(want)) or got == want, (i, want, got)
    big = with_specials(rng, adversarial(rng, 140_000, dt, 1))
    got = float(T.sum(big).round("float64"))
    want = ieee_sum(big)
    assert (math.isnan(got) and math.isnan(want)) or got == want


@settings(max_examples=300, deadline=None)
@given(
    hnp.arrays(
        st.sampled_from([np.float32, np.float64]),
        st.integers(0, 400),
        elements={"allow_nan": False, "allow_infinity": False},
    )
)
def test_sum_hypothesis(x):
    assert T.sum(x).exact == frac_sum(x)


# -- rounding of exact values with specials elsewhere ------------------------------------------


def test_round_is_one_rounding_with_specials_elsewhere():
    rng = np.random.default_rng(15)
    cases = 0
    for i in range(400):
        # values that sit on or next to rounding boundaries of every format
        base = float(np.ldexp(1.0 + rng.integers(0, 2**10) * 2.0**-10, int(rng.integers(-30, 30))))
        fmt = FORMATS[i % 5]
        f = formats.get(fmt)
        half = math.ldexp(1.0, math.frexp(base)[1] - 1 - f.mbits - 1)  # half an ulp of fmt
        row = np.array(
            [base, half, float(rng.choice([1, -1])) * 2.0 ** -int(rng.integers(60, 900))]
        )
        special = np.array([rng.choice([np.nan, np.inf, -np.inf]), 0.0, 0.0])
        t = T.sum(np.stack([row, special]), axis=1)
        want = formats.round_exact(frac_sum(row), fmt)
        got = t.round(fmt)[0]
        assert got == want, (i, fmt, row)
        m = T.mean(np.stack([row, special]), axis=1).round(fmt)[0]
        assert m == formats.round_exact(frac_sum(row) / 3, fmt)
        cases += 1
    # the case from the issue
    t = T.sum(np.array([[1.0, 2**-53, 2**-200], [np.nan, 0, 0]]), axis=1)
    assert t.round("float64")[0] == 1.0000000000000002
    assert metrics.measure(np.array([1.0, np.nan]), t).correctly_rounded_each.tolist() == [
        False,
        True,
    ]
    assert cases == 400


# -- dot, matmul, conv2d --------------------------------------------------------------------------


def test_dot_float32_on_adversarial_batches():
    rng = np.random.default_rng(16)
    for i in range(1200):
        n = int(rng.choice([1, 5, 64, 300]))
        x = adversarial(rng, n, np.float32, i % 9)
        y = adversarial(rng, n, np.float32, (i * 5 + 2) % 9)[: x.size]
        x = x[: y.size]
        want = frac_sum(x.astype(np.float64) * y.astype(np.float64))  # exact products
        assert T.dot(x, y).exact == want, i
    x = adversarial(rng, 200_000, np.float32, 1)
    y = adversarial(rng, 200_000, np.float32, 6)
    assert T.dot(x, y).exact == frac_sum(x.astype(np.float64) * y.astype(np.float64))


def test_dot_specials():
    inf = np.float32(np.inf)
    assert math.isnan(float(T.dot(np.float32([inf, 1]), np.float32([0, 1])).round("float32")))
    assert float(T.dot(np.float32([inf, 1]), np.float32([2, 1])).round("float32")) == math.inf
    assert math.isnan(float(T.dot(np.float32([inf, inf]), np.float32([1, -1])).round("float32")))


def _mm_case(rng: np.random.Generator, i: int) -> tuple[np.ndarray, np.ndarray]:
    m, k, n = (int(v) for v in rng.integers(1, 7, 3))
    k = int(rng.choice([k, 40]))
    a = adversarial(rng, m * k, np.float32, i % 9)
    b = adversarial(rng, k * n, np.float32, (i + 3) % 9)
    a = np.resize(a, m * k).reshape(m, k)
    b = np.resize(b, k * n).reshape(k, n)
    return a, b


def test_matmul_float32_ozaki_on_adversarial_batches():
    rng = np.random.default_rng(17)
    for i in range(700):
        a, b = _mm_case(rng, i)
        t = T.matmul(a, b)
        assert t.expansion is not None
        want = frac_array(a).dot(frac_array(b))
        assert (t.exact == want).all(), i
        if i % 7 == 0:  # rounding from the expansion, every format
            for fmt in FORMATS:
                r = np.asarray(t.round(fmt), dtype=np.float64)
                assert np.array_equal(r, formats.round_exact(want, fmt).astype(np.float64)), fmt


def _scaled_ints(a: np.ndarray, shift: int) -> np.ndarray:
    """Object array of the Python ints a * 2**shift (exact; a's values are multiples of it)."""
    m, e = np.frexp(np.asarray(a, dtype=np.float64))
    mi = (m * 2.0**53).astype(np.int64).ravel().tolist()
    sh = (e.astype(np.int64) - 53 + shift).ravel().tolist()
    flat = [x << y if y >= 0 else x >> -y for x, y in zip(mi, sh, strict=True)]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(np.shape(a))


def _check_matmul_exact(a: np.ndarray, b: np.ndarray, tag: object) -> None:
    """T.matmul(a, b) summed as integers in units of 2**-1200 against integer matmul."""
    t = T.matmul(a, b)
    assert t.expansion is not None
    want = _scaled_ints(a, 149).dot(_scaled_ints(b, 149)) if a.shape[1] else 0
    got = sum(_scaled_ints(p, 1200) for p in t.expansion)
    assert (got == np.asarray(want * (1 << (1200 - 298)), dtype=object)).all(), tag


def _wide_case(rng: np.random.Generator, i: int) -> tuple[np.ndarray, np.ndarray]:
    m, n = (int(v) for v in rng.integers(1, 6, 2))
    k = int(rng.choice([1, 2, 3, 7, 31, 64, 129, 257]))
    kinds = [1, 0, 3, 4, 2, 8, 6]  # full range first: the many-level Karatsuba path
    a = np.resize(adversarial(rng, m * k + 1, np.float32, kinds[i % 7]), m * k).reshape(m, k)
    b = adversarial(rng, k * n + 1, np.float32, kinds[(i // 7) % 7])
    b = np.resize(b, k * n).reshape(k, n)
    if i % 5 == 0 and k >= 2:  # rows/columns whose products cancel to zero exactly
        b[1] = b[0]
        a[:, 1] = -a[:, 0]
        a[:, 2:] = 0
    if i % 11 == 0:  # every mantissa bit set, one sign: digits at their largest
        e = rng.integers(-126, 128, (m, k))
        a = np.ldexp(np.float64(2**24 - 1), (e - 24).astype(np.int32)).astype(np.float32)
    return a, b


def test_matmul_wide_exponent_range_karatsuba():
    """Rows spanning the whole float32 range: many digit levels, Karatsuba, exact."""
    rng = np.random.default_rng(23)
    deep = 0
    for i in range(900):
        a, b = _wide_case(rng, i)
        how = ozaki.plan_for(a, b)
        deep += how.calls < how.na * how.nb
        _check_matmul_exact(a, b, (i, a.shape, b.shape))
    assert deep > 300  # most cases went through Karatsuba steps
    # the largest inner dimensions, one sign, top digits everywhere
    for k in (256, 1024):
        e = rng.integers(-149, 128, (2, k))
        a = np.ldexp(np.float64(2**24 - 1), (e - 24).astype(np.int32)).astype(np.float32)
        a[a == 0] = np.float32(2**-149)
        _check_matmul_exact(a, np.abs(a.T.copy()), k)
        _check_matmul_exact(a, -a.T.copy(), k)


def test_karatsuba_plan_and_odd_shapes():
    rng = np.random.default_rng(24)
    full = adversarial(rng, 256 * 256, np.float32, 1).reshape(256, 256)
    how = ozaki.plan_for(full, full.T.copy())
    assert how.na >= 13 and how.calls <= 81 < how.na * how.nb
    for m, k, n in [(1, 1, 1), (1, 300, 1), (7, 1, 5), (0, 3, 4), (3, 5, 0), (9, 2, 1)]:
        a = adversarial(rng, max(m * k, 1), np.float32, 1)[: m * k].reshape(m, k)
        b = adversarial(rng, max(k * n, 1), np.float32, 0)[: k * n].reshape(k, n)
        _check_matmul_exact(a, b, (m, k, n))
    # k = 0 and +-max products of both signs
    assert (T.matmul(np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)).exact == 0).all()
    mx = np.float32(np.finfo(np.float32).max)
    tiny = np.float32(2**-149)
    a = np.array([[mx, -mx, tiny], [tiny, tiny, -mx]], np.float32)
    b = np.array([[mx, tiny], [mx, -tiny], [tiny, mx]], np.float32)
    _check_matmul_exact(a, b, "max")


def test_conv2d_wide_range_through_karatsuba():
    rng = np.random.default_rng(25)
    for i in range(12):
        x = adversarial(rng, 2 * 3 * 6 * 5, np.float32, (1, 0, 3, 4)[i % 4]).reshape(2, 3, 6, 5)
        w = adversarial(rng, 4 * 3 * 3 * 3, np.float32, (1, 4, 0)[i % 3]).reshape(4, 3, 3, 3)
        b = adversarial(rng, 4, np.float32, 1)
        t = T.conv2d(x, w, b, padding=1, stride=(1, 2))
        assert t.expansion is not None
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))[:, :, :, ::2]
        patches = win.transpose(0, 2, 3, 1, 4, 5).reshape(-1, 27)
        want = _scaled_ints(patches, 149).dot(_scaled_ints(w.reshape(4, 27).T, 149))
        want = want + _scaled_ints(b, 298)[None, :]
        got = sum(_scaled_ints(p, 1200) for p in t.expansion)
        got = got.transpose(0, 2, 3, 1).reshape(-1, 4)
        assert (got == want * (1 << (1200 - 298))).all(), i


def test_expansion_rounding_at_ties():
    """Expansions whose sum is exactly a tie, or a tie nudged by a tiny third part."""
    rng = np.random.default_rng(18)
    for i in range(600):
        fmt = FORMATS[i % 5]
        f = formats.get(fmt)
        e = int(rng.integers(-20, 20))
        a = math.ldexp(1.0 + int(rng.integers(0, 2**f.mbits)) * 2.0**-f.mbits, e)
        half = math.ldexp(1.0, e - f.mbits - 1) * float(rng.choice([1, -1]))
        nudge = float(rng.choice([0.0, 1.0, -1.0])) * math.ldexp(
            1.0, e - int(rng.integers(60, 300))
        )
        parts = [np.array([a]), np.array([half]), np.array([nudge])]
        want = formats.round_exact(Fraction(a) + Fraction(half) + Fraction(nudge), fmt)
        assert expansion.round_parts(parts, fmt)[0] == want, (i, fmt, a, half, nudge)


def test_expansion_rounding_at_ties_needs_no_fractions(monkeypatch):
    """Ties and near-ties of many-term expansions, decided by exact signs alone."""

    def refuse(parts):  # every decision here must come from error-free passes
        raise AssertionError("fell back to Fractions")

    rng = np.random.default_rng(26)
    for fmt in FORMATS:
        f = formats.get(fmt)
        rows, wants = [], []
        for _ in range(800):
            e = int(rng.integers(-300, 300))
            a = math.ldexp(1.0 + int(rng.integers(0, 2**f.mbits)) * 2.0**-f.mbits, e)
            half = math.ldexp(1.0, e - f.mbits - 1) * float(rng.choice([1, -1, 0.5, 0]))
            tail = [
                float(rng.choice([0.0, 1.0, -1.0])) * math.ldexp(1.0, e - int(d))
                for d in rng.integers(54, 400, 3)
            ]
            # the same value split across cancelling terms: v = a + half + sum(tail)
            big = math.ldexp(float(rng.choice([1.0, 3.0])), e + int(rng.integers(0, 40)))
            parts = [a, big, half, *tail, -big]
            rng.shuffle(parts)
            rows.append(parts)
            wants.append(formats.round_exact(sum(map(Fraction, parts), Fraction(0)), fmt))
        cols = [np.array(c) for c in zip(*rows, strict=True)]
        with monkeypatch.context() as mp:
            mp.setattr(expansion, "fractions", refuse)
            got = expansion.round_parts(cols, fmt)
        for i, want in enumerate(wants):
            assert got[i] == want, (fmt, rows[i])


def test_expansion_signs_are_exact():
    rng = np.random.default_rng(27)
    n = 4000
    parts = [adversarial(rng, n, np.float64, i % 9)[:n] / 4 for i in range(5)]
    parts.append(-(parts[0] + parts[1]))  # cancellation, often to exactly zero
    parts[2][: n // 4] = -parts[3][: n // 4]
    parts[4][: n // 4] = 0
    sign, ok = expansion.signs(parts)
    for j in range(n):
        v = sum(Fraction(float(p[j])) for p in parts)
        if ok[j]:
            assert sign[j] == (v > 0) - (v < 0), j
    assert ok.mean() > 0.99


def test_matmul_nan_inf_rows_and_columns():
    rng = np.random.default_rng(20)
    for i in range(60):
        a, b = _mm_case(rng, i)
        a = a.copy()
        a[0, 0] = rng.choice([np.nan, np.inf, -np.inf])
        t = T.matmul(a, b)
        vals = np.asarray(t.round("float64"), dtype=np.float64)
        fa, fb = frac_array(np.where(np.isfinite(a), a, 0)), frac_array(b)
        for j in range(b.shape[1]):
            terms = a[0].astype(np.float64) * b[:, j].astype(np.float64)
            with np.errstate(invalid="ignore"):
                want = ieee_sum(terms)
            if want is None:
                want = float(formats.round_exact(fa[0].dot(fb[:, j]), "float64"))
            got = vals[0, j]
            assert (math.isnan(got) and math.isnan(want)) or got == want
        for r in range(1, a.shape[0]):
            want = formats.round_exact(fa[r].dot(fb), "float64").astype(np.float64)
            assert np.array_equal(vals[r], want)


def test_conv2d_float32_through_matmul():
    rng = np.random.default_rng(21)
    for i in range(40):
        x = adversarial(rng, 2 * 2 * 5 * 4, np.float32, i % 9)
        x = np.resize(x, 80).reshape(2, 2, 5, 4)
        w = np.resize(adversarial(rng, 2 * 2 * 2 * 3, np.float32, (i + 1) % 9), 24)
        w = w.reshape(2, 2, 2, 3)
        b = adversarial(rng, 2, np.float32, 6)
        t = T.conv2d(x, w, b, padding=1)
        assert t.expansion is not None
        fx, fw = frac_array(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))), frac_array(w)
        for n, o, r, c in [(0, 0, 0, 0), (1, 1, 2, 3), (0, 1, 5, 1)]:
            want = Fraction(float(b[o])) + (fx[n, :, r : r + 2, c : c + 3] * fw[o]).sum()
            assert t.exact[n, o, r, c] == want


# -- formats: big integers and long doubles are rounded once ---------------------------------


def test_big_ints_and_long_doubles_round_once():
    rng = np.random.default_rng(22)
    ints = rng.integers(-(2**63) + 1, 2**63 - 1, 2000, dtype=np.int64)
    ints[:500] = (ints[:500] >> 20) << 20 | (1 << 19)  # ties at float32 precision...
    ints[:500] += rng.choice([-1, 0, 1], 500)  # ...and next to them
    for fmt in ("binary32", "bfloat16", "binary64", "binary16"):
        got = np.asarray(formats.round_array(ints, fmt), dtype=np.float64)
        want = np.array([float(formats.round_exact(Fraction(int(v)), fmt)) for v in ints])
        assert np.array_equal(got, want), fmt
    ld = np.longdouble
    if np.finfo(ld).nmant <= 52:
        pytest.skip("long double is float64 on this platform")
    vals = [ld(1) + ld(2) ** -24 + ld(2) ** -60, -(ld(1) + ld(2) ** -53 + ld(2) ** -63)]
    for _ in range(500):
        m = int(rng.integers(2**62, 2**63))
        vals.append(ld(m) * ld(2) ** int(rng.integers(-90, 30)))
    arr = np.array(vals, dtype=ld)
    for fmt in ("binary32", "binary64", "bfloat16"):
        got = np.asarray(formats.round_array(arr, fmt), dtype=np.float64)
        want = [
            float(formats.round_exact(Fraction(*(int(p) for p in v.as_integer_ratio())), fmt))
            for v in arr
        ]
        assert np.array_equal(got, np.array(want)), fmt
        assert float(formats.round_exact(vals[0], "float32")) == float(np.float32(1 + 2**-23))


# -- metrics where float64 cannot carry truth or error ---------------------------------------------


def _oracle_measure(got: float, t: Fraction, f: formats.Format) -> tuple[float, float]:
    d = Fraction(got) - t
    ulp = d / Fraction(formats.ulp(Fraction(got), f))
    rel = 0.0 if d == 0 else (math.inf if t == 0 else abs(d) / abs(t))
    return float(ulp), float(rel)


def test_measure_at_the_edges_of_float64():
    rng = np.random.default_rng(23)
    f = formats.get("binary64")
    m = float(np.finfo(np.float64).max)
    cases = 0
    for i in range(400):
        kind = i % 4
        if kind == 0:  # truths below float64's resolution
            t = Fraction(int(rng.integers(1, 2**40))) * Fraction(2) ** -int(
                rng.integers(1075, 1300)
            )
            got = float(rng.choice([0.0, 5e-324, -5e-324]))
        elif kind == 1:  # subnormal truths with half-ulp parts
            t = Fraction(int(rng.integers(1, 2**20)), 2**1075)
            got = float(formats.round_exact(t, f)) + float(rng.choice([0.0, 5e-324]))
        elif kind == 2:  # near max: truths just below and beyond
            t = Fraction(m) + Fraction(int(rng.integers(-(2**10), 2**10))) * Fraction(2) ** 960
            got = float(rng.choice([m, np.nextafter(m, 0)]))
        else:  # differences far below 2**-106 relative
            base = float(rng.uniform(1, 2))
            t = Fraction(base) + Fraction(int(rng.choice([1, -1]))) * Fraction(2) ** -int(
                rng.integers(110, 400)
            )
            got = base
        s = metrics.measure(np.float64(got), T.Truth("edge", exact=t))
        want_ulp, want_rel = _oracle_measure(got, t, f)
        assert s.ulp_scalar == pytest.approx(want_ulp, rel=1e-12, abs=0), (i, got, t)
        assert s.max_rel == pytest.approx(want_rel, rel=1e-12, abs=0), (i, got, t)
        assert s.correctly_rounded == (float(formats.round_exact(t, f)) == got)
        assert (s.min_bits == math.inf) == (Fraction(got) == t)
        cases += 1
    s = metrics.measure(np.float64(1e308), T.sum(np.array([-1e308])))
    assert s.max_rel == 2.0 and not math.isnan(s.ulp_scalar)
    s = metrics.measure(np.float64(np.inf), T.sum(np.array([m, m])))
    assert s.correctly_rounded and s.max_rel == math.inf and s.min_bits == 0
    s = metrics.measure(np.float64(m), T.sum(np.array([m, m])))
    assert s.faithful and not s.correctly_rounded
    s = metrics.measure(np.float64(0.0), T.dot([1e-200], [1e-200]))
    assert s.max_rel == 1.0 and s.min_bits == 0
    s = metrics.measure(5e-324, T.mean([5e-324, 0.0]))
    assert s.ulp_scalar == 0.5 and s.max_rel == 1.0 and not s.correctly_rounded
    assert cases == 400


# -- refusals: the package's error, naming the argument, the value and the accepted range ------


def test_bad_inputs_are_refused_by_name():
    from fpexplore.errors import InvalidInput, InvalidParameter
    from fpexplore.truth import reference

    with pytest.raises(InvalidParameter, match=r"'fmt'.*Got None"):
        formats.get(None)
    with pytest.raises(InvalidParameter, match=r"'pattern'.*\[0, 2\*\*64\).*Got nan"):
        formats.from_bits(float("nan"), "float64")
    with pytest.raises(InvalidParameter, match=r"'pattern'.*Got 18446744073709551616"):
        formats.from_bits(2**64, "float64")
    with pytest.raises(InvalidParameter, match=r"'x' parameter of formats.ulp.*Got None"):
        formats.ulp(None, "float64")
    assert formats.ulp(2**1100, "float64") == math.inf  # beyond the range: rounds to inf
    with pytest.raises(InvalidParameter, match=r"'axis'.*Got True"):
        T.sum(np.ones(3), axis=True)
    with pytest.raises(InvalidParameter, match=r"'axis'.*0-d input has no axis.*Got 0"):
        T.sum(np.float64(1.0), axis=0)
    with pytest.raises(InvalidInput, match=r"'x' has shape \(2, 0\).*softmax over zero"):
        reference.softmax(np.zeros((2, 0)))
    with pytest.raises(InvalidInput, match=r"at least one channel"):
        T.conv2d(np.zeros((1, 0, 3, 3)), np.zeros((1, 0, 2, 2)))
    with pytest.raises(InvalidInput, match=r"'truth' must be a fpexplore.truth.Truth.*float"):
        metrics.measure(1.0, 3.0)


def test_guards_count_memory_and_work_before_starting():
    from fpexplore.errors import InvalidInput
    from fpexplore.truth import limits

    with pytest.raises(InvalidInput, match=r"GiB of memory.*exact outputs.*the limit is"):
        T.matmul(np.ones((11585, 1)), np.ones((1, 11585)))
    with pytest.raises(InvalidInput, match=r"padded input 11585x11585.*the limit is"):
        T.conv2d(np.ones((1, 1, 1, 1)), np.ones((1, 1, 1, 1)), padding=5792)
    big = T.matmul(np.ones((1000, 1), np.float32), np.ones((1, 1000), np.float32))
    assert float(big.round("float32")[999, 999]) == 1.0  # rounds without Fractions
    small_limit = limits.MAX_BYTES
    try:
        limits.MAX_BYTES = 1 << 20
        with pytest.raises(InvalidInput, match=r"Truth.exact.*1000000 Fractions"):
            big.exact  # noqa: B018
        with pytest.raises(InvalidInput, match=r"zero outputs"):  # k = 0 counts its outputs
            T.matmul(np.ones((2000, 0)), np.ones((0, 2000)))
    finally:
        limits.MAX_BYTES = small_limit
    with pytest.raises(InvalidInput, match=r"exact products.*2\*\*27"):
        T.matmul(np.ones((600, 600)), np.ones((600, 600)))
