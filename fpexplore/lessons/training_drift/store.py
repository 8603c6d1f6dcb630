"""Results kept in memory and on disk (``cache_dir()/training_drift``), keyed by what they
depend on and by the source of the code that computes them: a changed model recomputes."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...memo import Memo
from ...paths import cache_dir

_MEMORY = Memo(keep=64)
_VERSION = "1"


def signature() -> str:
    """A hash of this lesson's computing modules."""
    here = Path(__file__).parent
    h = hashlib.sha256(_VERSION.encode())
    for name in ("models.py", "train.py", "experiment.py", "growth.py", "table.py"):
        if (here / name).exists():
            h.update((here / name).read_bytes())
    return h.hexdigest()[:12]


def _path(kind: str, key: tuple[Any, ...]) -> Path:
    name = "-".join(str(k) for k in key)
    return cache_dir() / "training_drift" / f"{kind}-{name}-{signature()}.json"


def cached(kind: str, key: tuple[Any, ...], compute: Callable[[], dict[str, Any]]) -> Any:
    """The JSON-able result of ``compute`` for ``key``: from memory, else from the disk cache,
    else computed and kept in both (a read-only cache folder just skips the disk)."""

    def load() -> dict[str, Any]:
        path = _path(kind, key)
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            pass
        data = compute()
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data))
            tmp.replace(path)
        return data

    return _MEMORY.get((kind, *key), load)


def is_cached(kind: str, key: tuple[Any, ...]) -> bool:
    """Whether ``key``'s result is at hand without computing (memory or disk)."""
    return (kind, *key) in _MEMORY or _path(kind, key).exists()
