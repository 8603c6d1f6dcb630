"""The data of a `djl_normalization` run: every stage that ran adds its part (the rest None)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Classic:
    """(x - mean) / std of the classic example, per library (None where it did not run)."""

    x: np.ndarray
    numpy: np.ndarray
    tensorflow: np.ndarray | None = None
    torch: np.ndarray | None = None  # x.std(): unbiased (N-1)
    torch_fixed: np.ndarray | None = None  # x.std(correction=0)
    djl: np.ndarray | None = None  # the population-std idiom

    def bars(self) -> dict[str, np.ndarray]:
        """What the figures draw, by name (those that ran)."""
        named = ("torch", "numpy", "djl", "torch_fixed")
        return {k: getattr(self, k) for k in named if getattr(self, k) is not None}


@dataclass(frozen=True)
class Levels:
    """Error against the exact values, in grey levels."""

    max_abs_levels: float
    mean_levels: float
    min_levels: float  # the most negative signed error
    max_levels: float


@dataclass(frozen=True)
class BitEqual:
    """DJL's float32 resize against this torch's interpolate, bit for bit."""

    differing: int  # values that differ
    values: int
    max_ulp: float
    scale: str  # e.g. "downscale ×3.2"


@dataclass(frozen=True)
class Wrapped:
    """Values of DJL's float resize outside (-1, 256) that its uint8 cast wraps."""

    count: int
    max_error_levels: float


@dataclass(frozen=True)
class DjlData:
    """What the figure, notebook 05, the myths and the tests read."""

    heat: np.ndarray | None = None  # the shown stage's |difference| map
    heat_title: str = ""
    djl_unavailable: str | None = None  # why DJL did not run (with the fix)
    classic: Classic | None = None  # std stage
    decode_table: list[dict[str, Any]] | None = None  # decoders vs PIL, every sample image
    resize_shape: tuple[int, int] | None = None
    levels: dict[str, Levels] | None = None  # each resize's error, by name
    resize_bit_equal: BitEqual | None = None
    wrapped: Wrapped | None = None  # only where bicubic overshoots
    offsets: dict[str, tuple[int, int]] | None = None  # centre crop's (top, left): floor, round
    #: each pipeline's first stage differing from torchvision's (a `pipelines.compare` row)
    divergence: dict[str, dict[str, Any] | None] | None = None
    stage_table: list[dict[str, Any]] | None = None  # every pipeline and stage vs torchvision
    pipeline_max_abs_error: dict[str, float] | None = None  # against the exact pipeline
