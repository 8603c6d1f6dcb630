"""Record every GPU experiment on a device (``fpexplore record-gpu``).

The record goes to `fpexplore.paths.recordings_dir`: ``data/gpu`` in a checkout, the user's
data folder when the package is installed.

The experiments live with their lessons (``lessons/<name>/experiment.py``); `fpexplore.records`
loads and validates what this writes.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from .paths import recordings_dir
from .records import FORMAT, VERSION, slug, validate


def record_gpu(
    out_dir: str | os.PathLike[str] | None = None,
    device: str = "cuda",
    quick: bool = False,
    n_runs: int | None = None,
    processes: int | None = None,
) -> Path:
    """Run every GPU experiment on ``device`` and write the record; returns its path."""
    from .backends import torch_device as env
    from .lessons._gpu import ulp_unit
    from .lessons.cpu_vs_accelerator import experiment as accelerator
    from .lessons.gpu_determinism import experiment as determinism
    from .lessons.gpu_determinism import raise_probe
    from .lessons.rng_seeds import experiment as rng_exp
    from .lessons.summation_order import experiment as sum_exp
    from .lessons.tf32 import experiment as tf32

    def say(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    torch = env.torch_module()
    defaults = env.tf32_defaults()  # before anything sets a flag
    dev = env.open_device(device)
    prov = env.provenance(dev)
    cublas_given = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    seeds = {
        "determinism": 0,
        "tf32": 0,
        "cpu_vs_accelerator": 0,
        "rng": list(rng_exp.SEEDS),
        "sum": "per case",
    }
    n_runs = n_runs or (3 if quick else 10)
    processes = processes or (2 if quick else 4)
    timings: dict[str, float] = {}
    experiments: dict[str, Any] = {}

    def timed(name: str, fn: Any) -> Any:
        t0 = time.perf_counter()
        out = fn()
        timings[name] = round(time.perf_counter() - t0, 2)
        say(f"{name}: done in {timings[name]} s")
        return out

    say(f"recording on {prov['gpu_name'] or prov['device']} (torch {prov['torch']})")
    cublas = timed("cublas_probe", lambda: raise_probe.probe_cublas(dev))
    if cublas_given is None:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    det = timed(
        "determinism",
        lambda: determinism.run_determinism(
            dev,
            n_runs=n_runs,
            quick=quick,
            seed=seeds["determinism"],
            processes=processes,
            progress=say,
        ),
    )
    det["cublas_probe"] = cublas
    experiments["determinism"] = det
    experiments["tf32"] = timed(
        "tf32",
        lambda: tf32.run_tf32(
            dev, quick=quick, seed=seeds["tf32"], defaults=defaults, progress=say
        ),
    )
    devices = [torch.device("cpu")] + ([dev] if dev.type != "cpu" else [])
    experiments["cpu_vs_accelerator"] = timed(
        "cpu_vs_accelerator",
        lambda: accelerator.run_accelerator(devices, quick=quick, progress=say),
    )
    experiments["rng"] = timed("rng", lambda: rng_exp.run_rng(dev))
    experiments["sum"] = timed("sum", lambda: sum_exp.run_sums(dev, quick=quick))
    # the training-drift table's GPU row: a record of its own (data/gpu/training_drift)
    from .lessons.training_drift import gpu_record as drift

    drift_dir = None if out_dir is None else Path(out_dir) / drift.FOLDER
    if dev.type == "cuda":
        timed("training_drift", lambda: say(f"wrote {drift.record(drift_dir, device)}"))
    prov["env"]["CUBLAS_WORKSPACE_CONFIG"] = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    prov["env"]["CUBLAS_WORKSPACE_CONFIG_given"] = cublas_given
    prov["tf32_defaults"] = defaults
    from . import __version__

    data = {
        "format": FORMAT,
        "version": VERSION,
        "provenance": {**prov, "fpexplore": __version__},
        "settings": {
            "quick": quick,
            "n_runs": n_runs,
            "processes": processes,
            "seeds": seeds,
            "command": f"fpexplore record-gpu --device {device}" + (" --quick" if quick else ""),
            "determinism_tf32": "off",
            "cublas_workspace_config_after_probe": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
        },
        "experiments": experiments,
        "timings_s": timings,
    }
    for name in ulp_unit.EXPERIMENTS:  # their ULP fields count in the exact value's unit
        experiments[name][ulp_unit.KEY] = ulp_unit.EXACT
    data = json.loads(json.dumps(data, allow_nan=True))  # plain JSON types only
    validate(data, "the new record")
    folder = Path(out_dir) if out_dir is not None else recordings_dir()
    folder.mkdir(parents=True, exist_ok=True)
    name = slug(prov["gpu_name"] or f"{dev.type}-{prov['machine']}") + "-" + slug(prov["torch"])
    path = folder / f"{name}{'-quick' if quick else ''}.json"
    path.write_text(json.dumps(data, indent=1, allow_nan=True) + "\n", encoding="utf-8")
    say(f"wrote {path}")
    return path


def command(args: Any) -> int:
    """``fpexplore record gpu`` (and its old name ``record-gpu``): record, say where."""
    path = record_gpu(out_dir=args.out, device=args.device, quick=args.quick)
    print(f"wrote {path}")
    return 0
