"""The recorded CUDA result of torch.sum for the lesson's input, where a GPU run recorded it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import FpexploreError
from ..result import Outcome

FIX = "fpexplore record-gpu   (on a machine with a CUDA GPU)"


def _matches(spec: Any, distribution: str, n: int, dtype: str, seed: int) -> bool:
    """Whether a recorded case's input description is the lesson's input."""
    if not isinstance(spec, dict):
        return False
    if spec.get("distribution") != distribution or spec.get("n") != n:
        return False
    if spec.get("dtype", "float32") != dtype:
        return False
    return distribution == "allequal" or spec.get("seed", 0) == seed


def outcome(
    name: str, distribution: str, n: int, dtype: str, seed: int, x: np.ndarray, truth: Any
) -> Outcome | None:
    """``kind="recorded"`` outcome of the matching case, or a missing outcome saying which
    cases were recorded; None when records cannot be read at all is never silent either."""
    try:
        from .. import records

        experiment = records.load()["experiments"]["sum"]
    except (FpexploreError, KeyError, ImportError, OSError) as exc:
        return Outcome.missing(
            name,
            "torch",
            f"no recorded GPU run could be read: {exc}",
            kind="recorded",
            device="cuda",
        )
    cases = experiment.get("cases", [])
    for case in cases:
        if not _matches(case.get("input"), distribution, n, dtype, seed):
            continue
        value = np.array(case["cuda_bits"], dtype=np.uint32).view(np.float32)[()]
        if x.dtype != np.float32:
            continue
        device = str(case.get("device") or experiment.get("device") or "cuda")
        date = str(case.get("date") or experiment.get("date") or "")
        version = str(case.get("torch") or experiment.get("torch") or "")
        return Outcome.measured(
            name,
            "torch",
            value,
            truth,
            kind="recorded",
            device=device,
            version=version,
            settings={"recorded": date, "case": case.get("name", "")},
            note=f"recorded on {device}"
            + (f" on {date}" if date else "")
            + "; not run now (no GPU here)",
        )
    names = ", ".join(str(c.get("name")) for c in cases) or "none"
    return Outcome.missing(
        name,
        "torch",
        f"this input was not recorded on a GPU (recorded "
        f"cases: {names}); to record more, run: {FIX}",
        kind="recorded",
        device="cuda",
    )
