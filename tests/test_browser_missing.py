"""The notebooks that run TensorFlow or DJL, in JupyterLab at 1000×800 with the sidebar open, on
a laptop that has neither (and no GPU, as here): TensorFlow hidden by the import blocker
(tests/support/sitecustomize.py), Java by a PATH without ``java``.

Each notebook that the series' map says runs TensorFlow or DJL live (`fpexplore.series`) must
run to its end with the checks of `test_browser_notebooks`: no error output, no cell left
unrun, nothing unrendered, no log noise, no printed line over `PRINT_WIDTH`, nothing wider
than the notebook, no word broken inside, no figure scaled below legibility; and what is
missing shows as rows and claims that name it. Screenshots: ``<notebook>_without_pNN.png``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_support import (
    PRINT_WIDTH,
    ROOT,
    LabPage,
    LabServer,
    new_page,
    screenshot_pages,
)
from test_contract_degrade import TF, _path_without_java

from fpexplore.series import NOTEBOOKS

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.reusable]

MISSING = ("tensorflow", "djl")
#: the notebooks whose live parts include what is missing here
AFFECTED = tuple(f"notebooks/{n.file}" for n in NOTEBOOKS if any(b in n.backends for b in MISSING))


@pytest.fixture(scope="module")
def bare_lab(tmp_path_factory):
    """JupyterLab whose kernels see no TensorFlow and no Java."""
    env = dict(os.environ, FPEXPLORE_TEST_HIDE=TF, PYTHONPATH=str(ROOT / "tests" / "support"))
    env["PATH"] = _path_without_java(tmp_path_factory.mktemp("nojava") / "bin")
    env.pop("JAVA_HOME", None)
    with LabServer(env=env) as server:
        yield server


@pytest.fixture(scope="module")
def page(chromium_browser):
    page = new_page(chromium_browser)
    yield page
    page.close()


def test_the_affected_notebooks_are_found():
    assert len(AFFECTED) >= 5, AFFECTED
    assert all((ROOT / p).exists() for p in AFFECTED)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("notebook", AFFECTED, ids=lambda p: Path(p).stem)
def test_notebook_runs_to_its_end_without_tensorflow_or_java(bare_lab, page, notebook):
    stem = f"{Path(notebook).stem}_without"
    lab = LabPage(bare_lab, page).open(notebook)
    try:
        lab.run_all(timeout_s=600)
        screenshot_pages(page, lab.root, stem)
        found = {
            "errors": lab.errors(),
            "not rendered": lab.not_rendered(),
            "log, warning or progress lines": lab.noise_lines(),
            f"printed lines over {PRINT_WIDTH} characters": lab.long_lines(),
            "wider than the notebook": lab.overflow(),
            "words broken inside": lab.midword_breaks(),
            "figures too small to read": lab.scaled_figures(),
            "claims shown twice in a section": lab.repeated_claims(),
        }
        bad = {k: v for k, v in found.items() if v}
        assert not bad, f"{notebook} without TensorFlow and Java: {bad}"
        text = lab.root.locator(".jp-OutputArea").all_inner_texts()
        said = " ".join(text)
        assert "tensorflow" in said.lower() or "java" in said.lower(), (
            f"{notebook}: nothing says what is missing"
        )
    finally:
        lab.close()
