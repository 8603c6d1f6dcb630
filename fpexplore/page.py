"""Self-contained HTML pages (the report, exported lessons) from the templates of
`fpexplore.templates`: figures as PNG data URIs, one stylesheet, no external file."""

from __future__ import annotations

import platform
import sys
import time
from typing import TYPE_CHECKING, Any

from . import templates
from .figures import data_uri, figure_png

if TYPE_CHECKING:
    from .lessons import Lesson
    from .result import Comparison

#: resolution of the embedded figures
FIGURE_DPI = 96


def figure(lesson: Lesson, comparison: Comparison) -> dict[str, str] | None:
    """The lesson's figure of ``comparison`` as an image to embed: its ``src`` (a data URI) and
    ``alt`` text; None when it has none."""
    fig = lesson.figure(comparison) if lesson.figure is not None else None
    if fig is None:
        return None
    return {
        "src": data_uri(figure_png(fig, FIGURE_DPI, tight=True)),
        "alt": f"figure of {lesson.name} ({params_text(comparison.params)})",
    }


def comparison_html(comparison: Comparison) -> str:
    """The comparison with everything unfolded (a page is read or printed, not clicked)."""
    from .result.html import comparison_html as html

    return html(comparison, style=False).replace("<details>", "<details open>")


def params_text(params: Any) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in dict(params).items()) or "no parameters"


def claim_counts(comparison: Comparison) -> dict[str, int]:
    """How many of the comparison's claims hold, fail, were not checked."""
    from .result import State

    return State.counts(c.state for c in comparison.claims.values())


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


def render(name: str, /, **context: Any) -> str:
    """The template ``name`` with ``params_text`` and ``comparison_html`` at hand."""
    return templates.render(
        name,
        params_text=params_text,
        comparison_html=lambda c: templates.trusted(comparison_html(c)),
        **context,
    )


def document(title: str, body: str, head: str = "") -> str:
    """A whole HTML document with the stylesheet around ``body`` (``head`` in ``<head>``)."""
    trusted = templates.trusted
    return render("page.html", title=title, body=trusted(body), head=trusted(head))
