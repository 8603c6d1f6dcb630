"""Myths 6, 7, 21 and 23: dropout and BatchNorm in train and eval mode, autograd modes and
noise layers (`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...judging import (
    DEPENDS,
    FAILS,
    HOLDS,
    NotMeasured,
    Rule,
    Verdicts,
    decide,
    differ_count,
    holds,
)

if TYPE_CHECKING:
    from ...result import Comparison


dropout = Rule(
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
    runs = c.data.bn_runs
    if runs is None:
        raise NotMeasured("the train_vs_eval run has no repeated train-mode BatchNorm runs")
    half = runs.train_half_batch_max_gap
    return (
        f"train mode, same batch, {runs.train_runs} runs: "
        f"{runs.train_same_batch_distinct} distinct output(s)"
        + (f"; same samples in half the batch: up to {half:.3g} apart" if half is not None else "")
        + f"; eval() before vs after those calls: up to {runs.eval_before_after_max_gap:.3g}"
    )


batchnorm = Rule(
    ("bn_train_uses_batch_stats", "bn_train_repeats", "bn_forgotten_eval_moves_stats"),
    DEPENDS,
    "on what a run is: in train mode the same batch gives the same bits run after run, but a "
    "sample's output depends on the batch it comes in, and every forgotten train-mode call "
    "moves the running statistics that eval() uses later",
    (HOLDS, "train mode gave different outputs for the same batch"),
    _bn_runs_number,
)


def _modes_rows(rows: list[dict[str, Any]]) -> str:
    moved = sum(r["grad_vs_no_grad"] > 0 for r in rows)
    same = sum(r["no_grad_vs_inference"] == 0 for r in rows)
    worst = max((r["max_abs_diff"] for r in rows), default=0.0)
    return (
        f"grad vs no_grad differ in {moved} of {len(rows)} seeds (max |diff| {worst:.2g}), "
        f"no_grad = inference_mode in {same} of {len(rows)}"
    )


def autograd_modes(c: Comparison) -> Verdicts:
    """Myth 21 on two models: a conv/GELU/LayerNorm model and a transformer encoder layer
    (whose fused fast path runs only without grad), live on this CPU and from the GPU record."""
    conv_same = holds(c, "autograd_modes_same_bits")
    layer = holds(c, "transformer_grad_changes_bits")
    d = c.data.autograd_modes
    if d is None or not d.transformer:
        raise NotMeasured("the train_vs_eval run ran no transformer layer under the modes")
    gpu = c.claims.get("transformer_grad_changes_bits_cuda")
    gpu_state = "not checked" if gpu is None else gpu.state
    cuda = (
        f"CUDA ({d.gpu_where}): {_modes_rows(d.gpu_rows)}"
        if d.gpu_rows
        else f"CUDA: not checked ({d.gpu_where or 'no record'})"
    )
    number = (
        f"conv model: same bits in all three modes for {d.same} of {d.seeds} seeds; "
        f"TransformerEncoderLayer(64, 4, 128), this CPU: {_modes_rows(d.transformer)}; {cuda}"
    )
    on_gpu = {
        "holds": ", and on CUDA (recorded)",
        "does not hold": "; on CUDA (recorded) it did not",
    }.get(gpu_state, "; CUDA not checked until recorded")
    return decide(
        number,
        (
            layer and conv_same,
            DEPENDS,
            "on the model: a layer with a fused inference fast path (nn.TransformerEncoderLayer "
            "in eval(), taken only when no grad is needed) gives other bits with autograd on, "
            f"on this CPU{on_gpu}; the conv/GELU/LayerNorm model gives the same bits in all "
            "three modes; no_grad and inference_mode agree",
        ),
        (layer, HOLDS, "autograd on changed both models' bits" + on_gpu),
        (not conv_same, HOLDS, "a forward gave other bits with autograd on"),
        otherwise=(
            FAILS,
            "grad mode only decided whether a graph is recorded: neither model's forward "
            "changed" + on_gpu,
        ),
    )


rrelu = Rule(
    ("rrelu_train_varies", "rrelu_eval_fixed", "keras_noise_eval_identity"),
    FAILS,
    "only in train mode: eval() makes RReLU leaky_relu with the mean slope, and Keras's "
    "GaussianNoise is the identity with training=False",
    (DEPENDS, "a noise layer in inference mode was not fixed"),
    lambda c: f"RReLU train: {c.data.rrelu_train_distinct} distinct outputs; eval: 1",
)
