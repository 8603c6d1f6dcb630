"""Myths, measured: every verdict is computed from a lesson run, never typed.

Each judge gets a stand-in comparison of its lesson (the outcome names and data it reads) with all
its claims holding, then all failing, then not checked, then absent: the verdict must follow the
claims. A judge that returned a fixed verdict fails here.
"""

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from fpexplore import myths
from fpexplore.lessons.cpu_vs_accelerator.cpu_modes import Fallback
from fpexplore.lessons.cpu_vs_accelerator.data import AcceleratorData, ReluEdges, Settings, Sums
from fpexplore.lessons.djl_normalization.data import Classic, DjlData
from fpexplore.lessons.gpu_determinism import DeterminismData
from fpexplore.lessons.gpu_determinism.linear_flag import LinearFlag
from fpexplore.lessons.gpu_determinism.rows import FreshProcesses, Row
from fpexplore.lessons.libtorch_vs_pytorch import inputs as libtorch_inputs
from fpexplore.lessons.libtorch_vs_pytorch.data import CudaData, LibtorchData, MatmulRow
from fpexplore.lessons.rng_seeds.augment import Flips
from fpexplore.lessons.rng_seeds.data import DjlLayers, MultiGpu, Relation, RngData
from fpexplore.lessons.summation_order import SummationData
from fpexplore.lessons.summation_order.layout import Layout, Residual
from fpexplore.lessons.tf_vs_torch import data as tvt
from fpexplore.lessons.tf_vs_torch.custom_op import CustomOp
from fpexplore.lessons.train_vs_eval.data import AutogradModes, BnRuns, TrainEvalData
from fpexplore.lessons.training_drift.data import DriftData, Study, StudyRow
from fpexplore.result import Claim, Comparison, Outcome


@pytest.fixture(autouse=True)
def _no_records(monkeypatch):
    """The judges alone, on their stand-ins: no shipped machine record re-scopes a verdict
    here (tests/test_myths_notebooks.py tries the records against the live runs)."""
    monkeypatch.setattr(myths, "records", lambda: ())


def _layer_row(seed, moved):
    """A transformer layer's row under the autograd modes: ``moved`` outputs differ."""
    return {
        "seed": seed,
        "values": 4096,
        "grad_vs_no_grad": moved,
        "no_grad_vs_inference": 0,
        "max_abs_diff": 7.2e-7 if moved else 0.0,
    }


def _cutoffs(dtype):
    """pinv cut-offs as measured: numpy's fixed 1e-15, torch's 3·eps, TensorFlow's 30·eps."""
    eps = float(np.finfo(dtype).eps)
    return {"numpy pinv cutoff": 1e-15, "torch pinv cutoff": 3 * eps, "tf pinv cutoff": 30 * eps}


_X5 = np.array([10.0, 20.0, 30.0, 40.0, 50.0], np.float32)
_STUDY_ROW = StudyRow(0, "one ulp", rate=0.12, apart_at=80, max_share=0.4, final=4.0, start=1e-7)
DATA = {
    "training_drift": DriftData(
        trajectories=None,
        study=Study(rnn=(_STUDY_ROW,) * 3, logistic=(replace(_STUDY_ROW, max_share=3e-7),) * 3),
    ),
    "djl_normalization": DjlData(
        classic=Classic(
            _X5,
            numpy=(_X5 - 30) / np.std(_X5),
            torch=(_X5 - 30) / np.std(_X5, ddof=1),
            torch_fixed=(_X5 - 30) / np.std(_X5),
            djl=(_X5 - 30) / np.std(_X5),
        )
    ),
    "train_vs_eval": TrainEvalData(
        bn_runs=BnRuns(
            train_same_batch_distinct=1,
            train_runs=3,
            train_half_batch_max_gap=2.0,
            eval_before_after_max_gap=3.0,
        ),
        autograd_modes=AutogradModes(
            same=3,
            seeds=3,
            transformer=[_layer_row(s, 2600) for s in range(3)],
            gpu_rows=None,
            gpu_where="no GPU myths record",
        ),
        rrelu_train_distinct=5,
    ),
    "tf_vs_torch": {  # by op: each section has its own data
        "autograd": tvt.AutogradData(
            seed_gradients=tvt.SeedGradients(torch=192.0, tensorflow=192.0, exact=Fraction(192)),
            lengths=[1],
            rel_by_length={},
            custom_op=CustomOp(
                differ=[3, 4],
                n=10,
                ordinary_ulp={"torch": 1.5, "hand-written": 1.7},
                edge_ulp={"torch": {-100.0: 0.4}, "hand-written": {-100.0: 26.0}},
            ),
        ),
        "softmax": tvt.SoftmaxData(
            seed_example=tvt.SeedExample(
                torch=[0.09, 0.24, 0.67],
                tensorflow=[0.09, 0.24, 0.67],
                onednn_reason="oneDNN off",
                differ=0,
            ),
            max_abs_ulp={},
        ),
        "graph_mode": tvt.GraphData(
            seeds=[0, 1, 2],
            divide_n=16384,
            divide_differ={0: 5450, 1: 5505, 2: 5478},
            lse_function_same_seeds=[0, 1, 2],
            xla_same_seeds={"div": [], "lse": [0]},
            rewrite_switch="constant_folding",
        ),
        "lstm": tvt.LstmData(
            length=2,
            h_error_by_step={},
            grad_error_by_distance={"torch": [1e-7, 2e-7], "keras": [1e-7, 3e-7]},
            torch_keras_diff_by_step=np.array([1e-8, 3e-8]),
            torch_keras_grad_diff=2e-7,
        ),
        "control_flow": tvt.ControlFlowData(points=[1.0, -1.0]),
        "higher_order": tvt.HigherOrderData(
            bits_differ=3, compared=48, worst_u={"torch": 1e-7, "tf": 2e-7}
        ),
        "tolerances": tvt.TolerancesData(
            tolerances={
                "float32": {"numpy pinv[2,2]": 1e6, "torch pinv[2,2]": 1e6, "tf pinv[2,2]": 0.0}
                | _cutoffs(np.float32),
                "float64": _cutoffs(np.float64),
            }
        ),
    },
    "rng_seeds": RngData(
        bits_per_float={"torch CPU float32": 24},
        relation=Relation(True, "32/32 values share bits"),
        matches={"rand32": True},
        cuda_source="recorded",
        djl_layers=DjlLayers(
            dropout_same=60,
            dropout_total=60,
            weights=10,
            weights_equal_torch=0,
            outside_torch_bound=5,
            sigma=0.17,
            torch_bound=0.125,
        ),
        multi_gpu=MultiGpu(
            cards=["GPU", "GPU"],
            torch="2.x",
            path="seeding.json",
            runs=6,
            distinct={
                "cuda.manual_seed (current device only): cuda:1": 6,
                "two host threads racing: thread 1": 6,
                "two host threads racing: thread 2": 6,
            },
            gpus_same_stream=True,
            streams_reproduce=True,
        ),
        djl_uniform_same=(64, 64),
        flips=Flips([42], {42: [True, False]}, {42: [False, False]}),
    ),
    "libtorch_vs_pytorch": LibtorchData(
        threads=(1, 2),
        inputs=libtorch_inputs.make(0, 16, 1_000),
        sum_threads_differ=False,
        cuda=CudaData(
            source="recorded",
            banner="RECORDED",
            card="GPU",
            matmul_table=[MatmulRow(64, 0.0, 0.0, 0.0, True, {}, "all")],
        ),
    ),
    "summation_order": SummationData(
        explained_by={},
        running_sum={},
        low_precision={},
        tree_depth={},
        threads_split={},
        current={},
        curves=dict,
        layout=Layout(
            offset_same=9,
            offset_tried=9,
            gelu_strided_differ=2,
            gelu_strided_n=8,
            blas_differ={"dot": 0, "mv": 0, "mm": 0},
            blas_tried=96,
            blas="MKL on a CPU",
            strict_differ=0,
            fleet={"intel-xeon": (0, "holds")},  # alignment moved nothing: see myth 22's test
        ),
        residual=Residual(differ=4, total=16, worst_of_bound=0.03),
    ),
    "gpu_determinism": DeterminismData(
        configs={"default": {}, "cudnn.deterministic": {}},
        n_runs=3,
        rows=[
            Row(op, "c", "result", config, distinct=1, digests=["ab12"])
            for op in ("index_add_", "sum (control)", "conv2d")
            for config in ("default", "cudnn.deterministic")
        ],
        raises=[],
        fresh_processes=FreshProcesses(0, 0, []),
        source="recorded",
        banner="",
        card="GPU",
        linear_flag=LinearFlag("GPU", "", runs=3, seeds=3, seeds_same=3, path=""),
    ),
    "cpu_vs_accelerator": AcceleratorData(
        banner="CPU: live. Accelerator: recorded",
        ran_on=["cpu (live)", "NVIDIA H200 (recorded)"],
        settings=Settings(chain_steps=100),
        steps=[0, 1],
        drift={
            "cpu (live, here)": [0.0, 2e-6],
            "NVIDIA H200 (recorded), torch default": [0, 3e-6],
        },
        gap={"NVIDIA H200 (recorded), torch default": [0.0, 1e-6]},
        sums={"cpu (live, here)": Sums(500.1, 1.0002)},
        truth_sums=Sums(500.1, 1.0),
        conv_error={
            "cpu (live, here)": 2.4e-7,
            "NVIDIA (recorded), torch default": 3e-4,
            "NVIDIA, fp32 (TF32 off)": 4.5e-7,
        },
        relu_edges=ReluEdges(
            cases_per_device=560,
            devices=["cpu", "cuda:0"],
            neg_zero={"cpu": "-0.0", "cuda:0": "+0.0"},
            split=[{"edge": "-0.0"}],
        ),
        conv_vs_cpu={"NVIDIA (recorded), torch default": 64, "NVIDIA, fp32 (TF32 off)": 60},
        conv_cpu="cpu (live, here)",
        conv_samples=64,
        cpu_modes={
            "counts": {"rows": 10, "touched": 6, "flushed to zero": 6, "unchanged": 4},
            "cuda_counts": {"rows": 10, "touched": 6, "flushed to zero": 6, "unchanged": 4},
            "fallback": Fallback(half={}, strided_differ=[True, False], strided_err=[]),
        },
    ),
}


class StandIn(Comparison):
    """A comparison whose every named outcome exists (a small float32 array)."""

    def outcome(self, implementation):
        found = [o for o in self.outcomes if o.implementation == implementation]
        if found:
            return found[0]
        return Outcome(implementation, "test", value=np.array([0.25, 0.5], np.float32))


def _stand_in(myth, holds, also=()):
    claims = {}
    # the claim keys a judge reads: a rule's keys, or the string constants of its code
    consts = [k for m in (myth, *also) for k in _judge_keys(m.judge)]
    keys = [k for k in consts if isinstance(k, str) and all(p.isidentifier() for p in k.split("."))]
    for key in keys:
        claims[key] = Claim(f"claim {key}", holds)
    outcomes = (
        Outcome("relu of x — cpu", "test", value="0 of 10 differ from max(x, 0)"),
        Outcome("conv — gpu", "test", kind="recorded", value="varies; fixed by det_algos"),
    )
    data = DATA.get(myth.lesson, {})
    if myth.lesson == "tf_vs_torch":  # one data type per op
        data = data[myth.params["op"]]
    return StandIn(myth.lesson, dict(myth.params), None, outcomes, claims, data)


def _judge_keys(judge):
    if hasattr(judge, "target"):  # a judge beside its lesson
        judge = judge.target()
    if hasattr(judge, "keys"):  # a `judging.Rule`: its claims, and what its number reads
        return [*judge.keys, *_all_constants(judge.number.__code__)]
    return list(_all_constants(judge.__code__))


def _all_constants(code):
    for c in code.co_consts:
        if hasattr(c, "co_consts"):
            yield from _all_constants(c)
        elif isinstance(c, tuple):
            yield from c
        else:
            yield c


JUDGED = [m for m in myths.MYTHS if m.judge is not None]
#: myths judged on two readings that point opposite ways (myth 2: the article's randomUniform
#: example and default initializers): every claim flipped flips both, "depends" either way;
#: `test_myth2_judges_both_readings` tries each reading alone
TWO_SIDED = {2}


@pytest.mark.parametrize("myth", JUDGED, ids=lambda m: f"myth{m.number}")
def test_verdict_follows_the_claims(myth):
    yes = myths.judge(myth, _stand_in(myth, True))
    no = myths.judge(myth, _stand_in(myth, False))
    if myth.not_here:  # its device cannot run here: never a verdict from a stand-in
        for v in (yes, no):
            assert v.verdict == myths.NOT_MEASURED and v.why.startswith("not measurable here")
            assert "not the claim's device" in v.number
        return
    assert yes.verdict in myths.VERDICTS[:3] and no.verdict in myths.VERDICTS[:3]
    if myth.number in TWO_SIDED:  # both readings flip together: the reasons swap sides
        assert yes.why != no.why, (yes, no)
    else:
        assert yes.verdict != no.verdict, (yes, no)
    assert yes.number and yes.why
    unchecked = _stand_in(myth, True)
    unchecked = replace(
        unchecked, claims={k: Claim(c.text, None) for k, c in unchecked.claims.items()}
    )
    assert myths.judge(myth, unchecked).verdict == myths.NOT_MEASURED
    assert (
        myths.judge(myth, replace(_stand_in(myth, True), claims={})).verdict == myths.NOT_MEASURED
    )


def test_every_claim_to_check_is_listed_once_in_order():
    assert [m.number for m in myths.MYTHS] == list(range(1, 36))
    assert all(m.notebook.endswith(".ipynb") for m in myths.MYTHS)


def test_lessons_not_written_are_marked(monkeypatch):
    ran = []

    def fake_run(lesson, **params):
        ran.append(lesson)
        same = [m for m in JUDGED if m.lesson == lesson]
        return _stand_in(same[0], True, also=same[1:])

    monkeypatch.setattr(myths, "lesson_catalog", lambda: {"train_vs_eval": object()})
    verdicts = myths.judge_all(run=fake_run)
    # one run per distinct case, shared by both of its myths
    cases = {tuple(sorted(p.items())) for m in JUDGED[5:7] for _, p in m.case_params()}
    assert ran == ["train_vs_eval"] * len(cases) and len(cases) > 1
    by = {v.myth.number: v for v in verdicts}
    assert by[6].verdict == myths.FAILS and by[7].verdict == myths.DEPENDS
    assert by[16].verdict == myths.NOT_MEASURED and "not written yet" in by[16].why
    page = myths.verdict_table(verdicts)
    assert page.count("<tr>") == len(myths.MYTHS) + 1 and "03_train_vs_eval.ipynb#" in page


def test_cudnn_flag_judge_reads_the_recorded_linear_model():
    """Myth 4: the article's nn.Linear MLP, recorded under cuDNN's flags: the same bits with
    the flag on and off make it "does not hold"; bits that moved make it "holds"."""
    myth = next(m for m in myths.MYTHS if m.number == 4)
    yes = myths.judge(myth, _stand_in(myth, True))
    assert yes.verdict == myths.FAILS and yes.number.startswith("3 of 3 seeds")
    assert myths.judge(myth, _stand_in(myth, False)).verdict == myths.HOLDS


def test_a_verdict_that_changes_across_cases_depends_and_shows_the_split(monkeypatch):
    """Myth 6 judged over its cases: the claims hold at one seed and fail at another."""
    myth = next(m for m in JUDGED if m.number == 6)
    assert len(myth.case_params()) >= 3
    failing = dict(myth.case_params()[1][1])

    def fake_run(lesson, **params):
        return _stand_in(myth, params != failing)

    monkeypatch.setattr(myths, "lesson_catalog", lambda: {"train_vs_eval": object()})
    (v,) = myths.judge_all((myth,), run=fake_run)
    label = myth.case_params()[1][0]
    n = len(myth.case_params())
    assert v.verdict == myths.DEPENDS and "changes with the case" in v.why
    assert v.split == f"{myths.FAILS} in {n - 1} of {n} cases; {myths.HOLDS} for: {label}"
    assert f"cases: {v.split}" in myths.verdict_table([v])
    # the same verdict in every case: that verdict, with the cases listed
    (same,) = myths.judge_all((myth,), run=lambda lesson, **p: _stand_in(myth, True))
    assert same.verdict == myths.FAILS and same.split.startswith(f"{myths.FAILS} in {n} of {n}")


def test_rows_show_the_number_their_claim_is_about():
    """#3 shows DJL and torch, #7 run-to-run spread, #12 is not measurable here."""
    by = {m.number: m for m in JUDGED}
    three = myths.judge(by[3], _stand_in(by[3], True))
    assert "DJL" in three.number and "torch" in three.number and "numpy" not in three.number
    seven = myths.judge(by[7], _stand_in(by[7], True))
    assert "same batch, 3 runs: 1 distinct" in seven.number
    twelve = myths.judge(by[12], _stand_in(by[12], True))
    assert twelve.verdict == myths.NOT_MEASURED and "DirectML" in twelve.why


@pytest.mark.slow
@pytest.mark.reusable
@pytest.mark.parametrize("onednn", ["0", "1"])
def test_graph_and_softmax_verdicts_are_the_same_with_onednn_on_and_off(onednn):
    """Myths 15 and 17, live, in a fresh process under each TF_ENABLE_ONEDNN_OPTS: the same
    verdicts, every graph-mode claim holding, at two seeds."""
    import importlib.util
    import json
    import os
    import subprocess
    import sys

    if importlib.util.find_spec("tensorflow") is None:  # never imported here: a fresh process
        pytest.skip("TensorFlow is not installed")
    code = (
        "import json\n"
        "from fpexplore import myths\n"
        "from fpexplore.lessons.tf_vs_torch import LESSON\n"
        "by = {m.number: m for m in myths.MYTHS}\n"
        "out = {}\n"
        "for seed in (0, 11):\n"
        "    g = LESSON.run(op='graph_mode', seed=seed)\n"
        "    out[f'claims{seed}'] = {k: c.holds for k, c in g.claims.items()}\n"
        "    out[f'v15_{seed}'] = myths.judge(by[15], g).verdict\n"
        "    d = g.data\n"
        "    out[f'frac{seed}'] = [n / d.divide_n for n in d.divide_differ.values()]\n"
        "out['v17'] = myths.judge(by[17], LESSON.run(op='softmax')).verdict\n"
        "print(json.dumps(out))\n"
    )
    env = {**os.environ, "TF_ENABLE_ONEDNN_OPTS": onednn, "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for seed in (0, 11):
        assert all(out[f"claims{seed}"].values()), out[f"claims{seed}"]
        assert out[f"v15_{seed}"] == myths.DEPENDS
        assert all(0.2 < f < 0.5 for f in out[f"frac{seed}"])  # about a third of them
    assert out["v17"] == myths.DEPENDS


def test_relu_is_judged_on_edge_values_across_devices():
    """#14 live: this CPU's relu on −0.0, NaNs, infinities and subnormals beside the recorded
    GPUs; the row names the values where devices part."""
    pytest.importorskip("torch")
    from fpexplore.lessons import get

    by = {m.number: m for m in JUDGED}
    v = myths.judge(by[14], get("cpu_vs_accelerator").run())
    assert v.verdict == myths.DEPENDS
    assert "relu(−0.0)" in v.number and "-0.0" in v.number and "+0.0" in v.number


def test_every_myth_links_a_heading_of_its_notebook():
    """The anchor is the id JupyterLab gives the heading: its rendered text, spaces as '-'."""
    import json
    import re
    from pathlib import Path

    notebooks = Path(__file__).resolve().parents[1] / "notebooks"

    def ids(notebook: str) -> set[str]:
        cells = json.loads((notebooks / notebook).read_text(encoding="utf-8"))["cells"]
        found = set()
        for cell in cells:
            if cell["cell_type"] == "markdown":
                for line in "".join(cell["source"]).splitlines():
                    m = re.match(r"#+\s+(.*)", line)
                    if m:
                        found.add(m.group(1).strip().replace("`", "").replace(" ", "-"))
        return found

    broken = [
        (m.number, m.anchor) for m in myths.MYTHS if m.anchor and m.anchor not in ids(m.notebook)
    ]
    assert not broken


@pytest.mark.parametrize("myth", JUDGED, ids=lambda m: f"myth{m.number}")
def test_a_run_missing_its_parts_is_not_measured(myth):
    """A run whose framework, Java or GPU was missing (claims not checked, no data of its
    own) is "not measured", never a crash in its judge."""
    from fpexplore.result import NoData

    missing = _stand_in(myth, True)
    missing = replace(
        missing,
        claims={k: Claim(c.text, None, "torch is missing") for k, c in missing.claims.items()},
        data=NoData(),
    )
    assert myths.judge(myth, missing).verdict == myths.NOT_MEASURED


def _with(myth, states, **data):
    """A stand-in of ``myth`` with every claim holding except ``states`` (key: True, False or
    None for not checked), its data's fields replaced by ``data``."""
    c = _stand_in(myth, True)
    claims = dict(c.claims)
    for key, holds in states.items():
        claims[key] = Claim(f"claim {key}", holds)
    d = c.data
    if data:
        d = replace(d, **data)
    return replace(c, claims=claims, data=d)


BY = {m.number: m for m in myths.MYTHS}


def test_myth13_is_judged_on_the_tf32_off_convolution():
    """TF32 off still differs from the CPU with errors of one size: the backends' algorithms
    differ ("holds"); TF32 off matching the CPU would make it depend on TF32."""
    v = myths.judge(BY[13], _stand_in(BY[13], True))
    assert v.verdict == myths.HOLDS and "algorithms differ" in v.why
    assert "60 of 64 sampled outputs differ" in v.number and "670×" not in v.number
    assert "CPU 2.4e-07" in v.number and "TF32 off 4.5e-07" in v.number
    same = _with(BY[13], {"conv_fp32_differs_cpu": False})
    assert myths.judge(BY[13], same).verdict == myths.DEPENDS
    unmeasured = _with(BY[13], {"conv_fp32_differs_cpu": None})
    assert myths.judge(BY[13], unmeasured).verdict == myths.NOT_MEASURED


def test_myth21_runs_a_transformer_layer_and_reads_the_gpu_record():
    """The conv model keeps its bits, the transformer layer's fast path does not: "depends"
    on the model; without the GPU record the CUDA side is not checked, naming the command."""
    from fpexplore.lessons._gpu import myth_record

    v = myths.judge(BY[21], _stand_in(BY[21], True))
    assert v.verdict == myths.DEPENDS and "TransformerEncoderLayer" in v.why
    assert "3 of 3 seeds" in v.number and "CUDA: not checked" in v.number
    rows = [_layer_row(s, 2700) for s in range(3)]
    autograd = replace(
        DATA["train_vs_eval"].autograd_modes, gpu_rows=rows, gpu_where="NVIDIA H200, recorded"
    )
    gpu = _with(BY[21], {}, autograd_modes=autograd)
    v = myths.judge(BY[21], gpu)
    assert "on CUDA (recorded)" in v.why and "CUDA (NVIDIA H200, recorded)" in v.number
    unchanged = _with(BY[21], {"transformer_grad_changes_bits": False})
    assert myths.judge(BY[21], unchanged).verdict == myths.FAILS
    assert myth_record.COMMAND.startswith("PYTHONPATH=. python3 benchmarks/record_myth_gpu.py")


def test_myth22_reads_the_machine_records_and_the_cuda_record():
    """Alignment that moved nothing here still makes it hold where a machine record (MKL on
    an AMD EPYC) or the CUDA record shows it; with none anywhere it depends on strides."""
    layout = DATA["summation_order"].layout
    none = myths.judge(BY[22], _stand_in(BY[22], True))
    assert none.verdict == myths.DEPENDS and "CUDA not checked until recorded" in none.why
    amd = replace(layout, fleet={"amd-epyc-zen4": (32, "holds"), "intel-xeon": (0, "holds")})
    v = myths.judge(BY[22], _with(BY[22], {}, layout=amd))
    assert v.verdict == myths.HOLDS and "MKL on amd-epyc-zen4 (recorded)" in v.why
    assert "MKL_CBWR=AUTO,STRICT removes it" in v.why and "amd-epyc-zen4 32" in v.number
    cuda = replace(layout, cuda_differ={"sum": 11, "dot": 0, "mv": 0, "mm": 0}, cuda_tried=96)
    v = myths.judge(BY[22], _with(BY[22], {}, layout=cuda))
    assert v.verdict == myths.HOLDS and "CUDA" in v.why and "sum 11" in v.number


def test_myths_8_and_25_read_one_record_for_two_statements():
    """manual_seed seeds both GPUs: myth 8 (about torch.manual_seed) does not hold; myth 25
    (seeding in general) depends, as cuda.manual_seed and racing threads leave draws varying."""
    loud = {"current_device_seed_misses_others": True, "thread_race_varies": True}
    c8, c25 = _stand_in(BY[8], True), _with(BY[25], loud)
    assert myths.judge(BY[8], c8).verdict == myths.FAILS
    v25 = myths.judge(BY[25], c25)
    assert v25.verdict == myths.DEPENDS and "cuda.manual_seed seeds only" in v25.why
    assert "6 distinct in 6 runs" in v25.number
    quiet = {"current_device_seed_misses_others": False, "thread_race_varies": False}
    assert myths.judge(BY[25], _with(BY[25], quiet)).verdict == myths.FAILS
    assert myths.judge(BY[8], _with(BY[8], {"seed_reaches_every_gpu": False})).verdict == (
        myths.HOLDS
    )


@pytest.mark.parametrize(
    ("raw", "init", "verdict"),
    [
        (True, True, myths.DEPENDS),
        (True, False, myths.FAILS),
        (False, True, myths.HOLDS),
        (False, False, myths.DEPENDS),
    ],
)
def test_myth2_judges_both_readings(raw, init, verdict):
    """The article's randomUniform example and default initializers, each deciding its side;
    the stream's match is read from the run's counts."""
    states = {"djl_matches_torch_cpu": raw, "djl_init_not_torch": init}
    c = _with(BY[2], states, djl_uniform_same=(64 if raw else 3, 64))
    v = myths.judge(BY[2], c)
    assert v.verdict == verdict
    assert f"{64 if raw else 3} of 64 values bit-identical" in v.why


def test_myth3_renders_both_standard_deviations_from_the_run():
    v = myths.judge(BY[3], _stand_in(BY[3], True))
    assert "15.81 vs 14.14" in v.why and "11.8% apart" in v.why and "not rounding" in v.why
    x = np.array([1.0, 2.0, 3.0], np.float32)
    c = _with(
        BY[3],
        {},
        classic=Classic(
            x,
            numpy=(x - 2) / np.std(x),
            torch=(x - 2) / np.std(x, ddof=1),
            torch_fixed=(x - 2) / np.std(x),
            djl=(x - 2) / np.std(x),
        ),
    )
    assert "1 vs 0.8165" in myths.judge(BY[3], c).why


def test_myth28_reads_the_cutoffs_measured():
    """numpy's fixed 1e-15 is told apart from torch's max(m,n)·eps; a numpy that used
    max(m,n)·eps would read as such."""
    v = myths.judge(BY[28], _stand_in(BY[28], True))
    assert "numpy a fixed 1e-15" in v.why and "torch 3.58e-07 = 1·max(m,n)·eps" in v.why
    t = DATA["tf_vs_torch"]["tolerances"].tolerances
    eps = {dt: float(np.finfo(dt).eps) for dt in ("float32", "float64")}
    other = {dt: {**t[dt], "numpy pinv cutoff": 3 * eps[dt]} for dt in eps}
    c = _stand_in(BY[28], True)
    c = replace(c, data=replace(c.data, tolerances=other))
    assert "numpy 3.58e-07 = 1·max(m,n)·eps" in myths.judge(BY[28], c).why


def test_gpu_myths_record_is_validated(tmp_path):
    """A record the script would write reads back; a malformed one is skipped."""
    import json

    from fpexplore.lessons._gpu import myth_record

    good = {
        "format": myth_record.FORMAT,
        "version": myth_record.VERSION,
        "torch": "2.11.0+cu130",
        "card": "NVIDIA H200",
        "autograd_modes": [_layer_row(s, 2700) for s in range(3)],
        "offsets": {"differ": {"sum": 12, "dot": 0, "mv": 0, "mm": 0}, "tried": 96},
    }
    (tmp_path / "a.json").write_text(json.dumps(good))
    assert myth_record.recorded(tmp_path)["card"] == "NVIDIA H200"
    bad = {**good, "offsets": {"differ": {"sum": 200}, "tried": 96}}
    (tmp_path / "b.json").write_text(json.dumps(bad))  # newer by name, but invalid
    assert myth_record.recorded(tmp_path)["path"] == "a.json"


def test_the_verdict_table_sets_code_and_folds_under_a_count():
    """The index's table: `backticked` text is set as code (no literal backticks), and the tall
    table opens on a click under one line that counts the verdicts."""
    myth = next(m for m in JUDGED if "`" in m.text)
    v = myths.judge(myth, _stand_in(myth, True))
    page = myths.verdict_table([v])
    cell = page.split("<table", 1)[1]
    assert "<code>" in cell and "`" not in cell
    summary = page.split("<summary>", 1)[1].split("</summary>", 1)[0]
    assert f"1 {v.verdict}" in summary and "<table" not in summary
    assert page.index("<details") < page.index("<table")
