"""The train/eval lesson's figure: the runs' spread in each mode and the BatchNorm errors, as a
matplotlib figure for pages and as SVG for the explorer."""

from __future__ import annotations

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
_PANELS = ((0.14, 0.6, 0.82, 0.3), (0.14, 0.09, 0.82, 0.36))


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
            f"BatchNorm {mode}: max |error| vs mpmath reference (float32 ULP)", fontsize=9
        )
        ax2.invert_yaxis()
        ax2.tick_params(axis="y", labelsize=9)
        ax2.legend()
    return fig


#: the SVG figure's size in CSS pixels, and each panel's plot area (left, top, right, bottom)
SVG_W, SVG_H = 960, 320
_SVG_PANELS = ((60, 40, 400, 270), (580, 40, 920, 270))


def _svg_histograms(comparison: Comparison) -> list[str]:
    from matplotlib.ticker import MaxNLocator

    mode = comparison.params["mode"]
    other = "eval" if mode == "train" else "train"
    counts, bins = _histograms(comparison)
    top = max(int(c.max()) for c in counts.values()) * 1.05
    box = x0, y0, x1, y1 = _SVG_PANELS[0]
    px, py = svg.linear(bins[0], bins[-1], x0, x1), svg.linear(0, top, y1, y0)
    xticks = MaxNLocator(nbins=6).tick_values(bins[0], bins[-1])
    yticks = MaxNLocator(nbins=5, integer=True).tick_values(0, top)
    parts = svg.frame(
        box,
        {px(v): f"{v:.3g}" for v in xticks if bins[0] <= v <= bins[-1]},
        {py(v): f"{v:g}" for v in yticks if v <= top},
        _run_label(comparison),
        "runs",
        grid=False,
    )
    styles = ((other, "#888", 0.3), (mode, "#1f77b4", 0.8))
    for m, colour, alpha in styles:
        for a, b, c in zip(bins, bins[1:], counts[m].tolist(), strict=False):
            if c:
                where = {"x": px(a), "y": py(c), "width": px(b) - px(a), "height": py(0) - py(c)}
                tip = f"{m}(): {c} runs in [{a:.4g}, {b:.4g})"
                parts.append(svg.tip(tip, tag="rect", fill=colour, fill_opacity=alpha, **where))
    entries = [(f"{m}()", {"shape": "s", "fill": c, "fill_opacity": a}) for m, c, a in styles]
    return parts + svg.legend_box(x1 - 92, y0 + 4, 80, entries, font_size=12)


def _svg_bn(comparison: Comparison) -> list[str]:
    ulps = comparison.data.bn_ulp
    names, bound, right = _bn_rows(comparison)
    box = x0, y0, x1, y1 = _SVG_PANELS[1]
    bx = svg.log(0.5, right, x0, x1)
    row = (y1 - y0) / max(len(names), 1)
    xticks = {
        bx(10.0**e): f"1e{e}" if abs(e) > 2 else f"{10.0**e:g}" for e in svg.decades(0.5, right)
    }
    yticks = {y0 + (i + 0.5) * row: k for i, k in enumerate(names)}
    mode = comparison.params["mode"]
    xlabel = f"BatchNorm {mode}: max |error| vs mpmath reference (float32 ULP)"
    parts = svg.frame(box, xticks, yticks, xlabel, grid=False)
    for i, k in enumerate(names):
        where = {"x": x0, "y": y0 + (i + 0.1) * row, "height": row * 0.8}
        width = bx(max(ulps[k], 0.5)) - x0
        tip = f"{k}: {ulps[k]:.3g} ULP"
        parts.append(svg.tip(tip, tag="rect", width=width, fill="#ff7f0e", **where))
    dashed = {"stroke": "#000", "stroke_dasharray": "5 3"}
    tip = f"rounding bound: {bound:.3g} ULP"
    parts.append(svg.tip(tip, tag="line", x1=bx(bound), y1=y0, x2=bx(bound), y2=y1, **dashed))
    entries = [("rounding bound", dashed)]
    return parts + svg.legend_box(x1 - 131, y0 + 2, 120, entries, font_size=12)


def figure_svg(comparison: Comparison) -> str:
    """`figure` as SVG markup for the explorer (``explore(..., svg=figure_svg)``): drawn by
    the browser instead of rasterized and PNG-encoded in the kernel on every move."""
    d = comparison.data
    parts = [svg.text(SVG_W / 2, 18, _title(comparison), font_size=15)]
    for (x0, y0, x1, y1), part, draw in (
        (_SVG_PANELS[0], d.train_runs, _svg_histograms),
        (_SVG_PANELS[1], d.bn_ulp, _svg_bn),
    ):
        if part is None:
            parts.append(svg.text((x0 + x1) / 2, (y0 + y1) / 2, _why(comparison)))
        else:
            parts += draw(comparison)
    return svg.doc(SVG_W, SVG_H, *parts, font_size=12)
