"""The GPU row of the diversity table: the table's model trained on CUDA, its batch sums by
``index_add_`` (atomic adds, in whatever order the threads arrive), with
``torch.use_deterministic_algorithms`` on (the same sums in a fixed order) and off.

``fpexplore record training-drift`` (torch only: no TensorFlow, no Java) writes
``data/gpu/training_drift/<gpu>-torch-<version>.json``; the lesson reads the newest record and
says how to make one where there is none.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import RecordError
from .._gpu.small_records import header, newest
from . import models, table

FORMAT = "fpexplore-training-drift-record"
VERSION = 1
FOLDER = "training_drift"
FIX = (
    "record it on a CUDA machine: fpexplore record training-drift (writes data/gpu/training_drift/)"
)
RUNS = 10  # runs per base seed with atomic adds; deterministic runs: `DETERMINISTIC`
DETERMINISTIC = 3


def atomic_ops(torch: Any, device: Any) -> models.Ops:
    """torch float32 on ``device`` with every batch sum made by ``index_add_`` into one row."""

    def colsum(a: Any) -> Any:
        out = torch.zeros((1, *a.shape[1:]), dtype=a.dtype, device=a.device)
        index = torch.zeros(a.shape[0], dtype=torch.long, device=a.device)
        return out.index_add_(0, index, a)[0]

    return dataclasses.replace(
        models.torch_ops(torch),
        name=f"torch float32 on {device}, index_add_",
        asarray=lambda a: torch.tensor(np.asarray(a), dtype=torch.float32, device=device),
        colsum=colsum,
    )


def _runs(torch: Any, device: Any, base: int, n: int) -> list[list[float]]:
    data = models.dataset(table.MODEL, base)
    s = table._setting("framework", base, 0)  # everything fixed: only the sums' order moves
    ops = atomic_ops(torch, device)
    return [table._train_one(s, data, ops).tolist() for _ in range(n)]


def record(out_dir: str | Path | None = None, device: str = "cuda") -> Path:
    """Train the table's model on ``device``, deterministic and with atomics; write the record."""
    import os

    from ... import backends
    from ...paths import recordings_dir
    from ...records import slug

    # cuBLAS refuses deterministic mode without a fixed workspace (set before CUDA starts; a
    # CPU run leaves the process's environment as it was)
    if str(device).startswith("cuda"):
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch = backends.load("torch")
    dev = torch.device(device)
    t0 = time.perf_counter()
    torch.use_deterministic_algorithms(True)
    try:
        fixed = _runs(torch, dev, table.BASE_SEEDS[0], DETERMINISTIC)
    finally:
        torch.use_deterministic_algorithms(False)
    atomics = [{"base": b, "final": _runs(torch, dev, b, RUNS)} for b in table.BASE_SEEDS]
    gpu = torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.machine()
    data = {
        "format": FORMAT,
        "version": VERSION,
        "provenance": {
            "gpu_name": gpu,
            "device": str(dev),
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "numpy": np.__version__,
            "python": platform.python_version(),
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seconds": round(time.perf_counter() - t0, 1),
        },
        "settings": {
            "model": table.MODEL,
            "lr": table.LR,
            "steps": table.STEPS,
            "dropout": table.DROPOUT,
            "base_seeds": list(table.BASE_SEEDS),
            "command": f"fpexplore record training-drift --device {device}",
        },
        "deterministic": {"base": table.BASE_SEEDS[0], "final": fixed},
        "atomics": atomics,
    }
    validate(json.loads(json.dumps(data)), "the new record")
    folder = Path(out_dir) if out_dir is not None else recordings_dir() / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{slug(gpu)}-torch-{slug(torch.__version__)}.json"
    path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    return path


def validate(data: Any, source: str) -> dict[str, Any]:
    """``data`` if it is a training-drift record of this version with the table's settings,
    else `RecordError` naming ``source`` and the fix."""
    bad = header(data, FORMAT, VERSION, source, FIX)
    s = data.get("settings")
    want = {"model": table.MODEL, "lr": table.LR, "steps": table.STEPS, "dropout": table.DROPOUT}
    if not isinstance(s, dict) or any(s.get(k) != v for k, v in want.items()):
        raise bad(f"recorded with other settings than the table's ({want})")
    size = sum(a.size for a in models.init(table.MODEL, 0))
    runs = [data.get("deterministic", {}).get("final")]
    runs += [a.get("final") for a in data.get("atomics", []) if isinstance(a, dict)]
    for group in runs:
        if not isinstance(group, list) or len(group) < 2:
            raise bad("a group of runs is missing or has fewer than 2 runs")
        for w in group:
            if not isinstance(w, list) or len(w) != size:
                raise bad(f"a run's weights are not {size} numbers")
    if not data.get("atomics"):
        raise bad("no runs with atomics")
    return data


def read(directory: Any = None) -> dict[str, Any] | None:
    """The newest valid record, or None."""
    return newest(FOLDER, validate, directory)


def summary(record: dict[str, Any]) -> dict[str, Any]:
    """The record's table row (`table.diversity` per base seed of the atomics runs) and whether
    the deterministic runs gave the same bits."""
    rows = []
    for group in record["atomics"]:
        final = [np.asarray(w) for w in group["final"]]
        rows.append(table.diversity(final, models.dataset(table.MODEL, group["base"])))
    fixed = record["deterministic"]["final"]
    distinct = [len({tuple(w) for w in g["final"]}) for g in record["atomics"]]
    prov = record["provenance"]
    return {
        "rows": rows,
        "deterministic_same": all(w == fixed[0] for w in fixed),
        "deterministic_runs": len(fixed),
        "atomics_distinct": distinct,
        "where": f"{prov.get('gpu_name')}, torch {prov.get('torch')}, "
        f"recorded {str(prov.get('date', '?'))[:10]} ({record['path']})",
    }


def command(args: Any) -> int:
    """``fpexplore record training-drift``: record, say where."""
    try:
        path = record(args.out, args.device)
    except RecordError as exc:
        print(exc)
        return 1
    print(f"wrote {path}")
    return 0
