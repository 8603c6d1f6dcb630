"""Where fpexplore keeps its caches and data (overridable with environment variables)."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent


def cache_dir() -> Path:
    """``$FPEXPLORE_CACHE``, else ``.cache`` in the checkout, else ``~/.cache/fpexplore``."""
    env = os.environ.get("FPEXPLORE_CACHE")
    if env:
        return Path(env)
    if (REPO_DIR / "pyproject.toml").exists():
        return REPO_DIR / ".cache"
    return Path.home() / ".cache" / "fpexplore"


def data_dir() -> Path:
    """``$FPEXPLORE_DATA``, else the checkout's ``data/``."""
    return Path(os.environ.get("FPEXPLORE_DATA", REPO_DIR / "data"))
