"""How a row's error numbers are shown (`fpexplore.metrics.measure` computes them).

- Bits of agreement, ``-log2(relative error)``, are capped at the precision p: a p-bit
  significand cannot agree in more, and a correctly rounded result is within 2^-p. "24.0" for
  float32 means all its bits; a result equal to the truth shows "all".
- An ULP error that is infinite or above 2^p (result and truth nowhere near each other on the
  grid) is shown as the event behind it: ``overflow``, ``NaN``, ``sign flip``, ``0 vs ≠0``,
  ``≠0 vs 0`` or ``off scale``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import formats

__all__ = ["bits_cap", "bits_text", "ulp_event", "ulp_text"]


def bits_cap(fmt: str) -> int:
    """The most bits of agreement a result in format ``fmt`` shows: its precision."""
    try:
        return formats.get(fmt).precision
    except Exception:  # an unknown format name: no cap beyond float64's
        return 53


def bits_text(bits: float, fmt: str) -> str:
    """Bits of agreement as shown: "all" when equal to the truth, else capped at the precision."""
    if math.isinf(bits) and bits > 0:
        return "all"
    if math.isnan(bits):
        return "—"
    return "0.0" if bits <= 0 else f"{min(bits, bits_cap(fmt)):.1f}"  # never "-0.0"


def ulp_event(err: Any, value: Any) -> str | None:
    """What happened at the worst element (a short phrase) when its ULP error is too large to
    mean a count, or it changed sign or came out zero; else None. The element is compared with
    the truth the row was measured against (``err.truth``), never with another row's."""
    ulp = float(err.max_abs_ulp)
    readable = math.isfinite(ulp) and ulp <= 2.0 ** bits_cap(err.fmt)
    if readable and (ulp < 2 or getattr(err, "at", "")):
        return None  # in ULPs of the largest value a zero or a sign far below it is a count
    try:
        u = np.abs(np.asarray(err.ulp, dtype=np.float64)).reshape(-1)
        worst = int(np.nanargmax(np.where(np.isnan(u), np.inf, u))) if u.size else 0
        got = float(np.asarray(value, dtype=np.float64).reshape(-1)[worst])
        want = float(np.asarray(err.truth, dtype=np.float64).reshape(-1)[worst])
    except Exception:
        return None if math.isfinite(ulp) else "not finite"
    if readable:  # a count that reads, unless the worst element changed sign or hit zero
        if got == 0 and want != 0:
            return "0 vs ≠0"
        if want != 0 and (got < 0) != (want < 0):
            return "sign flip"
        return None
    if math.isnan(got) or math.isnan(want):
        return "NaN"
    if math.isinf(got) and math.isfinite(want):
        return "overflow"
    if math.isinf(want):
        return "inf truth"
    if got == 0 and want != 0:
        return "0 vs ≠0"
    if want == 0 and got != 0:
        return "≠0 vs 0"
    if (got < 0) != (want < 0):
        return "sign flip"
    return "off scale"


def ulp_text(err: Any, value: Any, within_bound: bool | None = None) -> str:
    """The ULP error cell: the signed count, or the event (`ulp_event`); a row within its
    a-priori bound shows its count (the row's note, or the bar's line, says it is within)."""
    event = None if within_bound else ulp_event(err, value)
    if event is not None:
        return event
    v = err.ulp_scalar if err.ulp_scalar is not None else err.max_abs_ulp
    return f"{v:+.3g}"
