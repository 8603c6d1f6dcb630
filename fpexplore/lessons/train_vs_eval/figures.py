"""The train/eval lesson's figure: the runs' spread in each mode and the BatchNorm errors, as a
matplotlib figure for pages and as SVG for the explorer."""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np

from ...result import Comparison

C = 6  # features of the BatchNorm layer and of the dropout MLP's hidden layer


def _title(comparison: Comparison) -> str:
    """The figure's title: the mode and batch, and the BatchNorm batch where it differs (a
    batch of 1 has no variance, so the BatchNorm rows use 2 samples)."""
    mode, batch = comparison.params["mode"], comparison.params["batch"]
    if batch >= 2:
        return f"{mode} mode, batch {batch}"
    return f"{mode} mode, dropout batch {batch} (BatchNorm rows: batch 2 × {C} features)"


#: where the two panels sit in the figure (left, bottom, width, height as fractions): fixed,
#: so that a redraw needs no layout pass (tight_layout draws the figure once more)
_PANELS = ((0.055, 0.16, 0.39, 0.68), (0.625, 0.16, 0.355, 0.68))


def figure(comparison: Comparison) -> Any:
    """The chosen mode in front: output[0, 0] of the dropout MLP over the runs (the other
    mode faint), and the BatchNorm errors of that mode against the mpmath reference."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    d, mode = comparison.data, comparison.params["mode"]
    other = "eval" if mode == "train" else "train"
    fig = plt.figure(figsize=(11, 3.6))
    ax1, ax2 = (fig.add_axes(rect) for rect in _PANELS)
    fig.suptitle(_title(comparison))
    for ax, part in ((ax1, d.train_runs), (ax2, d.bn_ulp)):
        if part is None:  # that part did not run: say why where its plot would be
            why = "; ".join(sorted({o.unavailable for o in comparison.outcomes if not o.ran}))
            ax.text(0.5, 0.5, "not run: " + why, ha="center", va="center", wrap=True, fontsize=8)
            ax.set_axis_off()
    if d.train_runs is not None:
        runs = {"train": d.train_runs[:, 0, 0], "eval": d.eval_runs[:, 0, 0]}
        lo = min(r.min() for r in runs.values()) - 1e-3
        hi = max(r.max() for r in runs.values()) + 1e-3
        bins = np.linspace(lo, hi, 30)
        for m, alpha, colour in ((other, 0.25, "grey"), (mode, 0.8, "tab:blue")):
            counts, _ = np.histogram(runs[m], bins=bins)  # one step patch, not 29 bars
            ax1.stairs(counts, bins, fill=True, alpha=alpha, color=colour, label=f"{m}()")
        ax1.set_xlabel(f"output[0, 0] over {runs[mode].size} runs (p={comparison.params['p']:g})")
        ax1.set_ylabel("runs")
        ax1.legend()
    if d.bn_ulp is not None:
        ulps = d.bn_ulp
        names = [k for k in ulps if mode in k or (mode == "eval" and k == "keras default")]
        ax2.barh(names, [max(ulps[k], 1e-2) for k in names], color="tab:orange")
        ax2.axvline(d.bn_bound_by_mode[mode], color="k", ls="--", lw=1, label="rounding bound")
        ax2.set_xscale("log")
        ax2.xaxis.set_minor_locator(NullLocator())  # decades only: no crowding, fewer ticks
        top = max(d.bn_bound_by_mode[mode], *(ulps[k] for k in names))
        ax2.set_xlim(0.5, 2 * top)
        ax2.set_xlabel(
            f"BatchNorm {mode}: max |error| vs mpmath reference (float32 ULP)", fontsize=9
        )
        ax2.invert_yaxis()
        ax2.tick_params(axis="y", labelsize=9)
        ax2.legend()
    return fig


#: the SVG figure's size in CSS pixels, and each panel's plot area (left, top, right, bottom)
SVG_W, SVG_H = 960, 320
_SVG_PANELS = ((60, 40, 400, 270), (580, 40, 920, 270))


def _svg_text(x: float, y: float, text: str, anchor: str = "middle", **attrs: Any) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{html.escape(text)}</text>'


def _svg_axes(box: tuple[int, int, int, int], xlabel: str, ylabel: str = "") -> list[str]:
    x0, y0, x1, y1 = box
    out = [
        f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="none" '
        'stroke="#333" stroke-width="0.8"/>',
        _svg_text((x0 + x1) / 2, y1 + 38, xlabel),
    ]
    if ylabel:
        out.append(
            f'<text x="{x0 - 42}" y="{(y0 + y1) / 2:.1f}" text-anchor="middle" '
            f'transform="rotate(-90 {x0 - 42} {(y0 + y1) / 2:.1f})">{html.escape(ylabel)}</text>'
        )
    return out


def _svg_tick(x: float, y: float, label: str, vertical: bool = True) -> str:
    if vertical:  # a tick under the x axis
        line = f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 4}" stroke="#333"/>'
        return line + _svg_text(x, y + 17, label)
    line = f'<line x1="{x - 4}" y1="{y:.1f}" x2="{x}" y2="{y:.1f}" stroke="#333"/>'
    return line + _svg_text(x - 7, y + 4, label, anchor="end")


def figure_svg(comparison: Comparison) -> str:
    """`figure` as SVG markup for the explorer (``explore(..., svg=figure_svg)``): the same
    two panels, written in a millisecond and drawn by the browser, instead of a matplotlib
    figure rasterized and PNG-encoded in the kernel on every move."""
    from matplotlib.ticker import MaxNLocator

    d, mode = comparison.data, comparison.params["mode"]
    other = "eval" if mode == "train" else "train"
    parts = [_svg_text(SVG_W / 2, 18, _title(comparison), font_size="15")]
    why = "; ".join(sorted({o.unavailable for o in comparison.outcomes if not o.ran}))
    (hx0, hy0, hx1, hy1), (bx0, by0, bx1, by1) = _SVG_PANELS
    if d.train_runs is not None:
        runs = {"train": d.train_runs, "eval": d.eval_runs}
        runs = {m: r[:, 0, 0].astype(np.float64) for m, r in runs.items()}
        lo = min(r.min() for r in runs.values()) - 1e-3
        hi = max(r.max() for r in runs.values()) + 1e-3
        bins = np.linspace(lo, hi, 30)
        counts = {m: np.histogram(runs[m], bins=bins)[0] for m in runs}
        top = max(int(c.max()) for c in counts.values()) * 1.05

        def px(v: float) -> float:
            return hx0 + (v - lo) / (hi - lo) * (hx1 - hx0)

        def py(c: float) -> float:
            return hy1 - c / top * (hy1 - hy0)

        parts += _svg_axes(
            _SVG_PANELS[0],
            f"output[0, 0] over {runs[mode].size} runs (p={comparison.params['p']:g})",
            "runs",
        )
        for m, colour, alpha in ((other, "#888", 0.3), (mode, "#1f77b4", 0.8)):
            for i, c in enumerate(counts[m]):
                if c:
                    parts.append(
                        f'<rect x="{px(bins[i]):.1f}" y="{py(c):.1f}" '
                        f'width="{px(bins[i + 1]) - px(bins[i]):.1f}" height="{py(0) - py(c):.1f}" '
                        f'fill="{colour}" fill-opacity="{alpha}"><title>{m}(): {c} runs in '
                        f"[{bins[i]:.4g}, {bins[i + 1]:.4g})</title></rect>"
                    )
        for v in MaxNLocator(nbins=6).tick_values(lo, hi):
            if lo <= v <= hi:
                parts.append(_svg_tick(px(v), hy1, f"{v:.3g}"))
        for v in MaxNLocator(nbins=5, integer=True).tick_values(0, top):
            if v <= top:
                parts.append(_svg_tick(hx0, py(v), f"{v:g}", vertical=False))
        for j, (m, colour, alpha) in enumerate(((other, "#888", 0.3), (mode, "#1f77b4", 0.8))):
            y = hy0 + 14 + 18 * j
            parts.append(
                f'<rect x="{hx1 - 80}" y="{y - 9}" width="18" height="10" fill="{colour}" '
                f'fill-opacity="{alpha}"/>' + _svg_text(hx1 - 56, y, f"{m}()", anchor="start")
            )
    else:
        parts.append(_svg_text((hx0 + hx1) / 2, (hy0 + hy1) / 2, "not run: " + why))
    if d.bn_ulp is not None:
        ulps = d.bn_ulp
        names = [k for k in ulps if mode in k or (mode == "eval" and k == "keras default")]
        bound = d.bn_bound_by_mode[mode]
        right = 2 * max(bound, *(ulps[k] for k in names))
        llo, lhi = math.log10(0.5), math.log10(right)

        def bx(v: float) -> float:
            return bx0 + (math.log10(max(v, 0.5)) - llo) / (lhi - llo) * (bx1 - bx0)

        parts += _svg_axes(
            _SVG_PANELS[1], f"BatchNorm {mode}: max |error| vs mpmath reference (float32 ULP)"
        )
        row = (by1 - by0) / max(len(names), 1)
        for i, k in enumerate(names):
            y = by0 + i * row
            width = bx(max(ulps[k], 1e-2)) - bx0
            parts.append(
                f'<rect x="{bx0}" y="{y + row * 0.1:.1f}" width="{width:.1f}" '
                f'height="{row * 0.8:.1f}" fill="#ff7f0e"><title>{html.escape(k)}: '
                f"{ulps[k]:.3g} ULP</title></rect>"
            )
            parts.append(_svg_tick(bx0, y + row / 2, k, vertical=False))
        for e in range(math.ceil(llo), math.floor(lhi) + 1):
            parts.append(_svg_tick(bx(10.0**e), by1, f"1e{e}" if abs(e) > 2 else f"{10.0**e:g}"))
        parts.append(
            f'<line x1="{bx(bound):.1f}" y1="{by0}" x2="{bx(bound):.1f}" y2="{by1}" stroke="#000" '
            f'stroke-dasharray="5 3"><title>rounding bound: {bound:.3g} ULP</title></line>'
        )
        parts.append(
            f'<line x1="{bx1 - 125}" y1="{by0 + 12}" x2="{bx1 - 105}" y2="{by0 + 12}" '
            'stroke="#000" stroke-dasharray="5 3"/>'
            + _svg_text(bx1 - 99, by0 + 16, "rounding bound", anchor="start")
        )
    else:
        parts.append(_svg_text((bx0 + bx1) / 2, (by0 + by1) / 2, "not run: " + why))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SVG_W}" height="{SVG_H}" '
        f'viewBox="0 0 {SVG_W} {SVG_H}" style="max-width:100%;height:auto" '
        f'font-family="DejaVu Sans, sans-serif" font-size="12">{"".join(parts)}</svg>'
    )
