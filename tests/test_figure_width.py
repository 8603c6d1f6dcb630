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


def _lesson_figures():
    from fpexplore.lessons import all_lessons

    for lesson in all_lessons().values():
        if lesson.figure is None:
            continue
        if lesson.name == "tf_vs_torch":
            from fpexplore.lessons.tf_vs_torch import SECTIONS

            for op in SECTIONS:
                yield (
                    lesson.name,
                    {"op": op, "length": 20} if op in ("lstm", "adam") else {"op": op},
                )
        else:
            yield lesson.name, dict(lesson.quick)


def _outside(fig) -> list[str]:
    """What a figure draws outside its own canvas (a title, label, legend or tick label cut
    at the edge): the parts as text, empty when everything is inside."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.canvas.get_width_height()
    texts = [t for t in fig.texts] + ([fig._suptitle] if fig._suptitle else [])
    for ax in fig.axes:
        texts += [ax.title, ax.xaxis.label, ax.yaxis.label]
        texts += list(ax.get_legend().get_texts()) if ax.get_legend() else []
    cut = [
        t.get_text()
        for t in texts
        if isinstance(t, Text) and t.get_visible() and t.get_text().strip()
        for b in [t.get_window_extent(renderer)]
        if b.x0 < -1 or b.x1 > width + 1 or b.y0 < -1 or b.y1 > height + 1
    ]
    box = fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans)
    if box.x0 < -1 or box.x1 > width + 1 or box.y0 < -1 or box.y1 > height + 1:
        cut.append(f"drawn extent x {box.x0:.0f}..{box.x1:.0f} of {width} px")
    return cut


@pytest.mark.slow
@pytest.mark.parametrize("name, params", list(_lesson_figures()), ids=str)
def test_every_lesson_figure_draws_inside_its_canvas(name, params):
    """No title, axis label, legend or tick label of a lesson's figure is cut at its edge (a
    title centred over a narrow axes, long row names beside bars)."""
    import matplotlib.pyplot as plt

    from fpexplore.lessons import get

    lesson = get(name)
    fig = lesson.figure(lesson.run(**params))
    try:
        assert _outside(fig) == [], (name, params)
    finally:
        plt.close(fig)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_addition_trees_draw_inside_their_canvas(threads):
    """Notebook 01's four trees side by side: each panel's title wraps inside its panel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from fpexplore.widgets import order_tree

    fig = order_tree.draw(16, threads=threads)
    FigureCanvasAgg(fig)
    assert _outside(fig) == []
