"""Myths 6, 7, 21 and 23: dropout and BatchNorm in train and eval mode, autograd modes and
noise layers (`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging import DEPENDS, FAILS, HOLDS, NotMeasured, Rule, differ_count

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


autograd_modes = Rule(
    ("autograd_modes_same_bits",),
    FAILS,
    "grad mode only decides whether a graph is recorded; the forward kernels are the same",
    (HOLDS, "a forward gave other bits with autograd on"),
    lambda c: (
        f"same bits under grad, no_grad, inference_mode for "
        f"{c.data.autograd_modes.same} of {c.data.autograd_modes.seeds} seeds"
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
