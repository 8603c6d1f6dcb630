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
    return aten_capability(os.environ, cpu_flags())


#: CPU flags of instruction sets above AVX2 that oneDNN and MKL dispatch to (AVX-512 in any
#: form, AVX-VNNI on AVX2-only cores, AMX): where none is present, a cap at AVX2 changes nothing
ABOVE_AVX2 = ("avx512f", "avx_vnni", "avx_vnni_int8", "avx512_fp16", "amx_tile")
#: the variables `effective_paths` decides; any other makes it answer None
DECIDED = (
    "TF_ENABLE_ONEDNN_OPTS",
    "ATEN_CPU_CAPABILITY",
    "ONEDNN_MAX_CPU_ISA",
    "MKL_ENABLE_INSTRUCTIONS",
)


def aten_capability(env: Mapping[str, str], flags: frozenset[str]) -> str:
    """ATen's CPU path under ``env`` on a CPU with ``flags`` (``DEFAULT``, ``AVX2``,
    ``AVX512``), as `torch_capability` predicts it without asking torch: the best the CPU has,
    lowered to ``ATEN_CPU_CAPABILITY`` where that is lower."""
    forced = env.get("ATEN_CPU_CAPABILITY", "").strip().upper()
    best = (
        "AVX512"
        if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags
        else "AVX2"
        if {"avx2", "fma"} <= flags
        else "DEFAULT"
    )
    order = ["DEFAULT", "AVX2", "AVX512"]
    if forced in order:
        return order[min(order.index(forced), order.index(best))]
    return best


def _capped(env: Mapping[str, str], name: str, flags: frozenset[str]) -> str | None:
    """``best`` where ``name`` caps nothing on this CPU (unset, or AVX2 on a CPU with nothing
    above AVX2), ``AVX2`` where it caps at AVX2 below what the CPU has; None for another cap."""
    value = env.get(name, "").strip().upper()
    if not value:
        return "best"
    if value != "AVX2":
        return None
    return "AVX2" if any(f in flags for f in ABOVE_AVX2) else "best"


def effective_paths(
    env: Mapping[str, str], flags: frozenset[str] | None = None
) -> dict[str, object] | None:
    """The paths ``env`` (the variables it adds to a process without any of them) picks on a
    CPU with ``flags``: TensorFlow's oneDNN state, ATen's capability, oneDNN's and MKL's caps.
    None where ``env`` sets a variable outside `DECIDED`, or a cap this module cannot place:
    two environments whose answers are equal (not None) take the same paths, so give the same
    bits."""
    flags = cpu_flags() if flags is None else flags
    if any(k not in DECIDED for k in env):
        return None
    onednn_isa = _capped(env, "ONEDNN_MAX_CPU_ISA", flags)
    mkl = _capped(env, "MKL_ENABLE_INSTRUCTIONS", flags)
    if onednn_isa is None or mkl is None:
        return None
    return {
        "onednn": onednn_state(env, flags)[0],
        "aten": aten_capability(env, flags),
        "onednn_isa": onednn_isa,
        "mkl": mkl,
    }
