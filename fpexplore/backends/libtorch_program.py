"""Locate the C++ LibTorch program built by ``make libtorch`` (no build happens at import)."""

from __future__ import annotations

import os
from pathlib import Path

from ..paths import cache_dir


def build_dir() -> Path:
    return cache_dir() / "libtorch" / "build"


def executable() -> Path | None:
    """The built program, or None when it has not been built on this machine."""
    exe = Path(os.environ.get("FPEXPLORE_LIBTORCH_EXE", build_dir() / "fpexplore_libtorch"))
    return exe if exe.is_file() and os.access(exe, os.X_OK) else None


def version() -> str:
    stamp = build_dir() / "LIBTORCH_VERSION"
    return stamp.read_text().strip() if stamp.exists() else ""
