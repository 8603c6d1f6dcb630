"""The C++ LibTorch program built by ``make libtorch``: find it, say why it is missing, run jobs.

The program (sources in ``fpexplore/backends/libtorch/``) runs as a subprocess; arrays go in and
come out as float32 ``.npy`` files, never pickles. `run_script` has it load a TorchScript file
and return every tensor of the result. ``FPEXPLORE_LIBTORCH_EXE`` names another build of it.
Nothing here imports torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BackendUnavailable, InvalidParameter, WorkerError
from .libtorch import build as _build

ENV_EXE = "FPEXPLORE_LIBTORCH_EXE"
OPS = ("mm", "grad", "mlp", "sum", "randn", "rand", "loop_sum", "loop_sum_fastmath")


@dataclass(frozen=True)
class ProgramInfo:
    """What the program reports of its libtorch (its ``info`` line)."""

    torch_version: str
    threads: int  # intra-op threads by default
    interop_threads: int
    mkl: bool
    mkldnn: bool  # oneDNN built in
    mkldnn_enabled: bool
    cpu_capability: str  # the CPU path its kernels take ("AVX2", "AVX512", ...)
    parallel_info: str
    compiler: str
    cxx11_abi: int


@dataclass(frozen=True)
class Report:
    """What the program reports of one job or script run."""

    op: str
    threads: int
    ms: float
    mkldnn: bool | None = None  # a job's oneDNN setting
    out: str = ""  # a job's output file
    outputs: int = 0  # a script's tensors written


def _parse(cls: type, reply: dict[str, Any]) -> Any:
    """``reply`` (a JSON line of the program) as ``cls``; another shape raises `WorkerError`."""
    try:
        return cls(**reply)
    except TypeError as exc:
        why = f"the LibTorch program's reply {reply} is no {cls.__name__}: {exc}"
        raise WorkerError(why) from None


def executable() -> Path | None:
    """The built program if it is there and matches the current sources, else None."""
    given = os.environ.get(ENV_EXE)
    if given:
        exe = Path(given)
        return exe if exe.is_file() and os.access(exe, os.X_OK) else None
    if not _build.up_to_date():
        return None
    exe = _build.build_dir() / _build.EXE_NAME
    return exe if os.access(exe, os.X_OK) else None


def build_info() -> dict[str, Any]:
    """``build_info.json`` of the built program ({} when none is built)."""
    return _build.read_info() or {}


def version() -> str:
    """The torch version the program was built against ('' when none is built)."""
    if os.environ.get(ENV_EXE):
        return "external build"
    return build_info().get("torch", "") if executable() else ""


def missing() -> str | None:
    """Why the program cannot run here, with the command that fixes it; None when it can."""
    if executable() is not None:
        return None
    given = os.environ.get(ENV_EXE)
    if given:
        return f"{ENV_EXE}={given} is not an executable file."
    tools = _build.missing_tools()
    if tools:
        return f"the program cannot be built here: {tools}"
    if _build.read_info():
        return "the built program is out of date (its C++ sources or torch changed)."
    return "the program has not been built yet."


def fix() -> str:
    """The command (or install) that makes the program run here."""
    return _build.TOOLS_FIX if _build.missing_tools() else _build.BUILD_COMMAND


def describe() -> str:
    """One line for `fpexplore doctor`: where the program is and how long it took to build."""
    exe = executable()
    if exe is None:
        return f"not built: {missing()} Build it with: {fix()}"
    if os.environ.get(ENV_EXE):
        return f"C++ program {exe} (from {ENV_EXE})"
    info = build_info()
    try:  # where it is, from here: a page or a slide shows no one's home directory
        where = Path(exe).resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        where = Path(exe).name
    built = str(info.get("built_at", "?")).replace("T", " ").replace("Z", " UTC")
    return (
        f"C++ program {where}, built {built} against torch "
        f"{info.get('torch', '?')} in {info.get('build_s', '?')} s"
    )


@dataclass
class Job:
    """One op for the program: ``op`` (one of `OPS`), float32 inputs, and its settings."""

    op: str
    inputs: Sequence[np.ndarray] = ()
    threads: int = 1
    mkldnn: bool = True
    seed: int = 0
    n: int = 0
    ran: Report | None = None  # what the program reported


def _require() -> Path:
    exe = executable()
    if exe is None:
        raise BackendUnavailable("libtorch", missing() or "", fix())
    return exe


def _save(folder: Path, prefix: str, arrays: Sequence[np.ndarray]) -> list[str]:
    """Write ``arrays`` as float32 ``.npy`` files named ``{prefix}{j}.npy``; their paths."""
    names = [str(folder / f"{prefix}{j}.npy") for j in range(len(arrays))]
    for name, arr in zip(names, arrays, strict=True):
        np.save(name, np.ascontiguousarray(arr, dtype=np.float32))
    return names


def _reports(cmd: list[str], timeout: float) -> list[dict[str, Any]]:
    """Run the program with ``cmd``: the JSON lines it printed, or `WorkerError`."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise WorkerError(f"the LibTorch program ran past {timeout:g} s") from None
    if out.returncode != 0:
        raise WorkerError(f"the LibTorch program failed: {out.stderr.strip()[-500:]}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def info(timeout: float = 60.0) -> ProgramInfo:
    """What the program reports of its libtorch: version, threads, MKL/oneDNN, CPU path."""
    return _parse(ProgramInfo, _reports([str(_require()), "info"], timeout)[0])


def run(jobs: Sequence[Job], timeout: float = 300.0) -> list[np.ndarray]:
    """Run ``jobs`` in one process of the program; each job's float32 result (and its ``ran``
    filled with what the program reported: threads, oneDNN, ms)."""
    return run_with_info(jobs, timeout)[0]


def run_with_info(
    jobs: Sequence[Job], timeout: float = 300.0
) -> tuple[list[np.ndarray], ProgramInfo]:
    """`run`, also returning what the process reported of its libtorch (as `info`)."""
    exe = _require()
    for job in jobs:
        if job.op not in OPS:
            raise InvalidParameter("op", job.op, "one of " + ", ".join(OPS))
    with tempfile.TemporaryDirectory(prefix="fpx-libtorch-") as tmp:
        folder = Path(tmp)
        lines = []
        for i, job in enumerate(jobs):
            names = _save(folder, f"in{i}_", job.inputs)
            settings = (f"{k}={int(getattr(job, k))}" for k in ("threads", "mkldnn", "seed", "n"))
            fields = [job.op, *settings, f"out={folder / f'out{i}.npy'}"]
            if names:
                fields.append("in=" + ",".join(names))
            lines.append(" ".join(fields))
        (folder / "jobs.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        head, *reports = _reports([str(exe), "run", str(folder / "jobs.txt")], timeout)
        results = []
        for i, job in enumerate(jobs):
            job.ran = _parse(Report, reports[i]) if i < len(reports) else None
            results.append(np.load(folder / f"out{i}.npy", allow_pickle=False))
        return results, _parse(ProgramInfo, head)


def run_script(
    model: str | Path, inputs: Sequence[np.ndarray], threads: int = 1, timeout: float = 300.0
) -> tuple[list[np.ndarray], ProgramInfo, Report]:
    """Load the TorchScript file ``model`` in the program (``torch::jit::load``), run its
    forward once on the float32 ``inputs`` with ``threads`` intra-op threads, and return every
    tensor of the result (tuples flattened, in order) with the bits the program wrote, and
    what it reported: its libtorch, and the run (its ``ms``)."""
    exe = _require()
    path = Path(model)
    if not path.is_file():
        raise InvalidParameter("model", str(model), "an existing TorchScript file", "run_script")
    with tempfile.TemporaryDirectory(prefix="fpx-libtorch-") as tmp:
        folder = Path(tmp)
        names = _save(folder, "in", inputs)
        cmd = [str(exe), "script", str(path), str(folder / "out"), str(int(threads))]
        if names:
            cmd.append(",".join(names))
        head, ran = _reports(cmd, timeout)[:2]
        report = _parse(Report, ran)
        results = [
            np.load(folder / f"out{i}.npy", allow_pickle=False) for i in range(report.outputs)
        ]
        return results, _parse(ProgramInfo, head), report
