"""What PyTorch reports (devices, thread count), learnt without importing torch here.

Importing torch takes 1.5–5 s, so `fpexplore doctor` asks a child interpreter, started before
anything else is probed, and waits for it only up to a deadline. Its answer is also written to
a cache file keyed by everything that decides it (torch version, thread environment variables,
usable CPUs, visible CUDA devices); a child that misses the deadline keeps running and fills
the cache for the next call. Without a live or cached answer, the devices come from the CUDA
driver itself (ctypes, no torch) and the thread count is reported as unknown, never guessed.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..paths import cache_dir

_CHILD = r"""
import json, os, sys
out = {"key": sys.argv[2]}
try:
    import torch
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices += [f"cuda:{i} ({torch.cuda.get_device_name(i)})"
                    for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        devices.append("mps")
    out.update(devices=devices, threads=torch.get_num_threads())
except Exception as exc:  # reported by doctor, not raised
    out["error"] = f"{type(exc).__name__}: {exc}"
tmp = sys.argv[1] + f".{os.getpid()}.tmp"
with open(tmp, "w") as f:
    json.dump(out, f)
os.replace(tmp, sys.argv[1])
"""

_ENV_KEYS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")


@dataclass(frozen=True)
class TorchReport:
    """Devices and thread count as torch reports them; ``source`` says where they came from."""

    devices: tuple[str, ...]
    threads: int | None
    source: str


class Probe:
    """A child interpreter importing torch; `result` waits for it up to a deadline."""

    def __init__(self, version: str) -> None:
        try:
            cpus = sorted(os.sched_getaffinity(0))
        except AttributeError:  # not Linux
            cpus = list(range(os.cpu_count() or 0))
        env = {k: os.environ.get(k) for k in _ENV_KEYS}
        # everything torch's device list and default thread count depend on
        self.key = json.dumps([version, sys.prefix, cpus, env], sort_keys=True)
        self.path = cache_dir() / "doctor" / "torch.json"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.started = time.time()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(self.path), self.key],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # outlives a deadline miss to fill the cache
        )

    def result(self, deadline: float) -> TorchReport:
        """The child's answer if it arrives before ``deadline`` (time.perf_counter), else the
        cached one for the same key, else the CUDA driver's devices and an unknown count."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=max(0.0, deadline - time.perf_counter()))
        done = self.process.returncode is not None
        cached = _read(self.path, self.key)
        if cached is not None and "error" in cached:
            return TorchReport(
                ("cpu", *driver_devices()), None, f"importing torch failed: {cached['error']}"
            )
        if cached is not None:
            fresh = done and self.path.stat().st_mtime >= self.started - 1
            source = "" if fresh else "cached from an earlier probe (torch import was slow)"
            return TorchReport(tuple(cached["devices"]), int(cached["threads"]), source)
        waited = time.time() - self.started
        return TorchReport(
            ("cpu", *driver_devices()),
            None,
            f"threads unknown: importing torch took over {waited:.1f} s; "
            "devices from the CUDA driver",
        )


def _read(path: Path, wanted: str) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if data.get("key") == wanted else None


def built_with_cuda() -> bool:
    """Whether the installed torch wheel has CUDA support (read from torch/version.py)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return False
    try:
        text = (Path(next(iter(spec.submodule_search_locations))) / "version.py").read_text()
    except OSError:
        return False
    match = re.search(r"^cuda\b[^=]*=\s*(.+)$", text, re.MULTILINE)
    return bool(match) and match.group(1).strip() != "None"


def driver_devices() -> list[str]:
    """``cuda:i (name)`` for each GPU the CUDA driver sees, if torch was built with CUDA."""
    if not built_with_cuda():
        return []
    name = ctypes.util.find_library("cuda") or "libcuda.so.1"
    try:
        cuda = ctypes.CDLL(name)
    except OSError:
        return []
    count = ctypes.c_int()
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return []
    out = []
    for i in range(count.value):
        device, buf = ctypes.c_int(), ctypes.create_string_buffer(256)
        if cuda.cuDeviceGet(ctypes.byref(device), i) == 0:
            cuda.cuDeviceGetName(buf, len(buf), device)
        out.append(f"cuda:{i} ({buf.value.decode(errors='replace')})")
    return out
