"""`djl_normalization`'s figure as SVG markup for the explorer (``explore(..., svg=figure_svg)``).

The same picture as the lesson's matplotlib `figure` (the heat map of the shown stage's
difference with a colour bar, or the classic std example's bars), written in a few
milliseconds: the heat map is one small PNG of the array's own pixels, scaled up by the
browser, instead of a whole figure rasterized and encoded in the kernel on every move.
"""

from __future__ import annotations

import io

import numpy as np

from ... import svg
from ...figures import data_uri
from ...result import Comparison
from .data import Classic, DjlData

W, H = 520, 420
#: heat map and colour bar boxes: (x0, y0, x1, y1)
_MAP = (60, 40, 400, 380)
_BAR = (430, 40, 450, 380)
_BARS = (60, 40, 500, 360)
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")


def _png(rgb: np.ndarray) -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="png", compress_level=1)
    return data_uri(buf.getvalue())


def _ticks(lo: float, hi: float, n: int) -> list[float]:
    from matplotlib.ticker import MaxNLocator

    return [v for v in MaxNLocator(nbins=n).tick_values(lo, hi) if lo <= v <= hi]


def _heat(heat: np.ndarray, title: str) -> list[str]:
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    heat = np.asarray(heat, dtype=np.float64)
    lo, hi = float(heat.min()), float(heat.max())
    span = hi - lo if hi > lo else 1.0
    cmap = colormaps["magma"]
    rgb = (cmap((heat - lo) / span)[..., :3] * 255).astype(np.uint8)
    h, w = heat.shape
    x0, y0, x1, y1 = _MAP
    scale = min((x1 - x0) / w, (y1 - y0) / h)
    mw, mh = w * scale, h * scale
    pixels = {"x": x0, "y": y0, "width": mw, "height": mh, "preserveAspectRatio": "none"}
    xticks = {x0 + (v + 0.5) * scale: f"{v:g}" for v in _ticks(0, w - 1, 6)}
    yticks = {y0 + (v + 0.5) * scale: f"{v:g}" for v in _ticks(0, h - 1, 6)}
    box = (x0, y0, x0 + mw, y0 + mh)
    bx0, by0, bx1, _ = _BAR
    ticks = {by0 + mh - (v - lo) / span * mh: f"{v:.3g}" for v in _ticks(lo, hi, 6) or [lo]}
    colours = [to_hex(cmap(t)) for t in np.linspace(0, 1, 11)]
    parts = [
        svg.text(W / 2, 20, title, font_size=13),
        svg.el("image", style="image-rendering:pixelated", href=_png(rgb), **pixels),
        *svg.frame(box, xticks, yticks, "column (pixel)", "row (pixel)", grid=False),
    ]
    return parts + svg.colour_bar((bx0, by0, bx1, by0 + mh), colours, ticks, name="fpx-djl")


def _classic(c: Classic) -> list[str]:
    bars = c.bars()
    vals = np.array([np.asarray(v, dtype=np.float64) for v in bars.values()])
    box = x0, y0, x1, y1 = _BARS
    top = float(np.abs(vals).max()) * 1.1 or 1.0
    py = svg.linear(-top, top, y1, y0)
    slot = (x1 - x0) / len(c.x)
    bw = slot * 0.8 / len(bars)
    xticks = {x0 + slot * (i + 0.5): f"{float(v):g}" for i, v in enumerate(c.x)}
    yticks = {py(v): f"{v:.2g}" for v in _ticks(-top, top, 6)}
    parts = [
        svg.text(W / 2, 20, "(x - mean) / std for x = [10, 20, 30, 40, 50]", font_size=13),
        svg.line(x0, py(0), x1, py(0), stroke="#333"),
        *svg.frame(box, xticks, yticks, "x", "normalized value", grid=False),
    ]
    for j, (k, colour) in enumerate(zip(bars, _COLOURS, strict=False)):
        for i, v in enumerate(vals[j].tolist()):
            bar = {"x": x0 + slot * (i + 0.1) + bw * j, "width": bw, "fill": colour}
            y, height = min(py(v), py(0)), abs(py(v) - py(0))
            parts.append(svg.tip(f"{k}: {v:.8g}", tag="rect", y=y, height=height, **bar))
    legend = [
        (k, {"shape": "s", "fill": colour}) for k, colour in zip(bars, _COLOURS, strict=False)
    ]
    return parts + svg.legend_box(x0 + 6, y0 + 4, 110, legend, font_size=11)


def figure_svg(comparison: Comparison) -> str:
    """`figure` as SVG markup: the heat map of the shown stage's difference with its colour
    bar (the classic example's bars for the std stage; a note where there is no heat map)."""
    data: DjlData = comparison.data
    if comparison.params["stage"] == "std" and data.classic is not None:
        parts = _classic(data.classic)
    elif data.heat is None:
        import textwrap

        why = data.djl_unavailable or "the two arrays differ in shape"
        lines = textwrap.wrap(f"no heat map: {why}", 64)  # 12 px text within the width
        top = H / 2 - 8 * len(lines)
        parts = [svg.text(W / 2, top + 16 * i, t, font_size=12) for i, t in enumerate(lines)]
    else:
        parts = _heat(data.heat, data.heat_title)
    return svg.doc(W, H, *parts, font_size=11)
