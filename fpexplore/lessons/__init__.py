"""Lessons: one module each, or one subpackage when a lesson has helpers (its experiment on a
GPU, its framework runners, its views). Each defines ``LESSON``; they are discovered, never
listed by hand. Names starting with ``_`` are shared helpers, not lessons (``_base``: the
contract; ``_gpu``: where a GPU lesson's numbers come from).

Importing a lesson module is cheap: frameworks load inside ``compute``.
"""

from __future__ import annotations

import importlib
import pkgutil
import traceback
import warnings
from typing import Any

from ..errors import InvalidParameter
from ..result import Comparison
from ._base import Lesson

__all__ = ["Lesson", "LessonImportWarning", "all_lessons", "broken", "get", "names", "run"]


class LessonImportWarning(UserWarning):
    """A lesson module failed to import; the other lessons still work."""


_BROKEN: dict[str, str] = {}


def names() -> list[str]:
    """Module names of the lessons in this package (imports nothing)."""
    return sorted(i.name for i in pkgutil.iter_modules(__path__) if not i.name.startswith("_"))


def _load(module_name: str) -> Lesson | None:
    try:
        module = importlib.import_module(f"{__name__}.{module_name}")
    except Exception as exc:  # one broken lesson must not take the others down
        first = traceback.format_exception_only(type(exc), exc)[-1].strip()
        if _BROKEN.get(module_name) != first:
            warnings.warn(
                f"lesson module {module_name!r} failed to import and is left out: {first}",
                LessonImportWarning,
                stacklevel=3,
            )
        _BROKEN[module_name] = first
        return None
    _BROKEN.pop(module_name, None)
    lesson = getattr(module, "LESSON", None)
    return lesson if isinstance(lesson, Lesson) else None


def broken() -> dict[str, str]:
    """Lesson modules that failed to import in this process, with the error (empty if none)."""
    return dict(_BROKEN)


def all_lessons() -> dict[str, Lesson]:
    """Every lesson by name, in notebook order (a module that fails to import is left out
    with a `LessonImportWarning`; `broken` lists them)."""
    found: dict[str, Lesson] = {}
    for name in names():
        lesson = _load(name)
        if lesson is not None:
            found[lesson.name] = lesson
    return dict(sorted(found.items(), key=lambda kv: (kv[1].notebook or "~", kv[0])))


def get(name: str) -> Lesson:
    """The lesson called ``name`` (`InvalidParameter` lists the lessons otherwise)."""
    if isinstance(name, str) and name in names():
        lesson = _load(name)
        if lesson is not None and lesson.name == name:
            return lesson
    lessons = all_lessons()
    if not isinstance(name, str) or name not in lessons:
        raise InvalidParameter("lesson", name, "one of " + ", ".join(lessons))
    return lessons[name]


def run(name: str, /, **params: Any) -> Comparison:
    """Run lesson ``name`` with ``params``: the one path behind notebooks, widgets and the CLI."""
    return get(name).run(**params)
