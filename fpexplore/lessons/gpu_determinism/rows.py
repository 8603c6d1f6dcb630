"""A determinism run's parts, typed where the run or the record is read: a missing field
raises `KeyError` there (a record's becomes a `RecordError` naming it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._gpu.common import ran_row


@dataclass(frozen=True)
class Row:
    """One op, output, case and flag setting: the spread of its runs and, at sampled entries,
    each run's error against the exact result (None where nothing was sampled)."""

    op: str
    case: str
    output: str
    config: str
    raised: str | None = None  # the first line of what it raised, None where it ran
    runs: int = 0
    distinct: int = 1  # bitwise-distinct results
    digests: list[str] = field(default_factory=list)
    max_abs_diff: float = 0.0
    max_ulp_diff: float = 0.0
    samples: int = 0
    ulp_vs_truth_first: list[float] | None = None
    ulp_vs_truth_median: list[float] | None = None
    ulp_vs_truth_max: list[float] | None = None

    @property
    def varies(self) -> bool:
        """It ran and gave more than one distinct result."""
        return self.raised is None and self.distinct > 1

    from_dict = classmethod(ran_row)


@dataclass(frozen=True)
class Probe:
    """An op run once under use_deterministic_algorithms(True): did it raise, and why."""

    op: str
    raised: bool
    message: str
    workspace_config: str | None  # CUBLAS_WORKSPACE_CONFIG when it ran

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], op: str = "") -> Probe:
        """A probe of the record's ``raises`` (or ``cublas_probe``, named ``op``)."""
        name = op or d["op"]
        return cls(name, d["raised"], d["message"], d["CUBLAS_WORKSPACE_CONFIG"])


@dataclass(frozen=True)
class FreshRow:
    """A convolution output under one flag setting across fresh processes."""

    case: str
    output: str
    config: str
    distinct: int


@dataclass(frozen=True)
class FreshProcesses:
    """The cudnn.benchmark probe: fresh processes started at once, compared bit for bit."""

    processes: int
    completed: int
    rows: list[FreshRow]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FreshProcesses:
        rows = [FreshRow(r["case"], r["output"], r["config"], r["distinct"]) for r in d["rows"]]
        return cls(d["processes"], d["completed"], rows)


def parse(run: Mapping[str, Any]) -> dict[str, Any]:
    """The typed parts of a run (live or recorded): rows, raises, fresh processes, cuBLAS."""
    cublas = run.get("cublas_probe")  # recorded runs only
    return {
        "configs": run["configs"],
        "n_runs": run["n_runs"],
        "rows": [Row.from_dict(r) for r in run["rows"]],
        "raises": [Probe.from_dict(p) for p in run["raises"]],
        "fresh_processes": FreshProcesses.from_dict(run["fresh_processes"]),
        "cublas_probe": cublas and [Probe.from_dict(p, "cuBLAS matmul") for p in cublas],
    }
