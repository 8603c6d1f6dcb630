"""Declared parameter constraints: one declaration drives validation, CLI flags and widgets.

Validation is strict and never lets a raw exception through: numpy scalars are coerced to the
Python type they stand for, a bool is never taken for a number, numbers too large for a float
are refused, options are matched by value and type, and every refusal is an `InvalidParameter`
naming the argument, the value given and what is accepted (ranges printed exactly).
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .errors import InvalidParameter, UnknownParameter

#: Longest text a `Text` parameter takes (device strings, record names, file names).
MAX_TEXT = 200


def exact(x: float | int) -> str:
    """A number as Python writes it back exactly: ints as ints, floats by ``repr``."""
    if isinstance(x, bool):
        return repr(x)
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 2**53):
        return str(int(x))
    return repr(float(x))


def _scalar(value: Any) -> Any:
    """A numpy scalar or 0-d array as the Python scalar it holds; anything else unchanged."""
    np = sys.modules.get("numpy")  # no numpy scalar can exist before numpy is imported
    if np is None:
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)  # longdouble too: beyond float64's range it becomes inf
    if isinstance(value, np.str_):
        return str(value)
    return value


@dataclass(frozen=True)
class Param:
    """Base of a declared parameter: a name, a default and a one-line help text."""

    name: str
    default: Any
    help: str = ""

    kind = "value"

    def accepted(self) -> str:  # pragma: no cover - each kind says its own
        return "a valid value"

    def validate(self, value: Any, where: str = "") -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def parse(self, text: str) -> Any:
        """Turn a command-line string into a value (validated afterwards)."""
        return text


@dataclass(frozen=True)
class Interval(Param):
    """A number in [low, high]; ``integer`` for counts, ``log`` for a log-scaled slider;
    ``most`` names an earlier parameter whose value caps this one (a crop at most the size)."""

    low: float = 0
    high: float = 1
    integer: bool = False
    log: bool = False
    most: str = ""

    @property
    def kind(self) -> str:  # type: ignore[override]
        return "int" if self.integer else "float"

    def accepted(self) -> str:
        kind = "an int" if self.integer else "a float"
        cap = f", at most {self.most}" if self.most else ""
        return f"{kind} in the range [{exact(self.low)}, {exact(self.high)}]{cap}"

    def validate(self, value: Any, where: str = "") -> Any:
        value = _scalar(value)
        number = self._number(value)
        if number is None or not self.low <= number <= self.high:
            shown = value if number is None else number
            raise InvalidParameter(self.name, shown, self.accepted(), where)
        return number

    def _number(self, value: Any) -> Any:
        """``value`` as this kind of number; None where it is none (a bool, a fraction for an
        int, nan or inf, an int beyond float range)."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if self.integer:  # nan and inf are not integers either
            return int(value) if isinstance(value, int) or value.is_integer() else None
        with contextlib.suppress(OverflowError):
            value = float(value)
            return value if math.isfinite(value) else None
        return None

    def parse(self, text: str) -> Any:
        text = text.strip()
        if self.integer:
            try:
                return int(text)
            except ValueError:
                pass
        try:
            number = float(text)
        except ValueError:
            raise InvalidParameter(self.name, text, self.accepted()) from None
        return int(number) if self.integer and number.is_integer() else number


@dataclass(frozen=True)
class Options(Param):
    """One of a fixed set of choices (matched by value and type: 1 is not True or 1.0);
    ``labels``, one per choice, name them in a menu (default: ``str`` of each)."""

    choices: tuple[Any, ...] = ()
    labels: tuple[str, ...] = ()
    kind = "choice"

    def accepted(self) -> str:
        return "one of " + ", ".join(repr(c) for c in self.choices)

    def validate(self, value: Any, where: str = "") -> Any:
        value = _scalar(value)
        for choice in self.choices:
            if type(value) is type(choice) and value == choice:
                return choice
        raise InvalidParameter(self.name, value, self.accepted(), where)

    def parse(self, text: str) -> Any:
        for choice in self.choices:
            if str(choice) == text:
                return choice
        return text


@dataclass(frozen=True)
class Flag(Param):
    """A boolean switch."""

    kind = "bool"

    def accepted(self) -> str:
        return "True or False"

    def validate(self, value: Any, where: str = "") -> Any:
        value = _scalar(value)
        if not isinstance(value, bool):
            raise InvalidParameter(self.name, value, self.accepted(), where)
        return value

    def parse(self, text: str) -> Any:
        lowered = text.strip().lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off"}:
            return False
        raise InvalidParameter(self.name, text, "true or false")


@dataclass(frozen=True)
class Text(Param):
    """A free string (a device name, a path); ``pattern_help`` says what is accepted."""

    pattern_help: str = "a non-empty string"
    kind = "text"

    def accepted(self) -> str:
        return f"{self.pattern_help} (a string of 1 to {MAX_TEXT} printable characters)"

    def validate(self, value: Any, where: str = "") -> Any:
        value = _scalar(value)
        if not (isinstance(value, str) and 0 < len(value) <= MAX_TEXT and value.isprintable()):
            raise InvalidParameter(self.name, value, self.accepted(), where)
        return value


@dataclass(frozen=True)
class Depends(Param):
    """A parameter whose declaration depends on the value of an earlier one, ``on``: ``cases``
    pairs each of its values with the declaration that applies then (its range or choices and
    its default). `validate_all` checks the case that applies; alone, without the other's value,
    `validate` accepts what some case accepts."""

    on: str = ""
    cases: tuple[tuple[Any, Param], ...] = ()

    @property
    def kind(self) -> str:  # type: ignore[override]
        return "/".join(dict.fromkeys(p.kind for _, p in self.cases))

    def case(self, on_value: Any) -> Param:
        """The declaration that applies when ``on`` is ``on_value``, under this name."""
        for key, p in self.cases:
            if type(key) is type(on_value) and key == on_value:
                return replace(p, name=self.name, help=self.help)
        raise InvalidParameter(
            self.on, on_value, "one of " + ", ".join(repr(k) for k, _ in self.cases)
        )

    def accepted(self) -> str:
        groups: dict[str, list[Any]] = {}
        for key, p in self.cases:
            groups.setdefault(f"{p.accepted()} (default {p.default!r})", []).append(key)
        return "; ".join(
            f"{text} when {self.on} is {' or '.join(map(repr, keys))}"
            for text, keys in groups.items()
        )

    def validate(self, value: Any, where: str = "") -> Any:
        return self._first(lambda p: p.validate(value, where), value, where)

    def parse(self, text: str) -> Any:
        return self._first(lambda p: p.parse(text), text)

    def _first(self, call: Any, value: Any, where: str = "") -> Any:
        """What the first case that takes ``value`` makes of it."""
        for _, p in self.cases:
            try:
                return call(p)
            except InvalidParameter:
                pass
        raise InvalidParameter(self.name, value, self.accepted(), where)


def help_line(p: Param) -> str:
    """``p``'s command-line help: its text, kind, what it accepts and its default (what it
    accepts alone where the default is None: not asked for)."""
    default = f"by {p.on}" if isinstance(p, Depends) else repr(p.default)  # per case
    text = f"{p.help} [{p.kind}; {p.accepted()}; default: {default}]"
    if p.default is None:
        text = f"{p.help} [{p.accepted()}]"
    return text.replace("%", "%%").replace("`", "")


def resolved(params: tuple[Param, ...], values: Any) -> tuple[Param, ...]:
    """``params`` as they apply at ``values`` (`declared_at`; the others' defaults where
    ``values`` lacks them): plain declarations, as a widget or a grid needs them."""
    at = {p.name: values.get(p.name, p.default) for p in params}
    return tuple(declared_at(p, at) for p in params)


def follows(p: Param) -> str:
    """The earlier parameter whose value shapes ``p``'s declaration ("" if none does)."""
    return p.on if isinstance(p, Depends) else getattr(p, "most", "")


def declared_at(p: Param, at: Mapping[str, Any]) -> Param:
    """``p`` as it applies where the earlier parameters have the values ``at``."""
    if isinstance(p, Depends):
        return p.case(at[p.on])
    if isinstance(p, Interval) and p.most:  # capped by that parameter's value
        high = min(p.high, at[p.most])
        return replace(p, high=high, default=min(p.default, high), most="")
    return p


def settle(params: tuple[Param, ...], values: Any) -> dict[str, Any]:
    """``values`` with each dependent value that its case does not take set to that case's
    default (a control that follows another: a size kept where the new op takes it)."""
    out = dict(values)
    for p in params:
        if follows(p) in out:
            case = declared_at(p, out)
            try:
                out[p.name] = case.validate(out.get(p.name, case.default))
            except InvalidParameter:
                out[p.name] = case.default
    return out


class Values(dict):
    """A dict that also reads by attribute (a run's validated parameters: ``params.n``; a
    lesson's results by name); an unknown name raises AttributeError listing the known ones."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            known = ", ".join(self) or "none"
            raise AttributeError(f"no {name!r} here; there are: {known}") from None


def parse_texts(params: tuple[Param, ...], texts: Mapping[str, Any]) -> dict[str, Any]:
    """``texts`` (a command line's strings; other values kept, None left out) each parsed by
    its declaration, a `Depends` by the case its ``on`` value (given or default) picks."""
    out: dict[str, Any] = {}
    for p in params:
        text = texts.get(p.name)
        if isinstance(text, str):
            if isinstance(p, Depends):  # an unknown case: refused when validated
                with contextlib.suppress(InvalidParameter):
                    p = p.case(out.get(p.on, next(o.default for o in params if o.name == p.on)))
            text = p.parse(text)
        if text is not None:
            out[p.name] = text
    return out


def validate_all(params: tuple[Param, ...], given: Any, where: str) -> Values:
    """Validate ``given`` and fill in the defaults as declared (a `Depends`'s the case's that
    its ``on`` value picks, by whose case ``given`` is validated; an `Interval` with ``most``
    capped by that parameter's value); an unknown name raises `UnknownParameter` listing the
    known ones."""
    known = {p.name: p for p in params}
    for name in given:
        if name not in known:
            raise UnknownParameter(name, given[name], tuple(known), where)
    out: dict[str, Any] = {}
    for p in params:
        q, on = declared_at(p, out), follows(p)
        if p.name not in given:
            out[p.name] = q.default
            continue
        try:
            out[p.name] = q.validate(given[p.name], where)
        except InvalidParameter as exc:
            if not on:
                raise
            accepted = f"{exc.accepted} when {on}={out[on]!r}"
            raise InvalidParameter(p.name, exc.given, accepted, where) from None
    return Values(out)
