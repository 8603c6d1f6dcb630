"""The image pipelines `djl_normalization` compares, stage by stage, on the same file.

Each pipeline returns ``{stage: array}`` for the stages in `STAGES`: HWC levels for decode,
resize and crop; CHW float32 for to_tensor and normalize. Frameworks import inside the
functions (torch and TensorFlow in this process; DJL in its worker process).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ... import backends
from ...formats import ulp_distance
from .data import Diff

STAGES = ("decode", "resize", "center_crop", "to_tensor", "normalize")
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def short_edge_shape(h: int, w: int, size: int) -> tuple[int, int]:
    """torchvision's Resize(int) output shape: the short edge becomes ``size``."""
    if h <= w:
        return size, int(size * w / h)
    return int(size * h / w), size


def crop_offsets(h: int, w: int, crop: int) -> dict[str, tuple[int, int]]:
    """(top, left) of a centre crop: DJL floors (Java int division), torchvision rounds
    half to even (Python's round)."""
    return {
        "floor": ((h - crop) // 2, (w - crop) // 2),
        "round": (round((h - crop) / 2.0), round((w - crop) / 2.0)),
    }


def _stages(*outputs: Any) -> dict[str, Any]:
    """``{stage: output}`` for the outputs in `STAGES` order, as numpy arrays."""
    return {stage: np.asarray(a) for stage, a in zip(STAGES, outputs, strict=True)}


def pil_decode(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def torchvision_pipeline(path: Path, size: int, crop: int, interp: str) -> dict[str, Any]:
    """PIL decode -> transforms.Resize(size) -> CenterCrop(crop) -> ToTensor -> Normalize."""
    from PIL import Image

    T = backends.load("torchvision").transforms

    mode = T.InterpolationMode[interp.upper()]
    with Image.open(path) as im:
        pil = im.convert("RGB")
    resized = T.Resize(size, interpolation=mode)(pil)
    cropped = T.CenterCrop(crop)(resized)
    tensor = T.ToTensor()(cropped)
    normalized = T.Normalize(MEAN.tolist(), STD.tolist())(tensor.clone())
    return _stages(pil, resized, cropped, tensor.numpy(), normalized.numpy())


def numpy_pipeline(decoded: np.ndarray, resized: np.ndarray, crop: int) -> dict[str, Any]:
    """numpy on torchvision's decoded and resized pixels (numpy has no resize): crop at the
    rounded offset, x.astype(float32) / 255, then (t - mean) / std in float32."""
    h, w = resized.shape[:2]
    top, left = crop_offsets(h, w, crop)["round"]
    cropped = resized[top : top + crop, left : left + crop]
    tensor = cropped.transpose(2, 0, 1).astype(np.float32) / np.float32(255)
    normalized = (tensor - MEAN[:, None, None]) / STD[:, None, None]
    return _stages(decoded, resized, cropped, tensor, normalized)


def tf_decode(path: Path, dct_method: str = "") -> Any:
    """tf.io.decode_jpeg (with ``dct_method``) or decode_png of the file, as RGB."""
    tf = backends.load("tensorflow")
    raw = Path(path).read_bytes()
    if Path(path).suffix.lower() in (".jpg", ".jpeg"):
        return tf.io.decode_jpeg(raw, channels=3, dct_method=dct_method)
    return tf.io.decode_png(raw, channels=3)


def tensorflow_pipeline(path: Path, size: int, crop: int, interp: str) -> dict[str, Any]:
    """tf.io.decode_jpeg/png -> tf.image.resize (float, antialias=False: the default) ->
    crop_to_bounding_box at floor offsets -> tf.cast / 255 -> (x - mean) / std."""
    tf = backends.load("tensorflow")
    img = tf_decode(path)
    h, w = (int(d) for d in img.shape[:2])
    oh, ow = short_edge_shape(h, w, size)
    resized = tf.image.resize(img, (oh, ow), method=interp)
    top, left = crop_offsets(oh, ow, crop)["floor"]
    cropped = tf.image.crop_to_bounding_box(resized, top, left, crop, crop)
    tensor = tf.transpose(tf.cast(cropped, tf.float32) / 255.0, (2, 0, 1))
    normalized = (tensor - MEAN[:, None, None]) / STD[:, None, None]
    return _stages(*(t.numpy() for t in (img, resized, cropped, tensor, normalized)))


def _djl_stages(decoded: Any, resized: Any, cropped: Any) -> dict[str, Any]:
    """Every DJL stage's output, ending with DJL's ToTensor and Normalize of the crop."""
    from ...backends import djl

    tensor = djl.to_tensor(cropped)
    normalized = djl.normalize(tensor, MEAN.tolist(), STD.tolist())
    return _stages(decoded, resized, cropped, tensor, normalized)


def djl_naive_pipeline(path: Path, size: int, crop: int, interp: str) -> dict[str, Any]:
    """DJL as the Python code reads: ImageIO decode -> Resize(size) -> CenterCrop(crop) ->
    ToTensor -> Normalize. Resize(int) is square; CenterCrop floors its offset."""
    from ...backends import djl

    decoded = djl.decode(path)
    resized = djl.resize(decoded, (size, size), interp)
    cropped = djl.center_crop(resized, crop, crop)
    return _djl_stages(decoded, resized, cropped)


def djl_fixed_pipeline(path: Path, size: int, crop: int, interp: str) -> dict[str, Any]:
    """DJL with the fixes: ResizeShort on float32 then round (not truncate), crop at the
    rounded offset, then ToTensor and Normalize."""
    from ...backends import djl

    decoded = djl.decode(path)
    resized = djl.round_uint8(djl.resize_short(djl.to_float32(decoded), size, interp))
    h, w = resized.shape[:2]
    top, left = crop_offsets(h, w, crop)["round"]
    cropped = djl.crop(resized, left, top, crop, crop)
    return _djl_stages(decoded, resized, cropped)


def compare(a: np.ndarray, b: np.ndarray) -> Diff:
    """Shape, bit equality, max abs difference and (float32) max ULP distance of two arrays."""
    a, b = np.asarray(a), np.asarray(b)
    same = a.shape == b.shape
    d = np.abs(a.astype(np.float64) - b.astype(np.float64)) if same else np.array([np.nan])
    floats = same and a.dtype == b.dtype == np.float32
    return Diff(
        same_shape=same,
        bit_equal=same and a.dtype == b.dtype and a.tobytes() == b.tobytes(),
        shapes=(a.shape, b.shape),
        max_abs_diff=float(d.max()),
        max_ulp=int(ulp_distance(a, b).max()) if floats else None,
        fraction_differing=float((d > 0).mean()) if same else 1.0,
    )


def heat(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """|a - b| per pixel (max over channels) as a 2-D array, or None if shapes differ."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return None
    d = np.abs(a - b)
    if d.ndim == 3:
        d = d.max(axis=0) if d.shape[0] in (1, 3) and d.shape[2] not in (1, 3) else d.max(axis=2)
    return d
