"""GPU lessons: recorded runs (CI has no GPU), the live CPU side, live CUDA where present."""

import matplotlib
import pytest

import fpexplore
from fpexplore import records
from fpexplore.errors import BackendUnavailable, InvalidParameter
from fpexplore.lessons import get
from fpexplore.lessons._gpu.source import cuda_here

matplotlib.use("Agg")

CUDA = cuda_here()
# claims the notebooks narrate (and assert) on the committed record
NARRATED = {
    "gpu_determinism": [
        "atomics_vary",
        "det_algos_fix_all",
        "cudnn_det_fixes_conv",
        "cudnn_det_not_atomics",
        "conv_varies_without_benchmark",
        "conv_stable_with_benchmark",
        "some_ops_raise",
        "forward_stable",
        "benchmark_adds_nothing_across_processes",
    ],
    "tf32": [
        "tf32_costs_accuracy",
        "matmul_default_is_fp32",
        "conv_default_uses_tf32",
        "bf16_worst",
        "fp16_like_tf32",
    ],
    "cpu_vs_accelerator": [
        "relu_identical",
        "tenthousand_differs",
        "chain_drifts",
        "conv_tf32_default",
        "conv_tf32_error",
        "conv_fp32_differs_cpu",
    ],
}


@pytest.fixture(scope="module", params=list(NARRATED))
def recorded(request):
    return request.param, fpexplore.run(request.param, device="recorded")


def test_recorded_run_is_labelled_and_its_claims_hold(recorded):
    name, c = recorded
    assert "RECORDED" in c.data.banner and "NVIDIA" in c.data.banner
    assert any(o.kind == "recorded" for o in c.outcomes)
    for key in NARRATED[name]:
        assert c.holds(key), (key, c.claims[key].text)


def test_the_same_figure_code_draws_recorded_runs(recorded):
    name, c = recorded
    fig = get(name).figure(c)
    assert fig.axes and c.data.banner[:40] in fig._suptitle.get_text()
    matplotlib.pyplot.close(fig)


def test_determinism_numbers_come_from_the_rows():
    c = fpexplore.run("gpu_determinism", device="recorded")
    default = c.data.row("index_add_", "default")
    assert default.distinct > 1 and default.max_abs_diff > 0
    det = c.data.row("index_add_", "use_deterministic_algorithms")
    assert det.distinct == 1 and det.max_abs_diff == 0
    raised = [p for p in c.data.raises if p.raised]
    assert all("deterministic" in p.message for p in raised)
    with pytest.raises(InvalidParameter, match=r"'config'.*'fast'"):
        c.data.row("index_add_", "fast")
    from fpexplore.lessons.gpu_determinism import rows_table

    table = " ".join(rows_table(c, only_varying=True).split())  # as read, across its wraps
    assert "index_add_" in table and "fixed by det_algos" in table
    assert "fixed by cudnn.det" in table and "sum (control)" not in table
    ia = c.outcome("index_add_ (1000000 float32 values into 100 bins)")
    assert ia.value == "varies; fixed by det_algos" and "default 10" in ia.note
    for p in c.data.raises:
        got = c.outcome(f"{p.op} under use_deterministic_algorithms(True)").value
        assert got == ("raises" if p.raised else "runs")


def test_record_is_picked_by_card_or_file_name():
    c = fpexplore.run("tf32", device="recorded", record="h200")
    assert "H200" in c.data.banner and c.params["record"] == "h200"
    newest = fpexplore.run("tf32", device="recorded")
    assert (
        newest.data.banner
        == fpexplore.run("tf32", device="recorded", record=records.available()[0].name).data.banner
    )
    with pytest.raises(InvalidParameter, match=r"'record'.*'newest'.*nvidia-h200.*'no-such-card'"):
        fpexplore.run("cpu_vs_accelerator", device="recorded", record="no-such-card")


def test_tf32_reads_defaults_and_measures_every_mode():
    c = fpexplore.run("tf32", device="recorded")
    assert {"cuda.matmul.allow_tf32", "cudnn.allow_tf32"} <= set(c.data.defaults)
    assert len(c.outcomes) == 2 * len(c.data.modes)
    fp32 = c.outcome("1024x1024 matmul, fp32 (TF32 off): relative error").value
    tf32 = c.outcome("1024x1024 matmul, TF32: relative error").value
    assert fp32 < 1e-5 < tf32
    assert c.data.defaults_here["cudnn.allow_tf32"] in (True, False)  # read on this machine


def test_cpu_side_runs_live_beside_the_recorded_accelerator():
    c = fpexplore.run("cpu_vs_accelerator", device="recorded")
    live = [o for o in c.outcomes if o.kind == "framework"]
    assert live and all(o.device == "cpu" for o in live)
    assert c.data.ran_on[0] == "cpu (live)" and "recorded" in c.data.ran_on[1]
    chain = c.outcome(next(o.implementation for o in live if "chained" in o.implementation))
    assert chain.error is not None and chain.error.max_rel > 0
    assert c.data.settings.conv[1] >= 64  # where cuDNN's default conv uses TF32
    errs = c.data.conv_error
    assert min(errs.values()) > 0 and max(errs.values()) > 1e-4  # the TF32 conv, measured


def test_cpu_only_says_so():
    c = fpexplore.run("cpu_vs_accelerator", device="cpu")
    assert "CPU only" in c.data.banner and c.data.ran_on == ["cpu (live)"]
    assert c.holds("relu_identical") and not c.holds("tenthousand_differs")


@pytest.mark.parametrize("name", list(NARRATED))
def test_unusable_device_is_a_clear_error(name):
    with pytest.raises(BackendUnavailable, match="not_a_device"):
        fpexplore.run(name, device="not_a_device")


def test_device_must_be_a_string():
    with pytest.raises(InvalidParameter, match="'device'"):
        fpexplore.run("tf32", device=3)


def test_determinism_live_on_cpu_quick_is_deterministic():
    c = fpexplore.run("gpu_determinism", device="cpu", quick=True, runs=2, processes=0)
    assert c.data.source == "framework"
    assert c.holds("det_algos_fix_all") and not c.holds("atomics_vary")


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(NARRATED))
def test_auto_runs_live_on_cuda_or_falls_back_to_the_record(name):
    kw = {"runs": 3, "processes": 1} if name == "gpu_determinism" else {}
    if name == "tf32":
        kw = {"max_size": 256} if CUDA else {}
    c = fpexplore.run(name, **kw)
    if CUDA:
        assert "LIVE" in c.data.banner
        assert all(o.kind == "framework" for o in c.outcomes)
    else:
        assert "RECORDED" in c.data.banner
        assert any(o.kind == "recorded" for o in c.outcomes)
    get(name).figure(c)
    matplotlib.pyplot.close("all")


def test_directml_example_as_written():
    """The articles' DirectML example today: its device string raises, and its 'drift' is the
    gap between chains of different matrices, far above one chain's rounding drift."""
    torch = pytest.importorskip("torch")
    from fpexplore.lessons.cpu_vs_accelerator import articles

    claims, data = articles.article_claims(torch, 4)
    assert all(c.holds for c in claims.values()), claims
    assert min(data["article_drift"]["gap"]) > 0.1
