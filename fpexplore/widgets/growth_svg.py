"""The summation lesson's error-growth figure as SVG markup, for the explorer.

The same picture as `fpexplore.lessons.summation_order.plot.draw` (the emulators' curves, the
textbook bounds, this run's results as markers), written as a few kilobytes of SVG text in a
millisecond and drawn by the browser, instead of a matplotlib figure rasterized and
PNG-encoded in the kernel on every move (a few hundred milliseconds on a busy machine). The
notebook's static figure stays matplotlib's.
"""

from __future__ import annotations

import html
import math
from typing import Any

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


def _log_scale(lo: float, hi: float, a: float, b: float):
    """A function mapping [lo, hi] (log scale) onto pixels [a, b]."""
    llo, lhi = math.log10(lo), math.log10(hi)

    def f(v: float) -> float:
        return a + (math.log10(v) - llo) / (lhi - llo) * (b - a)

    return f


def _marker(shape: str, x: float, y: float, colour: str, tip: str) -> str:
    r = 5.0
    style = f'fill="none" stroke="{colour}" stroke-width="1.6"'
    if shape == "o":
        body = f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" {style}/>'
    elif shape == "s":
        body = f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r}" height="{2 * r}" {style}/>'
    else:
        pts = {
            "^": [(0, -1.2), (1.1, 0.8), (-1.1, 0.8)],
            "v": [(0, 1.2), (1.1, -0.8), (-1.1, -0.8)],
            "D": [(0, -1.3), (1.1, 0), (0, 1.3), (-1.1, 0)],
            "p": [(math.sin(a), -math.cos(a)) for a in (k * 2 * math.pi / 5 for k in range(5))],
            "h": [(math.cos(a), math.sin(a)) for a in (k * math.pi / 3 for k in range(6))],
            "*": [
                (
                    (1.2 if k % 2 == 0 else 0.5) * math.sin(a),
                    -(1.2 if k % 2 == 0 else 0.5) * math.cos(a),
                )
                for k, a in ((k, k * math.pi / 5) for k in range(10))
            ],
            "X": [(-1, -1), (1, 1), (0, 0), (1, -1), (-1, 1), (0, 0)],
        }[shape]
        d = " ".join(f"{x + r * px:.1f},{y + r * py:.1f}" for px, py in pts)
        tag = "polyline" if shape == "X" else "polygon"
        body = f'<{tag} points="{d}" {style}/>'
    return f"<g><title>{html.escape(tip)}</title>{body}</g>"


def _decades(lo: float, hi: float) -> list[int]:
    return list(range(math.ceil(math.log10(lo)), math.floor(math.log10(hi)) + 1))


def growth_svg(comparison: Any) -> str:
    """The error-growth figure of a summation comparison as an ``<svg>`` element."""
    from ..lessons.summation_order.growth import X_MAX, ylim

    growth, current = comparison.data.growth, comparison.data.current
    p = comparison.params
    ns = [float(n) for n in growth["n"]]
    x_lo, x_hi = ns[0] / 1.5, X_MAX * 1.5
    y_lo, y_hi = ylim(growth, current)
    fx = _log_scale(x_lo, x_hi, LEFT, RIGHT)
    fy = _log_scale(y_lo, y_hi, BOTTOM, TOP)
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="DejaVu Sans, sans-serif" font-size="10" '
        'role="img" style="background:#fff;max-width:100%;height:auto">',
        f"<title>Error growth: {html.escape(p['distribution'])}, {html.escape(p['dtype'])}</title>",
    ]
    # grid, ticks and tick labels (decades)
    for k in _decades(x_lo, x_hi):
        x = fx(10.0**k)
        out.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{BOTTOM}" stroke="#000" '
            'stroke-opacity="0.12"/>'
            f'<text x="{x:.1f}" y="{BOTTOM + 14}" text-anchor="middle">1e{k}</text>'
        )
    for k in _decades(y_lo, y_hi):
        y = fy(10.0**k)
        out.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{RIGHT}" y2="{y:.1f}" stroke="#000" '
            'stroke-opacity="0.12"/>'
            f'<text x="{LEFT - 5}" y="{y + 3.5:.1f}" text-anchor="end">1e{k}</text>'
        )
    # the curves and the bounds, clipped to the plot area
    out.append(
        f'<clipPath id="fpx-area"><rect x="{LEFT}" y="{TOP}" width="{RIGHT - LEFT}" '
        f'height="{BOTTOM - TOP}"/></clipPath><g clip-path="url(#fpx-area)">'
    )
    legend: list[tuple[str, str, str]] = []  # (label, colour, dash)
    for i, (order, ys) in enumerate(growth["errors"].items()):
        colour = COLOURS[i % len(COLOURS)]
        pts = [
            (fx(n), fy(y))
            for n, y in zip(ns, ys, strict=True)
            if y is not None and math.isfinite(y) and y > 0
        ]
        if pts:
            d = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            out.append(f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="1.3"/>')
            out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="1.8" fill="{colour}"/>' for x, y in pts]
        legend.append((f"{order} (emulated)", colour, ""))
    for label, ys in growth["bounds"].items():
        colour = "#737373" if "sequential" in label else "#b3b3b3"
        d = " ".join(f"{fx(n):.1f},{fy(y):.1f}" for n, y in zip(ns, ys, strict=True) if y > 0)
        out.append(
            f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="1" '
            'stroke-dasharray="5,3"/>'
        )
        legend.append((label, colour, "5,3"))
    out.append("</g>")
    # the frame, the labels, the title
    out.append(
        f'<rect x="{LEFT}" y="{TOP}" width="{RIGHT - LEFT}" height="{BOTTOM - TOP}" '
        'fill="none" stroke="#000" stroke-width="0.8"/>'
        f'<text x="{(LEFT + RIGHT) / 2}" y="{HEIGHT - 12}" text-anchor="middle" '
        'font-size="11">n (number of terms)</text>'
        f'<text transform="translate(16 {(TOP + BOTTOM) / 2}) rotate(-90)" '
        'text-anchor="middle" font-size="11">|sum − exact| / Σ|x|</text>'
        f'<text x="{(LEFT + RIGHT) / 2}" y="{TOP - 10}" text-anchor="middle" font-size="11">'
        f"Error growth: {html.escape(p['distribution'])}, {html.escape(p['dtype'])} (curves: "
        f"seed {growth['seed']}, {growth['threads']} thread(s); zero errors not drawn)</text>"
    )
    # the curves' legend, upper left inside the axes, two columns
    rows = (len(legend) + 1) // 2
    col_w = 170
    out.append(
        f'<rect x="{LEFT + 6}" y="{TOP + 6}" width="{2 * col_w + 8}" height="{rows * 14 + 8}" '
        'fill="#fff" fill-opacity="0.85" stroke="#ccc"/>'
    )
    for i, (label, colour, dash) in enumerate(legend):
        x = LEFT + 12 + (i // rows) * col_w
        y = TOP + 17 + (i % rows) * 14
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<line x1="{x}" y1="{y - 3}" x2="{x + 20}" y2="{y - 3}" stroke="{colour}" '
            f'stroke-width="1.4"{dash_attr}/>'
            f'<text x="{x + 25}" y="{y}" font-size="8.5">{html.escape(label)}</text>'
        )
    # this run: one marker per distinct error, named in a legend right of the axes
    groups: dict[float, list[str]] = {}
    for name, err in current["errors"].items():
        if err is not None and math.isfinite(err) and err > 0:
            groups.setdefault(err, []).append(name)
    n_run = current["n"]
    y_text = TOP + 8
    out.append(f'<text x="{RIGHT + 14}" y="{y_text}" font-size="10">this run (n = {n_run})</text>')
    y_text += 8
    for i, (err, names) in enumerate(list(groups.items())[: len(_SHAPES)]):
        colour = "#000" if i == 0 else COLOURS[i % len(COLOURS)]
        tip = f"{' = '.join(names)}: {err:.3g}"
        out.append(_marker(_SHAPES[i], fx(n_run), fy(err), colour, tip))
        out.append(_marker(_SHAPES[i], RIGHT + 20, y_text + 8, colour, tip))
        for j, name in enumerate(names):
            out.append(
                f'<text x="{RIGHT + 32}" y="{y_text + 11 + 11 * j}" font-size="8.5">'
                f"{'= ' if j else ''}{html.escape(name)}</text>"
            )
        y_text += 11 * len(names) + 8
    out.append("</svg>")
    return "".join(out)
