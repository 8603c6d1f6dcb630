"""Exact truths for the preprocessing stages of `djl_normalization`.

Every stage here is a rational function of its input bits, except the standard deviation:
ToTensor is x/255, Normalize is (x - m)/s with float32 m and s, and an antialiased resize is
a pair of rational weight matrices (the filter libtorch and PIL use, evaluated exactly). They
are computed with integers and `fractions.Fraction`; the std uses mpmath at a scoped precision,
certified by recomputing at twice the precision.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from ..truth.value import Truth

#: interp_size of libtorch's antialiased kernels
_SUPPORT = {"bilinear": 1, "bicubic": 2}


def _filter(kind: str, x: Fraction) -> Fraction:
    x = abs(x)
    if kind == "bilinear":
        return 1 - x if x < 1 else Fraction(0)
    a = Fraction(-1, 2)  # libtorch's antialiased bicubic (as PIL)
    if x < 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return Fraction(0)


def resize_weights(n_in: int, n_out: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer weight matrix N (n_out x n_in) and row sums S: weights are N[i] / S[i].

    libtorch's ``_upsample_*2d_aa`` (align_corners=False) in exact arithmetic: scale = in/out,
    centre = scale (i + 1/2), support = interp_size/2 * max(scale, 1), the filter evaluated at
    (j - centre + 1/2) / max(scale, 1) and normalized; ``nearest`` takes floor(scale * i).
    """
    scale = Fraction(n_in, n_out)
    rows = np.zeros((n_out, n_in), dtype=object)
    if kind == "nearest":
        for i in range(n_out):
            rows[i, min(math.floor(scale * i), n_in - 1)] = 1
        return rows.astype(np.int64), np.ones(n_out, dtype=np.int64)
    stretch = max(scale, Fraction(1))
    support = _SUPPORT[kind] * stretch
    inv = 1 / stretch
    sums = []
    for i in range(n_out):
        center = scale * (2 * i + 1) / 2
        lo = max(math.trunc(center - support + Fraction(1, 2)), 0)
        hi = min(math.trunc(center + support + Fraction(1, 2)), n_in)
        w = [_filter(kind, (j - center + Fraction(1, 2)) * inv) for j in range(lo, hi)]
        den = math.lcm(*(f.denominator for f in w))
        ints = [int(f * den) for f in w]
        rows[i, lo:hi] = ints
        sums.append(sum(ints))
    return rows.astype(np.int64), np.array(sums, dtype=np.int64)


def resize(image: np.ndarray, out_h: int, out_w: int, kind: str = "bilinear") -> Truth:
    """The exact resize of an HWC image (uint8 or float32 values) to out_h x out_w."""
    img = np.asarray(image)
    nh, sh = resize_weights(img.shape[0], out_h, kind)
    nw, sw = resize_weights(img.shape[1], out_w, kind)
    if img.dtype == np.uint8:
        scaled, unit = img.astype(object), 1
    else:  # exact float values: a common power-of-two denominator
        fr = [Fraction(float(v)) for v in img.ravel()]
        unit = math.lcm(*(f.denominator for f in fr))
        scaled = np.array([int(f * unit) for f in fr], dtype=object).reshape(img.shape)
    out = np.empty((out_h, out_w, img.shape[2]), dtype=object)
    for c in range(img.shape[2]):
        num = nh.astype(object) @ scaled[:, :, c] @ nw.T.astype(object)
        for (i, j), v in np.ndenumerate(num):
            out[i, j, c] = Fraction(v, int(sh[i]) * int(sw[j]) * unit)
    return Truth(f"exact antialiased {kind} resize to {out_h}x{out_w}", exact=out)


def to_tensor(image: np.ndarray) -> Truth:
    """HWC uint8 -> CHW x/255, exactly."""
    chw = np.asarray(image).transpose(2, 0, 1)
    out = np.empty(chw.shape, dtype=object)
    for idx, v in np.ndenumerate(chw):
        out[idx] = Fraction(int(v), 255)
    return Truth("x / 255", exact=out)


def normalize(tensor: np.ndarray, mean: np.ndarray, std: np.ndarray) -> Truth:
    """(x - m) / s per channel on the exact float32 values of x, m and s."""
    t = np.asarray(tensor, dtype=np.float32)
    out = np.empty(t.shape, dtype=object)
    ms = [Fraction(float(np.float32(m))) for m in mean]
    ss = [Fraction(float(np.float32(s))) for s in std]
    for idx, v in np.ndenumerate(t):
        out[idx] = (Fraction(float(v)) - ms[idx[0]]) / ss[idx[0]]
    return Truth("(x - mean) / std on the float32 inputs", exact=out)


def standardize(values: np.ndarray, ddof: int, digits: int = 40) -> Truth:
    """(x - mean(x)) / std(x, ddof) on the exact input values, certified to ``digits``."""
    x = [Fraction(float(v)) for v in np.ravel(values)]
    n = len(x)
    mu = sum(x) / n
    var = sum((v - mu) ** 2 for v in x) / (n - ddof)

    def at(prec: int) -> list:
        with mpmath.workprec(prec):
            sd = mpmath.sqrt(mpmath.mpf(var.numerator) / var.denominator)
            return [(mpmath.mpf((v - mu).numerator) / (v - mu).denominator) / sd for v in x]

    prec = int(digits * 3.33) + 20
    lo, hi = at(prec), at(2 * prec)
    with mpmath.workprec(2 * prec):
        for a, b in zip(lo, hi, strict=True):
            if b != 0 and abs((a - b) / b) > mpmath.mpf(10) ** (-digits):
                raise ArithmeticError("the standardization truth did not certify")
    label = f"(x - mean) / std with ddof={ddof}"
    return Truth(
        label, mp=np.array(hi, dtype=object).reshape(np.shape(values)), digits=digits, prec=2 * prec
    )
