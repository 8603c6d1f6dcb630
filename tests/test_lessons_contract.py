"""One contract over every lesson: declarations, validation, notebooks, cheap imports."""

import subprocess
import sys
from pathlib import Path

import pytest

from fpexplore import backends
from fpexplore.errors import InvalidParameter
from fpexplore.lessons import Lesson, all_lessons, get
from fpexplore.lessons._base import ClaimSpec, hidden, settle
from fpexplore.params import validate_all
from fpexplore.result import Claim
from fpexplore.testing import hidden_problems

LESSONS = all_lessons()
ROOT = Path(__file__).resolve().parents[1]
DECLARING = [name for name, lesson in LESSONS.items() if lesson.claims]


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


@pytest.mark.parametrize("name", list(LESSONS))
def test_declared_claims_are_well_formed(name):
    lesson = LESSONS[name]
    for declared in (lesson.claims, lesson.observations):
        for key, spec in declared.items():
            assert isinstance(spec, ClaimSpec) and spec.key == key and spec.text, key
            assert all(isinstance(p, str) and p for p in spec.needs), key
            assert not spec.test or (ROOT / spec.test.split("::")[0]).exists(), spec.test


def test_the_lessons_named_in_the_claims_issue_declare_their_claims():
    for name in (
        "djl_normalization",
        "tf_vs_torch",
        "train_vs_eval",
        "tf32",
        "libtorch_vs_pytorch",
        "distributed_reduction",
        "gpu_determinism",
        "cpu_vs_accelerator",
    ):
        assert name in DECLARING, name


@pytest.mark.parametrize("name", DECLARING)
def test_every_claim_returned_is_declared_and_hidden_needs_are_not_checked(name):
    lesson = LESSONS[name]
    params = {**lesson.defaults(), **lesson.quick}
    c = lesson.run(**params)
    assert set(c.claims) <= set(lesson.claims), set(c.claims) - set(lesson.claims)
    assert set(c.observations) <= set(lesson.observations), c.observations.keys()
    assert not hidden_problems(lesson, params)


def test_settle_makes_not_checked_from_needs_with_the_fix():
    specs = [
        ClaimSpec("a", "a holds", ("torch",)),
        ClaimSpec("b", "b holds"),
        ClaimSpec("w", "wraps", ("torch",), occasional=True),
        ClaimSpec("x", "needs a record", ("record",)),
    ]
    decided = {"a": Claim("a holds: 3 ULP", True), "b": Claim("b holds", True), "z": Claim("z", 1)}
    with hidden("torch"):
        out = settle(
            specs, decided, lambda part: "no record. Fix: record it" if part == "record" else None
        )
    assert out["a"].holds is None and "torch" in out["a"].reason
    assert backends.get("torch").fix in out["a"].reason and out["a"].text == "a holds"
    assert out["b"].holds and "w" not in out and "z" in out  # undeclared: kept, for the contract
    assert out["x"].holds is None and out["x"].reason == "no record. Fix: record it"
    out = settle(specs, decided, lambda part: None)
    assert out["a"].text == "a holds: 3 ULP" and out["a"].holds
