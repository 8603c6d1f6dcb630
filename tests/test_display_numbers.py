"""How errors are shown: bits of agreement never above the format's precision, and a ULP count
that says nothing (infinite, or more ULPs than the format has significands) shown as the event
behind it (overflow, NaN, sign flip, zero vs non-zero)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from fpexplore import metrics
from fpexplore.result import Comparison, Outcome
from fpexplore.result.numbers import bits_cap, bits_text, ulp_event
from fpexplore.truth import Truth
from fpexplore.widgets.float_bits_view import float_bits_table


@pytest.mark.parametrize("fmt, cap", [("bfloat16", 8), ("binary16", 11), ("binary32", 24)])
def test_bits_are_capped_at_the_precision(fmt, cap):
    assert bits_cap(fmt) == cap
    assert bits_text(cap + 1.2, fmt) == f"{cap:.1f}"
    assert bits_text(3.25, fmt) == "3.2"
    assert bits_text(float("inf"), fmt) == "all" and bits_text(-2.0, fmt) == "0.0"


def test_one_third_never_shows_more_bits_than_the_format_holds():
    rows = {r.format: r for r in float_bits_table("1/3")}
    assert rows["bfloat16"].bits_correct <= 8 and rows["binary16"].bits_correct <= 11
    assert rows["binary32"].bits_correct <= 24


def test_a_tie_underflow_is_named_a_tie():
    rows = {r.format: r for r in float_bits_table("0x1p-150")}
    assert rows["binary32"].stored == 0.0 and "exactly half" in rows["binary32"].note


def _ulp_cell(got, exact):
    truth = Truth("x", exact=np.array([Fraction(e) for e in exact], dtype=object))
    value = np.array(got, dtype=np.float32)
    err = metrics.measure(value, truth)
    c = Comparison("t", {}, truth, (Outcome("x", "numpy", value=value, error=err),), {})
    return ulp_event(err, value), c.rows()[0]["ulp error"], c.rows()[0]["bits"]


@pytest.mark.parametrize(
    "got, exact, event",
    [
        ([np.inf, 1.0], [1e39, 1], "overflow"),
        ([np.nan, 1.0], [2, 1], "NaN"),
        ([-1.0, 1.0], [2, 1], "sign flip"),
        ([0.0, 1.0], [Fraction(1, 10**8), 1], "0 vs ≠0"),
        ([1.0, 1.0], [1, 1], None),
    ],
)
def test_a_meaningless_ulp_count_is_shown_as_what_happened(got, exact, event):
    found, cell, bits = _ulp_cell(got, exact)
    assert found == event
    if event is not None:
        assert cell == event
    assert bits == "all" or float(bits) <= 24


def test_each_row_is_judged_against_its_own_truth():
    """A row measured against its own truth (an eval-mode row beside a train-mode truth, a
    gradient beside the forward value) shows no event read off another row's truth."""
    exact = [-1 - Fraction(3, 2**23), Fraction(2)]  # -1 is 3 ULP above it
    own = Truth("eval", exact=np.array(exact, dtype=object))
    other = Truth("train", exact=np.array([Fraction(1), Fraction(0)], dtype=object))
    value = np.array([-1.0, 2.0], dtype=np.float32)
    row = Outcome.measured("eval row", "numpy", value, own)
    c = Comparison("t", {}, other, (row,), {})
    assert row.error.max_abs_ulp == 3 and ulp_event(row.error, value) is None
    assert c.rows()[0]["ulp error"] == "+3"
    html = c._repr_html_()
    assert "sign flip" not in html and "0 vs ≠0" not in html


def test_no_bits_of_agreement_read_zero_not_minus_zero():
    err = metrics.measure(np.float32(0.0), Truth("x", exact=Fraction(1, 10**8)))
    assert err.min_bits == 0 and bits_text(err.min_bits, err.fmt) == "0.0"
    assert bits_text(-0.0, "binary32") == "0.0"


def test_a_gradient_measured_of_its_largest_value_shows_no_zero_event():
    """A tiny exact element that a framework returns as zero is millions of its own ULPs off but
    a fraction of an ULP of the largest element: measured that way (``at="largest"``) the row
    shows the count, not a red "0 vs ≠0"."""
    exact = [Fraction(1, 2**100), Fraction(3, 4), Fraction(-1, 2)]
    truth = Truth("grad", exact=np.array(exact, dtype=object))
    got = np.array([0.0, 0.75, -0.5], dtype=np.float32)
    own = Outcome.measured("elementwise", "x", got, truth)
    wide = Outcome.measured("normwise", "x", got, truth, at="largest")
    assert ulp_event(own.error, got) == "0 vs ≠0" and own.error.min_bits == 0
    assert ulp_event(wide.error, got) is None and wide.error.at == "largest"
    assert wide.error.max_abs_ulp == float(Fraction(1, 2**100) / 2**-24)
    assert wide.error.min_bits > 24 and not wide.error.correctly_rounded  # flags per element
    c = Comparison("t", {}, truth, (wide,), {})
    assert "0 vs ≠0" not in c._repr_html_() and "largest |value|" in c.rows()[0]["note"]
