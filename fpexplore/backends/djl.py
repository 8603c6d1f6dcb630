"""DJL (Deep Java Library) operations, run for real in the JVM worker process.

Every function sends its input as raw bits to the worker (`fpexplore.jvm.client`) and returns
numpy arrays holding exactly the bits DJL produced. Nothing here imports torch or JPype; the
worker starts on the first call and is reused. Without Java or the jars every function raises
`BackendUnavailable` naming ``make djl``; if the worker dies mid-call, `WorkerError`.

Images are HWC ``uint8`` (as DJL's ``Image.toNDArray``) unless said otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BackendUnavailable, InvalidInput, InvalidParameter
from ..jvm import artifacts, client
from ..jvm.protocol import pack, unpack
from ..params import Interval

INTERPOLATIONS = ("nearest", "bilinear", "area", "bicubic")


def require() -> None:
    """Raise `BackendUnavailable` (with ``make djl``) unless DJL can run here."""
    from . import get

    reason = get("djl").missing()  # type: ignore[attr-defined]
    if reason:
        raise BackendUnavailable("djl", reason, artifacts.FIX)


def _call(op: str, timeout: float = client.DEFAULT_TIMEOUT, **kw: Any) -> Any:
    require()
    return client.call(op, timeout=timeout, **kw)


def _array(op: str, **kw: Any) -> np.ndarray:
    return unpack(_call(op, **kw))


def info() -> dict[str, Any]:
    """Engine name and version, Java version, libtorch threads and the worker's pid."""
    return dict(_call("info"))


def version() -> str:
    return f"DJL {artifacts.DJL_VERSION} (libtorch {artifacts.LIBTORCH_VERSION})"


def set_threads(n: int) -> int:
    """Set libtorch's intra-op threads in the worker (``JniUtils.setNumThreads``); default 1,
    or ``$FPEXPLORE_DJL_THREADS``. Returns the count libtorch reports."""
    return client.set_threads(n)


def threads() -> int:
    return client.threads()


# -- NDArray basics -------------------------------------------------------------------------


def roundtrip(x: Any) -> np.ndarray:
    """``NDManager.create`` from the bits of ``x`` and back: proves the transfer is exact."""
    return _array("roundtrip", x=pack(x))


def ndsum(x: Any) -> np.ndarray:
    """``NDArray.sum()`` (libtorch's reduction order, in the worker's thread count)."""
    return _array("sum", x=pack(x))


def mean(x: Any) -> np.ndarray:
    """``NDArray.mean()``."""
    return _array("mean", x=pack(x))


def std(x: Any) -> np.ndarray:
    """Population std by the idiom ``x.sub(x.mean()).square().mean().sqrt()`` (no ``std()``)."""
    return _array("std", x=pack(x))


def normalize_by_stats(x: Any) -> np.ndarray:
    """``(x - mean) / std`` with the idiom's population std, all as DJL NDArray ops."""
    return _array("normalize_by_stats", x=pack(x))


def java_loop_sum(x: Any) -> float:
    """A plain Java loop, ``float s = 0; for (float v : x) s += v;`` (``double`` for float64
    input). Returns the Java result as a Python float (exactly representable)."""
    arr = np.asarray(x)
    if arr.dtype not in (np.float32, np.float64):
        raise InvalidInput(f"'x' must be float32 or float64 for the Java loop; got {arr.dtype}.")
    return float(_call("java_loop_sum", x=pack(arr)))


# -- random numbers -------------------------------------------------------------------------


#: Largest number of values one DJL call draws (8 bytes each crosses the pipe).
MAX_VALUES = 10**7


def _shape(shape: int | Sequence[int]) -> list[int]:
    accepted = f"a positive int or a sequence of positive ints, at most {MAX_VALUES} values"
    if isinstance(shape, np.ndarray) and shape.ndim == 0:
        shape = shape.item()
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool | np.bool_):
        dims = [shape]
    elif isinstance(shape, list | tuple):
        dims = list(shape)
    else:
        raise InvalidParameter("shape", shape, accepted)
    if not dims or any(
        isinstance(d, bool | np.bool_) or not isinstance(d, int | np.integer) or d < 1 for d in dims
    ):
        raise InvalidParameter("shape", shape, accepted)
    if math.prod(int(d) for d in dims) > MAX_VALUES:
        raise InvalidParameter("shape", shape, accepted)
    return [int(d) for d in dims]


def _seed(seed: int) -> int:
    return int(Interval("seed", 0, low=0, high=2**31 - 1, integer=True).validate(seed, "djl"))


def _real(name: str, v: float) -> float:
    return float(Interval(name, 0.0, low=-1e30, high=1e30).validate(v, "djl"))


def random_uniform(
    seed: int, shape: int | Sequence[int], low: float = 0.0, high: float = 1.0
) -> np.ndarray:
    """``Engine.setRandomSeed(seed)`` then ``manager.randomUniform(low, high, shape)``
    (float32; libtorch's default generator)."""
    a, b = _real("low", low), _real("high", high)
    if not a < b:
        raise InvalidParameter("high", high, f"a float above low ({a!r})", "djl.random_uniform")
    return _array("random", kind="uniform", seed=_seed(seed), shape=_shape(shape), a=a, b=b)


def random_normal(
    seed: int, shape: int | Sequence[int], loc: float = 0.0, scale: float = 1.0
) -> np.ndarray:
    """``Engine.setRandomSeed(seed)`` then ``manager.randomNormal(loc, scale, shape)``."""
    a, b = _real("loc", loc), _real("scale", scale)
    if not b > 0:
        raise InvalidParameter("scale", scale, "a float above 0", "djl.random_normal")
    return _array("random", kind="normal", seed=_seed(seed), shape=_shape(shape), a=a, b=b)


def java_random_floats(seed: int, n: int) -> np.ndarray:
    """``n`` float32 draws of ``new java.util.Random(seed).nextFloat()`` (DJL's CV transforms)."""
    n = int(Interval("n", 1, low=1, high=MAX_VALUES, integer=True).validate(n, "djl"))
    return _array("java_random_floats", seed=_seed(seed), n=n)


# -- image transforms (ai.djl.modality.cv.transform) ----------------------------------------


def _image(x: Any, name: str = "image") -> dict[str, Any]:
    arr = np.asarray(x)
    if arr.ndim != 3 or arr.shape[2] not in (1, 3):
        raise InvalidInput(
            f"'{name}' must be an HWC image with 1 or 3 channels; got shape {arr.shape}."
        )
    return pack(arr, name)


def _size(name: str, v: int) -> int:
    return int(Interval(name, 1, low=1, high=16384, integer=True).validate(v, "djl"))


def _interp(interpolation: str) -> str:
    if not isinstance(interpolation, str) or interpolation not in INTERPOLATIONS:
        raise InvalidParameter(
            "interpolation", interpolation, "one of " + ", ".join(INTERPOLATIONS)
        )
    return interpolation


def to_tensor(image: Any) -> np.ndarray:
    """``ToTensor``: HWC uint8 [0, 255] -> CHW float32 [0, 1]."""
    return _array("to_tensor", x=_image(image))


def normalize(tensor: Any, mean: Sequence[float], std: Sequence[float]) -> np.ndarray:
    """``Normalize(mean[], std[])`` on a CHW float32 tensor."""
    arr = np.asarray(tensor)
    if arr.ndim != 3 or arr.shape[0] not in (1, 3) or arr.dtype != np.float32:
        raise InvalidInput(
            f"'tensor' must be a CHW float32 array (as to_tensor returns); got "
            f"{arr.dtype} of shape {arr.shape}."
        )
    c = arr.shape[0]
    return _array(
        "normalize",
        x=pack(arr),
        mean=_channel_values("mean", mean, c, zero=True),
        std=_channel_values("std", std, c, zero=False),
    )


def _channel_values(name: str, v: Any, c: int, zero: bool) -> list[float]:
    """``v`` as ``c`` finite floats (non-zero unless ``zero``), or `InvalidParameter`."""
    accepted = f"a list or tuple of {c} finite{'' if zero else ', non-zero'} numbers"
    if isinstance(v, np.ndarray) and v.ndim == 1:
        v = v.tolist()
    if not isinstance(v, list | tuple) or len(v) != c:
        raise InvalidParameter(name, v, accepted, "djl.normalize")
    out = []
    for m in v:
        real = isinstance(m, int | float | np.integer | np.floating)
        if isinstance(m, bool | np.bool_) or not real:
            raise InvalidParameter(name, v, accepted, "djl.normalize")
        f = float(m) if abs(m) <= 1e308 else math.inf
        if not math.isfinite(f) or (f == 0 and not zero):
            raise InvalidParameter(name, v, accepted, "djl.normalize")
        out.append(f)
    return out


def resize(image: Any, size: int | tuple[int, int], interpolation: str | None = None) -> np.ndarray:
    """``Resize(size)`` (an int gives size x size: DJL does NOT keep the aspect ratio) or
    ``Resize(width, height[, interpolation])`` for a ``(height, width)`` tuple. The output
    keeps the input's dtype (float results are cast back, uint8 by truncation)."""
    if isinstance(size, tuple | list):
        if len(size) != 2:
            raise InvalidParameter(
                "size", size, "an int, or a (height, width) pair of ints", "djl.resize"
            )
        h, w = _size("height", size[0]), _size("width", size[1])
    else:  # Resize(size), or with an interpolation Resize(size, size, interpolation)
        h, w = None, _size("size", size)
    how = None if interpolation is None else _interp(interpolation)
    return _array("resize", x=_image(image), width=w, height=h, interpolation=how)


def resize_short(image: Any, short_edge: int, interpolation: str = "bilinear") -> np.ndarray:
    """``ResizeShort(shortEdge, -1, interpolation)``: the short edge becomes ``short_edge``,
    keeping the aspect ratio (torchvision's ``Resize(int)``)."""
    edge, how = _size("short_edge", short_edge), _interp(interpolation)
    return _array("resize_short", x=_image(image), short_edge=edge, long_edge=-1, interpolation=how)


def center_crop(image: Any, width: int, height: int) -> np.ndarray:
    """``CenterCrop(width, height)``: offset ``(W - width) / 2`` in Java int division."""
    packed = _image(image)
    h, w = np.asarray(image).shape[:2]
    width, height = _size("width", width), _size("height", height)
    if width > w or height > h:
        raise InvalidParameter(
            "width/height", (width, height), f"at most the image's {w}x{h}", "djl.center_crop"
        )
    return _array("center_crop", x=packed, width=width, height=height)


def crop(image: Any, left: int, top: int, width: int, height: int) -> np.ndarray:
    """``NDImageUtils.crop(image, x, y, width, height)`` on an HWC image."""
    arr = np.asarray(image)
    h, w = (*arr.shape, 0, 0)[:2]
    left = int(Interval("left", 0, low=0, high=16384, integer=True).validate(left, "djl.crop"))
    top = int(Interval("top", 0, low=0, high=16384, integer=True).validate(top, "djl.crop"))
    width, height = _size("width", width), _size("height", height)
    if left + width > w or top + height > h:
        raise InvalidParameter(
            "left/top/width/height", (left, top, width, height), f"a box inside the {w}x{h} image"
        )
    return _array("crop", x=_image(image), left=left, top=top, width=width, height=height)


def to_float32(x: Any) -> np.ndarray:
    """``x.toType(FLOAT32, false)`` (uint8 levels become exact float32 values)."""
    return _array("to_float32", x=pack(x))


def round_uint8(x: Any) -> np.ndarray:
    """``x.round().clip(0, 255).toType(UINT8, false)``: round half to even, clamp, cast (the
    resize fix)."""
    return _array("round_uint8", x=pack(x))


def decode(path: str | Path, flag: str = "color") -> np.ndarray:
    """Decode an image file with ``BufferedImageFactory`` (Java ImageIO); HWC uint8."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInput(f"'path' must name an image file; {str(p)!r} does not exist.")
    if flag not in ("color", "grayscale"):
        raise InvalidParameter("flag", flag, "'color' or 'grayscale'")
    return _array("decode", path=str(p.resolve()), flag=flag)


def sleep(seconds: float, timeout: float = client.DEFAULT_TIMEOUT) -> float:
    """``Thread.sleep`` in the worker (for testing timeouts and crash isolation)."""
    return float(_call("sleep", timeout=timeout, seconds=float(seconds)))


def seed_streams(seed: int, n: int) -> dict[str, Any]:
    """Measure whether DJL's engine seed reproduces torch's: ``setRandomSeed(seed)`` then
    ``randomUniform``/``randomNormal`` in the worker (libtorch 2.7.1) against
    ``torch.manual_seed(seed)`` then ``torch.rand``/``torch.randn`` here (the installed torch).

    Returns the four float32 arrays, whether each pair is bit-identical, and the index of the
    first difference (None when identical).
    """
    from . import load

    torch = load("torch")
    out: dict[str, Any] = {"torch_version": torch.__version__, "djl": version()}
    for kind, torch_draw, djl_draw in (
        ("uniform", torch.rand, random_uniform),
        ("normal", torch.randn, random_normal),
    ):
        torch.manual_seed(seed)
        a = out[f"torch_{kind}"] = torch_draw(n).numpy()
        b = out[f"djl_{kind}"] = djl_draw(seed, n)
        diff = np.flatnonzero(a.view(np.uint32) != b.view(np.uint32))
        out[f"{kind}_equal"] = diff.size == 0
        out[f"{kind}_first_difference"] = int(diff[0]) if diff.size else None
    return out
