"""`Truth`: the exact or certified high-precision value of a computation on given input bits."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np

from ..errors import InvalidParameter, PrecisionError

if TYPE_CHECKING:
    from .levels import LeveledProduct


def _to_mpf(v: Any, prec: int) -> mpmath.mpf:
    with mpmath.workprec(prec):
        if isinstance(v, Fraction):
            return mpmath.mpf(v.numerator) / v.denominator
        return +mpmath.mpf(v)


def _split_one(v: Any) -> tuple[float, float, bool]:
    """(hi, lo, known) of one Fraction (or int) in integer arithmetic: int / int is correctly
    rounded, as float(Fraction) is, and the rest is exact integers (a fifth of the cost)."""
    n, d = v.numerator, v.denominator
    try:
        h = n / d
    except OverflowError:
        return (math.inf if n > 0 else -math.inf), 0.0, False
    a, b = h.as_integer_ratio()
    rn, rd = n * b - a * d, d * b
    if rn == 0:
        return h, 0.0, True
    lo = rn / rd
    la, lb = lo.as_integer_ratio()
    return h, lo, rn * lb == la * rd


_split_rational = np.frompyfunc(_split_one, 1, 3)


def object_map(fn: Any, *arrays: Any) -> np.ndarray:
    """``fn`` of the (broadcast) elements of ``arrays``, as an object array: Python work, so
    no numpy floating-point warnings (a NaN it makes is IEEE's, not an error)."""
    out = np.empty(np.broadcast_shapes(*map(np.shape, arrays)), dtype=object)
    with np.errstate(all="ignore"):
        return np.frompyfunc(fn, len(arrays), 1)(*arrays, out=out)


class Truth:
    """A scalar or array reference value.

    Exact truths hold ``fractions.Fraction`` values (``.exact``), or a float64 expansion
    (``expansion=``: float64 arrays whose exact sum is the value, turned into Fractions only
    when ``.exact`` or ``.mp()`` is asked for), or a product computed level by level
    (``leveled=``: `fpexplore.truth.levels`; its roundings, `split_bounded`, `parts_at` and
    `round_at` compute the levels or exact values they need, ``.expansion`` completes it);
    others hold mpmath numbers certified to ``.digits`` significant decimal digits. NaN and
    infinities are held as mpmath ``nan``/``inf`` (``.exact`` is then ``None``).
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
        leveled: LeveledProduct | None = None,
    ) -> None:
        sources = (("exact", exact), ("mp", mp), ("expansion", expansion), ("leveled", leveled))
        given = [n for n, v in sources if v is not None]
        if len(given) != 1:
            raise InvalidParameter(
                "exact/mp/expansion/leveled",
                "+".join(given) or "none",
                "exactly one of exact= (a Fraction or array of them), mp= (an mpmath value), "
                "expansion= (float64 arrays summing exactly to the value) or leveled= (a "
                "fpexplore.truth.levels.LeveledProduct)",
                f"Truth {label!r}",
            )
        self.label = label
        self._exact = exact
        self._mp = mp
        self._expansion = (
            None if expansion is None else [np.asarray(p, dtype=np.float64) for p in expansion]
        )
        self._leveled = leveled  # an exact product computed from the top as questions need
        self.prec = prec
        self.input_format = input_format  # format of the input bits (e.g. "bfloat16"), if known
        self.digits = math.inf if mp is None else float(digits if digits is not None else 0)

    # -- what it is
    @property
    def is_exact(self) -> bool:
        return self._exact is not None or self.expansion_like

    @property
    def exact(self) -> Fraction | np.ndarray | None:
        """The exact rational value(s), or None when the truth is not rational (or not finite)."""
        if self._exact is None and self.expansion_like:
            from .expansion import fractions

            vals = fractions(self.expansion)
            self._exact = vals if vals.ndim else vals[()]
        return self._exact

    @property
    def held(self) -> Any:
        """The values as given (Fractions, or mpmath values), before any `mp` view rounds them."""
        return self._exact if self._exact is not None else self._mp

    @property
    def expansion(self) -> list[np.ndarray] | None:
        """The float64 expansion of an exact truth computed that way (else None); a product
        computed level by level is completed first."""
        if self._leveled is not None:
            lv = self._leveled
            if lv.complete:
                self._expansion = list(lv.coefficients)
            else:
                from . import ozaki

                self._expansion = ozaki.product(lv.x, lv.y)
            self._leveled = None
        return self._expansion

    @property
    def expansion_like(self) -> bool:
        """True when the truth is held as a float64 expansion (`parts_at` gives its parts)."""
        return self._leveled is not None or self._expansion is not None

    def parts_at(self, idx: np.ndarray) -> list[np.ndarray] | None:
        """The exact expansion at flat indices ``idx`` (None for a truth held otherwise); a
        product computed level by level gives their exact dot products, or completes itself."""
        lv = self._leveled
        if lv is not None and not lv.complete and lv.exact_cost(idx.size) < lv.whole_cost():
            return lv.exact_at(idx)
        if self.expansion is None:
            return None
        return [np.asarray(p).reshape(-1)[idx] for p in self.expansion]

    def bounded(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        """(parts, bound): an expansion known to within ``bound`` (None: exactly; only a
        product computed level by level has a bound)."""
        lv = self._leveled
        if lv is not None and not lv.complete:
            return lv.coefficients, lv.bound()
        parts = self.expansion
        if parts is None:
            raise ValueError(f"{self.label}: not held as an expansion")
        return parts, None

    @property
    def is_finite(self) -> bool:
        """False when any value is NaN or infinite (IEEE propagation of NaN/inf inputs)."""
        if self.is_exact:
            return True
        vals = self._mp.flat if isinstance(self._mp, np.ndarray) else (self._mp,)
        return all(mpmath.isfinite(v) for v in vals)

    @property
    def shape(self) -> tuple[int, ...]:
        if self._leveled is not None:
            return (self._leveled.m, self._leveled.n)
        if self._expansion is not None:
            return tuple(self._expansion[0].shape)
        v = self._exact if self._exact is not None else self._mp
        return np.shape(v) if isinstance(v, np.ndarray) else ()

    # -- views
    def mp(self, prec: int | None = None, *, digits: float | None = None) -> Any:
        """The value as mpmath number(s) at ``prec`` bits (default: the truth's own precision);
        asking for more decimal ``digits`` than are certified raises `PrecisionError`."""
        if digits is not None and digits > self.digits:
            raise PrecisionError(
                f"{self.label}: {digits} digits were asked for, but only {self.digits:g} are "
                "certified; recompute the truth at a higher precision."
            )
        if prec is None:
            prec = self.prec if digits is None else max(self.prec, int(digits * 3.33) + 8)
        src = self.exact if self.is_exact else self._mp
        if isinstance(src, np.ndarray):
            return object_map(lambda v: _to_mpf(v, prec), src)
        return _to_mpf(src, prec)

    def round(self, fmt: Any = "float64") -> Any:
        """Correctly rounded value(s) in a format of `fpexplore.formats` (round half to even).

        A non-exact truth is known to a relative error of ``10**-digits``; when that interval
        holds a rounding boundary of ``fmt`` the rounding is not certain and `PrecisionError`
        is raised rather than a guess returned.
        """
        from .. import formats

        if self._leveled is not None:
            return self._round_leveled(fmt)
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

    def _round_leveled(self, fmt: Any, idx: np.ndarray | None = None) -> np.ndarray:
        """`round` of a product computed level by level (at flat outputs ``idx``, 1-D, when
        given): the levels expected to decide most outputs, again for those left undecided,
        then the exact values of the few left."""
        from .. import formats
        from .expansion import round_parts

        f = formats.get(fmt)
        lv = self._leveled
        assert lv is not None
        size = self.shape[0] * self.shape[1] if idx is None else idx.size

        def flat(pos: np.ndarray | None) -> np.ndarray | None:
            """Flat outputs of the product at positions ``pos`` of the answer (None: all)."""
            if pos is None:
                return idx
            return pos if idx is None else idx[pos]

        def attempt(pos: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
            """Roundings at ``pos`` with the levels computed, and which stay undecided."""
            where = flat(pos)
            parts, bound = self.bounded()
            pick = [p.reshape(-1) if where is None else p.reshape(-1)[where] for p in parts]
            if bound is None:
                vals = np.asarray(round_parts(pick, f), dtype=np.float64).reshape(-1)
                return vals, np.zeros(0, dtype=np.int64)
            b = bound.reshape(-1) if where is None else bound.reshape(-1)[where]
            return round_parts(pick, f, b)

        gap = 2.0**-f.mbits  # the format's gap near a value v is about |v| * gap
        if not lv.coefficients:
            lv.extend()
        est = np.zeros(size)
        for c in lv.coefficients:
            est += c.reshape(-1) if idx is None else c.reshape(-1)[idx]
        lv.deepen(np.abs(est) * gap, idx)
        out, undecided = attempt(None)
        if undecided.size:
            lv.deepen(np.abs(out[undecided]) * gap, flat(undecided))
            vals, still = attempt(undecided)
            out[undecided] = vals
            undecided = undecided[still]
        if undecided.size:
            exact = self.parts_at(flat(undecided))
            assert exact is not None
            out[undecided] = np.asarray(round_parts(exact, f), dtype=np.float64)
        with np.errstate(over="ignore"):
            res = out.astype(f.storage)
        return res if idx is not None else res.reshape(self.shape)

    def round_at(self, idx: np.ndarray, fmt: Any = "float64") -> np.ndarray:
        """`round` of the flat outputs ``idx`` only (1-D), for a truth held as an expansion."""
        from .. import formats
        from .expansion import round_parts

        if self._leveled is not None:
            return self._round_leveled(fmt, np.asarray(idx, dtype=np.int64))
        parts = self.parts_at(idx)
        if parts is None:
            raise ValueError(f"{self.label}: not held as an expansion")
        f = formats.get(fmt)
        return np.asarray(round_parts(parts, f), dtype=f.storage).reshape(-1)

    def deepen(self, tol: np.ndarray, idx: np.ndarray | None = None) -> None:
        """For a product computed level by level: the levels that bring its bound below
        ``tol`` at flat outputs ``idx`` where that is cheaper than exact values one by one
        (`fpexplore.truth.levels`); any other truth is already exact or certified."""
        if self._leveled is not None:
            self._leveled.deepen(tol, idx, rigorous=True)

    def split_bounded(
        self, idx: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(hi, lo, known, margin): `split_known` with |value - (hi + lo)| <= margin, nonzero
        only for a product whose levels are not all computed. ``idx``: flat outputs only."""
        lv = self._leveled
        if lv is None or lv.complete:
            hi, lo, known = self.split_known()
            if idx is not None:
                hi, lo, known = (np.reshape(v, -1)[idx] for v in (hi, lo, known))
            return hi, lo, known, np.zeros(np.shape(hi))
        from .expansion import approx

        parts, bound = lv.coefficients, lv.bound()
        if idx is not None:
            parts, bound = [p.reshape(-1)[idx] for p in parts], bound.reshape(-1)[idx]
        hi, lo, margin = approx(parts)
        margin = (margin + bound) * (1 + 2.0**-50)
        return hi, lo, (margin == 0) & np.isfinite(hi), margin

    def split(self) -> tuple[np.ndarray, np.ndarray]:
        """(hi, lo) float64 arrays with hi + lo ≈ value to about 106 bits (for fast metrics)."""
        return self.split_known()[:2]

    def split_known(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(hi, lo, known): `split` plus where hi + lo is known to equal the value exactly."""
        shape = self.shape
        if self.expansion is not None:
            from .expansion import approx

            hi, lo, margin = approx(self.expansion)
            return hi, lo, (margin == 0) & np.isfinite(hi)
        if self._exact is not None:  # Fractions: no mpmath needed
            hi, lo, known = _split_rational(np.asarray(self._exact, dtype=object))
            return (
                np.asarray(hi, np.float64).reshape(shape),
                np.asarray(lo, np.float64).reshape(shape),
                np.asarray(known, bool).reshape(shape),
            )
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

    def __str__(self) -> str:
        """What a notebook prints: ``label = value (how it is known)``, the value to 20 digits
        (an array by its shape)."""
        if self.is_exact or not math.isfinite(self.digits):
            kind = "exact" if self.is_finite else "NaN/inf as IEEE propagates it"
        else:
            kind = f"{math.floor(self.digits)} certified digits"
        val = self.mp()
        text = mpmath.nstr(val, 20) if not isinstance(val, np.ndarray) else f"an array{self.shape}"
        return f"{self.label} = {text} ({kind})"

    def __repr__(self) -> str:
        kind = f"{self.digits:g} certified digits"
        if self.is_exact or math.isinf(self.digits):
            kind = "exact" if self.is_finite else "NaN/inf as IEEE propagates it"
        val = self.mp()
        text = mpmath.nstr(val, 20) if not isinstance(val, np.ndarray) else f"array{self.shape}"
        return f"Truth({self.label!r}, {text}, {kind})"
