"""What crosses the pipe between the caller and the DJL worker: plain Python values, with
arrays as raw bits (dtype name, shape, bytes) so nothing is converted on the way."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidInput

DTYPES = ("float32", "float64", "uint8")


def pack(array: Any, name: str = "x") -> dict[str, Any]:
    """An array as its bits; accepts float32, float64 and uint8 only (no silent casts)."""
    arr = np.asarray(array)
    if arr.dtype.name not in DTYPES:
        raise InvalidInput(
            f"'{name}' must be a float32, float64 or uint8 array for DJL; "
            f"got dtype {arr.dtype}. Convert it first, e.g. x.astype(np.float32)."
        )
    if arr.size == 0:
        raise InvalidInput(f"'{name}' is empty (shape {arr.shape}); DJL needs at least one value.")
    arr = np.ascontiguousarray(arr)
    return {
        "dtype": arr.dtype.name,
        "shape": tuple(int(s) for s in arr.shape),
        "bits": arr.tobytes(),
    }


def unpack(packed: dict[str, Any]) -> np.ndarray:
    dtype = np.dtype(packed["dtype"])
    return np.frombuffer(packed["bits"], dtype=dtype).reshape(packed["shape"]).copy()
