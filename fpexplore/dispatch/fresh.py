"""Lessons' claims decided in a fresh process under a switch's environment.

The switches are read once, when each library loads, so the only honest way to try a lesson
under one is a new interpreter: `run_claims` starts ``python -m fpexplore.dispatch.worker``
with the environment, hands it the plan on stdin and reads one JSON document back.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, TypeVar

from ..errors import WorkerError
from ..quiet import TF_LOG_LEVEL

#: one lesson run: (lesson name, parameters)
Plan = Sequence[tuple[str, Mapping[str, Any]]]
T = TypeVar("T")
R = TypeVar("R")

#: a fresh process with numpy, torch, TensorFlow and the DJL worker loaded holds about this
#: much memory of its own (1.3 GB resident with CUDA torch, less with the CPU wheel)
PROCESS_BYTES = 1_300_000_000
#: caps the memory fresh processes may count on, in bytes, below what the machine has (as a
#: container's limit does; the Binder replay sets Binder's 2 GB here)
MEMORY_LIMIT_ENV = "FPEXPLORE_MEMORY_LIMIT"


def _fresh(args: list[str], payload: str, env: Mapping[str, str], timeout: float) -> Any:
    """Run the worker with ``args`` in a fresh interpreter under ``env``; its last line."""
    full = {**os.environ, **env, "PYTHONWARNINGS": "ignore", "TF_CPP_MIN_LOG_LEVEL": TF_LOG_LEVEL}
    proc = subprocess.run(
        [sys.executable, "-m", "fpexplore.dispatch.worker", *args],
        input=payload,
        capture_output=True,
        text=True,
        env=full,
        timeout=timeout,
        check=False,
    )
    if proc.returncode < 0:  # killed by a signal: name it and why, never a bare exit code
        raise WorkerError(f"the fresh process under {dict(env)} {died_by(proc.returncode)}")
    last = proc.stdout.strip().splitlines()[-1:] or [""]
    try:
        return json.loads(last[0])
    except json.JSONDecodeError:
        tail = (proc.stderr or proc.stdout)[-2000:]
        raise WorkerError(
            f"the fresh process under {dict(env)} exited with {proc.returncode} and no result:\n"
            + tail
        ) from None


#: what a signal that ends a fresh process usually means
_SIGNAL_REASONS = {
    "SIGILL": "an instruction this CPU does not have (a path forced beyond the CPU)",
    "SIGKILL": "killed from outside, most often for memory (the out-of-memory killer)",
    "SIGSEGV": "a crash in a library's native code",
    "SIGABRT": "a library aborted",
    "SIGBUS": "a bad memory access in native code",
}


def died_by(returncode: int) -> str:
    """``"died by SIGILL: <reason>"`` for a process's negative ``returncode``."""
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"died by {name}: {_SIGNAL_REASONS.get(name, 'ended by a signal')}"


def _memory_budget() -> float:
    """Bytes this process may still add: the smallest of the machine's available memory, the
    container's (cgroup) limit and ``$FPEXPLORE_MEMORY_LIMIT``, less what this process holds."""
    limits: list[float] = []
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, encoding="ascii") as f:
                limits.append(float(f.read().strip()))
        except (OSError, ValueError):  # absent, or "max": no limit
            continue
    with contextlib.suppress(KeyError, ValueError):
        limits.append(float(os.environ[MEMORY_LIMIT_ENV]))
    held = 0.0
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            held = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    limits.append(int(line.split()[1]) * 1024 + held)
    except (OSError, ValueError):
        return 0.0  # unknown: one process at a time
    return (min(limits) if limits else 0.0) - held


def jobs(n: int) -> int:
    """How many fresh processes to run at once for ``n`` of them: one per CPU core, as many
    as the memory budget holds (`PROCESS_BYTES` each), at least one."""
    fit = int(_memory_budget() // PROCESS_BYTES)
    return max(1, min(n, os.cpu_count() or 1, fit))


def each(
    fn: Callable[[T], R], items: Iterable[T], done: Callable[[], object] | None = None
) -> list[R]:
    """``[fn(x) for x in items]``, with `jobs` of them at once (``fn`` starts a fresh process
    and waits for it, so threads suffice); results in the order of ``items``. ``done`` is
    called in the caller's thread as each one finishes (a progress bar's update)."""
    items = list(items)
    with ThreadPoolExecutor(jobs(len(items))) as pool:
        futures = [pool.submit(fn, x) for x in items]
        for _ in as_completed(futures):
            if done is not None:
                done()
        return [f.result() for f in futures]


def fingerprint(
    env: Mapping[str, str], label: str, values: bool = False, timeout: float = 300.0
) -> dict[str, Any]:
    """`fingerprint.take(label, values)` in a fresh interpreter whose environment is this one
    plus ``env``."""
    return _fresh(["--fingerprint", label] + (["--values"] if values else []), "", env, timeout)


def run_claims(plan: Plan, env: Mapping[str, str], timeout: float = 900.0) -> dict[str, Any]:
    """Run ``plan`` in a fresh interpreter whose environment is this one plus ``env``.

    Returns ``{"paths": {...}, "runs": [{"lesson", "params", "claims", "observations",
    "error"}]}``: each claim as its ``to_dict()``; ``error`` is the message of a run that
    raised (None otherwise); ``paths`` says which CPU paths the process took."""
    payload = json.dumps([[name, dict(params)] for name, params in plan])
    return _fresh([], payload, env, timeout)
