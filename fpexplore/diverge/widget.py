"""Pictures of a divergence report: error per layer against the bound, the culprit marked;
and an explorer over the zoo (model, second implementation, plant)."""

from __future__ import annotations

import html
import math
from collections import OrderedDict
from typing import Any

import numpy as np

from .report import DivergenceReport

#: pictures the explorer keeps (verdict and PNG per model, implementation and plant)
KEPT = 48


def _margins(fig: Any, labels: list[str], fontsize: float = 8.0) -> None:
    """Fixed margins that hold the title, the y label and the x tick labels rotated by 45°
    (estimated from the longest label: `tight_layout` measures every text and costs more than
    drawing the figure)."""
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


def plot(report: DivergenceReport, ax: Any = None, pyplot: bool = True) -> Any:
    """Each side's added error per layer (ULPs, log scale), the bound, the culprit arrowed.

    Returns the matplotlib figure. Without ``ax``, a new figure laid out with fixed margins
    (one rendering, no layout pass), made by pyplot (shown by a notebook) unless ``pyplot``
    is false.
    """
    rows = report.rows
    own = ax is None
    if own:
        size = (max(6.0, 0.55 * len(rows) + 2), 3.8)
        if pyplot:
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots(figsize=size)
        else:
            from matplotlib.figure import Figure

            fig = Figure(figsize=size)
            ax = fig.add_subplot()
    else:
        fig = ax.figure
    xs = np.arange(len(rows))
    floor = 1e-3  # exact layers (0 ULP) drawn at the bottom of the log axis
    for k, (name, marker) in enumerate(zip(report.names, ("o", "s"), strict=True)):
        sides = [r.a if k == 0 else r.b for r in rows]
        ys = [max(s.max_ulp, floor) if s is not None else np.nan for s in sides]
        ax.plot(xs + (k - 0.5) * 0.15, ys, marker, label=f"{name}: error it adds", ms=6)
    bound = [max((s.bound_ulp for s in (r.a, r.b) if s is not None), default=np.nan) for r in rows]
    ax.step(xs, np.maximum(bound, floor), where="mid", color="k", lw=1, label="a-priori bound")
    ax.plot(
        xs,
        [max(r.diff_ulp, floor) for r in rows],
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
            xy=(i, max(top, floor)),
            xytext=(i, max(top, floor) * 30),
            ha="center",
            fontsize=8,
            color="C3",
            arrowprops={"arrowstyle": "->", "color": "C3"},
        )
        ax.axvspan(i - 0.5, i + 0.5, color="C3", alpha=0.12)
    title = report.label or " vs ".join(report.names)
    ax.set_title(f"{title} — {'agree within rounding' if report.agree else 'diverge'}", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, which="major", alpha=0.3)
    if own:
        _margins(fig, [r.name for r in rows])
    return fig


def _png(fig: Any) -> bytes:
    """A figure as PNG bytes at its own size (fast zlib level: the pixels are the same)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, pil_kwargs={"compress_level": 1})
    return buf.getvalue()


def _verdict(report: DivergenceReport) -> str:
    return f"<b>{html.escape(report.verdict())}</b>"


def nearby(
    setting: dict[str, Any],
    models: tuple[str, ...],
    plants: dict[str, tuple[str, ...]],
    against: tuple[str, ...],
) -> list[dict[str, Any]]:
    """The settings one control step away from ``setting`` (``model``, ``against``, ``plant``):
    every other plant of the model, every other model (keeping the plant where that model has
    it, as the plant menu does), then every other implementation. The cheap first: a new
    plant or model of the same implementation reuses the reference side's measurements."""
    model, plant = setting["model"], setting["plant"]
    out = [{**setting, "plant": p} for p in (None, *plants[model]) if p != plant]
    for m in models:
        if m != model:
            out.append({**setting, "model": m, "plant": plant if plant in plants[m] else None})
    out += [{**setting, "against": a} for a in against if a != setting["against"]]
    return out


def explore(model: str = "cnn", against: str = "torch", plant: str | None = "padding") -> Any:
    """An ipywidgets explorer: pick a zoo model, the second implementation and a plant; the
    plot and the verdict are redrawn from `run_zoo`. Each setting is computed once and kept;
    while the kernel is idle, the settings one control step away are computed ahead (see
    `fpexplore.widgets.explorer.Ahead`)."""
    import ipywidgets as w

    from ..widgets.explorer import Ahead, error_panel, setting_key
    from . import run_zoo, zoo

    shown: OrderedDict[tuple[Any, ...], tuple[str, bytes]] = OrderedDict()

    def picture(p: dict[str, Any]) -> tuple[str, bytes]:
        report = run_zoo(p["model"], p["against"], p["plant"])
        return _verdict(report), _png(plot(report, pyplot=False))

    ahead = Ahead(picture, shown, keep=KEPT)  # before the controls: it hears them
    model_w = w.Dropdown(options=zoo.MODELS, value=model, description="model")
    against_w = w.ToggleButtons(options=("torch", "keras"), value=against, description="against")
    plant_w = w.Dropdown(description="plant")
    image = w.Image(format="png")
    verdict = w.HTML()
    swapping = [False]  # the plant menu is being refilled for a new model

    def plants(*_: Any) -> None:
        """Refill the plant menu for the model, keeping the plant where the model has it, and
        always with one option selected (an emptied selection shows a blank menu, on which
        choosing "none" would change nothing)."""
        opts = [("none", None)] + [(p, p) for p in zoo.PLANTS[model_w.value]]
        values = [v for _, v in opts]
        keep = plant_w.value if plant_w.value in values else None
        swapping[0] = True
        try:
            plant_w.options = opts
            plant_w.index = values.index(keep)
        finally:
            swapping[0] = False

    def redraw(change: Any = None) -> None:
        if swapping[0]:
            return
        p = {"model": model_w.value, "against": against_w.value, "plant": plant_w.value}
        key = setting_key(p)
        if key in shown:
            shown.move_to_end(key)
        else:
            verdict.value = "<i>running…</i>"
            try:
                shown[key] = picture(p)
            except Exception as exc:  # any failure ends "running…" with an error panel
                verdict.value = error_panel(exc)
                return
        verdict.value, image.value = shown[key]
        while len(shown) > KEPT:
            shown.popitem(last=False)
        ahead.plan(
            nearby(p, zoo.MODELS, zoo.PLANTS, tuple(against_w.options)), first=change is None
        )

    plants()
    if plant in [v for _, v in plant_w.options]:
        plant_w.value = plant
    model_w.observe(lambda change: (plants(), redraw(change)), names="value")
    against_w.observe(redraw, names="value")
    plant_w.observe(redraw, names="value")
    redraw()
    title = w.HTML("<h3>Find the divergence: the zoo's models, layer by layer</h3>")
    return w.VBox([title, w.HBox([model_w, plant_w]), against_w, verdict, image])
