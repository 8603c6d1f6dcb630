"""Certification: compute at two precisions and count the decimal digits that agree."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np

from ..errors import InvalidParameter
from .value import Truth

MIN_PREC, MAX_PREC = 24, 1 << 16


def check_prec(prec: Any, where: str) -> int:
    """Validate a working precision in bits."""
    try:
        p = operator.index(prec)
    except TypeError:
        p = None
    if p is None or not MIN_PREC <= p <= MAX_PREC:
        raise InvalidParameter(
            "prec", prec, f"an integer number of bits in [{MIN_PREC}, {MAX_PREC}]", where
        )
    return p


def _agree(a: Any, b: Any, cap: float) -> float:
    """Decimal digits to which ``a`` agrees with ``b`` (relative to ``b``), at most ``cap``."""
    if mpmath.isnan(a) or mpmath.isnan(b):
        return cap if (mpmath.isnan(a) and mpmath.isnan(b)) else 0.0
    if a == b:
        return cap
    if mpmath.isinf(a) or mpmath.isinf(b) or b == 0:
        return 0.0
    rel = abs((a - b) / b)
    return max(0.0, min(cap, -float(mpmath.log10(rel))))


def agreement(lo: Any, hi: Any, prec: int) -> float:
    """The smallest number of agreeing decimal digits over all elements."""
    cap = math.floor(prec * math.log10(2) * 100) / 100
    with mpmath.workprec(max(prec, 64) + 16):
        if isinstance(hi, np.ndarray):
            if hi.size == 0:
                return cap
            return min(_agree(a, b, cap) for a, b in zip(lo.flat, hi.flat, strict=True))
        return _agree(lo, hi, cap)


def certified(
    label: str, compute: Callable[[int], Any], prec: int, input_format: str | None = None
) -> Truth:
    """Run ``compute(p)`` (mpmath work at ``p`` bits) at ``prec`` and at ``2*prec + 32`` bits.

    The higher-precision result is kept; ``digits`` is the number of decimal digits on which
    the two agree (minimum over elements), a conservative bound on the kept value's accuracy.
    """
    with mpmath.workprec(prec):
        lo = compute(prec)
    hp = 2 * prec + 32
    with mpmath.workprec(hp):
        hi = compute(hp)
    return Truth(label, mp=hi, digits=agreement(lo, hi, prec), prec=hp, input_format=input_format)
