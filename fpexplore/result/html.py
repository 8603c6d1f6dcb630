"""A `Comparison` as compact HTML (notebooks, widgets, pages): the truth, one row per
implementation (value, ULP error as a coloured bar, bits of agreement, a note on what an
alarming number means), the claims. It fits a 1000 px output area and one of 568 px
(JupyterLab at a 1000 px window with its file browser open): text wraps at word boundaries
(`soft` marks where a long name may break), a value wraps between its numbers and shows each
in the digits of its own format, and a table of more than `OPEN_ROWS` rows opens on a click.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import Comparison, Outcome

__all__ = ["claims_html", "comparison_html", "meaning", "soft", "ulp_class", "value_text"]

#: the widest an output is laid out for (JupyterLab's output area at a 1400 px window)
MAX_WIDTH_PX = 1000
#: how many values of an array the table shows (all of them are in the tooltip, up to 12)
VALUE_COUNT = 3
#: a table of more rows than this is collapsed under a one-line summary
OPEN_ROWS = 8
#: words at least this long get break opportunities after their punctuation (`soft`)
SOFT_CHARS = 12
#: a first display with more claims than this lists those that hold under a click
OPEN_CLAIMS = 8
#: notes longer than this show their start; the rest opens on a click
NOTE_CHARS = 180
#: |ULP| at or above which the bar is full (log scale)
BAR_FULL_ULP = 2.0**24

#: ULP classes, best first: (name, colour, what it means)
ULP_CLASSES = {
    "exact": ("#2ca02c", "equal to the truth"),
    "correct": ("#2ca02c", "correctly rounded: the nearest value of its format"),
    "faithful": ("#8fbc3f", "faithful: one of the two values of its format around the truth"),
    "bounded": (
        "#1f9e89",
        "within the computation's a-priori rounding bound: a correct floating-point result",
    ),
    "few": ("#ff9f1c", "a few ULPs off"),
    "many": ("#d62728", "many ULPs off"),
    "none": ("#999999", "not compared"),
}
_FEW_ULP = 16.0
#: what a row's errors are counted in, where not each element's own ULP (`metrics.measure`)
_AT = {"largest": "the largest |value|", "given": "the magnitudes the note names"}

_MARK = {
    True: ("✔", "#2ca02c", "holds"),
    False: ("✘", "#d62728", "FAILS"),
    None: ("○", "#888", "not checked"),
}


def value_text(value: Any, limit: int | None = None) -> str:
    """A value as display text: floats by repr, arrays as dtype, shape and the first
    ``limit`` values (default 3)."""
    import numpy as np  # here, so that `import fpexplore` stays cheap

    if value is None:
        return "—"
    arr = np.asarray(value)
    if arr.dtype == object and arr.ndim == 0:
        return str(value)
    if arr.ndim == 0:
        return _number(arr[()])
    flat = arr.ravel()
    k = VALUE_COUNT if limit is None else limit
    head = ", ".join(_number(x) for x in flat[:k])
    shape = "×".join(str(d) for d in arr.shape)
    return f"{arr.dtype}[{shape}] [{head}{', …' if flat.size > k else ''}]"


def _number(x: Any) -> str:
    """One number in the shortest digits that identify it in its own format (numpy's and
    ml_dtypes' repr: a float32 in up to 9 significant digits, a float64 in up to 17), so
    every digit that can differ is shown."""
    return str(x)


def ulp_class(outcome: Outcome) -> str:
    """Which of `ULP_CLASSES` an outcome's error falls in."""
    err = outcome.error
    if err is None or not outcome.ran:
        return "none"
    if err.max_abs_ulp == 0:
        return "exact"
    if err.correctly_rounded:
        return "correct"
    if err.faithful:
        return "faithful"
    if outcome.within_bound:
        return "bounded"
    if math.isfinite(err.max_abs_ulp) and err.max_abs_ulp <= _FEW_ULP:
        return "few"
    return "many"


def _is_integer(value: Any) -> str | None:
    """The dtype name when ``value`` holds integers (uint8 pixels, counts), else None."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return None
    return str(dtype) if getattr(dtype, "kind", "") in "iub" else None


def meaning(outcome: Outcome) -> str:
    """What an alarming number in this outcome's row means, in one sentence ('' when none is).

    - an infinite ULP error: the result or the truth lies outside the format's range, or is NaN;
    - a row whose truth is another computation's (a reference row; a truth with another shape);
    - integer results, whose float64 ULPs say nothing;
    - 0 bits of agreement: off by 100 % or more somewhere (a sign, a wrap-around, a scale);
    - a huge ULP count with a small relative error: values near zero, whose ULP is tiny.
    """
    err = outcome.error
    if not outcome.ran or err is None:
        return ""
    parts: list[str] = []
    integer = _is_integer(outcome.value)
    import numpy as np

    finite_truth = bool(np.isfinite(np.asarray(err.truth, dtype=np.float64)).all())
    if outcome.kind == "reference" and err.max_abs_ulp > 1:
        parts.append(
            "reference row: its error is against the truth of the computation above, "
            "not of what this row computes"
        )
    if integer:
        parts.append(f"{integer}: counted in levels, not ULPs")
    elif not math.isfinite(err.max_abs_ulp):
        if not finite_truth:
            parts.append("inf ULP: the truth is infinite or NaN here (IEEE propagation)")
        else:
            parts.append(
                "inf ULP: the result is inf or NaN where the truth is finite "
                "(outside the format's range, or an invalid operation)"
            )
    if err.at == "largest":  # magnitudes a lesson gives are named in its row's note
        parts.append(
            "errors in ULPs of the largest |value| (bits relative to it): an element near zero "
            "counts by its absolute error"
        )
    # counted at the largest |value| (``err.at``), an element near zero is no longer tiny
    near_zero = _near_zero(outcome) if err.n > 1 and not integer and not err.at else None
    if near_zero is not None and (err.min_bits <= 0 or err.max_abs_ulp > 1e4):
        abs_err, scale = near_zero
        parts.append(
            f"{'0 bits and ' if err.min_bits <= 0 else ''}{err.max_abs_ulp:.3g} ULP at values "
            f"near zero, where one ULP is tiny: the largest absolute error is {abs_err:.3g}, "
            f"{abs_err / scale:.2g} of the largest value (mean {err.mean_abs_ulp:.3g} ULP)"
        )
    elif (
        not integer
        and not outcome.within_bound
        and err.min_bits <= 0
        and err.max_rel >= 1
        and math.isfinite(err.max_rel)
    ):
        parts.append(
            "0 bits: off by 100 % or more somewhere (a sign, a wrap-around, a scale, or "
            "another computation)"
        )
    elif (
        err.n > 1
        and not err.at
        and math.isfinite(err.max_abs_ulp)
        and err.max_abs_ulp > 1e4
        and err.max_rel < 1e-3
        and not integer
    ):
        parts.append(
            f"{err.max_abs_ulp:.3g} ULP at a value near zero, where one ULP is tiny "
            f"(relative error at most {err.max_rel:.2g}; mean {err.mean_abs_ulp:.3g} ULP)"
        )
    return "; ".join(parts)


def _near_zero(outcome: Outcome) -> tuple[float, float] | None:
    """(largest absolute error, largest |value|) of an array result whose absolute errors are
    all small next to its values (below 1 %): then large ULP counts and 0 bits come from values
    near zero, not from a wrong result. None otherwise."""
    import numpy as np

    err = outcome.error
    try:
        v = np.asarray(outcome.value, dtype=np.float64)
        ulps = np.abs(np.asarray(err.ulp, dtype=np.float64))
        if v.shape != ulps.shape or not np.isfinite(ulps).all() or not np.isfinite(v).all():
            return None
        abs_err = float(np.max(np.abs(err.abs_error())))  # ULPs times the truth's ULP
        scale = float(np.max(np.abs(v)))
    except Exception:  # a value the formats cannot read: no claim about it
        return None
    if scale == 0 or abs_err >= scale / 100:
        return None
    return abs_err, scale


def _bar(outcome: Outcome) -> dict[str, Any] | str | None:
    """The ULP cell's bar ("int" for integers, None without an error)."""
    err = outcome.error
    if err is None:
        return None
    if _is_integer(outcome.value):
        return "int"
    colour, what = ULP_CLASSES[ulp_class(outcome)]
    ulp = err.ulp_scalar if err.ulp_scalar is not None else err.max_abs_ulp
    a = abs(ulp)
    from .numbers import ulp_event

    event = None if outcome.within_bound else ulp_event(err, outcome.value)
    if event is not None:
        frac, text = 1.0, event
    elif math.isfinite(a):
        frac = 0.0 if a == 0 else min(1.0, max(0.04, math.log2(1 + a) / math.log2(BAR_FULL_ULP)))
        text = f"{ulp:+.3g}" if err.ulp_scalar is not None else f"max {a:.3g}"
    else:
        frac, text = 1.0, "inf" if not math.isnan(a) else "nan"
    tip = f"{what}; |error| {a:.6g} ULP of {err.fmt}"
    if err.at:
        tip += f" at {_AT[err.at]} (an element below it counts by its absolute error)"
    if err.ulp_scalar is None and err.n:
        tip += (
            f"; mean {err.mean_abs_ulp:.3g}, p99 {err.p99_abs_ulp:.3g} ULP; "
            f"{err.n_correctly_rounded} of {err.n} correctly rounded"
        )
    under = "within its bound" if outcome.within_bound else ""  # a line under the count
    return {"width": f"{100 * frac:.0f}%", "colour": colour, "text": text, "tip": tip,
            "under": under}  # fmt: skip


def _bits(outcome: Outcome) -> tuple[str, str] | None:
    """The bits cell: the text and its tooltip ('' for none); None without an error."""
    err = outcome.error
    if err is None or _is_integer(outcome.value):
        return None
    b = err.min_bits
    if math.isinf(b):
        return "all", "equal to the truth"
    from .numbers import bits_cap, bits_text

    cap = bits_cap(err.fmt)
    return bits_text(b, err.fmt), f"all {cap} bits of {err.fmt}" if b >= cap else ""


def _value(outcome: Outcome) -> tuple[list[str], str]:
    """The value cell: ``([], text)`` for a verdict in words, else (its words: the dtype and
    shape, then each number, each kept whole, the cell wrapping between them; tooltip)."""
    if isinstance(outcome.value, str):  # a verdict in words: whole, wrapped in its column
        return [], outcome.value
    return value_text(outcome.value).split(" "), value_text(outcome.value, limit=12)


def soft(text: str) -> str:
    """``text`` escaped, with break opportunities (``<wbr>``) after the punctuation of its
    long words ("F.softmax(float32)" may break after "F." or "(", never inside "float32")
    and between the parts of a long CamelCase name ("SparseCategorical|Crossentropy"), and no
    break after a hyphen that a digit or a symbol follows ("3->16")."""
    from markupsafe import escape

    def mark(word: re.Match[str]) -> str:
        # a hyphen before a digit or symbol ("3->16", "-0.5") does not break: U+2011
        w = re.sub(r"-(?=[^\sA-Za-z])", "\u2011", word.group(0))
        if len(w) < SOFT_CHARS:
            return w
        w = re.sub(r"([.(\[_/,=:]+)(?=[^\W\d])", r"\1<wbr>", w)
        return re.sub(r"(?<=[a-z])(?=[A-Z][a-z])", "<wbr>", w)

    return re.sub(r"\S+", mark, str(escape(text)))


def _meta(outcome: Outcome) -> str:
    meta = [outcome.kind]
    if outcome.device and outcome.device != "cpu":
        meta.append(outcome.device)
    if outcome.version:
        meta.append(outcome.version)
    return " · ".join(meta)


def _long(text: str) -> tuple[str, str]:
    """``text`` split at a space before `NOTE_CHARS`: (shown, opens on a click)."""
    if len(text) <= NOTE_CHARS:
        return text, ""
    cut = text.rfind(" ", 0, NOTE_CHARS - 20)
    cut = cut if cut > 0 else NOTE_CHARS - 20
    return text[:cut], text[cut:]


def _code(text: str) -> str:
    """Escape ``text``; `backticked` parts become code; long words may break after their
    punctuation (`soft`)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", soft(text))


def truth_text(truth: Any) -> tuple[str, str]:
    """(short, full) descriptions of a truth: label, value and how it is known."""
    import mpmath
    import numpy as np

    kind = (
        "exact"
        if truth.is_exact
        else f"{math.floor(truth.digits)} certified digits"
        if math.isfinite(truth.digits)
        else "exact"
    )
    if truth.shape:  # an array: only the first values, never the whole array in mpmath
        size = int(np.prod(truth.shape))
        flat = _head(truth, 12)
        head = ", ".join(mpmath.nstr(v, 8) for v in flat[:3])
        short = f"array{list(truth.shape)} [{head}{', …' if size > 3 else ''}]"
        full = ", ".join(mpmath.nstr(v, 17) for v in flat) + (" …" if size > 12 else "")
    else:
        val = truth.mp()
        short, full = mpmath.nstr(val, 17), mpmath.nstr(val, 40)
    return f"{truth.label} = {short} ({kind})", full


def _head(truth: Any, k: int) -> list[Any]:
    """The first ``k`` values of an array truth as mpmath numbers, converting only those."""
    import mpmath

    expansion = getattr(truth, "expansion", None)
    if expansion is not None:  # float64 parts: the leading one is the value to 16 digits
        return [mpmath.mpf(float(v)) for v in expansion[0].ravel()[:k]]
    exact = truth.exact
    if exact is not None:
        return [mpmath.mpf(v.numerator) / v.denominator for v in exact.ravel()[:k]]
    held = getattr(truth, "_mp", None)
    if held is not None:
        return list(held.ravel()[:k])
    return list(truth.mp().ravel()[:k])


def _claims(c: Comparison, previous: Comparison | None) -> dict[str, Any] | None:
    """What ``claims.html`` lists (see `claims_html`)."""
    claims = dict(c.claims)
    if not claims:
        return None
    counts = {True: 0, False: 0, None: 0}
    for claim in claims.values():
        counts[claim.holds] += 1
    out: dict[str, Any] = {
        "summary": ", ".join(
            f"{n} {'hold' if state is True and n > 1 else _MARK[state][2]}"
            for state, n in counts.items()
            if n
        ),
        "same": None,
        "gone": [],
        "held": [],
        "unchecked": [],
    }
    shown = list(claims.items())
    if previous is not None and previous.lesson == c.lesson:
        before = dict(previous.claims)
        shown = [
            (k, cl)
            for k, cl in shown
            if k not in before
            or cl.holds is False
            or before[k].holds != cl.holds
            or before[k].text != cl.text
        ]
        out["gone"] = [k for k in before if k not in claims]
        out["same"] = len(claims) - len(shown)
    items = [(key, _MARK[cl.holds], cl.text) for key, cl in shown]
    if previous is None and len(shown) > OPEN_CLAIMS:
        # a long first list: what did not hold stays in view, the rest opens on a click
        pairs = list(zip(items, shown, strict=True))
        out["held"] = [i for i, (_, cl) in pairs if cl.holds]
        out["unchecked"] = [i for i, (_, cl) in pairs if cl.holds is None]
        items = [i for i, (_, cl) in pairs if cl.holds is False]
    return {**out, "listed": items}


def _render(name: str, c: Comparison, previous: Comparison | None, **context: Any) -> str:
    from ..templates import render, trusted

    code = lambda text: trusted(_code(text))  # noqa: E731
    soft_html = lambda text: trusted(soft(text))  # noqa: E731
    return render(
        name, claims=_claims(c, previous), code=code, soft=soft_html, open_rows=OPEN_ROWS, **context
    )


def claims_html(c: Comparison, previous: Comparison | None = None) -> str:
    """The claims as a short list: all of them, or with ``previous`` those that changed (new,
    gone, or another verdict) and every one that does not hold, and a count of the rest."""
    return _render("claims.html", c, previous)


def comparison_html(c: Comparison, previous: Comparison | None = None, style: bool = True) -> str:
    """The comparison as compact HTML (≤ `MAX_WIDTH_PX` wide); with ``previous`` (shown before
    a widget update) the claims that changed; ``style=False``: no stylesheet (a page has it)."""
    rows = [
        (o, _meta(o), _value(o), _bar(o), _bits(o), meaning(o) if o.ran else "") for o in c.outcomes
    ]
    # the ULP and bits columns only where some row measured an error (recorded kernels and
    # counts have none: their notes get the width)
    ulp_column = any(row[3] is not None for row in rows)
    bits_column = any(row[4] is not None for row in rows)
    text = (c.explanation or "").strip()
    return _render(
        "comparison.html",
        c,
        previous,
        style=style,
        truth=truth_text(c.truth) if c.truth is not None else None,
        rows=rows,
        ulp_column=ulp_column,
        bits_column=bits_column,
        long=_long,
        observations=[(key, o.text, o.value) for key, o in c.observations.items()],
        explanation=[p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()],
    )
