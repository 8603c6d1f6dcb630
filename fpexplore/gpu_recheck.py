"""The offline check of a GPU record made before the recorder counted in ULPs of the exact
value (`fpexplore.lessons._gpu.ulp_unit`): its sampled inputs are seeded, so their exact values
are made again with no GPU, and where none rounds up to a power of two the record is marked as
holding the same numbers in both units."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .lessons._gpu import ulp_unit
from .lessons.gpu_determinism import experiment as determinism
from .lessons.tf32 import experiment as tf32

__all__ = ["mark", "recheck"]


def recheck(record: Mapping[str, Any]) -> dict[str, int]:
    """Per experiment of a GPU record, how many sampled exact values its ULP fields would
    count differently in the two units (0: the recorded numbers hold in both)."""
    exp = record["experiments"]
    quick = bool(record["settings"]["quick"])
    det = determinism.sampled_truths(quick=quick, seed=exp["determinism"]["seed"])
    measured = {
        (r["op"], r["case"], r["output"])
        for r in exp["determinism"]["rows"]
        if r.get("ulp_vs_truth_max") is not None
    }
    if missing := measured - set(det):
        raise ValueError(f"rows the offline truths do not cover: {sorted(missing)[:3]}")
    return {
        "determinism": sum(ulp_unit.boundary(det[k]) for k in measured),
        "tf32": sum(ulp_unit.boundary(t) for t in tf32.sampled_truths(exp["tf32"]).values()),
    }


def mark(record: dict[str, Any]) -> dict[str, int]:
    """Mark each experiment of a record in the old unit whose `recheck` finds no value counted
    differently (its ``ulp_unit`` field); returns the recheck. An experiment already in the
    exact value's unit is left as it is."""
    found = recheck(record)
    for name in ulp_unit.EXPERIMENTS:
        experiment = record["experiments"][name]
        if ulp_unit.unit(experiment) == ulp_unit.ROUNDED and found[name] == 0:
            experiment[ulp_unit.KEY] = (
                f"{ulp_unit.EXACT} (recorded as ULPs of the rounded truth; rechecked offline: "
                "none of the sampled exact values rounds up to a power of two, so the numbers "
                "are the same in both units)"
            )
    return found
