"""Error growth of the summation orders against n, with the textbook bounds (cached).

The error is measured as ``|computed - exact| / sum(|x|)``, the quantity the classic bounds
hold for: about ``(n - 1)·u`` for a left-to-right sum and ``log2(n)·u`` for a pairwise tree
(``u`` the unit roundoff of the format). Curves come from the emulators and the exact sum on
prefixes of one array (seed 0), so one computation serves every n; they are kept in memory and
on disk under ``cache_dir()/summation_growth``, keyed by the emulators' source.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import FpexploreError
from ...paths import cache_dir
from ...tolerance import unit_roundoff
from .inputs import numpy_dtype

#: the orders drawn (emulated), and the n of the curves: 10 to 10^6, four points a decade
ORDERS = ("sequential", "pairwise", "kahan", "numpy", "torch", "tensorflow")
NS = tuple(sorted({round(10 ** (k / 4)) for k in range(4, 25)}))
SEED = 0
X_MAX = 10_000_000  # the largest n of the lesson: the x axis always reaches it
_VERSION = "1"
_memory: dict[str, Growth] = {}


@dataclasses.dataclass(frozen=True)
class Growth:
    """Error against n (`n`) for each order in `ORDERS` (NaN where undefined), the bounds, and
    how the curves were made; `to_dict`/`from_dict` are the disk cache's JSON."""

    n: list[int]
    errors: dict[str, list[float]]
    skipped: dict[str, str]  # orders without curves, and why
    bounds: dict[str, list[float]]
    unit_roundoff: float
    seed: int
    threads: int
    distribution: str
    dtype: str
    measure: str

    def curve(self, order: str) -> list[float]:
        """The errors of ``order`` at each n; KeyError naming the orders drawn otherwise."""
        if order not in self.errors:
            raise KeyError(f"no curve {order!r}; the curves: {', '.join(self.errors)}")
        return self.errors[order]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: NaN errors as None."""
        errors = {k: [None if math.isnan(v) else v for v in vs] for k, vs in self.errors.items()}
        return {**dataclasses.asdict(self), "errors": errors}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Growth:
        """From `to_dict`'s form; a missing or unknown key raises TypeError."""
        errors = {k: [math.nan if v is None else v for v in vs] for k, vs in data["errors"].items()}
        return cls(**{**data, "errors": errors})


@dataclasses.dataclass(frozen=True)
class Point:
    """This run's error for each framework, recorded and reference outcome (`point`)."""

    n: int
    errors: dict[str, float]
    from_emulator: dict[str, str]  # framework -> the emulator whose error it shows
    missing: dict[str, str]  # framework -> why it did not run here

    def label(self, name: str) -> str:
        """``name`` as a legend shows it: a framework that did not run here, drawn at the value
        of the emulator that stands in for it, is starred (`legend_title` says so)."""
        return f"{name}*" if name in self.from_emulator else name

    def legend_title(self) -> str:
        """The markers' legend title: what a starred name means, where one is."""
        starred = " (*: not run here, its emulator's value)" if self.from_emulator else ""
        return "this run" + starred


def bounds(ns: Any, dtype: str) -> dict[str, list[float]]:
    """The textbook first-order bounds on ``|error| / sum|x|`` at each n."""
    u = unit_roundoff(dtype)
    ns = np.asarray(ns, dtype=np.float64)
    return {
        "sequential bound (n-1)·u": ((ns - 1) * u).tolist(),
        "pairwise bound log2(n)·u": (np.ceil(np.log2(np.maximum(ns, 2))) * u).tolist(),
    }


def relative_error(value: Any, exact: Any, scale: float) -> float:
    """``|value - exact| / scale``; NaN where it is undefined (non-finite, zero scale)."""
    v = float(value)
    if not (math.isfinite(v) and isinstance(exact, Fraction) and scale > 0):
        return math.nan
    return float(abs(Fraction(v) - exact)) / scale


def _signature() -> str:
    """A hash of the emulators' source, so a changed emulator recomputes the curves."""
    from ... import orders

    h = hashlib.sha256(_VERSION.encode())
    for path in sorted(Path(orders.__file__).parent.glob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def curves(distribution: str, dtype: str, threads: int) -> Growth:
    """Error against n for each order in `ORDERS` (cached), plus the bounds."""
    key = f"{distribution}-{dtype}-t{threads}-{_signature()}"
    if key in _memory:
        return _memory[key]
    path = cache_dir() / "summation_growth" / f"{key}.json"
    try:
        data = Growth.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError, KeyError):
        data = _compute(distribution, dtype, threads)
        # a read-only checkout still works, just without the disk cache
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data.to_dict()))
            tmp.replace(path)
    _memory[key] = data
    return data


def ylim(growth: Growth, current: Point) -> tuple[float, float]:
    """y limits holding every curve, both bounds up to n = X_MAX and this run's markers."""
    values = [v for ys in growth.errors.values() for v in ys]
    values += list(current.errors.values())
    pos = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    u = growth.unit_roundoff
    low = min([*pos, u / 100])
    high = max([*pos, (X_MAX - 1) * u])
    return low / 3, high * 3


def _compute(distribution: str, dtype: str, threads: int) -> Growth:
    from ... import orders
    from ... import truth as truth_mod
    from .inputs import make_input

    target = numpy_dtype(dtype)
    x = make_input(distribution, NS[-1], dtype, SEED)
    scale = np.cumsum(np.abs(x.astype(np.float64)))
    errors: dict[str, list[float]] = {}
    skipped: dict[str, str] = {}
    exacts = [truth_mod.sum(x[:n]).exact for n in NS]
    for order in ORDERS:
        if order not in orders.names():
            skipped[order] = "no such emulator"
            continue
        ys: list[float] = []
        try:
            for n, exact in zip(NS, exacts, strict=True):
                value = np.asarray(orders.emulate(x[:n], order, threads=threads)).astype(target)
                ys.append(relative_error(value, exact, float(scale[n - 1])))
        except FpexploreError as exc:
            skipped[order] = str(exc)
            continue
        errors[order] = ys
    u, measure = unit_roundoff(dtype), "|computed - exact| / sum|x|"
    return Growth(list(NS), errors, skipped, bounds(NS, dtype), u, SEED, threads, distribution,
                  dtype, measure)  # fmt: skip


def point(x: np.ndarray, truth: Any, outcomes: Any, emulators: dict[str, str]) -> Point:
    """This run's error (same measure) for each framework, recorded and reference outcome.

    A framework that did not run here (no Java, no torch...) gets the error of the emulator
    that reproduces it bit for bit (``emulators``: framework name -> emulator outcome name),
    listed in ``from_emulator`` with the reason it did not run in ``missing``.
    """
    scale = float(np.sum(np.abs(x.astype(np.float64))))
    by_name = {o.implementation: o for o in outcomes}
    errs, from_emulator, missing = {}, {}, {}
    for o in outcomes:
        if o.kind == "emulator":
            continue
        if o.ran:
            errs[o.implementation] = relative_error(o.value, truth.exact, scale)
            continue
        missing[o.implementation] = o.unavailable
        em = by_name.get(emulators.get(o.implementation, ""))
        if em is not None and em.ran:
            errs[o.implementation] = relative_error(em.value, truth.exact, scale)
            from_emulator[o.implementation] = em.implementation
    return Point(int(x.size), errs, from_emulator, missing)
