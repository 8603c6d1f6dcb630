"""Keep recent results of pure computations, so a widget update recomputes only what changed.

A `Memo` maps a hashable key (what the result depends on) to the result, keeping the newest
``keep`` entries. Lessons use it for work that does not depend on the control a student moves
(e.g. the DJL lesson's pipelines and stage results per image and size, whatever stage is shown).
Results are shared between calls: callers must not mutate them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class Memo:
    """A small least-recently-used store of computed results."""

    def __init__(self, keep: int = 32) -> None:
        self.keep = keep
        self._store: OrderedDict[Hashable, Any] = OrderedDict()
        self.misses = 0

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The result stored under ``key``, computing (and storing) it on a miss."""
        if key in self._store:
            self._store.move_to_end(key)
            return self._store[key]
        self.misses += 1
        value = compute()
        self._store[key] = value
        while len(self._store) > self.keep:
            self._store.popitem(last=False)
        return value

    def __contains__(self, key: Hashable) -> bool:
        """Whether a result is stored under ``key`` (no miss is counted)."""
        return key in self._store

    def clear(self) -> None:
        self._store.clear()

    def __len__(self) -> int:
        return len(self._store)
