"""The LibTorch lesson's data: what its notebook, tests and the myths' judges read."""

from __future__ import annotations

from dataclasses import dataclass, field

from .inputs import Inputs


@dataclass(frozen=True)
class MatmulRow:
    """One n of the CUDA matmuls: each kernel's max |error| in ULPs against the exact product."""

    n: int
    naive_fma_ulp: float
    naive_nofma_ulp: float
    cublas_ulp: float
    cublas_is_naive_fma: bool  # cuBLAS gave the naive FMA kernel's bits
    ms: dict[str, float]  # each kernel's time, by variant
    truth_rows: int | str  # the rows measured against the exact product: "all" or how many


@dataclass(frozen=True)
class SumRow:
    """One CUDA sum variant over repeated runs: distinct results and their ULP error range."""

    variant: str
    distinct: int
    runs: int
    ulp_min: float
    ulp_max: float
    ms: float


@dataclass(frozen=True)
class CudaData:
    """The custom CUDA kernels' run (``source`` None: neither live nor recorded)."""

    source: str | None  # "framework" (live) or "recorded"
    banner: str  # where the run comes from, or why there is none
    card: str | None = None
    matmul_table: list[MatmulRow] = field(default_factory=list)  # one row per n
    sum_table: list[SumRow] = field(default_factory=list)  # one row per sum variant


@dataclass(frozen=True)
class LibtorchData:
    """What the LibTorch run measured beyond its outcomes."""

    threads: tuple[int, ...]  # the intra-op thread counts both sides ran at
    inputs: Inputs  # the input bits both sides ran on
    sum_threads_differ: bool  # the emulated 1- and 2-thread sums differ
    cuda: CudaData
