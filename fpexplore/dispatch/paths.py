"""Which path each library takes on this machine, and why: decided from the CPU's flags and
the switches in the environment, or asked of the library where it says."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from .cpu import cpu_flags

#: TensorFlow turns oneDNN on by default on x86-64 Linux only where the CPU has one of these
#: (tensorflow/core/util/util.cc, IsMKLEnabled: the int8/bfloat16 instructions oneDNN uses)
ONEDNN_DEFAULT_FLAGS = (
    "avx512_vnni",
    "avx512_bf16",
    "avx_vnni",
    "amx_tile",
    "amx_int8",
    "amx_bf16",
)


def onednn_state(
    env: Mapping[str, str] | None = None, flags: frozenset[str] | None = None
) -> tuple[bool, str]:
    """Whether TensorFlow runs its oneDNN kernels under ``env`` on a CPU with ``flags`` (this
    process's environment and CPU by default), and the reason in words."""
    env = os.environ if env is None else env
    flags = cpu_flags() if flags is None else flags
    value = env.get("TF_ENABLE_ONEDNN_OPTS", "").strip().lower()
    if value in ("0", "false"):
        return False, "oneDNN is off: TF_ENABLE_ONEDNN_OPTS=0"
    if value in ("1", "true"):
        return True, "oneDNN is on: TF_ENABLE_ONEDNN_OPTS=1"
    found = [f.upper() for f in ONEDNN_DEFAULT_FLAGS if f in flags]
    if found:
        return True, f"oneDNN is on by default because the CPU has {found[0]}"
    return False, (
        "oneDNN is off by default because the CPU has none of "
        + ", ".join(f.upper() for f in ONEDNN_DEFAULT_FLAGS)
    )


def tensorflow_onednn() -> tuple[bool, str]:
    """`onednn_state` for this process, checked against TensorFlow itself when it is loaded
    (its ``IsMklEnabled``); where the two disagree, TensorFlow's answer wins."""
    on, why = onednn_state()
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return on, why
    from .. import backends
    from ..errors import BackendUnavailable

    try:
        port = backends.load("tensorflow", "python.util._pywrap_util_port")
        reported = bool(port.IsMklEnabled())
    except (ImportError, AttributeError, BackendUnavailable):
        return on, why
    if reported != on:
        return reported, f"oneDNN is {'on' if reported else 'off'} (as TensorFlow reports)"
    return on, why


def torch_capability() -> str:
    """ATen's CPU path in this process (``DEFAULT``, ``AVX2``, ``AVX512``; ARM builds report
    their own names): asked of torch when it is loaded, else what it will pick from
    ``ATEN_CPU_CAPABILITY`` and the CPU's flags."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return str(torch.backends.cpu.get_cpu_capability())
    forced = os.environ.get("ATEN_CPU_CAPABILITY", "").strip().upper()
    flags = cpu_flags()
    best = (
        "AVX512"
        if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags
        else "AVX2"
        if {"avx2", "fma"} <= flags
        else "DEFAULT"
    )
    order = ["DEFAULT", "AVX2", "AVX512"]
    if forced in order and best in order:
        return order[min(order.index(forced), order.index(best))]
    return best
