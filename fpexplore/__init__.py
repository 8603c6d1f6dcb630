"""fpexplore: why deep-learning frameworks give different numbers for the same computation.

``import fpexplore`` is cheap: no framework (torch, TensorFlow, the JVM) loads until a lesson
or backend needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import (
    BackendUnavailable,
    ClaimFailed,
    ClaimNotChecked,
    FpexploreError,
    InvalidInput,
    InvalidParameter,
    NotEmulated,
    PrecisionError,
    RecordError,
    WorkerError,
)
from .result import Claim, Comparison, Observation, Outcome
from .result.text_table import wrapped

if TYPE_CHECKING:
    from .dispatch.compare import Difference

__version__ = "0.1.0"

__all__ = [
    "BackendUnavailable",
    "Claim",
    "ClaimFailed",
    "ClaimNotChecked",
    "Comparison",
    "FpexploreError",
    "InvalidInput",
    "InvalidParameter",
    "NotEmulated",
    "Observation",
    "Outcome",
    "PrecisionError",
    "RecordError",
    "WorkerError",
    "catalog",
    "compare",
    "fingerprint",
    "run",
    "wrapped",
]


def catalog() -> dict[str, Any]:
    """Every lesson by name, in notebook order (``fpexplore.lessons`` is the package that holds
    them)."""
    from .lessons import all_lessons

    return all_lessons()


def run(lesson: str, /, **params: Any) -> Comparison:
    """Run a lesson by name: ``fpexplore.run("summation_order", n=10_000)``."""
    from .lessons import run as _run

    return _run(lesson, **params)


def fingerprint(label: str = "") -> dict[str, Any]:
    """This machine's numerical fingerprint (``fpexplore fingerprint``): a fixed battery's
    bits and exact-truth errors, and the path each library takes."""
    from .dispatch.fingerprint import take

    return take(label)


def compare(a: Any, b: Any, check: bool = False) -> Difference:
    """Two fingerprints (dicts, or paths of JSON files) compared (``fpexplore compare``):
    which results differ, how far each side is from the truth, the causes the fingerprints
    show. With ``check``, the fingerprint is taken again here in a fresh process under the
    suggested environment (``fpexplore compare A B --check``): which differences it removed."""
    from .dispatch.compare import compare as _compare
    from .dispatch.fingerprint import check as checked
    from .dispatch.fingerprint import load
    from .dispatch.record import Fingerprint

    def read(x: Any, side: str) -> dict[str, Any]:
        return checked(x, side.upper()) if isinstance(x, dict | Fingerprint) else load(x, side)

    if not isinstance(check, bool):
        raise InvalidParameter("check", check, "True or False", "fpexplore.compare")
    return _compare(read(a, "a"), read(b, "b"), check_here=check)
