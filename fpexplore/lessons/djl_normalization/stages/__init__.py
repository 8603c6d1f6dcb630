"""The stages of `djl_normalization`, one function each: the classic std example, decode,
resize, centre crop, ToTensor and Normalize.

Each stage runs DJL (in its worker), torch/torchvision, numpy and TensorFlow on the same input
bits and returns ``(truth, outcomes, claims, data)``. Outcomes are thunks: measuring against
the exact truth is the slow part, so only the stage on show is measured. ``djl`` is the DJL
backend module, or the reason (with the fixing command) that it cannot run.
"""

from ....truth import once
from .common import StageResult, Thunks, measured, missing, nearest
from .crop import crop_stage
from .decode import decode_stage
from .normalize import normalize_stage
from .resize import resize_stage, resize_truth
from .std import std_stage
from .to_tensor import to_tensor_stage

__all__ = ["StageResult", "Thunks", "crop_stage", "decode_stage", "measured", "missing", "nearest"]
__all__ += ["normalize_stage", "once", "resize_stage", "resize_truth", "std_stage"]
__all__ += ["to_tensor_stage"]
