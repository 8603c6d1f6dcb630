"""The training-drift figure: distances per step on a log scale, the loss curves, and the
diversity of each source of nondeterminism, one panel above the other. `figure` draws it with
matplotlib (the notebook, the report); `figure_svg` draws the same panels as SVG markup for
the explorer (``explore(..., svg=figure_svg)``), drawn by the browser in a few milliseconds
instead of a PNG rasterized in the kernel on every move."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import svg
from ...figures import WIDTH_IN
from ...result import Comparison
from .data import Diversity

#: the panels (left, bottom, width, height) of the matplotlib figure, for `WIDTH_IN`
_PANELS = ((0.15, 0.61, 0.8, 0.34), (0.15, 0.38, 0.8, 0.14), (0.3, 0.08, 0.65, 0.2))
#: the curves' colours (matplotlib's tab10) and styles, shared by both drawings
RED, ORANGE, BLUE, GREEN, PURPLE, GREY = (
    "#d62728",
    "#ff7f0e",
    "#1f77b4",
    "#2ca02c",
    "#9467bd",
    "#7f7f7f",
)
#: the SVG's width in CSS pixels (the output area's) and its panels' boxes (the table's
#: bottom follows its rows)
SVG_W = 568
_BOXES = ((70, 34, 552, 254), (70, 300, 552, 390), (150, 440, 552, 0))
_ROW = 20  # px per row of the table panel
MAX_POINTS = 500  # a curve is drawn through at most this many steps (the panel's pixels)


def _positive(y: Any) -> np.ndarray:
    """``y`` with zeros as NaN (a log axis draws them as gaps: the runs were equal)."""
    y = np.asarray(y, dtype=np.float64).copy()
    y[~(y > 0)] = np.nan
    return y


def _epochs(loss: np.ndarray, per: int = 4) -> np.ndarray:
    n = len(loss) // per * per
    return loss[:n].reshape(-1, per).mean(1) if n else loss


def _title(comparison: Comparison) -> str:
    p = comparison.params
    return f"{p.model}, lr {p.lr:g}, {p.steps} steps: {p.perturbation}"


def _curves(t: Any) -> list[tuple[str, np.ndarray, dict[str, Any]]]:
    """The distance panel's curves: (label, values per step, style)."""
    out = []
    if t.pair is not None:
        out.append((f"{t.second} vs {t.first}", t.pair, {"color": RED, "lw": 1.6}))
        out.append((f"{t.second} vs reference", t.other_truth, {"color": ORANGE, "lw": 0.8}))
    out.append((f"{t.first} vs reference", t.base_truth, {"color": BLUE, "lw": 0.8}))
    return out


def _losses(t: Any) -> list[tuple[str, np.ndarray, dict[str, Any]]]:
    """The loss panel's curves, per epoch: (label, values, style)."""
    out = [(t.first, _epochs(t.loss_base), {"color": BLUE, "lw": 1.2})]
    if t.loss_other is not None:
        out.append((t.second, _epochs(t.loss_other), {"color": RED, "lw": 1.2, "dash": True}))
    out.append(("float64", _epochs(t.loss_f64), {"color": "#000", "lw": 0.6}))
    return out


def _bars(table: dict[str, list[Diversity]]) -> list[tuple[str, float, float, float]]:
    """The table panel's rows: (source, mean, lowest, highest disagreement over the seeds)."""
    values = {source: [r.disagreement for r in rows] for source, rows in table.items()}
    return [(source, float(np.mean(v)), min(v), max(v)) for source, v in values.items()]


def figure(comparison: Comparison) -> Any:
    """Distances (log scale), loss per epoch, and the diversity table's disagreement."""
    import matplotlib.pyplot as plt

    d = comparison.data
    t = d.trajectories
    fig = plt.figure(figsize=(WIDTH_IN, 7.6))
    ax1, ax2, ax3 = (fig.add_axes(r) for r in _PANELS)
    steps = np.arange(len(t.norm))
    for label, y, style in _curves(t):
        ax1.semilogy(steps, _positive(y), color=style["color"], lw=style["lw"], label=label)
    if t.pair is None:
        ax1.text(0.5, 0.5, f"{t.second}: not run here", transform=ax1.transAxes, ha="center")
    f64 = _positive(t.f64_truth)
    ax1.semilogy(np.arange(len(f64)), f64, "k.", ms=3, label="float64 vs mpmath")
    ax1.semilogy(steps, 0.01 * t.norm, color=GREY, ls=":", lw=0.8, label="1% of the norm")
    if t.horizon is not None and t.horizon < steps[-1]:
        ax1.axvspan(t.horizon, steps[-1], color=GREY, alpha=0.15, lw=0)
        ax1.text(t.horizon, ax1.get_ylim()[1], " no reference", fontsize=8, va="top")
    ax1.set_xlabel("step")
    ax1.set_ylabel("weight distance")
    ax1.legend(fontsize=7, loc="lower right")
    ax1.set_title(_title(comparison), fontsize=10)
    for label, y, style in _losses(t):
        ls = "--" if style.get("dash") else "-"
        ax2.plot(y, color=style["color"], lw=style["lw"], ls=ls, label=label)
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("training loss")
    ax2.legend(fontsize=7)
    bars = _bars(d.table)
    y = np.arange(len(bars))
    means = [b[1] for b in bars]
    err = np.array([[b[1] - b[2] for b in bars], [b[3] - b[1] for b in bars]])
    colours = [PURPLE if b[0] == "all together" else GREEN for b in bars]
    ax3.barh(y, means, xerr=err, color=colours, alpha=0.8)
    ax3.set_yticks(y, [b[0] for b in bars], fontsize=8)
    ax3.invert_yaxis()
    ax3.set_xlabel("test disagreement between models")
    return fig


# ------------------------------------------------------------------------------------------
# the same figure as SVG markup


def _nice(lo: float, hi: float, most: int = 6) -> list[float]:
    """Round tick values in [lo, hi]: a 1-2-5 step giving at most ``most`` of them."""
    span = hi - lo if hi > lo else 1.0
    step = 10.0 ** math.floor(math.log10(span / most))
    for m in (1, 2, 5, 10):
        if span / (m * step) <= most:
            step *= m
            break
    first = math.ceil(lo / step)
    return [k * step for k in range(first, math.floor(hi / step) + 1)]


def _segments(xs: np.ndarray, ys: np.ndarray, fx: Any, fy: Any) -> list[list[tuple]]:
    """The runs of finite, positive points of a curve (a gap where the runs were equal), at
    most `MAX_POINTS` steps apart from one another, in pixels."""
    every = max(1, math.ceil(len(xs) / MAX_POINTS))
    keep = np.zeros(len(xs), dtype=bool)
    keep[::every] = True
    keep[-1] = True
    out: list[list[tuple]] = [[]]
    for x, y, k in zip(xs, ys, keep, strict=True):
        if not (y > 0 and math.isfinite(y)):
            if out[-1]:
                out.append([])
        elif k:
            out[-1].append((fx(x), fy(y)))
    return [s for s in out if s]


def _svg_distances(comparison: Comparison) -> list[str]:
    t = comparison.data.trajectories
    left, top, right, bottom = _BOXES[0]
    n = len(t.norm) - 1
    curves = [(lab, np.asarray(y, np.float64), st) for lab, y, st in _curves(t)]
    f64 = np.asarray(t.f64_truth, np.float64)
    norm = 0.01 * np.asarray(t.norm, np.float64)
    values = np.concatenate([*(y for _, y, _ in curves), f64, norm])
    values = values[(values > 0) & np.isfinite(values)]
    y_lo = 10.0 ** math.floor(math.log10(values.min())) if values.size else 1e-12
    y_hi = 10.0 ** math.ceil(math.log10(values.max())) if values.size else 1.0
    fx, fy = svg.linear(0, max(n, 1), left, right), svg.log(y_lo, y_hi, bottom, top)
    ks = svg.decades(y_lo, y_hi)
    every = max(1, math.ceil(len(ks) / 7))
    out = []
    if t.horizon is not None and t.horizon < n:
        x0 = fx(t.horizon)
        shade = {"fill": GREY, "fill_opacity": "0.15"}
        out.append(svg.el("rect", x=x0, y=top, width=right - x0, height=bottom - top, **shade))
        out.append(svg.text(x0 + 3, top + 12, "no reference", "start", font_size=9))
    out += svg.frame(
        (left, top, right, bottom),
        {fx(v): f"{v:g}" for v in _nice(0, n)},
        {fy(10.0**k): f"1e{k}" for k in ks if k % every == 0},
        "step",
        "weight distance",
    )
    steps = np.arange(n + 1)
    legend: list[tuple[str, dict[str, object]]] = []
    for label, y, style in curves:
        width = f"{style['lw']:.1f}"
        for seg in _segments(steps, y, fx, fy):
            out.append(svg.polyline(seg, stroke=style["color"], stroke_width=width))
        if not np.any(y[1:] > 0):  # 0 after the start: bit-identical runs, no line on a log axis
            label += " (0: identical)"
        legend.append((label, {"stroke": style["color"], "stroke_width": width}))
    dots = _segments(np.arange(len(f64)), f64, fx, fy)
    out += [svg.el("circle", cx=x, cy=y, r="1.6", fill="#000") for s in dots for x, y in s]
    legend.append(("float64 vs mpmath", {"shape": "o", "fill": "#000"}))
    dotted = {"stroke": GREY, "stroke_width": "1", "stroke_dasharray": "2 2"}
    for seg in _segments(steps, norm, fx, fy):
        out.append(svg.polyline(seg, **dotted))
    legend.append(("1% of the norm", dotted))
    if t.pair is None:
        out.append(svg.text((left + right) / 2, (top + bottom) / 2, f"{t.second}: not run here"))
    width = _legend_width(legend)
    out += svg.legend_box(right - width - 8, bottom - 14 * len(legend) - 10, width, legend)
    return out


def _legend_width(legend: list[tuple[str, dict[str, object]]]) -> float:
    """A legend column wide enough for its longest label at 9 px (about 5.4 px a character,
    after the 31 px of its line or marker)."""
    return 31 + 5.4 * max((len(label) for label, _ in legend), default=10)


def _svg_losses(comparison: Comparison) -> list[str]:
    t = comparison.data.trajectories
    left, top, right, bottom = _BOXES[1]
    curves = _losses(t)
    values = np.concatenate([y for _, y, _ in curves])
    values = values[np.isfinite(values)]
    lo, hi = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
    pad = 0.05 * (hi - lo or 1.0)
    lo, hi = lo - pad, hi + pad
    epochs = max(len(curves[0][1]) - 1, 1)
    fx, fy = svg.linear(0, epochs, left, right), svg.linear(lo, hi, bottom, top)
    out = svg.frame(
        (left, top, right, bottom),
        {fx(v): f"{v:g}" for v in _nice(0, epochs)},
        {fy(v): f"{v:.2g}" for v in _nice(lo, hi, 4)},
        "epoch",
        "training loss",
    )
    legend: list[tuple[str, dict[str, object]]] = []
    for label, y, style in curves:
        line = {"stroke": style["color"], "stroke_width": f"{style['lw']:.1f}"}
        if style.get("dash"):
            line["stroke_dasharray"] = "5 3"
        pts = [(fx(i), fy(v)) for i, v in enumerate(y) if math.isfinite(v)]
        out.append(svg.polyline(pts, **line))
        legend.append((label, line))
    width = _legend_width(legend)
    out += svg.legend_box(right - width - 8, top + 4, width, legend)
    return out


def _svg_table(comparison: Comparison) -> list[str]:
    bars = _bars(comparison.data.table)
    left, top, right, _ = _BOXES[2]
    bottom = top + _ROW * len(bars)
    hi = max((b[3] for b in bars), default=1.0) * 1.1 or 1.0
    fx = svg.linear(0, hi, left, right)
    out = svg.frame(
        (left, top, right, bottom),
        {fx(v): f"{v:g}" for v in _nice(0, hi, 5)},
        {},
        "test disagreement between models",
    )
    for i, (source, mean, low, high) in enumerate(bars):
        y = top + (i + 0.15) * _ROW
        colour = PURPLE if source == "all together" else GREEN
        tip = f"{source}: {mean:.3f} (seeds from {low:.3f} to {high:.3f})"
        box = {"x": left, "y": y, "height": 0.7 * _ROW, "fill_opacity": "0.8"}
        out.append(svg.tip(tip, tag="rect", width=fx(mean) - left, fill=colour, **box))
        mid = y + 0.35 * _ROW
        out.append(svg.line(fx(low), mid, fx(high), mid, stroke="#000"))
        out.append(svg.text(left - 5, mid + 4, source, "end", font_size=11))
    return out


def figure_svg(comparison: Comparison) -> str:
    """`figure` as SVG markup for the explorer: the same three panels, drawn by the browser."""
    parts = [svg.text(SVG_W / 2, 18, _title(comparison), font_size=13)]
    parts += _svg_distances(comparison)
    parts += _svg_losses(comparison)
    parts += _svg_table(comparison)
    height = _BOXES[2][1] + _ROW * len(comparison.data.table) + 46
    return svg.doc(SVG_W, height, *parts, font_size=10)
