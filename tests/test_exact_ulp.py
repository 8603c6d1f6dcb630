"""One ULP everywhere: the ULP of the exact value (Goldberg), in metrics and every view of it."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from fpexplore import formats, metrics
from fpexplore.diverge import report
from fpexplore.diverge.specs import LayerSpec
from fpexplore.result import Comparison, Outcome
from fpexplore.result import html as fhtml
from fpexplore.result.numbers import ulp_text
from fpexplore.truth import Truth

BELOW_ONE = Fraction(1) - Fraction(1, 2**30)  # rounds to 1.0 in float32
TEN_THOUSAND = 10_000 * Fraction(float(np.float32(1e-4)))  # 0.9999999747..., rounds to 1.0


def test_the_ulp_of_a_value_just_below_a_power_of_two_is_its_own_binade():
    assert float(formats.round_exact(BELOW_ONE, "float32")) == 1.0
    for t in (BELOW_ONE, TEN_THOUSAND, -BELOW_ONE):
        truth = Truth("below one", exact=t)
        assert metrics.truth_ulp(truth, "float32") == 2.0**-24  # not ulp(1.0) = 2**-23
        got = np.float32(1.0) if t > 0 else np.float32(-1.0)
        s = metrics.measure(got, truth)
        assert s.unit == 2.0**-24
        assert s.ulp_scalar == float((Fraction(float(got)) - t) / Fraction(2) ** -24)
    # the flagship sum: float32 1.0 is 0.424 ULPs of the exact value above it, not 0.212
    s = metrics.measure(np.float32(1.0), Truth("sum", exact=TEN_THOUSAND))
    assert round(s.ulp_scalar, 2) == 0.42
    torch_cpu = np.float32(0.99999958)  # a float32 sum of the same terms further below
    s = metrics.measure(torch_cpu, Truth("sum", exact=TEN_THOUSAND))
    assert s.ulp_scalar == float((Fraction(float(torch_cpu)) - TEN_THOUSAND) * 2**24)
    # the float64 pair path and a held mpmath value give the same unit
    with mpmath.workprec(120):
        mp = Truth("mp", mp=mpmath.mpf(1) - mpmath.mpf(2) ** -60, digits=30)
    assert metrics.measure(np.float32(1.0), mp).unit == 2.0**-24
    # exactly a power of two: its own ULP
    assert metrics.truth_ulp(Truth("one", exact=Fraction(1)), "float32") == 2.0**-23


def test_subnormal_and_zero_truths_use_the_smallest_gap():
    f = formats.get("float32")
    for t in (Fraction(3, 2**151), Fraction(0), Fraction(2) ** -126 - Fraction(1, 2**200)):
        truth = Truth("tiny", exact=t)
        assert metrics.truth_ulp(truth, f) == 2.0**-149
        assert metrics.measure(np.float32(0.0), truth).unit == 2.0**-149
    # the smallest normal itself has the same gap
    assert metrics.truth_ulp(Truth("tiny", exact=Fraction(2) ** -126), f) == 2.0**-149


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_float_and_exact_paths_agree_at_powers_of_two(name, monkeypatch):
    """Truths on either side of powers of two, by a little: the pair path's unit and error
    are the exact ones, and forcing every element down the exact path changes nothing."""
    f = formats.get(name)
    rng = np.random.default_rng(5)
    ks = rng.integers(f.emin - 3, min(f.emax, 900), 200)
    offs = [Fraction(int(rng.integers(-(2**20), 2**20)), 2 ** int(rng.integers(30, 120)))]
    exact = np.array(
        [Fraction(2) ** int(k) * (1 + offs[0] * (-1) ** i) for i, k in enumerate(ks)]
        + [Fraction(0)],
        dtype=object,
    )
    got = formats.round_exact(exact, f)
    truth = Truth("near powers", exact=exact)
    fast = metrics.measure(got, truth, fmt=f)
    want = np.array([formats.ulp(t, f) for t in exact], dtype=np.float64)
    assert np.array_equal(fast.unit, want)
    assert np.array_equal(metrics.truth_ulp(truth, f), want)
    monkeypatch.setattr(metrics, "_needs_exact", lambda g, hi, *_: np.isfinite(hi))
    slow = metrics.measure(got, truth, fmt=f)
    assert np.array_equal(slow.unit, want) and np.array_equal(slow.ulp, fast.ulp)
    triples = zip(got, exact, want, strict=True)
    errs = [float((Fraction(float(g)) - t) / Fraction(u)) for g, t, u in triples]
    assert np.array_equal(fast.ulp, np.array(errs))
    # the other neighbour of each truth is half to one of its ULPs away (less than one, but
    # rounded to float64 here), on either side of the power of two
    above = np.array([Fraction(float(g)) < t for g, t in zip(got, exact, strict=True)])
    other = np.where(above, formats.next_up(got, f), formats.next_down(got, f))
    off = metrics.measure(other, truth, fmt=f)
    keep = np.isfinite(other) & (got != 0)
    assert keep.sum() > 150
    assert np.all(np.abs(off.ulp[keep]) >= 0.5) and np.all(np.abs(off.ulp[keep]) <= 1)


def _flagship() -> tuple[np.ndarray, Truth]:
    """Float32 results on both sides of 1.0 against truths just below it."""
    got = np.array([1.0, 1.0, 0.99999994, 0.99999958], dtype=np.float32)
    exact = np.array([TEN_THOUSAND, BELOW_ONE, TEN_THOUSAND, TEN_THOUSAND], dtype=object)
    return got, Truth("just below one", exact=exact)


def test_every_path_rebuilds_the_same_error_in_the_same_unit():
    got, truth = _flagship()
    err = metrics.measure(got, truth)
    want = np.array([float(Fraction(float(g)) - t) for g, t in zip(got, truth.exact, strict=True)])
    assert np.array_equal(err.abs_error(), want)
    assert np.array_equal(err.unit, np.full(4, 2.0**-24))
    # the divergence report: its ULPs and its "/ bound" column from the same errors, for a
    # layer whose exact output is 1 - 2**-30 (float32 1 + float32 -2**-30)
    spec = LayerSpec("add", "add")
    x = (np.ones(4, np.float32), np.full(4, -(2.0**-30), np.float32))
    side = report._measure_once(spec, x, got, "float32")
    below = metrics.measure(got, Truth("add", exact=np.full(4, BELOW_ONE, dtype=object)))
    assert side.max_ulp == below.max_abs_ulp == 7.0 - 2.0**-6  # 0.99999958 is 7 gaps below 1
    diff = np.array([float(Fraction(float(g)) - BELOW_ONE) for g in got])
    bound = spec.bound(list(x), got.astype(np.float64) - diff, "float32")
    assert side.use == float(np.max(np.abs(diff) / bound))
    assert side.bound_ulp == float(np.max(bound / 2.0**-24))
    # the HTML's absolute error near zero, and the text and HTML rows: the metrics' numbers
    tiny = Truth("tiny", exact=np.array([Fraction(1, 10**6), BELOW_ONE], dtype=object))
    small = np.array([1.5e-6, 1.0], dtype=np.float32)
    near = fhtml._near_zero(Outcome.measured("near zero", "numpy", small, tiny))
    assert near is not None
    assert near[0] == float(abs(Fraction(float(small[0])) - Fraction(1, 10**6)))
    one = Truth("sum", exact=TEN_THOUSAND)
    out = Outcome.measured("sum", "numpy", np.float32(1.0), one)
    cell = f"{metrics.measure(np.float32(1.0), one).ulp_scalar:+.3g}"
    assert ulp_text(out.error, out.value) == cell == "+0.424"
    c = Comparison("units", {}, one, (out,), {})
    assert cell in c.table() and cell in fhtml.comparison_html(c)
    assert c.rows()[0]["ulp error"] == cell
