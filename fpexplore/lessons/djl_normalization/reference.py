"""Exact truths for the preprocessing stages of `djl_normalization`.

What `fpexplore.truth.reference` does not cover: ToTensor (x/255), libtorch's antialiased
bicubic and its nearest resize (rational weight matrices, evaluated exactly; the bilinear one
is `reference.resize_bilinear`), and the standardization (x - mean) / std, which uses mpmath
at a scoped precision, certified by recomputing at twice the precision.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from ...errors import InvalidParameter
from ...truth.value import Truth

KINDS = ("bicubic", "nearest")
_FRACTION = np.frompyfunc(lambda n, d: Fraction(int(n), int(d)), 2, 1)


def _bicubic(x: Fraction) -> Fraction:
    """libtorch's antialiased bicubic filter (a = -1/2, as PIL's)."""
    x = abs(x)
    a = Fraction(-1, 2)
    if x < 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return Fraction(0)


def resize_weights(n_in: int, n_out: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer weight matrix N (n_out x n_in) and row sums S: weights are N[i] / S[i].

    libtorch's ``_upsample_*2d_aa`` (align_corners=False) in exact arithmetic: scale = in/out,
    centre = scale (i + 1/2), support = 2 * max(scale, 1), the filter evaluated at
    (j - centre + 1/2) / max(scale, 1) and normalized; ``nearest`` takes floor(scale * i).
    """
    if kind not in KINDS:
        accepted = "bicubic or nearest (bilinear is reference.resize_bilinear)"
        raise InvalidParameter("kind", kind, accepted, "djl_normalization.reference.resize_weights")
    scale = Fraction(n_in, n_out)
    rows = np.zeros((n_out, n_in), dtype=object)
    if kind == "nearest":
        for i in range(n_out):
            rows[i, min(math.floor(scale * i), n_in - 1)] = 1
        return rows.astype(np.int64), np.ones(n_out, dtype=np.int64)
    stretch = max(scale, Fraction(1))
    support = 2 * stretch
    inv = 1 / stretch
    sums = []
    for i in range(n_out):
        center = scale * (2 * i + 1) / 2
        lo = max(math.trunc(center - support + Fraction(1, 2)), 0)
        hi = min(math.trunc(center + support + Fraction(1, 2)), n_in)
        w = [_bicubic((j - center + Fraction(1, 2)) * inv) for j in range(lo, hi)]
        den = math.lcm(*(f.denominator for f in w))
        ints = [int(f * den) for f in w]
        rows[i, lo:hi] = ints
        sums.append(sum(ints))
    return rows.astype(np.int64), np.array(sums, dtype=np.int64)


def resize_ratio(
    image: np.ndarray, out_h: int, out_w: int, kind: str = "bicubic"
) -> tuple[np.ndarray, np.ndarray]:
    """The exact resize of an HWC uint8 image as integers: (numerators HWC, denominators HW).
    In int64 wherever no sum can overflow it (every sample size), else in Python integers."""
    img = np.asarray(image)
    nh, sh = resize_weights(img.shape[0], out_h, kind)
    nw, sw = resize_weights(img.shape[1], out_w, kind)
    bound = int(np.abs(nh).sum(axis=1).max()) * 255 * int(np.abs(nw).sum(axis=1).max())
    if bound < 2**62 and int(sh.max()) * int(sw.max()) < 2**62:
        num = np.stack([nh @ img[:, :, c].astype(np.int64) @ nw.T for c in range(img.shape[2])], -1)
        return num, np.outer(sh, sw)
    num = np.empty((out_h, out_w, img.shape[2]), dtype=object)
    for c in range(img.shape[2]):
        num[:, :, c] = nh.astype(object) @ img[:, :, c].astype(object) @ nw.T.astype(object)
    return num, np.outer(sh.astype(object), sw.astype(object))


def resize(image: np.ndarray, out_h: int, out_w: int, kind: str = "bicubic") -> Truth:
    """The exact resize of an HWC uint8 image to out_h x out_w."""
    num, den = resize_ratio(image, out_h, out_w, kind)
    out = _FRACTION(num, den[:, :, None])
    return Truth(f"exact antialiased {kind} resize to {out_h}x{out_w}", exact=out)


def to_tensor(image: np.ndarray) -> Truth:
    """HWC uint8 -> CHW x/255, exactly."""
    return Truth("x / 255", exact=_FRACTION(np.asarray(image).transpose(2, 0, 1), 255))


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
