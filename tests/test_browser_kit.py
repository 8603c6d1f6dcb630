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
