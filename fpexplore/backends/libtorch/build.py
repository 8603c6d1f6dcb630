"""Build the LibTorch comparison program with CMake against the torch wheel's own libtorch.

``fpexplore setup libtorch`` (run by ``make setup``) configures and builds
``main.cpp``, ``script.cpp`` and ``loops.cpp`` into ``.cache/libtorch/build`` and writes
``build_info.json`` there: the key of the sources and torch version it was built from, and
how long it took. The program counts as built only while that key matches the current sources
and torch, so an edit to the C++ sources (or another torch) asks for a rebuild, and nothing is
rebuilt otherwise. Needs cmake, a C++20 compiler and torch; without them it says what to install.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ...errors import BackendUnavailable
from ...paths import cache_dir

SOURCE_DIR = Path(__file__).resolve().parent
SOURCES = ("CMakeLists.txt", "main.cpp", "script.cpp", "loops.cpp")
EXE_NAME = "fpexplore_libtorch"
BUILD_COMMAND = "make libtorch (or: fpexplore setup libtorch)"
TOOLS_FIX = (
    "install cmake and a C++ compiler (Debian/Ubuntu: apt-get install cmake g++), "
    "then: make libtorch"
)
COMPILERS = ("c++", "g++", "clang++")


def build_dir() -> Path:
    """Where the program is built: ``<cache>/libtorch/build``."""
    return cache_dir() / "libtorch" / "build"


def info_path() -> Path:
    return build_dir() / "build_info.json"


def torch_version() -> str:
    """The installed torch's version, read from its metadata (torch is not imported)."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return ""


def source_key() -> str:
    """A hash of the C++ sources, the CMake file and the torch version they are built against."""
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (SOURCE_DIR / name).read_bytes() + b"\0")
    h.update(torch_version().encode())
    return h.hexdigest()[:16]


def compiler() -> str | None:
    """The C++ compiler CMake will use: ``$CXX`` if set, else the first of c++, g++, clang++."""
    if os.environ.get("CXX"):
        return shutil.which(os.environ["CXX"])
    return next((p for p in map(shutil.which, COMPILERS) if p), None)


def missing_tools() -> str | None:
    """Why the program cannot be built here (naming what to install), or None."""
    missing = []
    if shutil.which("cmake") is None:
        missing.append("cmake")
    if compiler() is None:
        missing.append("a C++ compiler (c++, g++ or clang++)")
    if missing:
        return f"{' and '.join(missing)} not found on PATH; {TOOLS_FIX}."
    try:
        has_torch = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        has_torch = False
    if not has_torch:
        return "the Python module 'torch' is not installed (pip install -e '.[torch]')."
    return None


def read_info() -> dict[str, Any] | None:
    """The last build's ``build_info.json``, or None when there is none (or it is unreadable)."""
    try:
        return json.loads(info_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def up_to_date(info: dict[str, Any] | None = None) -> bool:
    """Whether the built program matches the current sources and torch."""
    info = read_info() if info is None else info
    exe = build_dir() / EXE_NAME
    return bool(info) and info.get("source_key") == source_key() and exe.is_file()


def _run(cmd: list[str], log: list[str]) -> None:
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    log.append("$ " + " ".join(cmd) + "\n" + out.stdout + out.stderr)
    if out.returncode != 0:
        tail = "\n".join((out.stdout + out.stderr).strip().splitlines()[-25:])
        raise BackendUnavailable(
            "libtorch", f"the build failed ({' '.join(cmd[:2])} ...):\n{tail}\n", BUILD_COMMAND
        )


def _first_line(cmd: list[str]) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.split("\n")[0]


def build(force: bool = False, jobs: int | None = None) -> dict[str, Any]:
    """Build the program unless it is up to date; return its build information.

    Raises `BackendUnavailable` naming what to install when cmake, a compiler or torch is
    missing, or with the compiler's last lines when the build fails.
    """
    reason = missing_tools()
    if reason:
        raise BackendUnavailable("libtorch", reason, TOOLS_FIX)
    info = read_info()
    if not force and up_to_date(info):
        return info  # type: ignore[return-value]
    import torch  # the wheel's libtorch: its headers, libraries and C++ ABI
    import torch.utils

    out = build_dir()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    cxx = compiler()
    configure = [
        "cmake",
        "-S",
        str(SOURCE_DIR),
        "-B",
        str(out),
        *gen,
        f"-DCMAKE_CXX_COMPILER={cxx}",
        f"-DTORCH_CMAKE_PREFIX={torch.utils.cmake_prefix_path}",
        f"-DTORCH_CXX11_ABI={int(torch.compiled_with_cxx11_abi())}",
    ]
    jobs = jobs or os.cpu_count() or 1
    compile_ = ["cmake", "--build", str(out), "--parallel", str(jobs)]
    log: list[str] = []
    t0 = time.perf_counter()
    _run(configure, log)
    t1 = time.perf_counter()
    _run(compile_, log)
    t2 = time.perf_counter()
    (out / "build.log").write_text("\n".join(log), encoding="utf-8")
    info = {
        "source_key": source_key(),
        "torch": torch.__version__,
        "torch_dir": str(Path(torch.__file__).parent),
        "executable": str(out / EXE_NAME),
        "configure_s": round(t1 - t0, 2),
        "compile_s": round(t2 - t1, 2),
        "build_s": round(t2 - t0, 2),
        "parallel_jobs": jobs,
        "cmake": _first_line(["cmake", "--version"]),
        "compiler": _first_line([cxx or "c++", "--version"]),
        "built_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    info_path().write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info


def command(args: argparse.Namespace) -> int:
    """Build (or say it is up to date); a missing tool is reported, not fatal."""
    was_current = up_to_date()
    try:
        info = build(force=args.force)
    except BackendUnavailable as exc:
        print(f"LibTorch program not built: {exc}", file=sys.stderr)
        return 1 if args.strict or exc.fix == BUILD_COMMAND else 0
    state = "up to date" if was_current and not args.force else "built"
    print(
        f"LibTorch program {state}: {info['executable']} (torch {info['torch']}; the build "
        f"took {info['build_s']} s: configure {info['configure_s']} s, compile "
        f"{info['compile_s']} s)"
    )
    if args.stamp:
        Path(args.stamp).parent.mkdir(parents=True, exist_ok=True)
        Path(args.stamp).touch()
    return 0
