"""The RNG lesson's views: bit patterns and the figure (the bits widget is in
`fpexplore.widgets.rng_bits`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import formats, svg
from ...figures import WIDTH_IN
from ...result import Comparison

_NOT_STREAMS = ("torch Linear", "Keras")


def bits_of(values: Any) -> list[str]:
    """IEEE bit patterns, sign|exponent|mantissa, of float32 or float64 values."""
    arr = np.asarray(values)
    fmt = "float32" if arr.dtype == np.float32 else "float64"
    return [formats.bit_string(v, fmt) for v in arr.astype(fmt).ravel()]


@dataclass(frozen=True)
class StreamRow:
    """One value of a stream: its index ``i``, its shortest digits in its own format and its
    bit pattern (`bits_of`)."""

    stream: str
    i: int
    value: str
    bits: str


def stream_table(comparison: Comparison) -> list[StreamRow]:
    """One row per value of each stream, its first k values (for the bits view)."""
    rows = []
    for o in _streams(comparison):
        vals = np.asarray(o.value).ravel()[: comparison.params.k]
        for i, (v, b) in enumerate(zip(vals, bits_of(vals), strict=True)):  # its own digits
            rows.append(StreamRow(o.implementation, i, np.format_float_positional(v), b))
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
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(WIDTH_IN, 6.4))
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
    ax2.set_xlabel(f"first {comparison.params.k} values (colour = value in [0, 1))")
    ax2.invert_yaxis()
    fig.suptitle(f"seed {comparison.params.seed}: same seed, different numbers")
    fig.tight_layout()
    return fig


#: the SVG figure's width in CSS pixels (the notebook's output area); its height follows the rows
SVG_W = 560
Box = tuple[float, float, float, float]  # a plot area: left, top, right, bottom
_BAR_ROW, _VALUE_ROW = 22, 20  # a bar's and a stream's row height


def _text_width(s: str, size: float = 12) -> float:
    """About how wide ``s`` is in DejaVu Sans of ``size`` px (a little more, never less)."""
    narrow, wide = " .,:;'|!()[]ijlrtf", "mwMW"
    return size * sum(0.36 if c in narrow else 0.95 if c in wide else 0.66 for c in s)


def _boxes(comparison: Comparison) -> tuple[Box, Box, int]:
    """The bits panel above the values panel, both as wide as the row names leave room for
    (the values panel less its colour bar), and the figure's height."""
    bits, shown = comparison.data.bits_per_float, _streams(comparison)
    names = [*bits, *(o.implementation for o in shown)]
    left = 12 + max((_text_width(n) for n in names), default=60)
    bottom = 40 + _BAR_ROW * max(len(bits), 2)
    top = bottom + 72  # below the bars' tick labels and axis label
    values = (left, top, SVG_W - 90, top + max(_VALUE_ROW * len(shown), 110))
    return (left, 40, SVG_W - 20, bottom), values, int(values[3]) + 48


def _bits(bits: dict[str, int], box: Box) -> list[str]:
    """Random bits per float, a bar per stack."""
    x0, y0, x1, y1 = box
    top = max(8 * math.ceil(max(bits.values(), default=1) / 8), 8)
    row = (y1 - y0) / max(len(bits), 1)
    xticks = {x0 + v / top * (x1 - x0): str(v) for v in range(0, top + 1, 8 if top <= 64 else 16)}
    rows = {y0 + (i + 0.5) * row: name for i, name in enumerate(bits)}
    parts = svg.frame(box, xticks, rows, "random bits per float (measured)", grid=False)
    for i, (name, n) in enumerate(bits.items()):
        where = {"x": x0, "y": y0 + (i + 0.15) * row, "height": 0.7 * row}
        width = n / top * (x1 - x0)
        parts.append(svg.tip(f"{name}: {n} bits", tag="rect", width=width, fill="#1f77b4", **where))
    return parts


def _values(comparison: Comparison, box: Box) -> list[str]:
    """The first k values of every stream, colour = value, and the colour bar."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps["viridis"]
    shown, k = _streams(comparison), int(comparison.params.k)
    x0, y0, x1, y1 = box
    row, col = (y1 - y0) / max(len(shown), 1), (x1 - x0) / max(k, 1)
    xticks = {x0 + (j + 0.5) * col: str(j) for j in range(0, k, max(1, math.ceil(k / 8)))}
    rows = {y0 + (i + 0.5) * row: o.implementation for i, o in enumerate(shown)}
    xlabel = f"first {k} values (colour = value in [0, 1))"
    parts = svg.frame(box, xticks, rows, xlabel, grid=False)
    side = min(col, row) * 0.8
    for i, o in enumerate(shown):
        vals = np.asarray(o.value, dtype=np.float64).ravel()
        for j, (v, c) in enumerate(zip(vals.tolist(), cmap(np.clip(vals, 0, 1)), strict=True)):
            cx, cy = x0 + (j + 0.5) * col - side / 2, y0 + (i + 0.5) * row - side / 2
            square = {"x": cx, "y": cy, "width": side, "height": side, "fill": to_hex(c)}
            parts.append(svg.tip(f"{o.implementation}[{j}] = {v!r}", tag="rect", **square))
    ticks = {y1 - v * (y1 - y0): f"{v:g}" for v in (0.0, 0.25, 0.5, 0.75, 1.0)}
    colours = [to_hex(cmap(t)) for t in np.linspace(0, 1, 11)]
    return parts + svg.colour_bar((x1 + 20, y0, x1 + 34, y1), colours, ticks, "value", "fpx-rng")


def figure_svg(comparison: Comparison) -> str:
    """`figure` as SVG markup for the explorer (``explore(..., svg=figure_svg)``): drawn by
    the browser instead of rasterized and PNG-encoded in the kernel on every move. The
    panels sit one above the other, for the notebook's width."""
    title = f"seed {comparison.params.seed}: same seed, different numbers"
    bits_box, values_box, height = _boxes(comparison)
    return svg.doc(
        SVG_W,
        height,
        svg.text(SVG_W / 2, 20, title, font_size=15),
        *_bits(comparison.data.bits_per_float, bits_box),
        *_values(comparison, values_box),
        font_size=12,
    )
