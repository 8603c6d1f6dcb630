"""The data of a `djl_normalization` run: every stage that ran adds its part (the rest None)."""

from __future__ import annotations

from dataclasses import dataclass

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
class DecodeRow:
    """One sample image: each decoder's max |difference| from PIL in levels (None: not run;
    TensorFlow's only for JPEGs)."""

    image: str
    tf_vs_pil: int | None = None  # decode_jpeg's default dct_method
    tf_accurate_vs_pil: int | None = None  # dct_method='INTEGER_ACCURATE'
    imageio_vs_pil: int | None = None  # DJL's ImageIO


@dataclass(frozen=True)
class Diff:
    """Two arrays compared (`pipelines.compare`); ``pipeline`` and ``stage`` name a pipeline's
    stage compared with torchvision's."""

    same_shape: bool
    bit_equal: bool
    shapes: tuple[tuple[int, ...], tuple[int, ...]]
    max_abs_diff: float
    max_ulp: int | None  # float32 arrays only
    fraction_differing: float
    pipeline: str = ""
    stage: str = ""


@dataclass(frozen=True)
class DjlData:
    """What the figure, notebook 05, the myths and the tests read."""

    heat: np.ndarray | None = None  # the shown stage's |difference| map
    heat_title: str = ""
    djl_unavailable: str | None = None  # why DJL did not run (with the fix)
    classic: Classic | None = None  # std stage
    decode_table: list[DecodeRow] | None = None  # decoders vs PIL, every sample image
    resize_shape: tuple[int, int] | None = None
    levels: dict[str, Levels] | None = None  # each resize's error, by name
    resize_bit_equal: BitEqual | None = None
    wrapped: Wrapped | None = None  # only where bicubic overshoots
    offsets: dict[str, tuple[int, int]] | None = None  # centre crop's (top, left): floor, round
    #: each pipeline's first stage differing from torchvision's, by name (`first_divergence`)
    divergence: dict[str, Diff | None] | None = None
    stage_table: list[Diff] | None = None  # every pipeline and stage vs torchvision
    pipeline_max_abs_error: dict[str, float] | None = None  # against the exact pipeline

    def first_divergence(self, pipeline: str) -> Diff | None:
        """The first stage of ``pipeline`` that differs from torchvision's (None: none does);
        a pipeline this run did not compare raises KeyError naming those it did."""
        known = self.divergence or {}
        if pipeline not in known:
            raise KeyError(f"no pipeline {pipeline!r}; this run compared: {', '.join(known)}")
        return known[pipeline]
