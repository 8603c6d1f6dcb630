"""The data of each section (one value of ``op``): `SectionData` and one subclass per op."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fractions import Fraction

    import numpy as np


class SectionData:
    """The base of every section's data (the lesson's declared type)."""


@dataclass(frozen=True)
class NotRun(SectionData):
    """A section that did not run: the missing framework and its fix, or what raised."""

    missing: str | None = None
    fix: str | None = None
    raised: str | None = None  # "<framework>: <exception type>"


@dataclass(frozen=True)
class SeedExample:
    """softmax([1, 2, 3]) (or log_softmax) in float32 in both frameworks."""

    torch: Any
    tensorflow: Any
    onednn_reason: str
    differ: int  # elements whose bits differ


@dataclass(frozen=True)
class SoftmaxData(SectionData):
    """softmax and log_softmax."""

    seed_example: SeedExample
    max_abs_ulp: dict[str, float]  # by row


@dataclass(frozen=True)
class Losses:
    """Cross-entropy per sample: the exact loss (float64) and each row's."""

    truth: np.ndarray
    torch: np.ndarray  # F.cross_entropy from logits
    keras_probs: np.ndarray  # Keras from probabilities (its default)
    keras_logits: np.ndarray  # Keras with from_logits=True


@dataclass(frozen=True)
class CrossEntropyData(SectionData):
    """Cross-entropy of confident logits."""

    losses: Losses


@dataclass(frozen=True)
class GeluData(SectionData):
    """gelu's erf and tanh forms."""

    max_abs_ulp: dict[str, float]


@dataclass(frozen=True)
class LayerNormData(SectionData):
    """Layer normalization with each framework's epsilon."""

    max_abs_ulp: dict[str, float]


@dataclass(frozen=True)
class ConvData(SectionData):
    """'same' padding at stride 2."""

    pads_stride2: tuple[int, int]  # TensorFlow's (before, after) padding at stride 2


@dataclass(frozen=True)
class AdamData(SectionData):
    """Adam's weights after one step and after ``length`` steps."""

    max_abs_ulp: dict[int, dict[str, float]]  # by step count, then row


@dataclass(frozen=True)
class SeedGradients:
    """d/dx (x**2)**3 at x = 2."""

    torch: float
    tensorflow: float
    exact: Fraction

    def __str__(self) -> str:
        return f"torch {self.torch:g}, TensorFlow {self.tensorflow:g}, exact 6·x⁵ = {self.exact}"


@dataclass(frozen=True)
class AutogradData(SectionData):
    """Gradients through a chain of ``length`` operations."""

    seed_gradients: SeedGradients
    lengths: list[int]
    rel_by_length: dict[str, list[float]]
    custom_op: Any = None  # `custom_op.CustomOp`: the hand-written softplus backward


@dataclass(frozen=True)
class LstmData(SectionData):
    """LSTM outputs and input gradients against the mpmath cell."""

    length: int
    h_error_by_step: dict[str, np.ndarray]  # max |h_t - exact|, by framework
    grad_error_by_distance: dict[str, np.ndarray]  # by steps travelled back
    torch_keras_diff_by_step: np.ndarray
    # |torch - Keras| of the input gradients, relative to the largest exact gradient
    torch_keras_grad_diff: float


@dataclass(frozen=True)
class GraphData(SectionData):
    """Eager, tf.function, XLA and torch on x / 3.0 and log-sum-exp."""

    seeds: list[int]
    divide_n: int  # elements of x / 3.0
    divide_differ: dict[int, int]  # by seed: elements where tf.function differs from eager
    lse_function_same_seeds: list[int]
    xla_same_seeds: dict[str, list[int]]  # "div" and "lse"
    rewrite_switch: str  # Grappler's option that rewrites the division


@dataclass(frozen=True)
class ReduceSumData(SectionData):
    """torch.sum and tf.reduce_sum by thread count."""

    torch_live: dict[int, Any]
    tf_live: Any
    tf_matches_threads: list[int]  # thread counts whose emulation equals tf_live


@dataclass(frozen=True)
class ControlFlowData(SectionData):
    """Gradients through a Python ``if``."""

    points: list[float]


@dataclass(frozen=True)
class HigherOrderData(SectionData):
    """Second and third derivatives."""

    bits_differ: int
    compared: int
    worst_u: dict[str, float]  # scaled error, "torch" and "tf"


@dataclass(frozen=True)
class TolerancesData(SectionData):
    """Rank, pinv and lstsq on a near-singular matrix."""

    tolerances: dict[str, dict[str, Any]]  # by dtype, then "<lib> <what>"
