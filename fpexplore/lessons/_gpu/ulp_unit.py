"""Which ULP a GPU record's error fields count in, and the offline check that converts them.

The recorder counts errors in ULPs of the exact value (`fpexplore.metrics.truth_ulp`). Records
made before it did (the ``gpu_determinism`` rows' ``ulp_vs_truth_*``, the ``tf32`` rows'
``median_abs_ulp32``) divided by the ULP of the truth rounded to float32. The two differ only
where the exact value lies just below a power of two and rounds up to it (there the rounded
truth's ULP is twice the exact value's). A record's experiment says its unit in ``ulp_unit``;
one without it is in the old unit.

Their sampled inputs are seeded, so the exact values can be made again with no GPU
(`fpexplore.gpu_recheck`): where none of them rounds up to a power of two, the recorded numbers
are the same in both units, and it says so in the record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ... import formats, metrics

__all__ = ["EXACT", "KEY", "ROUNDED", "boundary", "unit", "words"]

KEY = "ulp_unit"
EXACT = "exact value"
ROUNDED = "rounded truth"
#: the experiments of a GPU record whose rows hold errors in float32 ULPs
EXPERIMENTS = ("determinism", "tf32")
#: what re-records them in the exact value's unit, on a machine with a CUDA GPU
COMMAND = "PYTHONPATH=. python3 -m fpexplore record gpu --device cuda"


def unit(experiment: Mapping[str, Any]) -> str:
    """The unit an experiment's ULP fields count in: `EXACT`, or `ROUNDED` for a record made
    before the recorder said (or converted by `mark`)."""
    found = experiment.get(KEY)
    return EXACT if isinstance(found, str) and found.startswith(EXACT) else ROUNDED


def words(experiment: Mapping[str, Any]) -> str:
    """The unit in words, for a label: 'float32 ULPs of the exact value' or of the rounded
    truth, with the command that re-records it."""
    if unit(experiment) == EXACT:
        return "float32 ULPs of the exact value"
    return f"float32 ULPs of the truth rounded to float32 (an older record; {COMMAND})"


def boundary(truth: Any, fmt: str = "float32") -> int:
    """How many exact values of ``truth`` have a ULP other than their rounding's in ``fmt``
    (those just below a power of two that round up to it)."""
    exact = np.asarray(metrics.truth_ulp(truth, fmt), dtype=np.float64).ravel()
    rounded = np.asarray(truth.round(fmt), dtype=np.float64).ravel()
    of_rounding = np.asarray(formats.ulp(rounded, fmt), dtype=np.float64).ravel()
    return int(np.sum(exact != of_rounding))
