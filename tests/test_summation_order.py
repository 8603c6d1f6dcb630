"""The summation-order lesson: live frameworks explained bit for bit, validation, figure, trees."""

from __future__ import annotations

import io
import math
from fractions import Fraction

import numpy as np
import pytest

from fpexplore import InvalidParameter, backends
from fpexplore.lessons.summation_order import FRAMEWORKS, LESSON, REFERENCE, growth, recorded
from fpexplore.lessons.summation_order.inputs import DISTRIBUTIONS, DTYPES, make_input

needs_torch_tf = pytest.mark.skipif(
    not (backends.get("torch").available() and backends.get("tensorflow").available()),
    reason="torch and tensorflow are needed (make test installs them)",
)


def _emulated_claims(comparison):
    return {k: c for k, c in comparison.claims.items() if k.endswith("_emulated")}


@needs_torch_tf
def test_classic_example():
    c = LESSON.run(distribution="allequal", n=10_000, dtype="float32", threads=1, seed=0)
    # the truth is the exact sum of 10,000 copies of float32(0.0001), not 1
    assert c.truth.exact == 10_000 * Fraction(float(np.float32(1e-4)))
    assert c.holds("truth_not_nominal") and c.truth.exact != 1
    # an observation (this input, this machine's paths): it counts the distinct bits shown
    distinct = {float(o.value) for o in c.outcomes if o.kind in ("framework", "recorded") and o.ran}
    assert c.observations["frameworks_differ"].value == len(distinct) > 1
    for key in ("numpy_emulated", "torch_emulated", "tensorflow_emulated"):
        assert c.holds(key), c.claims[key].text
    assert all(c.holds(k) for k in _emulated_claims(c))
    # the reference row is the correctly rounded exact sum: within half an ULP
    assert abs(c.outcome(REFERENCE).error.ulp_scalar) <= 0.5
    assert "numpy" in c.data.explained_by["np.sum"]
    assert "np.sum" in c.outcome("emulate numpy").note  # both ways: the emulator's row too
    assert c.outcome("emulate numpy").settings["order"].startswith("np.sum")


CASES = [
    ("uniform", 1_000, "float32", 1, 3),
    ("normal", 40_000, "float32", 2, 7),  # torch splits across 2 threads from 32768 on
    ("loguniform", 300, "float64", 1, 11),
    ("alternating", 129, "float32", 1, 5),  # just past numpy's 128-element block
    ("uniform", 70_000, "float64", 2, 9),
    ("uniform", 5_000, "float16", 1, 2),
    ("normal", 2_000, "bfloat16", 1, 4),
    ("allequal", 8_193, "float32", 2, 0),  # just past Eigen's 8192-element leaf
]


@needs_torch_tf
@pytest.mark.parametrize(("distribution", "n", "dtype", "threads", "seed"), CASES)
def test_claims_on_random_cases(distribution, n, dtype, threads, seed):
    c = LESSON.run(distribution=distribution, n=n, dtype=dtype, threads=threads, seed=seed)
    for name in ("np.sum", "torch.sum", "tf.reduce_sum"):
        o = c.outcome(name)
        assert o.ran and o.error is not None, o.unavailable
        assert np.asarray(o.value).dtype == make_input(distribution, 1, dtype, 0).dtype
    claims = _emulated_claims(c)
    assert {"numpy_emulated", "torch_emulated"} <= set(claims)
    if dtype in ("float32", "float64"):
        assert "tensorflow_emulated" in claims
    for key, claim in claims.items():  # DJL takes no half formats: not checked, saying why
        assert claim.holds or (claim.holds is None and claim.reason), f"{key}: {claim.text}"
    assert abs(c.outcome(REFERENCE).error.ulp_scalar) <= 0.5


@pytest.mark.java
def test_djl_and_java_loop_are_explained():
    if not backends.get("djl").available():
        pytest.fail(f"DJL cannot run here: {backends.get('djl').missing()}; run: make djl")
    c = LESSON.run(distribution="uniform", n=50_000, dtype="float32", threads=2, seed=1)
    assert c.outcome("DJL NDArray.sum").ran and c.outcome("Java float loop").ran
    assert c.holds("djl_emulated") and c.holds("java_emulated")
    assert c.outcome("DJL NDArray.sum").settings["libtorch threads"] == 2


def test_half_formats_mark_java_and_djl_missing_with_a_reason():
    if not backends.get("torch").available():
        pytest.skip("torch is needed")
    c = LESSON.run(distribution="uniform", n=100, dtype="float16")
    for name in ("DJL NDArray.sum", "Java float loop"):
        o = c.outcome(name)
        assert not o.ran and "float16" in o.unavailable and "float32" in o.unavailable


@needs_torch_tf
def test_torch_threads_restored_and_tensorflow_threads_reported():
    import torch

    before = torch.get_num_threads()
    runs = [LESSON.run(distribution="uniform", n=1_000, threads=t) for t in (1, 2)]
    assert torch.get_num_threads() == before
    assert [r.outcome("torch.sum").settings["torch.set_num_threads"] for r in runs] == [1, 2]
    tf_threads = {r.outcome("tf.reduce_sum").settings["intra-op threads"] for r in runs}
    assert len(tf_threads) == 1  # fixed for the process: the table says which it ran with
    (actual,) = tf_threads
    for r, asked in zip(runs, (1, 2), strict=True):
        note = r.outcome("tf.reduce_sum").note
        assert ("asked for" in note) == (asked != actual), note


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("n", 0),
        ("n", 10_000_001),
        ("n", 2.5),
        ("dtype", "int8"),
        ("distribution", "cauchy"),
        ("threads", 3),
        ("seed", -1),
    ],
)
def test_bad_parameters_name_the_argument(param, value):
    with pytest.raises(InvalidParameter) as info:
        LESSON.run(**{param: value})
    assert info.value.name == param and repr(value) in str(info.value)


def test_inputs_are_reproducible_in_every_format():
    for distribution in DISTRIBUTIONS:
        for dtype in DTYPES:
            a = make_input(distribution, 257, dtype, 5)
            b = make_input(distribution, 257, dtype, 5)
            assert a.dtype.name == dtype and a.shape == (257,)
            assert a.tobytes() == b.tobytes()
            assert np.isfinite(a.astype(np.float64)).all()
    alt = make_input("alternating", 10, "float32", 0)
    assert (alt[::2] > 0).all() and (alt[1::2] < 0).all()


def test_recorded_case_is_found_by_its_input_bits():
    from fpexplore.lessons.summation_order.experiment import regenerate

    recipe = {
        "generator": "np.random.default_rng",
        "seed": 0,
        "distribution": "random",
        "n": 1000,
        "dtype": "float32",
    }
    cases = [{"name": "other", "input": {**recipe, "seed": 1}}, {"name": "me", "input": recipe}]
    x = make_input("uniform", 1000, "float32", 0)
    assert np.array_equal(x, regenerate(recipe))
    assert recorded.find_case(cases, x)["name"] == "me"
    y = x.copy()
    y[17] = np.nextafter(y[17], np.float32(2))
    assert recorded.find_case(cases, y) is None
    assert recorded.find_case(cases, x.astype(np.float64)) is None


@needs_torch_tf
def test_recorded_cuda_outcome_has_card_and_date_or_says_how_to_record():
    c = LESSON.run()
    o = c.outcome("torch.sum (CUDA, recorded)")
    assert o.kind == "recorded"
    if o.ran:
        assert o.settings["card"] and o.settings["date"] and o.settings["card"] in o.device
        assert o.error is not None
    else:
        assert "record-gpu" in o.unavailable


@needs_torch_tf
def test_error_growth_figure_and_bounds():
    c = LESSON.run(distribution="uniform", n=1_000, dtype="float32", threads=1)
    g = c.data.growth
    assert g.n == list(growth.NS) and set(g.errors) == set(growth.ORDERS)
    u = growth.unit_roundoff("float32")
    ns = np.asarray(g.n, dtype=float)
    seq = np.asarray(g.curve("sequential"), dtype=float)
    pw = np.asarray(g.curve("pairwise"), dtype=float)
    ok = np.isfinite(seq)
    assert ok.sum() > len(ns) // 2
    assert (seq[ok] <= (ns[ok] - 1) * u).all()  # the textbook bounds hold
    ok = np.isfinite(pw)
    assert (pw[ok] <= np.ceil(np.log2(ns[ok])) * u).all()
    assert seq[-1] > 10 * pw[-1]  # a long left-to-right sum loses to the pairwise tree
    # the current run's errors use the same measure
    cur = c.data.current
    assert cur.n == 1_000 and math.isfinite(cur.errors["np.sum"])
    fig = LESSON.figure(c)
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [line.get_label() for line in ax.get_lines()]
    assert any("sequential bound" in label for label in labels)
    assert any("pairwise bound" in label for label in labels)
    assert sum("(emulated)" in label for label in labels) == len(g.errors)
    from fpexplore.widgets.order_tree import to_png

    assert to_png(fig)[:8] == b"\x89PNG\r\n\x1a\n"


def test_tree_layout_and_drawing_for_small_n():
    from fpexplore import orders
    from fpexplore.widgets import order_tree

    points, edges = order_tree.layout(orders.tree(5, "java"))
    sums = sorted(y for _x, y, kind in points if kind == "sum")
    assert sums == [1, 2, 3, 4] and len(edges) == 8  # a comb: one level per addition
    leaves = sorted((x, y) for x, y, kind in points if kind.startswith("leaf:"))
    assert leaves == [(float(i), 0.0) for i in range(5)]
    points, _ = order_tree.layout(orders.tree(8, "pairwise"))
    assert max(y for _x, y, _k in points) == 3  # a balanced tree of 8 leaves
    fig = order_tree.draw(16)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == len(order_tree.FRAMEWORK_ORDERS)
    assert "additions" in visible[0].get_title()
    assert len(order_tree.draw(64, "torch", threads=2).axes) == 1
    for bad in ({"n": 65}, {"n": 0}, {"n": 8, "order": "kahan"}, {"n": 8, "threads": 3}):
        with pytest.raises(InvalidParameter):
            order_tree.draw(**{"order": None, **bad})


def test_framework_table_is_consistent():
    names = [f[0] for f in FRAMEWORKS]
    assert len(set(names)) == len(names)
    assert LESSON.param("n").log and LESSON.param("n").high == 10_000_000


def _pixels(fig, **kw):
    from IPython.core.pylabtools import print_figure
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(print_figure(fig, "png", **kw))))


@needs_torch_tf
def test_explorer_redraw_pastes_the_curves_and_draws_only_the_markers():
    runs = [
        LESSON.run(distribution="uniform", n=n, dtype="float32", threads=1, seed=seed)
        for n, seed in ((1_000, 1), (60_000, 2), (60_000, 3))
    ]
    fig = LESSON.figure(runs[0])
    _pixels(fig, bbox_inches="tight")  # as display(fig) in JupyterLab
    first = fig.canvas.full_draws
    for run in runs[1:]:
        assert LESSON.figure(run) is fig  # reused: only the markers move
        quick = _pixels(fig, bbox_inches="tight")
        assert fig.canvas.full_draws == first  # the curves, axes and legend were pasted
        fig.stale = True
        assert np.array_equal(quick, _pixels(fig))  # the very pixels of a full draw
        assert fig.canvas.full_draws == first + 1
        first += 1
    legend = fig.canvas._overlay()[-1]
    shown = " ".join(t.get_text() for t in legend.get_texts())
    assert "np.sum" in shown and "torch.sum" in shown
    fig.axes[0].set_title("changed by the reader")  # any other change is drawn in full
    changed = _pixels(fig)
    assert fig.canvas.full_draws == first + 1 and not np.array_equal(changed, quick)
    retina = _pixels(fig, dpi=2 * fig.dpi, bbox_inches=None)  # drawn by matplotlib itself
    assert retina.shape[:2] == (2 * quick.shape[0], 2 * quick.shape[1])


# -- the error bounds the notebook states, as claims of the lesson ------------------------------


@needs_torch_tf
@pytest.mark.parametrize(
    ("distribution", "n", "dtype"),
    [("uniform", 100_000, "float32"), ("alternating", 3_000, "float64"), ("normal", 1, "float32")],
)
def test_textbook_bounds_hold(distribution, n, dtype):
    c = LESSON.run(distribution=distribution, n=n, dtype=dtype)
    c.check("sequential_within_bound", "pairwise_within_bound", "rounded_is_best")


def test_a_bound_fails_when_the_error_exceeds_it():
    from fpexplore.lessons.summation_order import bounds
    from fpexplore.result import Outcome

    off = Outcome("sum", "numpy", value=np.float32(1.5))
    assert bounds._within(off, Fraction(1), 0.25, "b")[0] is False
    holds, said = bounds._within(off, Fraction(1), 0.5, "γ(1)·Σ|x|")
    # both numbers say what they are: the error, then the bound by its name
    assert holds is True and said == ": |sum − exact| = 0.5 ≤ γ(1)·Σ|x| = 0.5"
    assert bounds._within(off, Fraction(1), math.inf, "b")[0] is None  # no bound: not checked
    inf = Outcome("sum", "numpy", value=np.float16(np.inf))
    assert "overflow" in bounds._within(inf, Fraction(1), 1.0, "b")[1]
    # every bound claim's numbers name its bound
    assert set(bounds.BOUNDS) == set(bounds.PARTS) - {"numpy_bfloat16_stalls"}
    assert bounds.gamma(3, "float32") > 3 * 2.0**-24 and bounds.gamma(2**24, "float32") == math.inf


@needs_torch_tf
def test_bfloat16_stalls_in_numpy_not_in_torch():
    c = LESSON.run(distribution="uniform", n=10_000, dtype="bfloat16")
    c.check("numpy_bfloat16_stalls", "torch_wide_accumulator")
    stall, exact = (c.data.low_precision[k] for k in ("stall limit 1024·max|x|", "exact sum"))
    assert abs(float(c.outcome("np.sum").value)) <= stall < exact  # stalled far below the sum
    assert "numpy_bfloat16_stalls" not in LESSON.run(n=100, dtype="float16").claims
    assert "torch_wide_accumulator" not in LESSON.run(n=100, dtype="float32").claims


def test_running_sum_bound_is_small_when_signs_cancel():
    from fpexplore.lessons.summation_order import bounds

    n = 100_000
    alt = make_input("alternating", n, "float32", 0)
    uni = make_input("uniform", n, "float32", 0)
    rel = [
        bounds.running_sum_bound(v, "float32") / float(np.abs(v.astype(np.float64)).sum())
        for v in (alt, uni)
    ]
    assert rel[0] < rel[1] / 100 and rel[1] <= (n - 1) * 2.0**-24


@pytest.mark.java
def test_java_loop_within_its_running_sum_bound():
    if not backends.get("djl").available():
        pytest.fail(f"DJL cannot run here: {backends.get('djl').missing()}; run: make djl")
    c = LESSON.run(distribution="alternating", n=100_000, dtype="float32")
    c.check("java_running_sum_bound")
    numbers = c.data.running_sum
    assert numbers["loop error / Σ|x|"] <= numbers["u·Σ|running sums| / Σ|x|"] < numbers["(n−1)·u"]


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 127, 128, 129, 255, 257, 1000, 1031, 4096, 5003])
def test_numpy_tree_depth_matches_the_emulator_and_its_bound(n):
    from fpexplore import orders
    from fpexplore.lessons.summation_order import structure

    assert structure.numpy_depth(n) == orders.tree(n, "numpy").depth()
    assert orders.tree(n, "sequential").depth() == n - 1
    assert structure.numpy_depth(n) <= structure.numpy_depth_bound(n)


def test_numpy_depth_bound_over_many_n_and_the_claim():
    from fpexplore.lessons.summation_order import structure

    assert all(structure.numpy_depth(n) <= structure.numpy_depth_bound(n) for n in range(1, 70_000))
    assert structure.numpy_depth_bound(10**7) == structure.BLOCK_DEPTH + 17
    claim = structure.depth_claim(10_000)["tree_depth"]
    assert claim.holds and "9999" in claim.text and "31" in claim.text


@needs_torch_tf
def test_torch_threads_split_claim_and_observation():
    two = LESSON.run(distribution="uniform", n=100_000, dtype="float32", threads=2, seed=0)
    one = LESSON.run(distribution="uniform", n=100_000, dtype="float32", threads=1, seed=0)
    assert "torch_threads_split" not in one.claims
    two.check("torch_threads_split", "tree_depth")
    split = two.data.threads_split
    assert split["chunks"] == 2
    changed = float(two.outcome("torch.sum").value) != float(one.outcome("torch.sum").value)
    assert two.observations["torch_threads_change_bits"].value == changed == split["bits changed"]
    small = LESSON.run(distribution="uniform", n=1000, dtype="float32", threads=2, seed=0)
    assert small.data.threads_split["chunks"] == 1
    assert not small.observations["torch_threads_change_bits"].value


@needs_torch_tf
def test_kept_input_gives_the_same_comparison_as_a_fresh_one():
    import fpexplore.lessons.summation_order as so

    def bits(c):
        return [
            (o.implementation, o.ran, np.asarray(o.value).tobytes() if o.ran else o.unavailable)
            for o in c.outcomes
        ], {k: (cl.holds, cl.text) for k, cl in c.claims.items()}

    params = dict(distribution="normal", n=40_000, dtype="float32", seed=3)
    so._INPUTS.clear()
    fresh = {t: bits(LESSON.run(**params, threads=t)) for t in (1, 2)}
    misses = so._INPUTS.misses
    again = {t: bits(LESSON.run(**params, threads=t)) for t in (2, 1)}
    assert so._INPUTS.misses == misses  # the threads change and the way back reuse the input
    assert again == fresh
    so._INPUTS.clear()
    assert bits(LESSON.run(**params, threads=2)) == fresh[2]


def test_layout_and_residual_claims_hold():
    """Claims 22 and 24: offsets move no bits in ATen's own loops, strides do, and under
    MKL's strict mode no BLAS bits either; a residual block's two orders differ within the
    rounding bound of the exact result. What alignment does to the BLAS is observed."""
    torch = pytest.importorskip("torch")
    from fpexplore.lessons.summation_order import layout

    claims, observed, found = layout.layout_claims(torch, 11)
    more, _ = layout.residual_claims(torch, 11)
    assert all(c.holds for c in {**claims, **more}.values()), {**claims, **more}
    assert found.offset_same == found.offset_tried
    assert set(found.blas_differ) == {"dot", "mv", "mm"}
    assert observed["blas_offset_bits"].value == sum(found.blas_differ.values())
    if torch.backends.mkl.is_available():
        assert found.strict_differ == 0 and "cbwr_strict_offset_same_bits" in claims


def test_alignment_is_observed_not_claimed(monkeypatch):
    """An offset that moves the BLAS's bits (MKL on an AMD EPYC) is an observation, never a
    failed claim; a fresh process that cannot run leaves the strict claim not checked."""
    torch = pytest.importorskip("torch")
    from fpexplore.errors import WorkerError
    from fpexplore.lessons import summation_order as so
    from fpexplore.lessons.summation_order import layout

    def moved(torch, seed, ops):
        differ, tried = real(torch, seed, ops)
        return ({k: v + 3 for k, v in differ.items()} if "dot" in ops else differ), tried

    def broken(seed):
        raise WorkerError("exited with -4")

    real = layout.offset_differ
    monkeypatch.setattr(layout, "offset_differ", moved)
    monkeypatch.setattr(layout, "strict_offsets", broken)
    so._LAYOUT.clear()
    try:
        c = so.LESSON.run(**so.LESSON.quick)
    finally:
        so._LAYOUT.clear()
    assert c.observations["blas_offset_bits"].value >= 6
    assert c.claims["aten_offset_same_bits"].holds is True
    strict = c.claims["cbwr_strict_offset_same_bits"]
    assert strict.holds is None and "exited with -4" in strict.reason
    assert torch is not None
