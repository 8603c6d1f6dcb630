"""The toolkit of the myths' judges: read a lesson run's claims and numbers, and decide.

A judge is a function of a lesson's `Comparison` that returns ``(verdict, why, number)``: the
verdict (`HOLDS`, `FAILS`, `DEPENDS`), what it depends on or why, and the measured number that
shows it. It lives beside the lesson whose data it reads (``lessons/<name>/judges.py``) and is
named in `fpexplore.myths`' catalog. It raises `NotMeasured` when a claim it reads is absent or
was not checked in this run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .result import Comparison

HOLDS, FAILS, DEPENDS, NOT_MEASURED = "holds", "does not hold", "depends", "not measured"
VERDICTS = (HOLDS, FAILS, DEPENDS, NOT_MEASURED)


class NotMeasured(Exception):
    """A judge could not decide: a claim it reads is absent or was not checked in this run."""


def claim(c: Comparison, key: str) -> bool:
    """The state of claim ``key``; `NotMeasured` when it is absent or was not checked."""
    claim = c.claims.get(key)
    if claim is None:
        raise NotMeasured(f"the {c.lesson} run has no claim {key!r}")
    if claim.holds is None:
        reason = getattr(claim, "reason", "") or "a part it needs is missing"
        raise NotMeasured(f"{key} was not checked: {reason}")
    return bool(claim.holds)


def value(c: Comparison, name: str) -> Any:
    o = c.outcome(name)
    if not o.ran:
        raise NotMeasured(f"{name} did not run: {o.unavailable}")
    return o.value


def first(values: Any) -> float:
    import numpy as np

    return float(np.asarray(values).ravel()[0])


Verdicts = tuple[str, str, str]


def holds(c: Comparison, *keys: str) -> bool:
    """Whether every claim ``keys`` held (`NotMeasured` at the first one absent or unchecked;
    a failed one stops the reading, as ``and`` would)."""
    return all(claim(c, key) for key in keys)


def decide(number: str, *rules: tuple[bool, str, str], otherwise: tuple[str, str]) -> Verdicts:
    """``(verdict, why, number)`` of the first rule ``(when, verdict, why)`` whose ``when`` is
    true, else ``otherwise``'s ``(verdict, why)``."""
    for when, verdict, why in rules:
        if when:
            return verdict, why, number
    return (*otherwise, number)


def device_key(data: Mapping[str, Any], word: str) -> str:
    for key in data:
        if word in key:
            return key
    raise NotMeasured(f"no {word} side in this run")


@dataclass(frozen=True)
class Rule:
    """The judges' common shape: ``verdict`` (and ``why``) when every claim ``keys`` holds,
    else ``otherwise``; ``number(c)`` is the measured number that shows it."""

    keys: tuple[str, ...]
    verdict: str
    why: str
    otherwise: tuple[str, str]
    number: Callable[[Comparison], str]

    def __call__(self, c: Comparison) -> Verdicts:
        held = holds(c, *self.keys)  # NotMeasured first where a part was missing
        return decide(self.number(c), (held, self.verdict, self.why), otherwise=self.otherwise)


def differ_count(c: Comparison, a: str, b: str, what: str) -> str:
    import numpy as np

    x, y = np.asarray(value(c, a)), np.asarray(value(c, b))
    return f"{int((x != y).sum())} of {x.size} outputs differ between {what}"


def ratio(a: float, b: float) -> str:
    """``a`` as a multiple of ``b``, or what happened when a ratio says nothing ("inf ×")."""
    if b == 0:
        return "both exact" if a == 0 else "the second is exact"
    if not (math.isfinite(a) and math.isfinite(b)):
        return "one is not finite"
    return f"{a / b:.0f}×"
