"""Self-contained HTML pages (the report, exported lessons): figures embedded as PNG data URIs,
a lesson's comparison rendered once by `fpexplore.result.html`, one stylesheet, no external file.
"""

from __future__ import annotations

import base64
import html
import io
import platform
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .lessons import Lesson
    from .result import Comparison

#: resolution of the embedded figures
FIGURE_DPI = 96

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;
  max-width:1060px;padding:0 16px;color:#222;line-height:1.45}
h1{font-size:26px;margin-bottom:4px} h2{font-size:21px;margin-top:34px;
  border-bottom:1px solid #ddd;padding-bottom:4px} h3{font-size:16px}
table.fpx-meta{border-collapse:collapse;font-size:13px;margin:8px 0}
table.fpx-meta th,table.fpx-meta td{text-align:left;padding:2px 10px 2px 0;
  border-bottom:1px solid #eee;vertical-align:top}
.fpx-figure img{max-width:100%;height:auto;border:1px solid #eee}
.fpx-muted{color:#666;font-size:13px}
.fpx-error{border-left:4px solid #d62728;background:#fff4f4;padding:6px 10px}
.fpx-banner{border-left:4px solid #ff9f1c;background:#fff8ee;padding:6px 10px;font-size:13px}
.s-holds{color:#2ca02c} .s-fails{color:#d62728;font-weight:600} .s-not{color:#888}
"""


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def figure_data_uri(fig: Any, dpi: int = FIGURE_DPI) -> str:
    """A matplotlib figure as a ``data:image/png;base64,...`` URI (the figure is closed)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    finally:
        plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def figure_html(lesson: Lesson, comparison: Comparison) -> str:
    """The lesson's figure of ``comparison`` as an embedded image ('' when it has none)."""
    if lesson.figure is None:
        return ""
    fig = lesson.figure(comparison)
    if fig is None:
        return ""
    alt = f"figure of {lesson.name} ({params_text(comparison.params)})"
    return f"<div class='fpx-figure'><img alt='{esc(alt)}' src='{figure_data_uri(fig)}'></div>"


def comparison_html(comparison: Comparison) -> str:
    """The comparison (truth, table, claims, observations, explanation), everything unfolded:
    a page is read or printed, not clicked through."""
    try:
        from .result.html import comparison_html as render
    except ImportError:  # the plain rendering of the comparison itself
        return comparison._repr_html_()
    return render(comparison).replace("<details>", "<details open>")


def params_text(params: Any) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in dict(params).items()) or "no parameters"


def claim_counts(comparison: Comparison) -> dict[str, int]:
    """How many of the comparison's claims hold, fail, were not checked."""
    counts = {"holds": 0, "fails": 0, "not checked": 0}
    for claim in comparison.claims.values():
        holds = getattr(claim, "holds", None)
        counts["not checked" if holds is None else "holds" if holds else "fails"] += 1
    return counts


def counts_html(counts: dict[str, int]) -> str:
    cls = {"holds": "s-holds", "fails": "s-fails", "not checked": "s-not"}
    return ", ".join(f"<span class='{cls[k]}'>{n} {k}</span>" for k, n in counts.items() if n)


def machine() -> dict[str, str]:
    """Which machine and Python the page was made on."""
    import os

    return {
        "made": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "host": platform.node(),
        "system": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "cpu": platform.processor() or platform.machine(),
        "cores": str(os.cpu_count()),
        "python": sys.version.split()[0],
    }


def meta_table(rows: dict[str, Any] | list[tuple[str, Any]]) -> str:
    items = rows.items() if isinstance(rows, dict) else rows
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in items)
    return f"<table class='fpx-meta'>{body}</table>"


def document(title: str, body: str, head: str = "") -> str:
    """A whole HTML document with the page stylesheet; ``head`` goes into ``<head>``."""
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>{esc(title)}</title><style>{STYLE}</style>{head}</head>"
        f"<body>{body}</body></html>\n"
    )
