"""The RNG lesson's views: bit patterns and the figure (the bits widget is in
`fpexplore.widgets.rng_bits`)."""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np

from ... import formats
from ...result import Comparison

_NOT_STREAMS = ("torch Linear", "Keras")


def bits_of(values: Any) -> list[str]:
    """IEEE bit patterns, sign|exponent|mantissa, of float32 or float64 values."""
    arr = np.asarray(values)
    fmt = "float32" if arr.dtype == np.float32 else "float64"
    return [formats.bit_string(v, fmt) for v in arr.astype(fmt).ravel()]


def stream_table(comparison: Comparison) -> list[dict[str, str]]:
    """One row per value: stream, index, value, bit pattern (for the bits view)."""
    rows = []
    for o in comparison.outcomes:
        if not o.ran or o.implementation.startswith(_NOT_STREAMS):
            continue
        vals = np.asarray(o.value).ravel()[: comparison.params["k"]]
        for i, (v, b) in enumerate(zip(vals.tolist(), bits_of(vals), strict=True)):
            rows.append({"stream": o.implementation, "i": str(i), "value": repr(v), "bits": b})
    return rows


def _streams(comparison: Comparison) -> list[Any]:
    """The outcomes that are streams of values (not the layers' outputs), in order."""
    return [
        o
        for o in comparison.outcomes
        if o.ran and np.ndim(o.value) == 1 and not o.implementation.startswith(_NOT_STREAMS)
    ]


def figure(comparison: Comparison) -> Any:
    """Bits per float for each stack, and the first k values of every stream."""
    import matplotlib.pyplot as plt

    bits = comparison.data.bits_per_float
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.6))
    ax1.barh(list(bits), list(bits.values()), color="tab:blue")
    ax1.set_xlabel("random bits per float (measured)")
    ax1.invert_yaxis()
    shown = _streams(comparison)
    for i, o in enumerate(shown):
        v = np.asarray(o.value, dtype=np.float64)
        ax2.scatter(
            np.arange(v.size),
            np.full(v.size, i),
            c=v,
            cmap="viridis",
            vmin=0,
            vmax=1,
            s=60,
            marker="s",
        )
    ax2.set_yticks(range(len(shown)), [o.implementation for o in shown])
    ax2.set_xlabel(f"first {comparison.params['k']} values (colour = value in [0, 1))")
    ax2.invert_yaxis()
    fig.suptitle(f"seed {comparison.params['seed']}: same seed, different numbers")
    fig.tight_layout()
    return fig


#: the SVG figure's size in CSS pixels, and each panel's plot area (left, top, right, bottom)
SVG_W, SVG_H = 1000, 340
_BITS_BOX, _VALUES_BOX = (190, 40, 420, 290), (610, 40, 900, 290)


def _text(x: float, y: float, text: str, anchor: str = "middle", **attrs: Any) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{html.escape(text)}</text>'


def _frame(box: tuple[int, int, int, int], xlabel: str) -> list[str]:
    x0, y0, x1, y1 = box
    return [
        f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="none" '
        'stroke="#333" stroke-width="0.8"/>',
        _text((x0 + x1) / 2, y1 + 36, xlabel),
    ]


def _rows(box: tuple[int, int, int, int], names: list[str]) -> tuple[float, list[str]]:
    """The height of one row in ``box`` and the row labels left of it."""
    x0, y0, _, y1 = box
    row = (y1 - y0) / max(len(names), 1)
    return row, [
        _text(x0 - 6, y0 + (i + 0.5) * row + 4, name, anchor="end") for i, name in enumerate(names)
    ]


def figure_svg(comparison: Comparison) -> str:
    """`figure` as SVG markup for the explorer (``explore(..., svg=figure_svg)``): the same two
    panels and a colour bar, written in about a millisecond and drawn by the browser, instead
    of a matplotlib figure rasterized and PNG-encoded in the kernel on every move."""
    import matplotlib

    cmap = matplotlib.colormaps["viridis"]
    parts = [
        _text(
            SVG_W / 2,
            20,
            f"seed {comparison.params['seed']}: same seed, different numbers",
            font_size="15",
        )
    ]
    # left: random bits per float
    bits = comparison.data.bits_per_float
    names = list(bits)
    x0, y0, x1, y1 = _BITS_BOX
    top = max(8 * math.ceil(max(bits.values(), default=1) / 8), 8)
    row, labels = _rows(_BITS_BOX, names)
    parts += _frame(_BITS_BOX, "random bits per float (measured)") + labels
    for i, name in enumerate(names):
        width = bits[name] / top * (x1 - x0)
        parts.append(
            f'<rect x="{x0}" y="{y0 + (i + 0.15) * row:.1f}" width="{width:.1f}" '
            f'height="{0.7 * row:.1f}" fill="#1f77b4"><title>{html.escape(name)}: {bits[name]} '
            "bits</title></rect>"
        )
    for v in range(0, top + 1, 8 if top <= 64 else 16):
        x = x0 + v / top * (x1 - x0)
        parts.append(
            f'<line x1="{x:.1f}" y1="{y1}" x2="{x:.1f}" y2="{y1 + 4}" stroke="#333"/>'
            + _text(x, y1 + 17, str(v))
        )
    # right: the first k values of every stream, colour = value
    shown = _streams(comparison)
    k = int(comparison.params["k"])
    x0, y0, x1, y1 = _VALUES_BOX
    row, labels = _rows(_VALUES_BOX, [o.implementation for o in shown])
    parts += _frame(_VALUES_BOX, f"first {k} values (colour = value in [0, 1))") + labels
    col = (x1 - x0) / max(k, 1)
    side = min(col, row) * 0.8
    for i, o in enumerate(shown):
        vals = np.asarray(o.value, dtype=np.float64).ravel()
        colours = cmap(np.clip(vals, 0.0, 1.0)) * 255
        for j, (v, (r, g, b, _)) in enumerate(zip(vals.tolist(), colours.tolist(), strict=True)):
            cx, cy = x0 + (j + 0.5) * col, y0 + (i + 0.5) * row
            parts.append(
                f'<rect x="{cx - side / 2:.1f}" y="{cy - side / 2:.1f}" width="{side:.1f}" '
                f'height="{side:.1f}" fill="rgb({r:.0f},{g:.0f},{b:.0f})">'
                f"<title>{html.escape(o.implementation)}[{j}] = {v!r}</title></rect>"
            )
    step = max(1, math.ceil(k / 8))
    for j in range(0, k, step):
        x = x0 + (j + 0.5) * col
        parts.append(
            f'<line x1="{x:.1f}" y1="{y1}" x2="{x:.1f}" y2="{y1 + 4}" stroke="#333"/>'
            + _text(x, y1 + 17, str(j))
        )
    # the colour bar
    bx0, bx1 = x1 + 30, x1 + 44
    stops = "".join(
        f'<stop offset="{t:.2f}" stop-color="rgb({r * 255:.0f},{g * 255:.0f},{b * 255:.0f})"/>'
        for t in np.linspace(0, 1, 11)
        for r, g, b, _ in [cmap(1 - t)]
    )
    parts.append(
        f'<defs><linearGradient id="fpx-rng-viridis" x1="0" y1="0" x2="0" y2="1">{stops}'
        f'</linearGradient></defs><rect x="{bx0}" y="{y0}" width="{bx1 - bx0}" '
        f'height="{y1 - y0}" fill="url(#fpx-rng-viridis)" stroke="#333" stroke-width="0.5"/>'
    )
    for v in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = y1 - v * (y1 - y0)
        parts.append(_text(bx1 + 5, y + 4, f"{v:g}", anchor="start"))
    mid = (y0 + y1) / 2
    parts.append(_text(bx1 + 44, mid, "value", transform=f"rotate(-90 {bx1 + 44} {mid:.1f})"))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SVG_W}" height="{SVG_H}" '
        f'viewBox="0 0 {SVG_W} {SVG_H}" style="max-width:100%;height:auto" '
        f'font-family="sans-serif" font-size="12">{"".join(parts)}</svg>'
    )
