"""The training-drift lesson's data: what its figure, notebook and the myths' judge read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class StudyRow:
    """One seed and perturbation of the stability study: `growth.fit_rate` of its distance."""

    seed: int
    pair: str  # the perturbation (`growth.STUDY_PAIRS`)
    rate: float | None  # growth per step (natural log); None: too few steps to fit
    apart_at: int | None  # the step the runs are `growth.APART` of the norm apart (None: never)
    max_share: float  # the largest distance, as a share of the weights' norm
    final: float
    start: float


@dataclass(frozen=True)
class Study:
    """The stability study: each model's rows (every seed and perturbation)."""

    logistic: tuple[StudyRow, ...] = ()
    mlp: tuple[StudyRow, ...] = ()
    rnn: tuple[StudyRow, ...] = ()

    @classmethod
    def from_dict(cls, d: dict[str, list[dict[str, Any]]]) -> Study:
        """The study as `growth.study` keeps it (per model, its rows as JSON objects)."""
        return cls(**{m: tuple(StudyRow(**r) for r in rows) for m, rows in d.items()})


@dataclass(frozen=True)
class Diversity:
    """The spread of a set of trained models (`table.diversity`): how many, their mean test
    accuracy and its std, mean pairwise disagreement and weight distance over the norm."""

    models: int
    accuracy: float
    acc_std: float
    disagreement: float
    weight_distance: float


@dataclass(frozen=True)
class Trajectories:
    """Two runs of "the same" training, step by step, against the reference trajectory
    (mpmath over the first ``reference_steps``, float64 beyond them)."""

    first: str  # the first run (numpy float32)
    second: str  # what the second run is
    norm: np.ndarray  # the float64 run's weight norm, per step
    base_truth: np.ndarray  # the first run's distance from the reference, per step
    f64_truth: np.ndarray  # float64's own distance from mpmath, over the reference steps
    reference_steps: int
    certified_gap: float  # mpmath at two precisions: how far apart (certifies the reference)
    loss_base: np.ndarray
    loss_f64: np.ndarray
    #: the step from which float64's estimated error (its measured error, grown at the
    #: first run's fitted rate) passes 1% of the weights' norm: no reference beyond (None: never)
    horizon: int | None
    left_truth_at: int | None  # the first run is 1% of the norm away from the reference
    accuracy: float  # the first run's test accuracy at the end
    # the second run (None where it could not run here)
    pair: np.ndarray | None = None  # distance between the two runs, per step
    other_truth: np.ndarray | None = None
    loss_other: np.ndarray | None = None
    checkpoints: np.ndarray | None = None
    flips: np.ndarray | None = None  # share of test predictions that differ, at checkpoints
    growth: dict[str, Any] | None = None  # `growth.fit_rate` of ``pair``


@dataclass(frozen=True)
class DriftData:
    """One run of the lesson: the trajectories at its parameters, the stability study and the
    diversity table (fixed settings, several seeds)."""

    trajectories: Trajectories
    study: Study = field(default_factory=Study)
    #: per source: `table.diversity` per base seed ("framework" needs torch; "GPU atomics"
    #: comes from the GPU record)
    table: dict[str, list[Diversity]] = field(default_factory=dict)
    gpu_where: str = ""  # the GPU record in words, or how to make it
