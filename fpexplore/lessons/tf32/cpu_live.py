"""The TF32 experiment's matmuls live on this CPU, each reduced-precision mode emulated.

A CPU has no TF32 tensor cores: the float32 product is torch's on this CPU (at a chosen thread
count), and each reduced mode is *input rounding* alone: both inputs rounded to TF32 (10
fraction bits), bfloat16 (7) or float16 (10), then multiplied and summed exactly. Inputs and
sampled entries are the recorded run's, so the errors sit beside the card's on the same numbers.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ... import formats
from ...backends.torch_device import N_THREADS, cpu_threads
from ...params import Options, validate_all
from ...truth import Truth
from . import experiment

#: sizes the CPU part offers (the recorded run goes up to 4096, too slow live here)
SIZES = (64, 128, 256, 512)
#: emulated mode -> the format both inputs are rounded to
EMULATED = {
    "TF32 (inputs rounded to TF32)": "tf32",
    "bf16 (inputs rounded to bfloat16)": "bfloat16",
    "fp16 (inputs rounded to float16)": "binary16",
}
#: which recorded mode each emulated one stands for
RECORDED_MODE = {
    "TF32 (inputs rounded to TF32)": "TF32",
    "bf16 (inputs rounded to bfloat16)": "bf16 autocast",
    "fp16 (inputs rounded to float16)": "fp16 autocast",
}
CPU_MODE = "fp32 on this CPU (torch)"
MODES = (CPU_MODE, *EMULATED)
#: what `matmul_on_cpu` takes, checked as a lesson's parameters are
PARAMS = (
    Options("size", 256, "matrix side", choices=SIZES),
    Options("mode", CPU_MODE, "float32 on this CPU or an emulated mode", choices=MODES),
    N_THREADS,
)


@dataclass(frozen=True)
class Inputs:
    """The recorded run's inputs for one size, the sampled entries and their exact values."""

    a: np.ndarray
    b: np.ndarray
    ii: np.ndarray  # the sampled entries' rows
    jj: np.ndarray  # and columns
    exact: Truth  # the exact dot products there
    scale: np.ndarray  # sum |a_ik b_kj| at each


@functools.lru_cache(maxsize=8)
def inputs(size: int, seed: int = 0) -> Inputs:
    """The recorded run's inputs for ``size`` (cached)."""
    a, b, ii, jj, terms = experiment.matmul_inputs(size, seed)
    return Inputs(a, b, ii, jj, experiment.exact_dots(terms), np.abs(terms).sum(axis=1))


@dataclass(frozen=True)
class CpuMatmul:
    """One mode's matmul on this CPU, measured as the recorded rows are."""

    size: int
    mode: str
    threads: int | None  # None for an emulated mode
    rel_error: float
    max_scaled_error: float
    median_abs_ulp32: float


@functools.lru_cache(maxsize=64)
def matmul_on_cpu(size: int, mode: str, n_threads: int = 1) -> CpuMatmul:
    """One mode's error at ``size`` on this CPU (cached per arguments)."""
    given = {"size": size, "mode": mode, "n_threads": n_threads}
    size, mode, n_threads = validate_all(PARAMS, given, "tf32 matmul_on_cpu").values()
    inp = inputs(size)
    if mode == CPU_MODE:
        with cpu_threads(n_threads) as torch:
            out = (torch.from_numpy(inp.a) @ torch.from_numpy(inp.b)).numpy()
        got = out[inp.ii, inp.jj]
    else:
        fmt = EMULATED[mode]
        a = formats.round_array(inp.a[inp.ii], fmt).astype(np.float64)
        b = formats.round_array(inp.b[:, inp.jj].T, fmt).astype(np.float64)
        # products of short formats are exact in float64
        got = experiment.exact_dots(a * b).round("float64")
    errors = experiment._errors(np.asarray(got), inp.exact, inp.scale)
    return CpuMatmul(size, mode, n_threads if mode == CPU_MODE else None, **errors)
