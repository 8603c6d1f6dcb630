"""Recorded GPU runs: load them, validate them (`fpexplore.recorder` writes them).

A record is ``data/gpu/<gpu>-<torch>.json``: provenance (GPU, SM count, memory, driver, CUDA,
cuDNN, torch, date; no host name), the settings and seeds, and the raw results each GPU lesson
needs to redraw its figures. Lessons fall back to the newest record when no CUDA device is
present. This module imports only numpy and fpexplore modules that need nothing else, so the
recorder runs on a bare CUDA machine.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import RecordError
from .paths import data_dir

FORMAT = "fpexplore-gpu-record"
VERSION = 1
RECORD_FIX = "fpexplore record-gpu   (on a machine with a CUDA GPU)"


# ----------------------------------------------------------------------------- float32 bits
def bits32(x: Any) -> list[int]:
    """The float32 bit patterns of ``x`` as Python ints (uint32), as records store them."""
    return np.asarray(x, dtype=np.float32).ravel().view(np.uint32).astype(np.int64).tolist()


def from_bits32(bits: Any) -> np.ndarray:
    """The float32 values of recorded bit patterns (a list, or one int for a 0-d array)."""
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


# ----------------------------------------------------------------------------- schema
_NUM = (int, float)
_OPT_STR = (str, type(None))
_OPT_INT = (int, type(None))

_ROW_DET = {"op": str, "case": str, "output": str, "config": str, "raised": _OPT_STR}
_SCHEMA: dict[str, Any] = {
    "format": str,
    "version": int,
    "provenance": {
        "device": str,
        "device_type": str,
        "torch": str,
        "numpy": str,
        "mpmath": str,
        "python": str,
        "date": str,
        "cuda": _OPT_STR,
        "cudnn": _OPT_INT,
        "gpu_name": _OPT_STR,
        "sm_count": _OPT_INT,
        "compute_capability": _OPT_STR,
        "total_memory_bytes": _OPT_INT,
        "driver": _OPT_STR,
        "env": dict,
    },
    "settings": {"quick": bool, "seeds": dict, "command": str},
    "experiments": {
        "determinism": {
            "configs": dict,
            "n_runs": int,
            "rows": [_ROW_DET],
            "raises": [{"op": str, "raised": bool, "message": str}],
            "fresh_processes": {
                "processes": int,
                "completed": int,
                "rows": [{"case": str, "output": str, "config": str, "distinct": int}],
            },
        },
        "tf32": {
            "defaults": dict,
            "modes": [str],
            "rows": [{"op": str, "size": int, "k": int, "mode": str}],
        },
        "cpu_vs_accelerator": {
            "settings": dict,
            "truth": dict,
            "sides": [
                {"device": str, "mode": str, "sum_uniform": _NUM, "chain": dict, "conv": dict}
            ],
        },
        "rng": {
            "seeds": [int],
            "n": int,
            "cuda_rand_bits": dict,
            "cuda_randn_bits": dict,
            "cpu_rand_bits": dict,
        },
        "sum": {"cases": [{"name": str, "input": dict, "cuda_bits": int}]},
    },
}


def _check(value: Any, schema: Any, where: str) -> None:
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise RecordError(
                f"{where or 'the record'} must be an object, got {type(value).__name__}"
            )
        for key, sub in schema.items():
            if key not in value:
                raise RecordError(f"{where + '.' if where else ''}{key} is missing")
            _check(value[key], sub, f"{where + '.' if where else ''}{key}")
    elif isinstance(schema, list):
        if not isinstance(value, list):
            raise RecordError(f"{where} must be a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            _check(item, schema[0], f"{where}[{i}]")
    else:
        types = schema if isinstance(schema, tuple) else (schema,)
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        if not ok:
            names = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise RecordError(f"{where} must be {names}, got {value!r:.60}")


def validate(data: Any, source: str = "record") -> dict[str, Any]:
    """Check a record's layout; raise `RecordError` naming the first bad field."""
    try:
        _check(data, _SCHEMA, "")
    except RecordError as exc:
        raise RecordError(
            f"{source} does not match the GPU record schema: {exc}. Re-record it with: {RECORD_FIX}"
        ) from None
    if data["format"] != FORMAT or data["version"] != VERSION:
        raise RecordError(
            f"{source} is format {data['format']!r} version {data['version']}; "
            f"this fpexplore reads {FORMAT!r} version {VERSION}."
        )
    rng = data["experiments"]["rng"]
    for key in ("cuda_rand_bits", "cuda_randn_bits", "cpu_rand_bits"):
        for seed in rng["seeds"]:
            bits = rng[key].get(str(seed))
            if not isinstance(bits, list) or len(bits) != rng["n"]:
                raise RecordError(
                    f"{source}: experiments.rng.{key}[{seed!r}] must hold {rng['n']} ints"
                )
    return data


# ----------------------------------------------------------------------------- loading
@dataclass(frozen=True)
class Record:
    """A loaded, validated record."""

    path: Path
    data: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        """Dict-style access to the record's top-level fields."""
        return self.data.get(key, default)

    @property
    def provenance(self) -> dict[str, Any]:
        return self.data["provenance"]

    @property
    def experiments(self) -> dict[str, Any]:
        return self.data["experiments"]

    @property
    def card(self) -> str:
        p = self.provenance
        return p["gpu_name"] or f"{p['device']} ({p.get('cpu') or 'CPU'})"

    @property
    def date(self) -> str:
        return self.provenance["date"][:10]

    def banner(self) -> str:
        """One line saying this is a recorded run, on what, when, with which versions."""
        p = self.provenance
        cuda = f", CUDA {p['cuda']}" if p.get("cuda") else ""
        cudnn = f", cuDNN {p['cudnn']}" if p.get("cudnn") else ""
        driver = f", driver {p['driver']}" if p.get("driver") else ""
        return (
            f"RECORDED run (no CUDA device here): {self.card}, {self.date}, torch "
            f"{p['torch']}{cuda}{cudnn}{driver} — from {self.path.name}"
        )


def gpu_dir() -> Path:
    return data_dir() / "gpu"


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise RecordError(f"no GPU record at {path}. Record one with: {RECORD_FIX}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(
            f"{path} is not a readable JSON record ({exc}). Re-record it with: {RECORD_FIX}"
        ) from None
    return validate(data, str(path))


def available(directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """The record files in ``data/gpu`` (or ``directory``), newest recording first.

    Quick smoke-test records are left out.
    """
    folder = Path(directory) if directory is not None else gpu_dir()
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
            date = head["provenance"]["date"]
            if head["settings"].get("quick"):
                continue
        except (OSError, ValueError, KeyError, TypeError):
            continue
        found.append((date, path))
    return [p for _, p in sorted(found, reverse=True)]


def find(which: str = "newest", directory: str | os.PathLike[str] | None = None) -> Path:
    """The record to use: ``"newest"``, or the newest whose file name contains ``which``
    (a card such as ``"h100"``, or a whole file name)."""
    paths = available(directory)
    if not paths:
        folder = Path(directory) if directory is not None else gpu_dir()
        raise RecordError(f"no GPU record in {folder}. Record one with: {RECORD_FIX}")
    if which == "newest":
        return paths[0]
    key = slug(Path(which).stem if which.endswith(".json") else which)
    hits = [p for p in paths if key and key in p.stem]
    if not hits:
        from .errors import InvalidParameter

        names = ", ".join(p.name for p in paths)
        raise InvalidParameter(
            "record", which, f"'newest' or part of a recorded file name ({names})"
        )
    return hits[0]


def load(path: str | os.PathLike[str] | None = None) -> Record:
    """Load and validate a record; with no path, the newest in ``data/gpu``."""
    path = Path(path) if path is not None else find()
    return Record(path, _read(path))


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")
