"""Myths, measured: claims commonly made about framework discrepancies, judged by lesson runs.

Each `Myth` names the lesson run that measures it and a judge: a function of that run's
`Comparison` that returns the verdict ("holds", "does not hold" or "depends"), what it depends on
or why, and the measured number that shows it. Judges read the lesson's claims (facts the lesson
asserts live) and take their numbers from the run; no verdict is stored anywhere. A myth whose
lesson is not in the catalog yet, or whose claims this run could not check, gets the verdict
"not measured" with the reason.

`judge_all()` runs each needed lesson once and returns one `Verdict` per myth, in the order of
``shared/reference/claims-to-check.md``; `verdict_table()` renders them for the index notebook.
A lesson that measures a myth adds its claim keys to the myth's judge here.
"""

from __future__ import annotations

import html
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import WorkerError

if TYPE_CHECKING:
    from .result import Comparison

__all__ = [
    "MYTHS",
    "Myth",
    "NotMeasured",
    "Verdict",
    "judge",
    "judge_all",
    "judge_all_isolated",
    "lesson_catalog",
    "verdict_table",
]

HOLDS, FAILS, DEPENDS, NOT_MEASURED = "holds", "does not hold", "depends", "not measured"
VERDICTS = (HOLDS, FAILS, DEPENDS, NOT_MEASURED)


class NotMeasured(Exception):
    """A judge could not decide: a claim it reads is absent or was not checked in this run."""


@dataclass(frozen=True)
class Verdict:
    """What a lesson run made of one myth."""

    myth: Myth
    verdict: str  # one of VERDICTS
    why: str  # what it depends on, or why it holds / does not hold / was not measured
    number: str  # the measured number that shows it ('' when not measured)
    source: str = ""  # 'live' or the recorded run it came from

    @property
    def link(self) -> str:
        return self.myth.notebook + (f"#{self.myth.anchor}" if self.myth.anchor else "")


@dataclass(frozen=True)
class Myth:
    """One claim to check, the lesson run that measures it, and its judge."""

    number: int
    text: str
    lesson: str
    notebook: str
    judge: Callable[[Comparison], tuple[str, str, str]] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    anchor: str = ""  # the heading id of the notebook section that measures it


# -- reading a run ------------------------------------------------------------------------------


def _claim(c: Comparison, key: str) -> bool:
    """The state of claim ``key``; `NotMeasured` when it is absent or was not checked."""
    claim = c.claims.get(key)
    if claim is None:
        raise NotMeasured(f"the {c.lesson} run has no claim {key!r}")
    if claim.holds is None:
        reason = getattr(claim, "reason", "") or "a part it needs is missing"
        raise NotMeasured(f"{key} was not checked: {reason}")
    return bool(claim.holds)


def _value(c: Comparison, name: str) -> Any:
    o = c.outcome(name)
    if not o.ran:
        raise NotMeasured(f"{name} did not run: {o.unavailable}")
    return o.value


def _first(values: Any) -> float:
    import numpy as np

    return float(np.asarray(values).ravel()[0])


# -- the judges ---------------------------------------------------------------------------------
#
# Every judge has one shape: read the claims it rests on and the number that shows the verdict,
# then the first rule whose claims hold gives the verdict and why (`_decide`).

Verdicts = tuple[str, str, str]


def _holds(c: Comparison, *keys: str) -> bool:
    """Whether every claim ``keys`` held (`NotMeasured` at the first one absent or unchecked;
    a failed one stops the reading, as ``and`` would)."""
    return all(_claim(c, key) for key in keys)


def _decide(number: str, *rules: tuple[bool, str, str], otherwise: tuple[str, str]) -> Verdicts:
    """``(verdict, why, number)`` of the first rule ``(when, verdict, why)`` whose ``when`` is
    true, else ``otherwise``'s ``(verdict, why)``."""
    for when, verdict, why in rules:
        if when:
            return verdict, why, number
    return (*otherwise, number)


def _djl_sum(c: Comparison) -> Verdicts:
    djl, torch_, loop = (
        _first(_value(c, n)) for n in ("DJL NDArray.sum", "torch.sum", "Java float loop")
    )
    same = _holds(c, "djl_emulated", "torch_emulated") and djl == torch_  # both emulate torch
    return _decide(
        f"DJL {djl:.9g}, torch {torch_:.9g}, Java loop {loop:.9g}",
        (same, FAILS, "DJL's sum is libtorch's: same reduction order, same bits"),
        otherwise=(HOLDS, "DJL and torch reduce in different orders here"),
    )


def _std(c: Comparison) -> Verdicts:
    classic = c.data.get("classic", {})
    divisors = _holds(c, "std_ddof", "std_djl_population")
    return _decide(
        ", ".join(f"{name} {_first(values):.7g}" for name, values in list(classic.items())[:3]),
        (
            divisors and _holds(c, "std_fix"),
            DEPENDS,
            "on the divisor: torch.std divides by N−1, DJL's idiom and np.std by N; with the "
            "same divisor the results agree to 1 ULP",
        ),
        (divisors, HOLDS, "the divisors differ and no correction makes them agree"),
        otherwise=(FAILS, "both divide by the same N"),
    )


def _varying(c: Comparison) -> list[str]:
    return [
        o.implementation
        for o in c.outcomes
        if o.ran and isinstance(o.value, str) and o.value.startswith("varies")
    ]


def _same_bits_with_flag(c: Comparison, flag: str) -> tuple[int, int]:
    """Of the non-cuDNN ops that gave one result in every run both with ``flag`` and without
    it (the default flags), how many gave the same bits: (same, compared)."""
    rows = c.data.get("rows") or []
    if not rows:
        raise NotMeasured(f"the {c.lesson} run has no per-op rows")
    cells = {(r["op"], r["case"], r["output"], r["config"]): r for r in rows}
    same = compared = 0
    for (op, case, output, config), row in cells.items():
        other = cells.get((op, case, output, flag))
        if config != "default" or op == "conv2d" or other is None:
            continue  # conv2d runs on cuDNN: the flag is meant to change it
        if row.get("raised") or other.get("raised") or row["distinct"] != 1:
            continue  # varies run to run anyway: bits with and without the flag say nothing
        if other["distinct"] != 1:
            continue
        compared += 1
        same += row["digests"][0] == other["digests"][0]
    if not compared:
        raise NotMeasured(f"no non-cuDNN op of the {c.lesson} run was deterministic both ways")
    return same, compared


def _linear(c: Comparison) -> Verdicts:
    # The lesson runs no nn.Linear: the judge reads what the flag does to the ops that are not
    # cuDNN's (sums, scatters), which is where nn.Linear belongs (a cuBLAS addmm on a GPU, a
    # BLAS call on a CPU; neither consults torch.backends.cudnn).
    same, compared = _same_bits_with_flag(c, "cudnn.deterministic")
    return _decide(
        f"{same} of {compared} deterministic non-cuDNN ops: same bits with "
        "cudnn.deterministic on and off",
        (
            _holds(c, "cudnn_det_not_atomics") and same == compared,
            FAILS,
            "cudnn.deterministic only restricts cuDNN's algorithms; nn.Linear is a cuBLAS matmul, "
            "not cuDNN, and the lesson's non-cuDNN ops keep their bits with the flag on (the "
            "lesson runs no nn.Linear itself)",
        ),
        otherwise=(DEPENDS, "on the op: the flag changed more than cuDNN's algorithms here"),
    )


def _benchmark(c: Comparison) -> Verdicts:
    varies = _claim(c, "atomics_vary") or _claim(c, "conv_varies_without_benchmark")
    return _decide(
        f"{len(_varying(c))} recorded ops vary run to run with the default flags",
        (
            varies and _holds(c, "benchmark_adds_nothing_across_processes"),
            FAILS,
            "ops vary with benchmark off (atomic adds, some cuDNN gradients); benchmark only "
            "picks the algorithm per process",
        ),
        (varies, DEPENDS, "on the op: some vary without it, and benchmark adds variation"),
        otherwise=(HOLDS, "nothing varied with benchmark off"),
    )


def _device_key(data: Mapping[str, Any], word: str) -> str:
    for key in data:
        if word in key:
            return key
    raise NotMeasured(f"no {word} side in this run")


@dataclass(frozen=True)
class _Rule:
    """The judges' common shape: ``verdict`` (and ``why``) when every claim ``keys`` holds,
    else ``otherwise``; ``number(c)`` is the measured number that shows it."""

    keys: tuple[str, ...]
    verdict: str
    why: str
    otherwise: tuple[str, str]
    number: Callable[[Comparison], str]

    def __call__(self, c: Comparison) -> Verdicts:
        number = self.number(c)  # reads the outcomes first: NotMeasured if one did not run
        return _decide(
            number, (_holds(c, *self.keys), self.verdict, self.why), otherwise=self.otherwise
        )


def _differ_count(c: Comparison, a: str, b: str, what: str) -> str:
    import numpy as np

    x, y = np.asarray(_value(c, a)), np.asarray(_value(c, b))
    return f"{int((x != y).sum())} of {x.size} outputs differ between {what}"


def _max_gap(c: Comparison, a: str, b: str) -> float:
    import numpy as np

    x, y = (np.asarray(_value(c, n), dtype=np.float64) for n in (a, b))
    return float(np.max(np.abs(x - y)))


def _chain_number(c: Comparison) -> str:
    drift = c.data["drift"]
    cpu, gpu = _device_key(drift, "cpu (live"), _device_key(drift, "NVIDIA")
    return (
        f"after {c.data['settings']['chain_steps']} matmuls: CPU drift {drift[cpu][-1]:.2g}, "
        f"CUDA {drift[gpu][-1]:.2g}"
    )


def _conv_number(c: Comparison) -> str:
    err = c.data["conv_error"]
    default, off = (err[_device_key(err, k)] for k in ("torch default", "TF32 off"))
    return f"conv error: CUDA default {default:.2g}, TF32 off {off:.2g} ({_ratio(default, off)})"


def _ratio(a: float, b: float) -> str:
    """``a`` as a multiple of ``b``, or what happened when a ratio says nothing ("inf ×")."""
    if b == 0:
        return "both exact" if a == 0 else "the second is exact"
    if not (math.isfinite(a) and math.isfinite(b)):
        return "one is not finite"
    return f"{a / b:.0f}×"


def _relu_number(c: Comparison) -> str:
    found = [str(o.value) for o in c.outcomes if o.implementation.startswith("relu") and o.ran]
    return found[0] + " on every device" if found else ""


_seed = _Rule(
    ("djl_matches_torch_cpu", "djl_is_mt19937"),
    FAILS,
    "for the pinned DJL/torch pair: both seed the same MT19937 and map it the same way",
    (HOLDS, "DJL's libtorch gives another stream for the same seed"),
    lambda c: (
        f"first value DJL {_first(_value(c, 'DJL randomUniform')):.7g}, "
        f"torch {_first(_value(c, 'torch CPU')):.7g}"
    ),
)
_dropout = _Rule(
    ("dropout_removed_equals_eval", "dropout_scaling"),
    FAILS,
    "eval() already is the model without dropout, bit for bit",
    (HOLDS, "eval() differs from the model without dropout"),
    lambda c: _differ_count(
        c,
        "torch MLP with Dropout, eval()",
        "torch MLP without Dropout, copied weights",
        "eval() and no dropout",
    ),
)
_batchnorm = _Rule(
    ("bn_train_uses_batch_stats", "bn_eval_uses_running_stats"),
    DEPENDS,
    "on the batch: train mode normalizes each sample with its batch's statistics and updates "
    "the running ones on every call; for the same batch it is not random",
    (FAILS, "train and eval mode gave the same output"),
    lambda c: (
        "train vs eval output: up to "
        f"{_max_gap(c, 'torch BatchNorm1d train()', 'torch BatchNorm1d eval()'):.3g} apart"
    ),
)
_cuda_seed = _Rule(
    ("cuda_differs_from_cpu", "cuda_philox_reproduced"),
    DEPENDS,
    "on the device: one seed drives MT19937 on the CPU and Philox on CUDA, so devices differ; "
    "each device's stream is reproducible",
    (FAILS, "CPU and CUDA gave the same stream"),
    lambda c: (
        f"seed {c.params.get('seed')}: CPU {_first(_value(c, 'torch CPU')):.7g}, "
        f"CUDA {_first(_value(c, 'torch CUDA')):.7g}"
    ),
)
_chain = _Rule(
    ("chain_drifts",),
    FAILS,
    "every device drifts from the exact chain, CUDA too",
    (HOLDS, "CUDA stayed on the exact chain"),
    _chain_number,
)
_conv = _Rule(
    ("conv_tf32_default", "conv_tf32_error"),
    DEPENDS,
    "on TF32: cuDNN convolutions use it by default; with TF32 off the accelerator is as "
    "accurate as the CPU",
    (HOLDS, "the convolutions differ with TF32 off too"),
    _conv_number,
)
_relu = _Rule(
    ("relu_identical",),
    FAILS,
    "relu is max(x, 0) bit for bit on every device",
    (HOLDS, "relu differs from max(x, 0) somewhere"),
    _relu_number,
)


def _same_bits_verdict(c: Comparison, op: str, same: bool, what: str) -> Verdicts:
    errs = [c.outcome(f"{op} · {side} · 1 thread").error for side in ("C++", "Python")]
    worst = ", ".join(
        f"{side} {e.max_abs_ulp:.3g} ULP"
        for side, e in zip(("C++", "Python"), errs, strict=True)
        if e is not None
    )
    return _decide(
        f"{what}: {'identical' if same else 'different'} bits at 1 and 2 threads"
        + (f"; max error {worst}" if worst else ""),
        (
            same,
            FAILS,
            "C++ and Python run the same libtorch kernels: the same bits at the same thread count",
        ),
        otherwise=(HOLDS, "C++ and Python gave different bits at the same thread count"),
    )


def _libtorch_mm(c: Comparison) -> Verdicts:
    return _same_bits_verdict(c, "mm", _claim(c, "mm_same_bits"), "mm")


def _libtorch_grad(c: Comparison) -> Verdicts:
    same = _claim(c, "grad_same_bits")
    return _same_bits_verdict(c, "grad", same, "gradient of (x @ x.T).sum()")


def _cuda_kernel(c: Comparison) -> Verdicts:
    fma = _claim(c, "naive_kernel_is_fma_chain")
    atomic = _holds(c, "atomic_varies", "torch_sum_repeatable")
    cu = c.data.get("cuda") or {}
    table = cu.get("matmul_table") or []
    same = [r["n"] for r in table if r["cublas == naive_fma"]]
    other = [r["n"] for r in table if not r["cublas == naive_fma"]]
    each = c.outcome("CUDA sum · atomicAdd each")
    return _decide(
        f"{cu.get('card', 'GPU')}: naive mm = cuBLAS bits at n = {same or 'none'}, not at "
        f"n = {other or 'none'}; atomicAdd sum: {each.note or _first(each.value)}",
        (
            fma and atomic,
            DEPENDS,
            "on the kernel: a naive matmul is a k-order FMA chain, which cuBLAS also runs for "
            "some shapes (same bits) and not others; an atomicAdd sum differs from torch.sum "
            "and from itself run to run",
        ),
        otherwise=(HOLDS, "the custom kernels differ from torch's at every size"),
    )


def _gradient(c: Comparison) -> Verdicts:
    g = c.data.get("seed_gradients")
    if not g:
        raise NotMeasured("the tf_vs_torch run has no seed gradients")
    return _decide(
        f"torch {g['torch']:g}, TensorFlow {g['tensorflow']:g}, exact 6·x⁵ = {g['exact']}",
        (_holds(c, "seed_192"), FAILS, "both give the exact gradient 192, not 24"),
        (g["torch"] == g["tensorflow"] == 24, HOLDS, "both give 24"),
        otherwise=(DEPENDS, "on the framework: they do not both give the exact gradient"),
    )


def _softmax(c: Comparison) -> Verdicts:
    import numpy as np

    seed = c.data.get("seed_example")
    if not seed:
        raise NotMeasured("the tf_vs_torch run has no softmax([1, 2, 3]) example")
    a = np.asarray(seed["torch"], dtype=np.float32)
    b = np.asarray(seed["tensorflow"], dtype=np.float32)
    differ = int((a.view(np.uint32) != b.view(np.uint32)).sum())
    why = seed.get("onednn_reason", "")
    return _decide(
        f"{differ} of {a.size} float32 values differ in their bits on this CPU ({why})",
        (not _holds(c, "seed_example"), HOLDS, "at least one framework is more than 2 ULP off"),
        otherwise=(
            DEPENDS,
            "on TensorFlow's CPU path: its oneDNN kernel (on by default only on CPUs with "
            "AVX512_VNNI, AVX512_BF16, AVX_VNNI or AMX; TF_ENABLE_ONEDNN_OPTS switches it) "
            "rounds differently in the last bits, Eigen's matches torch; both stay within "
            "2 ULP of the exact softmax",
        ),
    )


def _graph(c: Comparison) -> Verdicts:
    import numpy as np

    values = c.data.get("values")
    if not values or "tf XLA" not in values:
        raise NotMeasured("the tf_vs_torch run has no graph-mode values")
    eager = np.asarray(values["tf eager"])

    def rows(name: str) -> int:
        other = np.asarray(values[name])
        return int((other != eager).reshape(len(eager), -1).any(axis=1).sum())

    traced, xla = rows("tf.function"), rows("tf XLA")
    bounded = _holds(c, "xla")
    same = bounded and _holds(c, "function_is_eager")
    return _decide(
        f"tf.function: {traced}, XLA: {xla} of {len(eager)} rows differ from eager in their bits",
        (not bounded, HOLDS, "a graph mode is more than a few ULP from the exact value"),
        (same and xla == 0, FAILS, "tf.function and XLA give eager's bits"),
        (
            same,
            DEPENDS,
            "on XLA: tf.function alone gives eager's bits; jit_compile=True fuses and can change "
            "the last bits, every mode within a few ULP of the exact value",
        ),
        otherwise=(HOLDS, "tf.function alone already changes bits"),
    )


def _lstm(c: Comparison) -> Verdicts:
    data = c.data.get("torch_keras_diff_by_step")
    if data is None:
        raise NotMeasured("the tf_vs_torch run has no LSTM steps")
    mapped = _holds(c, "gate_order")
    return _decide(
        f"largest torch–Keras difference in h over {c.data.get('length', len(data))} steps: "
        f"{float(max(data)):.3g}",
        (not mapped, HOLDS, "even with the weights mapped right, the outputs part"),
        (
            mapped and _holds(c, "gradients_rounding"),
            DEPENDS,
            "on the weight mapping: mapped right (gate order, both biases, recurrent "
            "activation), outputs and gradients differ only by rounding, within the lesson's "
            "bound against the exact cell; mapped wrong, they differ by far more",
        ),
        otherwise=(HOLDS, "the gradients part beyond rounding"),
    )


_SUM = {"distribution": "allequal", "n": 10_000, "dtype": "float32", "threads": 1}

#: the claims of shared/reference/claims-to-check.md, in its order
MYTHS: tuple[Myth, ...] = (
    Myth(
        1,
        "Summing 10,000 × float32(0.0001) in DJL and in PyTorch gives slightly different results.",
        "summation_order",
        "01_summation_order.ipynb",
        _djl_sum,
        _SUM,
        "1.-The-classic-example",
    ),
    Myth(
        2,
        "The same seed (42) in DJL and PyTorch does not give the same random weights.",
        "rng_seeds",
        "02_rng_seeds.ipynb",
        _seed,
        {"seed": 42, "tensorflow": False, "weights": False},
        "6.-Java-and-DJL",
    ),
    Myth(
        3,
        "DJL and PyTorch compute mean and standard deviation differently, so normalized data "
        "differs.",
        "djl_normalization",
        "05_djl_vs_pytorch.ipynb",
        _std,
        {"stage": "std"},
        "1.-The-classic-example:-normalizing-[10,-20,-30,-40,-50]",
    ),
    Myth(
        4,
        "Setting `cudnn.deterministic = True` changes the output of a small `nn.Linear` model "
        "on one input.",
        "gpu_determinism",
        "04_cudnn_determinism.ipynb",
        _linear,
    ),
    Myth(
        5,
        "`cudnn.benchmark` is what causes non-deterministic behaviour.",
        "gpu_determinism",
        "04_cudnn_determinism.ipynb",
        _benchmark,
    ),
    Myth(
        6,
        "If training baked dropout into the weights, inference must remove the dropout layers "
        "to reproduce.",
        "train_vs_eval",
        "03_train_vs_eval.ipynb",
        _dropout,
        {},
        "1.-Dropout:-random-in-train-mode,-fixed-in-eval-mode",
    ),
    Myth(
        7,
        "Forgetting `eval()` with BatchNorm makes results inconsistent across runs.",
        "train_vs_eval",
        "03_train_vs_eval.ipynb",
        _batchnorm,
        {},
        "2.-BatchNorm-in-torch:-batch-statistics-vs-running-statistics",
    ),
    Myth(
        8,
        "`torch.manual_seed` does not make multi-GPU or multi-stream runs reproducible.",
        "rng_seeds",
        "02_rng_seeds.ipynb",
        _cuda_seed,
        {"seed": 42, "tensorflow": False, "weights": False},
        "4.-Devices-and-CPU-kernels",
    ),
    Myth(
        9,
        "LibTorch and PyTorch give different `mm` results because of the Python interpreter, "
        "garbage collection and memory management.",
        "libtorch_vs_pytorch",
        "09_libtorch_vs_pytorch.ipynb",
        _libtorch_mm,
        {"cuda": "recorded"},
        "2.-mm,-the-autograd-gradient,-an-MLP:-C++-vs-Python",
    ),
    Myth(
        10,
        "LibTorch's autograd gives different gradients from PyTorch's.",
        "libtorch_vs_pytorch",
        "09_libtorch_vs_pytorch.ipynb",
        _libtorch_grad,
        {"cuda": "recorded"},
        "2.-mm,-the-autograd-gradient,-an-MLP:-C++-vs-Python",
    ),
    Myth(
        11,
        "A custom CUDA kernel gives different results from PyTorch's own kernel for the same op.",
        "libtorch_vs_pytorch",
        "09_libtorch_vs_pytorch.ipynb",
        _cuda_kernel,
        {"cuda": "recorded"},
        "6.-Custom-CUDA-kernels-vs-cuBLAS-and-torch.sum",
    ),
    Myth(
        12,
        "Chained matmuls drift on DirectML but not on CUDA.",
        "cpu_vs_accelerator",
        "08_cpu_vs_accelerator.ipynb",
        _chain,
    ),
    Myth(
        13,
        "Convolutions differ between CPU and accelerator because of backend algorithms.",
        "cpu_vs_accelerator",
        "08_cpu_vs_accelerator.ipynb",
        _conv,
    ),
    Myth(
        14,
        "ReLU can differ between backends.",
        "cpu_vs_accelerator",
        "08_cpu_vs_accelerator.ipynb",
        _relu,
    ),
    Myth(
        15,
        "TensorFlow's graph mode (`tf.function`) gives different numbers from eager mode.",
        "tf_vs_torch",
        "06_tensorflow_vs_pytorch.ipynb",
        _graph,
        {"op": "graph_mode"},
    ),
    Myth(
        16,
        "For `z = (x**2)**3` at x = 2 both frameworks give the gradient 24.",
        "tf_vs_torch",
        "06_tensorflow_vs_pytorch.ipynb",
        _gradient,
        {"op": "autograd"},
    ),
    Myth(
        17,
        "`softmax([1, 2, 3])` differs between TensorFlow and PyTorch.",
        "tf_vs_torch",
        "06_tensorflow_vs_pytorch.ipynb",
        _softmax,
        {"op": "softmax"},
    ),
    Myth(
        18,
        "LSTM gradients differ between the frameworks over long sequences.",
        "tf_vs_torch",
        "06_tensorflow_vs_pytorch.ipynb",
        _lstm,
        {"op": "lstm"},
    ),
)


def _source(c: Comparison) -> str:
    kinds = {o.kind for o in c.outcomes if o.ran}
    if "recorded" in kinds and not kinds - {"recorded", "reference", "emulator"}:
        return "recorded GPU run"
    return "live" + (" + recorded GPU run" if "recorded" in kinds else "")


def judge(myth: Myth, comparison: Comparison) -> Verdict:
    """The verdict of one lesson run on ``myth`` (its judge decides; never stored)."""
    if myth.judge is None:
        return Verdict(myth, NOT_MEASURED, f"the {myth.lesson} lesson does not measure it yet", "")
    try:
        verdict, why, number = myth.judge(comparison)
    except NotMeasured as exc:
        return Verdict(myth, NOT_MEASURED, str(exc), "", _source(comparison))
    return Verdict(myth, verdict, why, number, _source(comparison))


def _catalog() -> Mapping[str, Any]:
    """The lesson catalog by name; if a lesson module fails to import, the names of the lesson
    modules present (a run of the broken one then reports why)."""
    import fpexplore

    try:
        for name in ("catalog", "lessons"):
            found = getattr(fpexplore, name, None)
            if callable(found):
                return found()
        from .lessons import all_lessons

        return all_lessons()
    except Exception:  # a lesson being written may not import yet
        import pkgutil

        from . import lessons

        return {m.name: None for m in pkgutil.iter_modules(lessons.__path__) if m.name[0] != "_"}


def lesson_catalog() -> Mapping[str, Any]:
    """The lessons present, by name (robust to a lesson that does not import yet)."""
    return _catalog()


def _run_one(lesson: str, **params: Any) -> Comparison:
    """Run one lesson by importing its own module (a broken sibling lesson cannot stop it)."""
    import importlib

    return importlib.import_module(f"{__package__}.lessons.{lesson}").LESSON.run(**params)


def judge_all(
    myths: tuple[Myth, ...] = MYTHS,
    run: Callable[..., Comparison] | None = None,
) -> list[Verdict]:
    """One verdict per myth; each needed lesson runs once per distinct parameter set.

    ``run(lesson, **params)`` defaults to running the lesson module's ``LESSON``. Myths whose
    lesson is not in the catalog are "not measured: lesson not written yet".
    """
    if run is None:
        run = _run_one
    known = _catalog()
    runs: dict[tuple[str, tuple[tuple[str, Any], ...]], Comparison] = {}
    out = []
    for myth in myths:
        if myth.lesson not in known:
            out.append(Verdict(myth, NOT_MEASURED, f"lesson {myth.lesson} is not written yet", ""))
            continue
        if myth.judge is None:
            out.append(judge(myth, None))  # type: ignore[arg-type]
            continue
        key = (myth.lesson, tuple(sorted(myth.params.items())))
        if key not in runs:
            try:
                runs[key] = run(myth.lesson, **dict(myth.params))
            except Exception as exc:  # reported in the verdict: the table still renders
                runs[key] = exc
        found = runs[key]
        if isinstance(found, Exception):
            out.append(
                Verdict(
                    myth,
                    NOT_MEASURED,
                    f"the lesson run failed: {type(found).__name__}: {found}",
                    "",
                )
            )
        else:
            out.append(judge(myth, found))
    return out


def judge_all_isolated(timeout: float = 900.0) -> list[Verdict]:
    """`judge_all` in a fresh Python process (``python -m fpexplore.myths --json``): the
    frameworks the lessons load (torch, TensorFlow, the JVM) leave with it, so the calling
    kernel stays small (one framework-heavy kernel at a time on a 2 GB Binder)."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "fpexplore.myths", "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise WorkerError(
            f"python -m fpexplore.myths failed (exit {done.returncode}): {done.stderr[-2000:]}"
        )
    by_number = {m.number: m for m in MYTHS}
    return [
        Verdict(by_number[d["number"]], d["verdict"], d["why"], d["number_text"], d["source"])
        for d in json.loads(done.stdout)
    ]


def main(argv: list[str] | None = None) -> int:
    """``python -m fpexplore.myths [--json]``: every verdict, as text or JSON."""
    import json

    args = sys.argv[1:] if argv is None else argv
    verdicts = judge_all()
    if "--json" in args:
        print(
            json.dumps(
                [
                    {
                        "number": v.myth.number,
                        "verdict": v.verdict,
                        "why": v.why,
                        "number_text": v.number,
                        "source": v.source,
                    }
                    for v in verdicts
                ]
            )
        )
    else:
        for v in verdicts:
            print(f"{v.myth.number:2d}. [{v.verdict}] {v.myth.text}\n    {v.why}; {v.number}")
    return 0


_COLOURS = {HOLDS: "#2ca02c", FAILS: "#d62728", DEPENDS: "#ff9f1c", NOT_MEASURED: "#888888"}


def verdict_table(verdicts: list[Verdict]) -> str:
    """The verdicts as an HTML table: claim, verdict (and on what), number, where measured."""
    e = html.escape
    rows = "".join(
        "<tr>"
        f"<td>{v.myth.number}</td><td>{e(v.myth.text)}</td>"
        f"<td><b style='color:{_COLOURS[v.verdict]}'>{e(v.verdict)}</b><br>"
        f"<small>{e(v.why)}</small></td>"
        f"<td>{e(v.number)}<br><small>{e(v.source)}</small></td>"
        f"<td><a href='{e(v.link)}'>"
        f"{e(v.myth.notebook.removesuffix('.ipynb').replace('_', ' '))}</a></td>"
        "</tr>"
        for v in verdicts
    )
    # automatic layout: a column is never narrower than its longest word, so no word breaks
    # in the middle at 1000 px with JupyterLab's sidebar open; only the small print (a file
    # name, a number with its source) may break anywhere
    return (
        "<style>.fpx-myths td,.fpx-myths th{text-align:left!important;vertical-align:top;"
        "word-break:normal;overflow-wrap:break-word;hyphens:none;padding:3px 4px}"
        ".fpx-myths td:first-child{white-space:nowrap}"
        ".fpx-myths small,.fpx-myths code{overflow-wrap:anywhere}</style>"
        "<table class='fpx-myths' style='max-width:1000px;table-layout:auto;width:100%;"
        "font-size:13px'>"
        "<tr><th>#</th><th>claim</th><th>verdict</th><th>the number</th><th>measured in</th></tr>"
        f"{rows}</table>"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
