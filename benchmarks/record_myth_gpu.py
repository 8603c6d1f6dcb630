"""The GPU side of myths 21 and 22, recorded on a CUDA device.

    PYTHONPATH=. python3 benchmarks/record_myth_gpu.py [OUTDIR [DEVICE]]

OUTDIR defaults to data/gpu/myths, DEVICE to cuda. Writes OUTDIR/<card>-torch-<version>.json
(`fpexplore.lessons._gpu.myth_record`): nn.TransformerEncoderLayer in eval() under grad,
no_grad and inference_mode (3 seeds), and sum, dot, mv and mm at storage offsets 1 to 8 against
an aligned copy (4 sizes, 3 seeds). Needs torch with CUDA; neither TensorFlow nor Java.
"""

from __future__ import annotations

import datetime
import json
import re
import sys
import time
from pathlib import Path


def record(device: str = "cuda", seed: int = 0) -> dict:
    """Both probes on ``device``: the record without its provenance (`main` adds it)."""
    from fpexplore import backends
    from fpexplore.lessons._gpu import myth_record
    from fpexplore.lessons.summation_order import layout
    from fpexplore.lessons.train_vs_eval import modes

    torch = backends.load("torch")
    return {
        "format": myth_record.FORMAT,
        "version": myth_record.VERSION,
        "torch": torch.__version__,
        "card": torch.cuda.get_device_name(torch.device(device)),
        "autograd_modes": modes.transformer_modes(torch, seed, device),
        "offsets": layout.cuda_offsets(torch, seed, device),
    }


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("data/gpu/myths")
    device = sys.argv[2] if len(sys.argv) > 2 else "cuda"
    import torch

    from fpexplore.lessons._gpu import myth_record

    if not torch.cuda.is_available():
        sys.exit("no CUDA device: this record is made on a machine with a CUDA GPU")
    t0 = time.monotonic()
    data = record(device)
    data["provenance"] = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": round(time.monotonic() - t0, 1),
        "command": "PYTHONPATH=. python3 benchmarks/record_myth_gpu.py " + " ".join(sys.argv[1:]),
        "cuda": torch.version.cuda,
    }
    myth_record.validate(data, "the new record")
    slug = re.sub(r"[^a-z0-9]+", "-", data["card"].lower()).strip("-")
    version = data["torch"].split("+")[0]
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{slug}-torch-{version}.json"
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    rows = data["autograd_modes"]
    print(f"{path} written in {data['provenance']['seconds']} s")
    print(
        "transformer grad vs no_grad:",
        [r["grad_vs_no_grad"] for r in rows],
        "of",
        rows[0]["values"],
    )
    print("offsets:", data["offsets"]["differ"], "of", data["offsets"]["tried"])


if __name__ == "__main__":
    main()
