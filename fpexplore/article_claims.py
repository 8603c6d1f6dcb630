"""The articles' claims, each with what judges it: a myth of `fpexplore.myths`, the lesson claims
it rests on, or why it is out of reach.

The series answers five widely read articles on why frameworks disagree. Their claims are
recorded in the project's reference (`claims-to-check.md`: 28 paraphrased claims, a fact-check
of the articles' own code examples) and in the list of uncovered claims a later fact-check
found (FTZ/DAZ, DJL's augmentations, fallback kernels, custom-op gradients, "kernel execution
order", "symbolic differentiation"). That fact-check counted 64 distinct claims; its list was
never recorded, so this accounting is built from what the project records of the articles,
with a claim split where one sentence asserts separable things that are measured apart (the
mm difference and its cause; several GPUs, streams and workers; strides and alignment of
reductions and of matrix products; drift on DirectML and on CUDA). That gives
`len(ARTICLE_CLAIMS)` distinct claims, not 64: no other claim of the articles is recorded
anywhere the project can read, and inventing some to reach 64 would be a claim no one made.

Each `ArticleClaim` names the myths whose verdicts judge it and the lesson claims
(``"lesson:key"``) that decide it, or is out of reach with the reason; ``left`` says what part
of a judged claim stays unmeasured. `uncovered()` ranks what stays uncovered by a reader's
interest (``rank``); `uncovered_markdown()` is the README's list; `report()` is what
``fpexplore myths --articles`` prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ARTICLE_CLAIMS",
    "ArticleClaim",
    "report",
    "summary",
    "uncovered",
    "uncovered_markdown",
]

#: where a claim is recorded
CHECK = "claims-to-check.md #"  # + the row's number
EXAMPLE = "claims-to-check.md, the articles' examples as written"
FOUND = "the later fact-check's uncovered claims"
WORDED = "the articles' own wording"


@dataclass(frozen=True)
class ArticleClaim:
    """One distinct claim of the articles and what judges it."""

    number: int
    text: str
    source: str  # where the project records the claim
    myths: tuple[int, ...] = ()  # myth numbers whose verdicts judge it
    claims: tuple[str, ...] = ()  # "lesson:key" of the lesson claims that decide it
    out_of_reach: str = ""  # why nothing here can judge it ('' when judged)
    left: str = ""  # the part of a judged claim that stays unmeasured, and why
    rank: int = 0  # among what stays uncovered, by a reader's interest (1 first)

    @property
    def judged(self) -> bool:
        return not self.out_of_reach


def _c(lesson: str, *keys: str) -> tuple[str, ...]:
    return tuple(f"{lesson}:{k}" for k in keys)


def _check(number: int, text: str, *rest: Any) -> tuple[Any, ...]:
    """The row of a claim of ``claims-to-check.md #number``, judged by the myth of that number
    (the myths follow that file's order); ``rest``: claims, out_of_reach, left, rank."""
    return (text, CHECK + str(number), (number,), *rest)


#: the claims that decide both rows on TensorFlow's control flow
_CONTROL_FLOW = _c(
    "tf_vs_torch", "control_flow.if_without_tape", "control_flow.control_flow_gradients_agree"
)

_ROWS: tuple[tuple[Any, ...], ...] = (
    # (text, source, myths, claims, out_of_reach, left, rank), trailing defaults left out
    _check(
        1,
        "Summing 10,000 × float32(0.0001) in DJL and in PyTorch gives slightly different results.",
        _c("summation_order", "djl_emulated", "torch_emulated"),
    ),
    _check(
        2,
        "The same seed (42) makes DJL's randomUniform and torch.rand draw different numbers "
        "(the article's own example).",
        _c("rng_seeds", "djl_matches_torch_cpu", "djl_is_mt19937"),
    ),
    _check(
        2,
        "The same seed does not give a DJL model and a PyTorch model the same initial weights.",
        _c("rng_seeds", "djl_init_not_torch"),
    ),
    _check(
        3,
        "DJL and PyTorch compute the mean and the standard deviation differently.",
        _c("djl_normalization", "std_ddof", "std_djl_population", "std_fix"),
    ),
    _check(
        3,
        "So data normalized in DJL and in PyTorch differs.",
        _c("djl_normalization", "std_fix", "normalize_bit_equal"),
    ),
    _check(
        4,
        "Setting cudnn.deterministic = True changes the output of a small nn.Linear model on "
        "one input.",
        _c("gpu_determinism", "linear_ignores_cudnn_flags"),
    ),
    _check(
        5,
        "cudnn.benchmark is what causes non-deterministic behaviour.",
        _c(
            "gpu_determinism",
            "conv_varies_without_benchmark",
            "benchmark_adds_nothing_across_processes",
            "atomics_vary",
        ),
    ),
    _check(
        6,
        "If training baked dropout into the weights, inference must remove the dropout layers "
        "to reproduce.",
        _c("train_vs_eval", "dropout_removed_equals_eval", "dropout_eval_fixed"),
    ),
    (
        "The article's dropout-removal code loads the trained state dict into the model "
        "without Dropout.",
        EXAMPLE,
        (),
        _c("train_vs_eval", "state_dict_example_raises"),
    ),
    _check(
        7,
        "Forgetting eval() with BatchNorm makes results inconsistent across runs.",
        _c("train_vs_eval", "bn_train_repeats", "bn_forgotten_eval_moves_stats"),
    ),
    _check(
        8,
        "torch.manual_seed does not make runs on several GPUs reproducible.",
        _c("rng_seeds", "seed_reaches_every_gpu"),
    ),
    _check(
        8,
        "torch.manual_seed does not make multi-stream runs reproducible.",
        _c("rng_seeds", "streams_reproduce"),
    ),
    _check(
        9,
        "LibTorch and PyTorch give different mm results.",
        _c("libtorch_vs_pytorch", "mm_same_bits"),
    ),
    _check(
        9,
        "The difference comes from the Python interpreter, garbage collection and memory "
        "management.",
        _c(
            "libtorch_vs_pytorch",
            "mm_same_bits",
            "mlp_same_bits",
            "sum_same_bits",
            "threads_explain_sum",
        ),
    ),
    _check(
        10,
        "LibTorch's autograd gives different gradients from PyTorch's.",
        _c("libtorch_vs_pytorch", "grad_same_bits"),
    ),
    _check(
        11,
        "A custom CUDA kernel gives different results from PyTorch's own kernel for the same op.",
        _c("libtorch_vs_pytorch", "naive_kernel_is_fma_chain", "fma_changes_bits"),
    ),
    _check(
        12,
        "Chained matmuls drift on DirectML.",
        (),
        "no DirectML device (torch-directml's privateuseone: Windows or WSL with a DirectX 12 "
        "GPU) runs here or on the lent GPU machines; the lesson run there with "
        "device='privateuseone' would measure it (myth 12 shows the CPU and CUDA drift beside "
        "it, marked as not the claim's device)",
        "",
        1,
    ),
    (
        "Chained matmuls do not drift on CUDA.",
        CHECK + "12",
        (),
        _c("cpu_vs_accelerator", "chain_drifts"),
    ),
    (
        "torch.device('directml') selects the DirectML device.",
        EXAMPLE,
        (),
        _c("cpu_vs_accelerator", "directml_device_raises"),
    ),
    (
        "The article's DirectML example measures the drift of a chain of matmuls.",
        EXAMPLE,
        (),
        _c("cpu_vs_accelerator", "article_drift_is_other_matrices"),
    ),
    _check(
        13,
        "Convolutions differ between CPU and accelerator because of backend algorithms.",
        _c(
            "cpu_vs_accelerator",
            "conv_fp32_differs_cpu",
            "conv_tf32_default",
            "conv_tf32_error",
        ),
    ),
    _check(
        14,
        "ReLU can differ between backends.",
        _c("cpu_vs_accelerator", "relu_negzero_by_device", "relu_identical"),
    ),
    _check(
        15,
        "TensorFlow's graph mode (tf.function) gives different numbers from eager mode.",
        _c(
            "tf_vs_torch",
            "graph_mode.division_rewritten",
            "graph_mode.rewrite_off_is_eager",
            "graph_mode.xla",
        ),
    ),
    _check(
        16,
        "For z = (x**2)**3 at x = 2 both frameworks give the gradient 24.",
        _c("tf_vs_torch", "autograd.seed_192"),
    ),
    _check(
        17,
        "softmax([1, 2, 3]) differs between TensorFlow and PyTorch.",
        _c("tf_vs_torch", "softmax.seed_example"),
    ),
    _check(
        18,
        "LSTM gradients differ between the frameworks over long sequences.",
        _c("tf_vs_torch", "lstm.gradients_rounding", "lstm.growth", "lstm.gate_order"),
    ),
    _check(
        19,
        "DJL's dropout masks differ from PyTorch's for the same seed.",
        _c("rng_seeds", "djl_dropout_matches_torch"),
    ),
    _check(
        20,
        "DJL's default weight initialization differs from PyTorch's.",
        _c("rng_seeds", "djl_init_gaussian_fan_in", "djl_init_not_torch"),
    ),
    _check(
        21,
        "Autograd being on changes a model's inference outputs.",
        _c(
            "train_vs_eval",
            "autograd_modes_same_bits",
            "transformer_grad_changes_bits",
            "transformer_grad_changes_bits_cuda",
        ),
    ),
    _check(
        22,
        "Memory layout (a strided view instead of a contiguous tensor) changes results.",
        _c("summation_order", "strides_change_bits"),
    ),
    _check(
        22,
        "Alignment and memory fragmentation (where a tensor starts) change the results of "
        "reductions and elementwise ops.",
        _c("summation_order", "aten_offset_same_bits"),
    ),
    _check(
        22,
        "Alignment changes the results of matrix products.",
        _c("summation_order", "cbwr_strict_offset_same_bits"),
        "",
        "on CUDA it is read from one recorded card (the GPU myths record of sum, dot, mv and "
        "mm at storage offsets, an H200); other cards and cuBLAS versions need their own "
        "record (benchmarks/record_myth_gpu.py run on that card)",
        2,
    ),
    _check(
        23,
        "Noise-injecting activations (RReLU-style) make inference vary.",
        _c("train_vs_eval", "rrelu_train_varies", "rrelu_eval_fixed", "keras_noise_eval_identity"),
    ),
    _check(
        24,
        "Layer execution order and skip connections change results.",
        _c("summation_order", "residual_orders_differ", "residual_orders_bounded"),
    ),
    _check(
        25,
        "Seeding is not enough with several GPUs.",
        _c("rng_seeds", "current_device_seed_misses_others", "seed_reaches_every_gpu"),
    ),
    _check(
        25,
        "Seeding is not enough with CUDA streams.",
        _c("rng_seeds", "thread_race_varies", "streams_reproduce"),
    ),
    _check(
        25,
        "Seeding is not enough with DataLoader workers.",
        _c("rng_seeds", "workers_reproduce_with_seed", "workers_change_the_numbers"),
    ),
    _check(
        26,
        "TensorFlow needs a GradientTape for a Python if.",
        _CONTROL_FLOW,
    ),
    _check(
        27,
        "Higher-order derivatives differ between the frameworks.",
        _c("tf_vs_torch", "higher_order.higher_order_accurate"),
    ),
    _check(
        28,
        "Default tolerances for near-singular matrices differ.",
        _c("tf_vs_torch", "tolerances.tolerances_differ", "tolerances.float64_all_agree"),
    ),
    (
        "DJL computes sums, means and standard deviations with NDArrays.sum/mean/std, and "
        "draws random numbers with ai.djl.random.RandomGenerator.",
        EXAMPLE,
        (),
        _c("djl_normalization", "article_names_gone"),
    ),
    (
        "Flushing subnormals to zero (FTZ/DAZ) changes float32 results.",
        FOUND,
        (29,),
        _c("cpu_vs_accelerator", "ftz_flushes_subnormals", "ftz_default_exact", "cuda_ftz_flushes"),
    ),
    (
        "Ops without a kernel for a dtype or layout fall back to other kernels, which change "
        "the results.",
        FOUND,
        (30,),
        _c("cpu_vs_accelerator", "half_sum_upcasts"),
        "",
        "an op that a DirectML or MPS backend hands back to the CPU needs that device; torch's "
        "own CPU fallbacks (half-precision sums through the float32 loop, strided inputs "
        "through the strided loop) are measured",
        4,
    ),
    (
        "A custom op's hand-written gradient differs from the framework's own.",
        FOUND,
        (31,),
        _c(
            "tf_vs_torch",
            "autograd.custom_backward_differs",
            "autograd.custom_backward_overflows",
        ),
        "",
        "the same op with TensorFlow's tf.custom_gradient is not run; torch's "
        "torch.autograd.Function is",
        5,
    ),
    (
        "Kernel execution order varies between runs.",
        FOUND,
        (32,),
        _c("libtorch_vs_pytorch", "atomic_varies", "torch_sum_repeatable"),
    ),
    (
        "TensorFlow's eager gradients are symbolic differentiation.",
        FOUND,
        (33,),
        _CONTROL_FLOW,
    ),
    (
        "DJL's random augmentations cannot match Python's for the same seed.",
        FOUND,
        (34,),
        _c("rng_seeds", "djl_flips_differ", "java_emulator_matches"),
        "",
        "DJL's own transform classes (RandomFlipLeftRight, its random crops) are not run "
        "through the JVM worker: the java.util.Random stream they draw from is, against "
        "torchvision's flips",
        3,
    ),
    (
        "Small numerical differences compound over training, especially in recurrent networks.",
        WORDED,
        (35,),
        _c("training_drift", "rnn_grows_exponentially", "convex_stays_at_rounding"),
    ),
)

ARTICLE_CLAIMS: tuple[ArticleClaim, ...] = tuple(
    ArticleClaim(i, *row) for i, row in enumerate(_ROWS, 1)
)


def uncovered(claims: Iterable[ArticleClaim] = ARTICLE_CLAIMS) -> list[ArticleClaim]:
    """The claims out of reach, and the judged ones with a part left, by a reader's interest."""
    return sorted((c for c in claims if c.out_of_reach or c.left), key=lambda c: c.rank)


def uncovered_markdown() -> str:
    """The ranked list of what stays uncovered, as the README shows it."""
    lines = []
    for k, c in enumerate(uncovered(), 1):
        what = f"Out of reach: {c.out_of_reach}" if c.out_of_reach else f"Judged; left: {c.left}"
        lines.append(f"{k}. **{c.text}** {what}.")
    return "\n".join(lines)


def summary() -> str:
    """How many article claims there are, how many are judged and how many are out of reach."""
    judged = sum(c.judged for c in ARTICLE_CLAIMS)
    out = len(ARTICLE_CLAIMS) - judged
    return f"{len(ARTICLE_CLAIMS)} distinct article claims: {judged} judged, {out} out of reach"


def report(verdicts: Iterable[Any] = ()) -> str:
    """Every article claim with its evidence: the verdicts of its myths (``verdicts``, the
    `fpexplore.myths.Verdict` list judged this run), the lesson claims that decide it, or why
    it is out of reach; then the count and the ranked list of what stays uncovered."""
    by_number = {v.myth.number: v for v in verdicts}
    out = []
    for c in ARTICLE_CLAIMS:
        out.append(f"{c.number:2d}. {c.text}")
        if c.out_of_reach:
            out.append(f"    out of reach: {c.out_of_reach}")
        for m in c.myths:
            v = by_number.get(m)
            said = f"[{v.verdict}] {v.number}" if v is not None else "(not judged in this run)"
            out.append(f"    myth {m}: {said}")
        if c.claims:
            out.append(f"    lesson claims: {', '.join(c.claims)}")
        if c.left:
            out.append(f"    left: {c.left}")
    out.append(f"\n{summary()}. Uncovered, most interesting first:")
    out.append(uncovered_markdown())
    return "\n".join(out)
