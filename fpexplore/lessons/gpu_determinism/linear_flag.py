"""Does ``torch.backends.cudnn.deterministic`` change a small ``nn.Linear`` model's output?

The article's MLP (``Linear → ReLU → Linear``) with the flag off, on, and with
``cudnn.benchmark``, each in fresh processes, on CUDA and the CPU. On a GPU ``nn.Linear`` is a
cuBLAS matmul that cuDNN's flags never reach. Recorded by ``benchmarks/gpu_edges_run.py`` into
``data/gpu/linear_flag``.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import backends
from .._base import ClaimSpec
from .._gpu.small_records import header, newest

FORMAT = "fpexplore-linear-flag"
VERSION = 1
SETTINGS = ("default", "cudnn.deterministic", "cudnn.benchmark")
SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class LinearFlag:
    """The recorded nn.Linear run under cuDNN's flags, summed up (`lesson_parts`)."""

    card: str
    torch: str
    runs: int  # fresh processes per seed and setting
    seeds: int
    seeds_same: int  # seeds whose bits were the same under every setting
    path: str


def probe(device: str, setting: str, seed: int) -> str:
    """The digest of a seeded MLP's output on one input batch, under ``setting``."""
    torch = backends.load("torch")

    torch.backends.cudnn.deterministic = setting == "cudnn.deterministic"
    torch.backends.cudnn.benchmark = setting == "cudnn.benchmark"
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
    ).to(device)
    x = torch.randn(8, 64).to(device)
    with torch.no_grad():
        y = model(x).cpu().numpy()
    return hashlib.sha1(y.tobytes()).hexdigest()[:16]


def _fresh(device: str, setting: str, seed: int) -> str:
    code = f"from {__name__} import probe; print(probe({device!r}, {setting!r}, {seed}))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def record(runs: int = 3) -> dict[str, Any]:
    """Every (device, setting, seed) in ``runs`` fresh processes: a JSON-ready record."""
    torch = backends.load("torch")

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    digests = {
        dev: {
            setting: {
                str(seed): [_fresh(dev, setting, seed) for _ in range(runs)] for seed in SEEDS
            }
            for setting in SETTINGS
        }
        for dev in devices
    }
    card = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no CUDA device"
    return {
        "format": FORMAT,
        "version": VERSION,
        "torch": torch.__version__,
        "card": card,
        "runs": runs,
        "digests": digests,
    }


def validate(data: Any, source: str) -> dict[str, Any]:
    """``data`` checked against the record's shape; `RecordError` naming what is wrong."""

    bad = header(data, FORMAT, VERSION, source)
    if not isinstance(data.get("card"), str) or not isinstance(data.get("torch"), str):
        raise bad("'card' and 'torch' must be names")
    digests = data.get("digests")
    if not isinstance(digests, Mapping) or "cuda" not in digests:
        raise bad("no CUDA device's digests")
    for dev, per in digests.items():
        if not isinstance(per, Mapping) or set(per) != set(SETTINGS):
            raise bad(f"{dev}: the settings must be exactly {SETTINGS}")
        for setting, by_seed in per.items():
            if not isinstance(by_seed, Mapping) or set(by_seed) != {str(s) for s in SEEDS}:
                raise bad(f"{dev} {setting}: the seeds must be exactly {SEEDS}")
            for runs in by_seed.values():
                if not (
                    isinstance(runs, list)
                    and 1 <= len(runs) <= 100
                    and all(isinstance(d, str) and 0 < len(d) <= 64 for d in runs)
                ):
                    raise bad(f"{dev} {setting}: each seed needs 1 to 100 short digests")
    return dict(data)


def recorded(directory: str | Path | None = None) -> dict[str, Any] | None:
    """The newest valid record in ``data/gpu/linear_flag``, or None; bad files are skipped."""
    return newest("linear_flag", validate, directory)


#: the claim this module decides, from the record (the "linear_flag record" part)
CLAIM = ClaimSpec(
    "linear_ignores_cudnn_flags",
    "cudnn.deterministic and cudnn.benchmark leave a small nn.Linear MLP's output bit for "
    "bit the same on CUDA (cuBLAS, not cuDNN), run after run",
    ("linear_flag record",),
    "CUDA devices (recorded)",
    "tests/test_gpu_edges_seeding.py",
)
MISSING = (
    "no nn.Linear record in data/gpu/linear_flag. Fix: record it on a GPU machine: python3 "
    "benchmarks/gpu_edges_run.py OUTDIR"
)


def lesson_parts() -> tuple[dict[str, Any], LinearFlag | None]:
    """The claim that cuDNN's flags leave a small MLP's output alone on CUDA, from the record.
    Returns (claims, data): {} and None without a record (`MISSING` says why)."""
    data = recorded()
    if data is None:
        return {}, None
    cuda = data["digests"]["cuda"]
    per_seed = {
        seed: {d for setting in SETTINGS for d in cuda[setting][seed]} for seed in cuda["default"]
    }
    same = sum(len(v) == 1 for v in per_seed.values())
    summary = LinearFlag(
        data["card"], data["torch"], data["runs"], len(per_seed), same, data["path"]
    )
    where = f"recorded on {data['card']}, {len(per_seed)} seeds × {len(SETTINGS)} settings"
    claim = CLAIM.claim(
        same == len(per_seed),
        f" ({same} of {len(per_seed)} seeds identical; {where}, {data['runs']} runs each)",
    )
    return {CLAIM.key: claim}, summary


def judge_myth(c: Any) -> tuple[str, str, str]:
    """Myth "cudnn.deterministic changes a small nn.Linear model's output": (verdict, why,
    number), from the determinism lesson's run."""
    claim = c.claims.get("linear_ignores_cudnn_flags")
    if claim is None or claim.holds is None:
        return "not measured", "needs the recorded nn.Linear run (data/gpu/linear_flag)", ""
    d = c.data.linear_flag
    number = (
        f"{d.seeds_same} of {d.seeds} seeds: the same bits with the flag off, on and with "
        f"benchmark on, {d.runs} fresh processes each ({d.card})"
    )
    if claim.holds:
        return (
            "does not hold",
            "nn.Linear is a cuBLAS matmul: cuDNN's flags never reach it",
            number,
        )
    return "holds", "the flag changed the MLP's bits", number
