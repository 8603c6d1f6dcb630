"""Recorded GPU runs: load them, validate them (`fpexplore.recorder` writes them).

A record is ``data/gpu/<gpu>-<torch>.json``: provenance (GPU, SM count, memory, driver, CUDA,
cuDNN, torch, date; no host name), the settings and seeds, and the raw results each GPU lesson
needs to redraw its figures. Lessons fall back to the newest record when no CUDA device is
present. This module imports only numpy and fpexplore modules that need nothing else, so the
recorder runs on a bare CUDA machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import FpexploreError, RecordError
from .paths import data_dir, gpu_record_dirs

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
            "rows": [{"op": str, "size": int, "k": int, "mode": str, "raised": _OPT_STR}],
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
            "cpu_randn_bits": dict,
        },
        "sum": {"cases": [{"name": str, "input": dict, "cuda_bits": int, "cpu_bits": int}]},
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


#: What the lessons read beyond the layout: bounds that keep a hand-edited record from
#: turning into a huge allocation or an overflow inside a lesson.
MAX_RNG_N = 1 << 16
MAX_SUM_N = 10**8
MAX_SM_COUNT = 1 << 16
_RECIPE_GENERATORS = ("np.full", "np.random.default_rng")
_RECIPE_DISTRIBUTIONS = ("random", "standard_normal")
_RECIPE_DTYPES = ("float32", "float64")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _bits_ok(bits: Any, n: int | None = None) -> bool:
    return (
        isinstance(bits, list)
        and (n is None or len(bits) == n)
        and all(_is_int(b) and 0 <= b < 1 << 32 for b in bits)
    )


def _check_read(data: dict[str, Any]) -> None:
    """The values lessons read, beyond their types (raises `RecordError`)."""
    sm = data["provenance"]["sm_count"]
    if sm is not None and not 1 <= sm <= MAX_SM_COUNT:
        raise RecordError(f"provenance.sm_count must be 1 to {MAX_SM_COUNT}, got {sm!r}")
    exp = data["experiments"]
    rng = exp["rng"]
    if not 1 <= rng["n"] <= MAX_RNG_N:
        raise RecordError(f"experiments.rng.n must be 1 to {MAX_RNG_N}, got {rng['n']!r}")
    for key in ("cuda_rand_bits", "cuda_randn_bits", "cpu_rand_bits", "cpu_randn_bits"):
        for seed in rng["seeds"]:
            if not _bits_ok(rng[key].get(str(seed)), rng["n"]):
                raise RecordError(
                    f"experiments.rng.{key}[{seed}] must hold {rng['n']} float32 bit "
                    "patterns (ints 0 to 2**32 - 1)"
                )
    for i, case in enumerate(exp["sum"]["cases"]):
        where = f"experiments.sum.cases[{i}]"
        if not (_bits_ok([case["cuda_bits"]]) and _bits_ok([case["cpu_bits"]])):
            raise RecordError(f"{where}: cuda_bits and cpu_bits must be ints 0 to 2**32 - 1")
        recipe = case["input"]
        n = recipe.get("n")
        ok = (
            recipe.get("generator") in _RECIPE_GENERATORS
            and recipe.get("dtype") in _RECIPE_DTYPES
            and _is_int(n)
            and 1 <= n <= MAX_SUM_N
        )
        if ok and recipe["generator"] == "np.full":
            v = recipe.get("value")  # a number the dtype holds finite (not NaN, inf or 10**400)
            ok = _is_num(v) and abs(v) <= float(np.finfo(recipe["dtype"]).max)
        elif ok:
            seed = recipe.get("seed")
            ok = _is_int(seed) and seed >= 0 and recipe.get("distribution") in _RECIPE_DISTRIBUTIONS
        if not ok:
            raise RecordError(
                f"{where}.input must be a recipe: generator one of {_RECIPE_GENERATORS}, dtype "
                f"one of {_RECIPE_DTYPES}, n an int 1 to {MAX_SUM_N}, and a value finite in "
                f"that dtype (np.full) or an int seed >= 0 and a distribution one of "
                f"{_RECIPE_DISTRIBUTIONS}"
            )
    for name in ("determinism", "tf32"):  # the unit of their ULP fields, where it is said
        if not isinstance(exp[name].get("ulp_unit", ""), str):
            raise RecordError(f"experiments.{name}.ulp_unit must be a string (the ULPs' unit)")
    for i, row in enumerate(exp["tf32"]["rows"]):
        if row["raised"] is None and not (
            all(_is_num(row.get(k)) for k in ("rel_error", "median_abs_ulp32", "ms"))
            and isinstance(row.get("out_dtype"), str)
        ):
            raise RecordError(
                f"experiments.tf32.rows[{i}] ran, so it must have numeric rel_error, "
                "median_abs_ulp32 and ms and a string out_dtype"
            )


def validate(data: Any, source: str = "record") -> dict[str, Any]:
    """Check a record's layout and the values lessons read; raise `RecordError` naming the
    first bad field."""
    try:
        _check(data, _SCHEMA, "")
        if data["format"] != FORMAT or data["version"] != VERSION:
            raise RecordError(
                f"it is format {data['format']!r} version {data['version']}; "
                f"this fpexplore reads {FORMAT!r} version {VERSION}"
            )
        _check_read(data)
    except RecordError as exc:
        raise RecordError(
            f"{source} does not match the GPU record schema: {exc}. Re-record it with: {RECORD_FIX}"
        ) from None
    return data


# ----------------------------------------------------------------------------- loading
@dataclass(frozen=True)
class Record:
    """A loaded, validated record."""

    path: Path
    data: dict[str, Any]

    @property
    def provenance(self) -> dict[str, Any]:
        return self.data["provenance"]

    @contextlib.contextmanager
    def reading(self, experiment: str) -> Iterator[None]:
        """Turn a field a lesson could not read into a `RecordError` naming this record."""
        try:
            yield
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, ArithmeticError) as e:
            if isinstance(e, FpexploreError):
                raise
            raise RecordError(
                f"{self.path.name}: experiments.{experiment} cannot be read ({type(e).__name__}: "
                f"{e}). Re-record it with: {RECORD_FIX}"
            ) from None

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


def gpu_dirs() -> list[Path]:
    """Where records are read from, first one first (`fpexplore.paths.gpu_record_dirs`: the
    checkout's or ``$FPEXPLORE_DATA``'s, the user's recordings, the package's own records),
    after `gpu_dir` if that names another folder."""
    dirs = gpu_record_dirs()
    return dirs if gpu_dir() in dirs else [gpu_dir(), *dirs]


class RecordWarning(UserWarning):
    """A record in data/gpu was skipped: it cannot be read or does not validate."""


_CACHE: dict[tuple[str, int, int], dict[str, Any] | RecordError] = {}


def _read(path: Path) -> dict[str, Any]:
    """Read and validate ``path`` (cached by path, size and modification time)."""
    if not path.is_file():
        raise RecordError(f"no GPU record at {path}. Record one with: {RECORD_FIX}")
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _CACHE:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            _CACHE[key] = validate(data, str(path))
        except RecordError as exc:
            _CACHE[key] = exc
        except (OSError, UnicodeDecodeError, ValueError, RecursionError, MemoryError) as exc:
            _CACHE[key] = RecordError(
                f"{path} is not a readable JSON record ({type(exc).__name__}: {str(exc)[:200]}). "
                f"Re-record it with: {RECORD_FIX}"
            )
    got = _CACHE[key]
    if isinstance(got, RecordError):
        raise RecordError(str(got))
    return got


def available(directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """The valid records of ``directory`` (default: every folder of `gpu_dirs`, where a file
    name found in an earlier folder hides a later one), newest recording first. Quick
    smoke-test records are left out; one that does not validate is skipped with a
    `RecordWarning` saying why."""
    folders = [Path(directory)] if directory is not None else gpu_dirs()
    paths: dict[str, Path] = {}
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            paths.setdefault(path.name, path)
    found = []
    for path in paths.values():
        try:
            data = _read(path)
        except RecordError as exc:
            warnings.warn(f"skipped GPU record {path.name}: {exc}", RecordWarning, stacklevel=2)
            continue
        if data["settings"].get("quick"):
            continue
        found.append((data["provenance"]["date"], path))
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
