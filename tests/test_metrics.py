"""Error metrics against exact truths: ULPs, relative error, bits, rounding flags, specials."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from fpexplore import Comparison, Outcome, formats, metrics
from fpexplore.errors import InvalidInput
from fpexplore.truth import Truth

NAMES = formats.names()


def random_truths(f: formats.Format, n: int, seed: int) -> np.ndarray:
    """Random exact rationals across the format's range (normal and subnormal)."""
    rng = np.random.default_rng(seed)
    out = np.empty(n, dtype=object)
    for i in range(n):
        e = int(rng.integers(f.emin - f.mbits, f.emax))
        num = int(rng.integers(1, 2**62)) * 3 + 1
        v = Fraction(num, 2**62) * Fraction(2) ** e
        out[i] = -v if rng.random() < 0.5 else v
    return out


def exact_ulp_error(got: float, t: Fraction, f: formats.Format) -> float:
    """(got - t) in units of the ulp of the exact truth (Goldberg's definition)."""
    return float((Fraction(got) - t) / Fraction(formats.ulp(t, f)))


@pytest.mark.parametrize("name", NAMES)
def test_correctly_rounded_results_measure_within_half_an_ulp(name):
    f = formats.get(name)
    truths = random_truths(f, 400, seed=1)
    got = formats.round_exact(truths, f)
    s = metrics.measure(got, Truth("random", exact=truths), fmt=f)
    assert s.fmt == name and s.n == 400
    assert s.correctly_rounded and s.faithful and s.n_correctly_rounded == 400
    finite = np.isfinite(got)
    assert np.all(np.abs(s.ulp[finite]) <= 0.5)
    assert s.ulp_scalar is None and s.ulp.shape == (400,)
    for i in range(0, 400, 37):
        if finite[i]:
            assert s.ulp[i] == pytest.approx(
                exact_ulp_error(float(got[i]), truths[i], f), rel=1e-9, abs=1e-12
            )


@pytest.mark.parametrize("name", NAMES)
def test_neighbours_are_faithful_or_not(name):
    f = formats.get(name)
    truths = random_truths(f, 300, seed=2)
    cr = formats.round_exact(truths, f)
    above = np.array([Fraction(float(c)) < t for c, t in zip(cr, truths, strict=True)])
    # the other bracketing value: faithful, not correctly rounded (unless the truth is exact)
    other = np.where(above, formats.next_up(cr, f), formats.next_down(cr, f))
    s = metrics.measure(other, Truth("random", exact=truths), fmt=f)
    inexact = np.array([Fraction(float(c)) != t for c, t in zip(cr, truths, strict=True)])
    keep = np.isfinite(other) & inexact
    assert keep.sum() > 250
    assert s.faithful_each[keep].all()
    assert not s.correctly_rounded_each[keep].any()
    # in units of the exact truth's ulp, exactly: at least half and less than one, next to a
    # power of two too (the ulp of the rounded truth gave a quarter to one and a half there)
    for i in np.flatnonzero(keep)[:60]:
        assert s.ulp[i] == pytest.approx(
            exact_ulp_error(float(other[i]), truths[i], f), rel=1e-9, abs=1e-12
        )
    assert np.all(np.abs(s.ulp[keep]) < 1) and np.all(np.abs(s.ulp[keep]) >= 0.5)
    # one step further away: neither
    far = np.where(above, formats.next_down(cr, f), formats.next_up(cr, f))
    s = metrics.measure(far, Truth("random", exact=truths), fmt=f)
    keep = np.isfinite(far) & (np.abs(far) < f.max)
    assert not s.faithful_each[keep].any() and not s.correctly_rounded_each[keep].any()


def test_ties_go_to_even_and_exact_decision_near_a_tie():
    tie = Fraction(16777217)  # halfway between two float32 values
    assert metrics.measure(np.float32(16777216), Truth("t", exact=tie)).correctly_rounded
    s = metrics.measure(np.float32(16777218), Truth("t", exact=tie))
    assert not s.correctly_rounded and s.faithful and s.ulp_scalar == 0.5
    # a hair above the tie, too small for the (hi, lo) float64 pair to hold: decided exactly
    hair = tie + Fraction(1, 2**1100)
    hi, lo = Truth("t", exact=hair).split()
    assert hi == 16777217 and lo == 0
    assert not metrics.measure(np.float32(16777216), Truth("t", exact=hair)).correctly_rounded
    assert metrics.measure(np.float32(16777218), Truth("t", exact=hair)).correctly_rounded
    below = tie - Fraction(1, 2**1100)
    assert metrics.measure(np.float32(16777216), Truth("t", exact=below)).correctly_rounded


def test_relative_error_and_bits():
    s = metrics.measure(np.float64(0.1), Truth("0.1", exact=Fraction(1, 10)))
    expected_rel = abs(Fraction(0.1) - Fraction(1, 10)) / Fraction(1, 10)
    assert s.max_rel == pytest.approx(float(expected_rel), rel=1e-12)
    assert s.min_bits == pytest.approx(-math.log2(float(expected_rel)), rel=1e-12)
    exact = metrics.measure(np.float16(0.5), Truth("half", exact=Fraction(1, 2)))
    assert exact.min_bits == math.inf and exact.max_rel == 0 and exact.ulp_scalar == 0
    # agreement far beyond the format's precision is capped
    tiny_off = metrics.measure(np.float16(1), Truth("t", exact=1 + Fraction(1, 2**80)))
    assert tiny_off.min_bits == formats.get("half").precision + metrics.BITS_ABOVE_PRECISION
    # a result off by more than 100 %: zero bits
    assert metrics.measure(np.float32(-1), Truth("one", exact=Fraction(1))).min_bits == 0
    # truth zero
    zero = Truth("zero", exact=Fraction(0))
    assert metrics.measure(np.float32(0), zero).max_rel == 0
    z = metrics.measure(np.float32(1e-45), zero)
    assert z.max_rel == math.inf and z.ulp_scalar == 1.0 and not z.correctly_rounded


def test_summaries_over_arrays():
    truths = np.array([Fraction(k) for k in range(1, 101)], dtype=object)
    got = np.arange(1, 101, dtype=np.float64)
    got[-1] += 2 * 2.0**-46  # 100 + 2 ulp(100)... in float64 ulp(100) = 2**-46
    got[0] += 2.0**-52  # 1 + 1 ulp
    s = metrics.measure(got, Truth("ints", exact=truths))
    assert s.max_abs_ulp == 2.0
    assert s.mean_abs_ulp == pytest.approx(3.0 / 100)
    assert s.p99_abs_ulp == 1.0
    assert s.n_correctly_rounded == 98 and not s.correctly_rounded and not s.faithful


def test_nan_and_inf():
    nan = Truth("nan", mp=mpmath.nan, digits=30)
    both = metrics.measure(np.float32(np.nan), nan)
    assert both.ulp_scalar == 0 and both.min_bits == math.inf and both.correctly_rounded
    one = metrics.measure(np.float32(1.0), nan)
    assert one.max_abs_ulp == math.inf and not one.faithful
    miss = metrics.measure(np.float32(np.nan), Truth("one", exact=Fraction(1)))
    assert miss.max_abs_ulp == math.inf and miss.max_rel == math.inf and miss.min_bits == 0
    inf = Truth("inf", mp=mpmath.inf, digits=30)
    assert metrics.measure(np.float16(np.inf), inf).correctly_rounded
    assert metrics.measure(np.float16(-np.inf), inf).ulp_scalar == -math.inf
    fin = metrics.measure(np.float16(65504), inf)
    assert fin.ulp_scalar == -math.inf and not fin.faithful
    # overflow: got inf against a finite truth is an infinite error ...
    over = metrics.measure(np.float16(np.inf), Truth("t", exact=Fraction(65520)))
    assert over.ulp_scalar == math.inf and over.max_rel == math.inf
    # ... yet correctly rounded when the truth rounds to inf, and only then
    assert over.correctly_rounded
    under = metrics.measure(np.float16(np.inf), Truth("t", exact=Fraction(65519)))
    assert not under.correctly_rounded and under.faithful
    assert metrics.measure(np.float16(65504), Truth("t", exact=Fraction(65519))).correctly_rounded
    assert not metrics.measure(np.float16(np.inf), Truth("t", exact=Fraction(1))).faithful


def test_formats_of_results():
    truth = Truth("third", exact=Fraction(1, 3))
    import torch

    t = torch.tensor(1.0, dtype=torch.float64) / 3
    assert metrics.measure(t, truth).fmt == "binary64"
    bf = metrics.measure(torch.tensor(1 / 3, dtype=torch.bfloat16), truth)
    assert bf.fmt == "bfloat16" and bf.correctly_rounded
    import ml_dtypes

    arr = np.array(1 / 3, dtype=np.float32).astype(ml_dtypes.bfloat16)
    assert metrics.measure(arr, truth).fmt == "bfloat16"
    on_grid = formats.round_exact(Fraction(1, 3), "tf32")
    tf32 = metrics.measure(on_grid, truth, fmt="tf32")
    assert tf32.fmt == "tf32" and tf32.correctly_rounded

    class FakeTensor:  # TensorFlow's EagerTensor shape: a .numpy() method
        def numpy(self):
            return np.float32(1 / 3)

    assert metrics.measure(FakeTensor(), truth).fmt == "binary32"
    assert metrics.measure(1 / 3, truth).fmt == "binary64"


def test_bad_results_are_refused_with_the_reason():
    truth = Truth("third", exact=Fraction(1, 3))
    with pytest.raises(InvalidInput, match="not bfloat16 values"):
        metrics.measure(np.float32(1 / 3), truth, fmt="bfloat16")
    with pytest.raises(InvalidInput, match="shape"):
        metrics.measure(np.zeros(3, np.float32), truth)
    with pytest.raises(InvalidInput, match="floating-point"):
        metrics.measure(np.array(["a"]), truth)


def test_outcome_and_comparison_use_the_summary():
    truth = Truth("0.1", exact=Fraction(1, 10))
    o = Outcome.measured("float32", "numpy", np.float32(0.1), truth)
    comparison = Comparison("demo", {}, truth, (o,))
    row = comparison.rows()[0]
    assert row["ulp error"] == f"{o.error.ulp_scalar:+.3g}"
    d = comparison.to_dict()["outcomes"][0]["error"]
    assert d["correctly_rounded"] is True and d["fmt"] == "binary32"
    assert json.loads(comparison.to_json())["outcomes"][0]["error"]["ulp"] == [o.error.ulp_scalar]


def test_exact_zero_truths_measured_in_float64_as_exactly(monkeypatch):
    """A truth that is exactly zero needs no Fractions: float64 carries it and every error
    against it; the fast path gives what the exact path gives, element for element."""
    from fpexplore import truth as tr

    rng = np.random.default_rng(11)
    finite = rng.standard_normal(600) * 10.0 ** rng.integers(-45, 38, 600)
    specials = [0.0, -0.0, 1e-45, -1e-45, np.finfo(np.float32).max, np.inf, -np.inf]
    got = np.resize(np.concatenate([finite, specials]), 1200).astype(np.float32)
    zero = tr.sum(np.zeros((got.size, 3)), axis=1)
    fast = metrics.measure(got, zero)
    monkeypatch.setattr(metrics, "_needs_exact", lambda g, hi, *_: np.isfinite(hi))
    exact = metrics.measure(got, zero)
    for name in ("ulp", "rel", "bits", "correctly_rounded_each", "faithful_each"):
        assert np.array_equal(getattr(fast, name), getattr(exact, name)), name


def test_errors_are_in_ulps_of_the_truth_for_zero_and_subnormal_results():
    from fpexplore.truth import reference

    # gelu(-5.6) in float32 is about -6e-8, a normal number; a result of -0.0 is off by the
    # whole truth: |truth| / ulp(truth) ULPs (about 8.4e6), not |truth| / ulp(-0.0) (4e37)
    t = reference.gelu(np.array(np.float32(-5.6)))
    exact = Fraction(float(formats.round_exact(Fraction(float(t.split()[0])), "float32")))
    s = metrics.measure(np.float32(-0.0), t)
    expected = float(-exact / Fraction(formats.ulp(exact, "float32")))
    assert s.ulp_scalar == pytest.approx(expected, rel=1e-6)
    assert 1e6 < s.ulp_scalar < 1e8
    # +0.0 and -0.0 against the same truth: the same error
    assert metrics.measure(np.float32(0.0), t).ulp_scalar == s.ulp_scalar
    # a subnormal truth: the unit is the subnormal spacing, whatever the result is
    tiny = Truth("tiny", exact=Fraction(3) * Fraction(formats.get("float32").min_subnormal))
    assert metrics.measure(np.float32(0.0), tiny).ulp_scalar == -3.0
    assert metrics.measure(np.float32(1.0), tiny).ulp_scalar == pytest.approx(2.0**149 - 3)
    # a truth just below a power of two that rounds up to it: the unit is the exact value's,
    # 2**-24, not the 2**-23 of the 1.0 it rounds to
    below = Truth("below", exact=Fraction(1) - Fraction(1, 2**30))
    assert metrics.measure(np.float32(1.0), below).ulp_scalar == 2.0**-6
    # the exact path (a truth beyond float64's range) uses the same unit
    big = Truth("big", exact=Fraction(2) ** 1100)
    assert metrics.measure(np.float64(0.0), big).ulp_scalar == -(2.0**52)


def test_tolerance_reports_gelu_errors_in_ulps_of_the_truth():
    pytest.importorskip("torch")
    from fpexplore import tolerance

    advice = tolerance.advise("gelu", "float32", 512)
    assert advice.measured_max_ulp is not None
    # the worst element is a tail returned as 0 for a normal truth y: |y| / ulp(y) < 2**24
    # ULPs of the truth, not the 1e37 that dividing by ulp(0) gave
    assert advice.measured_max_ulp < 2**24
    assert "e+37" not in advice.text()
