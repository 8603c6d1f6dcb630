"""Every lesson's claims, live on a GPU machine, and the determinism check through the CLI.

    python3 benchmarks/gpu_claims_run.py OUTDIR

Writes OUTDIR/claims.json (the claims worker's result: every lesson at its quick and edge
parameters plus CUDA runs, on whatever this machine has) and OUTDIR/determinism_check.json (a
record of ``fpexplore check-determinism fpexplore.determinism_check:example --device cuda
--backward``), the files kept in data/gpu/claims and data/gpu/determinism_check.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import time
from pathlib import Path

CUDA_EXTRA = [
    ("gpu_determinism", {"device": "cuda", "runs": 3, "processes": 1, "quick": True}),
    ("tf32", {"device": "cuda", "max_size": 512}),
    ("cpu_vs_accelerator", {"device": "cuda"}),
    ("rng_seeds", {"n": 4096, "k": 8, "seed": 5}),
]


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    import torch

    from fpexplore.dispatch.fresh import run_claims
    from fpexplore.dispatch.matrix import plan

    card = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no CUDA device"
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    t0 = time.monotonic()
    result = run_claims(plan() + CUDA_EXTRA, {})
    result["provenance"] = {
        "card": card,
        "torch": torch.__version__,
        "date": when,
        "seconds": round(time.monotonic() - t0, 1),
        "command": "python3 benchmarks/gpu_claims_run.py OUTDIR",
    }
    (out / "claims.json").write_text(json.dumps(result, indent=1) + "\n")
    for run in result["runs"]:
        for key, c in run["claims"].items():
            if c["state"] == "fails":
                print("FAILS", run["lesson"], run["params"], key, c["text"][:200])
        if run["error"]:
            print("ERROR", run["lesson"], run["params"], run["error"][:300])
    states: dict[str, int] = {}
    for run in result["runs"]:
        for c in run["claims"].values():
            states[c["state"]] = states.get(c["state"], 0) + 1
    print(card, states, result["paths"])

    command = [
        "check-determinism",
        "fpexplore.determinism_check:example",
        "--device",
        "cuda",
        "--backward",
        "--json",
    ]
    cli = subprocess.run(
        [sys.executable, "-c", "from fpexplore.cli import main; main()", *command],
        capture_output=True,
        text=True,
        check=False,
    )
    print(cli.stderr[-2000:])
    report = json.loads(cli.stdout)
    record = {
        "format": "fpexplore-determinism-check",
        "version": 1,
        "provenance": {
            "gpu_name": card,
            "gpu_count_on_machine": torch.cuda.device_count(),
            "torch": torch.__version__,
            "date": when,
            "device": "cuda:0",
        },
        "settings": {"command": "fpexplore " + " ".join(command)},
        "report": report,
    }
    (out / "determinism_check.json").write_text(json.dumps(record, indent=1) + "\n")
    for r in report["results"]:
        print(r["name"], r["distinct"], r["raised"])


if __name__ == "__main__":
    main()
