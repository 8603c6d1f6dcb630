"""Figures as pictures: a matplotlib figure as PNG bytes, PNG bytes as a data URI. The one
place that turns a figure into PNG, for the widgets (``ipywidgets.Image``) and the pages."""

from __future__ import annotations

import base64
import io
from typing import Any

#: the width every figure is made for: JupyterLab's output area at a 1000 px window with the
#: file browser open is 568 px, 5.68 in at the inline backend's (matplotlib's) 100 dpi; shown
#: at its own size, a label of 8 pt or more reads as it would on paper
WIDTH_IN = 5.6
#: the dpi the figures are drawn at (the notebooks' inline backend: matplotlib's default)
DPI = 100


def figure_png(fig: Any, dpi: float | None = None, tight: bool = False) -> bytes:
    """``fig`` as PNG bytes, at its own dpi unless ``dpi`` is given (``tight``: cropped to what
    is drawn), without pyplot's global state; fast zlib level, the pixels are the same. A
    pyplot-managed figure is closed afterwards, so the inline backend does not draw it again."""
    buf = io.BytesIO()
    extra = {"bbox_inches": "tight"} if tight else {}
    fig.savefig(buf, format="png", dpi=dpi or fig.dpi, pil_kwargs={"compress_level": 1}, **extra)
    if getattr(fig, "number", None) is not None:  # made by pyplot
        import matplotlib.pyplot as plt

        plt.close(fig)
    return buf.getvalue()


def data_uri(png: bytes) -> str:
    """PNG bytes as a ``data:image/png;base64,...`` URI (for an ``<img>`` or an SVG image)."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
