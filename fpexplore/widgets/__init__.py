"""Widgets: the generic lesson explorer and special views (float bits, addition trees).
Nothing imports ipywidgets until a widget is built; ``float_bits_view`` is not named
``float_bits`` so as not to shadow the function exported here."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["bits_view", "controls_for", "explain", "explore", "float_bits", "float_bits_table"]

_WHERE = {
    "explore": "explorer",
    "controls_for": "explorer",
    "float_bits": "float_bits_view",
    "float_bits_table": "float_bits_view",
    "explain": "float_bits_view",
    "bits_view": "rng_bits",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
