"""Lesson djl_normalization: every claim holds with real DJL; parameters are validated."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from fpexplore.errors import InvalidParameter
from fpexplore.lessons import _djl_pipelines as P
from fpexplore.lessons import _djl_truth as T
from fpexplore.lessons import get

LESSON = get("djl_normalization")


@pytest.mark.java
def test_every_claim_holds_with_the_defaults():
    comp = LESSON.run()
    failed = [k for k, c in comp.claims.items() if not c.holds]
    assert not failed, comp.table()
    assert {"std_djl_population", "resize_square", "crop_offset", "pipeline_fixed"} <= set(
        comp.claims
    )
    assert comp.data["divergence"]["djl (as written)"]["stage"] == "resize"
    assert all(o.ran for o in comp.outcomes)
    assert comp.data["heat"] is not None and comp.data["heat"].ndim == 2


@pytest.mark.java
@pytest.mark.parametrize(
    "params",
    [
        {
            "stage": "resize",
            "image": "edges.png",
            "size": 100,
            "crop": 99,
            "interpolation": "bicubic",
        },
        {
            "stage": "center_crop",
            "image": "gradient_q50.jpg",
            "size": 32,
            "crop": 31,
            "interpolation": "nearest",
        },
    ],
)
def test_claims_hold_across_parameters(params):
    comp = LESSON.run(**params)
    assert all(c.holds for c in comp.claims.values()), comp.table()


def test_crop_larger_than_size_is_rejected():
    with pytest.raises(InvalidParameter, match="crop"):
        LESSON.run(size=32, crop=40)


def test_crop_offsets_floor_vs_round_half_even():
    assert P.crop_offsets(64, 86, 57) == {"floor": (3, 14), "round": (4, 14)}


def test_exact_resize_weights_sum_to_one_and_match_the_identity():
    n, s = T.resize_weights(13, 5, "bilinear")
    assert (n.sum(axis=1) == s).all()
    img = np.random.default_rng(1).integers(0, 256, (6, 7, 3), dtype=np.uint8)
    same = T.resize(img, 6, 7, "bilinear").exact
    assert np.array_equal(same.astype(np.int64), img.astype(np.int64))


def test_importing_the_lesson_loads_no_framework():
    code = (
        "import sys, fpexplore.lessons.djl_normalization;"
        "print([m for m in ('torch', 'tensorflow', 'jpype') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
