"""Declared parameter constraints: one declaration drives validation, CLI flags and widgets."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import InvalidParameter


@dataclass(frozen=True)
class Param:
    """Base of a declared parameter: a name, a default and a one-line help text."""

    name: str
    default: Any
    help: str = ""

    def validate(self, value: Any, where: str = "") -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def parse(self, text: str) -> Any:
        """Turn a command-line string into a value (validated afterwards)."""
        return text


@dataclass(frozen=True)
class Interval(Param):
    """A number in [low, high]; ``integer`` for counts, ``log`` for a log-scaled slider."""

    low: float = 0
    high: float = 1
    integer: bool = False
    log: bool = False

    def accepted(self) -> str:
        kind = "an int" if self.integer else "a float"
        return f"{kind} in the range [{self.low:g}, {self.high:g}]"

    def validate(self, value: Any, where: str = "") -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            try:
                import numpy as np

                if isinstance(value, np.integer | np.floating):
                    value = value.item()
                else:
                    raise TypeError
            except TypeError:
                raise InvalidParameter(self.name, value, self.accepted(), where) from None
        if self.integer:
            if isinstance(value, float):
                if not value.is_integer():
                    raise InvalidParameter(self.name, value, self.accepted(), where)
                value = int(value)
        else:
            value = float(value)
        if not (math.isfinite(value) and self.low <= value <= self.high):
            raise InvalidParameter(self.name, value, self.accepted(), where)
        return value

    def parse(self, text: str) -> Any:
        try:
            number = float(text)
        except ValueError:
            raise InvalidParameter(self.name, text, self.accepted()) from None
        return int(number) if self.integer and number.is_integer() else number


@dataclass(frozen=True)
class Options(Param):
    """One of a fixed set of choices."""

    choices: tuple[Any, ...] = ()

    def accepted(self) -> str:
        return "one of " + ", ".join(repr(c) for c in self.choices)

    def validate(self, value: Any, where: str = "") -> Any:
        if value not in self.choices:
            raise InvalidParameter(self.name, value, self.accepted(), where)
        return value

    def parse(self, text: str) -> Any:
        for choice in self.choices:
            if str(choice) == text:
                return choice
        return text


@dataclass(frozen=True)
class Flag(Param):
    """A boolean switch."""

    def validate(self, value: Any, where: str = "") -> Any:
        if not isinstance(value, bool):
            raise InvalidParameter(self.name, value, "True or False", where)
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

    def validate(self, value: Any, where: str = "") -> Any:
        if not isinstance(value, str) or not value:
            raise InvalidParameter(self.name, value, self.pattern_help, where)
        return value


def validate_all(params: tuple[Param, ...], given: dict[str, Any], where: str) -> dict[str, Any]:
    """Fill defaults and validate ``given``; unknown names raise with the list of known ones."""
    known = {p.name: p for p in params}
    for name in given:
        if name not in known:
            raise InvalidParameter(
                name,
                given[name],
                "one of the parameters " + ", ".join(known)
                if known
                else "absent (this takes no parameters)",
                where,
            )
    return {p.name: p.validate(given.get(p.name, p.default), where) for p in params}
