"""Error of a result against a `Truth`: ULPs in the result's own format, relative error, bits.

`measure(got, truth)` is vectorized: the truth comes as float64 pairs (hi, lo) with
hi + lo ≈ truth to about 106 bits (`Truth.split`), the error ``got - truth`` is formed with an
error-free transformation, and the rare elements that lie within rounding noise of a rounding
boundary (a tie, or a neighbour) are decided exactly with Fractions.

Conventions
-----------
- ``ulp``: signed error in units of the exact truth's ULP, ``(got - truth) / ulp(truth)``,
  Goldberg's ulp(x) = 2**(e - p + 1) with e the exponent of the *exact* x (not of x rounded to
  the format) and the format's smallest gap below its smallest normal
  (`fpexplore.formats.ulp` of the exact value; past the largest value the formula goes on).
  The unit belongs to the exact answer, so it is the same for every implementation measured
  against it. A truth just below a power of two that rounds up to it keeps the smaller unit
  (0.9999999747 has ulp 2**-24 in float32, though it rounds to 1.0, whose ulp is 2**-23), and
  a result of ±0 or a subnormal does not shrink it (dividing by ulp(got) would report a -0.0
  returned for a truth of -6e-8 in float32 as about 1e37 ULP instead of about 8e6).
  ``unit`` holds that ULP per element, so ``ulp * unit`` is ``got - truth``.
- ``rel``: ``|got - truth| / |truth|`` (0 when both are 0, inf when only the truth is 0).
- ``bits``: ``-log2(rel)``, inf when got equals the truth, 0 for rel >= 1, and at most the
  format's precision + 32 otherwise (beyond that it says nothing about the result).
- correctly rounded: got is the round-half-to-even value of the truth in got's format;
  faithful: got is one of the two format values that bracket the truth (or equals it).
- NaN and infinities: got NaN where the truth is NaN is agreement (0 ULP, inf bits, correctly
  rounded). Any other NaN on one side only is an infinite error. got ±inf where the truth is
  finite is an infinite error in ULPs, yet it is still *correctly rounded* when the truth
  overflows the format (|truth| >= max + ulp(max)/2), and faithful when |truth| > max.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from . import formats
from .errors import InvalidInput, shown

if TYPE_CHECKING:
    from .truth.value import Truth

__all__ = ["BITS_ABOVE_PRECISION", "ErrorSummary", "as_format_array", "measure", "truth_ulp"]

BITS_ABOVE_PRECISION = 32


@dataclass(frozen=True, eq=False)
class ErrorSummary:
    """Errors of one result (scalar or array) against its truth, per element and summarized."""

    fmt: str
    n: int
    max_abs_ulp: float
    ulp_scalar: float | None
    mean_abs_ulp: float
    p99_abs_ulp: float
    max_rel: float
    min_bits: float
    correctly_rounded: bool
    faithful: bool
    n_correctly_rounded: int
    n_faithful: int
    ulp: np.ndarray
    rel: np.ndarray
    bits: np.ndarray
    correctly_rounded_each: np.ndarray
    faithful_each: np.ndarray
    unit: np.ndarray  # the exact truth's ULP per element: ulp * unit is got - truth
    truth: np.ndarray  # the truth this result was measured against, rounded to float64
    #: what the errors are counted in: "" each element's own ULP; "largest" the ULP of the
    #: largest |truth|; "given" the ULP of magnitudes the caller gave (`measure`'s ``at``)
    at: str = ""

    _ARRAYS = ("ulp", "rel", "bits", "correctly_rounded_each", "faithful_each")
    _NOT_SAVED = ("unit", "truth")

    def abs_error(self) -> np.ndarray:
        """The signed error ``got - truth`` per element (float64): ``ulp * unit``."""
        with np.errstate(invalid="ignore"):
            return np.where(self.ulp == 0, 0.0, self.ulp * self.unit)

    def to_dict(self, max_elements: int = 64) -> dict[str, Any]:
        """JSON-ready: the summary, plus the per-element arrays when there are few elements."""
        out: dict[str, Any] = {}
        for fl in fields(self):
            if fl.name in self._NOT_SAVED:
                continue
            v = getattr(self, fl.name)
            if fl.name in self._ARRAYS:
                if self.n <= max_elements:
                    out[fl.name] = [_json_number(x) for x in np.ravel(v).tolist()]
            else:
                out[fl.name] = _json_number(v)
        return out

    def __str__(self) -> str:
        if self.ulp_scalar is not None:
            ulp = f"{self.ulp_scalar:+.3g}"
        else:
            ulp = f"max {self.max_abs_ulp:.3g}, mean {self.mean_abs_ulp:.3g}, "
            ulp += f"p99 {self.p99_abs_ulp:.3g}"
        flag = "faithful" if self.faithful else "not faithful"
        flag = "correctly rounded" if self.correctly_rounded else flag
        return f"{self.fmt}: {ulp} ulp, rel {self.max_rel:.3g}, {self.min_bits:.1f} bits, {flag}"


def _json_number(v: Any) -> Any:
    if isinstance(v, bool | np.bool_):
        return bool(v)
    if isinstance(v, float | np.floating):
        v = float(v)
        return v if math.isfinite(v) else str(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


# ---------------------------------------------------------------------------------------------
# reading results


def as_format_array(got: Any, fmt: Any = None) -> tuple[np.ndarray, formats.Format]:
    """``got`` as a float64 array plus its format.

    numpy arrays/scalars, Python floats, torch and TensorFlow tensors are read; the format is
    the dtype's (an ``ml_dtypes``/torch bfloat16 dtype gives bfloat16). ``fmt=`` names the
    format explicitly (e.g. bfloat16 or TF32 values held in float32); the values must then lie
    on its grid.
    """
    implied: str | None = None
    if isinstance(got, bool | np.bool_ | bytes | bytearray | memoryview | range) or (
        isinstance(got, np.ndarray) and got.dtype.kind == "b"
    ):
        raise InvalidInput(
            f"got must be floating-point numbers (a numpy array or scalar, a float, a torch or "
            f"TensorFlow tensor); got {type(got).__name__} (a bool is not a float; bytes, "
            "bytearray and range are not float arrays)."
        )
    if hasattr(got, "detach") and hasattr(got, "dtype"):  # torch
        t = got.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":
            implied, t = "bfloat16", t.float()
        got = t.numpy()
    elif not isinstance(got, np.ndarray | np.generic) and hasattr(got, "numpy"):  # TF, JAX
        got = got.numpy()
    try:
        arr = np.asarray(got)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidInput(
            f"'got' must be a number or a rectangular array of floats; got {shown(got, 60)} "
            f"({exc})."
        ) from None
    if arr.dtype.name == "bfloat16":
        implied, arr = "bfloat16", arr.astype(np.float32)
    if arr.dtype.kind in "iu":
        as_float = arr.astype(np.float64)
        if not np.array_equal(as_float.astype(arr.dtype), arr):
            bad = arr[as_float.astype(arr.dtype) != arr].reshape(-1)[0]
            raise InvalidInput(
                f"'got' must hold floats, or integers that float64 represents exactly; it holds "
                f"{bad!r}, which float64 cannot."
            )
        arr = as_float
    if arr.dtype.kind != "f":
        raise InvalidInput(
            f"got must be floating-point numbers (a numpy array or scalar, a float, a torch or "
            f"TensorFlow tensor); got dtype {arr.dtype} ({type(got).__name__})."
        )
    if fmt is None and implied is None and arr.dtype.itemsize > 8:  # long double: no format
        raise InvalidInput(
            f"'got' has dtype {arr.dtype}, which no format here stores; convert it to float64 "
            "(or name its format with fmt=)."
        )
    f = formats.get(fmt if fmt is not None else implied if implied is not None else arr.dtype)
    a64 = arr.astype(np.float64)
    if fmt is not None or implied is not None:
        on_grid = formats.round_array(a64, f).astype(np.float64)
        off = ~((on_grid == a64) | np.isnan(a64))
        if off.any():
            first = a64[off].ravel()[0]
            raise InvalidInput(
                f"got is said to be {f.name}, but {int(off.sum())} of its {a64.size} values are "
                f"not {f.name} values (the first is {first!r}); round them first, e.g. with "
                f"fpexplore.formats.round_array(got, {f.name!r})."
            )
    return a64, f


# ---------------------------------------------------------------------------------------------
# measuring


def measure(got: Any, truth: Truth, *, fmt: Any = None, at: Any = None) -> ErrorSummary:
    """Error of ``got`` (scalar or array, any supported dtype) against ``truth``.

    ``at``: count each error in ULPs of a magnitude instead of the element's own where that
    ULP is larger, and its bits relative to it: ``"largest"`` (the largest |truth|, the
    normwise measure of a result whose elements span many magnitudes, such as a gradient
    through a long chain) or magnitudes (a number or one per element, such as the largest size
    a weight took along an optimizer's steps). The rounding flags stay per element.

    Elements where float64 cannot carry the truth or the error (a truth beyond float64's
    range or below its resolution, an error that overflows, a difference within the truth's
    float64 approximation, a result at the format's largest value or infinite) are measured
    exactly with Fractions.
    """
    from .truth.value import Truth

    if not isinstance(truth, Truth):
        raise InvalidInput(
            f"measure: 'truth' must be a fpexplore.truth.Truth (e.g. fpexplore.truth.sum(x)); "
            f"got {shown(truth, 60)} of type {type(truth).__name__}."
        )
    g, f = as_format_array(got, fmt)
    scalar = g.ndim == 0
    if tuple(g.shape) != tuple(truth.shape):
        raise InvalidInput(
            f"got has shape {tuple(g.shape)} but the truth {truth.label!r} has shape "
            f"{tuple(truth.shape)}; they must match element for element."
        )
    hi, lo, known, margin = (np.atleast_1d(np.asarray(v)) for v in truth.split_bounded())
    hi, lo = hi.astype(np.float64), lo.astype(np.float64)
    g = np.atleast_1d(g)
    if margin.any():
        known = known.copy()
        _tighten(truth, g, f, hi.reshape(-1), lo.reshape(-1), known.reshape(-1), margin)
    with np.errstate(all="ignore"):
        ulp_err, rel, bits, cr, faithful, amb, unit = _elementwise(g, hi, lo, f)
        beyond = _beyond_float64(truth, hi)
        exact_needed = _needs_exact(g, hi, lo, known, ulp_err, beyond, f)
    amb &= ~exact_needed
    if amb.any():
        _decide_exactly(truth, g, f, np.flatnonzero(amb.ravel()), cr.ravel(), faithful.ravel())
    if exact_needed.any():
        _measure_exactly(
            truth,
            g,
            f,
            np.flatnonzero(exact_needed.ravel()),
            (ulp_err.ravel(), rel.ravel(), bits.ravel(), cr.ravel(), faithful.ravel()),
            unit.ravel(),
        )
    if at is not None:
        ulp_err, rel, bits, unit = _counted_at(ulp_err, unit, hi, f, at)
    abs_ulp = np.abs(ulp_err)
    n = int(g.size)
    p99, mean = _spread(abs_ulp) if n else (0.0, 0.0)
    shape = () if scalar else g.shape
    return ErrorSummary(
        fmt=f.name,
        n=n,
        max_abs_ulp=float(np.max(abs_ulp, initial=0.0)),
        ulp_scalar=float(ulp_err.ravel()[0]) if scalar else None,
        mean_abs_ulp=mean,
        p99_abs_ulp=p99,
        max_rel=float(np.max(rel, initial=0.0)),
        min_bits=float(np.min(bits, initial=math.inf)),
        correctly_rounded=bool(cr.all()),
        faithful=bool(faithful.all()),
        n_correctly_rounded=int(cr.sum()),
        n_faithful=int(faithful.sum()),
        ulp=ulp_err.reshape(shape),
        rel=rel.reshape(shape),
        bits=bits.reshape(shape),
        correctly_rounded_each=cr.reshape(shape),
        faithful_each=faithful.reshape(shape),
        unit=unit.reshape(shape),
        truth=hi.reshape(shape),
        at="" if at is None else "largest" if isinstance(at, str) else "given",
    )


def _spread(abs_ulp: np.ndarray) -> tuple[float, float]:
    """The 99th percentile and the mean of errors in ULPs (at least one)."""
    return float(np.percentile(abs_ulp, 99, method="inverted_cdf")), float(np.mean(abs_ulp))


def _counted_at(
    ulp_err: np.ndarray, unit: np.ndarray, hi: np.ndarray, f: formats.Format, at: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The errors (ULPs, relative, bits, unit) counted at magnitudes ``at`` (see `measure`)."""
    if isinstance(at, str):
        if at != "largest":
            raise InvalidInput(f"measure: 'at' must be 'largest' or magnitudes; got {at!r}.")
        at = float(np.max(np.abs(hi[np.isfinite(hi)]), initial=0.0))
    size = np.abs(np.broadcast_to(np.asarray(at, dtype=np.float64), hi.shape))
    with np.errstate(all="ignore"):
        diff = np.where(ulp_err == 0, 0.0, ulp_err * unit)  # got - truth
        wide = np.maximum(unit, np.asarray(formats.ulp(size, f), dtype=np.float64))
        ulp_err = np.where(ulp_err == 0, 0.0, diff / wide)
        top = np.maximum(np.abs(hi), size)
        rel = np.where(top > 0, np.abs(diff) / np.where(top > 0, top, 1.0), _rel_zero(diff))
        cap = f.precision + BITS_ABOVE_PRECISION
        bits = np.where(rel == 0, np.inf, np.clip(-np.log2(np.where(rel > 0, rel, 1.0)), 0, cap))
    return ulp_err, rel, bits, wide


def _rel_zero(diff: np.ndarray) -> np.ndarray:
    """The relative error against a zero truth: 0 where got is 0 too, else infinite."""
    return np.where(diff == 0, 0.0, np.inf)


def truth_ulp(truth: Truth, fmt: Any) -> np.ndarray:
    """The ULP in ``fmt`` of each exact element of ``truth`` (float64 array of its shape): the
    unit `measure` counts errors in, for bounds compared with them. NaN where the truth is
    NaN, inf where it is infinite."""
    f = formats.get(fmt)
    hi, lo, known, _ = (np.atleast_1d(np.asarray(v)) for v in truth.split_bounded())
    hi, lo = hi.astype(np.float64).reshape(-1), lo.astype(np.float64).reshape(-1)
    fin = np.isfinite(hi)
    lo = np.where(np.isfinite(lo), lo, 0.0)
    with np.errstate(all="ignore"):
        unit = _truth_ulp(np.where(fin, hi, 0.0), np.where(fin, lo, 0.0), f)
    unit = np.where(fin, unit, np.where(np.isnan(hi), np.nan, np.inf))
    idx = np.flatnonzero(
        (fin & _power_of_two(hi) & ~known.reshape(-1)) | _beyond_float64(truth, hi)
    )
    for i, t in zip(idx.tolist(), _exact_elements(truth, idx), strict=True):
        if t is not None:
            unit[i] = _float_or_inf(_exact_ulp(t, f))
    return unit.reshape(tuple(truth.shape))


_MARGIN_BITS = 42  # a truth known to 2**-42 of the error, the value and ulp(got) suffices


def _tighten(
    truth: Truth,
    g: np.ndarray,
    f: formats.Format,
    hi: np.ndarray,
    lo: np.ndarray,
    known: np.ndarray,
    margin: np.ndarray,
) -> None:
    """Where the truth is only known to within ``margin`` (a product computed level by
    level), make it known well enough for these results: more levels where that is cheaper,
    else the exact values. Updates the flat ``hi``, ``lo`` and ``known`` in place."""
    flat_g = g.reshape(-1)
    # a result at the format's largest value or beyond is measured exactly anyway
    margin = np.where(np.abs(flat_g) < f.max, margin.reshape(-1), 0.0)
    with np.errstate(all="ignore"):
        diff = np.abs((flat_g - hi) - lo)
        u = np.asarray(formats.ulp(np.where(np.isfinite(flat_g), flat_g, 0.0), f), np.float64)
        need = np.ldexp(np.minimum(np.minimum(diff, np.abs(hi)), u.reshape(-1)), -_MARGIN_BITS)
    need = np.where(np.isfinite(need), need, 0.0)
    idx = np.flatnonzero(margin.reshape(-1) > need)
    if not idx.size:
        return
    truth.deepen(need[idx], idx)
    h, lw, kn, m = truth.split_bounded(idx)
    hi[idx], lo[idx], known[idx] = h, lw, kn
    idx = idx[m > need[idx]]
    if idx.size:
        from .truth.expansion import approx

        parts = truth.parts_at(idx)
        assert parts is not None
        h, lw, m = approx(parts)
        hi[idx], lo[idx], known[idx] = h, lw, (m == 0) & np.isfinite(h)


def _elementwise(g: np.ndarray, hi: np.ndarray, lo: np.ndarray, f: formats.Format):
    from .truth.expansion import _two_sum

    fin = np.isfinite(g) & np.isfinite(hi)
    all_finite = bool(fin.all()) and bool(np.isfinite(lo).all())
    if all_finite:  # the usual case: no masking, and no pass over the non-finite rules
        gz, hz, lz = g, hi, lo
    else:
        gz = np.where(fin, g, 0.0)
        hz = np.where(fin, hi, 0.0)
        lz = np.where(fin & np.isfinite(lo), lo, 0.0)
    s, e = _two_sum(gz, -hz)
    diff = s + (e - lz)  # got - truth
    u = np.asarray(formats.ulp(gz, f), dtype=np.float64)  # got's gap: for the rounding flags
    unit = _truth_ulp(hz, lz, f)
    ulp_err = diff / unit
    tabs = np.abs(hz + lz)
    rel = np.where(
        tabs > 0, np.abs(diff) / np.where(tabs > 0, tabs, 1.0), np.where(diff == 0, 0.0, np.inf)
    )
    cap = f.precision + BITS_ABOVE_PRECISION
    bits = np.where(rel == 0, np.inf, np.clip(-np.log2(np.where(rel > 0, rel, 1.0)), 0, cap))

    # correct / faithful rounding of finite results: is the truth inside got's rounding
    # interval? Half a gap on each side (the gap below a power of two is half the one above).
    fl = formats.fields(gz.astype(f.storage), f)
    mant = np.asarray(fl.mantissa, dtype=np.uint64)
    expo = np.asarray(fl.exponent, dtype=np.int64)
    toward = -diff * np.where(np.signbit(gz) & (gz != 0), -1.0, 1.0)  # truth - got, outward
    if_zero = gz == 0
    toward = np.where(if_zero, np.abs(diff), toward)
    gap_down = np.where((mant == 0) & (expo > 1), u / 2, u)
    gap = np.where(toward >= 0, u, gap_down)
    dist = np.abs(toward)
    even = (mant & np.uint64(1)) == 0
    cr = (dist < gap / 2) | ((dist == gap / 2) & even)
    faithful = (dist < gap) | ((np.abs(gz) == f.max) & (toward > 0))  # max or inf bracket it
    tol = np.ldexp(gap, -40) + np.ldexp(tabs, -100)
    amb = fin & ((np.abs(dist - gap / 2) <= tol) | (np.abs(dist - gap) <= tol))

    if all_finite:
        return ulp_err, rel, bits, cr, faithful, amb, unit
    # non-finite cases
    nan_g, nan_t = np.isnan(g), np.isnan(hi)
    both_nan = nan_g & nan_t
    same_inf = np.isinf(g) & np.isinf(hi) & (g == hi)
    agree = both_nan | same_inf
    inf_err = ~fin & ~agree
    signed_inf = np.where(np.isnan(g - hi) | nan_g | nan_t, np.inf, np.sign(g - hi) * np.inf)
    ulp_err = np.where(agree, 0.0, np.where(inf_err, signed_inf, ulp_err))
    rel = np.where(agree, 0.0, np.where(inf_err, np.inf, rel))
    bits = np.where(agree, np.inf, np.where(inf_err, 0.0, bits))
    # got ±inf, truth finite: correctly rounded iff the truth overflows in got's direction
    t_signed = (hi + np.where(np.isfinite(lo), lo, 0.0)) * np.sign(g)
    overflow_cr = np.isinf(g) & np.isfinite(hi) & (t_signed >= f.max + formats.ulp(f.max, f) / 2)
    overflow_ff = np.isinf(g) & np.isfinite(hi) & (t_signed > f.max)
    cr = np.where(fin, cr, agree | overflow_cr)
    faithful = np.where(fin, faithful, agree | overflow_ff)
    amb |= (
        np.isinf(g)
        & np.isfinite(hi)
        & (np.abs(t_signed - (f.max + formats.ulp(f.max, f) / 2)) <= np.ldexp(f.max, -100))
    )
    fin_t = np.isfinite(hi)
    lo_t = np.where(np.isfinite(lo), lo, 0.0)
    unit_t = _truth_ulp(np.where(fin_t, hi, 0.0), np.where(fin_t, lo_t, 0.0), f)
    unit = np.where(fin, unit, np.where(fin_t, unit_t, np.where(nan_t, np.nan, np.inf)))
    return ulp_err, rel, bits, cr, faithful, amb, unit


def _power_of_two(x: np.ndarray) -> np.ndarray:
    """Where the float64 ``x`` is ±2**k (finite, nonzero)."""
    m = np.frexp(np.where(np.isfinite(x), x, 0.0))[0]
    return np.abs(m) == 0.5


def _truth_ulp(hi: np.ndarray, lo: np.ndarray, f: formats.Format) -> np.ndarray:
    """ulp in ``f`` of the exact truth hi + lo (a float64 pair, |lo| <= ulp64(hi)/2): the
    exponent is hi's, one less where hi is a power of two and lo pulls the value below it
    (above the smallest normal, where the gap stops shrinking). Past the largest value the
    spacing formula continues."""
    u = np.asarray(formats.ulp(hi, f), dtype=np.float64)
    below = _power_of_two(hi) & (np.abs(hi) > f.tiny) & (np.sign(hi) * np.sign(lo) < 0)
    return np.where(below, u / 2, u)


def _exact_ulp(v: Fraction, f: formats.Format) -> Fraction:
    """`formats.ulp` of an exact value as an exact power of two, at any magnitude."""
    v = abs(v)
    if v == 0:
        return Fraction(f.min_subnormal)
    return Fraction(2) ** (max(formats.floor_log2(v.numerator, v.denominator), f.emin) - f.mbits)


def _exact_value(v: Any) -> Fraction | None:
    """A held value (Fraction, int, float or mpmath number) as a Fraction (None: not finite)."""
    if isinstance(v, Fraction | int):
        return Fraction(v)
    raw = getattr(v, "_mpf_", None)
    if raw is None:
        return Fraction(float(v)) if math.isfinite(float(v)) else None
    sign, man, exp, _ = raw
    if not man:
        import mpmath

        return Fraction(0) if mpmath.isfinite(v) else None
    val = Fraction(int(man)) * (Fraction(2) ** int(exp))
    return -val if sign else val


def _decide_exactly(
    truth: Truth,
    g: np.ndarray,
    f: formats.Format,
    idx: np.ndarray,
    cr: np.ndarray,
    faithful: np.ndarray,
) -> tuple[list[Fraction | None], list[float | None]]:
    """Exact correct/faithful rounding flags for the elements ``idx``; returns their exact
    values and roundings (None where the truth is not finite).

    The exact values, their roundings and the neighbours of each result are computed for all
    of ``idx`` at once; only the comparisons are per element."""
    flat = g.ravel()
    picked = truth.parts_at(idx)
    exact = _exact_elements(truth, idx, picked)
    if picked is not None:
        from .truth.expansion import round_parts

        roundings = np.asarray(round_parts(picked, f), dtype=np.float64).reshape(-1).tolist()
    else:
        roundings = [None if t is None else float(formats.round_exact(t, f)) for t in exact]
    with np.errstate(over="ignore"):
        ups = np.asarray(formats.next_up(flat[idx], f), dtype=np.float64).reshape(-1).tolist()
        downs = np.asarray(formats.next_down(flat[idx], f), dtype=np.float64).reshape(-1)
    for i, t, rounded, up, down in zip(
        idx.tolist(), exact, roundings, ups, downs.tolist(), strict=True
    ):
        if t is None:
            continue
        got = float(flat[i])
        cr[i] = rounded == got
        if not math.isfinite(got):
            faithful[i] = not math.isnan(got) and (
                t > Fraction(f.max) if got > 0 else t < -Fraction(f.max)
            )
            continue
        faithful[i] = t == Fraction(got) or _between(down, t, up)
    return exact, roundings


def _beyond_float64(truth: Truth, hi: np.ndarray) -> np.ndarray:
    """Elements whose float64 value is inf or NaN but whose truth is finite: an exact truth
    that overflowed float64, or a finite held mpmath value beyond float64's range (in a truth
    that holds NaN or inf elsewhere)."""
    out = ~np.isfinite(hi)
    if truth.is_exact or not out.any():
        return out
    import mpmath

    held = np.asarray(truth.held, dtype=object).reshape(-1)
    flat = out.reshape(-1)
    for i in np.flatnonzero(flat).tolist():
        flat[i] = bool(mpmath.isfinite(held[i]))
    return out


_TINY = 2.0**-900  # below this, the float64 pair (hi, lo) of a truth loses bits
_BIG = 2.0**1000


def _needs_exact(
    g: np.ndarray,
    hi: np.ndarray,
    lo: np.ndarray,
    known: np.ndarray,
    ulp_err: np.ndarray,
    beyond: np.ndarray,
    f: formats.Format,
) -> np.ndarray:
    """Elements whose error float64 (hi, lo) arithmetic cannot be trusted to give.

    ``known``: hi + lo is the truth exactly (a result equal to hi then has the error -lo);
    ``beyond``: a finite truth whose float64 value is not finite (`_beyond_float64`)."""
    fin_t = np.isfinite(hi)
    fin_g = np.isfinite(g)
    ah = np.abs(hi)
    zero = (ah == 0) & (lo == 0) & known  # an exact zero: float64 carries it and its error
    need = fin_t & (((ah < _TINY) & ~zero) | (ah > _BIG))  # truth near float64's range ends
    need |= beyond  # a finite truth whose float64 value overflowed
    need |= fin_t & fin_g & ~np.isfinite(ulp_err)  # the error itself overflows
    need |= fin_t & (np.abs(g) >= f.max)  # the result at the largest value or infinite
    # a truth at a power of two known only approximately: the sign of its remainder, which
    # says the binade of the exact value (and so its ULP), may be wrong
    need |= fin_t & fin_g & _power_of_two(hi) & ~known
    # a difference within the truth's float64 approximation (about 2**-106 relative): the
    # pair cannot tell it from zero
    close = fin_t & fin_g & (np.abs(g - hi) <= np.ldexp(ah, -100))
    need |= close & ~known  # close means got == hi; with hi + lo exact, -lo is the error
    return need


def _exact_elements(
    truth: Truth, idx: np.ndarray, parts: list[np.ndarray] | None = None
) -> list[Fraction | None]:
    """Elements ``idx`` (flat) of the truth as exact Fractions (None where not finite);
    ``parts``: `Truth.parts_at` of ``idx``, when the caller has it already."""
    parts = truth.parts_at(idx) if parts is None else parts
    if parts is not None:
        from .truth.expansion import fractions

        return list(fractions(parts))
    # the held values themselves: an mp() view would round them to the truth's precision
    held = np.asarray(truth.held, dtype=object).ravel()
    return [_exact_value(held[i]) for i in idx.tolist()]


def _measure_nonfinite(
    truth: Truth, flat: np.ndarray, f: formats.Format, idx: np.ndarray, out: tuple
) -> None:
    """`_measure_exactly` for infinite or NaN results against a finite truth held as an
    expansion, all at once: correct rounding from the truth's exact rounding in ``f``;
    faithfulness from the sign of the truth and of |truth| - max, read off the expansion
    within its margin where that settles them, else from exact signs."""
    from .truth.expansion import signs

    ulp_err, rel, bits, cr, faithful = out
    got = flat[idx]
    rounded = np.asarray(truth.round_at(idx, f), dtype=np.float64)
    hi, lo, _, margin = truth.split_bounded(idx)
    with np.errstate(over="ignore", invalid="ignore"):
        slack = (np.abs(lo) + margin) * (1 + 2.0**-50) + np.abs(hi) * 2.0**-50
        sign = np.where(np.abs(hi) > slack, np.sign(hi), 0.0)
        over = np.where(
            np.abs(hi) - slack > f.max, 1, np.where(np.abs(hi) + slack < f.max, -1, 0)
        ).astype(np.int8)
    open_ = np.flatnonzero((sign == 0) | (over == 0))
    if open_.size:
        parts = truth.parts_at(idx[open_])
        assert parts is not None
        sg, ok_s = signs(parts)
        ov, ok_o = signs([*(p * sg for p in parts), np.full(open_.size, -f.max)])
        if not (ok_s.all() and ok_o.all()):  # never seen: the passes of `signs` settle these
            from .truth.expansion import fractions

            vals = fractions(parts)
            sg = np.array([np.sign(v) for v in vals], dtype=np.int8)
            ov = np.array([np.sign(abs(v) - Fraction(f.max)) for v in vals], dtype=np.int8)
        sign[open_], over[open_] = sg, ov
    cr[idx] = rounded == got
    ulp_err[idx] = np.where(np.isnan(got), np.inf, got)  # NaN: an infinite error
    rel[idx] = np.inf
    bits[idx] = 0.0
    faithful[idx] = ~np.isnan(got) & (over > 0) & (np.sign(got) == sign)


def _measure_exactly(
    truth: Truth,
    g: np.ndarray,
    f: formats.Format,
    idx: np.ndarray,
    out: tuple[np.ndarray, ...],
    unit: np.ndarray,
) -> None:
    """Exact ULP error, relative error, bits, rounding flags (`_decide_exactly`) and the exact
    truth's ULP (``unit``) for the elements ``idx``."""
    ulp_err, rel, bits, cr, faithful = out
    flat = g.ravel()
    cap = f.precision + BITS_ABOVE_PRECISION
    odd = ~np.isfinite(flat[idx])
    if odd.any() and truth.expansion_like:
        _measure_nonfinite(truth, flat, f, idx[odd], out)
        far = idx[odd][~np.isfinite(unit[idx[odd]])]  # a truth beyond float64's range
        for i, t in zip(far.tolist(), _exact_elements(truth, far), strict=True):
            unit[i] = math.nan if t is None else _float_or_inf(_exact_ulp(t, f))
        idx = idx[~odd]
    exact, _ = _decide_exactly(truth, g, f, idx, cr, faithful)
    for i, t in zip(idx.tolist(), exact, strict=True):
        got = float(flat[i])
        if t is None:  # the truth is NaN/inf: the float path handled it
            continue
        unit[i] = _float_or_inf(_exact_ulp(t, f))
        if not math.isfinite(got):
            ulp_err[i] = math.inf if math.isnan(got) else got  # NaN: an infinite error
            rel[i] = math.inf
            bits[i] = 0.0
            continue
        d = Fraction(got) - t
        q = d / _exact_ulp(t, f)
        try:
            ulp_err[i] = float(q)
        except OverflowError:
            ulp_err[i] = math.inf if q > 0 else -math.inf  # q is a Fraction too big for a float
        if d == 0:
            rel[i], bits[i] = 0.0, math.inf
        elif t == 0:
            rel[i], bits[i] = math.inf, 0.0
        else:
            r = abs(d) / abs(t)
            try:
                rel[i] = float(r)
            except OverflowError:
                rel[i] = math.inf
            bits[i] = min(cap, max(0.0, math.log2(r.denominator) - math.log2(r.numerator)))


def _float_or_inf(v: Fraction) -> float:
    """``v`` as a float, inf where it is beyond float64's range."""
    try:
        return float(v)
    except OverflowError:
        return math.inf


def _between(down: float, t: Fraction, up: float) -> bool:
    """``down < t < up``, an infinite bound holding every finite ``t``."""
    return (math.isinf(down) or Fraction(down) < t) and (math.isinf(up) or t < Fraction(up))
