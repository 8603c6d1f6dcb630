"""Self-contained HTML pages (the report, exported lessons): figures embedded as PNG data URIs,
a lesson's comparison rendered once by `fpexplore.result.html`, one stylesheet, no external file.
"""

from __future__ import annotations

import html
import platform
import sys
import time
from typing import TYPE_CHECKING, Any

from .figures import data_uri, figure_png
from .templates import stylesheet

if TYPE_CHECKING:
    from .lessons import Lesson
    from .result import Comparison

#: resolution of the embedded figures
FIGURE_DPI = 96


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def figure_html(lesson: Lesson, comparison: Comparison) -> str:
    """The lesson's figure of ``comparison`` as an embedded image ('' when it has none)."""
    if lesson.figure is None:
        return ""
    fig = lesson.figure(comparison)
    if fig is None:
        return ""
    alt = f"figure of {lesson.name} ({params_text(comparison.params)})"
    src = data_uri(figure_png(fig, FIGURE_DPI, tight=True))
    return f"<div class='fpx-figure'><img alt='{esc(alt)}' src='{src}'></div>"


def comparison_html(comparison: Comparison) -> str:
    """The comparison (truth, table, claims, observations, explanation), everything unfolded:
    a page is read or printed, not clicked through."""
    try:
        from .result.html import comparison_html as render
    except ImportError:  # the plain rendering of the comparison itself
        return comparison._repr_html_()
    return render(comparison, style=False).replace("<details>", "<details open>")


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
        f"<title>{esc(title)}</title>{stylesheet()}{head}</head>"
        f"<body class='fpx-page'>{body}</body></html>\n"
    )
