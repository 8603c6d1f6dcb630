"""Passed results of the suite's long tests, reused while the tree and the machine are the same.

A test marked ``reusable`` (the notebooks in Chromium, the Binder replay, the wheel, the
degrade contract...) depends only on the files of the working tree and on this machine. When it
passes, a record is written under ``cache_dir()/suite/passed/``, named by a hash of its node id,
the tree's hash (`tree_hash`: every tracked and new, not ignored, file) and the machine's
(`machine_key`: the environment's path variables, the CPU, every installed version and what
set-up built, as `fpexplore.dispatch.fresh.fresh_key` has them, with Chromium's and the system
packages' stamps). A later session that finds the record reports the test as passed without
running it, and its summary lists every such test. A failed, skipped or interrupted test
leaves no record; ``FPEXPLORE_REUSE=0`` runs every test.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REUSE_ENV = "FPEXPLORE_REUSE"
MARKER = "reusable"


def reuse_on() -> bool:
    return os.environ.get(REUSE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


@cache
def tree_hash(root: Path = ROOT) -> str | None:
    """sha256 of the working tree: every tracked and new (not ignored) file's path and bytes
    (a link: its target), as git lists them; None outside a git checkout."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    h = hashlib.sha256()
    for name in sorted(set(filter(None, listed.decode("utf-8", "surrogateescape").split("\0")))):
        path = root / name
        h.update(name.encode("utf-8", "surrogateescape") + b"\0")
        if path.is_symlink():
            h.update(b"link:" + os.readlink(path).encode("utf-8", "surrogateescape"))
        elif path.is_file():
            h.update(hashlib.sha256(path.read_bytes()).digest())
        else:
            h.update(b"absent")  # deleted but still tracked
    return h.hexdigest()


def _stamp(path: str) -> list[Any]:
    try:
        st = os.stat(path)
    except OSError:
        return []
    return [st.st_size, st.st_mtime_ns]


@cache
def machine_key() -> dict[str, Any]:
    """This machine and environment as a reused result depends on them (the package's code is
    in the tree's hash)."""
    from fpexplore.dispatch import fresh
    from fpexplore.paths import cache_dir

    key = fresh.fresh_key({})
    key.pop("code", None)
    # what else set-up made that a test reads: the widget bundle, the warmed curves
    for name in ("widgets", "summation_growth"):
        stamps = json.dumps(fresh._stamps(cache_dir() / name))
        key[f"setup_{name}"] = hashlib.sha256(stamps.encode()).hexdigest()
    # the test suite's own knobs (FPX_REPLAY_COLD replays Binder from nothing)
    key["fpx"] = {k: v for k, v in sorted(os.environ.items()) if k.startswith("FPX_")}
    key["chromium"] = _stamp("/usr/bin/chromium")
    key["system_packages"] = _stamp("/var/lib/dpkg/status")
    return key


def _record_path(nodeid: str) -> Path | None:
    from fpexplore.paths import cache_dir

    tree = tree_hash()
    if tree is None:
        return None
    key = {"test": nodeid, "tree": tree, "machine": machine_key()}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    return cache_dir() / "suite" / "passed" / f"{digest[:40]}.json"


def reused(nodeid: str) -> dict[str, Any] | None:
    """The record of ``nodeid``'s pass on this tree and machine, or None."""
    if not reuse_on():
        return None
    path = _record_path(nodeid)
    if path is None:
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if record.get("test") == nodeid else None


def keep(nodeid: str, seconds: float) -> None:
    """Write the record of ``nodeid``'s pass on this tree and machine."""
    path = _record_path(nodeid)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "test": nodeid,
        "tree": tree_hash(),
        "seconds": round(seconds, 1),
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, path)
