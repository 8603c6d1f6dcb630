"""The summation lesson's error-growth figure as SVG markup, for the explorer: the picture of
`fpexplore.lessons.summation_order.plot.draw` in a millisecond, drawn by the browser, instead of
a matplotlib PNG per move (a few hundred milliseconds)."""

from __future__ import annotations

import math
from typing import Any

from .. import svg

#: the figure's size in CSS pixels, and the plot area inside it
WIDTH, HEIGHT = 864, 414
LEFT, RIGHT, TOP, BOTTOM = 78, 640, 30, 366
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


def growth_svg(comparison: Any) -> str:
    """The error-growth figure of a summation comparison as an ``<svg>`` element."""
    from ..lessons.summation_order.growth import X_MAX, ylim

    growth, current = comparison.data.growth, comparison.data.current
    name = f"Error growth: {comparison.params.distribution}, {comparison.params.dtype}"
    ns = [float(n) for n in growth.n]
    x_lo, x_hi = ns[0] / 1.5, X_MAX * 1.5
    y_lo, y_hi = ylim(growth, current)
    fx, fy = svg.log(x_lo, x_hi, LEFT, RIGHT), svg.log(y_lo, y_hi, BOTTOM, TOP)
    out = svg.frame(
        (LEFT, TOP, RIGHT, BOTTOM),
        {fx(10.0**k): f"1e{k}" for k in svg.decades(x_lo, x_hi)},
        {fy(10.0**k): f"1e{k}" for k in svg.decades(y_lo, y_hi)},
        "n (number of terms)",
        "|sum − exact| / Σ|x|",
    )
    # the curves and the bounds, clipped to the plot area
    area = svg.el("rect", x=LEFT, y=TOP, width=RIGHT - LEFT, height=BOTTOM - TOP)
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
    out += [
        svg.el("clipPath", area, id="fpx-area"),
        svg.el("g", *curves, clip_path="url(#fpx-area)"),
        svg.text(
            (LEFT + RIGHT) / 2,
            TOP - 10,
            f"{name} (curves: seed {growth.seed}, {growth.threads} thread(s); "
            "zero errors not drawn)",
            font_size=11,
        ),
    ]
    # the curves' legend, upper left inside the axes, two columns
    out += svg.legend_box(LEFT + 6, TOP + 6, 170, legend, (len(legend) + 1) // 2, 8.5)
    # this run: one marker per distinct error, named in a legend right of the axes
    groups: dict[float, list[str]] = {}
    for run, err in current.errors.items():
        if _positive(err):
            groups.setdefault(err, []).append(run)
    y_text = TOP + 16
    out.append(svg.text(RIGHT + 14, TOP + 8, f"this run (n = {current.n})", None))
    for i, (err, names) in enumerate(list(groups.items())[: len(_SHAPES)]):
        style = {"fill": "none", "stroke": "#000" if i == 0 else COLOURS[i % len(COLOURS)]}
        tip = f"{' = '.join(names)}: {err:.3g}"
        for x, y in ((fx(current.n), fy(err)), (RIGHT + 20, y_text + 8)):
            out.append(svg.tip(tip, svg.marker(_SHAPES[i], x, y, 5.0, stroke_width="1.6", **style)))
        for j, run in enumerate(names):
            line = f"{'= ' if j else ''}{run}"
            out.append(svg.text(RIGHT + 32, y_text + 11 + 11 * j, line, None, font_size=8.5))
        y_text += 11 * len(names) + 8
    return svg.doc(WIDTH, HEIGHT, *out, title=name, font_size=10)
