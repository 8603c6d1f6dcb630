"""The comparison table in Debian's Chromium at the width of JupyterLab's output area at
1000 px with the file browser open: no text is cut, a value in words wraps in its column."""

from __future__ import annotations

import pytest
from browser_support import new_page, screenshot

import fpexplore
from fpexplore.result.html import comparison_html

pytestmark = [pytest.mark.browser, pytest.mark.reusable]

#: JupyterLab's output area at a 1000 px window with the file browser open (see
#: `fpexplore.result.text_table.COLUMNS`)
OUTPUT_PX = 555

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
        assert page.evaluate(_CUT) == []
        shown = page.evaluate(
            "() => Array.from(document.querySelectorAll('.fpx-s')).map(e => e.innerText)"
        )
        assert sorted(shown) == sorted(w.replace("`", "") for w in words)
        wide = page.evaluate("() => document.getElementById('out').scrollWidth")
        assert wide <= OUTPUT_PX
        screenshot(page, "table_04_at_1000px")
    finally:
        page.close()
