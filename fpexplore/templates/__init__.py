"""The presentation layer's files: one stylesheet (``fpexplore.css``) for every HTML face, and
the jinja2 templates of the pages. `stylesheet` is the ``<style>`` element to put once in a
page or a widget's output; `render` fills a template (autoescaped)."""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["render", "stylesheet"]


@cache
def css() -> str:
    """The text of ``fpexplore.css``."""
    return resources.files(__name__).joinpath("fpexplore.css").read_text(encoding="utf-8")


def stylesheet() -> str:
    """``<style>…</style>`` with the whole stylesheet: once per page or widget output."""
    return f"<style>{css()}</style>"
