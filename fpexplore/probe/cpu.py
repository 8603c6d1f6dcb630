"""The running CPU: its model and instruction-set flags, read without importing a framework."""

from __future__ import annotations

import platform
from functools import cache


@cache
def _cpuinfo() -> dict[str, str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break  # the first processor is enough
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


@cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags in lower case (``avx2``, ``avx512_vnni``, ``amx_tile``, ...), as
    Linux names them; on ARM the ``Features`` line (``asimd``, ``sve``...); empty elsewhere."""
    info = _cpuinfo()
    return frozenset((info.get("flags") or info.get("Features") or "").lower().split())


def cpu_model() -> str:
    """The CPU's model name (``platform.processor()`` where /proc/cpuinfo is missing)."""
    info = _cpuinfo()
    return info.get("model name") or info.get("CPU part") or platform.processor() or "unknown"


def cpu_vendor() -> str:
    """The CPU's vendor as Linux names it (``GenuineIntel``, ``AuthenticAMD``; on ARM the
    implementer code), else ``platform.processor()`` or "unknown"."""
    info = _cpuinfo()
    return info.get("vendor_id") or info.get("CPU implementer") or platform.processor() or "unknown"


def vendor_of(vendor_id: str, model: str) -> str:
    """``GenuineIntel`` or ``AuthenticAMD`` from a vendor id or, for fingerprints that did not
    record one, from the model name; else the vendor id as given, or ``unknown``."""
    if vendor_id:
        return vendor_id
    words = model.lower()
    if "intel" in words:
        return "GenuineIntel"
    if "amd" in words:
        return "AuthenticAMD"
    return "unknown"
