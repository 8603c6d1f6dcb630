"""Backend registry: availability, version, devices and threads, without importing frameworks.

A backend is a small contract class plus one registration line. ``available()`` checks
``importlib.util.find_spec`` (cached); ``load()`` imports on first use and turns a missing
framework into `BackendUnavailable` naming the command that fixes it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import shutil
import sys
import time
from dataclasses import dataclass, replace
from functools import cache
from types import ModuleType

from ..errors import BackendUnavailable, InvalidParameter
from ..paths import fix_here, in_browser
from . import torch_probe

FIX_SETUP = "make setup (or: pip install -e '.[all]')"
if in_browser():  # Pyodide (JupyterLite): every fix is the Binder version (paths.BINDER_URL)
    FIX_SETUP = fix_here(FIX_SETUP)


@dataclass(frozen=True)
class BackendInfo:
    name: str
    available: bool
    version: str
    devices: tuple[str, ...] = ()
    threads: int | None = None
    detail: str = ""
    fix: str = ""


@dataclass(frozen=True)
class Backend:
    """A framework fpexplore can run. Subclasses override `probe` for devices/threads."""

    name: str
    module: str
    distributions: tuple[str, ...]
    fix: str
    description: str = ""

    def available(self) -> bool:
        return _has_module(self.module)

    def version(self) -> str:
        return next(filter(None, map(_dist_version, self.distributions)), "")

    def load(self) -> ModuleType:
        """Import the framework (first use) or raise `BackendUnavailable` with the fix."""
        if not self.available():
            raise BackendUnavailable(
                self.name, f"the Python module '{self.module}' is not installed.", self.fix
            )
        try:
            return self._import()
        except ImportError as exc:  # installed but broken (a missing shared library, ...)
            raise BackendUnavailable(
                self.name, f"importing '{self.module}' failed ({exc}).", self.fix
            ) from None

    def _import(self) -> ModuleType:
        return importlib.import_module(self.module)

    def probe(self) -> BackendInfo:
        """Full information; may import the framework (used by `fpexplore doctor`)."""
        ok = self.available()
        return BackendInfo(
            self.name,
            ok,
            self.version(),
            ("cpu",) if ok else (),
            os.cpu_count() if ok else None,
            self.description,
            "" if ok else self.fix,
        )


class _Torch(Backend):
    def start_probe(self) -> torch_probe.Probe | None:
        """Start asking a child interpreter what torch reports (see `torch_probe`)."""
        return torch_probe.Probe(self.version()) if self.available() else None

    def probe(
        self, started: torch_probe.Probe | None = None, deadline: float | None = None
    ) -> BackendInfo:
        """Devices and threads as torch reports them, without importing torch here.

        ``deadline`` (a `time.perf_counter` value, default 3 s from now) bounds the wait for
        the child; past it the answer is the cached or driver-only one, labelled as such.
        """
        if not self.available():
            return super().probe()
        report = (started or self.start_probe()).result(
            time.perf_counter() + 3.0 if deadline is None else deadline
        )
        return BackendInfo(
            self.name,
            True,
            self.version(),
            report.devices,
            report.threads,
            report.source or self.description,
        )


class _TensorFlow(Backend):
    def load(self) -> ModuleType:
        """Import TensorFlow, loading triton first when it is installed (torch's compiler).

        Both bundle LLVM; triton imported after TensorFlow aborts the process ("Option ...
        registered more than once"), the other order is fine. Always import TensorFlow here.
        """
        if "tensorflow" not in sys.modules and _has_module("triton"):
            importlib.import_module("triton")
        return super().load()

    def _import(self) -> ModuleType:
        from ..quiet import quiet_import

        # the log level before TensorFlow's C++ runtime loads, its direct writes silenced
        return quiet_import(self.module)

    def probe(self) -> BackendInfo:
        info = super().probe()
        if not info.available:
            return info
        # The -cpu distribution has no GPU support: no need to import TensorFlow to know.
        cpu_only = _dist_version("tensorflow-cpu") and not _dist_version("tensorflow")
        return replace(info, devices=("CPU",) if cpu_only else ("CPU", "GPU if CUDA is set up"))


class _Keras(Backend):
    def load(self) -> ModuleType:
        """Keras runs on TensorFlow: that is loaded first, through its own backend."""
        load("tensorflow")
        return super().load()


@cache
def java_version() -> str:
    """The JVM's version as ``java -version`` says it ("17.0.15"; "" where there is none): the
    java of ``$JAVA_HOME``, else the one on PATH (JPype starts the same)."""
    import re
    import subprocess

    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        return ""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return ""
    found = re.search(r'version "([^"]+)"', out.stderr + out.stdout)
    return found.group(1) if found else ""


class _Java(Backend):
    """A JVM through the JPype worker process (`fpexplore.jvm.client`): java.util.Random."""

    def version(self) -> str:
        """The JVM's version, then JPype's ("Java 17.0.15 (JPype 1.7.1)")."""
        jpype = super().version()
        jvm = java_version()
        if not jvm:
            return f"JPype {jpype}" if jpype else ""
        return f"Java {jvm}" + (f" (JPype {jpype})" if jpype else "")

    def available(self) -> bool:
        return self.missing() is None

    def missing(self) -> str | None:
        """Why no JVM can start here, or None."""
        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            return "no Java runtime was found (java is not on PATH and JAVA_HOME is unset)."
        if not _has_module("jpype"):
            return "the Python module 'jpype' (JPype1) is not installed."
        return None

    def load(self) -> ModuleType:
        """The JVM worker's client (`fpexplore.jvm.client`)."""
        reason = self.missing()
        if reason:
            raise BackendUnavailable(self.name, reason, self.fix)
        return importlib.import_module("fpexplore.jvm.client")

    def probe(self) -> BackendInfo:
        return replace(super().probe(), threads=None, detail=self.missing() or self.description)


class _DJL(_Java):
    def missing(self) -> str | None:
        """Why DJL cannot run here, or None."""
        from ..jvm import artifacts

        return super().missing() or artifacts.missing_jars()

    def version(self) -> str:
        from ..jvm import artifacts

        return f"DJL {artifacts.DJL_VERSION} (libtorch {artifacts.LIBTORCH_VERSION})"

    def load(self) -> ModuleType:
        super().load()
        return importlib.import_module("fpexplore.backends.djl")


class _LibTorch(Backend):
    def available(self) -> bool:
        from . import libtorch_program

        return libtorch_program.executable() is not None

    def version(self) -> str:
        from . import libtorch_program

        return libtorch_program.version()

    def load(self) -> ModuleType:
        """The built program's runner module, or `BackendUnavailable` saying how to build it."""
        from . import libtorch_program

        reason = libtorch_program.missing()
        if reason:
            raise BackendUnavailable(self.name, reason, fix_here(libtorch_program.fix()))
        return libtorch_program

    def probe(self) -> BackendInfo:
        """Built (its path, torch version and build time) or why not and the command to run."""
        from . import libtorch_program

        info = super().probe()
        if not info.available:
            detail = f"{self.description}: {libtorch_program.missing()}"
            return replace(info, detail=detail, fix=libtorch_program.fix())
        return replace(info, threads=None, detail=libtorch_program.describe())


_REGISTRY: dict[str, Backend] = {
    b.name: b
    for b in (
        Backend("numpy", "numpy", ("numpy",), "pip install numpy", "NumPy (always present)"),
        _Torch("torch", "torch", ("torch",), FIX_SETUP, "PyTorch (CPU and any device string)"),
        Backend(
            "torchvision",
            "torchvision",
            ("torchvision",),
            FIX_SETUP,
            "torchvision (image transforms for PyTorch)",
        ),
        _TensorFlow(
            "tensorflow",
            "tensorflow",
            ("tensorflow-cpu", "tensorflow"),
            FIX_SETUP,
            "TensorFlow / Keras",
        ),
        _Keras("keras", "keras", ("keras",), FIX_SETUP, "Keras 3 (on TensorFlow)"),
        _Java(
            "java",
            "jpype",
            ("jpype1",),
            fix_here("install a Java 17 runtime (java on PATH), then: pip install -e '.[djl]'"),
            "java.util.Random on a JVM, through the JPype worker process",
        ),
        _DJL(
            "djl",
            "jpype",
            ("jpype1",),
            fix_here("make djl (Java 17 + Maven fetch the pinned jars)"),
            "Deep Java Library through a JPype worker process",
        ),
        _LibTorch(
            "libtorch",
            "",
            (),
            fix_here(
                "make libtorch   (builds the C++ program with CMake; "
                "needs cmake and a C++ compiler)"
            ),
            "a C++ program linked against the torch wheel's libtorch",
        ),
    )
}


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def get(name: str) -> Backend:
    if not isinstance(name, str) or name not in _REGISTRY:
        raise InvalidParameter("backend", name, "one of " + ", ".join(_REGISTRY))
    return _REGISTRY[name]


def probe(name: str) -> BackendInfo:
    """What backend ``name`` reports (`Backend.probe`); an unknown name raises
    `InvalidParameter` listing the known ones."""
    return get(name).probe()


def probe_all(deadline_s: float = 3.5) -> list[BackendInfo]:
    """Probe every backend; torch's slow probe runs in a child started first, in parallel,
    and is waited for until ``deadline_s`` seconds after this call (see `torch_probe`)."""
    deadline = time.perf_counter() + deadline_s
    torch = _REGISTRY["torch"]
    assert isinstance(torch, _Torch)
    started = torch.start_probe()
    infos = {n: b.probe() for n, b in _REGISTRY.items() if n != "torch"}
    infos["torch"] = torch.probe(started, deadline)
    return [infos[n] for n in _REGISTRY]


def load(name: str, submodule: str = "") -> ModuleType:
    """Import backend ``name`` now (the one way the package imports a framework), or raise
    `BackendUnavailable` saying how to install it; ``submodule`` a part of the framework not
    imported with it: ``load("torch", "utils.cpp_extension")``."""
    module = get(name).load()
    return importlib.import_module(f"{module.__name__}.{submodule}") if submodule else module


def missing(name: str) -> str | None:
    """Why backend ``name`` cannot run here, with the command that fixes it; None if it can.
    Imports nothing."""
    b = get(name)
    if b.available():
        return None
    if isinstance(b, _Java):
        return f"{b.missing()} Fix: {b.fix}"
    return f"{name} is not installed. Fix: {b.fix}"


@cache
def _has_module(name: str) -> bool:
    try:
        return bool(name) and importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _dist_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return ""
