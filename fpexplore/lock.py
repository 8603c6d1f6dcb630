"""The versions every comparison assumes: the lock (``constraints.txt``) that ``make`` and
Binder's ``postBuild`` install from, and where this environment differs from it.

Versions confound comparisons between machines (a GPU host with torch 2.11 and a laptop with
2.15 differ for reasons no CPU explains), so ``fpexplore doctor`` names every drift from the
lock, and machine records keep the versions they were made with. ``make lock`` writes the lock
again from a fresh environment and re-runs the suite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from .paths import REPO_DIR, in_checkout

LOCK_FILE = "constraints.txt"
#: the packages whose versions change results (the others are listed only when asked)
RESULT_PACKAGES = ("numpy", "torch", "tensorflow-cpu", "tensorflow", "mpmath", "jpype1")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_path() -> Path | None:
    """The checkout's lock file; None for an installed package (it has no lock)."""
    path = REPO_DIR / LOCK_FILE
    return path if in_checkout() and path.is_file() else None


def read_lock(path: Path) -> dict[str, str]:
    """``{normalized name: version}`` of a ``name==version`` constraints file."""
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep:
            raise ValueError(f"{path}: {line!r} is not 'name==version'")
        out[_norm(name)] = version.strip()
    return out


def same_release(installed: str, locked: str) -> bool:
    """Whether ``installed`` is ``locked``, a local build label aside (``2.15.0+cpu`` is the
    CPU wheel of ``2.15.0``, as pip's ``==`` also reads it)."""
    return installed.split("+", 1)[0] == locked.split("+", 1)[0]


@dataclass(frozen=True)
class Drift:
    """A package whose installed version is not the lock's (``installed`` None: missing)."""

    name: str
    installed: str | None
    locked: str

    def line(self) -> str:
        have = self.installed or "not installed"
        return f"{self.name} {have} (lock: {self.locked})"


def drift(lock: dict[str, str] | None = None, everything: bool = False) -> list[Drift]:
    """The packages of ``lock`` (`RESULT_PACKAGES` only, unless ``everything``) whose
    installed version differs from it. An absent package counts only with ``everything``:
    an optional framework that is missing is doctor's other table's business."""
    if lock is None:
        path = lock_path()
        lock = read_lock(path) if path else {}
    wanted = set(lock) if everything else {_norm(p) for p in RESULT_PACKAGES} & set(lock)
    out: list[Drift] = []
    for name in sorted(wanted):
        try:
            have: str | None = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = None
        if have is None and not everything:
            continue  # an optional framework that is absent: doctor's table says so already
        if have is None or not same_release(have, lock[name]):
            out.append(Drift(name, have, lock[name]))
    return out


def report() -> list[str]:
    """doctor's lines on the lock: where this environment differs from it, or that it does
    not (or that there is no lock, for an installed package)."""
    path = lock_path()
    if path is None:
        return ["versions: no lock file here (an installed package); records keep versions"]
    found = drift(read_lock(path))
    if not found:
        return [
            f"versions: numpy, torch, TensorFlow, mpmath and JPype are the lock's ({LOCK_FILE})"
        ]
    return [
        f"versions that differ from the lock ({LOCK_FILE}): comparisons with the shipped "
        "records then differ for that reason first"
    ] + ["  " + d.line() for d in found]
