"""A TF32 run's rows, typed where the run or the record is read: a missing field raises
`KeyError` there (a record's becomes a `RecordError` naming it)."""

from __future__ import annotations

from dataclasses import dataclass

from .._gpu.common import ran_row

_NAN = float("nan")


@dataclass(frozen=True)
class Row:
    """One op at one size (matmul side, or conv channels) under one precision mode: its time
    and its sampled outputs against their exact values (NaN where it raised)."""

    op: str
    size: int
    k: int  # the reduction length
    mode: str
    raised: str | None = None  # what it raised, None where it ran
    out_dtype: str = ""
    ms: float = _NAN
    rel_error: float = _NAN  # ||got - exact|| / ||exact||
    max_scaled_error: float = _NAN  # max |got - exact| / sum |terms|
    median_abs_ulp32: float = _NAN  # median |got - exact| in float32 ULPs of the exact value

    from_dict = classmethod(ran_row)
