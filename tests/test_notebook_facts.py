"""Facts the notebooks' answers used to assert in their cells: they are tested here, and the
notebooks assert only through a lesson's claims (`Comparison.check`)."""

from __future__ import annotations

import numpy as np
import pytest

import fpexplore
from fpexplore import rng


def test_rng_vector_and_scalar_kernels_differ():
    """02: torch's vectorized and scalar randn kernels give other normals for the same seed."""
    vec = rng.TorchCPURandom(0, "avx2").randn(4096)
    scalar = rng.TorchCPURandom(0, "default").randn(4096)
    assert int((vec != scalar).sum()) > 0


def test_rng_randn_15_and_16_take_different_paths():
    """02: randn(15) and randn(16) start with other values (scalar vs 16-wide path)."""
    assert rng.TorchCPURandom(42).randn(15)[0] != rng.TorchCPURandom(42).randn(16)[0]


def test_rng_exercise_torch_and_numpy_floats_rarely_meet():
    """02, exercise 1: 53 one-bit conditions make torch's and numpy's first floats equal."""

    def torch_float(w0):
        return (w0 & 0xFFFFFF) / 2**24

    def numpy_float(w0, w1):
        return ((w0 >> 5) * 2**26 + (w1 >> 6)) / 2**53

    w0 = 0x1F * 0x01010101
    assert torch_float(w0) == numpy_float(w0, 0x3F) and 24 + 3 + 26 == 53
    same = [
        s
        for s in range(300)
        if rng.TorchCPURandom(s).rand(1)[0] == np.random.RandomState(s).random_sample()
    ]
    assert same == []


@pytest.fixture(scope="module")
def gpu_determinism():
    return fpexplore.run("gpu_determinism")


def test_deterministic_is_not_exact_in_the_record(gpu_determinism):
    """04: use_deterministic_algorithms gives the same bits every run, not the exact sums."""
    det = gpu_determinism.data.row("index_add_", "use_deterministic_algorithms")
    assert det.distinct == 1
    assert det.ulp_vs_truth_median[0] > 0 and min(det.ulp_vs_truth_max) > 0


def test_two_recorded_cards_compare_consistently():
    """04 and 07: the counts of the card comparison add up."""
    from fpexplore import cards

    diff = cards.compare_all()
    if diff is None:
        pytest.skip("one card recorded")
    det = diff.determinism
    assert det.same_bits <= det.deterministic_on_both <= det.compared
    t = diff.tf32
    assert t.same_error + len(t.different_error) == t.compared


def test_one_cpu_thread_gives_the_same_bits_every_run():
    """04: on the CPU one thread gives one result; the control sum also with 16 threads."""
    pytest.importorskip("torch")
    from fpexplore.lessons.gpu_determinism import cpu_live

    for op in cpu_live.OPS:
        assert cpu_live.run_on_cpu(op, 1).distinct == 1, op
    assert cpu_live.run_on_cpu("sum (control)", 16).distinct == 1


def test_tf32_record_error_flat_and_the_exact_entry():
    """07: the card's TF32 error stays flat with size while fp32's grows; one entry of the
    TF32 product, exactly, is what the emulation computes."""
    from fractions import Fraction

    from fpexplore import formats
    from fpexplore.lessons.tf32 import cpu_live, experiment

    data = fpexplore.run("tf32").data
    tf_err = list(data.errors("matmul", "TF32").values())
    fp_err = list(data.errors("matmul", "fp32 (TF32 off)").values())
    assert max(tf_err) / min(tf_err) < 2 and fp_err[-1] > fp_err[0]
    inp = cpu_live.inputs(128)
    i, j = int(inp.ii[0]), int(inp.jj[0])
    row = formats.round_array(inp.a[i], "tf32").astype(np.float64)
    col = formats.round_array(inp.b[:, j], "tf32").astype(np.float64)
    exact = float(sum(Fraction(x) * Fraction(y) for x, y in zip(row, col, strict=True)))
    dots = experiment.exact_dots((row * col)[None, :]).round("float64")
    assert exact == float(dots[0])


def test_cpu_vs_accelerator_record_card_sums_closer():
    """08: in the record the card's sum of 10000 x 0.0001 is closer to exact than the CPU's."""
    from fpexplore.lessons.cpu_vs_accelerator import cpu_live

    c = fpexplore.run("cpu_vs_accelerator")
    recorded = cpu_live.recorded(c.params.record)
    t = recorded.exact.sum_tenthousand
    card = abs(recorded.side("torch default").sum_tenthousand - t)
    assert card < abs(recorded.cpu.sum_tenthousand - t)
    assert recorded.side("fp32 (TF32 off)").conv_error < 10 * recorded.cpu.conv_error


def test_a_sum_of_10000_values_is_not_split_over_threads():
    """08: 10000 values are below torch's grain size: one sum at every thread count."""
    pytest.importorskip("torch")
    from fpexplore.lessons.cpu_vs_accelerator import cpu_live

    c = fpexplore.run("cpu_vs_accelerator")
    settings = cpu_live.recorded(c.params.record).settings
    sums = {cpu_live.cpu_side(settings, n).sum_tenthousand for n in cpu_live.THREADS}
    assert len(sums) == 1


def _cells(name: str) -> list[str]:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "notebooks" / name
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"]]


def test_accelerator_exercise_uses_the_widgets_ops():
    """08, exercise 3: its answer and the cell under it speak of the ops the widget offers
    (no relu, which the widget does not have), each by the widget's own label."""
    import re

    from fpexplore.widgets.gpu_views import _ACC_OP

    cells = _cells("08_cpu_vs_accelerator.ipynb")
    i = next(k for k, s in enumerate(cells) if s.startswith("**3.** Move the thread count"))
    answer, code = cells[i], cells[i + 1]
    assert "relu" not in answer
    named = dict(re.findall(r'"([^"]+)": "(\w+)"', code))
    assert set(named) == set(_ACC_OP.labels)


def test_accelerator_intro_promises_only_what_is_checked():
    """08's introduction promises a CPU/GPU difference for the motivating sum (a claim its
    first cell checks) and calls the long sum's difference machine-dependent (the
    observation `sum_differs`, which may read False here)."""
    cells = _cells("08_cpu_vs_accelerator.ipynb")
    intro = " ".join(cells[0].split())
    assert "may or may not differ" in intro and "thread count" in intro
    assert 'check("tenthousand_differs")' in cells[2]
    c = fpexplore.run("cpu_vs_accelerator")
    assert c.holds("tenthousand_differs") and "sum_differs" in c.observations
