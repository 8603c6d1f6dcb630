"""A claim as declared: its key, its text as a template of the numbers a run measures, the
parts it needs, and the states a run can leave it in. Every claim a lesson or a tool states
is made from its `ClaimSpec`, so the text a run shows is the text declared."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import Claim, Observation, State

__all__ = ["ClaimSpec", "State", "declare_texts"]

_FIELDS = string.Formatter()


@dataclass(frozen=True)
class ClaimSpec:
    """A claim (or an observation) a lesson or tool declares: its ``key``; its ``text``, the
    claim as stated before anything is measured; ``numbers``, a `str.format` template of what
    a run measured, filled from its numbers and shown after the text; the parts it ``needs``
    (backends by registry name, or other parts the lesson's ``missing`` names); where it
    ``applies``; and the ``test`` that decides it. Wherever a part it needs is missing it is
    "not checked", naming the part and its fix (`Lesson.run` settles it)."""

    key: str
    text: str
    needs: tuple[str, ...] = ()
    applies: str = "every machine"
    test: str = ""
    #: stated only when the run meets its case (values that overshoot, say): never "not checked"
    occasional: bool = False
    numbers: str = ""

    @property
    def template(self) -> str:
        """The text and the numbers' template, as a run states it (fields unfilled)."""
        return self.text.replace("{", "{{").replace("}", "}}") + self.numbers

    def filled(self, **numbers: Any) -> str:
        """The text followed by the template filled with ``numbers`` (KeyError names a field
        left unfilled)."""
        return self.text + self.numbers.format(**numbers)

    def claim(self, holds: bool | None, measured: str = "", reason: str = "", **numbers) -> Claim:
        """This claim decided: `filled` with ``numbers``, then ``measured`` (further numbers
        this run saw, as text)."""
        return Claim(self.filled(**numbers) + measured, holds, reason)

    def not_checked(self, reason: str) -> Claim:
        """This claim not checked (the one place that state is made): ``reason`` names what
        was missing and the fix."""
        return Claim(self.text, None, reason)

    def observe(self, value: Any, note: str = "", measured: str = "", **numbers) -> Observation:
        """This observation made: `filled`, then ``measured``, with its ``value``."""
        return Observation(self.filled(**numbers) + measured, value, note)

    def says(self, text: str) -> bool:
        """Whether ``text`` is this declaration's: its text (not checked), or its text and the
        numbers' template filled (with anything in its fields), then any measured text."""
        if text == self.text:
            return True
        parts = _FIELDS.parse(self.numbers)
        pattern = re.escape(self.text) + "".join(
            re.escape(lit) + ("" if f is None else ".*?") for lit, f, _, _ in parts
        )
        return re.match(pattern, text, re.DOTALL) is not None


def declare_texts(
    texts: Mapping[str, str | tuple[str, str]],
    needs: tuple[str, ...] = (),
    by_key: Mapping[str, tuple[str, ...]] | None = None,
    **common: Any,
) -> dict[str, ClaimSpec]:
    """Claims ``{key: text}`` (or ``{key: (text, numbers)}``) declared: each needs
    ``by_key[key]`` where given, else ``needs``; ``common`` (``applies``, ``test``,
    ``occasional``) is the same for all."""
    by_key = by_key or {}
    out = {}
    for k, t in texts.items():
        text, numbers = (t, "") if isinstance(t, str) else t
        out[k] = ClaimSpec(k, text, by_key.get(k, needs), numbers=numbers, **common)
    return out
