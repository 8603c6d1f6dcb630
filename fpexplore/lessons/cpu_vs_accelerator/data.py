"""The data of a `cpu_vs_accelerator` run. Sides are keyed by their label (device, mode)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Sums:
    """The two float32 sums of a side (or their exact values)."""

    sum_uniform: float  # of the settings' sum_n uniform[0,1) floats
    sum_tenthousand: float  # of 10000 x float32(0.0001)


@dataclass(frozen=True)
class ReluEdges:
    """relu on the edge values (−0.0, NaNs, infinities...) on this CPU and recorded devices."""

    cases_per_device: int
    devices: list[str]
    neg_zero: dict[str, str]  # relu(−0.0) per device: "-0.0" or "+0.0"
    split: list[dict[str, Any]]  # the cases where devices or spellings disagree


@dataclass(frozen=True)
class AcceleratorData:
    """What the figure, notebook 08, the myths and the tests read."""

    banner: str  # what ran where
    ran_on: list[str]
    settings: dict[str, Any]  # the experiment's sizes (the record's, when recorded)
    steps: list[int]  # 0 to chain_steps
    drift: dict[str, list[float]]  # ||x_k - exact_k|| / ||exact_k|| per chain step, per side
    gap: dict[str, list[float]]  # ||accelerator - CPU|| / ||exact|| per step, per accelerator
    sums: dict[str, Sums]
    truth_sums: Sums
    conv_error: dict[str, float]  # ||got - exact|| / ||exact|| of the sampled conv outputs
    relu_edges: ReluEdges
    #: sampled conv outputs whose bits differ from the CPU's, by accelerator side
    conv_vs_cpu: dict[str, int] = field(default_factory=dict)
    conv_cpu: str = ""  # the CPU side they are compared with ('' when none ran)
    conv_samples: int = 0  # sampled conv outputs per side
    #: flush-to-zero and fallback kernels on this CPU (`cpu_modes`: "flush", "fallback",
    #: "counts"); None without torch
    cpu_modes: dict[str, Any] | None = None
