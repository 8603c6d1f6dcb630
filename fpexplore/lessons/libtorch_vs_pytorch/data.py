"""The LibTorch lesson's data: what its notebook, tests and the myths' judges read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .inputs import Inputs


@dataclass(frozen=True)
class CudaData:
    """The custom CUDA kernels' run (``source`` None: neither live nor recorded)."""

    source: str | None  # "framework" (live) or "recorded"
    banner: str  # where the run comes from, or why there is none
    card: str | None = None
    matmul_table: list[dict[str, Any]] = field(default_factory=list)  # one row per n
    sum_table: list[dict[str, Any]] = field(default_factory=list)  # one row per sum variant


@dataclass(frozen=True)
class LibtorchData:
    """What the LibTorch run measured beyond its outcomes."""

    threads: tuple[int, ...]  # the intra-op thread counts both sides ran at
    inputs: Inputs  # the input bits both sides ran on
    sum_threads_differ: bool  # the emulated 1- and 2-thread sums differ
    cuda: CudaData
