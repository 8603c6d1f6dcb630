"""The summation lesson's error-growth figure as SVG markup, for the explorer: the picture of
`fpexplore.lessons.summation_order.plot.draw` in a millisecond, drawn by the browser, instead of
a matplotlib PNG per move (a few hundred milliseconds)."""

from __future__ import annotations

import math
from typing import Any

from .. import svg

#: the figure's width in CSS pixels (the notebook's output area) and the plot area inside it;
#: the legends sit below the plot, so the height follows them
WIDTH = 560
LEFT, RIGHT, TOP, BOTTOM = 70, 546, 50, 300
#: matplotlib's default colour cycle (tab10), so the curves keep their usual colours
COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
_SHAPES = "os^vDph*X"  # one marker shape per distinct result of a run


def _positive(v: Any) -> bool:
    return v is not None and math.isfinite(v) and v > 0


def _curves(growth: Any, fx: svg.Scale, fy: svg.Scale) -> tuple[list[str], list[Any]]:
    """The error curves and the bounds (clipped to the plot area) and their legend entries."""
    ns = [float(n) for n in growth.n]
    curves = []
    legend: list[tuple[str, dict[str, object]]] = []
    for i, (order, ys) in enumerate(growth.errors.items()):
        colour = COLOURS[i % len(COLOURS)]
        pts = [(fx(n), fy(y)) for n, y in zip(ns, ys, strict=True) if _positive(y)]
        curves.append(svg.polyline(pts, stroke=colour, stroke_width="1.3"))
        curves += [svg.el("circle", cx=x, cy=y, r="1.8", fill=colour) for x, y in pts]
        legend.append((f"{order} (emulated)", {"stroke": colour, "stroke_width": "1.4"}))
    for label, ys in growth.bounds.items():
        dashed = {"stroke": "#737373" if "sequential" in label else "#b3b3b3"}
        dashed["stroke_dasharray"] = "5,3"
        pts = [(fx(n), fy(y)) for n, y in zip(ns, ys, strict=True) if y > 0]
        curves.append(svg.polyline(pts, stroke_width="1", **dashed))
        legend.append((label, dashed))
    area = svg.el("rect", x=LEFT, y=TOP, width=RIGHT - LEFT, height=BOTTOM - TOP)
    clipped = [
        svg.el("clipPath", area, id="fpx-area"),
        svg.el("g", *curves, clip_path="url(#fpx-area)"),
    ]
    return clipped, legend


def _this_run(current: Any, fx: svg.Scale, fy: svg.Scale, top: float) -> tuple[list[str], float]:
    """This run: one marker per distinct error on the axes, and a legend naming the runs of
    each, in two columns from ``top`` down; and the legend's bottom."""
    groups: dict[float, list[str]] = {}
    for run, err in current.errors.items():
        if _positive(err):
            groups.setdefault(err, []).append(current.label(run))
    title = current.legend_title().replace("this run", f"this run (n = {current.n})", 1)
    out = [svg.text(LEFT - 30, top + 10, title, None, font_size=11)]
    ends = [top + 18, top + 18]  # each column's next free line
    for i, (err, names) in enumerate(list(groups.items())[: len(_SHAPES)]):
        x, y = LEFT - 26 + (i % 2) * (WIDTH - LEFT) / 2, ends[i % 2]
        style = {"fill": "none", "stroke": "#000" if i == 0 else COLOURS[i % len(COLOURS)]}
        tip = f"{' = '.join(names)}: {err:.3g}"
        for mx, my in ((fx(current.n), fy(err)), (x, y + 8)):
            out.append(
                svg.tip(tip, svg.marker(_SHAPES[i], mx, my, 5.0, stroke_width="1.6", **style))
            )
        for j, run in enumerate(names):
            line = f"{'= ' if j else ''}{run}"
            out.append(svg.text(x + 12, y + 12 + 12 * j, line, None))
        ends[i % 2] = y + 12 * len(names) + 8
    return out, max(ends)


def growth_svg(comparison: Any) -> str:
    """The error-growth figure of a summation comparison as an ``<svg>`` element: the plot,
    the curves' legend below it, and below that this run's results."""
    from ..lessons.summation_order.growth import X_MAX, ylim

    growth, current = comparison.data.growth, comparison.data.current
    name = f"Error growth: {comparison.params.distribution}, {comparison.params.dtype}"
    x_lo, x_hi = float(growth.n[0]) / 1.5, X_MAX * 1.5
    y_lo, y_hi = ylim(growth, current)
    fx, fy = svg.log(x_lo, x_hi, LEFT, RIGHT), svg.log(y_lo, y_hi, BOTTOM, TOP)
    out = [
        svg.text(WIDTH / 2, 17, name, font_size=13),
        svg.text(
            WIDTH / 2,
            34,
            f"(curves: seed {growth.seed}, {growth.threads} thread(s); zero errors not drawn)",
            font_size=13,
        ),
        *svg.frame(
            (LEFT, TOP, RIGHT, BOTTOM),
            {fx(10.0**k): f"1e{k}" for k in svg.decades(x_lo, x_hi)},
            {fy(10.0**k): f"1e{k}" for k in svg.decades(y_lo, y_hi)},
            "n (number of terms)",
            "|sum − exact| / Σ|x|",
        ),
    ]
    curves, legend = _curves(growth, fx, fy)
    out += curves
    # the curves' legend below the axes, two columns
    rows = (len(legend) + 1) // 2
    out += svg.legend_box(LEFT - 30, BOTTOM + 48, (WIDTH - LEFT) / 2, legend, rows, 10)
    marks, bottom = _this_run(current, fx, fy, BOTTOM + 48 + 14 * rows + 14)
    return svg.doc(WIDTH, int(bottom) + 6, *out, *marks, title=name, font_size=10)
