"""Pictures of a divergence report: error per layer against the bound, the culprit marked;
and an explorer over the zoo (model, second implementation, plant)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .report import DivergenceReport


def plot(report: DivergenceReport, ax: Any = None) -> Any:
    """Each side's added error per layer (ULPs, log scale), the bound, the culprit arrowed.

    Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(report.rows) + 2), 3.8))
    else:
        fig = ax.figure
    rows = report.rows
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
    fig.tight_layout()
    return fig


def explore(model: str = "cnn", against: str = "torch", plant: str | None = "padding") -> Any:
    """An ipywidgets explorer: pick a zoo model, the second implementation and a plant; the
    plot and the verdict are redrawn from `run_zoo` (each setting computed once, then kept)."""
    import io

    import ipywidgets as w
    import matplotlib.pyplot as plt

    from . import run_zoo, zoo

    model_w = w.Dropdown(options=zoo.MODELS, value=model, description="model")
    against_w = w.ToggleButtons(options=("torch", "keras"), value=against, description="against")
    plant_w = w.Dropdown(description="plant")
    image = w.Image(format="png")
    verdict = w.HTML()
    shown: dict[tuple[str, str, str | None], tuple[str, bytes]] = {}
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

    def redraw(*_: Any) -> None:
        if swapping[0]:
            return
        key = (model_w.value, against_w.value, plant_w.value)
        if key not in shown:
            verdict.value = "<i>running…</i>"
            report = run_zoo(*key)
            fig = plot(report)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=fig.dpi, pil_kwargs={"compress_level": 1})
            plt.close(fig)
            shown[key] = (f"<b>{report.verdict()}</b>", buf.getvalue())
        verdict.value, image.value = shown[key]

    plants()
    if plant in [v for _, v in plant_w.options]:
        plant_w.value = plant
    model_w.observe(lambda *_: (plants(), redraw()), names="value")
    against_w.observe(redraw, names="value")
    plant_w.observe(redraw, names="value")
    redraw()
    return w.VBox([w.HBox([model_w, plant_w]), against_w, verdict, image])
