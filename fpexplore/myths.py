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


def _djl_sum(c: Comparison) -> tuple[str, str, str]:
    same = _claim(c, "djl_emulated") and _claim(c, "torch_emulated")  # both = emulate torch
    djl, torch_, loop = (
        _first(_value(c, n)) for n in ("DJL NDArray.sum", "torch.sum", "Java float loop")
    )
    same = same and djl == torch_
    number = f"DJL {djl:.9g}, torch {torch_:.9g}, Java loop {loop:.9g}"
    if same:
        return FAILS, "DJL's sum is libtorch's: same reduction order, same bits", number
    return HOLDS, "DJL and torch reduce in different orders here", number


def _seed(c: Comparison) -> tuple[str, str, str]:
    number = (
        f"first value DJL {_first(_value(c, 'DJL randomUniform')):.7g}, "
        f"torch {_first(_value(c, 'torch CPU')):.7g}"
    )
    if _claim(c, "djl_matches_torch_cpu") and _claim(c, "djl_is_mt19937"):
        return (
            FAILS,
            "for the pinned DJL/torch pair: both seed the same MT19937 and map it the same way",
            number,
        )
    return HOLDS, "DJL's libtorch gives another stream for the same seed", number


def _std(c: Comparison) -> tuple[str, str, str]:
    classic = c.data.get("classic", {})
    number = ", ".join(f"{name} {_first(values):.7g}" for name, values in list(classic.items())[:3])
    ddof, population, fix = (_claim(c, k) for k in ("std_ddof", "std_djl_population", "std_fix"))
    if ddof and population and fix:
        return (
            DEPENDS,
            "on the divisor: torch.std divides by N−1, DJL's idiom and np.std by N; "
            "with the same divisor the results agree to 1 ULP",
            number,
        )
    if ddof and population:
        return HOLDS, "the divisors differ and no correction makes them agree", number
    return FAILS, "both divide by the same N", number


def _varying(c: Comparison) -> list[str]:
    return [
        o.implementation
        for o in c.outcomes
        if o.ran and isinstance(o.value, str) and o.value.startswith("varies")
    ]


def _benchmark(c: Comparison) -> tuple[str, str, str]:
    atomics = _claim(c, "atomics_vary")
    without = _claim(c, "conv_varies_without_benchmark")
    across = _claim(c, "benchmark_adds_nothing_across_processes")
    number = f"{len(_varying(c))} recorded ops vary run to run with the default flags"
    if (atomics or without) and across:
        return (
            FAILS,
            "ops vary with benchmark off (atomic adds, some cuDNN gradients); benchmark only "
            "picks the algorithm per process",
            number,
        )
    if atomics or without:
        return DEPENDS, "on the op: some vary without it, and benchmark adds variation", number
    return HOLDS, "nothing varied with benchmark off", number


def _dropout(c: Comparison) -> tuple[str, str, str]:
    import numpy as np

    a = np.asarray(_value(c, "torch MLP with Dropout, eval()"))
    b = np.asarray(_value(c, "torch MLP without Dropout, copied weights"))
    number = f"{int((a != b).sum())} of {a.size} outputs differ between eval() and no dropout"
    if _claim(c, "dropout_removed_equals_eval") and _claim(c, "dropout_scaling"):
        return FAILS, "eval() already is the model without dropout, bit for bit", number
    return HOLDS, "eval() differs from the model without dropout", number


def _batchnorm(c: Comparison) -> tuple[str, str, str]:
    import numpy as np

    train = np.asarray(_value(c, "torch BatchNorm1d train()"), dtype=np.float64)
    evalm = np.asarray(_value(c, "torch BatchNorm1d eval()"), dtype=np.float64)
    number = f"train vs eval output: up to {np.max(np.abs(train - evalm)):.3g} apart"
    if _claim(c, "bn_train_uses_batch_stats") and _claim(c, "bn_eval_uses_running_stats"):
        return (
            DEPENDS,
            "on the batch: train mode normalizes each sample with its batch's statistics and "
            "updates the running ones on every call; for the same batch it is not random",
            number,
        )
    return FAILS, "train and eval mode gave the same output", number


def _cuda_seed(c: Comparison) -> tuple[str, str, str]:
    number = (
        f"seed {c.params.get('seed')}: CPU {_first(_value(c, 'torch CPU')):.7g}, "
        f"CUDA {_first(_value(c, 'torch CUDA')):.7g}"
    )
    if _claim(c, "cuda_differs_from_cpu") and _claim(c, "cuda_philox_reproduced"):
        return (
            DEPENDS,
            "on the device: one seed drives MT19937 on the CPU and Philox on CUDA, so devices "
            "differ; each device's stream is reproducible",
            number,
        )
    return FAILS, "CPU and CUDA gave the same stream", number


def _device_key(data: Mapping[str, Any], word: str) -> str:
    for key in data:
        if word in key:
            return key
    raise NotMeasured(f"no {word} side in this run")


def _chain(c: Comparison) -> tuple[str, str, str]:
    drift = c.data["drift"]
    cpu, gpu = _device_key(drift, "cpu (live"), _device_key(drift, "NVIDIA")
    steps = c.data["settings"]["chain_steps"]
    number = f"after {steps} matmuls: CPU drift {drift[cpu][-1]:.2g}, CUDA {drift[gpu][-1]:.2g}"
    if _claim(c, "chain_drifts"):
        return FAILS, "every device drifts from the exact chain, CUDA too", number
    return HOLDS, "CUDA stayed on the exact chain", number


def _conv(c: Comparison) -> tuple[str, str, str]:
    err = c.data["conv_error"]
    default = err[_device_key(err, "torch default")]
    off = err[_device_key(err, "TF32 off")]
    number = f"conv error: CUDA default {default:.2g}, TF32 off {off:.2g} ({default / off:.0f}×)"
    if _claim(c, "conv_tf32_default") and _claim(c, "conv_tf32_error"):
        return (
            DEPENDS,
            "on TF32: cuDNN convolutions use it by default; with TF32 off the accelerator is as "
            "accurate as the CPU",
            number,
        )
    return HOLDS, "the convolutions differ with TF32 off too", number


def _relu(c: Comparison) -> tuple[str, str, str]:
    number = "; ".join(
        str(o.value) for o in c.outcomes if o.implementation.startswith("relu") and o.ran
    )
    number = number.split(";")[0] + " on every device" if number else ""
    if _claim(c, "relu_identical"):
        return FAILS, "relu is max(x, 0) bit for bit on every device", number
    return HOLDS, "relu differs from max(x, 0) somewhere", number


def _same_bits_verdict(c: Comparison, op: str, same: bool, what: str) -> tuple[str, str, str]:
    errs = [c.outcome(f"{op} · {side} · 1 thread").error for side in ("C++", "Python")]
    worst = ", ".join(
        f"{side} {e.max_abs_ulp:.3g} ULP"
        for side, e in zip(("C++", "Python"), errs, strict=True)
        if e is not None
    )
    number = f"{what}: {'identical' if same else 'different'} bits at 1 and 2 threads" + (
        f"; max error {worst}" if worst else ""
    )
    if same:
        return (
            FAILS,
            "C++ and Python run the same libtorch kernels: the same bits at the same thread count",
            number,
        )
    return HOLDS, "C++ and Python gave different bits at the same thread count", number


def _libtorch_mm(c: Comparison) -> tuple[str, str, str]:
    return _same_bits_verdict(c, "mm", _claim(c, "mm_same_bits"), "mm")


def _libtorch_grad(c: Comparison) -> tuple[str, str, str]:
    same = _claim(c, "grad_same_bits")
    return _same_bits_verdict(c, "grad", same, "gradient of (x @ x.T).sum()")


def _cuda_kernel(c: Comparison) -> tuple[str, str, str]:
    fma = _claim(c, "naive_kernel_is_fma_chain")
    atomic = _claim(c, "atomic_varies") and _claim(c, "torch_sum_repeatable")
    cu = c.data.get("cuda") or {}
    table = cu.get("matmul_table") or []
    same = [r["n"] for r in table if r["cublas == naive_fma"]]
    other = [r["n"] for r in table if not r["cublas == naive_fma"]]
    each = c.outcome("CUDA sum · atomicAdd each")
    number = (
        f"{cu.get('card', 'GPU')}: naive mm = cuBLAS bits at n = {same or 'none'}, not at "
        f"n = {other or 'none'}; atomicAdd sum: {each.note or _first(each.value)}"
    )
    if fma and atomic:
        return (
            DEPENDS,
            "on the kernel: a naive matmul is a k-order FMA chain, which cuBLAS also runs for "
            "some shapes (same bits) and not others; an atomicAdd sum differs from torch.sum "
            "and from itself run to run",
            number,
        )
    return HOLDS, "the custom kernels differ from torch's at every size", number


def _gradient(c: Comparison) -> tuple[str, str, str]:
    g = c.data.get("seed_gradients")
    if not g:
        raise NotMeasured("the tf_vs_torch run has no seed gradients")
    number = f"torch {g['torch']:g}, TensorFlow {g['tensorflow']:g}, exact 6·x⁵ = {g['exact']}"
    if _claim(c, "seed_192"):
        return FAILS, "both give the exact gradient 192, not 24", number
    if g["torch"] == g["tensorflow"] == 24:
        return HOLDS, "both give 24", number
    return DEPENDS, "on the framework: they do not both give the exact gradient", number


def _softmax(c: Comparison) -> tuple[str, str, str]:
    import numpy as np

    seed = c.data.get("seed_example")
    if not seed:
        raise NotMeasured("the tf_vs_torch run has no softmax([1, 2, 3]) example")
    a = np.asarray(seed["torch"], dtype=np.float32)
    b = np.asarray(seed["tensorflow"], dtype=np.float32)
    differ = int((a.view(np.uint32) != b.view(np.uint32)).sum())
    number = f"{differ} of {a.size} float32 values differ in their bits"
    if not _claim(c, "seed_example"):
        return HOLDS, "at least one framework is more than one ULP off", number
    if differ:
        return (
            DEPENDS,
            "on the last bit: they can differ there, and both are within one ULP of the exact "
            "softmax",
            number,
        )
    return FAILS, "same bits, both within one ULP of the exact softmax", number


def _graph(c: Comparison) -> tuple[str, str, str]:
    import numpy as np

    values = c.data.get("values")
    if not values or "tf XLA" not in values:
        raise NotMeasured("the tf_vs_torch run has no graph-mode values")
    eager = np.asarray(values["tf eager"])

    def rows(name: str) -> int:
        other = np.asarray(values[name])
        return int((other != eager).reshape(len(eager), -1).any(axis=1).sum())

    traced, xla = rows("tf.function"), rows("tf XLA")
    number = (
        f"tf.function: {traced}, XLA: {xla} of {len(eager)} rows differ from eager in their bits"
    )
    if not _claim(c, "xla"):
        return HOLDS, "a graph mode is more than a few ULP from the exact value", number
    if _claim(c, "function_is_eager") and xla == 0:
        return FAILS, "tf.function and XLA give eager's bits", number
    if _claim(c, "function_is_eager"):
        return (
            DEPENDS,
            "on XLA: tf.function alone gives eager's bits; jit_compile=True fuses and can change "
            "the last bits, every mode within a few ULP of the exact value",
            number,
        )
    return HOLDS, "tf.function alone already changes bits", number


def _lstm(c: Comparison) -> tuple[str, str, str]:
    data = c.data.get("torch_keras_diff_by_step")
    if data is None:
        raise NotMeasured("the tf_vs_torch run has no LSTM steps")
    length = c.data.get("length", len(data))
    number = f"largest torch–Keras difference in h over {length} steps: {float(max(data)):.3g}"
    if not _claim(c, "gate_order"):
        return HOLDS, "even with the weights mapped right, the outputs part", number
    if _claim(c, "gradients_rounding"):
        return (
            DEPENDS,
            "on the weight mapping: mapped right (gate order, both biases, recurrent "
            "activation), outputs and gradients differ only by rounding, within the lesson's "
            "bound against the exact cell; mapped wrong, they differ by far more",
            number,
        )
    return HOLDS, "the gradients part beyond rounding", number


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
        f"<td style='word-break:break-word'><a href='{e(v.link)}'>"
        f"{e(v.myth.notebook.removesuffix('.ipynb').replace('_', ' '))}</a></td>"
        "</tr>"
        for v in verdicts
    )
    return (
        "<style>.fpx-myths td,.fpx-myths th{text-align:left!important;vertical-align:top}</style>"
        "<table class='fpx-myths' style='max-width:1000px;table-layout:fixed;width:100%;"
        "font-size:13px'>"
        "<colgroup><col style='width:3%'><col style='width:30%'><col style='width:30%'>"
        "<col style='width:22%'><col style='width:15%'></colgroup>"
        "<tr><th>#</th><th>claim</th><th>verdict</th><th>the number</th><th>measured in</th></tr>"
        f"{rows}</table>"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
