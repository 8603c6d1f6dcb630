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


PACKAGE = ROOT / "fpexplore"


def _claims_made_by_hand(source: str) -> list[int]:
    """The lines of ``Claim(...)`` and ``Claim.<anything>(...)`` calls in ``source``: a claim
    made anywhere but from its declaration (`ClaimSpec`)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        named = isinstance(f, ast.Name) and f.id == "Claim"
        method = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
        if named or (method and f.value.id == "Claim"):
            found.append(node.lineno)
    return found


def test_claims_are_made_only_from_their_declarations():
    """Lessons and tools state a claim through its `ClaimSpec` (`claim`, `not_checked`), never
    by building a `Claim` themselves: the text a run shows is the text declared."""
    files = [p for p in PACKAGE.rglob("*.py") if (PACKAGE / "result") not in p.parents]
    assert any("lessons" in p.parts for p in files) and (PACKAGE / "tolerance.py") in files
    made = [
        f"{p.relative_to(ROOT)}:{n}" for p in files for n in _claims_made_by_hand(p.read_text())
    ]
    assert not made, made


def test_the_scan_finds_a_claim_made_by_hand():
    source = "from x import Claim\nc = Claim('t', True)\nd = Claim.not_checked('t', 'r')\n"
    assert _claims_made_by_hand(source) == [2, 3]
    assert _claims_made_by_hand("c = SPEC.claim(True)\nd = Claim\n") == []


@pytest.mark.parametrize("name", DECLARING)
def test_each_claim_a_run_returns_says_what_is_declared(name):
    lesson = LESSONS[name]
    c = lesson.run(**{**lesson.defaults(), **lesson.quick})
    assert c.lesson == name and dict(c.params) == {**lesson.defaults(), **lesson.quick}
    for key, claim in c.claims.items():
        assert key in lesson.claims, f"{name}: claim {key!r} is not declared"
        assert lesson.claims[key].says(claim.text), (key, claim.text, lesson.claims[key].text)


def test_a_text_that_differs_from_its_declaration_is_caught():
    spec = ClaimSpec("k", "the sums agree", numbers=": {n} of {m} cases")
    assert spec.says(spec.claim(True, n=3, m=4).text) and spec.says(spec.not_checked("x").text)
    assert not spec.says("the sums agree in 3 of 4 cases")
    assert not spec.says("the sums differ: 3 of 4 cases")
    with pytest.raises(KeyError):
        spec.claim(True, n=3)


def test_every_declared_tf_vs_torch_claim_is_reachable():
    """tf_vs_torch keys carry their section: no section's claim hides another's."""
    from fpexplore.lessons.tf_vs_torch import LESSON as TF
    from fpexplore.lessons.tf_vs_torch import SECTIONS

    pairs = [(op, key) for op, spec in SECTIONS.items() for key in spec.claims]
    assert len(TF.claims) == len(pairs) and set(TF.claims) == {f"{o}.{k}" for o, k in pairs}
    for op in SECTIONS:
        stated = {s.key for s in TF.stated({"op": op})}
        assert stated == {f"{op}.{k}" for k in SECTIONS[op].claims}, op
