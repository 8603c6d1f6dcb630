"""`djl_normalization`'s figure as SVG markup for the explorer (``explore(..., svg=figure_svg)``).

The same picture as the lesson's matplotlib `figure` (the heat map of the shown stage's
difference with a colour bar, or the classic std example's bars), written in a few
milliseconds: the heat map is one small PNG of the array's own pixels, scaled up by the
browser, instead of a whole figure rasterized and encoded in the kernel on every move.
"""

from __future__ import annotations

import html
import io

import numpy as np

from ...figures import data_uri
from ...result import Comparison
from .data import Classic, DjlData

W, H = 520, 420
#: heat map and colour bar boxes: (x0, y0, x1, y1)
_MAP = (60, 40, 400, 380)
_BAR = (430, 40, 450, 380)
_BARS = (60, 40, 500, 360)
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")


def _text(x: float, y: float, s: str, anchor: str = "middle", size: int = 12, **kw: str) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in kw.items())
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}"{extra}>'
        f"{html.escape(s)}</text>"
    )


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

    heat = np.asarray(heat, dtype=np.float64)
    lo, hi = float(heat.min()), float(heat.max())
    span = hi - lo if hi > lo else 1.0
    cmap = colormaps["magma"]
    rgb = (cmap((heat - lo) / span)[..., :3] * 255).astype(np.uint8)
    h, w = heat.shape
    x0, y0, x1, y1 = _MAP
    scale = min((x1 - x0) / w, (y1 - y0) / h)
    mw, mh = w * scale, h * scale
    parts = [
        _text(W / 2, 20, title, size=13),
        f'<image x="{x0}" y="{y0}" width="{mw:.1f}" height="{mh:.1f}" '
        f'preserveAspectRatio="none" style="image-rendering:pixelated" href="{_png(rgb)}"/>',
        f'<rect x="{x0}" y="{y0}" width="{mw:.1f}" height="{mh:.1f}" fill="none" stroke="#333"/>',
        _text(x0 + mw / 2, y0 + mh + 34, "column (pixel)"),
        _text(
            x0 - 40, y0 + mh / 2, "row (pixel)", transform=f"rotate(-90 {x0 - 40} {y0 + mh / 2})"
        ),
    ]
    for v in _ticks(0, w - 1, 6):
        x = x0 + (v + 0.5) * scale
        parts.append(
            f'<line x1="{x:.1f}" y1="{y0 + mh}" x2="{x:.1f}" y2="{y0 + mh + 4}" stroke="#333"/>'
        )
        parts.append(_text(x, y0 + mh + 16, f"{v:g}", size=11))
    for v in _ticks(0, h - 1, 6):
        y = y0 + (v + 0.5) * scale
        parts.append(f'<line x1="{x0 - 4}" y1="{y:.1f}" x2="{x0}" y2="{y:.1f}" stroke="#333"/>')
        parts.append(_text(x0 - 7, y + 4, f"{v:g}", anchor="end", size=11))
    bx0, by0, bx1, _ = _BAR
    bar = (cmap(np.linspace(1, 0, 256))[:, None, :3] * 255).astype(np.uint8)
    parts.append(
        f'<image x="{bx0}" y="{by0}" width="{bx1 - bx0}" height="{mh:.1f}" '
        f'preserveAspectRatio="none" href="{_png(np.repeat(bar, 2, axis=1))}"/>'
        f'<rect x="{bx0}" y="{by0}" width="{bx1 - bx0}" height="{mh:.1f}" fill="none" '
        'stroke="#333"/>'
    )
    for v in _ticks(lo, hi, 6) if hi > lo else [lo]:
        y = by0 + mh - (v - lo) / span * mh
        parts.append(_text(bx1 + 5, y + 4, f"{v:.3g}", anchor="start", size=11))
    return parts


def _classic(c: Classic) -> list[str]:
    bars = c.bars()
    keys = list(bars)
    vals = np.array([np.asarray(v, dtype=np.float64) for v in bars.values()])
    x0, y0, x1, y1 = _BARS
    top = float(np.abs(vals).max()) * 1.1 or 1.0
    mid = (y0 + y1) / 2

    def py(v: float) -> float:
        return mid - v / top * (y1 - y0) / 2

    n = len(c.x)
    slot = (x1 - x0) / n
    parts = [
        _text(W / 2, 20, "(x - mean) / std for x = [10, 20, 30, 40, 50]", size=13),
        f'<line x1="{x0}" y1="{mid}" x2="{x1}" y2="{mid}" stroke="#333"/>',
        f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#333"/>',
        _text((x0 + x1) / 2, y1 + 34, "x"),
        _text(x0 - 40, mid, "normalized value", transform=f"rotate(-90 {x0 - 40} {mid})"),
    ]
    bw = slot * 0.8 / len(keys)
    for i, xv in enumerate(c.x):
        parts.append(_text(x0 + slot * (i + 0.5), y1 + 16, f"{float(xv):g}", size=11))
        for j, k in enumerate(keys):
            v = float(vals[j, i])
            bx = x0 + slot * (i + 0.1) + bw * j
            ytop = min(py(v), mid)
            parts.append(
                f'<rect x="{bx:.1f}" y="{ytop:.1f}" width="{bw:.1f}" '
                f'height="{abs(py(v) - mid):.1f}" fill="{_COLOURS[j]}"><title>{k}: {v:.8g}'
                "</title></rect>"
            )
    for v in _ticks(-top, top, 6):
        parts.append(_text(x0 - 7, py(v) + 4, f"{v:.2g}", anchor="end", size=11))
    for j, k in enumerate(keys):
        parts.append(
            f'<rect x="{x0 + 10}" y="{y0 + 18 * j}" width="12" height="12" fill="{_COLOURS[j]}"/>'
        )
        parts.append(_text(x0 + 28, y0 + 18 * j + 11, k, anchor="start", size=11))
    return parts


def figure_svg(comparison: Comparison) -> str:
    """`figure` as SVG markup: the heat map of the shown stage's difference with its colour
    bar (the classic example's bars for the std stage; a note where there is no heat map)."""
    data: DjlData = comparison.data
    if comparison.params["stage"] == "std" and data.classic is not None:
        parts = _classic(data.classic)
    elif data.heat is None:
        why = data.djl_unavailable or "the two arrays differ in shape"
        parts = [_text(W / 2, H / 2, f"no heat map: {why}")]
    else:
        parts = _heat(data.heat, data.heat_title)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" font-family="sans-serif">{"".join(parts)}</svg>'
    )
