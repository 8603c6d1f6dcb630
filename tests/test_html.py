"""Rich and text output of a Comparison: compact HTML, claims that changed, a narrow table."""

import re
from fractions import Fraction

import numpy as np

from fpexplore.result import Claim, Comparison, Outcome
from fpexplore.result import html as fhtml
from fpexplore.result.text_table import COLUMNS
from fpexplore.truth import Truth

LONG_NOTE = "the sum runs left to right in float32 and every addition rounds " * 4


def _comparison(first_claim: bool = True) -> Comparison:
    truth = Truth("exact third", exact=Fraction(1, 3))
    third = np.float32(1) / np.float32(3)
    arr_truth = Truth("thirds", exact=np.array([Fraction(1, 3)] * 40, dtype=object))
    return Comparison(
        lesson="demo",
        params={"n": 3},
        truth=truth,
        outcomes=(
            Outcome.measured(
                "float32 divide with a long implementation name", "numpy", third, truth
            ),
            Outcome.measured("overflowed", "numpy", np.float32(np.inf), truth, note=LONG_NOTE),
            Outcome.measured(
                "other stage", "numpy", np.float32(0.5), truth, kind="reference", note="exact"
            ),
            Outcome.missing("djl divide", "djl", "no Java runtime. Fix: `make djl`"),
        ),
        claims={
            "rounded": Claim("float32 1/3 is correctly rounded", first_claim),
            "other": Claim("something that does not change", True),
        },
        data={"arr_truth": arr_truth},
        explanation="Division rounds once.\n\nSo the `float32` result is the nearest value.",
    )


def test_text_table_fits_the_notebook_columns_and_wide_shows_every_column():
    c = _comparison()
    narrow = c.table()
    assert max(len(line) for line in narrow.splitlines()) <= COLUMNS
    name = "float32 divide with a long implementation name"
    assert narrow.count("float32 divide") == 1  # wrapped inside its column, never repeated
    assert all(word in narrow for word in name.split())
    assert "make djl" in narrow and "[holds] rounded" in narrow
    assert "inf ULP" in narrow  # the alarming number is explained
    wide = c.table(wide=True)
    assert max(len(line) for line in wide.splitlines()) > 100
    head = next(line for line in wide.splitlines() if line.startswith("implementation"))
    assert all(col in head for col in ("kind", "device", "rel error", "note"))
    assert max(len(line) for line in c.table(width=70).splitlines()) <= 70


def test_html_has_truth_first_one_row_per_outcome_and_tooltips():
    c = _comparison()
    page = c._repr_html_()
    assert page.index("truth") < page.index("<table")
    assert page.count("<tr") == 1 + len(c.outcomes)
    assert "max-width:1000px" in page
    # the value in the digits of its own format (float32: 0.33333334), shown whole and in the
    # tooltip; the ULP bar has its colour class
    assert "title='0.33333334'" in page and "<span>0.33333334</span>" in page
    assert fhtml.ULP_CLASSES["correct"][0] in page and fhtml.ULP_CLASSES["many"][0] in page
    assert "outside the format&#39;s range" in page  # inf ULP explained in the row
    assert "reference row" in page
    assert "<details><summary>" in page and "Division rounds once" in page
    assert "<code>make djl</code>" in page
    assert re.search(r"<details><summary>the sum runs .* …</summary>", page)  # long note


def test_a_long_first_claims_list_keeps_what_failed_in_view():
    c = _comparison(False)
    many = {f"k{i}": Claim(f"claim number {i}", True) for i in range(fhtml.OPEN_CLAIMS)}
    c = Comparison(c.lesson, c.params, c.truth, c.outcomes, {**c.claims, **many})
    page = fhtml.claims_html(c)
    failed_at = page.index("float32 1/3 is correctly rounded")
    assert failed_at < page.index("<details>") < page.index("claim number 0")


def test_claims_after_an_update_show_only_what_changed():
    before, after = _comparison(True), _comparison(False)
    page = fhtml.comparison_html(after, previous=before)
    assert "float32 1/3 is correctly rounded" in page
    assert "something that does not change" not in page
    assert "1 unchanged" in page
    same = fhtml.comparison_html(before, previous=_comparison(True))
    assert "all 2 unchanged" in same and "correctly rounded" not in same.split("Claims")[1]
    # a first display lists every claim
    assert "something that does not change" in fhtml.comparison_html(before)


def test_meaning_of_alarming_numbers():
    c = _comparison()
    assert fhtml.meaning(c.outcome("float32 divide with a long implementation name")) == ""
    assert "inf ULP" in fhtml.meaning(c.outcome("overflowed"))
    assert fhtml.meaning(c.outcome("djl divide")) == ""
    pixels = Outcome.measured(
        "uint8",
        "numpy",
        np.array([6, 250], dtype=np.uint8),
        Truth("p", exact=np.array([Fraction(262), Fraction(250)], dtype=object)),
    )
    text = fhtml.meaning(pixels)
    assert "uint8: counted in levels" in text and "0 bits" not in text
    page = fhtml.comparison_html(Comparison("px", {}, None, (pixels,), {}))
    assert "n/a (integers)" in page
    tiny = Truth("tiny", exact=np.array([Fraction(1, 10**6), Fraction(1)], dtype=object))
    got = np.array([1.5e-6, 1.0], dtype=np.float32)
    text = fhtml.meaning(Outcome.measured("near zero", "numpy", got, tiny))
    assert "near zero" in text and "largest absolute error is 5e-07" in text, text
    wrong = np.array([-1e-6, -1.0], dtype=np.float32)  # a sign error is not "near zero"
    assert "0 bits: off by 100 %" in fhtml.meaning(Outcome.measured("sign", "x", wrong, tiny))
    assert c.rows()[1]["bits"] == "0.0" and c.rows()[0]["bits"] != "-0.0"


VERDICT = "varies; fixed by cudnn.det, bench+det, det_algos"
LONG_NAME = "matmul (cuBLAS) under use_deterministic_algorithms(True)"


def _verdicts() -> Comparison:
    """Values in words, as notebook 04's table has them (recorded on a card, no truth)."""
    return Comparison(
        lesson="words",
        params={},
        truth=None,
        outcomes=(
            Outcome(LONG_NAME, "torch", kind="recorded", value=VERDICT, device="cuda"),
            Outcome("conv2d forward", "torch", kind="recorded", value="deterministic"),
            Outcome("sum", "numpy", value=np.float64(0.30000000000000004)),
        ),
        claims={},
    )


def test_a_value_in_words_is_shown_whole_and_wraps_in_its_column():
    page = fhtml.comparison_html(_verdicts())
    assert f"<span class='fpx-s'>{VERDICT}</span>" in page  # whole, not cut with "…"
    assert "<span class='fpx-s'>deterministic</span>" in page
    assert ".fpx .fpx-s{white-space:normal}" in page and "overflow-wrap:anywhere" in page
    assert "class='fpx-v'" in page  # a number keeps its one-line monospace cell
    long_words = fhtml.comparison_html(
        Comparison("w", {}, None, (Outcome("x", "numpy", value="word " * 100),), {})
    )
    assert "<details><summary>" in long_words  # past NOTE_CHARS the rest opens on a click


def test_text_table_wraps_a_value_in_words_inside_its_column():
    text = _verdicts().table()
    assert max(len(line) for line in text.splitlines()) <= COLUMNS
    assert "…" not in text.split("sum")[0]  # the verdicts are whole
    assert all(word in text for word in VERDICT.split())
    assert text.count("varies;") == 1


def test_wrapped_is_public_and_wraps_each_printed_line_like_check(capsys):
    import fpexplore
    from fpexplore.result.text_table import wrapped

    assert fpexplore.wrapped is wrapped
    c = _comparison()
    c.check("rounded")
    line = c.claims["rounded"].line("rounded")
    assert capsys.readouterr().out == wrapped(line) + "\n"
    long = "[holds] " + "a claim that goes on " * 8
    out = wrapped(long)
    assert len(out.splitlines()) > 1 and max(map(len, out.splitlines())) <= COLUMNS
    assert all(x.startswith("    ") for x in out.splitlines()[1:])
    table = "name     value\n  " + "indented words " * 6
    lines = wrapped(table, width=40).splitlines()
    assert lines[0] == "name     value"  # a short line keeps its spacing
    assert lines[1].startswith("  indented") and lines[2].startswith("      w")
    assert wrapped("x" * 90).splitlines() == ["x" * 70, "    " + "x" * 20]  # never wider


def test_columns_no_row_measured_are_left_out():
    """A comparison of recorded counts (no truth, no error) shows no ULP or bits column; one
    measured row brings both back."""
    from fpexplore.result.html import comparison_html

    counted = Outcome("a kernel", "torch", value="varies", note="3 of 10 runs differ")
    bare = comparison_html(Comparison("demo", {}, None, (counted,)))
    assert "ULP error</th>" not in bare and "bits</th>" not in bare
    assert "3 of 10 runs differ" in bare and bare.count("<td>") == 3
    sum_ = Outcome.measured("np.sum", "numpy", np.float32(0.5), Truth("0.5", exact=Fraction(1, 2)))
    both = comparison_html(Comparison("demo", {}, None, (counted, sum_)))
    assert "ULP error</th>" in both and "bits</th>" in both and both.count("<td>") == 10


def test_values_show_every_digit_of_their_own_format_and_wrap_between_numbers():
    x = np.array([0.99999946, 1 / 3, 2.0], dtype=np.float32)
    assert fhtml.value_text(x) == "float32[3] [0.99999946, 0.33333334, 2.0]"
    assert fhtml.value_text(np.float64(0.1) + np.float64(0.2)) == "0.30000000000000004"
    assert fhtml.value_text(np.zeros((4, 2), np.float16)).startswith("float16[4×2] [0.0,")
    truth = Truth("x", exact=np.array([Fraction(float(v)) for v in x], dtype=object))
    o = Outcome.measured("emulate pairwise", "emulator", x, truth)
    page = Comparison(lesson="t", params={}, truth=truth, outcomes=(o,))._repr_html_()
    words = re.findall(r"<span>([^<]*)</span>", page.split("class='fpx-v'")[1].split("</td>")[0])
    assert words == ["float32[3]", "[0.99999946,", "0.33333334,", "2.0]"]


def test_long_names_break_after_their_punctuation_or_between_camel_case_parts():
    assert fhtml.soft("F.softmax(float32)") == "F.<wbr>softmax(<wbr>float32)"
    assert fhtml.soft("torch 2.11.0+cu130") == "torch 2.11.0+cu130"  # versions stay whole
    assert fhtml.soft("a<b") == "a&lt;b"
    assert fhtml.soft("3->16 -0.5 grad-input") == "3\u2011&gt;16 \u20110.5 grad-input"
    # a long CamelCase name breaks between its parts, never inside one
    assert fhtml.soft("SparseCategoricalCrossentropy()") == (
        "Sparse<wbr>Categorical<wbr>Crossentropy()"
    )
    assert fhtml.soft("BatchNorm1d") == "BatchNorm1d"  # short: whole


def test_a_long_table_shows_its_first_rows_and_collapses_the_rest_with_a_summary():
    truth = Truth("half", exact=Fraction(1, 2))
    n = fhtml.OPEN_ROWS + 3
    rows = tuple(Outcome.measured(f"way {i}", "emulator", np.float32(0.5), truth) for i in range(n))
    page = Comparison(lesson="t", params={}, truth=truth, outcomes=rows)._repr_html_()
    head, rest = page.split("<details class='fpx-rows'><summary>")
    assert head.count("<b>way ") == fhtml.OPEN_ROWS
    summary = rest.split("</summary>")[0]
    assert "3 more implementations" in summary and "way 10" in summary
    assert rest.count("<b>way ") == 3


def test_the_claims_caption_after_an_update_reads_as_a_sentence():
    """A widget update lists what changed under a caption that reads, whatever the counts
    (never "0 unchanged since the last update, changed or failing:)")."""
    import re

    from fpexplore.result import Claim

    def claims(**texts):
        return Comparison("t", {}, None, (), {k: Claim(t, True) for k, t in texts.items()})

    def caption(now, before):
        text = re.sub(r"<[^>]+>", " ", fhtml.claims_html(now, before))
        return " ".join(text.split())

    before = claims(a="x", b="y")
    assert caption(claims(a="x2", b="y2"), before).startswith(
        "Claims (2 hold). Every one changed since the last update, is new or fails: ✔ x2 ✔ y2"
    )
    assert caption(claims(a="x", b="y2"), before).startswith(
        "Claims (2 hold). 1 unchanged since the last update (not listed); changed, new or "
        "failing: ✔ y2"
    )
    assert caption(before, before) == "Claims (2 hold), all 2 unchanged since the last update"
    assert caption(claims(a="x"), None).startswith("Claims (1 holds) ✔ x")


def test_a_row_within_its_a_priori_bound_is_drawn_as_correct_not_as_a_failure():
    """Many ULPs within the computation's rounding bound are a correct result: no red bar, no
    event, a note that says so; past the bound (or without one) the row stays red."""
    truth = Truth("thirds", exact=np.array([Fraction(1, 3), Fraction(-1, 3)], dtype=object))
    off = np.array([1 / 3 + 2e-6, -1 / 3], dtype=np.float32)  # ~30 ULP off in float32
    plain = Outcome.measured("off", "numpy", off, truth)
    assert fhtml.ulp_class(plain) == "many" and plain.within_bound is None
    inside, outside = plain.with_bound(1e-5), plain.with_bound(np.array([1e-7, 1e-5]))
    assert inside.within_bound is True and outside.within_bound is False
    assert fhtml.ulp_class(inside) == "bounded" and fhtml.ulp_class(outside) == "many"
    assert plain.with_bound(np.zeros(3)).within_bound is False  # a bound of another shape
    bar = fhtml._bar(inside)
    assert bar["colour"] == fhtml.ULP_CLASSES["bounded"][0] and bar["under"] == "within its bound"
    assert fhtml._bar(outside)["under"] == ""
    assert "a-priori rounding bound" in bar["tip"]  # the count's tooltip says why it is green
    # a sign change within the bound is rounding near zero, not an event
    flip = Truth("tiny", exact=np.array([Fraction(1, 10**9), Fraction(1)], dtype=object))
    got = np.array([-1e-9, 1], dtype=np.float32)
    row = Outcome.measured("flip", "numpy", got, flip)
    assert fhtml._bar(row)["text"] == "sign flip"
    assert fhtml._bar(row.with_bound(1e-8))["text"].startswith("max")
    assert row.with_bound(1e-8).to_dict()["within_bound"] is True


def test_a_first_list_folds_the_claims_that_hold_and_those_not_checked():
    claims = {f"h{i}": Claim(f"holds {i}", True) for i in range(6)}
    claims |= {f"n{i}": Claim(f"not checked {i}", None, "torch is missing") for i in range(4)}
    claims["f"] = Claim("fails", False)
    page = fhtml.claims_html(Comparison("t", {}, None, (), claims))
    assert "the 6 that hold" in page and "the 4 not checked here" in page
    assert page.index("fails") < page.index("<details>")  # what fails stays in view
