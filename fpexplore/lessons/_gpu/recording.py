"""What a lesson declares to be recorded on a GPU (`Lesson.gpu_experiment`), and what the
recorder (`fpexplore.recorder`) hands each experiment."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class GpuSession:
    """One recording: the device, the settings of ``fpexplore record gpu`` and its log."""

    device: Any  # the torch device recorded on
    name: str  # the device as the command named it ("cuda", "cuda:1", "cpu")
    quick: bool
    n_runs: int
    processes: int
    tf32_defaults: dict[str, Any]  # torch's TF32 flags before anything set one
    out_dir: Path | None  # where the records go (None: `fpexplore.paths.recordings_dir`)
    say: Callable[[str], None]


@dataclass(frozen=True)
class GpuExperiment:
    """A lesson's experiment on a GPU: ``run(session)`` gives its entry in the record's
    ``experiments`` under ``key`` (None: it wrote a record of its own), with ``seed`` listed
    in the record's settings (None: not listed); ``cuda_only`` runs it on CUDA cards only."""

    key: str
    run: Callable[[GpuSession], Any]
    seed: Any = 0
    cuda_only: bool = False
