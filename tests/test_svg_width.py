"""The widgets' SVG figures fit JupyterLab's output area (568 px with the file browser open):
drawn at most that wide, so the browser does not scale them down, with no text under 10 px."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest

import fpexplore

#: the output area's width in CSS pixels (a 1000 px window, the file browser open)
OUTPUT_W = 568
#: the smallest text a figure may draw, in CSS pixels
LEAST_FONT = 10.0
#: what a browser draws text without a font-size at
BROWSER_FONT = 16.0
_TEXT = "{http://www.w3.org/2000/svg}text"


def _rng_seeds() -> str:
    from fpexplore.lessons import rng_seeds

    c = fpexplore.run("rng_seeds", seed=3, n=40, k=5, tensorflow=False, java=False, weights=False)
    return rng_seeds.figure_svg(c)


def _train_vs_eval(mode: str, batch: int) -> str:
    from fpexplore.lessons import train_vs_eval

    return train_vs_eval.figure_svg(fpexplore.run("train_vs_eval", mode=mode, runs=20, batch=batch))


def _growth() -> str:
    from fpexplore.lessons import summation_order as so
    from fpexplore.widgets.growth_svg import growth_svg

    return growth_svg(so.LESSON.run(**so.LESSON.quick))


def _trees(n: int, order: str | None = None, threads: int = 1) -> str:
    from fpexplore.widgets import order_tree

    return order_tree.tree_svg(n, order, threads)


def _toy_report(diverging: bool) -> str:
    from fpexplore.diverge.report import DivergenceReport, LayerRow, Side
    from fpexplore.diverge.widget import plot_svg

    ok = Side(0.5, 2.0, 0.25, True, 0, 4, float("inf"))
    bad = Side(900.0, 2.0, 450.0, False, 3, 4, float("inf"))
    rows = (
        LayerRow("fc1", "linear", "x @ W", (4,), 8, ok, ok, 0.0, 0.0),
        LayerRow("norm", "layernorm", "eps", (4,), 4, ok, bad, 700.0, 0.0),
    )
    rows = rows if diverging else rows[:1]
    return plot_svg(DivergenceReport(("torch", "mine"), ("1", "1"), "binary32", rows, 0.0, "toy"))


def _zoo_report() -> str:
    pytest.importorskip("torch")
    from fpexplore import diverge
    from fpexplore.diverge.widget import plot_svg

    return plot_svg(diverge.run_zoo("transformer", "torch", "dropout"))


FIGURES = {
    "rng_seeds": _rng_seeds,
    "train_vs_eval train": lambda: _train_vs_eval("train", 4),
    "train_vs_eval eval, batch 1": lambda: _train_vs_eval("eval", 1),  # the long title
    "summation growth": _growth,
    "order trees, all frameworks": lambda: _trees(64, threads=2),
    "order tree, java": lambda: _trees(8, "java"),
    "divergence, toy": lambda: _toy_report(True),
    "divergence, toy agreeing": lambda: _toy_report(False),
    "divergence, zoo transformer": _zoo_report,
}


def _px(value: str) -> float:
    return float(value.removesuffix("px"))


def _texts(node: ET.Element, size: float) -> Iterator[tuple[ET.Element, float]]:
    """Every ``<text>`` under ``node`` with its font-size: its own, else its nearest
    ancestor's (``size`` is the one ``node`` inherits)."""
    size = _px(node.get("font-size", str(size)))
    if node.tag == _TEXT:
        yield node, size
    for child in node:
        yield from _texts(child, size)


@pytest.mark.parametrize("name", list(FIGURES))
def test_svg_figure_fits_the_output_area(name):
    root = ET.fromstring(FIGURES[name]())
    width = _px(root.get("width"))
    _x, _y, view_w, _h = (float(v) for v in root.get("viewBox").split())
    assert width <= OUTPUT_W and view_w <= OUTPUT_W, (name, width, view_w)
    texts = list(_texts(root, BROWSER_FONT))
    assert texts, name
    small = [(t.text, size) for t, size in texts if size < LEAST_FONT]
    assert small == [], name
    # a label anchored outside the picture is cut (rotated ones are placed by a transform)
    outside = [t.text for t, _ in texts if not 0 <= float(t.get("x", 0)) <= view_w]
    assert outside == [], name
