"""The exported lesson page and the report in Debian's Chromium, opened from file:// with no
server: no console errors, every figure decoded and shown, and the exported control switching
between its pre-computed views with no kernel."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from browser_support import new_page, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.reusable]

FPEXPLORE = [sys.executable, "-m", "fpexplore.cli"]
#: two cheap lessons: one live (torch, Keras), one on the recorded GPU runs
REPORT_LESSONS = ("train_vs_eval", "cpu_vs_accelerator")

_FIGURES = """() => Array.from(document.images).map(i => {
  const r = i.getBoundingClientRect();
  return {ok: i.complete && i.naturalWidth > 0, shown: r.width > 50 && r.height > 50,
          alt: i.alt};
})"""


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*FPEXPLORE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "train_vs_eval.html"
    _cli("export", "train_vs_eval", "--html", str(out), "--mode", "eval", cwd=out.parent)
    return out


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    lessons = [a for name in REPORT_LESSONS for a in ("--lesson", name)]
    done = _cli("report", "--out", str(out), *lessons, "--newest-record-only", cwd=out.parent)
    assert "lessons" in done.stderr  # the progress bar
    return out


def _open(browser, path: Path):
    page = new_page(browser)
    page.goto(path.as_uri(), wait_until="load")
    return page


def test_exported_page_works_offline(chromium_browser, exported: Path) -> None:
    page = _open(chromium_browser, exported)
    widget = page.locator(".fpx-widget .widget-dropdown select")
    widget.wait_for(timeout=30_000)
    figures = page.evaluate(_FIGURES)
    # the static run, then the pre-computed view the control shows
    assert len(figures) == 2 and all(f["ok"] and f["shown"] for f in figures), figures
    assert all("mode='eval'" in f["alt"] for f in figures)
    assert widget.evaluate("e => e.selectedOptions[0].text") == "eval"
    before = page.locator(".fpx-widget").inner_text()
    widget.select_option(label="train")
    page.wait_for_function(
        "t => document.querySelector('.fpx-widget').innerText !== t", arg=before, timeout=10_000
    )
    page.wait_for_function("() => Array.from(document.images).every(i => i.complete)")
    figures = page.evaluate(_FIGURES)
    assert all(f["ok"] and f["shown"] for f in figures), figures
    assert ["mode='eval'" in f["alt"] for f in figures] == [True, False]
    assert "mode='train'" in figures[1]["alt"]
    assert page.console_errors == []
    screenshot(page.locator(".fpx-widget"), "export_train_vs_eval_widget")
    page.close()


def test_report_opens_with_its_figures(chromium_browser, report_page: Path) -> None:
    page = _open(chromium_browser, report_page)
    figures = page.evaluate(_FIGURES)
    assert len(figures) >= len(REPORT_LESSONS), figures
    assert all(f["ok"] and f["shown"] for f in figures), figures
    text = page.locator("body").inner_text()
    for name in REPORT_LESSONS:
        assert name in text
    assert "What does my stack do?" in text and "Recorded GPU runs" in text
    assert "holds" in text
    assert page.console_errors == []
    screenshot(page, "report")
    page.close()
