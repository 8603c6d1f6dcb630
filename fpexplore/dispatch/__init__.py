"""Same code, different machine: the switches that pick a library's CPU path, and what this
machine picks.

Libraries choose their kernels at start-up from the CPU they find: TensorFlow turns oneDNN on
only on some CPUs, ATen and numpy dispatch by instruction set, MKL and OpenBLAS by core type,
and every threaded reduction by its thread count. Each `Switch` is an environment variable
that caps or forces one of these choices; it is read when the library loads, so it takes
effect in a fresh process only (`fpexplore.dispatch.fresh`).
"""

from __future__ import annotations

from ..probe.cpu import cpu_flags
from ..probe.paths import onednn_state, tensorflow_onednn, torch_capability
from .switches import SWITCHES, applicable, switch

__all__ = [
    "SWITCHES",
    "applicable",
    "cpu_flags",
    "onednn_state",
    "switch",
    "tensorflow_onednn",
    "torch_capability",
]
