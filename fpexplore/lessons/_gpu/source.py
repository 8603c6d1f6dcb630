"""Where a GPU lesson's numbers come from: a live device, or the newest recorded run."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from ... import backends
from ...errors import BackendUnavailable
from ...params import Text

DEVICE_HELP = (
    "'auto' (live on CUDA when torch sees a GPU, else the recorded run), "
    "'recorded', or a torch device string such as cuda, cuda:1, mps, xpu, cpu"
)


RECORD_HELP = "'newest', or part of a file name in data/gpu such as 'h100' or 'h200'"


def device_param(help_text: str = "where to run: " + DEVICE_HELP) -> Text:
    return Text("device", "auto", help_text, pattern_help=DEVICE_HELP)


def record_param() -> Text:
    return Text(
        "record",
        "newest",
        "which recorded run to show without CUDA: " + RECORD_HELP,
        pattern_help=RECORD_HELP,
    )


@dataclass(frozen=True)
class Source:
    """``kind`` is "framework" (live) or "recorded"; ``device`` is the live torch.device,
    ``record`` the loaded record; ``banner`` says plainly what ran where."""

    kind: str
    device: Any = None
    record: Any = None
    banner: str = ""

    @property
    def live(self) -> bool:
        return self.kind == "framework"

    @property
    def label(self) -> str:
        return _device_label(self.device) if self.live else self.record.card

    def reading(self, experiment: str) -> contextlib.AbstractContextManager[None]:
        """Around a lesson's use of the data: a field it cannot read in a record becomes a
        `RecordError` naming the record (a live run's data needs no guard)."""
        return contextlib.nullcontext() if self.live else self.record.reading(experiment)


def cuda_here() -> bool:
    """Whether torch is installed and sees a CUDA device (imports torch only if installed)."""
    if not backends.get("torch").available():
        return False
    try:
        return bool(backends.load("torch").cuda.is_available())
    except BackendUnavailable:
        return False


def torch_version() -> str:
    """The installed torch's version (imports nothing)."""
    return backends.get("torch").version()


def _device_label(dev: Any) -> str:
    if dev.type == "cuda":
        return backends.load("torch").cuda.get_device_name(dev)
    return str(dev)


def resolve(device: str, record: str = "newest") -> Source:
    """Live or recorded for ``device`` (`DEVICE_HELP`), ``record`` picking the record. A device
    that cannot run raises `BackendUnavailable`; 'auto' without a GPU falls back to the record,
    and a missing record raises `RecordError` with the fix."""
    from ... import records
    from ...backends.torch_device import open_device, torch_module

    if device == "recorded" or (device == "auto" and not cuda_here()):
        rec = records.load(records.find(record))
        return Source("recorded", record=rec, banner=rec.banner())
    name = "cuda" if device == "auto" else device
    torch_module()
    dev = open_device(name)
    note = " (a CPU: the GPU-only flags change nothing here)" if dev.type == "cpu" else ""
    banner = f"LIVE run on {_device_label(dev)}{note}, torch {torch_version()}"
    return Source("framework", device=dev, banner=banner)
