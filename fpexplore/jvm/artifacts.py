"""Pinned DJL artifacts and where the set-up put them (resolved by Maven, never at run time)."""

from __future__ import annotations

from pathlib import Path

from ..paths import cache_dir

DJL_VERSION = "0.36.0"
LIBTORCH_VERSION = "2.7.1"


def jar_dir() -> Path:
    return cache_dir() / "djl" / "jars"


def jars() -> list[Path]:
    return sorted(jar_dir().glob("*.jar"))


def missing_jars() -> str | None:
    """Why the jars are not usable, or None when they are in place."""
    if not any(p.name.startswith("api-") for p in jars()):
        return f"the DJL jars are not in {jar_dir()}."
    return None
