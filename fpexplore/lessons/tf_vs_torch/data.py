"""The data of each section (one value of ``op``): `SectionData` and one subclass per op."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fractions import Fraction

    import numpy as np

    from ...truth import Truth


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
    truth: Truth
    onednn: bool  # whether TensorFlow's oneDNN kernels are on in this process
    onednn_reason: str
    differ: int  # elements whose bits differ


@dataclass(frozen=True)
class SoftmaxData(SectionData):
    """softmax and log_softmax."""

    seed_example: SeedExample
    x: np.ndarray  # the logits both frameworks got
    max_abs_ulp: dict[str, float]  # by row
    naive: np.ndarray  # the textbook formula's result


@dataclass(frozen=True)
class CrossEntropyData(SectionData):
    """Cross-entropy of confident logits."""

    logits: np.ndarray
    target: np.ndarray
    losses: dict[str, np.ndarray]  # per sample: "truth" and each row
    epsilon: float  # Keras's backend epsilon
    max_abs_ulp: dict[str, float]


@dataclass(frozen=True)
class GeluData(SectionData):
    """gelu's erf and tanh forms."""

    x: np.ndarray
    values: dict[str, np.ndarray]  # by row
    max_abs_ulp: dict[str, float]
    keras_ops_vs_tanh_ulp: float  # keras.ops.gelu against the exact tanh form
    formula_gap: float  # largest |tanh form - erf form|
    bound: float  # 8 u max|gelu|


@dataclass(frozen=True)
class LayerNormData(SectionData):
    """Layer normalization with each framework's epsilon."""

    x: np.ndarray
    max_abs_ulp: dict[str, float]
    bound: float  # the largest rounding bound, in ULPs
    row_variance: float  # mean variance of a row


@dataclass(frozen=True)
class ConvData(SectionData):
    """'same' padding at stride 2."""

    pads_stride2: tuple[int, int]  # TensorFlow's (before, after) padding at stride 2
    extra: dict[str, Any]  # where each puts the extra row and column of an even kernel
    refused: str  # torch's refusal of padding='same' at stride 2
    outputs: dict[str, np.ndarray]


@dataclass(frozen=True)
class AdamData(SectionData):
    """Adam's weights after one step and after ``length`` steps."""

    steps: list[int]
    max_abs_ulp: dict[int, dict[str, float]]  # by step count, then row
    w0: np.ndarray
    gradients: list[np.ndarray]


@dataclass(frozen=True)
class SeedGradients:
    """d/dx (x**2)**3 at x = 2."""

    torch: float
    tensorflow: float
    exact: Fraction


@dataclass(frozen=True)
class AutogradData(SectionData):
    """Gradients through a chain of ``length`` operations."""

    seed_gradients: SeedGradients
    lengths: list[int]
    ulp_by_length: dict[str, list[float]]
    rel_by_length: dict[str, list[float]]
    seed_truth: Truth


@dataclass(frozen=True)
class LstmData(SectionData):
    """LSTM outputs and input gradients against the mpmath cell."""

    length: int
    h_error_by_step: dict[str, np.ndarray]  # max |h_t - exact|, by framework
    grad_error_by_distance: dict[str, np.ndarray]  # by steps travelled back
    torch_keras_diff_by_step: np.ndarray
    # |torch - Keras| of the input gradients, relative to the largest exact gradient
    torch_keras_grad_diff: float
    recurrent_activation: str  # Keras's default


@dataclass(frozen=True)
class GraphData(SectionData):
    """Eager, tf.function, XLA and torch on x / 3.0 and log-sum-exp."""

    values: dict[str, np.ndarray]
    max_abs_ulp: dict[str, float]
    compile_error: str  # why torch.compile did not run ("" if it did or was not asked)
    seeds: list[int]
    divide_n: int  # elements of x / 3.0
    divide_differ: dict[int, int]  # by seed: elements where tf.function differs from eager
    divide_differ_arithmetic_off: dict[int, int]  # the same with only that optimizer off
    lse_function_same_seeds: list[int]
    xla_same_seeds: dict[str, list[int]]  # "div" and "lse"
    lse_max_abs_ulp: dict[int, dict[str, float]]  # by seed, then mode
    rewrite_switch: str  # Grappler's option that rewrites the division


@dataclass(frozen=True)
class ReduceSumData(SectionData):
    """torch.sum and tf.reduce_sum, live and emulated, by thread count."""

    torch_live: dict[int, Any]
    torch_emulated: dict[int, Any]
    tf_emulated: dict[int, Any]
    tf_live: Any
    tf_matches_threads: list[int]  # thread counts whose emulation equals tf_live
    see_also: str = "notebooks/01_summation_order.ipynb and fpexplore.orders.emulate"


@dataclass(frozen=True)
class ControlFlowData(SectionData):
    """Gradients through a Python ``if``."""

    points: list[float]
    gradients: dict[str, list[float]]  # by way of taking it, and "exact"


@dataclass(frozen=True)
class HigherOrderData(SectionData):
    """Second and third derivatives."""

    higher_order: list[dict[str, Any]]  # a row per function and order
    bits_differ: int
    compared: int
    worst_u: dict[str, float]  # scaled error, "torch" and "tf"


@dataclass(frozen=True)
class TolerancesData(SectionData):
    """Rank, pinv and lstsq on a near-singular matrix."""

    tolerances: dict[str, dict[str, Any]]  # by dtype, then "<lib> <what>"
