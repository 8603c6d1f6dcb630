"""SVG figures the browser draws: elements (escaped), the root, scales, decade ticks, a frame,
markers and a legend box, for every hand-written plotter."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from html import escape

__all__ = [
    "colour_bar",
    "decades",
    "doc",
    "el",
    "frame",
    "legend_box",
    "line",
    "linear",
    "log",
    "marker",
    "polyline",
    "text",
    "tip",
]

Scale = Callable[[float], float]
#: a marker's unit outline (radius 1) per matplotlib shape letter; "o" and "s" are elements
_OUTLINES = {
    "^": [(0, -1.2), (1.1, 0.8), (-1.1, 0.8)],
    "v": [(0, 1.2), (1.1, -0.8), (-1.1, -0.8)],
    "D": [(0, -1.3), (1.1, 0), (0, 1.3), (-1.1, 0)],
    "p": [(math.sin(k * 2 * math.pi / 5), -math.cos(k * 2 * math.pi / 5)) for k in range(5)],
    "h": [(math.cos(k * math.pi / 3), math.sin(k * math.pi / 3)) for k in range(6)],
    "*": [
        (
            (1.2, 0.5)[k % 2] * math.sin(k * math.pi / 5),
            -(1.2, 0.5)[k % 2] * math.cos(k * math.pi / 5),
        )
        for k in range(10)
    ],
    "X": [(-1, -1), (1, 1), (0, 0), (1, -1), (-1, 1), (0, 0)],
}


def _value(v: object) -> str:
    return f"{v:.1f}" if isinstance(v, float) else escape(str(v))


def el(tag: str, *children: str, **attrs: object) -> str:
    """``<tag …>children</tag>`` (children are markup): ``font_size`` written ``font-size``,
    floats with one decimal, None attributes left out."""
    head = "".join(
        f' {k.rstrip("_").replace("_", "-")}="{_value(v)}"'
        for k, v in attrs.items()
        if v is not None
    )
    return f"<{tag}{head}>{''.join(children)}</{tag}>" if children else f"<{tag}{head}/>"


def doc(width: int, height: int, *parts: str, title: str | None = None, **attrs: object) -> str:
    """The ``<svg>`` root (white, scaled down to a narrow output) around ``parts``."""
    return el(
        "svg",
        *([el("title", escape(title))] if title is not None else []),
        *parts,
        xmlns="http://www.w3.org/2000/svg",
        width=width,
        height=height,
        viewBox=f"0 0 {width} {height}",
        font_family="DejaVu Sans, sans-serif",
        **attrs,
        role="img",
        style="background:#fff;max-width:100%;height:auto",
    )


def text(x: float, y: float, s: str, anchor: str | None = "middle", **attrs: object) -> str:
    """``s`` (escaped) at (x, y); ``rotate=-90`` turns it about that point."""
    turn = attrs.pop("rotate", None)
    if turn is not None:
        attrs["transform"] = f"translate({_value(x)} {_value(y)}) rotate({turn})"
        x = y = None  # type: ignore[assignment]
    return el("text", escape(s), x=x, y=y, text_anchor=anchor, **attrs)


def tip(title: str, *body: str, tag: str = "g", **attrs: object) -> str:
    """``body`` in a ``<g>`` (or a ``tag`` with ``attrs``) whose tooltip is ``title``."""
    return el(tag, el("title", escape(title)), *body, **attrs)


def line(x1: float, y1: float, x2: float, y2: float, **attrs: object) -> str:
    return el("line", x1=x1, y1=y1, x2=x2, y2=y2, **attrs)


def polyline(points: Iterable[tuple[float, float]], **attrs: object) -> str:
    """An unfilled polyline through ``points``."""
    d = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return el("polyline", points=d, fill="none", **attrs)


def linear(lo: float, hi: float, a: float, b: float) -> Scale:
    """The map of [lo, hi] onto pixels [a, b]."""
    return lambda v: a + (v - lo) / ((hi - lo) or 1e-9) * (b - a)


def log(lo: float, hi: float, a: float, b: float) -> Scale:
    """The map of [lo, hi] (log scale) onto pixels [a, b]."""
    f = linear(math.log10(lo), math.log10(hi), a, b)
    return lambda v: f(math.log10(v))


def decades(lo: float, hi: float, every: int = 1) -> list[int]:
    """The exponents k of the powers 10**k in [lo, hi] that are multiples of ``every``."""
    first, last = math.ceil(math.log10(lo)), math.floor(math.log10(hi))
    return [k for k in range(first, last + 1) if k % every == 0]


def frame(
    box: tuple[float, float, float, float],
    xgrid: dict[float, str] | None = None,
    ygrid: dict[float, str] | None = None,
    xlabel: str = "",
    ylabel: str = "",
    grid: bool = True,
) -> list[str]:
    """The axes of ``box`` (left, top, right, bottom): grid lines (or 4 px ticks) labelled at
    the pixel positions of ``xgrid`` and ``ygrid``, the frame, the axis labels."""
    left, top, right, bottom = box
    style = {"stroke": "#000", "stroke_opacity": "0.12"} if grid else {"stroke": "#333"}
    x0, x1, y0, y1 = (left, right, top, bottom) if grid else (left - 4, left, bottom, bottom + 4)
    below, aside = (14, 5) if grid else (13, 3)  # the tick labels' distances from the lines
    out = [line(x, y0, x, y1, **style) + text(x, y1 + below, s) for x, s in (xgrid or {}).items()]
    out += [
        line(x0, y, x1, y, **style) + text(x0 - aside, y + 3.5, s, "end")
        for y, s in (ygrid or {}).items()
    ]
    rect = {"fill": "none", "stroke": "#000", "stroke_width": "0.8"}
    out.append(el("rect", x=left, y=top, width=right - left, height=bottom - top, **rect))
    if xlabel:
        out.append(text((left + right) / 2, bottom + 36, xlabel, font_size=11))
    if ylabel:
        out.append(text(16, (top + bottom) / 2, ylabel, font_size=11, rotate=-90))
    return out


def colour_bar(
    box: tuple[float, float, float, float],
    colours: list[str],
    ticks: dict[float, str],
    label: str = "",
    name: str = "fpx-bar",
) -> list[str]:
    """A vertical colour bar in ``box`` from ``colours[0]`` (bottom) to ``colours[-1]`` (a
    gradient of id ``name``), ``ticks`` labelled right of it, ``label`` beyond them."""
    left, top, right, bottom = box
    n = max(len(colours) - 1, 1)
    stops = [el("stop", offset=f"{i / n:.2f}", stop_color=c) for i, c in enumerate(colours[::-1])]
    shade = el("linearGradient", *stops, id=name, x1=0, y1=0, x2=0, y2=1)
    fill = {"fill": f"url(#{name})", "stroke": "#333", "stroke_width": 0.5}
    out = [
        el("defs", shade),
        el("rect", x=left, y=top, width=right - left, height=bottom - top, **fill),
    ]
    out += [text(right + 5, y + 4, s, "start") for y, s in ticks.items()]
    if label:
        out.append(text(right + 44, (top + bottom) / 2, label, rotate=-90))
    return out


def marker(shape: str, x: float, y: float, r: float, **style: object) -> str:
    """A matplotlib-like marker (``o s ^ v D p h * X``) of radius ``r`` centred on (x, y)."""
    if shape == "o":
        return el("circle", cx=x, cy=y, r=r, **style)
    if shape == "s":
        return el("rect", x=x - r, y=y - r, width=2 * r, height=2 * r, **style)
    d = " ".join(f"{x + r * px:.1f},{y + r * py:.1f}" for px, py in _OUTLINES[shape])
    return el("polyline" if shape == "X" else "polygon", points=d, **style)


def legend_box(
    x: float,
    y: float,
    width: float,
    entries: list[tuple[str, dict[str, object]]],
    rows: int = 0,
    font_size: float = 9,
) -> list[str]:
    """A legend in a white box at (x, y), columns ``width`` wide of ``rows`` entries (default:
    one column). An entry ``(label, style)`` is a marker if the style has a ``shape``, else a
    line."""
    rows = rows or len(entries)
    cols = (len(entries) + rows - 1) // rows
    box = {"fill": "#fff", "fill_opacity": "0.85", "stroke": "#ccc"}
    out = [el("rect", x=x, y=y, width=cols * width + 8, height=rows * 14 + 6, **box)]
    for i, (label, style) in enumerate(entries):
        cx, cy = x + (i // rows) * width, y + 10 + (i % rows) * 14
        if "shape" in style:
            shape, rest = style["shape"], {k: v for k, v in style.items() if k != "shape"}
            out.append(marker(str(shape), cx + 15, cy, 4, **rest))
        else:
            out.append(line(cx + 5, cy, cx + 25, cy, **style))
        out.append(text(cx + 31, cy + 3, label, "start", font_size=font_size))
    return out
