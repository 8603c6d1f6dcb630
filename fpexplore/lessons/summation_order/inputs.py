"""Inputs of the summation lesson: named distributions drawn in a named float format."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import formats
from ...errors import BackendUnavailable, InvalidParameter

DISTRIBUTIONS = ("uniform", "normal", "loguniform", "allequal", "alternating")
DTYPES = ("float16", "bfloat16", "float32", "float64")

ALLEQUAL_VALUE = 0.0001
# log10 of the widest magnitude drawn by "loguniform", per format (about half the exponent
# range, so that sums of up to 10^7 terms stay finite except in float16).
_LOG_RANGE = {"float16": 3.0, "bfloat16": 15.0, "float32": 15.0, "float64": 100.0}

DESCRIPTIONS = {
    "uniform": "uniform in [0, 1)",
    "normal": "standard normal",
    "loguniform": "log-uniform magnitudes over a wide range",
    "allequal": f"n copies of {ALLEQUAL_VALUE} (rounded to the format)",
    "alternating": "alternating signs, magnitudes in [1, 2): heavy cancellation",
}


def numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of a format name; bfloat16 comes from ``ml_dtypes`` (a TensorFlow
    dependency) because numpy has no bfloat16 of its own."""
    if dtype not in DTYPES:
        raise InvalidParameter("dtype", dtype, "one of " + ", ".join(map(repr, DTYPES)))
    if dtype == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise BackendUnavailable(
                "ml_dtypes",
                "numpy has no bfloat16 and the 'ml_dtypes' module is missing.",
                "pip install ml_dtypes   (it comes with TensorFlow: pip install -e '.[all]')",
            ) from None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


_UINT = {"float16": np.uint16, "float32": np.uint32, "float64": np.uint64}


def bits(value: Any) -> int:
    """The bit pattern of a numpy float scalar in its own format."""
    a = np.asarray(value)
    uint = _UINT.get(a.dtype.name)
    if uint is not None:  # the stored bits as they are (what formats.bits gives, faster)
        return int(a.view(uint))
    return formats.bits(value, a.dtype)


def in_format(value: Any, dtype: np.dtype) -> Any:
    """``value`` as a numpy scalar of ``dtype`` (the frameworks round the accumulator to the
    input format once, at the end)."""
    return np.asarray(value).astype(dtype)[()]


def make_input(distribution: str, n: int, dtype: str, seed: int) -> np.ndarray:
    """``n`` values of ``distribution`` in ``dtype``, reproducible from ``seed``.

    "uniform" and "normal" are ``numpy.random.default_rng(seed).random(n, dtype=...)`` and
    ``.standard_normal(n, dtype=...)`` drawn in float32 (float64 for float64) and rounded to
    float16/bfloat16: the same recipes as the recorded GPU runs, so those cases line up.
    "loguniform" and "alternating" are drawn in float64 and rounded to ``dtype``.
    """
    if distribution not in DISTRIBUTIONS:
        raise InvalidParameter(
            "distribution", distribution, "one of " + ", ".join(map(repr, DISTRIBUTIONS))
        )
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise InvalidParameter("n", n, "a non-negative int")
    target = numpy_dtype(dtype)
    draw = np.float64 if dtype == "float64" else np.float32
    rng = np.random.default_rng(seed)
    values: Any
    if distribution == "uniform":
        values = rng.random(n, dtype=draw)
    elif distribution == "normal":
        values = rng.standard_normal(n, dtype=draw)
    elif distribution == "loguniform":
        e = _LOG_RANGE[dtype]
        values = 10.0 ** rng.uniform(-e, e, n)
    elif distribution == "allequal":
        values = np.full(n, ALLEQUAL_VALUE)
    else:  # alternating
        signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        values = signs * (1.0 + rng.random(n))
    return np.ascontiguousarray(values.astype(target))
