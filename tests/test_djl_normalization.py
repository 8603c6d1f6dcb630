"""Lesson djl_normalization: every claim holds with real DJL; parameters are validated."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pytest

from fpexplore.errors import InvalidParameter
from fpexplore.lessons import get
from fpexplore.lessons.djl_normalization import pipelines as P
from fpexplore.lessons.djl_normalization import reference as T

LESSON = get("djl_normalization")
LESSON_MODULE = importlib.import_module("fpexplore.lessons.djl_normalization")


@pytest.mark.java
def test_every_claim_holds_with_the_defaults():
    comp = LESSON.run()
    failed = [k for k, c in comp.claims.items() if not c.holds]
    assert not failed, comp.table()
    assert {"std_djl_population", "resize_square", "crop_offset", "pipeline_fixed"} <= set(
        comp.claims
    )
    assert comp.data.first_divergence("djl (as written)").stage == "resize"
    assert all(o.ran for o in comp.outcomes)
    assert comp.data.heat is not None and comp.data.heat.ndim == 2


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
    assert all(o.ran for o in comp.outcomes)
    if params["interpolation"] == "bicubic":  # edges.png overshoots: the uint8 cast wraps
        assert "resize_uint8_wraps" in comp.claims
        assert comp.data.wrapped.max_error_levels > 250


@pytest.mark.java
def test_pipeline_shows_a_crop_of_another_shape_unmeasured():
    """size 32, crop 31: DJL's CenterCrop leaves an axis with offset 0 uncropped, so its
    pipeline ends in another shape than the truth's; the row says so instead of raising."""
    comp = LESSON.run(stage="pipeline", size=32, crop=31)
    naive = next(o for o in comp.outcomes if o.implementation == "djl (as written)")
    assert naive.error is None and "not measured" in naive.note
    assert "djl (as written)" not in comp.data.pipeline_max_abs_error


def test_crop_larger_than_size_is_rejected():
    with pytest.raises(InvalidParameter, match="crop"):
        LESSON.run(size=32, crop=40)


def test_crop_offsets_floor_vs_round_half_even():
    assert P.crop_offsets(64, 86, 57) == {"floor": (3, 14), "round": (4, 14)}


@pytest.mark.parametrize("kind", T.KINDS)
def test_exact_resize_weights_sum_to_one_and_match_the_identity(kind):
    n, s = T.resize_weights(13, 5, kind)
    assert (n.sum(axis=1) == s).all()
    img = np.random.default_rng(1).integers(0, 256, (6, 7, 3), dtype=np.uint8)
    same = T.resize(img, 6, 7, kind).exact
    assert np.array_equal(same.astype(np.int64), img.astype(np.int64))


def test_exact_bicubic_resize_matches_torch_interpolate():
    import torch
    import torch.nn.functional as F

    img = np.random.default_rng(2).integers(0, 256, (23, 17, 3), dtype=np.uint8)
    exact = T.resize(img, 9, 30, "bicubic").split()[0]
    chw = torch.from_numpy(img.astype(np.float32)).permute(2, 0, 1)[None]
    got = F.interpolate(chw, size=(9, 30), mode="bicubic", antialias=True, align_corners=False)
    assert np.abs(got[0].permute(1, 2, 0).numpy() - exact).max() < 1e-3


def test_divergence_note_names_the_first_stage_and_what_is_left():
    tv = {s: np.zeros((2, 2), np.float32) for s in P.STAGES}
    other = dict(tv, center_crop=np.ones((2, 2), np.float32), to_tensor=np.ones((2, 2)))
    d = LESSON_MODULE.first_divergence(other, tv)
    note = LESSON_MODULE.divergence_note(d, P.compare(other["normalize"], tv["normalize"]))
    assert d.stage == "center_crop"
    assert note.startswith("= at decode, resize; FIRST DIVERGES at center_crop: max |diff| 1")
    assert LESSON_MODULE.divergence_note(None, {}) == "bit-identical to torchvision at every stage"


def test_importing_the_lesson_loads_no_framework():
    code = (
        "import sys, fpexplore.lessons.djl_normalization;"
        "print([m for m in ('torch', 'tensorflow', 'jpype') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.java
def test_widget_controls_rerun_the_lesson_and_show_the_heat_map():
    from fpexplore.widgets import explore

    box = explore("djl_normalization", stage="center_crop", size=32, crop=31)
    controls = {c.description: c for c in box.children[1].children}
    assert {"stage", "image", "size", "crop", "interpolation"} <= set(controls)
    controls["interpolation"].value = "bicubic"
    controls["image"].value = "edges.png"
    controls["stage"].value = "resize"
    comp = box.state["comparison"]
    assert comp.params == {
        "stage": "resize",
        "image": "edges.png",
        "size": 32,
        "crop": 31,
        "interpolation": "bicubic",
    }
    assert comp.data.heat.shape == comp.data.resize_shape
    fig = box.state["figure"]
    assert fig.axes[0].images and "DJL ResizeShort" in fig.axes[0].get_title()
    svg = LESSON_MODULE.figure_svg(comp)
    assert svg.startswith("<svg") and "<image" in svg and "DJL ResizeShort" in svg
    assert "row (pixel)" in svg and "column (pixel)" in svg
    assert "torch_fixed" in LESSON_MODULE.figure_svg(LESSON.run(stage="std"))


#: (size, crop) corners of the valid range and strong/weak downscales of the sample images
#: (75x101 and 121x160 pixels): smallest size and crop, crop = size, a 2× downscale, an upscale
GRID_SIZES = [(16, 8), (16, 16), (24, 11), (40, 8), (80, 57), (128, 128)]


@pytest.mark.java
@pytest.mark.slow
@pytest.mark.reusable
@pytest.mark.parametrize("image", ["texture_q75.jpg", "edges.png"])
@pytest.mark.parametrize("interpolation", ["bilinear", "bicubic", "nearest"])
def test_no_claim_fails_anywhere_on_the_grid(image, interpolation):
    """Every claim holds or is not checked at every valid setting: a claim is a fact of the
    libraries, never of the chosen sizes (what depends on them is an observation)."""
    failed = {}
    for size, crop in GRID_SIZES:
        if size == 128 and (image, interpolation) != ("texture_q75.jpg", "bilinear"):
            continue  # the exact 128-pixel truth costs seconds: one setting covers the corner
        comp = LESSON.run(
            stage="std", image=image, size=size, crop=crop, interpolation=interpolation
        )
        failed.update({(size, crop, k): c.text for k, c in comp.claims.items() if c.holds is False})
        assert comp.claims["resize_is_torch_interpolate"].holds, comp.table()
        assert "resize_bit_equal" in comp.observations
    assert not failed, failed


def test_split_in_integers_equals_the_truths_own_split():
    from fractions import Fraction

    from fpexplore.truth import once
    from fpexplore.truth.value import Truth

    tiny = Fraction(2**-1074) + Fraction(1, 10**340)
    values = [Fraction(1, 3), Fraction(-7, 10**30), Fraction(5), 3, Fraction(10**400, 3)]
    values += [Fraction(-(10**400), 7), Fraction(1, 10**400), tiny, Fraction(255, 4)]
    truth = Truth("mixed", exact=np.array(values, dtype=object))
    for got, want in zip(once(truth).split_known(), truth.split_known(), strict=True):
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_truths_by_distinct_value_equal_the_elementwise_ones():
    from fpexplore.truth import by_value, reference

    img = np.random.default_rng(3).integers(0, 256, (3, 9, 11), dtype=np.uint8)
    x = img.astype(np.float32) / np.float32(255)
    pairs = [
        (
            by_value(img, lambda u: T.to_tensor(u.transpose(1, 2, 0))),
            T.to_tensor(img.transpose(1, 2, 0)),
        ),
        (
            by_value(
                x, lambda u: reference.normalize(u, P.MEAN, P.STD), "normalize(float32[3x9x11])"
            ),
            reference.normalize(x, P.MEAN, P.STD),
        ),
    ]
    for got, want in pairs:
        assert got.label == want.label and got.shape == want.shape
        assert np.array_equal(got.exact, want.exact)
        for fmt in ("binary32", "float64"):
            a, b = np.asarray(got.round(fmt)), np.asarray(want.round(fmt))
            assert a.dtype == b.dtype and np.array_equal(a, b)
        for a, b in zip(got.split_known(), want.split_known(), strict=True):
            assert np.array_equal(a, b)


@pytest.mark.java
def test_cached_results_equal_a_fresh_run():
    """A widget's path (stage switches and jumps served from the per-input caches) gives the
    same comparison as a fresh run at the same setting."""
    from fpexplore.lessons.djl_normalization.stages import decode, resize

    def fresh(**params):
        LESSON_MODULE._MEMO.clear()
        resize._RESIZE_TRUTHS.clear()
        decode._DECODE_TABLES.clear()
        return LESSON.run(**params)

    path = [
        {"stage": "resize", "size": 40, "crop": 33},
        {"stage": "pipeline", "size": 40, "crop": 33},
        {"stage": "center_crop", "size": 40, "crop": 21},
        {"stage": "normalize", "size": 40, "crop": 21, "interpolation": "bicubic"},
        {"stage": "to_tensor", "size": 40, "crop": 21, "interpolation": "bicubic"},
        {"stage": "decode", "size": 40, "crop": 33, "image": "edges.png"},
        {"stage": "pipeline", "size": 40, "crop": 33},
    ]
    cached = [LESSON.run(**p) for p in path]
    for params, got in zip(path, cached, strict=True):
        want = fresh(**params)
        assert got.table() == want.table()
        assert [o.implementation for o in got.outcomes] == [o.implementation for o in want.outcomes]
        for a, b in zip(got.outcomes, want.outcomes, strict=True):
            assert np.array_equal(np.asarray(a.value), np.asarray(b.value))
        assert {k: (c.text, c.holds) for k, c in got.claims.items()} == {
            k: (c.text, c.holds) for k, c in want.claims.items()
        }
        assert np.array_equal(got.truth.exact, want.truth.exact)
        assert [v is None for v in vars(got.data).values()] == [
            v is None for v in vars(want.data).values()
        ]


@pytest.mark.java
def test_article_names_are_gone_from_the_jars():
    """NDArrays.sum/mean/std and ai.djl.random.RandomGenerator, asked of the 0.36 jars."""
    from fpexplore.lessons.djl_normalization.stages import std

    found = std._article_names()
    assert not any(found[n] for n in std.ARTICLE_NAMES)
    assert all(found[n] for n in std.PRESENT_NAMES)


def test_pipelines_within_the_resize_rounding_are_not_drawn_as_failures():
    """torchvision, numpy and the fixed DJL pipeline differ from the exact pipeline by the
    resize's rounding to whole levels only: within `pipeline_bound`, coloured as correct; the
    pipelines that diverge stay red."""
    from fpexplore.result.html import ulp_class

    comp = LESSON.run(stage="pipeline")
    got = {o.implementation: (o.within_bound, ulp_class(o)) for o in comp.outcomes if o.ran}
    for name in ("torchvision", "numpy"):
        assert got[name] == (True, "bounded"), got
    if "djl (fixed)" in got:
        assert got["djl (fixed)"] == (True, "bounded") and got["djl (as written)"][0] is False
    assert "off scale" not in comp._repr_html_().split("tensorflow")[0]
