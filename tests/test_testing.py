"""`fpexplore.testing.check_lesson` itself: it passes a lesson that meets the contract and names
every breach of one that does not."""

from __future__ import annotations

import pytest

from fpexplore.errors import InvalidParameter
from fpexplore.lessons import Lesson
from fpexplore.lessons._base import ClaimSpec
from fpexplore.params import Flag, Interval, Options
from fpexplore.result import Claim, Comparison, Observation
from fpexplore.testing import LessonContractError, bad_values, check_lesson, valid_draws

PARAMS = (
    Interval("n", 10, "terms", low=1, high=100, integer=True),
    Options("kind", "a", "kind", choices=("a", "b", "c")),
    Flag("fast", False, "fast"),
)


POS = ClaimSpec("pos", "n is positive", numbers=" (n = {n})")


def _lesson(compute, params=PARAMS) -> Lesson:
    return Lesson("toy", "Toy", "A toy lesson.", params, compute, claims={"pos": POS})


def _good(n, kind, fast):
    claim = POS.claim(n > 0, n=n) if n > 1 else POS.not_checked("n is 1")
    return Comparison("toy", {"n": n, "kind": kind, "fast": fast}, None, (), {"pos": claim})


def test_a_lesson_that_meets_the_contract_passes():
    result = check_lesson(_lesson(_good), draws=4, seed=1)
    assert result.bad_cases > 30 and len(result.runs) >= 4
    ns = [params["n"] for params, _, _ in result.runs]
    assert 1 in ns and 100 in ns  # both edges
    assert {params["kind"] for params, _, _ in result.runs} == {"a", "b", "c"}
    assert "toy" in result.summary()


def test_a_failing_claim_is_named():
    def compute(n, kind, fast):
        c = _good(n, kind, fast)
        return Comparison("toy", c.params, None, (), {"pos": Claim("n is small", n < 50)})

    with pytest.raises(LessonContractError, match="claim 'pos' FAILS"):
        check_lesson(_lesson(compute), draws=3)


def test_a_claim_that_says_other_than_its_declaration_is_named():
    def compute(n, kind, fast):
        return Comparison(claims={"pos": Claim(f"n is {n}", n > 0)})

    with pytest.raises(LessonContractError, match="claim 'pos' says 'n is 1', not what it"):
        check_lesson(_lesson(compute), draws=1)


def test_the_run_names_the_lesson_and_its_validated_parameters():
    c = _lesson(lambda n, kind, fast: Comparison(claims={"pos": POS.claim(True, n=n)})).run(n=5)
    assert c.lesson == "toy" and dict(c.params) == {"n": 5, "kind": "a", "fast": False}


def test_an_undeclared_observation_is_named():
    def compute(n, kind, fast):
        c = _good(n, kind, fast)
        return Comparison(
            "toy", c.params, None, (), c.claims, observations={"seen": Observation("x", 1)}
        )

    with pytest.raises(LessonContractError, match="observation 'seen' is not declared"):
        check_lesson(_lesson(compute), draws=1)


def test_a_claim_not_checked_without_reason_is_named():
    def compute(n, kind, fast):
        return Comparison("toy", {}, None, (), {"pos": Claim("x", None)})

    with pytest.raises(LessonContractError, match="gives no reason"):
        check_lesson(_lesson(compute), draws=1)


def test_a_raw_exception_and_a_lax_parameter_are_named():
    class Lax(Interval):
        def validate(self, value, where=""):
            return value  # accepts anything

    def compute(n):
        if not isinstance(n, int):
            raise ZeroDivisionError("boom")
        return _good(n, "a", False)

    with pytest.raises(LessonContractError) as info:
        check_lesson(_lesson(compute, (Lax("n", 10, "", low=1, high=5, integer=True),)))
    text = str(info.value)
    assert "n=None raised ZeroDivisionError: boom" in text and "n=6 was accepted" in text


def test_bad_values_are_refused_by_the_declarations_themselves():
    for p in PARAMS:
        for v in bad_values(p):
            with pytest.raises(InvalidParameter):
                p.validate(v)


def test_draws_are_seeded_and_cover_every_choice():
    lesson = _lesson(_good)
    assert valid_draws(lesson, 5, seed=3) == valid_draws(lesson, 5, seed=3)
    assert len(valid_draws(lesson, 1)) == 3  # three choices of 'kind'


def test_check_lesson_refuses_bad_arguments():
    with pytest.raises(InvalidParameter, match="'draws'"):
        check_lesson(_lesson(_good), draws=0)
    with pytest.raises(InvalidParameter, match="'lesson'"):
        check_lesson(3)  # type: ignore[arg-type]


def test_declared_claims_undeclared_keys_and_hidden_needs():
    """A lesson that declares its claims passes: `Lesson.run` settles what its compute decided
    ("not checked" where a part it needs is hidden); an undeclared claim is named."""
    from fpexplore.lessons._base import hidden

    specs = {"pos": ClaimSpec("pos", "n is positive", ("torch",), numbers=" (n={n})")}

    def decided(n, kind, fast):
        return Comparison(claims={"pos": specs["pos"].claim(n > 0, n=n)})

    def extra(n, kind, fast):
        return Comparison(claims={**decided(n, kind, fast).claims, "extra": Claim("extra", True)})

    lesson = Lesson("toy", "Toy", "A toy lesson.", PARAMS, decided, claims=specs)
    check_lesson(lesson, draws=1)
    with hidden("torch"):
        assert lesson.run(n=3).claims["pos"].holds is None  # settled by the run
    with pytest.raises(LessonContractError) as exc:
        check_lesson(Lesson("toy", "Toy", "A toy.", PARAMS, extra, claims=specs), draws=1)
    assert "'extra' is not declared" in str(exc.value)
