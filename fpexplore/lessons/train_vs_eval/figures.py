"""The train/eval lesson's figure: the runs' spread in each mode and the BatchNorm errors, as a
matplotlib figure for pages and as SVG for the explorer."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from ... import svg
from ...figures import WIDTH_IN
from ...result import Comparison

C = 6  # features of the BatchNorm layer and of the dropout MLP's hidden layer


def _title(comparison: Comparison) -> str:
    """The figure's title: the mode and batch, and the BatchNorm batch where it differs (a
    batch of 1 has no variance, so the BatchNorm rows use 2 samples)."""
    mode, batch = comparison.params["mode"], comparison.params["batch"]
    if batch >= 2:
        return f"{mode} mode, batch {batch}"
    return f"{mode} mode, dropout batch {batch} (BatchNorm rows: batch 2 × {C} features)"


def _why(comparison: Comparison) -> str:
    """What stands where a part that did not run would be drawn."""
    return "not run: " + "; ".join(
        sorted({o.unavailable for o in comparison.outcomes if not o.ran})
    )


def _histograms(comparison: Comparison) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """output[0, 0] of the dropout MLP over the runs, per mode, and the counts' bin edges."""
    d = comparison.data
    runs = {"train": d.train_runs, "eval": d.eval_runs}
    runs = {m: r[:, 0, 0].astype(np.float64) for m, r in runs.items()}
    lo = min(r.min() for r in runs.values()) - 1e-3
    hi = max(r.max() for r in runs.values()) + 1e-3
    bins = np.linspace(lo, hi, 30)
    return {m: np.histogram(r, bins=bins)[0] for m, r in runs.items()}, bins


def _run_label(comparison: Comparison) -> str:
    n, p = len(comparison.data.train_runs), comparison.params["p"]
    return f"output[0, 0] over {n} runs (p={p:g})"


def _bn_rows(comparison: Comparison) -> tuple[list[str], float, float]:
    """The mode's BatchNorm rows, its rounding bound and the right end of the ULP axis."""
    d, mode = comparison.data, comparison.params["mode"]
    names = [k for k in d.bn_ulp if mode in k or (mode == "eval" and k == "keras default")]
    bound = d.bn_bound_by_mode[mode]
    return names, bound, 2 * max(bound, *(d.bn_ulp[k] for k in names))


#: where the two panels sit in the figure (left, bottom, width, height as fractions): fixed,
#: so that a redraw needs no layout pass (tight_layout draws the figure once more)
#: the two panels one above the other (left, bottom, width, height), for `WIDTH_IN`
_PANELS = ((0.14, 0.6, 0.82, 0.3), (0.3, 0.09, 0.66, 0.36))


def figure(comparison: Comparison) -> Any:
    """The chosen mode in front: output[0, 0] of the dropout MLP over the runs (the other
    mode faint), and the BatchNorm errors of that mode against the mpmath reference."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    d, mode = comparison.data, comparison.params["mode"]
    other = "eval" if mode == "train" else "train"
    fig = plt.figure(figsize=(WIDTH_IN, 6.4))
    ax1, ax2 = (fig.add_axes(rect) for rect in _PANELS)
    fig.suptitle(_title(comparison))
    for ax, part in ((ax1, d.train_runs), (ax2, d.bn_ulp)):
        if part is None:  # that part did not run: say why where its plot would be
            ax.text(0.5, 0.5, _why(comparison), ha="center", va="center", wrap=True, fontsize=8)
            ax.set_axis_off()
    if d.train_runs is not None:
        counts, bins = _histograms(comparison)
        for m, alpha, colour in ((other, 0.25, "grey"), (mode, 0.8, "tab:blue")):
            ax1.stairs(counts[m], bins, fill=True, alpha=alpha, color=colour, label=f"{m}()")
        ax1.set_xlabel(_run_label(comparison))
        ax1.set_ylabel("runs")
        ax1.legend()
    if d.bn_ulp is not None:
        names, bound, right = _bn_rows(comparison)
        ax2.barh(names, [max(d.bn_ulp[k], 1e-2) for k in names], color="tab:orange")
        ax2.axvline(bound, color="k", ls="--", lw=1, label="rounding bound")
        ax2.set_xscale("log")
        ax2.xaxis.set_minor_locator(NullLocator())  # decades only: no crowding, fewer ticks
        ax2.set_xlim(0.5, right)
        ax2.set_xlabel(
            f"BatchNorm {mode}: max |error| (float32 ULPs of the exact value)", fontsize=9
        )
        ax2.invert_yaxis()
        ax2.tick_params(axis="y", labelsize=9)
        ax2.legend()
    return fig


#: the SVG figure's width in CSS pixels (the notebook's output area): the histogram above the
#: BatchNorm bars, each legend in a row above its panel; the height follows the title's lines
SVG_W = 560
Box = tuple[float, float, float, float]  # a plot area: left, top, right, bottom
_RIGHT, _HIST_H, _BN_H = SVG_W - 20, 150, 110


def _text_width(s: str, size: float = 12) -> float:
    """About how wide ``s`` is in DejaVu Sans of ``size`` px (a little more, never less)."""
    narrow, wide = " .,:;'|!()[]ijlrtf", "mwMW"
    return size * sum(0.36 if c in narrow else 0.95 if c in wide else 0.66 for c in s)


def _svg_lines(x: float, y: float, s: str, chars: int, size: float = 12) -> list[str]:
    """``s`` centred on x in lines of at most ``chars`` characters, the first at y: a long
    text split before its parenthesis where that is enough."""
    head, paren, tail = s.partition(" (")
    fits = paren and len(head) <= chars and len(tail) < chars
    lines = [head, "(" + tail] if len(s) > chars and fits else textwrap.wrap(s, chars)
    return [svg.text(x, y + i * 1.25 * size, line, font_size=size) for i, line in enumerate(lines)]


def _svg_panels(comparison: Comparison, top: float) -> tuple[Box, Box, int]:
    """The histogram's and the BatchNorm bars' plot areas, the bars' left edge leaving room
    for the row names, and the figure's height."""
    d = comparison.data
    names = _bn_rows(comparison)[0] if d.bn_ulp is not None else []
    left = 12 + max((_text_width(k) for k in names), default=48)
    hist = (60, top, _RIGHT, top + _HIST_H)
    bn_top = hist[3] + 74  # below the histogram's axis label, a row for the bars' legend
    return hist, (left, bn_top, _RIGHT, bn_top + _BN_H), int(bn_top + _BN_H + 48)


def _svg_xlabel(box: Box, label: str) -> str:
    """An axis label centred under ``box``, moved left as far as it needs to stay inside."""
    x0, _y0, x1, y1 = box
    x = min((x0 + x1) / 2, SVG_W - 6 - _text_width(label, 11) / 2)
    return svg.text(x, y1 + 36, label, font_size=11)


def _svg_histograms(comparison: Comparison, box: Box) -> list[str]:
    """output[0, 0] over the runs in ``box``, the chosen mode in front, its legend above."""
    from matplotlib.ticker import MaxNLocator

    mode = comparison.params["mode"]
    other = "eval" if mode == "train" else "train"
    counts, bins = _histograms(comparison)
    top = max(int(c.max()) for c in counts.values()) * 1.05
    x0, y0, x1, y1 = box
    px, py = svg.linear(bins[0], bins[-1], x0, x1), svg.linear(0, top, y1, y0)
    xticks = MaxNLocator(nbins=6).tick_values(bins[0], bins[-1])
    yticks = MaxNLocator(nbins=5, integer=True).tick_values(0, top)
    parts = svg.frame(
        box,
        {px(v): f"{v:.3g}" for v in xticks if bins[0] <= v <= bins[-1]},
        {py(v): f"{v:g}" for v in yticks if v <= top},
        "",
        "runs",
        grid=False,
    )
    parts.append(_svg_xlabel(box, _run_label(comparison)))
    styles = ((other, "#888", 0.3), (mode, "#1f77b4", 0.8))
    for m, colour, alpha in styles:
        for a, b, c in zip(bins, bins[1:], counts[m].tolist(), strict=False):
            if c:
                where = {"x": px(a), "y": py(c), "width": px(b) - px(a), "height": py(0) - py(c)}
                tip = f"{m}(): {c} runs in [{a:.4g}, {b:.4g})"
                parts.append(svg.tip(tip, tag="rect", fill=colour, fill_opacity=alpha, **where))
    entries = [(f"{m}()", {"shape": "s", "fill": c, "fill_opacity": a}) for m, c, a in styles]
    return parts + svg.legend_box(x1 - 168, y0 - 26, 80, entries, rows=1, font_size=12)


def _svg_bn(comparison: Comparison, box: Box) -> list[str]:
    """The mode's BatchNorm errors as bars in ``box``, the rounding bound dashed, its legend
    above."""
    ulps = comparison.data.bn_ulp
    names, bound, right = _bn_rows(comparison)
    x0, y0, x1, y1 = box
    bx = svg.log(0.5, right, x0, x1)
    row = (y1 - y0) / max(len(names), 1)
    xticks = {
        bx(10.0**e): f"1e{e}" if abs(e) > 2 else f"{10.0**e:g}" for e in svg.decades(0.5, right)
    }
    yticks = {y0 + (i + 0.5) * row: k for i, k in enumerate(names)}
    mode = comparison.params["mode"]
    xlabel = f"BatchNorm {mode}: max |error| vs mpmath reference (float32 ULP)"
    parts = [*svg.frame(box, xticks, yticks, grid=False), _svg_xlabel(box, xlabel)]
    for i, k in enumerate(names):
        where = {"x": x0, "y": y0 + (i + 0.1) * row, "height": row * 0.8}
        width = bx(max(ulps[k], 0.5)) - x0
        tip = f"{k}: {ulps[k]:.3g} ULP"
        parts.append(svg.tip(tip, tag="rect", width=width, fill="#ff7f0e", **where))
    dashed = {"stroke": "#000", "stroke_dasharray": "5 3"}
    tip = f"rounding bound: {bound:.3g} ULP"
    parts.append(svg.tip(tip, tag="line", x1=bx(bound), y1=y0, x2=bx(bound), y2=y1, **dashed))
    entries = [("rounding bound", dashed)]
    return parts + svg.legend_box(x1 - 142, y0 - 26, 134, entries, font_size=12)


def figure_svg(comparison: Comparison) -> str:
    """`figure` as SVG markup for the explorer (``explore(..., svg=figure_svg)``): drawn by
    the browser instead of rasterized and PNG-encoded in the kernel on every move."""
    d = comparison.data
    parts = _svg_lines(SVG_W / 2, 20, _title(comparison), 56, 14)
    boxes = _svg_panels(comparison, 18 * len(parts) + 40)
    for (x0, y0, x1, y1), part, draw in (
        (boxes[0], d.train_runs, _svg_histograms),
        (boxes[1], d.bn_ulp, _svg_bn),
    ):
        if part is None:
            parts += _svg_lines((x0 + x1) / 2, (y0 + y1) / 2, _why(comparison), 60)
        else:
            parts += draw(comparison, (x0, y0, x1, y1))
    return svg.doc(SVG_W, boxes[2], *parts, font_size=12)
