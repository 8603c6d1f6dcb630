"""NCCL all-reduce record: made on a machine with several GPUs, read anywhere.

``fpexplore record nccl --out data/gpu/nccl`` runs each NCCL algorithm setting (`ALGOS`) at
each world size, one process per GPU, each rank all-reducing a seeded float32 vector at several
message sizes, and writes how each result relates to the rank-ordered sum, to other orders and
to the correctly rounded exact sum (with the bits at small sizes, so `recheck_bits` can redo
the comparison anywhere). ``--backend gloo --device cpu`` is a smoke test on CPUs. NVLink
multicast stays off in every process (`launch.SAFE_ENV`).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ... import backends
from ...backends.torch_device import nvidia_smi
from ...errors import RecordError
from .._gpu.common import say
from .._gpu.small_records import header, newest_dated
from . import sums
from .launch import SAFE_ENV, launch
from .worker import nccl_version

FORMAT = "fpexplore-allreduce-record"
VERSION = 1
FOLDER = "nccl"  # under data/gpu: kept apart from the per-GPU lesson records
RECORD_FIX = "fpexplore record nccl --out data/gpu/nccl   (on a machine with 2 or more CUDA GPUs)"
ALGOS = ("default", "Ring", "Tree")
_REQUIRED = {"provenance": dict, "settings": dict, "runs": list}
_RUN = {"algo": str, "world": int, "ok": bool}


@dataclass(frozen=True)
class NcclRow:
    """One (algorithm, world size, message size) of a record; a failed run is one row with its
    error and no counts."""

    algo: str  # the NCCL_ALGO setting ("default": unset)
    world: int
    ok: bool
    error: str = ""
    size: int = 0  # float32 elements per rank
    n: int = 0  # elements compared
    n_differ_rank_ordered: int = 0  # elements != ((a + b) + c) + ...
    n_differ_exact: int = 0  # elements != the correctly rounded exact sum
    n_explained_by_some_order: int = 0
    n_equal_order: dict[str, int] = field(default_factory=dict)  # by summation order

    def equal_to(self, order: str) -> int:
        """Elements equal to the float32 sum in ``order`` (a name from `sums.orders`)."""
        if order not in self.n_equal_order:
            known = ", ".join(self.n_equal_order) or "none"
            raise KeyError(f"no summation order {order!r} in this row; it has: {known}")
        return self.n_equal_order[order]


_SIZE = tuple(NcclRow.__dataclass_fields__)[4:]  # what each message size of a run must hold


def _provenance(backend: str) -> dict[str, Any]:
    import mpmath

    torch = backends.load("torch")

    p: dict[str, Any] = {
        "torch": torch.__version__,
        "numpy": np.__version__,
        "mpmath": mpmath.__version__,
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "backend": backend,
        "cuda": torch.version.cuda,
        "gpu_count": torch.cuda.device_count() if torch.cuda.is_available() else 0,
        "gpu_name": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "nccl": nccl_version(torch) if backend == "nccl" else None,
        "env": {k: os.environ.get(k) for k in (*SAFE_ENV, "NCCL_PROTO", "CUDA_VISIBLE_DEVICES")},
    }
    p["driver"] = nvidia_smi("driver_version") or None
    try:
        topo = subprocess.run(
            ["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=20, check=False
        )
        p["topology"] = topo.stdout.strip()[:2000] or None
    except (OSError, subprocess.SubprocessError):
        p["topology"] = None
    p["env"].update(SAFE_ENV)
    return p


def record(
    out_dir: str | os.PathLike[str],
    backend: str = "nccl",
    device: str = "cuda",
    worlds: tuple[int, ...] = (2, 3, 4),
    sizes: tuple[int, ...] = (1024, 65536, 1 << 20, 1 << 24),
    algos: tuple[str, ...] = ALGOS,
    seed: int = 0,
    keep_bits_upto: int = 1024,
    timeout_s: float = 150.0,
) -> Path:
    """Run every (algorithm, world size) and write the record; returns its path."""

    prov = _provenance(backend)
    runs = []
    t_all = time.perf_counter()
    for algo in algos:
        env = {} if algo == "default" else {"NCCL_ALGO": algo}
        stuck = False
        for w in worlds:
            if stuck:  # a setting that hung once is not given the time to hang again
                skipped = "skipped: a smaller world size timed out with this setting"
                runs.append({"algo": algo, "world": w, "ok": False, "error": skipped})
                continue
            job = {
                "mode": "sizes",
                "backend": backend,
                "device": device,
                "sizes": list(sizes),
                "seed": seed,
                "keep_bits_upto": keep_bits_upto,
                "timeout_s": 60,
            }
            t0 = time.perf_counter()
            res = launch(job, w, timeout_s=timeout_s, env=env)
            row: dict[str, Any] = {
                "algo": algo,
                "world": w,
                "ok": bool(res.get("ok")),
                "seconds": round(time.perf_counter() - t0, 2),
            }
            if res.get("ok"):
                row["sizes"] = res["out"]
            else:
                row["error"] = str(res.get("error"))[:1500]
                row["logs"] = [t[-1500:] for t in res.get("logs", [])][:w]
                row["traceback"] = str(res.get("traceback", ""))[-1500:]
            runs.append(row)
            stuck = "timed out" in row.get("error", "")
            say(
                f"{algo} world {w}: {'ok' if row['ok'] else 'FAILED ' + row['error'][:200]}"
                f" ({row['seconds']} s)"
            )
    data = {
        "format": FORMAT,
        "version": VERSION,
        "provenance": prov,
        "settings": {
            "worlds": list(worlds),
            "sizes": list(sizes),
            "algos": list(algos),
            "seed": seed,
            "data": "rank r holds numpy default_rng([seed, r]).standard_normal(size, float32)",
            "keep_bits_upto": keep_bits_upto,
            "command": f"fpexplore record nccl --backend {backend} --device {device}",
        },
        "runs": runs,
        "seconds": round(time.perf_counter() - t_all, 1),
    }
    validate(data, "the new record")
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    card = (prov["gpu_name"] or "cpu").lower().replace(" ", "-")
    name = f"{card}-x{max(worlds)}-{backend}-torch-{prov['torch'].split('+')[0]}-allreduce.json"
    path = folder / name
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    say(f"wrote {path}")
    return path


def validate(data: Any, source: str = "record") -> dict[str, Any]:
    """Check the layout; raise `RecordError` naming the first bad field and the fix."""

    bad = header(data, FORMAT, VERSION, source, f"re-record it with: {RECORD_FIX}")
    for key, typ in _REQUIRED.items():
        if not isinstance(data.get(key), typ):
            raise bad(f"'{key}' must be {typ.__name__}")
    for i, run in enumerate(data["runs"]):
        for key, typ in _RUN.items():
            if not isinstance(run.get(key), typ):
                raise bad(f"runs[{i}].{key} must be {typ.__name__}")
        if run["ok"] and not isinstance(run.get("sizes"), list):
            raise bad(f"runs[{i}].sizes must be a list")
        for j, size in enumerate(run["sizes"] if run["ok"] else []):
            if gone := [k for k in _SIZE if not isinstance(size, dict) or k not in size]:
                raise bad(f"runs[{i}].sizes[{j}] has no {gone[0]!r}")
    return data


def load() -> tuple[Path, dict[str, Any]]:
    """The newest record in ``data/gpu/nccl``, validated."""
    from ...paths import data_dir

    where = data_dir() / "gpu" / FOLDER
    found = newest_dated(sorted(where.glob("*.json")))
    if found is None:
        raise RecordError(
            f"no readable all-reduce record in {where}. Record one with: {RECORD_FIX}"
        )
    path, data = found
    return path, validate(data, str(path))


def rows(data: dict[str, Any]) -> list[NcclRow]:
    """One row per (algorithm, world size, message size) of a validated record; a failed run's
    row carries its error."""
    out = []
    for run in data["runs"]:
        head = (run["algo"], run["world"], run["ok"])
        if not run["ok"]:
            out.append(NcclRow(*head, error=run.get("error", "")))
        for s in run["sizes"] if run["ok"] else []:
            out.append(NcclRow(*head, **{k: s[k] for k in _SIZE}))
    return out


def recheck_bits(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each stored result's bits (small sizes) compared again, on regenerated data, with
    `fpexplore.truth.sum` and the rank-ordered sum: the record's own counts must come out."""
    from ... import truth

    seed = data["settings"]["seed"]
    out = []
    for run in data["runs"]:
        for s in run.get("sizes", []) if run["ok"] else []:
            if "bits" not in s:
                continue
            got = np.asarray(s["bits"], dtype=np.uint32)
            d = np.stack([sums.rank_data(seed, r, s["size"]) for r in range(run["world"])])
            exact = np.asarray(truth.sum(d, axis=0).round("float32"), dtype=np.float32)
            ordered = sums.orders(d)["rank order"]
            out.append(
                {
                    "algo": run["algo"],
                    "world": run["world"],
                    "size": s["size"],
                    "n_differ_exact": int((got != exact.view(np.uint32)).sum()),
                    "n_differ_rank_ordered": int((got != ordered.view(np.uint32)).sum()),
                    "recorded_n_differ_exact": s["n_differ_exact"],
                    "recorded_n_differ_rank_ordered": s["n_differ_rank_ordered"],
                }
            )
    return out


def command(a: argparse.Namespace) -> int:
    """``fpexplore record nccl`` (options declared in `fpexplore.commands`)."""
    os.environ.update(SAFE_ENV)
    record(
        a.out or str(Path("data") / "gpu" / FOLDER),
        a.backend,
        a.device,
        tuple(int(x) for x in a.worlds.split(",")),
        tuple(int(x) for x in a.sizes.split(",")),
        tuple(a.algos.split(",")),
        timeout_s=a.timeout,
    )
    return 0
