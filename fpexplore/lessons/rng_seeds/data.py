"""The RNG lesson's data: what its figure, notebook and the myths' judges read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Relation:
    """Whether streams ``a`` and ``b`` come from the same random words (None: one did not run)."""

    related: bool | None
    evidence: str  # what was compared, and how much of it agreed


@dataclass(frozen=True)
class DjlLayers:
    """DJL's seeded layers against torch's, over the seeds the claims are judged on."""

    dropout_same: int  # Dropout mask values bit-identical to torch's
    dropout_total: int
    weights: int  # default-initialized weights compared
    weights_equal_torch: int
    outside_torch_bound: int  # DJL weights outside torch's uniform bound
    sigma: float  # DJL Linear's Gaussian σ
    torch_bound: float  # torch Linear's uniform bound, 1/sqrt(fan_in)


@dataclass(frozen=True)
class MultiGpu:
    """The record of one seed on two GPUs, streams and host threads (`multi_gpu.verdicts`)."""

    cards: list[str]
    torch: str  # the recording machine's torch version
    path: str  # the record's file name
    runs: int  # fresh processes per probe
    distinct: dict[str, int]  # distinct results over the runs, by probe
    gpus_same_stream: bool  # manual_seed gave cuda:0 and cuda:1 the same stream
    streams_reproduce: bool


@dataclass(frozen=True)
class RngData:
    """What the RNG run measured beyond its outcomes (None: that part did not run)."""

    bits_per_float: dict[str, int]  # random bits each stream keeps per float, measured
    relation: Relation  # of the streams ``a`` and ``b``
    matches: dict[str, bool]  # torch's rand32/rand64/randn32/randn64 reproduced bit for bit
    cuda_source: str  # torch CUDA's: the live device, the record's banner, or why neither
    multi_gpu: MultiGpu | None = None
    djl_uniform_equal: bool | None = None  # DJL randomUniform is torch.rand, bit for bit
    djl_layers: DjlLayers | None = None
    #: DJL randomUniform against torch.rand: (values bit-identical, values compared)
    djl_uniform_same: tuple[int, int] | None = None
    flips: Any = None  # `augment.Flips`: DJL's and torchvision's flip decisions
