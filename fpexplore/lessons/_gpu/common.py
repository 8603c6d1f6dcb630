"""Small helpers shared by the experiments: seeded inputs, run digests, summaries."""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import MISSING, fields
from typing import Any

import numpy as np

from ... import formats
from ...backends.torch_device import synchronize


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def normal32(gen: np.random.Generator, *shape: int) -> np.ndarray:
    """Standard normal float32 (numpy's generator: the same on every platform)."""
    return gen.standard_normal(shape, dtype=np.float32)


def digest(arr: np.ndarray) -> str:
    """A short hash of an array's bytes: equal digests mean bitwise-equal results."""
    return hashlib.sha1(np.ascontiguousarray(arr).tobytes()).hexdigest()[:16]


def to_numpy(t: Any) -> np.ndarray:
    return t.detach().float().cpu().numpy().copy()


def run_spread(results: list[np.ndarray]) -> dict[str, Any]:
    """Distinct results among runs (bitwise), the largest difference from run 0, in value and
    in float32 ULPs."""
    digests = [digest(r) for r in results]
    first = results[0].astype(np.float64)
    max_abs = max_ulp = 0.0
    for r in results[1:]:
        d = np.abs(r.astype(np.float64) - first)
        if d.size:
            max_abs = max(max_abs, float(d.max()))
            max_ulp = max(max_ulp, float((d / formats.ulp(results[0], "float32")).max()))
    return {
        "runs": len(results),
        "distinct": len(set(digests)),
        "digests": digests,
        "max_abs_diff": max_abs,
        "max_ulp_diff": max_ulp,
    }


def ran_row(cls: type, d: Mapping[str, Any]) -> Any:
    """The row ``cls`` of JSON object ``d``: every field where it ran, only those without a
    default (and ``raised``) where it raised; a missing field raises `KeyError`."""
    ran = not d["raised"]
    bare = {f.name for f in fields(cls) if (f.default, f.default_factory) == (MISSING, MISSING)}
    return cls(**{f.name: d[f.name] for f in fields(cls) if ran or f.name in {*bare, "raised"}})


def first_line(exc: BaseException, limit: int = 400) -> str:
    return f"{type(exc).__name__}: {exc}".strip()[:limit]


def timed(fn: Callable[[], Any], dev: Any, repeat: int = 5) -> tuple[Any, float]:
    """The result of ``fn()`` and its median time in ms over ``repeat`` runs after a warm-up."""
    out = fn()
    synchronize(dev)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        synchronize(dev)
        times.append(time.perf_counter() - t0)
    return out, float(np.median(times) * 1e3)


def say(msg: str) -> None:
    """A recorder's progress line on stderr, with the time."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
