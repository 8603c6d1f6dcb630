"""Turn user input (numpy arrays, torch/TF tensors, lists) into float arrays with the same bits."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidInput, shown

ACCEPTED = "a float array of dtype float16, bfloat16, float32 or float64 (numpy, torch or TF)"

_ORDER = ("float16", "bfloat16", "float32", "float64")  # narrowest first


def _from_torch(x: Any, name: str, where: str) -> tuple[np.ndarray, str]:
    fmt = str(x.dtype).removeprefix("torch.")  # aliases (torch.half) print as these names
    if fmt not in _ORDER:
        raise InvalidInput(
            f"{where}: '{name}' is a torch tensor of dtype {x.dtype}; accepted is {ACCEPTED}."
        )
    if str(getattr(x, "device", "")) == "meta":
        raise InvalidInput(
            f"{where}: '{name}' is a meta tensor: it has a shape but no values; accepted is "
            f"{ACCEPTED} with values (on the CPU or a card)."
        )
    t = x.detach().cpu()
    # float16/bfloat16 -> float32 is exact, so the values keep their bits.
    arr = t.double().numpy() if fmt == "float64" else t.float().numpy()
    return arr, fmt


def as_float_array(
    x: Any, name: str = "x", where: str = "fpexplore.truth"
) -> tuple[np.ndarray, str]:
    """Return ``(array, fmt)``: a float32/float64 ndarray holding exactly the input's values.

    ``fmt`` names the input's own format (``"float16"``, ``"bfloat16"``, ``"float32"``,
    ``"float64"``); float16 and bfloat16 are widened to float32, which is exact.
    Python scalars and lists are taken as float64.
    """
    mod = type(x).__module__ or ""
    if mod.startswith("torch"):
        return _from_torch(x, name, where)
    if not isinstance(x, np.ndarray) and hasattr(x, "numpy") and "tensorflow" in mod:
        x = x.numpy()
    if isinstance(x, np.generic):
        x = np.asarray(x)
    if not isinstance(x, np.ndarray):
        if isinstance(x, bool):
            raise InvalidInput(f"{where}: '{name}' is a bool; accepted is {ACCEPTED}.")
        try:
            a = np.asarray(x)
        except (TypeError, ValueError):
            a = np.asarray(None)
        if a.dtype.kind not in "fiu":  # None, strings, ragged lists, bools in a list
            raise InvalidInput(
                f"{where}: '{name}' ({shown(x, 60)} of type {type(x).__name__}) is not numeric; "
                f"accepted is {ACCEPTED}."
            )
        x = a.astype(np.float64)
        if a.dtype.kind in "iu" and not np.array_equal(x.astype(a.dtype), a):
            raise InvalidInput(
                f"{where}: '{name}' holds integers that float64 cannot represent exactly "
                f"({a!r:.60}); accepted is {ACCEPTED}."
            )
    dt = x.dtype
    if dt == np.float32 or dt == np.float64:
        return x, dt.name
    if dt == np.float16:
        return x.astype(np.float32), "float16"
    if dt.name == "bfloat16":
        return x.astype(np.float32), "bfloat16"
    raise InvalidInput(f"{where}: '{name}' has dtype {dt}; accepted is {ACCEPTED}.")


def wider(a: str, b: str) -> str:
    """The wider of two format names (for results of mixed-format operations)."""
    return a if _ORDER.index(a) >= _ORDER.index(b) else b
