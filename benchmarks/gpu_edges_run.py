"""relu's edge values on every device, and seeding across GPUs, streams and host threads.

    python3 benchmarks/gpu_edges_run.py OUTDIR [RUNS [edges,seeding,linear_flag]]

Writes OUTDIR/edges.json (`fpexplore.lessons.cpu_vs_accelerator.edges.record` on the CPU and
every CUDA device) and OUTDIR/seeding.json (`fpexplore.lessons.rng_seeds.multi_gpu.record`,
each probe in RUNS fresh processes, default 5) and OUTDIR/linear_flag.json
(`fpexplore.lessons.gpu_determinism.linear_flag.record`): the files kept in data/gpu/edges,
data/gpu/seeding and data/gpu/linear_flag.
"""

from __future__ import annotations

import datetime
import json
import sys
import time
from pathlib import Path


def main() -> None:
    out = Path(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    out.mkdir(parents=True, exist_ok=True)
    import torch

    from fpexplore.lessons.cpu_vs_accelerator import edges
    from fpexplore.lessons.gpu_determinism import linear_flag
    from fpexplore.lessons.rng_seeds import multi_gpu

    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    devices = ["cpu"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    for name, make, check in (
        ("edges", lambda: edges.record(devices), edges.validate),
        ("seeding", lambda: multi_gpu.record(runs), multi_gpu.validate),
        ("linear_flag", lambda: linear_flag.record(3), linear_flag.validate),
    ):
        if only is not None and name not in only:
            continue
        t0 = time.monotonic()
        data = make()
        data["provenance"] = {
            "date": when,
            "seconds": round(time.monotonic() - t0, 1),
            "command": f"python3 benchmarks/gpu_edges_run.py OUTDIR {runs}",
        }
        check(data, name)
        (out / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")
        print(name, "written in", data["provenance"]["seconds"], "s")
    if only is not None and "edges" not in only:
        return
    e = json.loads((out / "edges.json").read_text())
    print("relu(-0.0):", edges.relu_neg_zero(e["devices"]))
    s = edges.summary(e["devices"])
    print("edge cases", s["cases"], "split", s["split"], "on", s["edges"])
    print(json.dumps(multi_gpu.verdicts(json.loads((out / "seeding.json").read_text()))))


if __name__ == "__main__":
    main()
