"""Lessons: one module each, or one subpackage when a lesson has helpers (its experiment on a
GPU, its framework runners, its views). Each defines ``LESSON``; they are discovered, never
listed by hand. Names starting with ``_`` are shared helpers, not lessons (``_base``: the
contract; ``_gpu``: where a GPU lesson's numbers come from).

Importing a lesson module is cheap: frameworks load inside ``compute``.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from ..errors import InvalidParameter
from ..result import Comparison
from ._base import Lesson

__all__ = ["Lesson", "all_lessons", "get", "run"]


def all_lessons() -> dict[str, Lesson]:
    """Every lesson by name, in notebook order."""
    found: dict[str, Lesson] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        lesson = getattr(module, "LESSON", None)
        if isinstance(lesson, Lesson):
            found[lesson.name] = lesson
    return dict(sorted(found.items(), key=lambda kv: (kv[1].notebook or "~", kv[0])))


def get(name: str) -> Lesson:
    """The lesson called ``name`` (`InvalidParameter` lists the lessons otherwise)."""
    lessons = all_lessons()
    if not isinstance(name, str) or name not in lessons:
        raise InvalidParameter("lesson", name, "one of " + ", ".join(lessons))
    return lessons[name]


def run(name: str, /, **params: Any) -> Comparison:
    """Run lesson ``name`` with ``params``: the one path behind notebooks, widgets and the CLI."""
    return get(name).run(**params)
