"""Binary floating-point formats: bits, classes, ULPs, neighbours and correct rounding.

Five formats: ``binary16`` (half), ``bfloat16``, ``tf32``, ``binary32`` and ``binary64``.
bfloat16 and TF32 (NVIDIA tensor cores' rounding format: float32's 8 exponent bits, float16's
10 mantissa bits, treated as IEEE with subnormals and infinities) have no NumPy dtype here:
their values are float32 numbers on the format's grid.

Rounding is round-half-to-even with subnormals and overflow to infinity: `round_exact` rounds
exact values (``Fraction``, ``int``, ``float``, mpmath numbers, object arrays of those) with
integer arithmetic, `round_array` float arrays with vectorized integer arithmetic on their bits.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from .errors import InvalidInput, InvalidParameter, shown

__all__ = [
    "FORMATS",
    "Fields",
    "Format",
    "bit_string",
    "bits",
    "classify",
    "fields",
    "from_bits",
    "get",
    "named",
    "names",
    "next_down",
    "next_up",
    "round_array",
    "round_bits",
    "round_exact",
    "to_grid",
    "ulp",
    "ulp_distance",
]


@dataclass(frozen=True)
class Format:
    """A binary format: 1 sign bit, ``ebits`` exponent bits, ``mbits`` stored mantissa bits.

    ``dtype`` is the NumPy dtype of the format itself (None for bfloat16/TF32); ``storage`` is
    the NumPy dtype its values are held in (float32 for bfloat16 and TF32).
    """

    name: str
    ebits: int
    mbits: int
    bias: int
    dtype: np.dtype | None
    storage: np.dtype
    aliases: tuple[str, ...] = ()

    @property
    def precision(self) -> int:
        """Significand bits, the implicit one included."""
        return self.mbits + 1

    @property
    def width(self) -> int:
        """Bits in a pattern."""
        return 1 + self.ebits + self.mbits

    @property
    def emax(self) -> int:
        return self.bias

    @property
    def emin(self) -> int:
        return 1 - self.bias

    @property
    def bits_dtype(self) -> np.dtype:
        return np.dtype({16: np.uint16, 19: np.uint32, 32: np.uint32, 64: np.uint64}[self.width])

    @property
    def max(self) -> float:
        """Largest finite value."""
        return math.ldexp(2**self.precision - 1, self.emax - self.mbits)

    @property
    def tiny(self) -> float:
        """Smallest positive normal value."""
        return math.ldexp(1.0, self.emin)

    @property
    def min_subnormal(self) -> float:
        return math.ldexp(1.0, self.emin - self.mbits)

    @property
    def eps(self) -> float:
        """Distance from 1 to the next larger value."""
        return math.ldexp(1.0, -self.mbits)

    def __repr__(self) -> str:
        return (
            f"Format({self.name!r}, exponent bits={self.ebits}, mantissa bits={self.mbits}, "
            f"bias={self.bias})"
        )


_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("binary16", 5, 10, 15, _F16, _F16, ("float16", "half", "fp16", "f16", "f2", "e")),
        Format("bfloat16", 8, 7, 127, None, _F32, ("bf16",)),
        Format("tf32", 8, 10, 127, None, _F32, ("tensorfloat32",)),
        Format(
            "binary32",
            8,
            23,
            127,
            _F32,
            _F32,
            ("float32", "single", "fp32", "f32", "float", "f4", "f"),
        ),
        Format(
            "binary64", 11, 52, 1023, _F64, _F64, ("float64", "double", "fp64", "f64", "f8", "d")
        ),
    )
}
_LOOKUP = {alias: f for f in FORMATS.values() for alias in (f.name, *f.aliases)}


def names() -> tuple[str, ...]:
    return tuple(FORMATS)


def get(fmt: Any) -> Format:
    """A `Format` from a name ("float16", "binary16", "half", "bfloat16", "tf32", "float32",
    "float64", ...), a NumPy dtype or scalar type, or a torch/TensorFlow dtype."""
    if isinstance(fmt, Format):
        return fmt
    key: str | None = None
    if isinstance(fmt, str):
        key = fmt
    elif fmt is None or isinstance(fmt, bool | int | float | bytes | bytearray | memoryview):
        key = "<not a format>"  # np.dtype(None) would silently mean float64, b"f4" float32
    else:
        try:
            key = np.dtype(fmt).name
        except Exception:  # TypeError, or ValueError/KeyError from a dict or list spec
            name = getattr(fmt, "name", None)
            try:
                key = name if isinstance(name, str) else str(fmt)
            except Exception:
                key = "<not a format>"
    key = key.strip().lower().removeprefix("torch.").removeprefix("tf.")
    if key not in _LOOKUP:
        known = ", ".join(f"{f.name} ({', '.join(f.aliases[:2])})" for f in FORMATS.values())
        accepted = f"one of {known}, or a float16/float32/float64 dtype"
        raise InvalidParameter("fmt", fmt, accepted)
    return _LOOKUP[key]


def named(name: str) -> Format:
    """The `Format` called ``name`` (a name or alias, as `get`); InvalidParameter otherwise."""
    return get(name)


#: Containers numpy would read as int or bool arrays, yet which hold no numbers to round (a
#: numpy timedelta64 is even an integer subclass), and times, which are no numbers either.
_NOT_FLOATS = (bool, np.bool_, bytes, bytearray, memoryview, range)
_NOT_FLOATS += (np.timedelta64, np.datetime64, datetime.timedelta, datetime.date)
#: array kinds that hold no numbers: bool, timedelta, datetime
_NOT_FLOAT_KINDS = "bmM"


def _not_numbers(x: Any) -> bool:
    """Whether ``x`` is one of `_NOT_FLOATS` or an array of bools or times."""
    return isinstance(x, _NOT_FLOATS) or (
        isinstance(x, np.ndarray) and x.dtype.kind in _NOT_FLOAT_KINDS
    )


def _array(x: Any, where: str, name: str = "x") -> np.ndarray:
    """``np.asarray(x)``, with a ragged list or an object numpy cannot read refused by name."""
    try:
        return np.asarray(x)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidInput(
            f"{where}: {name!r} must be a number or a rectangular array of numbers; got "
            f"{shown(x)} ({exc})."
        ) from None


def _refuse_non_numbers(x: Any, where: str, name: str = "x") -> None:
    """Raise `InvalidInput` for a bool (scalar or array), bytes, bytearray or range."""
    if _not_numbers(x):
        raise InvalidInput(
            f"{where}: {name!r} must be a number or an array of numbers (float or int); got "
            f"{type(x).__name__} (a bool or a time is not a float; bytes, bytearray and range "
            "are not float arrays)."
        )


# ---------------------------------------------------------------------------------------------
# exact rounding (integers all the way)


def floor_log2(n: int, d: int = 1) -> int:
    """``floor(log2(n/d))`` for positive integers, exactly."""
    e = n.bit_length() - d.bit_length()  # floor(log2(n/d)) is e or e - 1
    return e - 1 if (n << max(0, -e)) < (d << max(0, e)) else e


def _round_ratio(n: int, d: int, f: Format) -> float:
    """n/d (n >= 0, d > 0) correctly rounded to ``f``, returned as a float64 on f's grid."""
    if n == 0:
        return 0.0
    e = floor_log2(n, d)
    if e > f.emax:
        return math.inf
    if e < f.emin - f.mbits - 1:  # below half the smallest subnormal
        return 0.0
    q = max(e, f.emin) - f.mbits
    num, den = (n, d << q) if q >= 0 else (n << -q, d)
    m, r = divmod(num, den)
    if 2 * r > den or (2 * r == den and m & 1):
        m += 1
    if m >> f.precision:  # carried into a new binade
        m >>= 1
        q += 1
    if q + f.mbits > f.emax:
        return math.inf
    return math.ldexp(m, q)


def _round_scalar(value: Any, f: Format) -> float:
    """One exact value rounded to ``f`` as a float64 (NaN, infinities and -0.0 kept)."""
    if isinstance(value, float | np.floating):  # a long double by its own bits
        if not np.isfinite(value) or value == 0:
            return float(value)
        n, d = map(int, value.as_integer_ratio())
    elif isinstance(value, int | np.integer) and not isinstance(value, bool):
        n, d = int(value), 1
    elif isinstance(value, Fraction):  # float(value) may overflow
        n, d = value.numerator, value.denominator
    elif (raw := getattr(value, "_mpf_", None)) is not None:  # an mpmath mpf
        sign, man, exp, bc = raw
        if not man:  # zero, inf or NaN
            return float(value)
        if exp + bc - 1 > f.emax + 1:
            return -math.inf if sign else math.inf
        if exp + bc - 1 < f.emin - f.mbits - 2:
            return -0.0 if sign else 0.0
        n, d = (-1) ** sign * (int(man) << max(exp, 0)), 1 << max(-exp, 0)
    else:
        raise InvalidInput(
            f"round_exact: 'value' must be a Fraction, int, float, an mpmath number, or an "
            f"object array of those; got {shown(value)} of type {type(value).__name__}."
        )
    return math.copysign(_round_ratio(abs(n), d, f), -1.0 if n < 0 else 1.0)


def _round_each(values: Any, shape: tuple[int, ...], f: Format) -> np.ndarray:
    """Exact values, one by one, rounded to ``f`` as an array of ``shape`` in f's storage."""
    out = np.array([_round_scalar(v, f) for v in values], dtype=np.float64).reshape(shape)
    with np.errstate(invalid="ignore", over="ignore"):
        return out.astype(f.storage)


def round_exact(value: Any, fmt: Any = "binary64") -> Any:
    """The correctly rounded value of an exact number (or array) in format ``fmt``.

    ``value``: a ``Fraction``, ``int``, ``float``, mpmath ``mpf`` (NaN and infinities too), an
    object ndarray of those, or a float ndarray (rounded with `round_array`). Returns a NumPy
    scalar or array of the format's storage dtype (float32 on the grid for bfloat16/TF32).
    """
    f = get(fmt)
    _refuse_non_numbers(value, "round_exact", "value")
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return _round_each(value.reshape(-1), value.shape, f)
        if value.dtype.kind not in "fiu" and value.dtype.name != "bfloat16":
            raise InvalidInput(
                f"round_exact: 'value' must be numbers (a float, int or object array of exact "
                f"values); got an array of dtype {value.dtype}."
            )
        return round_array(value, f)
    return f.storage.type(_round_scalar(value, f))


def round_bits(value: Any, fmt: Any = "binary64") -> Any:
    """Bit pattern(s) of `round_exact(value, fmt)` (an int, or an unsigned array)."""
    return bits(round_exact(value, fmt), fmt)


def round_array(x: Any, fmt: Any) -> np.ndarray:
    """Round a float array (float16/32/64, or a bfloat16 dtype) to ``fmt``, bit exactly.

    Vectorized integer arithmetic on the float64 bits: one correct rounding (half to even,
    subnormals, overflow to inf) from the exact input value. NaN stays NaN (sign kept).
    Returns the format's storage dtype.
    """
    f = get(fmt)
    _refuse_non_numbers(x, "round_array")
    a = _array(x, "round_array")
    if a.dtype.kind not in "fiu" and a.dtype.name != "bfloat16":
        raise InvalidInput(
            f"round_array: 'x' must be an array of numbers (float or int dtype); got dtype "
            f"{a.dtype}."
        )
    if (a.dtype.kind in "iu" and a.dtype.itemsize >= 8) or (
        a.dtype.kind == "f" and a.dtype.itemsize > 8
    ):
        # int64/uint64 beyond 2**53 and long doubles do not fit float64: a cast would round
        # once and the format a second time; round each such value exactly instead
        wide = a.astype(np.float64) if a.dtype.kind == "f" else None
        exact_ok = (
            np.abs(a) <= 2**53 if a.dtype.kind in "iu" else (a == wide.astype(a.dtype)) | (a != a)
        )
        if not np.all(exact_ok):
            flat = a.reshape(-1)
            res = _round_each(flat.tolist() if a.dtype.kind in "iu" else flat, a.shape, f)
            return res if res.shape else res[()]
    with np.errstate(invalid="ignore"):  # signalling NaNs
        a64 = np.array(a, dtype=np.float64, copy=True, order="C")
    if f.mbits >= 52:
        return a64 if a64.shape else a64[()]
    if f.dtype is not None and f.dtype == np.float32:
        # the IEEE cast itself: one rounding, half to even, subnormals, overflow to inf
        with np.errstate(invalid="ignore", over="ignore"):
            res = a64.astype(np.float32)
        return res if res.shape else res[()]
    raw = a64.view(np.uint64)
    expf = ((raw >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    frac = raw & np.uint64((1 << 52) - 1)
    big = np.where(expf == 0, frac, frac | np.uint64(1 << 52))
    unit = np.where(expf == 0, -1074, expf - 1075)  # value = big * 2**unit
    mag = np.abs(a64)
    finite = np.isfinite(a64) & (mag > 0)
    lead = np.frexp(np.where(finite, mag, 1.0))[1].astype(np.int64) - 1
    q = np.maximum(lead, f.emin) - f.mbits
    shift = q - unit
    drop = finite & (shift > 0)
    s = np.where(drop, np.minimum(shift, 60), 1).astype(np.uint64)
    m = big >> s
    rem = big & ((np.uint64(1) << s) - np.uint64(1))
    half = np.uint64(1) << (s - np.uint64(1))
    up = (rem > half) | ((rem == half) & ((m & np.uint64(1)) == np.uint64(1)))
    m = m + up.astype(np.uint64)
    rounded = np.ldexp(m.astype(np.float64), np.where(drop, q, 0).astype(np.int32))
    out = np.where(drop, rounded, mag)
    out = np.where(np.isfinite(out) & (out > f.max), np.inf, out)
    out = np.where(np.isnan(a64), a64, out)
    out = np.copysign(out, a64)
    with np.errstate(invalid="ignore"):
        res = out.astype(f.storage)
    return res if res.shape else res[()]


def to_grid(x: Any, fmt: Any) -> Any:
    """``x`` as the format's storage dtype: exact values are rounded with `round_exact`, floats
    with `round_array` (values already on the grid are unchanged)."""
    f = get(fmt)
    _refuse_non_numbers(x, "to_grid")
    if f.dtype is not None and isinstance(x, np.ndarray | np.generic) and x.dtype == f.dtype:
        return x  # already in the format (NaN payloads kept)
    if (isinstance(x, np.ndarray) and x.dtype != object) or isinstance(x, np.generic | float):
        return round_array(x, f)
    return round_exact(x, f)


# ---------------------------------------------------------------------------------------------
# bit patterns


def bits(x: Any, fmt: Any) -> Any:
    """Bit pattern(s) of ``x`` in ``fmt`` (``x`` is first rounded to the format if needed)."""
    f = get(fmt)
    g = np.asarray(to_grid(x, f), dtype=f.storage)
    if f.name in ("bfloat16", "tf32"):
        g = np.where(np.isnan(g), np.copysign(np.float32(np.nan), g), g).astype(np.float32)
        b = (g.view(np.uint32) >> np.uint32(32 - f.width)).astype(f.bits_dtype)
    else:
        b = g.view(f.bits_dtype)
    return int(b) if b.ndim == 0 else b


def from_bits(pattern: Any, fmt: Any) -> Any:
    """The value(s) with bit pattern(s) ``pattern`` in ``fmt``, as the storage dtype."""
    f = get(fmt)
    accepted = f"an integer (or integer array) in [0, 2**{f.width})"
    if _not_numbers(pattern):  # bytes, a range, a bool or a time are no bit patterns
        raise InvalidParameter("pattern", pattern, accepted, "formats.from_bits")
    p = _array(pattern, "from_bits", "pattern")
    if p.dtype == object:
        vals = p.reshape(-1).tolist()
        ints = (isinstance(v, int | np.integer) and not isinstance(v, bool) for v in vals)
        if not all(ints) or any(v < 0 or v >> f.width for v in vals):
            raise InvalidParameter("pattern", pattern, accepted, "formats.from_bits")
        p = np.array(vals, dtype=np.uint64).reshape(p.shape)
    ok = p.dtype.kind in "iu" and not np.any(p < 0)
    if not ok or (f.width < 64 and np.any(p.astype(np.uint64) >> np.uint64(f.width))):
        raise InvalidParameter("pattern", pattern, accepted, "formats.from_bits")
    if f.name in ("bfloat16", "tf32"):
        v = (p.astype(np.uint32) << np.uint32(32 - f.width)).view(np.float32)
    else:
        v = p.astype(f.bits_dtype).view(f.storage)
    return v if v.ndim else v[()]


class Fields(NamedTuple):
    """Sign bit, biased exponent field, stored mantissa field, and the whole pattern."""

    sign: Any
    exponent: Any
    mantissa: Any
    bits: Any


def fields(x: Any, fmt: Any) -> Fields:
    """(sign, exponent, mantissa, bits) of ``x`` in ``fmt`` (ints, or arrays for arrays)."""
    f = get(fmt)
    b = bits(x, f)
    b64 = np.asarray(b).astype(np.uint64)
    sign = (b64 >> np.uint64(f.width - 1)).astype(np.uint8)
    exponent = ((b64 >> np.uint64(f.mbits)) & np.uint64((1 << f.ebits) - 1)).astype(np.int64)
    mantissa = b64 & np.uint64((1 << f.mbits) - 1)
    if isinstance(b, int):
        return Fields(int(sign), int(exponent), int(mantissa), b)
    return Fields(sign, exponent, mantissa, b)


def bit_string(x: Any, fmt: Any, sep: str = " ") -> str:
    """The pattern of a scalar as "sign exponent mantissa" binary digits."""
    f = get(fmt)
    b = bits(x, f)
    if not isinstance(b, int):
        raise InvalidInput(
            f"bit_string: 'x' must be one scalar value; got an array of shape {np.shape(x)}."
        )
    s = format(b, f"0{f.width}b")
    return sep.join((s[0], s[1 : 1 + f.ebits], s[1 + f.ebits :]))


_CLASSES = np.array(["zero", "subnormal", "normal", "inf", "nan"])


def classify(x: Any, fmt: Any) -> Any:
    """'zero', 'subnormal', 'normal', 'inf' or 'nan' for ``x`` rounded to ``fmt`` (str array
    for arrays)."""
    f = get(fmt)
    fl = fields(x, f)
    e = np.asarray(fl.exponent, dtype=np.int64)
    m = np.asarray(fl.mantissa, dtype=np.uint64)
    top = (1 << f.ebits) - 1
    idx = np.where(e == 0, np.where(m == 0, 0, 1), np.where(e == top, np.where(m == 0, 3, 4), 2))
    out = _CLASSES[idx]
    return str(out) if out.ndim == 0 else out


# ---------------------------------------------------------------------------------------------
# spacing and neighbours


_ULP_ACCEPTS = "a number (float, int, Fraction, mpmath value) or a float array"


def ulp(x: Any, fmt: Any) -> Any:
    """Spacing of ``fmt`` at ``x``: 2**(max(floor(log2|x|), emin) - mantissa bits).

    That is the gap from |x| up to the next larger magnitude when x is on the grid. ulp(0) is
    the smallest subnormal, ulp(±inf) is inf, ulp(NaN) is NaN. float64 result. Beyond the
    largest finite value the same formula holds (ints, Fractions and floats alike); only a
    spacing beyond float64's own range is inf.
    """
    f = get(fmt)
    if _not_numbers(x):
        raise InvalidParameter("x", x, _ULP_ACCEPTS, "formats.ulp")
    if isinstance(x, np.integer):
        x = int(x)
    if isinstance(x, Fraction | int):  # a bool was refused above
        v = abs(Fraction(x))
        if v == 0:
            return f.min_subnormal
        e = max(floor_log2(v.numerator, v.denominator), f.emin) - f.mbits
        return math.ldexp(1.0, e) if e <= 1023 else math.inf  # inf: beyond float64's range
    if hasattr(x, "_mpf_"):
        x = float(x)
    a = _array(x, "ulp")
    if a.dtype.kind != "f":
        if a.dtype.kind in "iu":
            return ulp(np.array(a.astype(object)), f) if a.ndim else ulp(int(a), f)
        if a.dtype == object and a.ndim:
            return np.array([ulp(v, f) for v in a.reshape(-1)], dtype=np.float64).reshape(a.shape)
        raise InvalidParameter("x", x, _ULP_ACCEPTS, "formats.ulp")
    a = np.abs(a.astype(np.float64))
    finite = np.isfinite(a) & (a > 0)
    lead = np.frexp(np.where(finite, a, 1.0))[1].astype(np.int64) - 1
    u = np.ldexp(1.0, (np.maximum(lead, f.emin) - f.mbits).astype(np.int32))
    u = np.where(a == 0, f.min_subnormal, u)
    u = np.where(np.isfinite(a), u, a)  # inf -> inf, nan -> nan
    return float(u) if u.ndim == 0 else u


def ulp_distance(a: Any, b: Any) -> np.ndarray:
    """How many float32 values apart ``a`` and ``b`` are, elementwise (±0 are one value)."""

    def ordered(x: Any) -> np.ndarray:
        i = np.asarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    return np.abs(ordered(a) - ordered(b))


def next_up(x: Any, fmt: Any) -> Any:
    """The next larger value of ``fmt`` after ``x`` (rounded to the format first)."""
    f = get(fmt)
    g = np.asarray(to_grid(x, f), dtype=f.storage)
    b = np.asarray(bits(g, f)).astype(np.uint64)
    one = np.uint64(1)
    sign = b >> np.uint64(f.width - 1)
    mag = b & np.uint64((1 << (f.width - 1)) - 1)
    # +x: one step out; -x: one step in (-min_subnormal -> -0); ±0 -> +min_subnormal
    nb = np.where(mag == 0, one, np.where(sign == 0, b + one, b - np.where(mag == 0, 0, one)))
    inf_bits = np.uint64(((1 << f.ebits) - 1) << f.mbits)
    nb = np.where((sign == 0) & (mag == inf_bits), b, nb)  # +inf stays
    v = np.asarray(from_bits(nb.astype(np.uint64), f))
    v = np.where(np.isnan(g), g, v).astype(f.storage)
    return v if v.ndim else v[()]


def next_down(x: Any, fmt: Any) -> Any:
    """The next smaller value of ``fmt`` before ``x`` (rounded to the format first)."""
    f = get(fmt)
    g = np.asarray(to_grid(x, f), dtype=f.storage)
    v = -np.asarray(next_up(-g, f))
    return v if v.ndim else v[()]
