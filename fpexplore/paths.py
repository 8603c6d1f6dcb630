"""Where fpexplore keeps its caches and data (overridable with environment variables).

The data the lessons read (recorded GPU runs in ``gpu/``, sample images in ``images/``) lives in
the checkout's ``data/`` folder and is shipped inside the package as ``fpexplore/data`` when a
wheel is built (see ``setup.py``). A checkout's ``data/`` takes precedence, so new recordings
are found there; an installed package reads its own copy through `importlib.resources`.

GPU records are looked up in order (`gpu_record_dirs`): ``$FPEXPLORE_DATA/gpu`` or the
checkout's ``data/gpu``, then the user's own recordings (`user_data_dir`, where ``fpexplore
record-gpu`` writes when the package is installed: site-packages may not be writable and is
replaced on upgrade), then the package's data; a file name found earlier hides a later one.
Shipped inputs (sample images, fingerprints, machine records) are read from
`shipped_data_dir`, which ``$FPEXPLORE_DATA`` does not redirect.
"""

from __future__ import annotations

import os
import sys
from importlib import resources
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent
#: the notebook series on Binder, where every framework is installed (JupyterLite links here).
#: The default names ``fpexplore/fpexplore`` on GitHub, a placeholder until the repository is
#: published; a copy sets its own with ``FPEXPLORE_BINDER_URL`` (see the README).
BINDER_PLACEHOLDER = (
    "https://mybinder.org/v2/gh/fpexplore/fpexplore/HEAD?urlpath=lab/tree/notebooks"
)
BINDER_URL = os.environ.get("FPEXPLORE_BINDER_URL", BINDER_PLACEHOLDER)


def in_browser() -> bool:
    """Whether Python runs in a web page (Pyodide, as in JupyterLite): no torch, TensorFlow,
    Java or subprocesses there."""
    return sys.platform == "emscripten"


def fix_here(fix: str) -> str:
    """The fix for a missing framework as it applies here: ``fix`` itself, or in a browser
    (`in_browser`) the link to the Binder version, where every framework is installed."""
    if in_browser():
        return f"open the Binder version, where torch, TensorFlow and DJL run: {BINDER_URL}"
    return fix


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


def _own_data() -> Path | None:
    """``$FPEXPLORE_DATA``, else the checkout's ``data/``; None for an installed package."""
    env = os.environ.get("FPEXPLORE_DATA")
    if env:
        return Path(env)
    if in_checkout() and (REPO_DIR / "data").is_dir():
        return REPO_DIR / "data"
    return None


def data_dir() -> Path:
    """``$FPEXPLORE_DATA``, else the checkout's ``data/``, else the package's own data."""
    return _own_data() or package_data_dir()


def shipped_data_dir() -> Path:
    """The data the project ships (sample images, fingerprints, machine records): the
    checkout's ``data/``, else the package's own. ``$FPEXPLORE_DATA`` redirects recordings
    only, never these inputs."""
    if in_checkout() and (REPO_DIR / "data").is_dir():
        return REPO_DIR / "data"
    return package_data_dir()


def user_data_dir() -> Path:
    """``$XDG_DATA_HOME/fpexplore``, else ``~/.local/share/fpexplore``: the user's recordings."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "fpexplore"


#: where `recordings_dir` points, in words (``fpexplore record-gpu --help`` shows it)
RECORDINGS_HELP = (
    "$FPEXPLORE_DATA/gpu if set, else data/gpu in a source checkout, "
    "else $XDG_DATA_HOME/fpexplore/gpu (~/.local/share/fpexplore/gpu)"
)


def recordings_dir() -> Path:
    """Where ``fpexplore record-gpu`` writes by default (`RECORDINGS_HELP`)."""
    return (_own_data() or user_data_dir()) / "gpu"


def gpu_record_dirs() -> list[Path]:
    """The folders GPU records are read from, first one first (see the module docstring)."""
    folders = (recordings_dir(), user_data_dir() / "gpu", package_data_dir() / "gpu")
    return list(dict.fromkeys(folders))


def check_out(out: object, option: str = "out", where: str = "") -> Path:
    """``out`` as the path of a file that can be written, checked before any work starts; else
    `InvalidParameter` naming ``option``. Refused: an empty path, an existing folder, a folder
    that does not exist or is not a folder, a file that cannot be created or written."""
    from .errors import InvalidParameter

    def refuse(why: str) -> InvalidParameter:
        return InvalidParameter(option, out, f"the path of a file to write ({why})", where)

    if isinstance(out, bytes) or not isinstance(out, str | os.PathLike):
        raise refuse("a str or path")
    text = os.fspath(out)
    if not isinstance(text, str) or not text:
        raise refuse("the path is empty")
    if "\x00" in text:
        raise refuse("a path holds no NUL character")
    p = Path(text)
    try:
        is_dir, folder = p.is_dir(), p.parent
        folder_exists, folder_is_dir, existed = folder.exists(), folder.is_dir(), p.exists()
    except OSError as exc:  # a name too long for the system, and such
        raise refuse(f"it cannot be written: {exc.strerror or exc}") from None
    if is_dir:
        raise refuse(f"{text!r} is a folder")
    if not folder_exists:
        raise refuse(f"the folder {str(folder)!r} does not exist")
    if not folder_is_dir:
        raise refuse(f"{str(folder)!r} is not a folder")
    try:
        with open(p, "a", encoding="utf-8"):
            pass
    except (OSError, ValueError) as exc:  # ValueError: a name the system cannot take
        raise refuse(f"it cannot be written: {getattr(exc, 'strerror', None) or exc}") from None
    if not existed:
        p.unlink(missing_ok=True)
    return p
