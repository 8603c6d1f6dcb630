"""The README's "Adding a lesson" walk-through runs as written and meets the contract."""

import re
from pathlib import Path

import pytest

from fpexplore import testing

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    walk = text[text.index("### Walk-through: a new lesson in one folder") :]
    return re.findall(r"```python\n(.*?)```", walk, re.S)[:2]


def test_the_walkthrough_lesson_meets_the_contract():
    lesson_code, check_code = _blocks()
    ns: dict = {}
    exec(compile(lesson_code, "README walk-through", "exec"), ns)
    lesson = ns["LESSON"]
    assert lesson.data is not None and lesson.claims, "the walk-through declares data and claims"

    def check_lesson(name, **kw):  # the lesson is not in the package: check the object
        assert name == lesson.name
        return testing.check_lesson(lesson, **kw)

    checked = []
    code = check_code.replace("from fpexplore.testing import check_lesson\n", "")
    assert code != check_code, "the README imports check_lesson from fpexplore.testing"
    exec(
        compile(code, "README check", "exec"),
        {"check_lesson": lambda *a, **k: checked.append(check_lesson(*a, **k))},
    )
    assert checked and checked[0].runs, "check_lesson ran the lesson"
    c = lesson.run(n=1000)
    assert isinstance(c.data, lesson.data) and c.claims["within_bound"].holds


def test_a_lesson_returning_untyped_data_breaks_the_contract():
    lesson_code, _ = _blocks()
    ns: dict = {}
    exec(compile(lesson_code, "README walk-through", "exec"), ns)
    from dataclasses import replace

    lesson = ns["LESSON"]

    def untyped(**params):
        return replace(lesson.compute(**params), data={"sums": {}})

    with pytest.raises(testing.LessonContractError, match="not the declared SumData"):
        testing.check_lesson(replace(lesson, compute=untyped), draws=1)
