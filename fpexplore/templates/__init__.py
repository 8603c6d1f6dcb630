"""The presentation layer's files: one stylesheet (``fpexplore.css``) for every HTML face and
the jinja2 templates (autoescaped; `trusted` marks HTML made elsewhere). `render` fills a
template, `part` one macro of ``parts.html``."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

__all__ = ["css", "part", "render", "stylesheet", "trusted"]


@cache
def css() -> str:
    """The text of ``fpexplore.css``."""
    return resources.files(__name__).joinpath("fpexplore.css").read_text(encoding="utf-8")


def stylesheet() -> str:
    """``<style>…</style>`` with the whole stylesheet: once per page or widget output."""
    return f"<style>{css()}</style>"


def trusted(html: str) -> Any:
    """``html`` as markup a template inserts as it is (HTML this package made)."""
    from markupsafe import Markup

    return Markup(html)


@cache
def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("fpexplore", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["stylesheet"] = lambda: trusted(stylesheet())
    env.filters["unbroken"] = unbroken
    return env


def render(name: str, /, **context: Any) -> str:
    """The template ``name`` (a file of this folder) filled with ``context``."""
    return _environment().get_template(name).render(**context)


def part(name: str, /, *args: Any, **kwargs: Any) -> str:
    """The macro ``name`` of ``parts.html`` (a table, a bit strip, an error line) filled."""
    return str(getattr(_environment().get_template("parts.html").module, name)(*args, **kwargs))


def unbroken(text: Any) -> str:
    """``text`` whose hyphens before a digit or symbol do not break a line ("1.1755e-38",
    "-0.4" stay whole): U+2011, the non-breaking hyphen."""
    import re

    return re.sub(r"-(?=[^\sA-Za-z])", "\u2011", str(text))
