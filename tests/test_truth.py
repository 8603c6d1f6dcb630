"""Exact sums, means, dot products, matrix products and conv2d against Fraction arithmetic."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fpexplore.truth as T
from fpexplore.errors import InvalidInput, InvalidParameter, PrecisionError
from fpexplore.truth import exact


def fsum(values) -> Fraction:
    return sum((Fraction(float(v)) for v in np.ravel(values)), Fraction(0))


def fr(a: np.ndarray) -> np.ndarray:
    out = np.empty(a.shape, dtype=object)
    for i, v in np.ndenumerate(a):
        out[i] = Fraction(float(v))
    return out


finite32 = st.floats(width=32, allow_nan=False, allow_infinity=False)
finite64 = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=150, deadline=None)
@given(
    hnp.arrays(np.float32, st.integers(0, 300), elements=finite32),
    st.randoms(use_true_random=False),
)
def test_float32_sum_is_fraction_sum_and_order_free(x, rnd):
    truth = T.sum(x)
    assert truth.exact == fsum(x)
    perm = list(range(x.size))
    rnd.shuffle(perm)
    assert T.sum(x[perm]).exact == truth.exact


@settings(max_examples=150, deadline=None)
@given(
    hnp.arrays(np.float64, st.integers(0, 200), elements=finite64),
    st.randoms(use_true_random=False),
)
def test_float64_sum_is_fraction_sum_and_order_free(x, rnd):
    truth = T.sum(x)
    assert truth.exact == fsum(x)
    perm = list(range(x.size))
    rnd.shuffle(perm)
    assert T.sum(x[perm]).exact == truth.exact


def test_float32_fast_path_on_random_bit_patterns():
    rng = np.random.default_rng(0)
    for n in (1, 7, 70_000, 140_001):
        bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        x = x[np.isfinite(x)]
        assert exact.sum_f32(x) == fsum(x)
        assert exact.row_sums(x[None, :])[0] == fsum(x)


def test_float32_fast_path_wide_dynamic_range_chunks():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(200_000) * np.exp2(rng.integers(-150, 126, 200_000))).astype(
        np.float32
    )
    x[::1000] = np.float32(3e38)
    x[1::1000] = np.float32(-3e38)
    assert T.sum(x).exact == fsum(x)


def test_ten_thousand_copies_of_float32_0_0001():
    x = np.full(10_000, np.float32(0.0001))
    t = T.sum(x)
    assert t.exact == 10_000 * Fraction(float(np.float32(0.0001)))
    assert mpmath.nstr(t.mp(100), 20) == "0.99999997473787516356"
    assert float(t.round("float32")) == 1.0  # correctly rounded; float32 summation is not


def test_huge_and_tiny_cancel():
    x = np.array([1e40, 1e-40, -1e40])
    assert T.sum(x).exact == Fraction(1e-40)
    # the trap: fsum at the default precision loses the tiny term
    assert mpmath.fsum([mpmath.mpf(v) for v in x]) == 0
    y = np.array([3e38, 1e-45, -3e38, 2e-45], dtype=np.float32)
    assert (
        T.sum(y).exact
        == fsum(y)
        == Fraction(float(np.float32(1e-45))) + Fraction(float(np.float32(2e-45)))
    )


def test_long_cancellation_and_subnormals():
    rng = np.random.default_rng(2)
    v = rng.standard_normal(5000).astype(np.float32)
    x = np.concatenate([v, -v, np.float32([1e-45, 2e-45, -1.4e-45])])
    rng.shuffle(x)
    assert T.sum(x).exact == fsum(np.float32([1e-45, 2e-45, -1.4e-45]))
    sub = np.array([5e-324, 5e-324, -1e-310, 2.2e-308])
    assert T.sum(sub).exact == fsum(sub)
    assert T.sum(np.float16([6e-8, 6e-8, -1e-7])).exact == fsum(np.float16([6e-8, 6e-8, -1e-7]))


def test_float16_and_bfloat16_inputs():
    import ml_dtypes

    rng = np.random.default_rng(3)
    h = rng.standard_normal(1000).astype(np.float16)
    t = T.sum(h)
    assert t.exact == fsum(h.astype(np.float32)) and t.input_format == "float16"
    b = rng.standard_normal(1000).astype(ml_dtypes.bfloat16)
    t = T.sum(b)
    assert t.exact == fsum(b.astype(np.float32)) and t.input_format == "bfloat16"


def test_torch_tensors_keep_their_bits():
    import torch

    x = torch.randn(100, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    t = T.mean(x)
    assert t.input_format == "bfloat16"
    assert t.exact == fsum(x.float().numpy()) / 100


def test_axis_sums_and_means():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    for ax in (0, 1, 2, -1):
        t = T.sum(x, axis=ax)
        want = np.apply_along_axis(fsum, ax, x)
        assert t.shape == want.shape
        assert all(a == b for a, b in zip(t.exact.flat, want.flat, strict=True))
        m = T.mean(x, axis=ax)
        assert m.exact.flat[0] == want.flat[0] / x.shape[ax]
    assert T.mean(x).exact == fsum(x) / x.size


def test_ieee_specials():
    assert mpmath.isnan(T.sum(np.float32([1, np.inf, -np.inf])).mp())
    assert T.sum(np.float32([1, np.inf, -np.inf])).exact is None
    assert T.sum(np.array([1.0, np.inf])).mp() == mpmath.inf
    assert T.sum(np.array([np.nan, 1.0])).exact is None
    assert mpmath.isnan(T.sum(np.array([np.nan, 1.0])).mp())
    t = T.sum(np.array([[1.0, 2.0], [np.inf, 1.0]]), axis=1)
    assert t.mp()[0] == 3 and t.mp()[1] == mpmath.inf
    assert np.isnan(T.dot(np.float32([np.inf, 1]), np.float32([0, 1])).round("float32"))


def test_empty_inputs():
    assert T.sum(np.array([], dtype=np.float32)).exact == 0
    assert T.sum(np.zeros((0, 3)), axis=0).exact.tolist() == [0, 0, 0]
    with pytest.raises(InvalidInput, match="mean of zero elements"):
        T.mean(np.array([], dtype=np.float64))


def test_bad_inputs_name_the_argument():
    with pytest.raises(InvalidInput, match=r"'x' has dtype int64.*float16, bfloat16"):
        T.sum(np.arange(3))
    with pytest.raises(InvalidInput, match=r"'x'.*not numeric"):
        T.sum("abc")
    with pytest.raises(InvalidParameter, match=r"'axis'.*Got 5"):
        T.sum(np.zeros((2, 2)), axis=5)
    with pytest.raises(InvalidInput, match="equal length"):
        T.dot(np.zeros(3), np.zeros(4))
    with pytest.raises(InvalidInput, match=r"\(m, k\)"):
        T.matmul(np.zeros((2, 3)), np.zeros((2, 3)))
    with pytest.raises(InvalidParameter, match="'stride'"):
        T.conv2d(np.zeros((1, 1, 3, 3)), np.zeros((1, 1, 2, 2)), stride=0)
    with pytest.raises(InvalidParameter, match="'groups'"):
        T.conv2d(np.zeros((1, 2, 3, 3)), np.zeros((1, 2, 2, 2)), groups=2)


def test_exact_truth_views():
    t = T.sum(np.array([0.1, 0.2]))
    assert t.exact == Fraction(0.1) + Fraction(0.2)
    assert float(t.round("float64")) == 0.30000000000000004
    with mpmath.workprec(200):
        assert t.mp(200) == mpmath.mpf(t.exact.numerator) / t.exact.denominator
    assert t.digits == math.inf
    t.mp(digits=60)  # exact: any number of digits is certified


def test_precision_error_on_uncertified_digits():
    from fpexplore.truth.value import Truth

    t = Truth("x", mp=mpmath.mpf(1), digits=10)
    with pytest.raises(PrecisionError):
        t.mp(digits=11)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 4),
    st.integers(1, 6),
    st.integers(1, 4),
    st.sampled_from([np.float32, np.float64]),
    st.integers(0, 2**32 - 1),
)
def test_matmul_and_dot_equal_fraction_arithmetic(m, k, n, dt, seed):
    rng = np.random.default_rng(seed)
    lo, hi = (-140, 120) if dt == np.float32 else (-1070, 1000)
    a = (rng.standard_normal((m, k)) * np.exp2(rng.integers(lo, hi, (m, k)))).astype(dt)
    b = (rng.standard_normal((k, n)) * np.exp2(rng.integers(lo, hi, (k, n)))).astype(dt)
    with np.errstate(over="ignore"):
        a[~np.isfinite(a)] = 1
        b[~np.isfinite(b)] = 1
    t = T.matmul(a, b)
    assert (t.exact == fr(a).dot(fr(b))).all()
    d = T.dot(a[0], b[:, 0])
    assert d.exact == sum(fr(a[0]) * fr(b[:, 0]))


def test_float64_products_near_the_limits():
    x = np.array([1e308, 1e-308, 5e-324, -1.7e308, 2.5e-320])
    y = np.array([1e10, 1e-20, 1e300, 1e-10, 3.3e-300])
    assert T.dot(x, y).exact == sum(fr(x) * fr(y))
    y32 = np.float32([1e10, 1e-20, 1e30, -1e-10, 3e-39])
    assert T.dot(x, y32).exact == sum(fr(x) * fr(y32))


def _conv_fraction(x, w, b, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad), dtype=object)
    xp[...] = Fraction(0)
    xp[:, :, pad : pad + h, pad : pad + wd] = fr(x)
    oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    wf = fr(w)
    out = np.empty((n, o, oh, ow), dtype=object)
    og = o // groups
    for i, oc, r, q in np.ndindex(n, o, oh, ow):
        g = oc // og
        acc = Fraction(0) if b is None else Fraction(float(b[oc]))
        for ci, u, v in np.ndindex(cg, kh, kw):
            acc += xp[i, g * cg + ci, r * stride + u * dil, q * stride + v * dil] * wf[oc, ci, u, v]
        out[i, oc, r, q] = acc
    return out


@pytest.mark.parametrize(
    "dt,stride,pad,dil,groups,bias",
    [
        (np.float32, 1, 0, 1, 1, True),
        (np.float32, 2, 1, 1, 1, False),
        (np.float64, 1, 1, 2, 1, True),
        (np.float32, 1, 1, 1, 2, True),
    ],
)
def test_conv2d_equals_fraction_arithmetic(dt, stride, pad, dil, groups, bias):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 6, 5)).astype(dt)
    w = rng.standard_normal((4, 4 // groups, 3, 2)).astype(dt)
    b = rng.standard_normal(4).astype(dt) if bias else None
    t = T.conv2d(x, w, b, stride=stride, padding=pad, dilation=dil, groups=groups)
    want = _conv_fraction(x, w, b, stride, pad, dil, groups)
    assert t.shape == want.shape and (t.exact == want).all()
    t3 = T.conv2d(x[0], w, b, stride=stride, padding=pad, dilation=dil, groups=groups)
    assert (t3.exact == want[0]).all()


def test_conv2d_matches_torch_float64():
    import torch

    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 3, 9, 8)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    t = T.conv2d(x, w, stride=2, padding=1)
    ref = torch.nn.functional.conv2d(
        torch.tensor(x, dtype=torch.float64),
        torch.tensor(w, dtype=torch.float64),
        stride=2,
        padding=1,
    ).numpy()
    assert np.allclose(t.round("float64"), ref, rtol=1e-13, atol=1e-13)


def test_row_sums_split_when_buckets_are_many(monkeypatch):
    monkeypatch.setattr(exact, "_MAX_BINS", 64)
    rng = np.random.default_rng(7)
    v = rng.standard_normal((37, 5)) * np.exp2(rng.integers(-1070, 1000, (37, 5)))
    got = exact.row_sums(v)
    assert all(got[i] == fsum(v[i]) for i in range(37))
    assert T.reference.conv2d is T.conv2d


FORMATS = ("binary16", "bfloat16", "tf32", "binary32", "binary64")


def _tf32_by_scaling(s: float) -> float:
    """TF32 has binary16's 10 mantissa bits: scale into binary16's normal range and back."""
    if s == 0:
        return s
    k = math.frexp(s)[1]
    return float(np.float16(math.ldexp(s, -k))) * 2.0**k


def test_round_to_every_format_is_one_correct_rounding():
    """Two float32 in [1e-3, 1e3] sum exactly in float64, so numpy's single rounding of that
    float64 is the independent reference (ml_dtypes for bfloat16, binary16 after an exact
    power-of-two scaling for TF32)."""
    import ml_dtypes

    rng = np.random.default_rng(7)
    pairs = np.float32(rng.uniform(1e-3, 1e3, (300, 2)) * rng.choice([-1, 1], (300, 2)))
    for x in pairs:
        s = float(np.float64(x[0]) + np.float64(x[1]))
        t = T.sum(x)
        assert t.exact == Fraction(s)
        want = {
            "binary16": float(np.float16(s)),
            "bfloat16": float(np.asarray(s).astype(ml_dtypes.bfloat16)),
            "tf32": _tf32_by_scaling(s),
            "binary32": float(np.float32(s)),
            "binary64": s,
        }
        for fmt in FORMATS:
            assert float(t.round(fmt)) == want[fmt], (x, fmt)


def test_round_of_ieee_specials_in_every_format():
    cases = {
        "nan": (np.array([np.nan, 1.0]), math.isnan),
        "+inf": (np.array([np.inf, 1.0]), lambda v: v == math.inf),
        "-inf": (np.array([-np.inf, 1.0]), lambda v: v == -math.inf),
        "inf-inf": (np.array([np.inf, -np.inf]), math.isnan),
    }
    for name, (x, ok) in cases.items():
        for t in (T.sum(x), T.mean(x), T.dot(x, np.ones(2))):
            assert not t.is_finite and t.exact is None, name
            assert "IEEE" in repr(t)
            for fmt in FORMATS:
                assert ok(float(t.round(fmt))), (name, fmt)
    assert T.sum(np.array([1.0, 2.0])).is_finite


def test_overflow_when_rounding_a_finite_truth():
    t = T.sum(np.float32([3e38, 3e38]))  # finite exactly, too large for binary32
    assert t.is_finite and t.exact == 2 * Fraction(float(np.float32(3e38)))
    assert t.round("binary32") == np.inf and t.round("binary16") == np.inf
    assert float(t.round("binary64")) == 2 * float(np.float32(3e38))


def test_empty_products_are_zero():
    assert T.dot(np.zeros(0), np.zeros(0)).exact == 0
    assert T.matmul(np.zeros((2, 0)), np.zeros((0, 3))).exact.tolist() == [[0] * 3] * 2
    with pytest.raises(InvalidInput, match=r"'x' \(None .*not numeric"):
        T.sum(None)
    with pytest.raises(InvalidInput, match=r"'x'.*not numeric"):
        T.sum([1.0, None])
    with pytest.raises(InvalidInput, match=r"'x' holds integers that float64 cannot"):
        T.sum([2**60 + 1])
    assert T.sum([1, 2.5]).exact == Fraction(7, 2)


def test_round_of_a_certified_truth_refuses_to_guess_near_a_tie():
    from fpexplore.truth.value import Truth

    with mpmath.workprec(200):
        tie = mpmath.mpf(1) + mpmath.mpf(2) ** -24  # halfway between two binary32 neighbours
        near = tie + mpmath.mpf(2) ** -90
    vague = Truth("near a tie", mp=near, digits=10, prec=200)
    assert float(vague.round("binary16")) == 1.0  # far from a binary16 boundary
    with pytest.raises(PrecisionError, match="binary32"):
        vague.round("binary32")
    sharp = Truth("near a tie", mp=near, digits=40, prec=200)
    assert float(sharp.round("binary32")) == 1 + 2**-23  # above the tie: rounds up
    from fpexplore import formats

    exp = T.reference.exp(np.float32([1.0, -2.5]))
    with mpmath.workprec(300):
        want = [mpmath.exp(1), mpmath.exp(-2.5)]
        for fmt in FORMATS:
            rounded = np.asarray(exp.round(fmt), dtype=np.float64).tolist()
            assert rounded == [float(formats.round_exact(w, fmt)) for w in want]


def test_a_truth_prints_as_label_value_and_how_it_is_known():
    """What a notebook prints: never the repr, and a whole number of certified digits."""
    from fpexplore.truth.value import Truth

    exact = Truth("a third", exact=Fraction(1, 3))
    assert str(exact) == "a third = 0.33333333333333333333 (exact)"
    approx = Truth("pi", mp=mpmath.mpf(mpmath.pi), digits=32.7)
    assert str(approx).endswith("(32 certified digits)")
    arr = Truth("thirds", exact=np.array([Fraction(1, 3)] * 4, dtype=object))
    assert str(arr) == "thirds = an array(4,) (exact)"
    assert "Truth(" in repr(exact)
