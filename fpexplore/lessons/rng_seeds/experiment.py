"""The RNG lesson's GPU experiment: random streams recorded on a device.

Layout (read by the lesson, keep it stable):
``rng = {"seeds", "n", "cuda_rand_bits": {seed: [uint32]}, "cuda_randn_bits", "cpu_rand_bits",
"cpu_randn_bits"}`` from ``torch.manual_seed(s); torch.rand(n, device=...)``.
"""

from __future__ import annotations

from typing import Any

from ...backends.torch_device import torch_module
from ...records import bits32

SEEDS = (0, 1, 42, 1234)
RNG_N = 64


def run_rng(dev: Any, seeds: tuple[int, ...] = SEEDS, n: int = RNG_N) -> dict[str, Any]:
    torch = torch_module()
    out: dict[str, Any] = {"seeds": list(seeds), "n": n, "device": str(dev)}
    for where, d in (("cuda", dev), ("cpu", torch.device("cpu"))):
        for fn in ("rand", "randn"):
            table = {}
            for s in seeds:
                torch.manual_seed(s)
                table[str(s)] = bits32(getattr(torch, fn)(n, device=d).cpu().numpy())
            out[f"{where}_{fn}_bits"] = table
    return out
