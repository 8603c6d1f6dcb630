"""Emulators of the user's hand-written float loop, plain and as -ffast-math compiles it."""

from __future__ import annotations

import numpy as np

from ... import orders


def plain(v: np.ndarray) -> np.float32:
    """``acc += x[i]`` left to right in float32: what IEEE order (no -ffast-math) means."""
    return orders.emulate(v, "sequential")


def lanes(v: np.ndarray, width: int = 4) -> np.float32:
    """The loop as GCC vectorizes it under -O3 -ffast-math with ``width`` float lanes (4 for
    x86-64 SSE): lane j sums x[j], x[j + width], ... left to right; the lanes are folded in
    halves ((l0 + l2) + (l1 + l3) for 4); the leftover tail is added one by one.

    An emulator of one compiler's code: other compilers, flags (-march) and CPUs reassociate
    differently, so the lesson reports whether it matched as an observation.
    """
    v = np.ascontiguousarray(v, dtype=np.float32).ravel()
    n = v.size
    body = n - n % width
    if n < width:
        return orders.emulate(v, "sequential")
    acc = np.array(
        [orders.emulate(v[j:body:width], "sequential") for j in range(width)], dtype=np.float32
    )
    while acc.size > 1:
        half = acc.size // 2
        acc = (acc[:half] + acc[half:]).astype(np.float32)
    s = acc[0]
    for t in v[body:]:
        s = np.float32(s + t)
    return np.float32(s)
