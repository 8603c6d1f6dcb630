"""Record every GPU experiment on a device (``fpexplore record-gpu``).

The record goes to `fpexplore.paths.recordings_dir`: ``data/gpu`` in a checkout, the user's
data folder when the package is installed.

Each lesson declares its experiment (`Lesson.gpu_experiment`, a `GpuExperiment` whose code lives
with the lesson); the recorder runs those of the registered lessons. `fpexplore.records` loads
and validates what this writes.
"""

from __future__ import annotations

import json
import os
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
    """Run every lesson's GPU experiment (`Lesson.gpu_experiment`, in the lessons' order) on
    ``device`` and write the record; returns its path."""
    from .backends import torch_device as env
    from .lessons import all_lessons
    from .lessons._gpu import ulp_unit
    from .lessons._gpu.common import say
    from .lessons._gpu.recording import GpuSession

    defaults = env.tf32_defaults()  # before anything sets a flag
    dev = env.open_device(device)
    prov = env.provenance(dev)
    cublas_given = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    session = GpuSession(
        device=dev,
        name=device,
        quick=quick,
        n_runs=n_runs or (3 if quick else 10),
        processes=processes or (2 if quick else 4),
        tf32_defaults=defaults,
        out_dir=None if out_dir is None else Path(out_dir),
        say=say,
    )
    found = [ls.gpu_experiment for ls in all_lessons().values() if ls.gpu_experiment]
    timings: dict[str, float] = {}
    experiments: dict[str, Any] = {}
    say(f"recording on {prov['gpu_name'] or prov['device']} (torch {prov['torch']})")
    for e in found:
        if e.cuda_only and dev.type != "cuda":
            continue
        t0 = time.perf_counter()
        result = e.run(session)
        timings[e.key] = round(time.perf_counter() - t0, 2)
        say(f"{e.key}: done in {timings[e.key]} s")
        if result is not None:
            experiments[e.key] = result
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
            "n_runs": session.n_runs,
            "processes": session.processes,
            "seeds": {e.key: e.seed for e in found if e.seed is not None},
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
