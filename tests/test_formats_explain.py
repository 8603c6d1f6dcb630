"""The float-bits explanation's claims (notebook 00): rounding theory's predictions for a typed
value, computed live, and a `check` that prints and asserts them as `Comparison.check` does.

Also the facts notebook 00 shows but does not claim (its widget demo, its format table, the
ULP convention cell): they are asserted here.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from fpexplore import formats, metrics
from fpexplore.errors import ClaimFailed, ClaimNotChecked
from fpexplore.result import Claim, Comparison, check_claims
from fpexplore.truth import Truth
from fpexplore.widgets.float_bits_claims import CLAIMS, explanation_claims
from fpexplore.widgets.float_bits_view import explain, float_bits_table, parse_exact

#: every value notebook 00 explains, and a few edges (signs, zero, past every range)
TEXTS = [
    "0.1",
    "0.2",
    "0.3",
    "1/3",
    "65504",
    "65519",
    "65520",
    str(Fraction(65520) - Fraction(1, 10**6)),
    "1e-40",
    "-1e-40",
    "3.4e38",
    str(2**24 + 1),
    str(2**24 + 3),
    "0x1p-149",
    "0x1p-150",
    str(Fraction(1, 2**150) * Fraction(1001, 1000)),
    "-2.5",
    "0",
    "-0",
    "6e-8",
    "1e400",
    "1e-400",
]


@pytest.mark.parametrize("text", TEXTS)
def test_every_claim_holds_for_correct_rounding(text):
    e = explain(text)
    assert tuple(e.claims) == tuple(CLAIMS)
    failed = {k: c.line(k) for k, c in e.claims.items() if c.holds is not True}
    assert not failed, failed
    for key, claim in e.claims.items():
        assert claim.text.startswith(CLAIMS[key] + ": "), key


@pytest.mark.parametrize("text", ["inf", "-inf", "nan"])
def test_non_finite_values_are_not_checked(text):
    e = explain(text)
    assert all(c.holds is None for c in e.claims.values())
    with pytest.raises(ClaimNotChecked, match="not a finite number"):
        e.check("nearest")


def test_claims_fail_on_rows_of_another_value():
    """The claims are computed, not stated: the rows of 0.1 read as if 0.3 had been typed
    break correct rounding, exactness, direction and the neighbours."""
    rows = tuple(float_bits_table("0.1"))
    claims = explanation_claims("0.3", parse_exact("0.3"), rows)
    assert claims["nearest"].holds is False
    assert claims["neighbours"].holds is False
    assert claims["numpy_agrees"].holds is False
    with pytest.raises(ClaimFailed, match="nearest"):
        check_claims("float bits of 0.3", claims, ("nearest",))
    # 16777216 read as 16777217: a tie rounded against theory would fail too
    rows = tuple(float_bits_table("16777219"))
    claims = explanation_claims("16777217", parse_exact("16777217"), rows)
    assert claims["ties_to_even"].holds is False


def test_claims_state_what_was_measured():
    e = explain("0.1")
    assert "odd factor 5" in e.claims["exact_where_predicted"].text
    assert "binary16 0.4 (down)" in e.claims["direction"].text
    assert "binary32 0.8 (up)" in e.claims["direction"].text
    assert "in bfloat16" in e.claims["rel_within_u"].text
    tie = explain("65520").claims["ties_to_even"].text
    assert "binary16: 65504 or 65536 -> inf" in tie and "tf32: 65504 or 65536 -> 65536" in tie
    assert "overflow in binary16 (from 65520 on)" in explain("65520").claims["range"].text
    under = explain("0x1p-150").claims
    assert (
        "binary32" in under["ties_to_even"].text
        and "underflow to 0 in binary32" in under["range"].text
    )
    assert "subnormal in bfloat16, tf32, binary32" in explain("1e-40").claims["range"].text
    assert "16777216 or 16777218 -> 16777216" in explain("16777217").claims["ties_to_even"].text
    assert "16777218 or 16777220 -> 16777220" in explain("16777219").claims["ties_to_even"].text


def test_check_prints_like_comparison_check(capsys):
    e = explain("0.1")
    e.check("nearest", "range")
    out = capsys.readouterr().out
    assert out.startswith("[holds] nearest: ") and "\n[holds] range: " in out
    with pytest.raises(KeyError, match="no claim 'bogus'"):
        e.check("bogus")
    with pytest.raises(KeyError):
        e.holds("bogus")
    assert e.holds("nearest") is True
    # the same function prints and raises for a lesson's Comparison
    c = Comparison("demo", {}, None, (), claims={"x": Claim("a sentence", False)})
    with pytest.raises(ClaimFailed, match="claim 'x' of lesson 'demo' fails: a sentence"):
        c.check("x")
    assert capsys.readouterr().out == "[FAILS] x: a sentence\n"


def test_rows_by_format_and_html():
    e = explain("0.1", ("binary16", "binary32"))
    assert e.row("float16") is e.rows[0] and e.row("binary32").format == "binary32"
    with pytest.raises(KeyError):
        e.row("binary64")
    assert "binary16" in e._repr_html_()


# --- what notebook 00 shows and these tests check (not claims of the explanation)


def test_notebook_00_motivating_sum_and_format_table():
    assert 0.1 + 0.2 != 0.3
    assert formats.get("bfloat16").ebits == formats.get("binary32").ebits
    assert formats.get("tf32").ebits == formats.get("binary32").ebits


def test_notebook_00_ulp_of_the_truth():
    exact = Fraction(1, 3) * Fraction(2) ** -100
    zero = metrics.measure(np.float32(0.0), Truth("x", exact=exact))
    unit_truth = formats.ulp(formats.round_exact(exact, "binary32"), "binary32")
    unit_zero = formats.ulp(0.0, "binary32")
    assert zero.ulp_scalar == float(-exact / Fraction(unit_truth))
    assert abs(zero.ulp_scalar) < 2**24 < abs(float(exact) / unit_zero)


def test_notebook_00_facts_shown_in_tables():
    third = explain("1/3")
    assert max(third.rows, key=lambda r: r.rel_error).format == "bfloat16"
    half = formats.get("binary16")
    largest = explain("65504").row("binary16")
    assert largest.exact and largest.stored == half.max and largest.mantissa == "1" * half.mbits
    assert explain("65519").row("binary16").stored == half.max
    assert explain("65520").row("tf32").stored == 2**16
    smallest = explain("0x1p-149").row("binary32")
    assert smallest.stored == formats.get("binary32").min_subnormal and smallest.exact
    assert explain("0x1p-150").row("binary32").stored == 0.0


def test_notebook_00_widget_demo():
    """The steps notebook 00 drives the widget through: text and slider stay in step."""
    pytest.importorskip("ipywidgets")
    from fpexplore.widgets import float_bits

    widget = float_bits("0.1")
    text, slider, table = widget.children
    text.value = "1/3"
    assert abs(slider.value - 1 / 3) < 1e-12 and text.value == "1/3"
    slider.value = 1e-40
    assert float(text.value) == slider.value and "subnormal" in table.value
    r = explain("0.1").row("binary64")
    assert float(r.neighbours[0]) < 0.1 < float(r.neighbours[1])
    assert r.next_up - r.stored == r.ulp


def test_the_formats_table_keeps_its_numbers_whole():
    """Notebook 00's table of the formats comes from the package, in the float bits view's
    style, with no break at a hyphen before a digit ("6.1035e-05" stays whole)."""
    import json
    from pathlib import Path

    from fpexplore import formats
    from fpexplore.widgets.float_bits_view import formats_html

    html = formats_html()
    assert "class='fpx-fb'" in html
    assert "6.1035e\u201105" in html and "6.1035e-05" not in html
    assert html.count("<tr>") == len(formats.FORMATS) + 1
    nb = Path(__file__).resolve().parents[1] / "notebooks/00_floating_point_formats.ipynb"
    code = "".join(
        "".join(c["source"]) for c in json.loads(nb.read_text())["cells"]
        if c["cell_type"] == "code"
    )  # fmt: skip
    assert "formats_html()" in code and "<table>" not in code
