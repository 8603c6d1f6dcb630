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
    return ulp_event(err, value, truth), c.rows()[0]["ulp error"], c.rows()[0]["bits"]


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
