"""Myths, measured: claims commonly made about framework discrepancies, judged by lesson runs.

Each `Myth` names the lesson run that measures it and a judge: a function of that run's
`Comparison` that returns the verdict ("holds", "does not hold" or "depends"), what it depends on
or why, and the measured number that shows it. Judges read the lesson's claims (facts the lesson
asserts live) and take their numbers from the run; no verdict is stored anywhere. A myth whose
lesson is not in the catalog yet, or whose claims this run could not check, gets the verdict
"not measured" with the reason.

`judge_all()` runs each needed lesson once per distinct parameter set and returns one `Verdict`
per myth, in the order of ``shared/reference/claims-to-check.md``; `verdict_table()` renders them
for the index notebook. A lesson that measures a myth adds its claim keys to the myth's judge here.

A myth that generalizes is judged over several cases (`Myth.cases`: other seeds and sizes; the
lessons add the special inputs, such as −0.0 for relu or a division by a constant for graph
mode, inside each run): the same verdict in every case is that verdict, a verdict that changes
is "depends", and `Verdict.split` says which cases went which way. A myth about a device that
cannot run here (`Myth.not_here`) is "not measured" with what would measure it; its row shows
what the stand-in measured only as a comparison.
"""

from __future__ import annotations

import html
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import WorkerError
from .judging import (  # the verdicts are part of this module's API too
    DEPENDS,
    FAILS,
    HOLDS,
    NOT_MEASURED,
    VERDICTS,
    NotMeasured,
    Rule,
    Verdicts,
    claim,
    decide,
    device_key,
    differ_count,
    first,
    holds,
    ratio,
    value,
)
from .templates import stylesheet

if TYPE_CHECKING:
    from .result import Comparison

__all__ = [
    "DEPENDS",
    "FAILS",
    "HOLDS",
    "MYTHS",
    "NOT_MEASURED",
    "VERDICTS",
    "Myth",
    "NotMeasured",
    "Verdict",
    "judge",
    "judge_all",
    "judge_all_isolated",
    "lesson_catalog",
    "verdict_table",
]


@dataclass(frozen=True)
class Verdict:
    """What a lesson run made of one myth."""

    myth: Myth
    verdict: str  # one of VERDICTS
    why: str  # what it depends on, or why it holds / does not hold / was not measured
    number: str  # the measured number that shows it ('' when not measured)
    source: str = ""  # 'live' or the recorded run it came from
    cases: tuple[tuple[str, str], ...] = ()  # (case, verdict) of every case judged

    @property
    def split(self) -> str:
        """The cases tried and how they split, e.g. "holds in 2 of 3 cases; does not hold for:
        seed 3" ('' for a verdict from one case)."""
        return _split(self.cases)

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
    #: more parameter sets (other seeds, sizes, inputs) to judge it on, each merged over
    #: ``params``; a verdict that changes across the cases is "depends"
    cases: tuple[Mapping[str, Any], ...] = ()
    #: where the device or stack the claim names cannot run here: what would measure it (the
    #: row then says "not measurable here" instead of judging a stand-in)
    not_here: str = ""

    def case_params(self) -> list[tuple[str, dict[str, Any]]]:
        """(label, parameters) of every case: the default run first, then ``cases``."""
        base = dict(self.params)
        out = [(_label(base, {}), base)]
        for extra in self.cases:
            out.append((_label(base, extra), {**base, **extra}))
        return out


def _label(base: Mapping[str, Any], extra: Mapping[str, Any]) -> str:
    """A case's name: the parameters it changes (the default run: its seed, if any)."""
    if not extra:
        return f"seed {base['seed']}" if "seed" in base else "default"
    return ", ".join(f"{k} {v}" for k, v in extra.items())


def _split(cases: tuple[tuple[str, str], ...]) -> str:
    if len(cases) < 2:
        return ""
    judged = [(c, v) for c, v in cases if v != NOT_MEASURED]
    counts: dict[str, list[str]] = {}
    for c, v in judged:
        counts.setdefault(v, []).append(c)
    if not counts:
        return ""
    first = max(counts, key=lambda v: len(counts[v]))
    text = f"{first} in {len(counts[first])} of {len(judged)} cases"
    others = [f"{v} for: {', '.join(cs)}" for v, cs in counts.items() if v != first]
    unmeasured = [c for c, v in cases if v == NOT_MEASURED]
    if others:
        text += "; " + "; ".join(others)
    else:
        text += " (" + ", ".join(c for c, _ in judged) + ")"
    if unmeasured:
        text += f"; not measured: {', '.join(unmeasured)}"
    return text


# -- reading a run ------------------------------------------------------------------------------


# -- the judges ---------------------------------------------------------------------------------
#
# Every judge has one shape: read the claims it rests on and the number that shows the verdict,
# then the first rule whose claims hold gives the verdict and why (`decide`).


def _djl_sum(c: Comparison) -> Verdicts:
    djl, torch_, loop = (
        first(value(c, n)) for n in ("DJL NDArray.sum", "torch.sum", "Java float loop")
    )
    same = holds(c, "djl_emulated", "torch_emulated") and djl == torch_  # both emulate torch
    return decide(
        f"DJL {djl:.9g}, torch {torch_:.9g}, Java loop {loop:.9g}",
        (same, FAILS, "DJL's sum is libtorch's: same reduction order, same bits"),
        otherwise=(HOLDS, "DJL and torch reduce in different orders here"),
    )


def _std(c: Comparison) -> Verdicts:
    classic = c.data.get("classic", {})
    divisors = holds(c, "std_ddof", "std_djl_population")
    if "djl" not in classic or "torch" not in classic:
        raise NotMeasured("the std run has no DJL or no torch values")
    return decide(
        f"first normalized value: torch (x.std(), N−1) {first(classic['torch']):.7g}, DJL "
        f"(idiom, N) {first(classic['djl']):.7g}, torch x.std(correction=0) "
        f"{first(classic['torch_fixed']):.7g}",
        (
            divisors and holds(c, "std_fix"),
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


def _benchmark(c: Comparison) -> Verdicts:
    varies = claim(c, "atomics_vary") or claim(c, "conv_varies_without_benchmark")
    return decide(
        f"{len(_varying(c))} recorded ops vary run to run with the default flags",
        (
            varies and holds(c, "benchmark_adds_nothing_across_processes"),
            FAILS,
            "ops vary with benchmark off (atomic adds, some cuDNN gradients); benchmark only "
            "picks the algorithm per process",
        ),
        (varies, DEPENDS, "on the op: some vary without it, and benchmark adds variation"),
        otherwise=(HOLDS, "nothing varied with benchmark off"),
    )


def _chain_number(c: Comparison) -> str:
    drift = c.data["drift"]
    cpu, gpu = device_key(drift, "cpu (live"), device_key(drift, "NVIDIA")
    return (
        f"after {c.data['settings']['chain_steps']} matmuls: CPU drift {drift[cpu][-1]:.2g}, "
        f"CUDA {drift[gpu][-1]:.2g}"
    )


def _conv_number(c: Comparison) -> str:
    err = c.data["conv_error"]
    default, off = (err[device_key(err, k)] for k in ("torch default", "TF32 off"))
    return f"conv error: CUDA default {default:.2g}, TF32 off {off:.2g} ({ratio(default, off)})"


def _djl_layers(c: Comparison) -> Mapping[str, Any]:
    found = c.data.get("djl_layers")
    if not found:
        raise NotMeasured(f"the {c.lesson} run measured no DJL layers")
    return found


def _init_number(c: Comparison) -> str:
    d = _djl_layers(c)
    lin = d["linear"]
    return (
        f"DJL Linear: Gaussian σ {lin['sigma']:.4g}, bias 0; torch: U(±{lin['torch_bound']:.4g}), "
        f"uniform bias; {d['weights_equal_torch']} of {d['weights']} weights equal, "
        f"{d['outside_torch_bound']} outside torch's bound"
    )


# the weights a DJL model starts with come from its default initializer, not from a
# randomUniform call: judged from the initializers (the raw uniform streams do match)
_seed = Rule(
    ("djl_init_gaussian_fan_in", "djl_init_not_torch"),
    HOLDS,
    "for default-initialized models: DJL's Linear/Conv2d start from Xavier Gaussian (fan-in, "
    "magnitude 2, zero bias), torch's from kaiming_uniform(a=√5) with a uniform bias; the raw "
    "randomUniform streams are libtorch's and match torch.rand bit for bit",
    (DEPENDS, "on the layer: DJL's default initializer matched torch's here"),
    _init_number,
)
_dropout = Rule(
    ("dropout_removed_equals_eval", "dropout_scaling"),
    FAILS,
    "eval() already is the model without dropout, bit for bit",
    (HOLDS, "eval() differs from the model without dropout"),
    lambda c: differ_count(
        c,
        "torch MLP with Dropout, eval()",
        "torch MLP without Dropout, copied weights",
        "eval() and no dropout",
    ),
)


def _bn_runs_number(c: Comparison) -> str:
    runs = c.data.get("bn_runs")
    if not runs:
        raise NotMeasured("the train_vs_eval run has no repeated train-mode BatchNorm runs")
    half = runs["train_half_batch_max_gap"]
    return (
        f"train mode, same batch, {runs['train_runs']} runs: "
        f"{runs['train_same_batch_distinct']} distinct output(s)"
        + (f"; same samples in half the batch: up to {half:.3g} apart" if half is not None else "")
        + f"; eval() before vs after those calls: up to {runs['eval_before_after_max_gap']:.3g}"
    )


_batchnorm = Rule(
    ("bn_train_uses_batch_stats", "bn_train_repeats", "bn_forgotten_eval_moves_stats"),
    DEPENDS,
    "on what a run is: in train mode the same batch gives the same bits run after run, but a "
    "sample's output depends on the batch it comes in, and every forgotten train-mode call "
    "moves the running statistics that eval() uses later",
    (HOLDS, "train mode gave different outputs for the same batch"),
    _bn_runs_number,
)
_chain = Rule(
    ("chain_drifts",),
    FAILS,
    "every device drifts from the exact chain, CUDA too",
    (HOLDS, "CUDA stayed on the exact chain"),
    _chain_number,
)
_conv = Rule(
    ("conv_tf32_default", "conv_tf32_error"),
    DEPENDS,
    "on TF32: cuDNN convolutions use it by default; with TF32 off the accelerator is as "
    "accurate as the CPU",
    (HOLDS, "the convolutions differ with TF32 off too"),
    _conv_number,
)


def _beside(where: str) -> Callable[[Comparison], Verdicts]:
    """The judge that lives beside its lesson: ``where`` is ``"part:function"`` (``part`` a
    lesson module such as ``"train_vs_eval.judges"``; the function defaults to
    ``judge_myth``), read through the lessons registry when it runs."""
    module, _, name = where.partition(":")

    def judge_it(c: Comparison) -> Verdicts:
        from . import lessons

        verdict, why, number = getattr(lessons.module(module), name or "judge_myth")(c)
        if verdict == NOT_MEASURED:
            raise NotMeasured(why)
        return verdict, why, number

    judge_it.module = module  # type: ignore[attr-defined]
    return judge_it


# relu on the edge values (−0.0, NaNs, infinities, subnormals) on this CPU and the recorded GPUs
_relu = _beside("cpu_vs_accelerator.edges")
# the article's small nn.Linear MLP under cuDNN's flags (recorded on a GPU)
_linear = _beside("gpu_determinism.linear_flag")
# one seed across two GPUs, streams and racing host threads (recorded on two GPUs)
_gpu_seed = _beside("rng_seeds.multi_gpu")


def _same_bits_verdict(c: Comparison, op: str, same: bool, what: str) -> Verdicts:
    errs = [c.outcome(f"{op} · {side} · 1 thread").error for side in ("C++", "Python")]
    worst = ", ".join(
        f"{side} {e.max_abs_ulp:.3g} ULP"
        for side, e in zip(("C++", "Python"), errs, strict=True)
        if e is not None
    )
    return decide(
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
    return _same_bits_verdict(c, "mm", claim(c, "mm_same_bits"), "mm")


def _libtorch_grad(c: Comparison) -> Verdicts:
    same = claim(c, "grad_same_bits")
    return _same_bits_verdict(c, "grad", same, "gradient of (x @ x.T).sum()")


def _cuda_kernel(c: Comparison) -> Verdicts:
    fma = claim(c, "naive_kernel_is_fma_chain")
    atomic = holds(c, "atomic_varies", "torch_sum_repeatable")
    cu = c.data.get("cuda") or {}
    table = cu.get("matmul_table") or []
    same = [r["n"] for r in table if r["cublas == naive_fma"]]
    other = [r["n"] for r in table if not r["cublas == naive_fma"]]
    each = c.outcome("CUDA sum · atomicAdd each")
    return decide(
        f"{cu.get('card', 'GPU')}: naive mm = cuBLAS bits at n = {same or 'none'}, not at "
        f"n = {other or 'none'}; atomicAdd sum: {each.note or first(each.value)}",
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
    return decide(
        f"torch {g['torch']:g}, TensorFlow {g['tensorflow']:g}, exact 6·x⁵ = {g['exact']}",
        (holds(c, "seed_192"), FAILS, "both give the exact gradient 192, not 24"),
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
    return decide(
        f"{differ} of {a.size} float32 values differ in their bits on this CPU ({why})",
        (not holds(c, "seed_example"), HOLDS, "at least one framework is more than 2 ULP off"),
        otherwise=(
            DEPENDS,
            "on TensorFlow's CPU path: its oneDNN kernel (on by default only on CPUs with "
            "AVX512_VNNI, AVX512_BF16, AVX_VNNI or AMX; TF_ENABLE_ONEDNN_OPTS switches it) "
            "rounds differently in the last bits, Eigen's matches torch; both stay within "
            "2 ULP of the exact softmax",
        ),
    )


def _graph(c: Comparison) -> Verdicts:
    d = c.data
    if "divide_differ" not in d:
        raise NotMeasured("the tf_vs_torch run has no graph-mode cases")
    rewritten = holds(c, "division_rewritten")
    restored = holds(c, "rewrite_off_is_eager")
    bounded = holds(c, "xla")
    seeds = d["seeds"]
    differ = d["divide_differ"]
    n_seeds = len(seeds)
    xla_lse = len(d["xla_same_seeds"]["lse"])
    fn_lse = len(d["lse_function_same_seeds"])
    return decide(
        "x / 3.0: tf.function differs from eager in "
        + ", ".join(f"{differ[s]}" for s in seeds)
        + f" of {d['divide_n']} elements (seeds {', '.join(map(str, seeds))}); "
        f"log-sum-exp: tf.function has eager's bits at {fn_lse} of {n_seeds} seeds, XLA at "
        f"{xla_lse} of {n_seeds}; XLA's x / 3.0 at {len(d['xla_same_seeds']['div'])} of "
        f"{n_seeds}",
        (not bounded, HOLDS, "a graph mode is more than a few ULP from the exact value"),
        (
            rewritten and restored,
            DEPENDS,
            "on the graph: Grappler rewrites a division by a constant into a multiply by its "
            "rounded reciprocal, so default tf.function changes the bits of x / 3.0 (about a "
            f"third of them); with set_experimental_options({{'{d['rewrite_switch']}': False}}) "
            "it gives eager's bits; a graph without such a rewrite (the log-sum-exp) keeps "
            "eager's bits; XLA compiles its own fused loops, so whether its bits match "
            "eager's is counted per seed; every mode stays within a few ULP of the exact value",
        ),
        otherwise=(HOLDS, "tf.function changes bits even with the rewrite off"),
    )


def _lstm(c: Comparison) -> Verdicts:
    data = c.data.get("torch_keras_diff_by_step")
    if data is None:
        raise NotMeasured("the tf_vs_torch run has no LSTM steps")
    mapped = holds(c, "gate_order")
    grad = c.data.get("torch_keras_grad_diff")
    errs = c.data.get("grad_error_by_distance") or {}
    if grad is None or not errs:
        raise NotMeasured("the tf_vs_torch run has no LSTM gradients")
    worst = {k: float(max(v)) for k, v in errs.items()}
    return decide(
        f"input gradients over {c.data.get('length', len(data))} steps: torch and Keras "
        f"differ by up to {grad:.3g} (relative to the largest), each within "
        f"{max(worst.values()):.3g} of the exact gradient; h differs by up to "
        f"{float(max(data)):.3g}",
        (not mapped, HOLDS, "even with the weights mapped right, the outputs part"),
        (
            mapped and holds(c, "gradients_rounding"),
            DEPENDS,
            "on the weight mapping: mapped right (gate order, both biases, recurrent "
            "activation), outputs and gradients differ only by rounding, within the lesson's "
            "bound against the exact cell; mapped wrong, they differ by far more",
        ),
        otherwise=(HOLDS, "the gradients part beyond rounding"),
    )


# -- claims 19-28: each reads its lesson's claims; the number is the run's own --------------

_init = Rule(
    ("djl_init_gaussian_fan_in", "djl_init_not_torch", "keras_init_glorot"),
    HOLDS,
    "DJL: Xavier Gaussian, fan-in, magnitude 2, zero bias; torch: kaiming_uniform(a=√5), "
    "uniform bias; Keras: glorot_uniform, zero bias: three distributions",
    (DEPENDS, "on the layer: some defaults matched"),
    _init_number,
)
_djl_dropout = Rule(
    ("djl_dropout_matches_torch",),
    FAILS,
    "for the pinned DJL/torch pair: both are libtorch's bernoulli_ on the seeded default "
    "generator, so the masks match bit for bit",
    (HOLDS, "DJL's libtorch draws another mask for the same seed"),
    lambda c: (
        f"{_djl_layers(c)['dropout_same']} of {_djl_layers(c)['dropout_total']} mask values "
        "identical"
    ),
)
_autograd_modes = Rule(
    ("autograd_modes_same_bits",),
    FAILS,
    "grad mode only decides whether a graph is recorded; the forward kernels are the same",
    (HOLDS, "a forward gave other bits with autograd on"),
    lambda c: (
        f"same bits under grad, no_grad, inference_mode for "
        f"{c.data['autograd_modes']['same']} of {c.data['autograd_modes']['seeds']} seeds"
    ),
)


def _layout(c: Comparison) -> Verdicts:
    offset, strides = holds(c, "offset_same_bits"), holds(c, "strides_change_bits")
    d = c.data["layout"]
    return decide(
        f"offsets: {d['offset_same']} of {d['offset_tried']} same; stride-2 gelu: "
        f"{d['gelu_strided_differ']} of {d['gelu_strided_n']} differ",
        (
            offset and strides,
            DEPENDS,
            "on strides, not on alignment: offset (misaligned) data gives the same bits, a "
            "strided view takes another loop (scalar kernels, another reduction order)",
        ),
        (not offset, HOLDS, "an offset alone changed bits"),
        otherwise=(FAILS, "neither offsets nor strides changed bits here"),
    )


_rrelu = Rule(
    ("rrelu_train_varies", "rrelu_eval_fixed", "keras_noise_eval_identity"),
    FAILS,
    "only in train mode: eval() makes RReLU leaky_relu with the mean slope, and Keras's "
    "GaussianNoise is the identity with training=False",
    (DEPENDS, "a noise layer in inference mode was not fixed"),
    lambda c: f"RReLU train: {c.data['rrelu_train_distinct']} distinct outputs; eval: 1",
)
_residual = Rule(
    ("residual_orders_differ", "residual_orders_bounded"),
    HOLDS,
    "in the last bits: the two association orders round at different places; both stay inside "
    "the rounding bound of the exact result",
    (DEPENDS, "the orders gave the same bits, or one left the bound"),
    lambda c: (
        f"{c.data['residual']['differ']} of {c.data['residual']['total']} outputs differ; worst "
        f"{c.data['residual']['worst_of_bound']:.2g} of the bound"
    ),
)


def _seeding(c: Comparison) -> Verdicts:
    extra = ""
    workers = holds(c, "workers_reproduce_with_seed", "workers_distinct_streams")
    gpus = c.claims.get("seeding_two_gpus")
    if gpus is None and c.claims.get("seed_reaches_every_gpu") is not None:
        recorded = [c.claims.get(k) for k in ("seed_reaches_every_gpu", "streams_reproduce")]
        if all(r is not None and r.holds is not None for r in recorded):
            from .result import Claim

            gpus = Claim("recorded on two GPUs", all(r.holds for r in recorded))
            race = c.claims.get("thread_race_varies")
            if race is not None and race.holds:
                extra = (
                    " (recorded); only host threads racing for one generator got other "
                    "draws each run (myth 8)"
                )
    gpu_why = (
        "two GPUs and CUDA streams: not measurable here"
        if gpus is None or gpus.holds is None  # no two CUDA devices in this run
        else "two GPUs and a second stream: same streams" + extra
        if gpus.holds
        else "two GPUs or a second stream gave other streams"
    )
    return decide(
        "DataLoader with 2 workers: reproduced bit for bit after manual_seed; " + gpu_why,
        (
            workers and gpus is not None and gpus.holds is False,
            DEPENDS,
            "workers reproduce, but the GPUs or streams did not",
        ),
        (
            workers,
            FAILS,
            "for DataLoader workers: torch seeds each worker's torch, numpy and random from the "
            "seeded base seed (worker_init_fn is not needed since torch 1.9)",
        ),
        otherwise=(HOLDS, "seeded DataLoader workers did not reproduce"),
    )


_control_flow = Rule(
    ("if_without_tape", "control_flow_gradients_agree"),
    FAILS,
    "an eager Python `if` runs with or without a tape; taped, tf.function/tf.cond and torch "
    "gradients are identical",
    (HOLDS, "the eager `if` or its gradient failed without a tape"),
    lambda c: f"{len(c.data['points'])} points, gradients identical in all four ways",
)


def _higher_order(c: Comparison) -> Verdicts:
    accurate = holds(c, "higher_order_accurate")
    w = c.data["worst_u"]
    return decide(
        f"{c.data['bits_differ']} of {c.data['compared']} values differ in bits; worst "
        f"{w['torch'] / 2.0**-24:.3g} u (torch), {w['tf'] / 2.0**-24:.3g} u (TensorFlow)",
        (
            accurate and c.data["bits_differ"] > 0,
            DEPENDS,
            "in the last bits only, as first derivatives do: both are close to the exact ones",
        ),
        (accurate, FAILS, "same bits and close to the exact derivatives"),
        otherwise=(HOLDS, "a framework's higher derivative left the bound"),
    )


_tolerances = Rule(
    ("tolerances_differ",),
    HOLDS,
    "in float32: TensorFlow's pinv cuts at 10·max(m,n)·eps, ten times torch's and numpy's, "
    "so it drops the 1e-6 singular value they keep",
    (FAILS, "the defaults agreed on this matrix"),
    lambda c: (
        "float32 pinv[2,2]: "
        + ", ".join(
            f"{lib} {c.data['tolerances']['float32'][f'{lib} pinv[2,2]']:.7g}"
            for lib in ("numpy", "torch", "tf")
        )
    ),
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
        "The-motivating-example:-10,000-×-float32(0.0001)",
        cases=({"n": 1000},),
    ),
    Myth(
        2,
        "The same seed (42) in DJL and PyTorch does not give the same random weights.",
        "rng_seeds",
        "02_rng_seeds.ipynb",
        _seed,
        {"seed": 42, "tensorflow": False, "weights": False},
        "More-claims-from-the-articles",
        cases=({"seed": 0}, {"seed": 7}),
    ),
    Myth(
        3,
        "DJL and PyTorch compute mean and standard deviation differently, so normalized data "
        "differs.",
        "djl_normalization",
        "05_djl_vs_pytorch.ipynb",
        _std,
        {"stage": "std"},
        "The-motivating-example:-normalizing-[10,-20,-30,-40,-50]",
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
        cases=({"seed": 3}, {"batch": 32}),
    ),
    Myth(
        7,
        "Forgetting `eval()` with BatchNorm makes results inconsistent across runs.",
        "train_vs_eval",
        "03_train_vs_eval.ipynb",
        _batchnorm,
        {},
        "2.-BatchNorm-in-torch:-batch-statistics-vs-running-statistics",
        cases=({"seed": 3}, {"batch": 32}),
    ),
    Myth(
        8,
        "`torch.manual_seed` does not make multi-GPU or multi-stream runs reproducible.",
        "rng_seeds",
        "02_rng_seeds.ipynb",
        _gpu_seed,
        {"seed": 42, "tensorflow": False, "weights": False},
        "3.-Devices-and-CPU-kernels",
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
        not_here=(
            "no DirectML device (torch-directml's privateuseone, Windows/WSL with a DirectX 12 "
            "GPU) runs here; the lesson run with device='privateuseone' there would measure it"
        ),
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
        cases=({"seed": 7}, {"size": 1000}),
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
    Myth(
        19,
        "DJL's dropout masks differ from PyTorch's for the same seed.",
        "rng_seeds",
        "02_rng_seeds.ipynb",
        _djl_dropout,
        {"seed": 42, "tensorflow": False, "weights": False},
        "More-claims-from-the-articles",
    ),
    Myth(
        20,
        "DJL's default weight initialization differs from PyTorch's.",
        "rng_seeds",
        "02_rng_seeds.ipynb",
        _init,
        {"seed": 42},
        "More-claims-from-the-articles",
    ),
    Myth(
        21,
        "Autograd being on changes a model's inference outputs.",
        "train_vs_eval",
        "03_train_vs_eval.ipynb",
        _autograd_modes,
        {},
        "More-claims-from-the-articles",
    ),
    Myth(
        22,
        "Memory layout, fragmentation or alignment changes results.",
        "summation_order",
        "01_summation_order.ipynb",
        _layout,
        _SUM,
        "More-claims-from-the-articles",
    ),
    Myth(
        23,
        "Noise-injecting activations (RReLU-style) make inference vary.",
        "train_vs_eval",
        "03_train_vs_eval.ipynb",
        _rrelu,
        {},
        "More-claims-from-the-articles",
    ),
    Myth(
        24,
        "Layer execution order and skip connections change results.",
        "summation_order",
        "01_summation_order.ipynb",
        _residual,
        _SUM,
        "More-claims-from-the-articles",
    ),
    Myth(
        25,
        "Seeding is not enough with several GPUs, CUDA streams or DataLoader workers.",
        "rng_seeds",
        "02_rng_seeds.ipynb",
        _seeding,
        {"seed": 42, "tensorflow": False, "weights": False},
        "More-claims-from-the-articles",
    ),
    Myth(
        26,
        "TensorFlow needs a GradientTape for a Python `if`.",
        "tf_vs_torch",
        "06_tensorflow_vs_pytorch.ipynb",
        _control_flow,
        {"op": "control_flow"},
        "More-claims-from-the-articles",
    ),
    Myth(
        27,
        "Higher-order derivatives differ between the frameworks.",
        "tf_vs_torch",
        "06_tensorflow_vs_pytorch.ipynb",
        _higher_order,
        {"op": "higher_order"},
        "More-claims-from-the-articles",
    ),
    Myth(
        28,
        "Default tolerances for near-singular matrices differ.",
        "tf_vs_torch",
        "06_tensorflow_vs_pytorch.ipynb",
        _tolerances,
        {"op": "tolerances"},
        "More-claims-from-the-articles",
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
    if myth.not_here:  # the judge read a stand-in: shown as that, never as the verdict
        return Verdict(
            myth,
            NOT_MEASURED,
            f"not measurable here: {myth.not_here}",
            f"for comparison only (not the claim's device): {number}",
            _source(comparison),
        )
    return Verdict(myth, verdict, why, number, _source(comparison))


def _catalog() -> Mapping[str, Any]:
    """The lesson catalog by name (the lessons registry's), with any lesson module that fails
    to import as None (a run of the broken one then reports why)."""
    from . import lessons

    found = lessons.all_lessons()
    return {**dict.fromkeys(lessons.broken()), **found}


def lesson_catalog() -> Mapping[str, Any]:
    """The lessons present, by name (robust to a lesson that does not import yet)."""
    return _catalog()


def _run_one(lesson: str, **params: Any) -> Comparison:
    """Run one lesson through the registry (which imports its own module first: a broken
    sibling lesson cannot stop it)."""
    from . import lessons

    return lessons.run(lesson, **params)


def _combine(myth: Myth, judged: list[tuple[str, Verdict]]) -> Verdict:
    """One verdict from the verdicts of every case: the same everywhere, or "depends" with
    the cases on each side."""
    cases = tuple((label, v.verdict) for label, v in judged)
    base = judged[0][1]
    measured = [(label, v) for label, v in judged if v.verdict != NOT_MEASURED]
    if len(judged) == 1 or not measured:
        return Verdict(myth, base.verdict, base.why, base.number, base.source, cases)
    first = measured[0][1]
    kinds: dict[str, list[tuple[str, Verdict]]] = {}
    for label, v in measured:
        kinds.setdefault(v.verdict, []).append((label, v))
    if len(kinds) == 1:
        return Verdict(myth, first.verdict, first.why, first.number, first.source, cases)
    why = "the verdict changes with the case: " + "; ".join(
        f"{verdict} for {', '.join(label for label, _ in group)} ({group[0][1].why})"
        for verdict, group in kinds.items()
    )
    return Verdict(myth, DEPENDS, why, first.number, first.source, cases)


def judge_all(
    myths: tuple[Myth, ...] = MYTHS,
    run: Callable[..., Comparison] | None = None,
) -> list[Verdict]:
    """One verdict per myth, judged over every case of the myth (`Myth.case_params`); each
    needed lesson runs once per distinct parameter set.

    ``run(lesson, **params)`` defaults to running the lesson module's ``LESSON``. Myths whose
    lesson is not in the catalog are "not measured: lesson not written yet"; myths whose
    device cannot run here (`Myth.not_here`) are "not measured" with what would measure them.
    """
    if run is None:
        run = _run_one
    known = _catalog()
    runs: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = {}

    def run_case(lesson: str, params: dict[str, Any]) -> Any:
        key = (lesson, tuple(sorted(params.items())))
        if key not in runs:
            try:
                runs[key] = run(lesson, **params)
            except Exception as exc:  # reported in the verdict: the table still renders
                runs[key] = exc
        return runs[key]

    out = []
    for myth in myths:
        if myth.lesson not in known:
            out.append(Verdict(myth, NOT_MEASURED, f"lesson {myth.lesson} is not written yet", ""))
            continue
        if myth.judge is None:
            out.append(judge(myth, None))  # type: ignore[arg-type]
            continue
        judged = []
        for label, params in myth.case_params():
            found = run_case(myth.lesson, params)
            if isinstance(found, Exception):
                v = Verdict(
                    myth,
                    NOT_MEASURED,
                    f"the lesson run failed: {type(found).__name__}: {found}",
                    "",
                )
            else:
                v = judge(myth, found)
            judged.append((label, v))
        out.append(_combine(myth, judged))
    return out


def judge_all_isolated(timeout: float = 900.0) -> list[Verdict]:
    """`judge_all` in a fresh Python process (``python -m fpexplore myths --json``): the
    frameworks the lessons load (torch, TensorFlow, the JVM) leave with it, so the calling
    kernel stays small (one framework-heavy kernel at a time on a 2 GB Binder)."""
    import json
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "fpexplore", "myths", "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise WorkerError(
            f"python -m fpexplore myths failed (exit {done.returncode}): {done.stderr[-2000:]}"
        )
    by_number = {m.number: m for m in MYTHS}
    return [
        Verdict(
            by_number[d["number"]],
            d["verdict"],
            d["why"],
            d["number_text"],
            d["source"],
            tuple(tuple(c) for c in d.get("cases", ())),
        )
        for d in json.loads(done.stdout)
    ]


def command(args: Any) -> int:
    """``fpexplore myths [--json]``: every verdict, as text or JSON."""
    import json

    verdicts = judge_all()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "number": v.myth.number,
                        "verdict": v.verdict,
                        "why": v.why,
                        "number_text": v.number,
                        "source": v.source,
                        "cases": [list(c) for c in v.cases],
                    }
                    for v in verdicts
                ]
            )
        )
    else:
        for v in verdicts:
            print(f"{v.myth.number:2d}. [{v.verdict}] {v.myth.text}\n    {v.why}; {v.number}")
            if v.split:
                print(f"    cases: {v.split}")
    return 0


_COLOURS = {HOLDS: "#2ca02c", FAILS: "#d62728", DEPENDS: "#ff9f1c", NOT_MEASURED: "#888888"}


def verdict_table(verdicts: list[Verdict]) -> str:
    """The verdicts as an HTML table: claim, verdict (and on what), number, where measured."""
    e = html.escape
    rows = "".join(
        "<tr>"
        f"<td>{v.myth.number}</td><td>{e(v.myth.text)}</td>"
        f"<td><b style='color:{_COLOURS[v.verdict]}'>{e(v.verdict)}</b><br>"
        f"<small>{e(v.why)}</small>"
        + (f"<br><small><i>cases: {e(v.split)}</i></small>" if v.split else "")
        + "</td>"
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
        stylesheet()
        + f"<table class='fpx-myths' style='max-width:1000px;table-layout:auto;width:100%;"
        "font-size:13px'>"
        "<tr><th>#</th><th>claim</th><th>verdict</th><th>the number</th><th>measured in</th></tr>"
        f"{rows}</table>"
    )
