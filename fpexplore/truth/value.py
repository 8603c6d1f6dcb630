"""`Truth`: the exact or certified high-precision value of a computation on given input bits."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from ..errors import InvalidParameter, PrecisionError


def _to_mpf(v: Any, prec: int) -> mpmath.mpf:
    with mpmath.workprec(prec):
        if isinstance(v, Fraction):
            return mpmath.mpf(v.numerator) / v.denominator
        return +mpmath.mpf(v)


class Truth:
    """A scalar or array reference value.

    Exact truths hold ``fractions.Fraction`` values (``.exact``), or a float64 expansion
    (``expansion=``: float64 arrays whose exact sum is the value, turned into Fractions only
    when ``.exact`` or ``.mp()`` is asked for); others hold mpmath numbers certified to
    ``.digits`` significant decimal digits. NaN and infinities are held as mpmath
    ``nan``/``inf`` (``.exact`` is then ``None``).
    """

    def __init__(
        self,
        label: str,
        *,
        exact: Fraction | np.ndarray | None = None,
        mp: Any = None,
        digits: float | None = None,
        prec: int = 113,
        input_format: str | None = None,
        expansion: Sequence[np.ndarray] | None = None,
    ) -> None:
        given = [
            n for n, v in (("exact", exact), ("mp", mp), ("expansion", expansion)) if v is not None
        ]
        if len(given) != 1:
            raise InvalidParameter(
                "exact/mp/expansion",
                "+".join(given) or "none",
                "exactly one of exact= (a Fraction or array of them), mp= (an mpmath value) or "
                "expansion= (float64 arrays summing exactly to the value)",
                f"Truth {label!r}",
            )
        self.label = label
        self._exact = exact
        self._mp = mp
        self._expansion = (
            None if expansion is None else [np.asarray(p, dtype=np.float64) for p in expansion]
        )
        self.prec = prec
        self.input_format = input_format  # format of the input bits (e.g. "bfloat16"), if known
        self.digits = (
            math.inf
            if exact is not None or expansion is not None
            else float(digits if digits is not None else 0)
        )

    # -- what it is
    @property
    def is_exact(self) -> bool:
        return self._exact is not None or self._expansion is not None

    @property
    def exact(self) -> Fraction | np.ndarray | None:
        """The exact rational value(s), or None when the truth is not rational (or not finite)."""
        if self._exact is None and self._expansion is not None:
            from .expansion import fractions

            vals = fractions(self._expansion)
            self._exact = vals if vals.ndim else vals[()]
        return self._exact

    @property
    def expansion(self) -> list[np.ndarray] | None:
        """The float64 expansion of an exact truth computed that way (else None)."""
        return self._expansion

    @property
    def is_finite(self) -> bool:
        """False when any value is NaN or infinite (IEEE propagation of NaN/inf inputs)."""
        if self._exact is not None or self._expansion is not None:
            return True
        vals = self._mp.flat if isinstance(self._mp, np.ndarray) else (self._mp,)
        return all(mpmath.isfinite(v) for v in vals)

    @property
    def shape(self) -> tuple[int, ...]:
        if self._expansion is not None:
            return tuple(self._expansion[0].shape)
        v = self._exact if self._exact is not None else self._mp
        return np.shape(v) if isinstance(v, np.ndarray) else ()

    # -- views
    def mp(self, prec: int | None = None, *, digits: float | None = None) -> Any:
        """The value as mpmath number(s) at ``prec`` bits (default: the truth's own precision).

        Asking for more decimal ``digits`` than are certified raises `PrecisionError`.
        """
        if digits is not None and digits > self.digits:
            raise PrecisionError(
                f"{self.label}: {digits} digits were asked for, but only {self.digits:g} are "
                "certified; recompute the truth at a higher precision."
            )
        if prec is None:
            prec = self.prec if digits is None else max(self.prec, int(digits * 3.33) + 8)
        src = self.exact if self.is_exact else self._mp
        if isinstance(src, np.ndarray):
            out = np.empty(src.shape, dtype=object)
            for i, v in np.ndenumerate(src):
                out[i] = _to_mpf(v, prec)
            return out
        return _to_mpf(src, prec)

    def round(self, fmt: Any = "float64") -> Any:
        """Correctly rounded value(s) in a format of `fpexplore.formats` (round half to even).

        A non-exact truth is known to a relative error of ``10**-digits``; when that interval
        holds a rounding boundary of ``fmt`` the rounding is not certain and `PrecisionError`
        is raised rather than a guess returned.
        """
        from .. import formats

        if self._expansion is not None and self._exact is None:
            from .expansion import round_parts

            return round_parts(self._expansion, fmt)
        if self._exact is not None or math.isinf(self.digits):
            # the held values themselves (exact Fractions, or exact mpf/IEEE specials at their
            # own precision): one rounding, never through a fixed-precision copy
            return formats.round_exact(self._exact if self._exact is not None else self._mp, fmt)
        v = self._mp  # as held (a -0.0 kept by an odd function stays -0.0; mpmath has no -0)
        out = formats.round_exact(v, fmt)
        with mpmath.workprec(self.prec + 8):
            rel = mpmath.mpf(10) ** (-self.digits)
            ends = [formats.round_exact(v * (1 + s * rel), fmt) for s in (-1, 1)]
        with np.errstate(invalid="ignore"):
            a, b = (np.asarray(e, dtype=np.float64) for e in ends)
        if not np.array_equal(a, b, equal_nan=True):
            name = formats.get(fmt).name
            raise PrecisionError(
                f"{self.label}: rounding to {name} needs more than the {self.digits:g} certified "
                "digits (a value lies too close to a rounding boundary); recompute the truth at "
                "a higher precision."
            )
        return out

    def split(self) -> tuple[np.ndarray, np.ndarray]:
        """(hi, lo) float64 arrays with hi + lo ≈ value to about 106 bits (for fast metrics)."""
        hi, lo, _ = self.split_known()
        return hi, lo

    def split_known(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(hi, lo, known): `split` plus where hi + lo is known to equal the value exactly."""
        shape = self.shape
        if self._expansion is not None:
            from .expansion import approx

            hi, lo, margin = approx(self._expansion)
            return hi, lo, (margin == 0) & np.isfinite(hi)
        if self._exact is not None:  # Fractions: float() is correctly rounded, no mpmath needed
            src = np.atleast_1d(np.asarray(self._exact, dtype=object))
            hi = np.empty(src.shape, dtype=np.float64)
            lo = np.zeros(src.shape, dtype=np.float64)
            known = np.zeros(src.shape, dtype=bool)
            for i, v in np.ndenumerate(src):
                try:
                    h = float(v)
                except OverflowError:
                    h = math.inf if v > 0 else -math.inf
                hi[i] = h
                if math.isfinite(h):
                    rest = v - Fraction(h)
                    lo[i] = float(rest)
                    known[i] = rest == lo[i]
            return hi.reshape(shape), lo.reshape(shape), known.reshape(shape)
        vals = self.mp(max(self.prec, 160))
        arr = np.atleast_1d(np.asarray(vals, dtype=object))
        hi = np.empty(arr.shape, dtype=np.float64)
        lo = np.empty(arr.shape, dtype=np.float64)
        with mpmath.workprec(max(self.prec, 160)):
            for i, v in np.ndenumerate(arr):
                h = float(v)
                hi[i] = h
                lo[i] = float(v - h) if mpmath.isfinite(v) and math.isfinite(h) else 0.0
        return hi.reshape(shape), lo.reshape(shape), np.zeros(shape, dtype=bool)

    def __float__(self) -> float:
        return float(self.mp())

    def __repr__(self) -> str:
        kind = (
            "exact"
            if self.is_exact
            else f"{self.digits:g} certified digits"
            if math.isfinite(self.digits)
            else "NaN/inf as IEEE propagates it"
            if not self.is_finite
            else "exact"
        )
        val = self.mp()
        text = mpmath.nstr(val, 20) if not isinstance(val, np.ndarray) else f"array{self.shape}"
        return f"Truth({self.label!r}, {text}, {kind})"
