"""Set up DJL: resolve the pinned jars with Maven, compile the Java helpers, extract libtorch.

``fpexplore setup djl`` (``make djl``). Idempotent: a stamp holding the hash of the
pom and of the helper sources skips work already done. Maven runs in batch mode with strict
checksums (``-C``) and a local repository inside the project cache (``.cache/djl/m2``), so
nothing outside the checkout is written and ``make clean`` removes it all.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import artifacts

INSTALL_HINT = (
    "install a JDK 17 and Maven, e.g. `apt-get install openjdk-17-jdk-headless maven` "
    "(Debian/Ubuntu) or `brew install openjdk@17 maven` (macOS)"
)


class SetupError(RuntimeError):
    """The set-up cannot proceed; the message says what to install or fix."""


def _tool(name: str) -> str:
    java_home = os.environ.get("JAVA_HOME")
    found = shutil.which(name)
    if found is None and java_home and Path(java_home, "bin", name).exists():
        found = str(Path(java_home, "bin", name))
    if found is None:
        raise SetupError(f"'{name}' was not found on PATH: {INSTALL_HINT}.")
    return found


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise SetupError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")


def resolve_jars(force: bool = False) -> bool:
    """Copy the pinned jars into `artifacts.jar_dir`; returns True when Maven ran."""
    stamp = artifacts.djl_dir() / ".jars.sha256"
    want = _digest([artifacts.POM])
    reason = artifacts.missing_jars()
    absent = reason is not None and "helpers" not in reason
    if not force and stamp.exists() and stamp.read_text() == want and not absent:
        return False
    mvn = _tool("mvn")
    _tool("java")
    staging = artifacts.djl_dir() / "jars.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    _run(
        [
            mvn,
            "-B",
            "-q",
            "-C",
            "-f",
            str(artifacts.POM),
            f"-Dmaven.repo.local={artifacts.maven_repo()}",
            f"{artifacts.DEPENDENCY_PLUGIN}:copy-dependencies",
            f"-DoutputDirectory={staging}",
            "-DincludeScope=runtime",
        ],
        "Maven (resolving the DJL jars from Maven Central)",
    )
    _link_to_repo(staging)
    shutil.rmtree(artifacts.jar_dir(), ignore_errors=True)
    staging.rename(artifacts.jar_dir())
    stamp.write_text(want)
    return True


def _link_to_repo(staging: Path) -> None:
    """Replace each copied jar by a hard link to the same file in the Maven repository
    (halves the cache: the native jar alone is ~110 MB)."""
    by_name: dict[str, Path] = {}
    for p in artifacts.maven_repo().rglob("*.jar"):
        by_name.setdefault(p.name, p)
    for jar in staging.glob("*.jar"):
        src = by_name.get(jar.name)
        if src is None or src.stat().st_size != jar.stat().st_size:
            continue
        if src.read_bytes() != jar.read_bytes():
            continue
        tmp = jar.with_suffix(".link")
        try:
            os.link(src, tmp)
        except OSError:
            return  # another file system: keep the copies
        tmp.replace(jar)


def compile_helpers(force: bool = False) -> bool:
    """javac the helper sources into `artifacts.classes_dir`; returns True when it compiled."""
    out = artifacts.classes_dir()
    stamp = artifacts.djl_dir() / ".classes.sha256"
    want = _digest([*artifacts.HELPER_SOURCES, artifacts.POM])
    done = (out / "fpexplore" / "Fpx.class").exists()
    if not force and done and stamp.exists() and stamp.read_text() == want:
        return False
    javac = _tool("javac")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cp = os.pathsep.join(str(p) for p in artifacts.jars())
    _run(
        [
            javac,
            "--release",
            "17",
            "-nowarn",
            "-cp",
            cp,
            "-d",
            str(out),
            *map(str, artifacts.HELPER_SOURCES),
        ],
        "javac (compiling fpexplore's Java helpers)",
    )
    stamp.write_text(want)
    return True


def du(path: Path) -> int:
    """Bytes on disk under ``path`` (hard links counted once)."""
    blocks = {}
    for p in [path, *path.rglob("*")]:
        st = p.lstat()
        blocks[st.st_dev, st.st_ino] = st.st_blocks * 512
    return sum(blocks.values())


def command(args: argparse.Namespace) -> int:
    """``fpexplore setup djl`` (options declared in `fpexplore.commands`)."""
    t0 = time.perf_counter()
    try:
        ran_mvn = resolve_jars(args.force)
        t_jars = time.perf_counter() - t0
        compiled = compile_helpers(args.force or ran_mvn)
        t_classes = time.perf_counter() - t0
        info = None
        if not args.no_warm:  # DJL extracts libtorch into the cache now, not during a lesson
            from . import client

            try:
                info = client.call("info", timeout=300)
            finally:
                client.shutdown()
    except SetupError as exc:
        print(f"fpexplore DJL set-up: {exc}", file=sys.stderr)
        return 1
    total = time.perf_counter() - t0
    print(
        f"DJL {artifacts.DJL_VERSION} / libtorch {artifacts.LIBTORCH_VERSION}: "
        f"{len(artifacts.jars())} jars in {artifacts.jar_dir()} "
        f"({'resolved' if ran_mvn else 'already resolved'}, {t_jars:.1f} s); helpers "
        f"{'compiled' if compiled else 'up to date'} ({t_classes - t_jars:.1f} s)"
    )
    if info is not None:
        print(
            f"engine {info['engine']} {info['engine_version']} loaded in the worker, "
            f"{info['threads']} libtorch threads ({total:.1f} s in all)"
        )
    print(f"cache {artifacts.djl_dir()}: {du(artifacts.djl_dir()) / 2**20:.0f} MiB")
    return 0
