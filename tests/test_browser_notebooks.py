"""Every notebook of the series in JupyterLab, in headless Chromium, as a student sees it.

One JupyterLab server and one 1000×800 page with the file browser open (JupyterLab's default
layout on a laptop: 568 px of output width) for the whole session. For each notebook found in
``notebooks/``: open it, Run All, and require no error output, no cell left unrun, every widget
rendered (no "Loading widget…", no "Error displaying widget", no ``<Figure size`` text instead
of a figure), no printed line over `PRINT_WIDTH` characters, no table, text output or picture
wider than the notebook, no word of a table cell broken inside the word, no figure shown
below `LEGIBLE_SCALE` of its own width, and no framework log line, warning or progress-bar
residue in any output; then move one control of every widget and require its output to change
and settle.

The kernels come from the Binder replay's environment (`binder_env`: postBuild's venv, the
package installed from its build), and each notebook's kernel, with its children, is measured
while it runs (`benchmarks/notebook_memory.py`'s sampler): its peak with CPU-only torch stays
under Binder's limit, and nothing it started outlives it. Every notebook runs once, for both.
Screenshots of each notebook (its full length) and each widget are kept in
``.cache/screenshots`` (or ``$FPEXPLORE_SCREENSHOTS``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from binder_env import BINDER_LIMIT_GB, Replay
from browser_support import (
    PRINT_WIDTH,
    ROOT,
    LabPage,
    LabServer,
    WidgetView,
    new_page,
    notebooks,
    screenshot,
    screenshot_pages,
)

sys.path.insert(0, str(ROOT / "benchmarks"))
import notebook_memory as nm

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.reusable]

RUN_ALL_TIMEOUT_S = 600
CHANGE_TIMEOUT_S = 120


#: each notebook's measured peak, printed as a table when the module ends
PEAKS: list[nm.Peak] = []


@pytest.fixture(scope="module")
def series_lab(binder_replay: Replay):
    """JupyterLab on the checkout's notebooks, with kernels from the Binder replay's venv."""
    python = binder_replay.require()
    with LabServer(kernel_python=python, env=binder_replay.env) as server:
        yield server
    if PEAKS:
        print("\n" + nm.table(PEAKS))


@pytest.fixture(scope="module")
def page(chromium_browser):
    page = new_page(chromium_browser)
    yield page
    page.close()


def _movable(widget: WidgetView):
    """The control to move: the first that is not free text (those need a value to type)."""
    controls = widget.controls()
    return next((c for c in controls if c.kind != "text"), None), controls


def test_notebooks_are_discovered():
    found = notebooks()
    assert len(found) >= 8, found
    assert found == sorted(f"notebooks/{p.name}" for p in (ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.timeout(RUN_ALL_TIMEOUT_S + 300)
@pytest.mark.parametrize("notebook", notebooks(), ids=lambda p: Path(p).stem)
def test_notebook_runs_and_widgets_answer(series_lab, page, notebook):
    stem = Path(notebook).stem
    lab = LabPage(series_lab, page).open(notebook)
    peak = nm.Peak(Path(notebook).name)
    kernel = series_lab.kernel_pid(notebook)
    # the kernel is the Binder environment's Python, whose fpexplore is the built package
    assert nm.tree(kernel)[0].cmdline()[0] == str(series_lab.kernel_python)
    sampler = nm.Sampler(kernel, peak)
    sampler.start()
    try:
        peak.seconds = lab.run_all(timeout_s=RUN_ALL_TIMEOUT_S)
        screenshot(page, stem)
        screenshot_pages(page, lab.root, stem)
        errors = lab.errors()
        assert not errors, f"{notebook}: " + "\n".join(errors)
        bad = lab.not_rendered()
        assert not bad, f"{notebook}: outputs that did not render: {bad}"
        noise = lab.noise_lines()
        assert not noise, f"{notebook}: log, warning or progress lines:\n" + "\n".join(noise)
        long = lab.long_lines()
        assert not long, f"{notebook}: printed lines over {PRINT_WIDTH} characters:\n" + "\n".join(
            long
        )
        wide = lab.overflow()
        assert not wide, f"{notebook}: wider than the notebook at 1000 px:\n" + "\n".join(wide)
        broken = lab.midword_breaks()
        assert not broken, f"{notebook}: words broken inside:\n" + "\n".join(broken)
        small = lab.scaled_figures()
        assert not small, f"{notebook}: figures too small to read:\n" + "\n".join(small)
        again = lab.repeated_claims()
        assert not again, f"{notebook}: claims shown twice in a section:\n" + "\n".join(again)

        widgets = lab.widgets()
        assert len(widgets) == lab.widget_count_in_outputs(), (
            f"{notebook}: {lab.widget_count_in_outputs()} widget outputs, {len(widgets)} rendered"
        )
        for widget in widgets:
            widget.locator.scroll_into_view_if_needed()
            control, controls = _movable(widget)
            if control is None:
                assert not controls, f"{widget.title}: only text controls, none moved"
                continue
            ms = widget.change(control, +1, timeout_s=CHANGE_TIMEOUT_S)
            assert ms >= 0
            assert not lab.not_rendered(), f"{widget.title} after moving {control.label}"
            screenshot(widget.locator, f"{stem}_widget{widget.index}")
        assert not lab.errors(), f"{notebook} after moving the controls: {lab.errors()}"
        peak.ok = True
    finally:
        sampler.stop.set()
        sampler.join()
        lab.close()
    PEAKS.append(peak)
    # Binder's limit, with CPU-only torch (the CUDA libraries' pages taken off)
    nm._report(peak)
    assert peak.cpu_wheel_charged / 1e9 < BINDER_LIMIT_GB, nm.table([peak])
    left = nm._left_running(sampler.seen.values())
    assert not left, f"{notebook}: processes outlived their kernel: {left}"
