"""The dispatch switches: one environment variable each, read when its library loads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import InvalidParameter
from ..probe.cpu import cpu_flags


@dataclass(frozen=True)
class Switch:
    """An environment that changes which CPU path a library takes, and what that changes."""

    name: str
    env: Mapping[str, str]
    changes: str
    #: CPU flags the path needs (a switch that raises a cap applies only where they exist)
    needs: tuple[str, ...] = ()
    #: the libraries whose results the switch can change (a result of any other library
    #: keeps its bits under it)
    reaches: tuple[str, ...] = ()


def _threads(n: int) -> dict[str, str]:
    v = str(n)
    return {"OMP_NUM_THREADS": v, "MKL_NUM_THREADS": v, "OPENBLAS_NUM_THREADS": v}


SWITCHES: tuple[Switch, ...] = (
    Switch(
        "onednn-off",
        {"TF_ENABLE_ONEDNN_OPTS": "0"},
        "TensorFlow's own Eigen kernels: softmax, matmul and conv in Eigen's order",
        reaches=("tensorflow",),
    ),
    Switch(
        "onednn-on",
        {"TF_ENABLE_ONEDNN_OPTS": "1"},
        "TensorFlow's oneDNN kernels: other blocking, vector exp and reductions",
        reaches=("tensorflow",),
    ),
    Switch(
        "onednn-avx2",
        {"TF_ENABLE_ONEDNN_OPTS": "1", "ONEDNN_MAX_CPU_ISA": "AVX2"},
        "oneDNN capped at AVX2: 8-lane kernels instead of 16-lane AVX-512 ones",
        reaches=("tensorflow", "torch", "libtorch", "djl"),
    ),  # torch's CPU convs: oneDNN
    Switch(
        "aten-default",
        {"ATEN_CPU_CAPABILITY": "default"},
        "ATen's scalar-compiled kernels (no AVX2, no FMA contraction): the path of CPUs "
        "without AVX2, the closest stand-in here for ARM laptops",
        reaches=("torch", "libtorch", "djl"),
    ),
    Switch(
        "aten-avx2",
        {"ATEN_CPU_CAPABILITY": "avx2"},
        "ATen's AVX2 kernels: 8 float lanes, FMA, vectorized log/sin/cos",
        needs=("avx2", "fma"),
        reaches=("torch", "libtorch", "djl"),
    ),
    Switch(
        "aten-avx512",
        {"ATEN_CPU_CAPABILITY": "avx512"},
        "ATen's AVX-512 kernels: 16 float lanes",
        needs=("avx512f", "avx512bw", "avx512vl", "avx512dq"),
        reaches=("torch", "libtorch", "djl"),
    ),
    Switch(
        "numpy-no-avx512",
        {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"},
        "numpy's AVX2 loops instead of its AVX-512 ones (other exp/log/tanh approximations)",
        needs=("avx512f",),
        reaches=("numpy",),
    ),
    Switch(
        "mkl-avx2",
        {"MKL_ENABLE_INSTRUCTIONS": "AVX2"},
        "MKL's AVX2 code path: other blocking of its matrix products and its vector math "
        "(torch's exp, log and tanh call MKL's VML)",
        reaches=("torch", "libtorch", "djl", "numpy"),
    ),
    Switch(
        "mkl-cbwr",
        {"MKL_CBWR": "COMPATIBLE"},
        "MKL's conditional numerical reproducibility: one code path for every CPU (its SSE2 "
        "branch), the same bits on any x86 machine at the cost of speed",
        reaches=("torch", "libtorch", "djl", "numpy"),
    ),
    Switch(
        "openblas-haswell",
        {"OPENBLAS_CORETYPE": "Haswell"},
        "OpenBLAS's Haswell (AVX2) kernels instead of the ones it picks for this CPU: other "
        "blocking of numpy's matrix products",
        reaches=("numpy",),
    ),
    Switch(
        "threads-1",
        _threads(1),
        "one thread: one partial sum per reduction",
        reaches=("torch", "libtorch", "djl", "numpy", "tensorflow"),
    ),
    Switch(
        "threads-2",
        _threads(2),
        "two threads: two partial sums, then added",
        reaches=("torch", "libtorch", "djl", "numpy", "tensorflow"),
    ),
)


def switch(name: str) -> Switch:
    """The switch called ``name``."""
    for s in SWITCHES:
        if s.name == name:
            return s
    raise InvalidParameter("switch", name, "one of " + ", ".join(s.name for s in SWITCHES))


def applicable(s: Switch, flags: frozenset[str] | None = None) -> bool:
    """Whether ``s`` selects a path this CPU has (every switch that caps always does)."""
    flags = cpu_flags() if flags is None else flags
    return all(f in flags for f in s.needs)
