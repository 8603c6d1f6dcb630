"""float32 log and sincos exactly as torch's CPU ``randn`` computes them on AVX2/AVX-512 CPUs.

torch fills float32 normals (n >= 16) with a Box-Muller kernel that calls ``log256_ps`` and
``sincos256_ps`` from ``aten/src/ATen/native/cpu/avx_mathfun.h`` (Cephes polynomials by
J. Pommier and G. Garberoglio). Each step below is one IEEE float32 operation in the same
order, so numpy's correctly rounded float32 arithmetic reproduces the vector code bit for bit.
The compiled kernel (built with -mfma) fuses most multiply-then-add pairs into one FMA; where
``a*b + c*d`` could fuse either product, the choice below is the one that matches torch on
every element tested (the other choices each miss a few elements in 10^4).
"""

from __future__ import annotations

import numpy as np

f32 = np.float32

_SQRTHF = f32(0.707106781186547524)
_LOG_P = tuple(
    f32(c)
    for c in (
        7.0376836292e-2,
        -1.1514610310e-1,
        1.1676998740e-1,
        -1.2420140846e-1,
        1.4249322787e-1,
        -1.6668057665e-1,
        2.0000714765e-1,
        -2.4999993993e-1,
        3.3333331174e-1,
    )
)
_LOG_Q1, _LOG_Q2 = f32(-2.12194440e-4), f32(0.693359375)
_DP = (f32(-0.78515625), f32(-2.4187564849853515625e-4), f32(-3.77489497744594108e-8))
_SINCOF = (f32(-1.9515295891e-4), f32(8.3321608736e-3), f32(-1.6666654611e-1))
_COSCOF = (f32(2.443315711809948e-005), f32(-1.388731625493765e-003), f32(4.166664568298827e-002))
_FOPI = f32(1.27323954473516)
_ONE, _HALF = f32(1.0), f32(0.5)
_SIGN = np.uint32(0x80000000)


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Fused multiply-add in float32 (a*b + c rounded once), exact via float64 and TwoSum."""
    a64 = np.asarray(a, dtype=np.float64)
    p = a64 * np.asarray(b, dtype=np.float64)  # exact: 24 + 24 bits
    c64 = np.broadcast_to(np.asarray(c, dtype=np.float64), p.shape)
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    # Rounding s to float32 can go wrong only when s sits exactly on a float32 midpoint and
    # the discarded error decides the side: nudge s one float64 step toward the true value.
    low = s.view(np.uint64) & np.uint64((1 << 29) - 1)
    tie = (low == np.uint64(1 << 28)) & (err != 0)
    s = np.where(tie, np.nextafter(s, s + err), s)
    return s.astype(np.float32)


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint32)


def _float(b: np.ndarray) -> np.ndarray:
    return b.astype(np.uint32).view(np.float32)


def log256(x: np.ndarray) -> np.ndarray:
    """``log256_ps``: Cephes logf, one float32 operation at a time (NaN for x <= 0)."""
    x = np.asarray(x, dtype=np.float32)
    invalid = x <= 0
    x = np.maximum(x, _float(np.array(0x00800000)))
    imm0 = (_bits(x) >> np.uint32(23)).astype(np.int32)
    x = _float((_bits(x) & np.uint32(~0x7F800000 & 0xFFFFFFFF)) | _bits(np.full_like(x, _HALF)))
    e = (imm0 - np.int32(0x7F)).astype(np.float32) + _ONE
    mask = x < _SQRTHF
    tmp = np.where(mask, x, f32(0))
    x = x - _ONE
    e = e - np.where(mask, _ONE, f32(0))
    x = x + tmp
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for c in _LOG_P[1:]:
        y = fma(y, x, c)
    y = y * x
    y = fma(y, z, e * _LOG_Q1)
    y = fma(-z, _HALF, y)
    x = x + y
    x = fma(e, _LOG_Q2, x)
    return np.where(invalid, np.float32(np.nan), x)


def sincos256(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``sincos256_ps``: Cephes sinf/cosf sharing one range reduction, in float32 steps."""
    x = np.asarray(x, dtype=np.float32)
    sign_sin = _bits(x) & _SIGN
    x = _float(_bits(x) & ~_SIGN)
    j = (x * _FOPI).astype(np.int32)  # cvttps: truncation
    j = (j + np.int32(1)) & np.int32(~1)
    y = j.astype(np.float32)
    swap_sin = (j & np.int32(4)).astype(np.uint32) << np.uint32(29)
    poly = (j & np.int32(2)) == 0
    for dp in _DP:
        x = fma(y, dp, x)
    j4 = j - np.int32(2)
    sign_cos = (~j4 & np.int32(4)).astype(np.uint32) << np.uint32(29)
    sign_sin = sign_sin ^ swap_sin

    z = x * x
    yc = fma(np.full_like(x, _COSCOF[0]), z, _COSCOF[1])
    yc = fma(yc, z, _COSCOF[2])
    yc = yc * z
    yc = fma(yc, z, -(z * _HALF))
    yc = yc + _ONE

    ys = fma(np.full_like(x, _SINCOF[0]), z, _SINCOF[1])
    ys = fma(ys, z, _SINCOF[2])
    ys = ys * z
    ys = fma(ys, x, x)

    zero = np.zeros_like(x)
    ysin2 = np.where(poly, ys, zero)
    ysin1 = np.where(poly, zero, yc)
    ys = ys - ysin2
    yc = yc - ysin1
    s = ysin1 + ysin2
    c = yc + ys
    return _float(_bits(s) ^ sign_sin), _float(_bits(c) ^ sign_cos)
