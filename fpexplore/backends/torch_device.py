"""Device handling, determinism/TF32 flag settings, and the provenance of a run."""

from __future__ import annotations

import contextlib
import datetime
import os
import platform
import shutil
import subprocess
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..params import Interval

#: torch's intra-op thread count on this CPU, as the live CPU parts of the GPU lessons take it
N_THREADS = Interval("n_threads", 1, "torch's intra-op threads on this CPU", 1, 1024, integer=True)


def torch_module() -> Any:
    """Import torch through the backend registry, or raise `BackendUnavailable` naming the fix."""
    from . import load

    return load("torch")


@contextlib.contextmanager
def cpu_threads(n: int) -> Iterator[Any]:
    """torch (yielded) with its intra-op thread count set to ``n`` inside the block, restored
    after."""
    torch = torch_module()
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield torch
    finally:
        torch.set_num_threads(before)


def open_device(name: str) -> Any:
    """A usable ``torch.device`` for any device string (cuda, mps, xpu, privateuseone...).

    DirectML needs ``torch_directml`` imported first; it is imported when the string asks
    for it. Raises `BackendUnavailable` saying why the device cannot be used here.
    """
    from ..errors import BackendUnavailable

    torch = torch_module()
    if name.startswith(("privateuseone", "dml", "directml")):
        try:
            import torch_directml
        except ImportError:
            raise BackendUnavailable(
                f"torch device {name!r}",
                "torch_directml is not installed.",
                "pip install torch-directml   (Windows, DirectX 12)",
            ) from None
        if not name.startswith("privateuseone"):
            return torch_directml.device()
    try:
        dev = torch.device(name)
    except RuntimeError as exc:
        raise BackendUnavailable(
            f"torch device {name!r}",
            f"torch does not know it ({exc}).",
            "pass a torch device string such as cuda, mps, xpu or cpu",
        ) from None
    try:
        torch.ones(2, device=dev).sum().item()
    except Exception as exc:  # any backend failure means: not usable here
        raise BackendUnavailable(
            f"torch device {name!r}",
            f"torch could not run on it here ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}).",
            "run on a machine with that device, or pass device='cpu'",
        ) from None
    return dev


def synchronize(dev: Any) -> None:
    torch = torch_module()
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    elif dev.type == "mps":
        torch.mps.synchronize()
    elif dev.type == "xpu" and hasattr(torch, "xpu"):
        torch.xpu.synchronize()


def tf32_defaults() -> dict[str, Any]:
    """torch's TF32 settings as they are now (read before anything sets them)."""
    torch = torch_module()
    out: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, getter in (
            ("cuda.matmul.allow_tf32", lambda: torch.backends.cuda.matmul.allow_tf32),
            ("cudnn.allow_tf32", lambda: torch.backends.cudnn.allow_tf32),
            ("float32_matmul_precision", torch.get_float32_matmul_precision),
            ("fp32_precision", lambda: torch.backends.fp32_precision),
            ("cuda.matmul.fp32_precision", lambda: torch.backends.cuda.matmul.fp32_precision),
            ("cudnn.conv.fp32_precision", lambda: torch.backends.cudnn.conv.fp32_precision),
        ):
            try:
                out[key] = getter()
            except Exception as exc:  # older torch lacks the newer attributes
                out[key] = f"unavailable: {type(exc).__name__}"
    return out


def _deterministic_algorithms(torch: Any, on: bool) -> None:
    """``torch.use_deterministic_algorithms(on)``, called only to change the setting: the call
    imports torch's compiler settings, whose LLVM clashes with one TensorFlow already loaded."""
    if torch.are_deterministic_algorithms_enabled() != on:
        torch.use_deterministic_algorithms(on)


@contextlib.contextmanager
def flags(
    *,
    benchmark: bool = False,
    cudnn_deterministic: bool = False,
    deterministic_algorithms: bool = False,
    matmul_tf32: bool | None = None,
    conv_tf32: bool | None = None,
) -> Iterator[None]:
    """Set cuDNN / determinism / TF32 flags for the block, restoring them afterwards.

    TF32 is set through the long-standing ``allow_tf32`` attributes only (torch refuses a mix
    of those and the newer ``fp32_precision`` ones); ``None`` leaves a TF32 flag as it is.
    """
    torch = torch_module()
    cudnn = torch.backends.cudnn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        saved = (
            cudnn.benchmark,
            cudnn.deterministic,
            torch.are_deterministic_algorithms_enabled(),
            torch.backends.cuda.matmul.allow_tf32,
            cudnn.allow_tf32,
        )
        try:
            cudnn.benchmark = benchmark
            cudnn.deterministic = cudnn_deterministic
            _deterministic_algorithms(torch, deterministic_algorithms)
            if matmul_tf32 is not None:
                torch.backends.cuda.matmul.allow_tf32 = matmul_tf32
            if conv_tf32 is not None:
                cudnn.allow_tf32 = conv_tf32
            yield
        finally:
            cudnn.benchmark, cudnn.deterministic = saved[0], saved[1]
            _deterministic_algorithms(torch, saved[2])
            torch.backends.cuda.matmul.allow_tf32 = saved[3]
            cudnn.allow_tf32 = saved[4]


def nvidia_smi(query: str) -> str:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return ""
    try:
        out = subprocess.run(
            [exe, f"--query-gpu={query}", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip().splitlines()[0].strip() if out.stdout.strip() else ""


def provenance(dev: Any) -> dict[str, Any]:
    """What ran: device, driver, CUDA, cuDNN, library versions, date (no host name)."""
    import mpmath

    torch = torch_module()
    info: dict[str, Any] = {
        "device": str(dev),
        "device_type": dev.type,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "mpmath": mpmath.__version__,
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "cpu": platform.processor() or platform.machine(),
        "cpu_threads": torch.get_num_threads(),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cuda": torch.version.cuda,
        "cudnn": None,
        "gpu_name": None,
        "sm_count": None,
        "compute_capability": None,
        "total_memory_bytes": None,
        "driver": None,
        "cuda_driver_api": None,
        "env": {
            k: os.environ.get(k)
            for k in (
                "CUBLAS_WORKSPACE_CONFIG",
                "CUDA_VISIBLE_DEVICES",
                "NVIDIA_TF32_OVERRIDE",
                "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
            )
        },
    }
    with contextlib.suppress(Exception):
        if torch.backends.cudnn.is_available():
            info["cudnn"] = torch.backends.cudnn.version()
    if dev.type == "cuda":
        props = torch.cuda.get_device_properties(dev)
        info.update(
            gpu_name=props.name,
            sm_count=props.multi_processor_count,
            compute_capability=f"{props.major}.{props.minor}",
            total_memory_bytes=int(props.total_memory),
            driver=nvidia_smi("driver_version") or None,
        )
        with contextlib.suppress(Exception):
            info["cuda_driver_api"] = int(torch._C._cuda_getDriverVersion())
    return info
