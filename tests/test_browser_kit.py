"""The workshop kit's handouts print on one A4 page each: printed to PDF by Chromium (the print
stylesheet of the kit), the pages counted."""

from __future__ import annotations

import re

import pytest
from browser_support import SCREENSHOTS, new_page

from fpexplore import workshop
from fpexplore.workshop import pages

pytestmark = [pytest.mark.browser, pytest.mark.reusable]


def pdf_pages(pdf: bytes) -> int:
    """How many pages a PDF has (its page objects)."""
    return len(re.findall(rb"/Type\s*/Page(?![s\w])", pdf))


def test_the_page_count_reads_a_pdf(chromium_browser):
    page = new_page(chromium_browser)
    try:
        page.set_content("<p style='page-break-after:always'>one</p><p>two</p>")
        assert pdf_pages(page.pdf(format="A4")) == 2
    finally:
        page.close()


def test_every_handout_prints_on_one_a4_page(chromium_browser, tmp_path):
    pages.build(tmp_path)
    page = new_page(chromium_browser)
    out = SCREENSHOTS / "kit"
    out.mkdir(parents=True, exist_ok=True)
    try:
        counts = {}
        for nb in workshop.NOTEBOOKS:
            page.goto((tmp_path / f"{nb.key}-handout.html").as_uri())
            pdf = page.pdf(format="A4", prefer_css_page_size=True)
            (out / f"{nb.key}-handout.pdf").write_bytes(pdf)
            counts[nb.key] = pdf_pages(pdf)
        assert all(n == 1 for n in counts.values()), counts
    finally:
        page.close()


#: the printable width of an A4 page at Chromium's default margins (about 0.4 in a side), in
#: CSS pixels: 210 mm at 96 dpi is 794 px
A4_PRINTABLE_PX = 718

_JS_WIDER = """
(limit) => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > limit + 1 && e.getClientRects().length)
  .slice(0, 5).map(e => e.tagName + ': ' + (e.textContent || '').trim().slice(0, 50))
"""


def test_every_kit_page_prints_within_an_a4_page(chromium_browser, tmp_path):
    """The run sheet, pre-flight checklist, glossary, index and each notebook's facilitator
    notes, printed as a facilitator prints them: nothing wider than the printable width (the
    PDFs are kept beside the screenshots, to look at)."""
    from fpexplore.workshop import day

    pages.build(tmp_path)
    for name, make in (("runsheet", day.runsheet), ("preflight", day.preflight)):
        (tmp_path / f"{name}.html").write_text(make(), encoding="utf-8")
    out = SCREENSHOTS / "kit"
    out.mkdir(parents=True, exist_ok=True)
    page = chromium_browser.new_page(viewport={"width": A4_PRINTABLE_PX, "height": 1000})
    page.emulate_media(media="print")
    wide = {}
    try:
        for path in sorted(tmp_path.glob("*.html")):
            page.goto(path.as_uri())
            found = page.evaluate(_JS_WIDER, A4_PRINTABLE_PX)
            if found:
                wide[path.name] = found
            (out / f"{path.stem}.pdf").write_bytes(page.pdf(format="A4"))
        assert not wide, wide
        assert {"runsheet.pdf", "preflight.pdf", "glossary.pdf", "index.pdf"} <= {
            p.name for p in out.glob("*.pdf")
        }
    finally:
        page.close()
