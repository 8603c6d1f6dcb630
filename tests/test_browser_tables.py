"""The comparison table in Debian's Chromium at the width of JupyterLab's output area at
1000 px with the file browser open: no text is cut, a value in words wraps in its column."""

from __future__ import annotations

import numpy as np
import pytest
from browser_support import JS_MIDWORD, new_page, screenshot

import fpexplore
from fpexplore.result.html import comparison_html, value_text

pytestmark = [pytest.mark.browser, pytest.mark.reusable]

#: JupyterLab's output area at a 1000 px window with the file browser open
OUTPUT_PX = 568

#: the cells whose text is cut (scrolled out of view) or taller than their text allows
_CUT = """() => Array.from(document.querySelectorAll('.fpx-t td')).filter(
  td => !td.querySelector('.fpx-v') && td.scrollWidth > td.clientWidth + 1
).map(td => td.innerText.slice(0, 80))"""


def test_notebook_04s_table_wraps_its_values_in_words_at_1000_px(chromium_browser):
    c = fpexplore.run("gpu_determinism")
    words = [o.value for o in c.outcomes if o.ran and isinstance(o.value, str)]
    assert any(len(w) > 26 for w in words)  # "varies; fixed by ...": longer than a number
    page = new_page(chromium_browser)
    try:
        page.set_content(
            f"<body style='margin:0'><div id='out' style='width:{OUTPUT_PX}px'>"
            f"{comparison_html(c)}</div></body>"
        )
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        assert page.evaluate(_CUT) == []
        assert page.evaluate(JS_MIDWORD, "body") == []
        shown = page.evaluate(
            "() => Array.from(document.querySelectorAll('.fpx-s')).map(e => e.innerText)"
        )
        assert sorted(shown) == sorted(w.replace("`", "") for w in words)
        wide = page.evaluate("() => document.getElementById('out').scrollWidth")
        assert wide <= OUTPUT_PX
        screenshot(page, "table_04_at_1000px")
    finally:
        page.close()


def _long_names():
    from fractions import Fraction

    from fpexplore.result import Comparison, Outcome
    from fpexplore.truth import Truth

    x = np.array([0.00056681614, 7.4339e-06, 1.4271611e-05, 0.99999946], dtype=np.float32)
    truth = Truth("softmax", exact=np.array([Fraction(float(v)) for v in x], dtype=object))
    names = (
        "tf.nn.softmax(float32)",
        "F.softmax(float32)",
        "torch.sum (CUDA, recorded)",
        "Keras BatchNormalization defaults, inference",
        "keras.layers.LayerNormalization",
    )
    rows = tuple(
        Outcome.measured(n, "tensorflow", x * np.float32(1 + i * 1e-7), truth, version="2.21.0")
        for i, n in enumerate(names)
    )
    return Comparison(lesson="t", params={}, truth=truth, outcomes=rows)


def test_tables_break_words_only_at_their_boundaries_and_show_every_digit(chromium_browser):
    """At 568 px: no word of a cell breaks inside (the check finds one that does), no value is
    cut, and the table is no wider than the output area."""
    c = _long_names()
    page = new_page(chromium_browser)
    try:
        page.set_content(
            "<body style='margin:0;font-family:sans-serif'><div id='out' "
            f"style='width:{OUTPUT_PX}px'>{comparison_html(c)}</div>"
            "<table style='width:60px;table-layout:fixed' class='fpx-t'><tr>"
            "<td style='overflow-wrap:anywhere'>abcdefghijklmnopqrstuvwxyz</td></tr></table>"
            "</body>"
        )
        broken = page.evaluate(JS_MIDWORD, "body")
        assert len(broken) == 1 and "abcdefghij" in broken[0]  # the planted one, only
        values = page.evaluate(
            "() => Array.from(document.querySelectorAll('.fpx-v')).map(e => e.innerText)"
        )
        shown = [" ".join(v.split()) for v in values]
        assert shown == [value_text(o.value) for o in c.outcomes]  # every digit, none cut
        assert "0.99999946" not in shown[0]  # 3 values shown; the 4th is in the tooltip
        cut = page.evaluate(
            "() => Array.from(document.querySelectorAll('#out td')).filter("
            "td => td.scrollWidth > td.clientWidth + 1).length"
        )
        assert cut == 0
        assert page.evaluate("() => document.getElementById('out').scrollWidth") <= OUTPUT_PX
        screenshot(page, "table_long_names_at_568px")
    finally:
        page.close()
