"""The claims of a float-bits explanation: what rounding theory predicts for the typed value,
compared with what each format stored. The predictions use exact integer arithmetic on the
typed value, independently of `fpexplore.formats.round_exact`, which stored the rows.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from .. import formats
from ..result import Claim
from ..result.spec import declare_texts

#: key -> the claim as declared; the measured numbers follow it after a colon.
CLAIMS = {
    "exact_where_predicted": "a value is stored exactly where the format has the bits and the "
    "range for it, and nowhere else",
    "nearest": "every format stores a nearest value: none of its values is closer, and the error "
    "is at most half an ULP",
    "ties_to_even": "a value exactly halfway between two values of a format goes to the one whose "
    "last mantissa bit is 0 (infinity past the largest value)",
    "direction": "the dropped part of a ULP decides the direction: below half rounds toward zero, "
    "above half away from it",
    "range": "the range decides overflow (from the largest value plus half an ULP on), underflow "
    "(up to half the smallest subnormal) and subnormals",
    "rel_within_u": "in the normal range the relative error is at most the unit roundoff "
    "u = 2^-precision of the format",
    "neighbours": "the stored value's two neighbours bracket the typed value, the one farther "
    "from zero one ULP away",
    "numpy_agrees": "NumPy's float16, float32 and float64 of the typed value are the values "
    "stored here",
}

_TWO = Fraction(2)
#: a decimal as NumPy's float constructors read it (also the float-bits view's decimal syntax)
DECIMAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _floor_log2(v: Fraction) -> int:
    n, d = v.numerator, v.denominator
    e = n.bit_length() - d.bit_length()
    if (n << max(0, -e)) < (d << max(0, e)):
        e -= 1
    return e


def _spacing(a: Fraction, f: formats.Format) -> Fraction:
    """The grid spacing of ``f`` in the binade of ``a`` > 0 (unbounded above)."""
    return _TWO ** (max(_floor_log2(a), f.emin) - f.mbits)


def _overflow_from(f: formats.Format) -> Fraction:
    return Fraction(f.max) + _TWO ** (f.emax - f.mbits) / 2


def _num(x: Fraction | float) -> str:
    if isinstance(x, Fraction) and x.denominator == 1 and abs(x) < 10**16:
        return str(x.numerator)
    try:
        v = float(x)
    except OverflowError:  # past float64's range (binary64's own overflow threshold)
        import mpmath

        with mpmath.workdps(20):
            return mpmath.nstr(mpmath.mpf(x.numerator) / x.denominator, 6)
    if v.is_integer() and abs(v) < 2**53:
        return str(int(v))
    return f"{v:.6g}"


def _names(fs: Sequence[str]) -> str:
    return ", ".join(fs) if fs else "none"


def _predicted_kind(a: Fraction, f: formats.Format) -> str:
    """zero, subnormal, normal or inf for the magnitude ``a`` rounded to ``f``, from the range
    alone (ties at the edges go to the even side: 0 below, the smallest normal above)."""
    if a == 0:
        return "zero"
    if a >= _overflow_from(f):
        return "inf"
    if a <= Fraction(f.min_subnormal) / 2:
        return "zero"
    if a < Fraction(f.tiny) - Fraction(f.min_subnormal) / 2:
        return "subnormal"
    return "normal"


def _exact_in(a: Fraction, f: formats.Format) -> bool:
    if a == 0:
        return True
    n, d = a.numerator, a.denominator
    if d & (d - 1):
        return False
    tz = (n & -n).bit_length() - 1
    m, low = n >> tz, tz - (d.bit_length() - 1)  # a = m * 2**low, m odd
    top = low + m.bit_length() - 1
    return m.bit_length() <= f.precision and low >= f.emin - f.mbits and top <= f.emax


#: the claims declared: each text, then what this value shows
SPECS = declare_texts({k: (t, ": {detail}") for k, t in CLAIMS.items()})


def _claim(key: str, detail: str, holds: bool | None, reason: str = "") -> Claim:
    return SPECS[key].claim(holds, reason=reason, detail=detail)


def explanation_claims(text: str, value: Fraction | float, rows: Sequence[Any]) -> dict[str, Claim]:
    """The claims of `CLAIMS` for the typed ``text`` (exact ``value``) and its ``rows``."""
    if isinstance(value, float) and not math.isfinite(value):
        why = f"{text} is not a finite number: the typed value is stored as it is"
        return {k: spec.not_checked(why) for k, spec in SPECS.items()}
    v = Fraction(value)
    a = abs(v)
    fs = [(r, formats.get(r.format)) for r in rows]
    return {
        "exact_where_predicted": _exact_claim(text, a, fs),
        "nearest": _nearest_claim(text, v, fs),
        "ties_to_even": _ties_claim(text, a, fs),
        "direction": _direction_claim(text, a, fs),
        "range": _range_claim(text, a, fs),
        "rel_within_u": _rel_claim(text, a, fs),
        "neighbours": _neighbours_claim(text, v, fs),
        "numpy_agrees": _numpy_claim(text, value, fs),
    }


def _exact_claim(text: str, a: Fraction, fs: list) -> Claim:
    predicted = [f.name for _, f in fs if _exact_in(a, f)]
    measured = [r.format for r, _ in fs if r.exact]
    odd = a.denominator >> ((a.denominator & -a.denominator).bit_length() - 1)
    if odd > 1:
        why = f"{text} has the odd factor {_num(Fraction(odd))} in its denominator"
    elif a == 0:
        why = f"{text} is zero"
    else:
        n = a.numerator >> ((a.numerator & -a.numerator).bit_length() - 1)
        why = f"{text} has {n.bit_length()} significant bits"
    detail = f"{why}; predicted exact in {_names(predicted)}, stored exactly in {_names(measured)}"
    return _claim("exact_where_predicted", detail, predicted == measured)


def _nearest_claim(text: str, v: Fraction, fs: list) -> Claim:
    ok, worst, where = True, 0.0, ""
    for r, f in fs:
        if math.isinf(r.stored):
            ok &= abs(v) >= _overflow_from(f)
            continue
        err = abs(Fraction(r.stored) - v)
        for n in (r.next_down, r.next_up):
            if math.isfinite(n):
                ok &= err <= abs(Fraction(n) - v)
        ok &= err <= Fraction(r.ulp) / 2
        if abs(r.ulp_error) >= worst:
            worst, where = abs(r.ulp_error), r.format
    detail = f"{text}: the largest error is {worst:.3g} ULP, in {where or 'none'}"
    return _claim("nearest", detail, ok)


def _tie(a: Fraction, f: formats.Format) -> tuple[Fraction, Fraction, Fraction] | None:
    """(lower, upper, even) grid points of ``f`` around ``a`` when ``a`` is halfway between
    them; None otherwise."""
    if a == 0:
        return None
    s = _spacing(a, f)
    k = math.floor(a / s)
    if a - k * s != s / 2:
        return None
    lo, hi = k * s, (k + 1) * s
    return lo, hi, lo if k % 2 == 0 else hi


def _ties_claim(text: str, a: Fraction, fs: list) -> Claim:
    ok, parts = True, []
    for r, f in fs:
        t = _tie(a, f)
        if t is None:
            continue
        lo, hi, even = t
        expected = math.inf if even > Fraction(f.max) else float(even)
        ok &= abs(r.stored) == expected
        parts.append(f"{f.name}: {_num(lo)} or {_num(hi)} -> {_num(abs(r.stored))}")
    if not parts:
        return _claim("ties_to_even", f"{text} is halfway between two values in no format", True)
    return _claim("ties_to_even", f"{text} is a tie in " + "; ".join(parts), ok)


def _direction_claim(text: str, a: Fraction, fs: list) -> Claim:
    ok, parts = True, []
    for r, f in fs:
        if a == 0 or r.exact or (math.isinf(r.stored) and a >= _TWO ** (f.emax + 1)):
            continue  # past the last binade: overflow is the range's claim
        s = _spacing(a, f)
        dropped = a / s - math.floor(a / s)
        up = abs(r.stored) > a
        if dropped == Fraction(1, 2):
            parts.append(f"{f.name} 0.5 (a tie, {'up' if up else 'down'})")
            continue
        ok &= up == (dropped > Fraction(1, 2))
        parts.append(f"{f.name} {float(dropped):.4g} ({'up' if up else 'down'})")
    if not parts:
        return _claim("direction", f"{text} is stored exactly in every format", True)
    return _claim("direction", f"{text}: " + ", ".join(parts), ok)


def _range_claim(text: str, a: Fraction, fs: list) -> Claim:
    ok, groups = True, {}
    for r, f in fs:
        kind = _predicted_kind(a, f)
        ok &= kind == r.kind
        if kind == "inf":
            label = f"overflow in {f.name} (from {_num(_overflow_from(f))} on)"
        elif kind == "zero" and a != 0:
            label = f"underflow to 0 in {f.name} (up to {_num(Fraction(f.min_subnormal) / 2)})"
        else:
            groups.setdefault(kind, []).append(f.name)
            continue
        groups.setdefault(label, [])
    parts = [k if not names else f"{k} in {_names(names)}" for k, names in groups.items()]
    return _claim("range", f"{text}: " + "; ".join(parts), ok)


def _rel_claim(text: str, a: Fraction, fs: list) -> Claim:
    ok, worst, where = True, -1.0, ""
    for r, f in fs:
        if a == 0 or _predicted_kind(a, f) != "normal" or not math.isfinite(r.stored):
            continue
        rel = abs(abs(Fraction(r.stored)) - a) / a
        ok &= rel <= _TWO**-f.precision
        if float(rel) > worst:
            worst, where = float(rel), f.name
    if not where:
        return _claim("rel_within_u", f"{text} is in no format's normal range", True)
    u = 2.0 ** -formats.get(where).precision
    detail = f"{text}: the largest relative error is {worst:.3g}, in {where} (u = {u:.3g})"
    return _claim("rel_within_u", detail, ok)


def _neighbours_claim(text: str, v: Fraction, fs: list) -> Claim:
    ok, shown = True, ""
    for r, _ in fs:
        if not math.isfinite(r.stored):
            continue
        down, up = r.next_down, r.next_up
        ok &= (math.isinf(down) or Fraction(down) < v) and (math.isinf(up) or v < Fraction(up))
        far = up if r.stored > 0 or (r.stored == 0 and v >= 0) else down
        if math.isfinite(far):
            ok &= abs(Fraction(far) - Fraction(r.stored)) == Fraction(r.ulp)
        lo, hi = r.neighbours
        shown = f"{r.format}: {lo} < {text} < {hi}, ULP {r.ulp:.3g}"
    return _claim("neighbours", shown or f"{text} is stored finite in no format", ok)


def _numpy_claim(text: str, value: Fraction | float, fs: list) -> Claim:
    t = text.strip().replace("_", "").replace(" ", "")
    source: Any = t if DECIMAL.match(t) else float(value)
    via = "" if isinstance(source, str) else f" (NumPy reads {text} as the float64 {source!r})"
    ok, parts = True, []
    for r, f in fs:
        if f.dtype is None:
            continue
        with np.errstate(over="ignore", under="ignore"):
            got = float(f.dtype.type(source))
        ok &= got == r.stored
        parts.append(f"np.{f.dtype.name} {got!r}")
    if not parts:
        return _claim("numpy_agrees", "none of these formats has a NumPy dtype", True)
    return _claim("numpy_agrees", f"{text}: " + ", ".join(parts) + via, ok)
