"""Myths 15-18 and 26-28: graph mode, gradients, softmax, LSTM, control flow, higher
derivatives and pinv tolerances, TensorFlow against torch (`fpexplore.judging`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ...judging import DEPENDS, FAILS, HOLDS, NotMeasured, Rule, Verdicts, decide, holds
from .data import AutogradData, ControlFlowData, GraphData, LstmData, SoftmaxData

if TYPE_CHECKING:
    from ...result import Comparison


def gradient(c: Comparison) -> Verdicts:
    if not isinstance(c.data, AutogradData):
        raise NotMeasured("the tf_vs_torch run has no seed gradients")
    g = c.data.seed_gradients
    return decide(
        str(g),
        (holds(c, "autograd.seed_192"), FAILS, "both give the exact gradient 192, not 24"),
        (g.torch == g.tensorflow == 24, HOLDS, "both give 24"),
        otherwise=(DEPENDS, "on the framework: they do not both give the exact gradient"),
    )


def softmax(c: Comparison) -> Verdicts:
    if not isinstance(c.data, SoftmaxData):
        raise NotMeasured("the tf_vs_torch run has no softmax([1, 2, 3]) example")
    seed = c.data.seed_example
    return decide(
        f"{seed.differ} of {len(seed.torch)} float32 values differ in their bits on this CPU "
        f"({seed.onednn_reason})",
        (
            not holds(c, "softmax.seed_example"),
            HOLDS,
            "at least one framework is more than 2 ULP off",
        ),
        otherwise=(
            DEPENDS,
            "on TensorFlow's CPU path: its oneDNN kernel (on by default only on CPUs with "
            "AVX512_VNNI, AVX512_BF16, AVX_VNNI or AMX; TF_ENABLE_ONEDNN_OPTS switches it) "
            "rounds differently in the last bits, Eigen's matches torch; both stay within "
            "2 ULP of the exact softmax",
        ),
    )


def graph(c: Comparison) -> Verdicts:
    d = c.data
    if not isinstance(d, GraphData):
        raise NotMeasured("the tf_vs_torch run has no graph-mode cases")
    rewritten = holds(c, "graph_mode.division_rewritten")
    restored = holds(c, "graph_mode.rewrite_off_is_eager")
    bounded = holds(c, "graph_mode.xla")
    seeds = d.seeds
    n_seeds = len(seeds)
    xla_lse = len(d.xla_same_seeds["lse"])
    fn_lse = len(d.lse_function_same_seeds)
    share = ", ".join(f"{d.divide_differ[s] / d.divide_n:.0%}" for s in seeds)
    return decide(
        "x / 3.0: tf.function differs from eager in "
        + ", ".join(f"{d.divide_differ[s]}" for s in seeds)
        + f" of {d.divide_n} elements (seeds {', '.join(map(str, seeds))}); "
        f"log-sum-exp: tf.function has eager's bits at {fn_lse} of {n_seeds} seeds, XLA at "
        f"{xla_lse} of {n_seeds}; XLA's x / 3.0 at {len(d.xla_same_seeds['div'])} of "
        f"{n_seeds}",
        (not bounded, HOLDS, "a graph mode is more than a few ULP from the exact value"),
        (
            rewritten and restored,
            DEPENDS,
            "on the graph: Grappler rewrites a division by a constant into a multiply by its "
            "rounded reciprocal, so default tf.function changes the bits of x / 3.0 "
            f"({share} of them at the {n_seeds} seeds); with "
            f"set_experimental_options({{'{d.rewrite_switch}': False}}) "
            "it gives eager's bits; a graph without such a rewrite (the log-sum-exp) keeps "
            "eager's bits; XLA compiles its own fused loops, so whether its bits match "
            "eager's is counted per seed; every mode stays within a few ULP of the exact value",
        ),
        otherwise=(HOLDS, "tf.function changes bits even with the rewrite off"),
    )


def lstm(c: Comparison) -> Verdicts:
    d = c.data
    if not isinstance(d, LstmData):
        raise NotMeasured("the tf_vs_torch run has no LSTM steps")
    mapped = holds(c, "lstm.gate_order")
    worst = max(float(max(v)) for v in d.grad_error_by_distance.values())
    return decide(
        f"input gradients over {d.length} steps: torch and Keras "
        f"differ by up to {d.torch_keras_grad_diff:.3g} (relative to the largest), each within "
        f"{worst:.3g} of the exact gradient; h differs by up to "
        f"{float(max(d.torch_keras_diff_by_step)):.3g}",
        (not mapped, HOLDS, "even with the weights mapped right, the outputs part"),
        (
            mapped and holds(c, "lstm.gradients_rounding"),
            DEPENDS,
            "on the weight mapping: mapped right (gate order, both biases, recurrent "
            "activation), outputs and gradients differ only by rounding, within the lesson's "
            "bound against the exact cell; mapped wrong, they differ by far more",
        ),
        otherwise=(HOLDS, "the gradients part beyond rounding"),
    )


control_flow = Rule(
    ("control_flow.if_without_tape", "control_flow.control_flow_gradients_agree"),
    FAILS,
    "an eager Python `if` runs with or without a tape; taped, tf.function/tf.cond and torch "
    "gradients are identical",
    (HOLDS, "the eager `if` or its gradient failed without a tape"),
    lambda c: f"{len(c.data.points)} points, gradients identical in all four ways",
)


def higher_order(c: Comparison) -> Verdicts:
    accurate = holds(c, "higher_order.higher_order_accurate")
    d = c.data
    w = d.worst_u
    return decide(
        f"{d.bits_differ} of {d.compared} values differ in bits; worst "
        f"{w['torch'] / 2.0**-24:.3g} u (torch), {w['tf'] / 2.0**-24:.3g} u (TensorFlow)",
        (
            accurate and d.bits_differ > 0,
            DEPENDS,
            "in the last bits only, as first derivatives do: both are close to the exact ones",
        ),
        (accurate, FAILS, "same bits and close to the exact derivatives"),
        otherwise=(HOLDS, "a framework's higher derivative left the bound"),
    )


def _cutoff_words(cut: dict[str, float], dtype: str) -> str:
    """A measured cut-off in words: a multiple of max(m, n)·eps of ``dtype`` (m = n = 3) where
    it is one (to the bisection's and the dtype's precision), else the number itself."""
    eps = float(np.finfo(dtype).eps)
    k = cut[dtype] / (3 * eps)
    if abs(k - round(k)) < 1e-3 * max(1.0, k) and round(k) >= 1:
        return f"{cut[dtype]:.3g} = {round(k)}·max(m,n)·eps"
    return f"{cut[dtype]:.3g} (not a multiple of max(m,n)·eps: {k:.3g}×)"


def tolerances(c: Comparison) -> Verdicts:
    """Myth 28 from the pinv cut-offs measured in the run (and each library's signature)."""
    differ = holds(c, "tolerances.tolerances_differ")
    t = c.data.tolerances
    libs = {"numpy": "numpy", "torch": "torch", "tf": "TensorFlow"}
    try:
        cut = {
            lib: {dt: float(t[dt][f"{lib} pinv cutoff"]) for dt in ("float32", "float64")}
            for lib in libs
        }
    except KeyError as exc:
        raise NotMeasured(f"the run measured no pinv cut-off {exc}") from None
    said = "; ".join(
        f"{name} a fixed {cut[lib]['float32']:.3g} whatever the dtype, not max(m,n)·eps"
        if math.isclose(cut[lib]["float32"], cut[lib]["float64"], rel_tol=1e-3)
        else f"{name} {_cutoff_words(cut[lib], 'float32')} in float32, "
        f"{_cutoff_words(cut[lib], 'float64')} in float64"
        for lib, name in libs.items()
    )
    sigs = t.get("signatures", {})
    why = f"pinv's default cut-offs relative to σ_max, measured: {said}" + (
        f" (numpy's signature here: pinv{sigs['numpy']})" if "numpy" in sigs else ""
    )
    return decide(
        "float32 pinv[2,2]: "
        + ", ".join(f"{lib} {t['float32'][f'{lib} pinv[2,2]']:.7g}" for lib in libs),
        (differ, HOLDS, why + "; so in float32 TensorFlow drops the 1e-6 singular value"),
        otherwise=(FAILS, "the defaults agreed on this matrix: " + why),
    )


def symbolic(c: Comparison) -> Verdicts:
    """Myth: TensorFlow's eager gradients are symbolic differentiation. tf.GradientTape records
    the operations as they run and applies each op's registered gradient to the recorded
    values (reverse-mode automatic differentiation); no derivative expression is formed."""
    if not isinstance(c.data, ControlFlowData):
        raise NotMeasured("the tf_vs_torch run has no control-flow gradients")
    taped = holds(c, "control_flow.if_without_tape", "control_flow.control_flow_gradients_agree")
    return decide(
        f"gradient through a Python `if` at {len(c.data.points)} points: the taped gradient "
        "is the gradient of the branch that ran, bit for bit",
        (
            taped,
            FAILS,
            "GradientTape is automatic differentiation: it records only the operations that "
            "ran (one branch of a Python `if`) and applies each op's registered gradient to "
            "the recorded values, the same numbers as torch's autograd; no expression of the "
            "derivative is ever built",
        ),
        otherwise=(HOLDS, "the taped gradient was not that of the branch that ran"),
    )
