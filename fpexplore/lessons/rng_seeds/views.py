"""The RNG lesson's views: bit patterns and the figure (the bits widget is in
`fpexplore.widgets.rng_bits`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import formats
from ...result import Comparison

_NOT_STREAMS = ("torch Linear", "Keras")


def bits_of(values: Any) -> list[str]:
    """IEEE bit patterns, sign|exponent|mantissa, of float32 or float64 values."""
    arr = np.asarray(values)
    fmt = "float32" if arr.dtype == np.float32 else "float64"
    return [formats.bit_string(v, fmt) for v in arr.astype(fmt).ravel()]


def stream_table(comparison: Comparison) -> list[dict[str, str]]:
    """One row per value: stream, index, value, bit pattern (for the bits view)."""
    rows = []
    for o in comparison.outcomes:
        if not o.ran or o.implementation.startswith(_NOT_STREAMS):
            continue
        vals = np.asarray(o.value).ravel()[: comparison.params["k"]]
        for i, (v, b) in enumerate(zip(vals.tolist(), bits_of(vals), strict=True)):
            rows.append({"stream": o.implementation, "i": str(i), "value": repr(v), "bits": b})
    return rows


def figure(comparison: Comparison) -> Any:
    """Bits per float for each stack, and the first k values of every stream."""
    import matplotlib.pyplot as plt

    data = comparison.data
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.6))
    names = list(data["bits_per_float"])
    ax1.barh(names, [data["bits_per_float"][k] for k in names], color="tab:blue")
    ax1.set_xlabel("random bits per float (measured)")
    ax1.invert_yaxis()
    shown = [
        o
        for o in comparison.outcomes
        if o.ran and np.ndim(o.value) == 1 and not o.implementation.startswith(_NOT_STREAMS)
    ]
    for i, o in enumerate(shown):
        v = np.asarray(o.value, dtype=np.float64)
        ax2.scatter(
            np.arange(v.size),
            np.full(v.size, i),
            c=v,
            cmap="viridis",
            vmin=0,
            vmax=1,
            s=60,
            marker="s",
        )
    ax2.set_yticks(range(len(shown)), [o.implementation for o in shown])
    ax2.set_xlabel(f"first {data['k']} values (colour = value in [0, 1))")
    ax2.invert_yaxis()
    fig.suptitle(f"seed {comparison.params['seed']}: same seed, different numbers")
    fig.tight_layout()
    return fig
