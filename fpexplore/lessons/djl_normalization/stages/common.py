"""What every stage shares: its result's shape and the rows it measures against its truth."""

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from .... import backends
from ....result import Claim, Outcome
from ....truth.value import Truth
from ..data import Levels

Thunks = list[Callable[[], Outcome]]
StageResult = tuple[Truth, Thunks, dict[str, Claim], dict[str, Any]]


def optional(name: str) -> Any:
    """Backend ``name``'s module, or None where it is missing (its claims are then "not
    checked", `djl_normalization.CLAIMS` says which)."""
    return None if backends.missing(name) else backends.load(name)


def nearest(truth: Truth) -> np.ndarray:
    """The truth rounded to float64 (plenty to measure errors in grey levels)."""
    return truth.split()[0]


def measured(
    name: str, backend: str, value: Any, truth: Truth, versions: dict[str, str], note: str = ""
) -> Outcome:
    """``value`` measured against ``truth``; a value of another shape is shown, not measured."""
    version, shape = versions.get(backend, ""), tuple(np.shape(value))
    if shape != tuple(truth.shape):
        why = f"shape {shape} differs from the truth's {tuple(truth.shape)}: not measured"
        note = f"{note}; {why}" if note else why
        return Outcome(name, backend, value=value, version=version, note=note)
    if np.asarray(value).dtype == np.uint8:  # ULPs of float64 say nothing about grey levels
        err = np.abs(np.asarray(value, np.float64) - nearest(truth))
        note = f"uint8: max |error| {err.max():.3g} levels, mean |error| {err.mean():.3g}"
    return Outcome.measured(name, backend, value, truth, version=version, note=note)


def rows(values: dict[str, Any], truth: Truth, versions: dict[str, str]) -> Thunks:
    """A row per value, its backend the first word of its name ("PIL (...)" is "pil")."""
    backend = {k: k.split(":")[0].split(" ")[0].lower() for k in values}
    return [partial(measured, k, backend[k], v, truth, versions) for k, v in values.items()]


def missing(name: str, reason: str) -> Callable[[], Outcome]:
    return partial(Outcome.missing, name, "djl", reason)


def levels(got: np.ndarray, exact: np.ndarray, where: np.ndarray | None = None) -> Levels:
    """Error in grey levels against the exact values (over the pixels in ``where`` if
    given)."""
    err = np.asarray(got, dtype=np.float64) - exact
    if where is not None:
        err = err[where]
    return Levels(float(np.abs(err).max()), float(err.mean()), float(err.min()), float(err.max()))
