"""The GPU myths record: what two myths need from a CUDA device, made by
``benchmarks/record_myth_gpu.py`` and kept in ``data/gpu/myths``.

- myth 21: ``nn.TransformerEncoderLayer`` in eval() under grad, no_grad and inference_mode
  (`fpexplore.lessons.train_vs_eval.modes.transformer_modes`, several seeds);
- myth 22: sum, dot, mv and mm at storage offsets against an aligned copy
  (`fpexplore.lessons.summation_order.layout.cuda_offsets`).

Until a record exists both CUDA sides are "not checked", naming `COMMAND`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .small_records import header, newest

FORMAT = "fpexplore-gpu-myths"
VERSION = 1
FOLDER = "myths"
COMMAND = "PYTHONPATH=. python3 benchmarks/record_myth_gpu.py data/gpu/myths"
FIX = f"record it with {COMMAND} on a machine with a CUDA GPU"
NO_RECORD = f"no GPU myths record (data/gpu/{FOLDER}). Fix: {FIX}"
ROW_KEYS = ("seed", "values", "grad_vs_no_grad", "no_grad_vs_inference", "max_abs_diff")


def validate(data: Any, source: str) -> dict[str, Any]:
    """``data`` checked against the record's shape; `RecordError` naming what is wrong."""
    bad = header(data, FORMAT, VERSION, source, fix=FIX)
    for key in ("torch", "card"):
        if not isinstance(data.get(key), str):
            raise bad(f"{key!r} is not a string")
    rows = data.get("autograd_modes")
    if not (isinstance(rows, list) and rows):
        raise bad("'autograd_modes' is not a non-empty list of seeds")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping) or set(row) != set(ROW_KEYS):
            raise bad(f"autograd_modes[{i}] does not hold exactly {ROW_KEYS}")
        if not all(isinstance(row[k], int) and row[k] >= 0 for k in ROW_KEYS[:4]):
            raise bad(f"autograd_modes[{i}]: seed and counts must be non-negative integers")
        if not isinstance(row["max_abs_diff"], (int, float)):
            raise bad(f"autograd_modes[{i}]: max_abs_diff must be a number")
    off = data.get("offsets")
    if not isinstance(off, Mapping) or not isinstance(off.get("tried"), int) or off["tried"] < 1:
        raise bad("'offsets' needs 'tried', the cases per op (a positive integer)")
    differ = off.get("differ")
    if not (isinstance(differ, Mapping) and differ):
        raise bad("'offsets.differ' is not a map of op to cases")
    if not all(isinstance(v, int) and 0 <= v <= off["tried"] for v in differ.values()):
        raise bad("'offsets.differ' counts must lie between 0 and 'tried'")
    return dict(data)


def recorded(directory: str | Path | None = None) -> dict[str, Any] | None:
    """The newest valid record in ``data/gpu/myths``, or None; bad files are skipped."""
    return newest(FOLDER, validate, directory)


def where(data: Mapping[str, Any]) -> str:
    """The record in words: card, torch, file."""
    return f"{data['card']}, torch {data['torch']}, recorded ({data.get('path', '')})"
