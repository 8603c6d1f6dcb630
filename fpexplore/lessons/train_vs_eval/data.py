"""The train/eval lesson's data: what its figure, notebook and the myths' judges read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class BnRuns:
    """torch's BatchNorm1d called again in train mode, eval() forgotten."""

    train_same_batch_distinct: int  # distinct outputs of the same batch over train_runs calls
    train_runs: int
    train_half_batch_max_gap: float | None  # half the batch alone vs in the whole (None: n < 4)
    eval_before_after_max_gap: float  # eval() before vs after those train-mode calls


@dataclass(frozen=True)
class AutogradModes:
    """Forwards under grad, no_grad and inference_mode: a small conv model (seeds whose three
    forwards gave the same bits) and a transformer encoder layer, live and from a GPU record."""

    same: int  # the conv model's seeds with the same bits in all three modes
    seeds: int
    #: the transformer layer on this CPU, per seed (`modes.transformer_modes`' rows)
    transformer: list[dict[str, Any]] = field(default_factory=list)
    gpu_rows: list[dict[str, Any]] | None = None  # the same on CUDA, recorded (None: no record)
    gpu_where: str = ""  # the record in words, or how to make it


@dataclass(frozen=True)
class TrainEvalData:
    """What the train/eval run measured beyond its outcomes (None: that part did not run)."""

    train_runs: np.ndarray | None = None  # the dropout MLP's output, run by run, train()
    eval_runs: np.ndarray | None = None  # the same, eval()
    kept_fraction: float | None = None  # of the activations one dropout call kept
    dropout_scale: float | None = None  # what the kept activations are multiplied by
    autograd_modes: AutogradModes | None = None
    rrelu_train_distinct: int | None = None  # distinct RReLU outputs in train mode
    bn_x: np.ndarray | None = None  # the BatchNorm layer's input
    bn_ulp: dict[str, float] | None = None  # max |error| in ULP, by framework and mode
    bn_bound_by_mode: dict[str, float] | None = None  # the rounding bound in ULP, by mode
    bn_runs: BnRuns | None = None
    torch_running_var: np.ndarray | None = None  # after one train-mode call
    keras_moving_var: np.ndarray | None = None  # after one training=True call
