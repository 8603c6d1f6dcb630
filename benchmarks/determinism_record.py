"""The recorded determinism check that ``fpexplore.determinism_check.load_record`` reads
(``data/gpu/determinism_check/``): the example model, forward and backward, on a CUDA card.

    python3 benchmarks/determinism_record.py OUT.json

(Every lesson's claims on a machine are ``fpexplore verify --out claims.json``.)
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

from fpexplore import backends, determinism_check

TARGET = "fpexplore.determinism_check:example"


def main() -> None:
    out = Path(sys.argv[1])
    torch = backends.load("torch")
    report = determinism_check.check(TARGET, device="cuda", backward=True, seed=0)
    record = {
        "format": "fpexplore-determinism-check",
        "version": 1,
        "provenance": {
            "gpu_name": torch.cuda.get_device_name(0),
            "gpu_count_on_machine": torch.cuda.device_count(),
            "torch": torch.__version__,
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "device": "cuda:0",
        },
        "settings": {"command": f"fpexplore check-determinism {TARGET} --device cuda --backward"},
        "report": report.to_dict(),
    }
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(report.table())


if __name__ == "__main__":
    main()
