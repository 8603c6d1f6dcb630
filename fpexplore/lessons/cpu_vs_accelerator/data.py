"""The data of a `cpu_vs_accelerator` run. Sides are keyed by their label (device, mode)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class Settings:
    """The experiment's sizes and seed, as a record keeps them."""

    sum_n: int = 10**6
    chain_steps: int = 100
    chain_dim: int = 64
    chain_batch: int = 2
    conv: tuple[int, ...] = (2, 64, 32, 32)  # 64 channels: cuDNN's default conv used TF32 (H200)
    relu_n: int = 10**6
    seed: int = 0

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Settings:
        return cls(**{f.name: d[f.name] for f in fields(cls)} | {"conv": tuple(d["conv"])})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"conv": list(self.conv)}


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
    settings: Settings  # the experiment's sizes (the record's, when recorded)
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
