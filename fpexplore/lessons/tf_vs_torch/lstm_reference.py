"""An LSTM cell in mpmath: outputs at every step and the gradient of sum(h_L) with respect to
every input, in torch's formulation (gates i, f, g, o; two bias vectors), certified."""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np

from ...truth.certify import certified
from ...truth.value import Truth

PREC = 64  # bits; the check runs at 2·64 + 32 = 160 bits


def _mp(a: np.ndarray) -> list:
    return [mpmath.mpf(float(v)) for v in np.asarray(a, dtype=np.float64).ravel()]


def _sig(v: Any) -> Any:
    return 1 / (1 + mpmath.exp(-v))


def run(
    x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray, b_hh: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(h of shape (L, H), d sum(h_L) / dx of shape (L, I)) at the working precision."""
    length, n_in = x.shape
    hid = w_hh.shape[1]
    wi = [_mp(r) for r in w_ih]  # 4H rows of I
    wh = [_mp(r) for r in w_hh]  # 4H rows of H
    wi_t = [[wi[r][c] for r in range(4 * hid)] for c in range(n_in)]
    wh_t = [[wh[r][c] for r in range(4 * hid)] for c in range(hid)]
    b = [p + q for p, q in zip(_mp(b_ih), _mp(b_hh), strict=True)]
    xs = [_mp(row) for row in x]
    h = [mpmath.mpf(0)] * hid
    c = [mpmath.mpf(0)] * hid
    tape, hs = [], []
    for t in range(length):
        a = [mpmath.fdot(wi[r], xs[t]) + mpmath.fdot(wh[r], h) + b[r] for r in range(4 * hid)]
        i = [_sig(v) for v in a[:hid]]
        f = [_sig(v) for v in a[hid : 2 * hid]]
        g = [mpmath.tanh(v) for v in a[2 * hid : 3 * hid]]
        o = [_sig(v) for v in a[3 * hid :]]
        c_prev = c
        c = [f[k] * c_prev[k] + i[k] * g[k] for k in range(hid)]
        tc = [mpmath.tanh(v) for v in c]
        h = [o[k] * tc[k] for k in range(hid)]
        tape.append((i, f, g, o, c_prev, tc))
        hs.append(h)
    dh = [mpmath.mpf(1)] * hid
    dc = [mpmath.mpf(0)] * hid
    dx = [None] * length
    for t in range(length - 1, -1, -1):
        i, f, g, o, c_prev, tc = tape[t]
        do = [dh[k] * tc[k] for k in range(hid)]
        dc = [dc[k] + dh[k] * o[k] * (1 - tc[k] ** 2) for k in range(hid)]
        da = (
            [dc[k] * g[k] * i[k] * (1 - i[k]) for k in range(hid)]
            + [dc[k] * c_prev[k] * f[k] * (1 - f[k]) for k in range(hid)]
            + [dc[k] * i[k] * (1 - g[k] ** 2) for k in range(hid)]
            + [do[k] * o[k] * (1 - o[k]) for k in range(hid)]
        )
        dx[t] = [mpmath.fdot(wi_t[j], da) for j in range(n_in)]
        dh = [mpmath.fdot(wh_t[j], da) for j in range(hid)]
        dc = [dc[k] * f[k] for k in range(hid)]
    return np.array(hs, dtype=object), np.array(dx, dtype=object)


def reference(
    x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray, b_hh: np.ndarray
) -> tuple[Truth, Truth]:
    """Certified truths of the outputs h (L, H) and of d sum(h_L)/dx (L, I)."""
    cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def both(p: int) -> tuple[np.ndarray, np.ndarray]:
        if p not in cache:
            cache[p] = run(x, w_ih, w_hh, b_ih, b_hh)
        return cache[p]

    label = f"LSTM(I={x.shape[1]}, H={w_hh.shape[1]}), {x.shape[0]} steps"
    h = certified(f"h of {label}", lambda p: both(p)[0], PREC, "float32")
    d = certified(f"d sum(h_L)/dx of {label}", lambda p: both(p)[1], PREC, "float32")
    return h, d
