"""Figures are made for the notebook's output width (568 px at a 1000 px window with the file
browser open): shown at their own size, never scaled down until their labels cannot be read."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fpexplore.figures import DPI, WIDTH_IN

ROOT = Path(__file__).resolve().parents[1]
#: JupyterLab's output area at 1000 px with the file browser open
OUTPUT_PX = 568


def _figsizes():
    for path in sorted((ROOT / "fpexplore").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "figsize":
                yield path.relative_to(ROOT), node.lineno, ast.unparse(node.value)


def test_the_width_fits_the_output_area():
    assert WIDTH_IN * DPI <= OUTPUT_PX


@pytest.mark.parametrize("where", list(_figsizes()), ids=lambda w: f"{w[0]}:{w[1]}")
def test_every_figure_is_sized_from_the_output_width(where):
    path, line, size = where
    width = size.strip("()").split(",")[0]
    fits = "WIDTH_IN" in width or float(ast.literal_eval(width)) <= WIDTH_IN
    assert fits, f"{path}:{line}: figsize={size}, wider than the output area"


def test_the_summation_growth_figure_fits_at_its_own_size(tmp_path):
    """Drawn with this run's markers and their legend (below the axes), cropped to what is
    drawn: no wider than the output area."""
    import io
    from types import SimpleNamespace

    from PIL import Image

    from fpexplore.figures import figure_png
    from fpexplore.lessons.summation_order import growth, plot

    curves = growth.curves("uniform", "float32", 1)
    errors = {"np.sum": 3e-8, "torch.sum": 6e-7, "Java float loop": 9e-5}
    c = SimpleNamespace(
        data=SimpleNamespace(growth=curves, current=growth.Point(10_000, errors, {}, {})),
        params=SimpleNamespace(distribution="uniform", dtype="float32"),
    )
    fig = plot.draw(c)
    png = figure_png(fig, tight=True)
    (tmp_path / "growth.png").write_bytes(png)
    width, _ = Image.open(io.BytesIO(png)).size
    assert 0.8 * OUTPUT_PX <= width <= OUTPUT_PX


def _functions_laying_out_twice():
    """Functions that make a figure with ``layout="constrained"`` and then lay it out tightly
    (``tight_layout``, or ``with_banner``, which calls it): matplotlib warns into the notebook's
    output ("The figure layout has changed to tight")."""
    for path in sorted((ROOT / "fpexplore").rglob("*.py")):
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            text = ast.unparse(fn)
            if "layout='constrained'" in text and ("tight_layout" in text or "with_banner" in text):
                yield f"{path.relative_to(ROOT)}:{fn.name}"


def test_no_figure_is_laid_out_two_ways():
    assert list(_functions_laying_out_twice()) == []
