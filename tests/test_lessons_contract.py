"""One contract over every lesson: declarations, validation, notebooks, cheap imports."""

import subprocess
import sys
from pathlib import Path

import pytest

from fpexplore.errors import InvalidParameter
from fpexplore.lessons import Lesson, all_lessons, get
from fpexplore.params import validate_all

LESSONS = all_lessons()
ROOT = Path(__file__).resolve().parents[1]


def test_there_are_lessons():
    assert LESSONS, "no lesson module defines LESSON"


@pytest.mark.parametrize("name", list(LESSONS))
def test_lesson_declares_itself(name):
    lesson = LESSONS[name]
    assert isinstance(lesson, Lesson) and lesson.name == name
    assert lesson.title and lesson.summary and "\n" not in lesson.summary
    validate_all(lesson.params, {}, name)  # every default is itself valid
    assert len({p.name for p in lesson.params}) == len(lesson.params)
    if lesson.notebook:
        assert (ROOT / "notebooks" / lesson.notebook).exists(), lesson.notebook


@pytest.mark.parametrize("name", list(LESSONS))
def test_lesson_rejects_unknown_parameter_by_name(name):
    with pytest.raises(InvalidParameter, match="'no_such_param'"):
        LESSONS[name].run(no_such_param=1)


def test_unknown_lesson_lists_the_known_ones():
    with pytest.raises(InvalidParameter, match="one of"):
        get("no_such_lesson")


def test_discovering_lessons_imports_no_framework():
    code = (
        "import sys, fpexplore; fpexplore.catalog();"
        "print(','.join(m for m in ('torch','tensorflow','jpype') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
