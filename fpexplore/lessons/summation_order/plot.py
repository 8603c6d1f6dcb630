"""The error-growth figure of the summation lesson, quick to redraw in the explorer.

The figure of one (distribution, format, threads) is drawn once: the emulators' curves, the
textbook bounds, the axes and their legend. A run then only moves its markers. The figure's
`QuickCanvas` keeps a picture of everything but the markers and, while nothing else changed,
renders by pasting that picture and drawing the markers and their legend over it (blitting),
instead of laying out and rasterizing every line and label again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg

from ...figures import DPI, WIDTH_IN
from .growth import NS, X_MAX, Point, _signature, ylim

#: figures kept for reuse by `draw` (a redraw then only moves this run's markers), newest last
_FIGURES: dict[tuple[Any, ...], Any] = {}
_KEEP = 4
_SHAPES = "os^vDP*Xh"  # one marker line per possible distinct result of a run
#: print_figure settings the quick path honours as they are; any other goes to matplotlib
_QUICK_KEYS = {"format", "dpi", "facecolor", "edgecolor", "bbox_inches", "pil_kwargs"}


class QuickCanvas(FigureCanvasAgg):
    """An Agg canvas that draws the ``overlay()`` artists over a cached picture of the rest of
    the figure, and draws the rest again only when it changed (the figure is stale: overlay
    artists are ``animated``, so changing them does not make it stale) or the size changed."""

    def __init__(self, figure: Any, overlay: Callable[[], list[Any]]) -> None:
        super().__init__(figure)
        self._overlay = overlay
        self._background: Any = None
        self._size: tuple[float, ...] = ()
        self.full_draws = 0  # how many times the whole figure was rasterized

    def draw(self) -> None:
        fig = self.figure
        renderer = self.get_renderer()
        size = (renderer.width, renderer.height, *fig.bbox.bounds)
        artists = self._overlay()
        if self._background is None or fig.stale or size != self._size:
            for artist in artists:
                artist.set_visible(False)
            super().draw()
            for artist in artists:
                artist.set_visible(True)
            self._background, self._size = self.copy_from_bbox(fig.bbox), size
            self.full_draws += 1
        else:
            renderer.restore_region(self._background)
        for artist in artists:
            fig.draw_artist(artist)
        fig.stale = False  # drawing a legend marks its axes stale; the picture is current

    def print_figure(self, filename: Any, *args: Any, **kwargs: Any) -> Any:
        """A PNG at the figure's own size and colours straight from :meth:`draw`; anything
        else through matplotlib. ``bbox_inches="tight"`` (JupyterLab's ``display``) is served
        untrimmed: the figure has no margin to trim, and trimming costs a second layout."""
        if args or not self._quick(kwargs) or not hasattr(filename, "write"):
            return super().print_figure(filename, *args, **kwargs)
        from PIL import Image

        self.draw()
        pixels = np.asarray(self.buffer_rgba())
        if (pixels[..., 3] == 255).all():  # opaque: RGB encodes about 3 times faster
            pixels = np.ascontiguousarray(pixels[..., :3])
        options = {"compress_level": 1, **(kwargs.get("pil_kwargs") or {})}
        Image.fromarray(pixels).save(filename, format="png", **options)
        return None

    def _quick(self, kwargs: dict[str, Any]) -> bool:
        fig = self.figure
        return (
            set(kwargs) <= _QUICK_KEYS
            and kwargs.get("format", "png") == "png"
            and kwargs.get("dpi") in (None, "figure", fig.dpi)
            and kwargs.get("bbox_inches") in (None, "tight")
            and _same_colour(kwargs.get("facecolor"), fig.get_facecolor())
            and _same_colour(kwargs.get("edgecolor"), fig.get_edgecolor())
        )


def _same_colour(given: Any, own: Any) -> bool:
    from matplotlib.colors import to_rgba

    return given in (None, "auto") or to_rgba(given) == to_rgba(own)


def _log_axes(ax: Any) -> None:
    """Log scales with plain-text decade labels and no minor ticks (mathtext tick labels and
    minor ticks make up most of the time to render the figure)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, numticks=12))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"1e{round(math.log10(v))}"))
        axis.set_minor_locator(NullLocator())


class RunMarkers:
    """This run's results on the figure: one marker per distinct error (outcomes with the same
    result share it) and a legend naming them, all ``animated``: left to `QuickCanvas`."""

    def __init__(self, ax: Any) -> None:
        self.ax = ax
        self.lines = [
            ax.plot(
                [],
                [],
                shape,
                color="black" if i == 0 else f"C{i}",
                ms=7,
                mfc="none",
                mew=1.5,
                animated=True,
            )[0]
            for i, shape in enumerate(_SHAPES)
        ]
        self.legend: Any = None
        self._labels: tuple[str, ...] | None = None
        self.title = "this run"  # the markers legend title (`Point.legend_title`)

    def update(self, current: Point) -> None:
        """Move the markers to ``current`` (a run's ``n`` and errors); the legend is rebuilt
        only when its labels change."""
        groups: dict[float, list[str]] = {}
        for name, err in current.errors.items():
            if math.isfinite(err) and err > 0:
                groups.setdefault(err, []).append(current.label(name))
        if len(groups) > len(self.lines):
            raise ValueError(
                f"'current' holds {len(groups)} distinct errors; at most {len(self.lines)} "
                "can be marked"
            )
        items = list(groups.items())
        for i, line in enumerate(self.lines):
            line.set_data(([current.n], [items[i][0]]) if i < len(items) else ([], []))
        labels = tuple("\n= ".join(names) for _err, names in items)
        self.title = current.legend_title()
        if labels == self._labels:
            return
        from matplotlib.legend import Legend

        self.legend, self._labels = None, labels
        if not labels:
            return
        fig = self.ax.figure
        was_stale = fig.stale
        legend = Legend(  # below the axes, where it hides no curve and no marker
            self.ax,
            self.lines[: len(labels)],
            labels,
            loc="upper left",
            bbox_to_anchor=(-0.12, -0.16),
            ncol=3,
            borderaxespad=0.0,
            fontsize=7,
            labelspacing=0.8,
        )
        legend.set_title(self.title, prop={"size": 8})
        legend.set_animated(True)
        fig.stale = was_stale  # an overlay: building it changed nothing under it
        self.legend = legend

    def artists(self) -> list[Any]:
        """The markers and their legend (what `QuickCanvas` draws over its picture)."""
        return [*self.lines, *([self.legend] if self.legend is not None else [])]


def draw(comparison: Any) -> Any:
    """The log-log error-growth figure of a summation comparison (a matplotlib Figure).

    The curves are the cached emulator curves, the markers this run's results. The figure
    drawn last for the same curves is reused with its markers moved, and its `QuickCanvas`
    redraws only them; an earlier return value changes too.
    """
    growth, current = comparison.data.growth, comparison.data.current
    p = comparison.params
    key = (p.distribution, p.dtype, growth.threads, _signature())
    if key in _FIGURES:
        fig, run = _FIGURES.pop(key)
        _FIGURES[key] = (fig, run)
        run.update(current)
        ylo, yhi = run.ax.get_ylim()
        errs = [e for e in current.errors.values() if math.isfinite(e) and e > 0]
        if any(not ylo <= e <= yhi for e in errs):  # limits change only when needed
            run.ax.set_ylim(*ylim(growth, current))
        return fig
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, 5.0), dpi=DPI)
    fig.subplots_adjust(left=0.14, right=0.97, bottom=0.3, top=0.88)
    ax = fig.add_subplot()
    ns = np.asarray(growth.n, dtype=np.float64)
    for order, ys in growth.errors.items():
        ax.plot(
            ns, np.asarray(ys, dtype=np.float64), marker=".", lw=1.2, label=f"{order} (emulated)"
        )
    for label, ys in growth.bounds.items():
        ax.plot(
            ns, ys, ls="--", color="0.45" if "sequential" in label else "0.7", lw=1, label=label
        )
    ax.legend(fontsize=7, loc="upper left", ncol=2)  # the curves' legend, before the markers
    run = RunMarkers(ax)
    run.update(current)
    _log_axes(ax)
    ax.set_xlim(NS[0] / 1.5, X_MAX * 1.5)  # fixed: moving markers never rescale the axes
    ax.set_ylim(*ylim(growth, current))
    ax.set_xlabel("n (number of terms)")
    ax.set_ylabel("|sum - exact| / Σ|x|")
    ax.set_title(
        f"Error growth: {p.distribution}, {p.dtype}\n(curves: seed {growth.seed}, "
        f"{growth.threads} thread(s); zero errors not drawn)",
        fontsize=9,
    )
    ax.grid(True, which="major", alpha=0.3)
    QuickCanvas(fig, run.artists)
    _FIGURES[key] = (fig, run)
    while len(_FIGURES) > _KEEP:
        _FIGURES.pop(next(iter(_FIGURES)))
    return fig
