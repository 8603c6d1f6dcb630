"""The lesson contract as a check anyone can run on a lesson (as scikit-learn's
``check_estimator``)::

    from fpexplore.testing import check_lesson
    check_lesson(MY_LESSON, draws=3, seed=0)

`check_lesson` verifies that every declared parameter refuses generated bad values with an
`InvalidParameter` naming it, that random valid values (the edges of every range and every
choice of every option included) give a `Comparison` whose claims all hold or are "not
checked" with a reason, and that the result renders as HTML, text and JSON. Where the lesson
declares its claims (``Lesson.claims``, `ClaimSpec`), every claim and observation it returns
must be declared, and with every part its claims need hidden (`hidden`) each such claim must
come back "not checked" naming the fix. It raises `LessonContractError` listing every breach,
and returns a `LessonCheck` otherwise.

The claims matrix (`matrix`: every lesson's claims at quick and edge values, in a fresh
process per dispatch switch) and the fresh process that runs lessons for it (`runner`) live
here too: above the lessons, which they run.
"""

from __future__ import annotations

from .contract import (
    LessonCheck,
    LessonContractError,
    bad_values,
    check_lesson,
    hidden_problems,
    valid_draws,
)
from .matrix import plan as claims_plan

__all__ = [
    "LessonCheck",
    "LessonContractError",
    "bad_values",
    "check_lesson",
    "claims_plan",
    "hidden_problems",
    "valid_draws",
]
