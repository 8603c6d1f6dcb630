"""The float-bits view: one typed number in all five formats, bit by bit.

`float_bits_table(text)` does the work; `explain(text)` adds the claims rounding theory makes
about the typed value (with a `check`, as `Comparison.check`); `float_bits()` is the widget:
per format the stored bits and value, its error against the typed value, the ULP and the
two neighbours.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

import mpmath

from .. import formats, metrics
from ..errors import InvalidParameter
from ..result import Claim, check_claims, claim_holds
from ..templates import part, render
from ..truth.value import Truth
from .float_bits_claims import DECIMAL, explanation_claims

ACCEPTED = (
    "a decimal number (0.1, -3.4e38, 16777217), a fraction (1/3), a hex float "
    "(0x1.8p3), inf, -inf or nan"
)
_RATIO = re.compile(r"^[+-]?\d+\s*/\s*\d+$")


def parse_exact(text: str) -> Fraction | float:
    """The exact value of ``text``: a Fraction, or a float for ±inf, NaN and -0."""
    if not isinstance(text, str):
        raise InvalidParameter("text", text, ACCEPTED, "float_bits")
    t = text.strip().replace("_", "").replace(" ", "")
    low = t.lower()
    if low in ("inf", "+inf", "infinity", "+infinity", "-inf", "-infinity", "nan", "+nan", "-nan"):
        return float(low)
    try:
        if DECIMAL.match(t) or _RATIO.match(t):
            value = Fraction(t)
            return -0.0 if value == 0 and t.startswith("-") else value
        if low.lstrip("+-").startswith("0x"):
            return Fraction(float.fromhex(t))
    except (ValueError, ZeroDivisionError, OverflowError):
        pass
    raise InvalidParameter("text", text, ACCEPTED, "float_bits")


@dataclass(frozen=True)
class FloatBitsRow:
    """One format's view of the typed value."""

    format: str
    stored: float  # the correctly rounded value, as a Python float
    sign: str  # bit fields as binary digits
    exponent: str
    mantissa: str
    kind: str  # zero, subnormal, normal, inf, nan
    shortest: str  # shortest decimal that reads back as this value in this format
    decimal: str  # the stored value's exact decimal expansion (shortened when long)
    exact: bool  # the typed value is stored without error
    error: str  # stored - typed, as a decimal
    ulp_error: float  # (stored - typed) / ulp(typed), the exact value's ULP
    rel_error: float
    bits_correct: float
    ulp: float
    next_down: float
    next_up: float
    note: str

    @property
    def bits(self) -> str:
        return f"{self.sign} {self.exponent} {self.mantissa}"

    @property
    def neighbours(self) -> tuple[str, str]:
        """The next value down and up, each as the shortest decimal that names it here."""
        f = formats.get(self.format)
        return _shortest(self.next_down, f), _shortest(self.next_up, f)


def _shortest(v: float, f: formats.Format) -> str:
    """The shortest %g decimal string that rounds back to ``v`` in ``f``."""
    if not math.isfinite(v):
        return repr(v)
    if v.is_integer() and abs(v) < 2**53:
        return str(int(v)) if v != 0 else repr(v).replace(".0", "")
    for digits in range(1, 18):
        s = f"{v:.{digits}g}"
        if float(formats.round_exact(Fraction(s), f)) == v:
            return s
    return repr(v)


def _exact_decimal(v: float, limit: int = 40) -> str:
    if not math.isfinite(v):
        return repr(v)
    d = Decimal(v)  # exact: every value of the five formats is a float64
    text = format(d, "f") if -30 < d.adjusted() < 30 else format(d, "e")
    digits = sum(c.isdigit() for c in text)
    if digits <= limit:
        return text
    return format(d, f".{limit - 1}e").replace("e", "…e")


def _note(value: Fraction | float, row_kind: str, stored: float, f: formats.Format) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "not a number" if math.isnan(value) else "infinity"
    if math.isinf(stored):
        return f"overflow: |value| >= {_shortest(f.max, f)} + half an ulp rounds to inf"
    if stored == 0 and value != 0:
        if 2 * abs(Fraction(value)) == Fraction(f.min_subnormal):
            return "underflow: exactly half the smallest subnormal, a tie: rounds to the even 0"
        return "underflow: below half the smallest subnormal, rounds to zero"
    if row_kind == "subnormal":
        return "subnormal: fewer significant bits"
    if Fraction(stored) == value:
        return "exact"
    for step in (formats.next_up, formats.next_down):
        neighbour = float(step(stored, f))
        if math.isfinite(neighbour) and 2 * value == Fraction(stored) + Fraction(neighbour):
            return "a tie: rounded to the even neighbour"
    return ""


def float_bits_table(text: str, fmts: tuple[str, ...] | None = None) -> list[FloatBitsRow]:
    """The typed value, read exactly (`parse_exact`), correctly rounded (half to even) in every
    format (default: all five): bits, value, error against the typed value, ULP, neighbours."""
    value = parse_exact(text)
    if isinstance(value, Fraction):
        truth = Truth(text, exact=value)
    else:
        truth = Truth(text, mp=mpmath.mpf(value), digits=math.inf)
    rows = []
    for name in fmts or formats.names():
        f = formats.get(name)
        stored_np = formats.round_exact(value, f)
        stored = float(stored_np)
        fl = formats.fields(stored_np, f)
        b = format(fl.bits, f"0{f.width}b")
        err = metrics.measure(stored_np, truth, fmt=f)
        kind = formats.classify(stored_np, f)
        if isinstance(value, Fraction) and math.isfinite(stored):
            d = Fraction(stored) - value
            with mpmath.workdps(30):
                error = mpmath.nstr(mpmath.mpf(d.numerator) / d.denominator, 6) if d else "0"
        elif (
            math.isnan(stored) and isinstance(value, float) and math.isnan(value)
        ) or stored == value:
            error = "0"
        else:
            error = "inf"
        rows.append(
            FloatBitsRow(
                format=f.name,
                stored=stored,
                sign=b[0],
                exponent=b[1 : 1 + f.ebits],
                mantissa=b[1 + f.ebits :],
                kind=kind,
                shortest=_shortest(stored, f),
                decimal=_exact_decimal(stored),
                exact=error == "0",
                error=error,
                ulp_error=float(err.ulp_scalar),
                rel_error=err.max_rel,
                bits_correct=min(err.min_bits, f.precision),  # shown capped: see numbers.py
                ulp=float(formats.ulp(stored, f)),
                next_down=float(formats.next_down(stored_np, f)),
                next_up=float(formats.next_up(stored_np, f)),
                note=_note(value, kind, stored, f),
            )
        )
    return rows


@dataclass(frozen=True)
class FloatBitsExplanation:
    """The typed value in every format (`rows`, one by name with `row`) and the
    claims of `float_bits_claims.CLAIMS` about it, computed live."""

    text: str
    rows: tuple[FloatBitsRow, ...]
    claims: Mapping[str, Claim] = field(default_factory=dict)

    def row(self, fmt: Any) -> FloatBitsRow:
        """The row of format ``fmt``; KeyError naming the rows if it has none."""
        name = formats.get(fmt).name
        for r in self.rows:
            if r.format == name:
                return r
        raise KeyError(f"no row {name!r}; rows: {', '.join(r.format for r in self.rows)}")

    def holds(self, key: str) -> bool | None:
        """Whether claim ``key`` held, None if it was not checked."""
        return claim_holds(self.claims, key)

    def check(self, *keys: str) -> None:
        """Print and assert claims ``keys`` (all when none are named), as `Comparison.check`."""
        check_claims(f"float bits of {self.text}", self.claims, keys)

    def _repr_html_(self) -> str:
        return float_bits_html(list(self.rows))


def explain(text: str, fmts: tuple[str, ...] | None = None) -> FloatBitsExplanation:
    """`float_bits_table(text, fmts)` with the claims about the typed value, computed live."""
    rows = tuple(float_bits_table(text, fmts))
    return FloatBitsExplanation(text, rows, explanation_claims(text, parse_exact(text), rows))


#: the heads of `formats_html`'s columns
FORMAT_HEAD = ("format", "exp bits", "mant bits", "precision", "largest", "smallest normal",
               "smallest subnormal")  # fmt: skip


def formats_html() -> str:
    """Every format of `fpexplore.formats.FORMATS` as a table (its bits, precision, largest,
    smallest normal and smallest subnormal value), in the float bits view's style: a number
    such as 6.1035e-05 never breaks at its hyphen."""
    return render("formats_table.html", head=FORMAT_HEAD, rows=list(formats.FORMATS.values()))


def float_bits_html(rows: list[FloatBitsRow]) -> str:
    """The rows as a compact HTML table (fits a 1000 px output area)."""
    return render("float_bits.html", rows=rows)


def float_bits(value: str = "0.1") -> Any:
    """The widget: a text box (read exactly) and a log-scale magnitude slider (its float64),
    kept in step; the table updates on each change."""
    import ipywidgets as w

    from .explorer import hear

    text = w.Text(value=value, description="value", continuous_update=False)
    slider = w.FloatLogSlider(
        value=1.0,
        base=10,
        min=-45,
        max=39,
        step=0.01,
        description="|value|",
        continuous_update=False,
        readout_format=".3g",
    )
    out = w.HTML()

    syncing = False  # a change made by the other control: do not echo it back

    def follow(typed: str) -> None:
        """Put the slider at the typed magnitude (when it is finite, non-zero, in range)."""
        nonlocal syncing
        try:
            v = parse_exact(typed)
        except InvalidParameter:
            return
        if isinstance(v, Fraction) and v != 0:
            syncing = True
            try:
                slider.value = min(max(abs(float(v)), slider_low), slider_high)
            finally:
                syncing = False

    def show(change: Any = None) -> None:
        try:
            out.value = float_bits_html(float_bits_table(text.value))
        except InvalidParameter as exc:
            out.value = part("error_line", str(exc))
        if change is not None and not syncing:
            follow(text.value)

    def slid(change: dict[str, Any]) -> None:
        nonlocal syncing
        if syncing:
            return
        sign = "-" if text.value.strip().startswith("-") else ""
        syncing = True
        try:
            text.value = sign + repr(float(change["new"]))
        finally:
            syncing = False

    slider_low, slider_high = 10.0**slider.min, 10.0**slider.max
    follow(value)
    text.observe(show, names="value")
    slider.observe(slid, names="value")
    hear(text, slider)  # a move delays the computing ahead of other views
    show()
    return w.VBox([text, slider, out])
