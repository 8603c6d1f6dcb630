"""The types of a fingerprint's fields, checked before anything reads them: a file edited by
hand, or written by another program, is refused with the field's name, never read half-way."""

from __future__ import annotations

import math
from typing import Any

from ..errors import InvalidInput

_STR, _INT, _BOOL = (str,), (int,), (bool,)
_LIST, _DICT = (list,), (dict,)
_OPT_STR, _OPT_INT, _OPT_BOOL = (str, type(None)), (int, type(None)), (bool, type(None))
_OPT_DICT = (dict, type(None))

#: machine fields: (path, types, for a list: its items' types)
MACHINE: tuple[tuple[tuple[str, ...], tuple[type, ...], tuple[type, ...] | None], ...] = (
    (("cpu",), _OPT_STR, None),
    (("cpu_vendor",), _OPT_STR, None),
    (("arch",), _OPT_STR, None),
    (("system",), _OPT_STR, None),
    (("cpu_flags",), _LIST, _STR),
    (("cores",), _OPT_INT, None),
    (("python",), _OPT_STR, None),
    (("fpexplore",), _OPT_STR, None),
    (("env",), _DICT, None),
    (("onednn_isa",), _OPT_STR, None),
    (("numpy",), _OPT_DICT, None),
    (("numpy", "version"), _OPT_STR, None),
    (("numpy", "simd_targets"), _LIST, _STR),
    (("numpy", "blas"), _OPT_STR, None),
    (("numpy", "openblas"), _OPT_DICT, None),
    (("numpy", "openblas", "core"), _OPT_STR, None),
    (("numpy", "openblas", "threads"), _OPT_INT, None),
    (("numpy", "openblas", "config"), _OPT_STR, None),
    (("torch",), _OPT_DICT, None),
    (("torch", "version"), _OPT_STR, None),
    (("torch", "capability"), _OPT_STR, None),
    (("torch", "threads"), _OPT_INT, None),
    (("torch", "mkl"), _OPT_BOOL, None),
    (("torch", "mkldnn"), _OPT_BOOL, None),
    (("mkl",), _OPT_DICT, None),
    (("mkl", "version"), _OPT_STR, None),
    (("mkl", "cbwr"), _OPT_STR, None),
    (("mkl", "branch"), _OPT_STR, None),
    (("mkl", "intel_paths"), _OPT_BOOL, None),
    (("tensorflow",), _OPT_DICT, None),
    (("tensorflow", "version"), _OPT_STR, None),
    (("tensorflow", "onednn"), _OPT_BOOL, None),
    (("tensorflow", "onednn_reason"), _OPT_STR, None),
    (("tensorflow", "intra_op_threads"), _OPT_INT, None),
    (("cards",), _LIST, _DICT),
)
CARD = (
    ("device", _STR),
    ("name", _OPT_STR),
    ("capability", _OPT_STR),
    ("cuda", _OPT_STR),
    ("cudnn", _OPT_INT),
    ("tf32_matmul", _OPT_BOOL),
    ("tf32_cudnn", _OPT_BOOL),
)
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
        node: Any = machine
        for p in path:
            node = node.get(p) if isinstance(node, dict) else None
        if node is None and (type(None) in types or path[-1] not in _parent(machine, path)):
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
            if (key in card or types is _STR) and not _is(card.get(key), types):
                raise _field(where, f"machine.cards[{n}].{key}", card.get(key), _names(types))


def _parent(machine: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node: Any = machine
    for p in path[:-1]:
        node = node.get(p) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


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
