"""Every lesson over its parameter space: random valid values (seeded; the edges of every
range and every choice of every option included) give claims that hold or are "not checked"
with a reason, bad values are refused naming the parameter, and the faces render
(`fpexplore.testing.check_lesson`). Sizes are bounded so that the whole module stays short."""

from __future__ import annotations

import pytest

from fpexplore.lessons import all_lessons
from fpexplore.testing import check_lesson

#: Per lesson: the ranges narrowed to keep each run short (the low edge is always the real
#: one), the values of free-text parameters, and the fewest draws.
PLAN: dict[str, dict] = {
    "summation_order": {"bounds": {"n": (1, 20_000)}},
    "rng_seeds": {"bounds": {"n": (1, 2_000), "k": (1, 64)}},
    "train_vs_eval": {"bounds": {"batch": (1, 64), "runs": (2, 40)}},
    "gpu_determinism": {
        "bounds": {"runs": (2, 4), "processes": (0, 1)},
        "choices": {"device": ["auto", "cpu"], "quick": [True]},
    },
    "djl_normalization": {},
    "tf_vs_torch": {"bounds": {"size": (0, 1_000), "length": (1, 100)}},
    "tf32": {"choices": {"device": ["auto", "cpu"]}},
    "cpu_vs_accelerator": {"choices": {"device": ["auto", "cpu"]}},
    "libtorch_vs_pytorch": {
        "choices": {"size": [16, 32], "sum_length": [1000, 10000], "cuda": ["recorded", "auto"]}
    },
    "distributed_reduction": {"bounds": {"n": (64, 4_096)}},
    # every op; the switch pairs (a fresh process each) are test_claims_any_machine's job
    "cpu_dispatch": {"choices": {"a": ["this-machine"], "b": ["this-machine"]}},
    # TensorFlow's row (its import alone takes 10-20 s) is test_training_drift's
    "training_drift": {
        "bounds": {"steps": (20, 300)},
        "choices": {"perturbation": ["one-ulp", "summation-order", "float64", "torch"]},
    },
}

LESSONS = all_lessons()


def test_every_lesson_has_a_plan():
    assert set(LESSONS) <= set(PLAN), set(LESSONS) - set(PLAN)


# a sweep of each lesson's parameter space: the slow tier's (`make check` keeps every lesson's
# quick run in test_lessons_contract, and each lesson's own tests)
@pytest.mark.slow
@pytest.mark.reusable
@pytest.mark.parametrize("name", list(LESSONS))
def test_lesson_meets_the_contract_over_its_parameters(name):
    plan = PLAN.get(name, {})
    result = check_lesson(
        LESSONS[name],
        draws=plan.get("draws", 3),
        seed=24,
        bounds=plan.get("bounds"),
        choices=plan.get("choices"),
    )
    print(result.summary())
    assert result.runs and result.bad_cases > 0
