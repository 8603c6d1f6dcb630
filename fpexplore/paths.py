"""Where fpexplore keeps its caches and data (overridable with environment variables).

The data the lessons read (recorded GPU runs in ``gpu/``, sample images in ``images/``) lives in
the checkout's ``data/`` folder and is shipped inside the package as ``fpexplore/data`` when a
wheel is built (see ``setup.py``). A checkout's ``data/`` takes precedence, so new recordings
are found there; an installed package reads its own copy through `importlib.resources`.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent
#: the notebook series on Binder, where every framework is installed (JupyterLite links here)
BINDER_URL = os.environ.get(
    "FPEXPLORE_BINDER_URL",
    "https://mybinder.org/v2/gh/fpexplore/fpexplore/HEAD?urlpath=lab/tree/notebooks",
)


def in_checkout() -> bool:
    """Whether this package runs from a source checkout (``pyproject.toml`` beside it)."""
    return (REPO_DIR / "pyproject.toml").is_file() and (REPO_DIR / "fpexplore").is_dir()


def cache_dir() -> Path:
    """``$FPEXPLORE_CACHE``, else ``.cache`` in the checkout, else ``~/.cache/fpexplore``."""
    env = os.environ.get("FPEXPLORE_CACHE")
    if env:
        return Path(env)
    if in_checkout():
        return REPO_DIR / ".cache"
    return Path.home() / ".cache" / "fpexplore"


def package_data_dir() -> Path:
    """The data shipped inside the installed package (``fpexplore/data``)."""
    root = resources.files("fpexplore").joinpath("data")
    # Wheels install as plain files, so the traversable is a real folder (also under Pyodide).
    return Path(os.fspath(root)) if isinstance(root, os.PathLike) else PACKAGE_DIR / "data"


def data_dir() -> Path:
    """``$FPEXPLORE_DATA``, else the checkout's ``data/``, else the package's own data."""
    env = os.environ.get("FPEXPLORE_DATA")
    if env:
        return Path(env)
    if in_checkout() and (REPO_DIR / "data").is_dir():
        return REPO_DIR / "data"
    return package_data_dir()
