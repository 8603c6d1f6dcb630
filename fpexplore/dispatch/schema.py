"""The types of a fingerprint's fields, checked before anything reads them: a file edited by
hand, or written by another program, is refused with the field's name, never read half-way."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import is_dataclass
from typing import Any, get_args, get_origin

from ..errors import InvalidInput
from .record import Card, MachineDescription, hints, members

_STR = (str,)
_OPT_STR = (str, type(None))

Row = tuple[tuple[str, ...], tuple[type, ...], tuple[type, ...] | None]


def _accepted(hint: Any) -> tuple[tuple[type, ...], tuple[type, ...] | None, Any]:
    """A record field's type as JSON types: (accepted, for a list its items', the record an
    object is read into)."""
    accepted: list[type] = []
    items, record = None, None
    for t in members(hint):
        origin = get_origin(t) or t
        if origin is tuple:
            accepted.append(list)
            items = _accepted(get_args(t)[0])[0]
        elif origin is dict or is_dataclass(origin):
            accepted.append(dict)
            record = origin if is_dataclass(origin) else None
        else:
            accepted.append(origin)
    return tuple(accepted), items, record


def _rows(cls: type, path: tuple[str, ...] = ()) -> Iterator[Row]:
    for name, hint in hints(cls).items():
        types, items, record = _accepted(hint)
        yield (*path, name), types, items
        if record is not None:
            yield from _rows(record, (*path, name))


#: machine fields, as `record.MachineDescription` declares them: (path, types, a list's items)
MACHINE: tuple[Row, ...] = tuple(_rows(MachineDescription))
CARD = tuple((path[-1], types) for path, types, _ in _rows(Card))
OP = (("op", _OPT_STR), ("library", _OPT_STR), ("device", _OPT_STR), ("head", (list, type(None))))


def _is(value: Any, types: tuple[type, ...]) -> bool:
    """``isinstance`` where a bool is no int (JSON's true is not a count)."""
    if isinstance(value, bool) and bool not in types:
        return False
    return isinstance(value, types)


def _names(types: tuple[type, ...]) -> str:
    words = {str: "a string", int: "an integer", bool: "true or false", list: "a list"}
    words |= {dict: "an object", type(None): "null"}
    return " or ".join(words.get(t, t.__name__) for t in types)


def _field(where: str, path: str, value: Any, accepted: str) -> InvalidInput:
    shown = type(value).__name__ if not isinstance(value, str | int | float) else repr(value)
    return InvalidInput(f"{where}: field {path!r} must be {accepted}; it is {shown[:60]}")


def check_machine(machine: dict[str, Any], where: str) -> None:
    """Refuse (`InvalidInput`) a machine description whose known fields have other types."""
    for path, types, items in MACHINE:
        parent: Any = machine
        for p in path[:-1]:
            parent = parent.get(p) if isinstance(parent, dict) else None
        parent = parent if isinstance(parent, dict) else {}
        node = parent.get(path[-1])
        if node is None and (type(None) in types or path[-1] not in parent):
            continue
        name = "machine." + ".".join(path)
        if not _is(node, types):
            raise _field(where, name, node, _names(types))
        if items is not None and not all(_is(v, items) for v in node):
            raise _field(where, name, node, f"a list of {_names(items).split(' ', 1)[1]}s")
    for key, value in machine.get("env", {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise _field(where, f"machine.env.{key}", value, "a string")
    for n, card in enumerate(machine.get("cards") or []):
        for key, types in CARD:
            if (key in card or types == _STR) and not _is(card.get(key), types):
                raise _field(where, f"machine.cards[{n}].{key}", card.get(key), _names(types))


def check_op(key: str, op: Any, where: str) -> None:
    """Refuse an op entry without a digest string, with a ``max_ulp`` that is not a finite
    number in float range, or with fields of other types."""
    if not isinstance(op, dict) or not isinstance(op.get("digest"), str):
        raise InvalidInput(f"{where}: op {key!r} has no 'digest' string")
    ulp = op.get("max_ulp")
    if ulp is not None:
        ok = _is(ulp, (int, float))
        try:
            ok = ok and not math.isnan(float(ulp))
        except OverflowError:
            ok = False
        if not ok:
            raise InvalidInput(f"{where}: op {key!r} has a 'max_ulp' that is not a number")
    for name, types in OP:
        if not _is(op.get(name), types):
            raise _field(where, f"ops.{key}.{name}", op.get(name), _names(types))
