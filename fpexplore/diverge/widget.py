"""Pictures of a divergence report: error per layer against the bound, the culprit marked;
and an explorer over the zoo (model, second implementation, plant)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import svg
from ..figures import WIDTH_IN
from ..params import Depends, Options, Param
from ..templates import part
from .report import AGREE, DivergenceReport

#: settings the explorer keeps (verdict and SVG figure per model, implementation and plant)
KEPT = 48
#: implementations run outside this process (a JVM, a C++ program): never computed ahead
_ELSEWHERE = ("djl", "libtorch")


def zoo_params() -> tuple[Param, ...]:
    """`run_zoo`'s parameters, declared once for ``fpexplore diverge`` and the explorer: the
    model, the second implementation and the plant, one of those the model takes."""
    from . import AGAINST
    from .zoo import MODELS, PLANTS

    plants = tuple(
        (m, Options("plant", None, choices=(None, *ps), labels=("none", *ps)))
        for m, ps in PLANTS.items()
    )
    return (
        Options("model", "mlp", "the zoo model", choices=MODELS),
        Options(
            "against",
            "torch",
            "the second implementation: a torch variant, the Keras build with the same "
            "weights, or the torch model's TorchScript export run by DJL (djl) or by the "
            "C++ LibTorch program (libtorch)",
            choices=AGAINST,
        ),
        Depends("plant", None, "put one mistake into the second one", "model", plants),
    )


def _margins(fig: Any, labels: list[str], fontsize: float = 8.0) -> None:
    """Fixed margins for the title, the y label and the 45° x labels, estimated from the
    longest label (`tight_layout` costs more than drawing the figure)."""
    w, h = fig.get_size_inches()
    char_in = 0.6 * fontsize / 72  # a glyph's advance, generously
    longest = max((len(s) for s in labels), default=1)
    bottom_in = 0.707 * (longest * char_in + fontsize / 72) + 0.2
    fig.subplots_adjust(
        left=0.85 / w, right=1 - 0.15 / w, top=1 - 0.4 / h, bottom=min(0.5, bottom_in / h)
    )


def _plain_log_ticks(ax: Any) -> None:
    """Decade ticks labelled as plain text (1e-3): mathtext labels and minor ticks are most
    of the time to draw a log axis."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=12))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"1e{round(math.log10(v))}"))
    ax.yaxis.set_minor_locator(NullLocator())


def plot(report: DivergenceReport, ax: Any = None) -> Any:
    """Each side's added error per layer (ULPs, log scale), the bound, the culprit arrowed.

    Returns the matplotlib figure. Without ``ax``, a new pyplot figure laid out with fixed
    margins (one rendering, no layout pass).
    """
    rows = report.rows
    own = ax is None
    if own:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(WIDTH_IN, 3.8))
    else:
        fig = ax.figure
    xs = np.arange(len(rows))
    for k, (name, marker) in enumerate(zip(report.names, ("o", "s"), strict=True)):
        sides = [r.a if k == 0 else r.b for r in rows]
        ys = [max(s.max_ulp, _FLOOR) if s is not None else np.nan for s in sides]
        ax.plot(xs + (k - 0.5) * 0.15, ys, marker, label=f"{name}: error it adds", ms=6)
    bound = _bounds(rows)
    ax.step(xs, np.maximum(bound, _FLOOR), where="mid", color="k", lw=1, label="a-priori bound")
    ax.plot(
        xs,
        [max(r.diff_ulp, _FLOOR) for r in rows],
        ":",
        color="grey",
        label="|A − B| (inherited + added)",
    )
    ax.set_yscale("log")
    _plain_log_ticks(ax)
    ax.set_xticks(xs, [r.name for r in rows], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(f"ULPs of {report.fmt}")
    first = report.first
    if first is not None:
        i = rows.index(first)
        top = max(s.max_ulp for s in (first.a, first.b) if s is not None)
        ax.annotate(
            f"first divergence: {first.name}\n({', '.join(first.culprits(report.names))})",
            xy=(i, max(top, _FLOOR)),
            xytext=(i, max(top, _FLOOR) * 30),
            ha="center",
            fontsize=8,
            color="C3",
            arrowprops={"arrowstyle": "->", "color": "C3"},
        )
        ax.axvspan(i - 0.5, i + 0.5, color="C3", alpha=0.12)
    ax.set_title(_title(report), fontsize=10)
    left_culprit = first is not None and rows.index(first) < len(rows) / 2
    ax.legend(fontsize=7, loc="upper right" if left_culprit else "upper left")
    ax.grid(True, which="major", alpha=0.3)
    if own:
        _margins(fig, [r.name for r in rows])
    return fig


_C = ("#1f77b4", "#ff7f0e", "#d62728")  # matplotlib's C0, C1, C3
_FLOOR = 1e-3  # exact layers (0 ULP) drawn at the bottom of the log axis


def _bounds(rows: tuple[Any, ...]) -> list[float]:
    """Each layer's a-priori bound in ULPs (the larger side's; NaN where none was checked)."""
    return [max((s.bound_ulp for s in (r.a, r.b) if s is not None), default=math.nan) for r in rows]


def _title(report: DivergenceReport) -> str:
    return f"{report.label or ' vs '.join(report.names)} — {AGREE if report.agree else 'diverge'}"


#: a 10-px character's advance, generously, and the room the culprit's two lines take above
#: the arrow's tail (the SVG figure's labels)
_CHAR, _LABEL_H = 6.2, 30


def _culprit_err(report: DivergenceReport) -> float:
    """The larger error of the two sides at the first divergence (where the arrow points)."""
    first = report.first
    return max(s.max_ulp for s in (first.a, first.b) if s is not None)


def _culprit_svg(
    report: DivergenceReport, fx: Any, fy: Any, box: tuple[float, float, float, float]
) -> list[str]:
    """The first divergence in `plot_svg`: its layer shaded, its name and culprits above an
    arrow pointing at the larger error there."""
    rows, first, (left, top, right, bottom) = report.rows, report.first, box
    i, top_err = rows.index(first), _culprit_err(report)
    x0, x1, xi = fx(i - 0.5), fx(i + 0.5), fx(i)
    ya, yt = fy(top_err), max(fy(max(top_err, _FLOOR) * 30), top + _LABEL_H)
    culprits = ", ".join(first.culprits(report.names))
    lines = (f"first divergence: {first.name}", f"({culprits})")
    half = _CHAR * max(map(len, lines)) / 2
    # the label stays inside the plot at either end
    anchor, xt = (
        ("start", max(x0, left) + 2)
        if xi - half < left + 2
        else ("end", min(x1, right) - 2)
        if xi + half > right - 2
        else ("middle", xi)
    )
    red = {"fill": _C[2]}
    return [
        svg.el("rect", x=x0, y=top, width=x1 - x0, height=bottom - top, fill_opacity="0.12", **red),
        svg.text(xt, yt - 14, lines[0], anchor, **red),
        svg.text(xt, yt - 2, lines[1], anchor, **red),
        svg.line(xi, yt + 2, xi, ya - 6, stroke=_C[2]),
        svg.el("path", d=f"M{xi - 3:.1f},{ya - 10:.1f} l3,5 l3,-5", fill="none", stroke=_C[2]),
    ]


def _title_svg(report: DivergenceReport, width: int) -> list[str]:
    """The figure's title (13 px), centred; a long one in two lines, the verdict below."""
    title = _title(report)
    head, dash, tail = title.rpartition(" — ")
    lines = [head, dash.strip() + " " + tail] if len(title) * 7.5 > width - 20 else [title]
    return [svg.text(width / 2, 18 + 17 * i, s, font_size=13) for i, s in enumerate(lines)]


def _legend_svg(report: DivergenceReport, width: int, y: float) -> list[str]:
    """The legend above the plot: two columns, the two sides' markers, the bound, the diff."""
    dotted = {"stroke": "#808080", "stroke_dasharray": "2,3"}
    legend: list[tuple[str, dict[str, object]]] = [
        (f"{name}: error it adds", {"shape": shape, "fill": _C[k]})
        for k, (name, shape) in enumerate(zip(report.names, "os", strict=True))
    ]
    legend += [("a-priori bound", {"stroke": "#000"}), ("|A − B| (inherited + added)", dotted)]
    column = 36 + _CHAR * max(len(label) for label, _style in legend)
    x = (width - 2 * column - 8) / 2
    return svg.legend_box(x, y, column, legend, rows=2, font_size=10)


def _scales(report: DivergenceReport, box: tuple[float, float, float, float]) -> tuple[Any, ...]:
    """The layer axis, the ULP axis (log, clamped to its decades) and its decades lo..hi."""
    rows, floor = report.rows, _FLOOR
    left, top, right, bottom = box
    values = [floor, *(b for b in _bounds(rows) if math.isfinite(b))]
    values += [r.diff_ulp for r in rows if math.isfinite(r.diff_ulp)]
    values += [s.max_ulp for r in rows for s in (r.a, r.b) if s is not None]
    lo = math.floor(math.log10(max(min(values), floor)))
    hi = math.ceil(math.log10(max(values)) + (1.7 if report.first is not None else 0.3))
    if report.first is not None:  # room above the culprit's error for its label and arrow
        at = math.log10(max(_culprit_err(report), floor))
        while (hi - at) * (bottom - top) / max(hi - lo, 1) < _LABEL_H + 16:
            hi += 1
    fx = svg.linear(-0.5, max(len(rows), 1) - 0.5, left, right)
    scale = svg.linear(lo, lo + max(hi - lo, 1), bottom, top)

    def fy(v: float) -> float:
        return scale(math.log10(min(max(v, floor, 10.0**lo), 10.0**hi)))

    return fx, fy, lo, hi


def _data_svg(report: DivergenceReport, fx: Any, fy: Any) -> list[str]:
    """The bound's steps, the dotted difference and each side's markers (with tooltips)."""
    rows, bound = report.rows, _bounds(report.rows)
    steps = [
        p
        for i, b in enumerate(bound)
        if math.isfinite(b)
        for p in ((fx(i - 0.5), fy(b)), (fx(i + 0.5), fy(b)))
    ]
    out = [svg.polyline(steps, stroke="#000")]
    diff = [(fx(i), fy(r.diff_ulp)) for i, r in enumerate(rows) if math.isfinite(r.diff_ulp)]
    out.append(svg.polyline(diff, stroke="#808080", stroke_dasharray="2,3"))
    for k, (name, shape) in enumerate(zip(report.names, "os", strict=True)):
        for i, r in enumerate(rows):
            side = r.a if k == 0 else r.b
            if side is not None:
                tip = (
                    f"{name} at {r.name}: adds {side.max_ulp:.3g} ULP, bound "
                    f"{side.bound_ulp:.3g} ({side.n_outside} of {side.n} elements outside)"
                )
                at = fx(i + (k - 0.5) * 0.15), fy(side.max_ulp)
                out.append(svg.tip(tip, svg.marker(shape, *at, 4, fill=_C[k])))
    return out


def plot_svg(report: DivergenceReport, width: int = 560, height: int = 400) -> str:
    """The figure of `plot` as SVG markup (the explorer's: the browser draws it), as wide as
    the notebook's output area: the title, the legend above the plot, the layers below it."""
    rows = report.rows
    out = _title_svg(report, width)
    legend_y = 17 * len(out) + 10
    out += _legend_svg(report, width, legend_y)
    longest = max((len(r.name) for r in rows), default=1)
    first_name = len(rows[0].name) if rows else 1
    left = max(70, int(0.707 * _CHAR * first_name) + 8)
    box = (left, legend_y + 44, width - 12, height - int(20 + 0.707 * _CHAR * longest))
    fx, fy, lo, hi = _scales(report, box)
    # at most about eight labelled decades, whatever the range (one per decade overlaps)
    every = max(1, math.ceil((hi - lo) / 8))
    ygrid = {fy(10.0**k): f"1e{k}" for k in svg.decades(10.0**lo, 10.0**hi, every)}
    out += svg.frame(box, ygrid=ygrid, ylabel=f"ULPs of {report.fmt}")
    if report.first is not None:
        out += _culprit_svg(report, fx, fy, box)
    out += _data_svg(report, fx, fy)
    out += [
        svg.text(fx(i) + 3, box[3] + 10, r.name, "end", font_size=10, rotate=-45)
        for i, r in enumerate(rows)
    ]
    return svg.doc(width, height, *out, font_size=10)


def nearby(
    setting: dict[str, Any],
    models: tuple[str, ...],
    plants: dict[str, tuple[str, ...]],
    against: tuple[str, ...],
) -> list[dict[str, Any]]:
    """The settings one control step away from ``setting``, cheap first (reusing the reference
    side's measurements): every other plant, every other model (keeping the plant where it
    has it), then every other implementation."""
    model, plant = setting["model"], setting["plant"]
    out = [{**setting, "plant": p} for p in (None, *plants[model]) if p != plant]
    for m in models:
        if m != model:
            out.append({**setting, "model": m, "plant": plant if plant in plants[m] else None})
    out += [{**setting, "against": a} for a in against if a != setting["against"]]
    return out


def explore(model: str = "cnn", against: str = "torch", plant: str | None = "padding") -> Any:
    """An ipywidgets explorer of `run_zoo` (model, second implementation, plant): the verdict
    and the plot, each setting kept and its neighbours computed ahead (`explorer.Ahead`)."""
    import ipywidgets as w

    from ..params import validate_all
    from ..widgets.explorer import Ahead, Controls, error_panel, setting_key
    from . import AGAINST, run_zoo, zoo

    def picture(p: dict[str, Any]) -> tuple[str, str]:
        report = run_zoo(p["model"], p["against"], p["plant"])
        return part("bold", report.verdict()), plot_svg(report)

    ahead = Ahead(picture, keep=KEPT)
    image = w.HTML()  # the figure as SVG, drawn by the browser
    verdict = w.HTML()
    params = zoo_params()

    def redraw(change: Any = None) -> None:
        controls.refit()  # the plant menu: the plants of the model, "none" first
        p = controls.values
        if setting_key(p) not in ahead.seen:
            verdict.value = part("running")
        try:
            verdict.value, image.value = ahead.get(p)
        except Exception as exc:  # any failure ends "running…" with an error panel
            verdict.value = error_panel(exc)
            return
        against = tuple(a for a in AGAINST if a not in _ELSEWHERE)
        ahead.plan(nearby(p, zoo.MODELS, zoo.PLANTS, against), first=change is None)

    given = {"model": model, "against": against, "plant": plant}
    controls = Controls(params, validate_all(params, given, "diverge explorer"), redraw)
    redraw()
    title = w.HTML(part("title", "Find the divergence: the zoo's models, layer by layer"))
    model_w, against_w, plant_w = controls.widgets.values()
    return w.VBox([title, w.HBox([model_w, plant_w]), against_w, verdict, image])
