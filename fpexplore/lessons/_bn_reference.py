"""mpmath reference of batch normalization (train: batch statistics; eval: running ones)."""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

from ..truth import Truth


def _bn(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, mean: Any, var: Any, eps: float, prec: int
) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * gamma + beta at ``prec`` bits; mean/var None = batch."""
    n, c = x.shape
    out = np.empty((n, c), dtype=object)
    with mpmath.workprec(prec):
        e = mpmath.mpf(eps)
        for j in range(c):
            col = [mpmath.mpf(float(v)) for v in x[:, j]]
            if mean is None:
                m = mpmath.fsum(col) / n
                v = mpmath.fsum((t - m) ** 2 for t in col) / n  # biased, as both frameworks use
            else:
                m, v = mpmath.mpf(float(mean[j])), mpmath.mpf(float(var[j]))
            inv = 1 / mpmath.sqrt(v + e)
            g, b = mpmath.mpf(float(gamma[j])), mpmath.mpf(float(beta[j]))
            for i in range(n):
                out[i, j] = (col[i] - m) * inv * g + b
    return out


def batchnorm_truth(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    eps: float,
    mean: Any = None,
    var: Any = None,
    prec: int = 96,
) -> Truth:
    """A certified reference: computed at ``prec`` and 2*prec bits, digits that agree kept.

    The inputs (float32/float64 values and the float ``eps``) are taken exactly; with few
    elements per column, mpmath's fsum at these precisions is exact enough to certify.
    """
    lo = _bn(x, gamma, beta, mean, var, eps, prec)
    hi = _bn(x, gamma, beta, mean, var, eps, 2 * prec)
    digits = math.inf
    with mpmath.workprec(2 * prec):
        for a, b in zip(lo.ravel(), hi.ravel(), strict=True):
            if b != 0 and a != b:
                digits = min(digits, float(-mpmath.log10(abs((a - b) / b))))
    digits = min(digits, prec * math.log10(2) - 1)
    mode = "batch statistics" if mean is None else "running statistics"
    return Truth(f"batch norm ({mode}, eps={eps:g})", mp=hi, digits=digits, prec=2 * prec)
